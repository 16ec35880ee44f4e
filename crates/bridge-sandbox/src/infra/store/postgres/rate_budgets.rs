//! Each project's shared request budget on PostgreSQL (`rate_budgets`, issue 36): a token bucket that instances
//! lease tokens from ([`crate::infra::rate_limit::SharedBudget`]). SQLite has none: one instance serves a data
//! directory and keeps its budgets in memory.

use super::{select_one, PgStore};
use crate::infra::store::rows::Two;
use crate::infra::store::sql::query;
use crate::infra::store::StoreResult;

/// Millionths of a token: the bucket's unit (integer arithmetic in SQL, fractional rates exact to 10⁻⁶).
pub const MICROS: i64 = 1_000_000;

/// A lease asked of a project's bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseAsk {
    /// Tokens wanted.
    pub want: i64,
    /// The bucket's size (the burst), in millionths.
    pub burst_micros: i64,
    /// Refill, in millionths of a token per millisecond (the rate × 1,000).
    pub micros_per_ms: i64,
    /// Wall-clock time of the ask, ms.
    pub now_ms: i64,
}

/// What a lease got: `granted` tokens (0 to `want`), and what the bucket holds after it, in millionths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub granted: i64,
    pub micros_left: i64,
}

impl PgStore {
    /// Takes up to `ask.want` whole tokens from `project`'s bucket, refilled since its last lease (at most to the
    /// burst), in one statement: a new project's bucket starts full. Concurrent leases of one project take turns
    /// on its row.
    pub async fn lease_rate_tokens(&self, project: &str, ask: LeaseAsk) -> StoreResult<Lease> {
        // The refill is computed over at most the time that fills an empty bucket (no overflow for any rate).
        let full_after_ms = (ask.burst_micros / ask.micros_per_ms.max(1)) + 1;
        let leased = query!(
            "INSERT INTO rate_budgets AS b (project, micros, updated_ms, granted)
             VALUES (?1, ?2 - least(?3, ?2 / 1000000) * 1000000, ?5, least(?3, ?2 / 1000000))
             ON CONFLICT (project) DO UPDATE SET
               granted = least(?3, least(?2, b.micros + ?4 * least(greatest(?5 - b.updated_ms, 0), ?6)) / 1000000),
               micros = least(?2, b.micros + ?4 * least(greatest(?5 - b.updated_ms, 0), ?6))
                 - 1000000 * least(?3, least(?2, b.micros + ?4 * least(greatest(?5 - b.updated_ms, 0), ?6)) / 1000000),
               updated_ms = greatest(b.updated_ms, ?5)
             RETURNING granted, micros",
            project,
            ask.burst_micros,
            ask.want,
            ask.micros_per_ms,
            ask.now_ms,
            full_after_ms,
        );
        let Two(granted, micros_left) = select_one::<Two<i64, i64>>(&self.pool, leased).await?;
        Ok(Lease { granted, micros_left })
    }
}
