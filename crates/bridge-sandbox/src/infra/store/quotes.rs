//! Quotes: the area's trait, what it stores, and its SQL for both backends (`sqlite/quotes.rs` and
//! `postgres/quotes.rs` implement the trait with it).

use async_trait::async_trait;
use bridge_contract::{QuoteMode, QuoteResponse};

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{from_json, from_text, to_json, NewEvent, StoreResult, StoredBridge};

/// A quote as the sandbox keeps it until it is committed or expires.
#[derive(Debug, Clone)]
pub struct StoredQuote {
    pub id: String,
    pub project: String,
    pub response: QuoteResponse,
    /// The request's `mode`, kept for swap records.
    pub mode: QuoteMode,
    pub created_ms: i64,
    pub expires_ms: i64,
    pub committed: bool,
}

#[async_trait]
pub trait QuoteStore: Send + Sync {
    async fn insert_quote(&self, quote: &StoredQuote) -> StoreResult<()>;
    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>>;
    /// Marks the quote committed and inserts its bridge with its events; `false` if it was already committed.
    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool>;
}

const COLUMNS: &str = "id, project, body, mode, created_ms, expires_ms, committed";

impl FromRow for StoredQuote {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredQuote {
            id: row.at(0)?,
            project: row.at(1)?,
            response: from_json(&row.at::<String>(2)?)?,
            mode: from_text(&row.at::<String>(3)?)?,
            created_ms: row.at(4)?,
            expires_ms: row.at(5)?,
            committed: row.at(6)?,
        })
    }
}

pub(super) fn insert(q: &StoredQuote) -> StoreResult<Query> {
    Ok(query!(
        "INSERT INTO quotes ({COLUMNS}, stored_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, FALSE, wall_ms())",
        &q.id,
        &q.project,
        to_json(&q.response)?,
        q.mode.as_str(),
        q.created_ms,
        q.expires_ms,
    ))
}

pub(super) fn by_id(project: &str, id: &str) -> Query {
    query!("SELECT {COLUMNS} FROM quotes WHERE id = ?1 AND project = ?2", id, project)
}

/// Marks a quote committed unless it is: one row changed, or none.
pub(super) fn mark_committed(id: &str) -> Query {
    query!("UPDATE quotes SET committed = TRUE WHERE id = ?1 AND NOT committed", id)
}
