//! Persistence. The sandbox talks to the [`Store`] trait, the sum of one trait per area (quotes, bridges,
//! addresses, events, deliveries, clocks, access, faults, health, dashboard sessions, retention): one atomic
//! domain operation per method, each an `async` method whose future is `Send`, so a backend may be a blocking
//! embedded database run off the async workers ([`SqliteStore`], the default) or a server database reached through
//! an async driver and a pool, shared by several sandbox instances. Every failure is one typed [`StoreError`],
//! which converts into every operation's 503 `ServiceUnavailable` (`bridge_contract::IntoServiceUnavailable`), so
//! the areas propagate it with `?`.
//!
//! An area is written once: `store/<area>.rs` declares its trait, its stored types, how each is read from a row
//! (`rows`) and its SQL for both backends (`sql`: one text per statement, the dialects' few differences rewritten
//! there); `sqlite/<area>.rs` and `postgres/<area>.rs` implement the trait, each deciding only how the statements
//! run (the writer thread or a reader; a transaction of the pool) and what differs by logic (feed positions,
//! leases, locks). The schema follows one migration plan (`migrations`).
//!
//! Every state change and the events it emits are written in one transaction, so an event is never lost or
//! emitted for a change that did not happen; an event with a `webhookUrl` gets its outbox row in the same
//! transaction.
//!
//! ## The feed position: commit-ordered, so the cursor is exact
//!
//! Every event gets a feed position (`events.seq`, 1, 2, 3, ...), and the event feed's cursor is the position of
//! the last event a page returned; the next page reads the positions above it. That is exact (no event twice,
//! none skipped, also one written by another instance while a traversal runs) only if positions become visible in
//! order: once a reader has seen position `p`, no transaction may later commit a position below `p`. A plain
//! database sequence does not give that (PostgreSQL hands out sequence values at insert, not at commit, so a slow
//! transaction holding 7 can commit after a fast one holding 8, and a reader that saw 8 would skip 7 for good).
//! Each backend therefore assigns positions in commit order:
//!
//! * SQLite has one writer at a time (the database lock is held from the first write to the commit), so the
//!   `AUTOINCREMENT` value taken inside the transaction is in commit order.
//! * PostgreSQL takes positions from a one-row counter (`feed_head`), `UPDATE ... RETURNING` in the same
//!   transaction as the events, as its last statement before `COMMIT`. The row lock is held until the
//!   transaction ends, so a second writer waits for the first one's commit (or rollback, which releases its
//!   positions unused: the counter update is rolled back with it) before it takes the next positions. Positions
//!   are then gapless and commit-ordered, whichever instance writes. Only the event-appending tail of a write is
//!   serialized, and only against other event writers; reads never wait on it.
//!
//! `sinceTimestamp` is a filter, not a start: positions are commit order and times need not be (a request takes
//! its time before it commits; instances' clocks agree up to a tick; the manual clock moves). To start the first
//! page without walking every earlier event, each event also keeps the feed's **time watermark** (`latest_ms`:
//! the latest `created_ms` of any event at or before its position, assigned with the position, so it never
//! decreases along the feed; PostgreSQL keeps the running value in `feed_head` under the same row lock). Every
//! event at or after a time `t` has a watermark ≥ `t`, so the first position whose watermark reaches `t` (one
//! seek in the `(project, latest_ms, seq)` index) is a safe start; the walk then filters by time as before.
//!
//! A page token names a position; one outside `1..=i64::MAX` was never given out (see `crate::http::feed`).
//!
//! Retention (`retention`) deletes events, oldest positions first (an event whose delivery is pending stays, so
//! the kept positions may have holes): positions never move and are never given out again (SQLite's
//! `AUTOINCREMENT` and `feed_head` only grow), so the feed keeps its order, and a token naming a purged position
//! answers the first events still kept after it, as the page query reads positions above the token. The
//! watermarks of the events kept still do their job: each is at least the time of every kept event at or before
//! it, and they never decrease along the kept events, so the first page's seek stays safe.

pub mod access;
mod addresses;
mod bridges;
mod clocks;
mod deliveries;
mod events;
mod faults;
mod health;
mod migrations;
mod postgres;
mod quotes;
mod retention;
mod rows;
mod sessions;
mod sql;
mod sqlite;

