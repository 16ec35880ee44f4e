//! The project clocks, project resets and counters: this area's part of [`SqliteStore`] (the
//! [`crate::infra::store::Store`] methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::clock::{ClockSync, ProjectClock};
use crate::infra::store::{from_json, synced, to_json, Areas, Counter, ResetCounts, StoreError, StoreResult};
use rusqlite::{params, OptionalExtension};

impl Areas<'_, SqliteStore> {
    pub(super) async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
        self.run(move |c| {
            let kept: Option<String> =
                c.query_row("SELECT value FROM meta WHERE key = 'clock'", [], |r| r.get(0)).optional()?;
            let kept = kept.map(|text| from_json::<(i64, i64)>(&text)).transpose()?;
            let (value, floor) = synced(kept, sync);
            c.execute(
                "INSERT INTO meta (key, value) VALUES ('clock', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![to_json(&(value, floor))?],
            )?;
            Ok((value, floor))
        })
        .await
    }

    pub(super) async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        let owned = project.to_owned();
        if let Some(clock) = self.read_now(move |c| read_project_clock(c, &owned)).await? {
            return Ok(clock);
        }
        let (project, start) = (project.to_owned(), *start);
        self.run(move |c| {
            c.prepare_cached(
                "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
                 ON CONFLICT (id) DO NOTHING",
            )?
            .execute(params![project, start.floor, start.value])?;
            read_project_clock(c, &project)?
                .ok_or_else(|| StoreError::new(anyhow::anyhow!("project {project} vanished")))
        })
        .await
    }

    pub(super) async fn advance_project_clock(
        &self,
        project: &str,
        ms: i64,
        limit: i64,
    ) -> StoreResult<Option<ProjectClock>> {
        let project = project.to_owned();
        self.run(move |c| {
            let changed = c
                .prepare_cached(
                    "UPDATE projects SET clock_value = clock_value + ?2 WHERE id = ?1 AND clock_value <= ?3",
                )?
                .execute(params![project, ms, limit])?;
            if changed == 0 {
                return Ok(None);
            }
            read_project_clock(c, &project)
        })
        .await
    }

    pub(super) async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
        if floors.is_empty() {
            return Ok(());
        }
        let floors = floors.to_vec();
        self.run(move |c| {
            let mut stmt = c.prepare_cached(
                "UPDATE projects SET clock_floor = ?3 WHERE id = ?1 AND generation = ?2 AND clock_floor < ?3",
            )?;
            for (project, generation, floor) in &floors {
                stmt.execute(params![project, generation, floor])?;
            }
            Ok(())
        })
        .await
    }

    pub(super) async fn reset_project(
        &self,
        project: &str,
        start: &ProjectClock,
    ) -> StoreResult<(ProjectClock, ResetCounts)> {
        let (project, start) = (project.to_owned(), *start);
        self.run(move |c| {
            let generation: i64 = c.query_row(
                "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES (?1, ?2, ?3, ?2)
                 ON CONFLICT (id) DO UPDATE SET clock_value = ?3, clock_floor = ?2, generation = generation + 1
                 RETURNING generation",
                params![project, start.floor, start.value],
                |r| r.get(0),
            )?;
            let delete = |sql: &str| -> StoreResult<u64> { Ok(c.execute(sql, params![project])? as u64) };
            let deposits = delete(
                "DELETE FROM deposits WHERE EXISTS (SELECT 1 FROM addresses a WHERE a.project = ?1
                   AND a.deposit_chain = deposits.deposit_chain AND a.deposit_address = deposits.deposit_address)
                 OR EXISTS (SELECT 1 FROM routing_addresses r WHERE r.project = ?1
                   AND r.deposit_chain = deposits.deposit_chain AND r.deposit_address = deposits.deposit_address)",
            )?;
            let counts = ResetCounts {
                quotes: delete("DELETE FROM quotes WHERE project = ?1")?,
                bridges: delete("DELETE FROM bridges WHERE project = ?1")?,
                addresses: delete("DELETE FROM addresses WHERE project = ?1")?,
                routing_addresses: delete("DELETE FROM routing_addresses WHERE project = ?1")?,
                deposits,
                events: delete("DELETE FROM events WHERE project = ?1")?,
                deliveries: delete("DELETE FROM delivery_attempts WHERE project = ?1")?,
            };
            delete("DELETE FROM outbox WHERE project = ?1")?;
            Ok((ProjectClock { generation, ..start }, counts))
        })
        .await
    }

    pub(super) async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let key = format!("counter:{}", counter.name());
        self.run(move |c| {
            let current: Option<String> =
                c.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| r.get(0)).optional()?;
            let next = current.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) + count;
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, next.to_string()],
            )?;
            Ok(next)
        })
        .await
    }
}
