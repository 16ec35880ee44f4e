//! The project clocks, project resets and counters: this area's part of [`PgStore`] (the [`crate::infra::store::Store`]
//! methods, forwarded by `store_by_area!`).

use super::*;
use crate::infra::clock::{ClockSync, ProjectClock};
use crate::infra::store::{from_json, synced, to_json, Areas, Counter, ResetCounts, StoreError, StoreResult};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

impl Areas<'_, PgStore> {
    pub(super) async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
        let mut tx = self.pool.begin().await?;
        // The first sync keeps its own clock; later ones lock the row until the commit, so concurrent syncs take
        // turns.
        let inserted =
            query("INSERT INTO meta (key, value) VALUES ('clock', $1) ON CONFLICT (key) DO NOTHING RETURNING key")
                .bind(to_json(&(sync.value, sync.floor))?)
                .fetch_optional(&mut *tx)
                .await?;
        if inserted.is_some() {
            commit(tx).await?;
            return Ok((sync.value, sync.floor));
        }
        let text: String =
            query_scalar("SELECT value FROM meta WHERE key = 'clock' FOR UPDATE").fetch_one(&mut *tx).await?;
        let (value, floor) = synced(Some(from_json(&text)?), sync);
        query("UPDATE meta SET value = $1 WHERE key = 'clock'")
            .bind(to_json(&(value, floor))?)
            .execute(&mut *tx)
            .await?;
        commit(tx).await?;
        Ok((value, floor))
    }

    pub(super) async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        // One read on every request that needs the project's time: an advance committed by any instance is seen.
        let select = format!("SELECT {CLOCK_COLUMNS} FROM projects WHERE id = $1");
        if let Some(clock) = self.select_first(query(&select).bind(project)).await? {
            return Ok(clock);
        }
        query(
            "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES ($1, $2, $3, $2)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(project)
        .bind(start.floor)
        .bind(start.value)
        .execute(&self.pool)
        .await?;
        ProjectClock::from_row(&query(&select).bind(project).fetch_one(&self.pool).await?)
    }

    pub(super) async fn advance_project_clock(
        &self,
        project: &str,
        ms: i64,
        limit: i64,
    ) -> StoreResult<Option<ProjectClock>> {
        let sql = format!(
            "UPDATE projects SET clock_value = clock_value + $2 WHERE id = $1 AND clock_value <= $3
             RETURNING {CLOCK_COLUMNS}"
        );
        self.select_first(query(&sql).bind(project).bind(ms).bind(limit)).await
    }

    pub(super) async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
        if floors.is_empty() {
            return Ok(());
        }
        let projects: Vec<&str> = floors.iter().map(|(p, _, _)| p.as_str()).collect();
        let generations: Vec<i64> = floors.iter().map(|(_, g, _)| *g).collect();
        let values: Vec<i64> = floors.iter().map(|(_, _, f)| *f).collect();
        query(
            "UPDATE projects p SET clock_floor = f.floor
             FROM UNNEST($1::text[], $2::bigint[], $3::bigint[]) AS f(id, generation, floor)
             WHERE p.id = f.id AND p.generation = f.generation AND p.clock_floor < f.floor",
        )
        .bind(&projects)
        .bind(&generations)
        .bind(&values)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn reset_project(
        &self,
        project: &str,
        start: &ProjectClock,
    ) -> StoreResult<(ProjectClock, ResetCounts)> {
        let mut tx = self.pool.begin().await?;
        // The project's row first: concurrent resets of one project take turns.
        let (generation,): (i64,) = sqlx_core::query_as::query_as(
            "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES ($1, $2, $3, $2)
             ON CONFLICT (id) DO UPDATE SET clock_value = $3, clock_floor = $2, generation = projects.generation + 1
             RETURNING generation",
        )
        .bind(project)
        .bind(start.floor)
        .bind(start.value)
        .fetch_one(&mut *tx)
        .await?;
        let count = |sql: &'static str| query(sql).bind(project);
        let deposits = count(
            "DELETE FROM deposits d WHERE EXISTS (SELECT 1 FROM addresses a WHERE a.project = $1
               AND a.deposit_chain = d.deposit_chain AND a.deposit_address = d.deposit_address)
             OR EXISTS (SELECT 1 FROM routing_addresses r WHERE r.project = $1
               AND r.deposit_chain = d.deposit_chain AND r.deposit_address = d.deposit_address)",
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let counts = ResetCounts {
            quotes: count("DELETE FROM quotes WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            bridges: count("DELETE FROM bridges WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            addresses: count("DELETE FROM addresses WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            routing_addresses: count("DELETE FROM routing_addresses WHERE project = $1")
                .execute(&mut *tx)
                .await?
                .rows_affected(),
            deposits,
            events: count("DELETE FROM events WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            deliveries: count("DELETE FROM delivery_attempts WHERE project = $1")
                .execute(&mut *tx)
                .await?
                .rows_affected(),
        };
        count("DELETE FROM outbox WHERE project = $1").execute(&mut *tx).await?;
        tx.commit().await?;
        Ok((ProjectClock { generation, ..*start }, counts))
    }

    pub(super) async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let value: String = query_scalar(
            "INSERT INTO meta (key, value) VALUES ($1, $2::bigint::text)
             ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + $2::bigint)::text RETURNING value",
        )
        .bind(format!("counter:{}", counter.name()))
        .bind(count as i64)
        .fetch_one(&self.pool)
        .await?;
        value.parse::<u64>().map_err(|e| StoreError::new(e).context("a stored counter"))
    }
}
