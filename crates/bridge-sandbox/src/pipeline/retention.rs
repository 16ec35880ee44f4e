//! The retention pass (`serve --retain DURATION`): the job that deletes what the sandbox has kept longer than the
//! retention, in small batches (what goes and what stays, and why age is wall-clock time on the store's clock:
//! [`crate::infra::store::RetentionStore`]'s module). Run by the server every [`Retention::interval`]
//! (`crate::operate::workers`); with several instances on one database, one purges at a time (the store's purge
//! lock) and the others' passes find it taken and wait for their next turn.
//!
//! A pass reads the store's clock once: its horizon is that time less the retention, so a pass that runs long only
//! deletes less, never anything younger than the retention. Each batch is one short write of at most [`BATCH`]
//! rows, with a pause of [`BATCH_PAUSE`] between batches, so writers never wait long behind it (SQLite: a batch
//! is one write among others in the writer's queue; PostgreSQL: rows writers hold are skipped).

use std::fmt;
use std::time::Duration;

use tokio::sync::watch;

use crate::infra::store::{PurgeBatch, PurgeCounts, PurgeTable, Store, StoreResult};
use crate::infra::telemetry;

/// Rows a batch deletes at most (of its table; a bridge's deposits and an event's deliveries go with it).
pub const BATCH: u64 = 500;

/// The pause between two batches of a pass, in which writers have the store to themselves.
pub const BATCH_PAUSE: Duration = Duration::from_millis(5);

/// How long the sandbox keeps what it stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retention {
    /// Nothing is deleted (what earlier versions did): `--retain forever`, the default.
    #[default]
    Forever,
    /// Quotes, ended bridges, their deposits, events and delivery attempts are deleted once older than this.
    For(Duration),
}

impl Retention {
    /// The shortest retention: a second (a shorter one is a typing error more likely than a wish).
    pub const SHORTEST: Duration = Duration::from_secs(1);

    /// `forever`, or a duration of at least a second: a number and a unit, `s`, `m`, `h` or `d` (`30d`, `12h`,
    /// `2s`; humantime's other spellings too, `1h 30m`).
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.trim() == "forever" {
            return Ok(Self::Forever);
        }
        let keep = humantime::parse_duration(text)
            .map_err(|e| format!("{text:?} is neither `forever` nor a duration like 30d, 12h, 90m or 2s ({e})"))?;
        if keep < Self::SHORTEST {
            return Err(format!("{text:?} is shorter than a second; `forever` keeps everything"));
        }
        Ok(Self::For(keep))
    }

    /// How often a pass runs under retention `keep`: a twentieth of it, between 100 ms and a minute (so what is
    /// older than the retention is gone within about 5 % of it, or a minute).
    pub fn interval(keep: Duration) -> Duration {
        (keep / 20).clamp(Duration::from_millis(100), Duration::from_secs(60))
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Forever => f.write_str("forever"),
            Self::For(keep) => write!(f, "{}", humantime::format_duration(*keep)),
        }
    }
}

/// How a pass ended, and what it deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Nothing is left that is older than its horizon (but what pending deliveries keep).
    Done(PurgeCounts),
    /// Another instance's purge held the lock: this one stopped, to try again at its next pass.
    Busy(PurgeCounts),
    /// The server is stopping.
    Stopped(PurgeCounts),
}

/// One pass: deletes, batch by batch, every row the retention `keep` lets go, as of the store's clock now. Each
/// batch's deletions are counted in [`telemetry::RETENTION_PURGED`] as it commits.
pub async fn purge(store: &dyn Store, keep: Duration, stopping: &watch::Receiver<bool>) -> StoreResult<Pass> {
    let keep_ms = i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
    let horizon_ms = store.wall_ms().await?.saturating_sub(keep_ms);
    let mut total = PurgeCounts::default();
    for table in PurgeTable::ALL {
        let mut after = 0;
        loop {
            if *stopping.borrow() {
                return Ok(Pass::Stopped(total));
            }
            let batch = PurgeBatch { table, horizon_ms, after, limit: BATCH };
            let Some(purged) = store.purge(&batch).await? else { return Ok(Pass::Busy(total)) };
            for (kind, n) in purged.counts.by_kind() {
                if n > 0 {
                    metrics::counter!(telemetry::RETENTION_PURGED, "kind" => kind).increment(n);
                }
            }
            total.add(&purged.counts);
            match purged.next {
                Some(next) => after = next,
                None => break,
            }
            tokio::time::sleep(BATCH_PAUSE).await;
        }
    }
    Ok(Pass::Done(total))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Retention;

    #[test]
    fn a_retention_is_forever_or_a_second_at_least() {
        assert_eq!(Retention::parse("forever"), Ok(Retention::Forever));
        assert_eq!(Retention::parse("30d"), Ok(Retention::For(Duration::from_secs(30 * 86_400))));
        assert_eq!(Retention::parse("2s"), Ok(Retention::For(Duration::from_secs(2))));
        assert_eq!(Retention::parse("90m"), Ok(Retention::For(Duration::from_secs(5_400))));
        assert_eq!(Retention::parse("12h"), Ok(Retention::For(Duration::from_secs(43_200))));
        assert!(Retention::parse("500ms").unwrap_err().contains("shorter than a second"));
        assert!(Retention::parse("0s").is_err());
        assert!(Retention::parse("never").unwrap_err().contains("neither `forever` nor a duration"));
        assert!(Retention::parse("30").is_err(), "a unit is needed");
        assert_eq!(Retention::parse("30d").unwrap().to_string(), "30days");
    }

    #[test]
    fn passes_run_a_twentieth_of_the_retention_apart_within_bounds() {
        assert_eq!(Retention::interval(Duration::from_secs(2)), Duration::from_millis(100));
        assert_eq!(Retention::interval(Duration::from_secs(60)), Duration::from_secs(3));
        assert_eq!(Retention::interval(Duration::from_secs(30 * 86_400)), Duration::from_secs(60));
    }
}