use std::fmt;

use bridge_contract::{IntoServiceUnavailable, ServiceUnavailable};
use serde::{de::DeserializeOwned, Serialize};

pub use crate::domain::ids::Counter;
pub use crate::domain::records::StoredBridge;
pub use access::{
    AccessSnapshot, AccessStore, AuditAction, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoredApiKey,
    StoredProject, StoredSigningKey, Usage,
};
pub use addresses::{AddressSearch, AddressStore, StoredAddress, StoredDeposit, StoredRoutingAddress};
pub use bridges::{BridgeStore, HistoryCursorQuery, HistoryQuery};
pub use clocks::{ClockStore, ResetCounts};
pub use deliveries::{AttemptOutcome, DeliveryClaim, DeliveryStore, DueDelivery};
pub use events::{EventStore, FeedEvents, NewEvent};
pub use faults::{FaultSnapshot, FaultStore, StoredFaultProfile};
pub use health::{Backlog, HealthStore, SchemaStatus};
pub use postgres::{Lease, LeaseAsk, PgStore, MICROS};
pub use quotes::{QuoteStore, StoredQuote};
pub use retention::{PurgeBatch, PurgeCounts, PurgeTable, Purged, RetentionBacklog, RetentionStore};
pub use sessions::{NewSession, SessionCaps, SessionStore, StoredSession};
pub use sqlite::SqliteStore;

/// The sandbox's persistence: every area of it, one atomic domain operation per method. Each area is a trait of
/// its own ([`ClockStore`], [`QuoteStore`], [`BridgeStore`], [`AddressStore`], [`EventStore`], [`DeliveryStore`],
/// [`HealthStore`], [`AccessStore`], [`FaultStore`], [`SessionStore`], [`RetentionStore`]), declared with its types and SQL in `store/<area>.rs` and implemented by each
/// backend in `store/<backend>/<area>.rs`; a type that implements them all is a `Store`, and the sandbox holds an
/// `Arc<dyn Store>` (the areas' methods are callable on it without importing their traits).
pub trait Store:
    ClockStore
    + QuoteStore
    + BridgeStore
    + AddressStore
    + EventStore
    + DeliveryStore
    + HealthStore
    + AccessStore
    + SessionStore
    + RetentionStore
    + FaultStore
    + 'static
{
}

impl<T> Store for T where
    T: ClockStore
        + QuoteStore
        + BridgeStore
        + AddressStore
        + EventStore
        + DeliveryStore
        + HealthStore
        + AccessStore
        + SessionStore
        + RetentionStore
        + FaultStore
        + 'static
{
}

/// A failure of the store (or of data it holds): logged, and answered 503 `ServiceUnavailable`. Nothing was
/// changed, since every write is one transaction.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct StoreError(anyhow::Error);

impl StoreError {
    pub fn new(error: impl Into<anyhow::Error>) -> Self {
        Self(error.into())
    }

    /// The same failure, saying what was being done.
    pub fn context(self, what: impl fmt::Display + Send + Sync + 'static) -> Self {
        Self(self.0.context(what))
    }
}

impl IntoServiceUnavailable for StoreError {
    fn into_service_unavailable(self) -> ServiceUnavailable {
        tracing::error!(error = %self, "storage failure");
        ServiceUnavailable::new(format!("the sandbox store failed: {self}"))
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::new(e)
    }
}

/// JSON text of a stored value (records, events, bodies are stored as their JSON text by every backend).
fn to_json<T: Serialize>(value: &T) -> StoreResult<String> {
    Ok(serde_json::to_string(value)?)
}

/// A stored JSON text back into its type; a text that does not decode is a store failure, quoted in part.
fn from_json<T: DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::new(e)
            .context(format!("stored JSON does not decode: {}", text.chars().take(200).collect::<String>()))
    })
}

/// A value of a string enum from its stored text (`as_str()`), through its serde name.
fn from_text<T: DeserializeOwned>(text: &str) -> StoreResult<T> {
    Ok(serde_json::from_value(serde_json::Value::String(text.to_owned()))?)
}
