//! [`ClockStore`] on SQLite: one writer, so a read-then-write in one write closure is atomic.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{execute, select_first, select_one, SqliteStore};
use crate::infra::clock::{ClockSync, ProjectClock};
use crate::infra::store::clocks::{self, synced, ClockStore, ResetCounts};
use crate::infra::store::rows::One;
use crate::infra::store::{from_json, to_json, Counter, StoreError, StoreResult};

#[async_trait]
impl ClockStore for SqliteStore {
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
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

    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        let read = clocks::project_clock(project);
        if let Some(clock) = self.read_now(move |c| select_first(c, &read)).await? {
            return Ok(clock);
        }
        let (insert, read, project) =
            (clocks::first_seen(project, start), clocks::project_clock(project), project.to_owned());
        self.run(move |c| {
            execute(c, &insert)?;
            select_first(c, &read)?.ok_or_else(|| StoreError::new(anyhow::anyhow!("project {project} vanished")))
        })
        .await
    }

    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>> {
        let advance = clocks::advance(project, ms, limit);
        self.run(move |c| select_first(c, &advance)).await
    }

    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
        if floors.is_empty() {
            return Ok(());
        }
        let updates: Vec<_> =
            floors.iter().map(|(p, generation, floor)| clocks::keep_floor(p, *generation, *floor)).collect();
        self.run(move |c| {
            for update in &updates {
                execute(c, update)?;
            }
            Ok(())
        })
        .await
    }

    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)> {
        let (next, deletes, start) = (clocks::next_generation(project, start), clocks::reset_deletes(project), *start);
        self.run(move |c| {
            let One(generation) = select_one::<One<i64>>(c, &next)?;
            let mut counts = [0; 8];
            for (count, delete) in counts.iter_mut().zip(&deletes) {
                *count = execute(c, delete)? as u64;
            }
            Ok((ProjectClock { generation, ..start }, clocks::reset_counts(counts)))
        })
        .await
    }

    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let reserve = clocks::reserve(counter, count);
        let One(last) = self.run(move |c| select_one::<One<String>>(c, &reserve)).await?;
        last.parse::<u64>().map_err(|e| StoreError::new(e).context("a stored counter"))
    }
}
