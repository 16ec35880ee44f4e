//! [`ClockStore`] on PostgreSQL: shared by instances, so each read-then-write takes its row lock first.

use async_trait::async_trait;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;

use super::{commit, execute, select_first, select_one, PgStore};
use crate::infra::clock::{ClockSync, ProjectClock};
use crate::infra::store::clocks::{self, synced, ClockStore, ResetCounts};
use crate::infra::store::rows::One;
use crate::infra::store::{from_json, to_json, Counter, StoreError, StoreResult};

#[async_trait]
impl ClockStore for PgStore {
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
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

    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        // One read on every request that needs the project's time: an advance committed by any instance is seen.
        if let Some(clock) = select_first(&self.pool, clocks::project_clock(project)).await? {
            return Ok(clock);
        }
        execute(&self.pool, clocks::first_seen(project, start)).await?;
        select_one(&self.pool, clocks::project_clock(project)).await
    }

    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>> {
        select_first(&self.pool, clocks::advance(project, ms, limit)).await
    }

    /// One statement for every floor (`UNNEST`), not one per project.
    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
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

    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)> {
        let mut tx = self.pool.begin().await?;
        // The project's row first: concurrent resets of one project take turns.
        let One(generation) = select_one::<One<i64>>(&mut *tx, clocks::next_generation(project, start)).await?;
        let mut counts = [0; 8];
        for (count, delete) in counts.iter_mut().zip(clocks::reset_deletes(project)) {
            *count = execute(&mut *tx, delete).await?;
        }
        tx.commit().await?;
        Ok((ProjectClock { generation, ..*start }, clocks::reset_counts(counts)))
    }

    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let One(last) = select_one::<One<String>>(&self.pool, clocks::reserve(counter, count)).await?;
        last.parse::<u64>().map_err(|e| StoreError::new(e).context("a stored counter"))
    }
}
