//! The event feed: the area's trait, what it stores, and the SQL both backends share. How an event gets its feed
//! position differs by backend (the store's module docs, "the feed position"): `sqlite/events.rs` and
//! `postgres/events.rs` append events each in its own way, and read the feed with [`page`].

use async_trait::async_trait;
use bridge_contract::{Encoded, WebhookEvent};

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::StoreResult;

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub id: String,
    pub project: String,
    pub created_ms: i64,
    pub event: WebhookEvent,
    /// Where to deliver it (the quote's or deposit address's `webhookUrl`).
    pub webhook_url: Option<String>,
}

/// Events of the feed, each with its position, as the JSON they were stored as (not decoded: the feed serves it).
pub type FeedEvents = Vec<(i64, Encoded<WebhookEvent>)>;

#[async_trait]
pub trait EventStore: Send + Sync {
    /// Appends events on their own.
    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()>;
    /// A project's events at or after `since_ms` with a sequence number above `after_seq`, in sequence order, as
    /// the JSON they were stored as (not decoded: the feed serves it as it is).
    async fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> StoreResult<FeedEvents>;
}

/// An event of the feed: its position and its body as stored (not decoded: the feed serves it as it is).
const FEED_COLUMNS: &str = "seq, body";

impl FromRow for (i64, Encoded<WebhookEvent>) {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok((row.at(0)?, Encoded::from_stored(row.at(1)?)))
    }
}

/// A page of a project's feed. Positions are in commit order, which need not be time order (two requests may
/// take their times in one order and commit in the other; instances' clocks agree only up to a tick): the time is
/// a filter. The walk along the (project, seq) index starts at the cursor or at the first position whose
/// watermark (`latest_ms`, never decreasing along the feed) reaches `since_ms`, whichever is later: no event at or
/// after `since_ms` comes before that position, and finding it is one index seek, so a page costs O(page) however
/// many events come before `since_ms` (SQLite is told the indexes; PostgreSQL's planner finds them).
pub(super) fn page(project: &str, since_ms: i64, after_seq: i64, limit: u64) -> Query {
    query!(
        "SELECT {FEED_COLUMNS} FROM events INDEXED BY events_by_project
         WHERE project = ?1 AND created_ms >= ?3 AND seq > greatest(?2, coalesce(
             (SELECT seq FROM events INDEXED BY events_by_latest
              WHERE project = ?1 AND latest_ms >= ?3 ORDER BY latest_ms, seq LIMIT 1),
             9223372036854775807) - 1)
         ORDER BY seq LIMIT ?4",
        project,
        after_seq,
        since_ms,
        limit as i64,
    )
}

/// The outbox row of an event that has a `webhookUrl` (written with the event).
pub(super) fn outbox_row(e: &NewEvent) -> Option<Query> {
    let url = e.webhook_url.as_ref()?;
    Some(query!(
        "INSERT INTO outbox (event_id, project, url, next_ms) VALUES (?1, ?2, ?3, ?4)",
        &e.id,
        &e.project,
        url,
        e.created_ms,
    ))
}
