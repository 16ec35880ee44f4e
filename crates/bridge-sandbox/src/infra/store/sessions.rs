//! Dashboard sessions (issue 36): the area's trait, what it stores and its SQL for both backends
//! (`sqlite/sessions.rs` and `postgres/sessions.rs` implement the trait with it). What a row holds, and why it is
//! useless without the browser's cookie, is `crate::dashboard::session`'s to decide: here a session is a key (the
//! hash of its id), a project, an opaque sealed credential, its times and the notice for its next page.

use async_trait::async_trait;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::StoreResult;

/// A session to start ([`SessionStore::start_session`]).
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The key of the row: the session id's SHA-256, hex.
    pub id_hash: String,
    pub project: String,
    /// The credential that signed in, sealed (opaque here).
    pub credential: String,
    /// Wall-clock time of the sign-in, ms.
    pub now_ms: i64,
    /// When it ends unless used (ms).
    pub expires_ms: i64,
}

/// How many sessions are kept: per project, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCaps {
    pub per_project: u64,
    pub total: u64,
}

/// A live session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub project: String,
    pub credential: String,
    pub started_ms: i64,
    pub used_ms: i64,
    /// The notice for the session's next page (JSON, written by the dashboard).
    pub notice: Option<String>,
}

#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Starts a session, atomically across instances: ended sessions (`expires_ms` passed) are deleted; a
    /// project at its cap loses its least recently used sessions (never another project's); else, when `total`
    /// are kept, nothing is written and the answer is `Err` with when the first of them ends (ms).
    async fn start_session(&self, new: &NewSession, caps: SessionCaps) -> StoreResult<Result<(), i64>>;
    /// The session keyed `id_hash` if it is live at `now_ms` (an ended one is deleted).
    async fn session(&self, id_hash: &str, now_ms: i64) -> StoreResult<Option<StoredSession>>;
    /// Marks a session used at `used_ms`, ending at `expires_ms` unless used again.
    async fn touch_session(&self, id_hash: &str, used_ms: i64, expires_ms: i64) -> StoreResult<()>;
    /// Takes the session's notice (shown once).
    async fn take_session_notice(&self, id_hash: &str) -> StoreResult<Option<String>>;
    /// Leaves a notice for the session's next page.
    async fn leave_session_notice(&self, id_hash: &str, notice: &str) -> StoreResult<()>;
    /// Deletes a session (sign-out, or a credential no longer accepted): ended on every instance at once.
    async fn end_session(&self, id_hash: &str) -> StoreResult<()>;
    /// How many sessions are kept (ended ones not yet deleted included).
    async fn session_count(&self) -> StoreResult<u64>;
}

/// A session's columns, in [`FromRow`]'s order.
const COLUMNS: &str = "project, credential, started_ms, used_ms, notice";

impl FromRow for StoredSession {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredSession {
            project: row.at(0)?,
            credential: row.at(1)?,
            started_ms: row.at(2)?,
            used_ms: row.at(3)?,
            notice: row.at(4)?,
        })
    }
}

/// Deletes every session ended at `now_ms`.
pub(super) fn delete_ended(now_ms: i64) -> Query {
    query!("DELETE FROM dashboard_sessions WHERE expires_ms <= ?1", now_ms)
}

/// How many sessions `project` has.
pub(super) fn count_of(project: &str) -> Query {
    query!("SELECT COUNT(*) FROM dashboard_sessions WHERE project = ?1", project)
}

/// Deletes `project`'s `count` least recently used sessions.
pub(super) fn delete_least_used(project: &str, count: i64) -> Query {
    query!(
        "DELETE FROM dashboard_sessions WHERE id_hash IN (
             SELECT id_hash FROM dashboard_sessions WHERE project = ?1 ORDER BY used_ms, id_hash LIMIT ?2)",
        project,
        count
    )
}

/// How many sessions are kept and when the first ends (`Two<i64, Option<i64>>`).
pub(super) fn count_and_first_end() -> Query {
    query!("SELECT COUNT(*), MIN(expires_ms) FROM dashboard_sessions")
}

pub(super) fn count() -> Query {
    query!("SELECT COUNT(*) FROM dashboard_sessions")
}

pub(super) fn insert(new: &NewSession) -> Query {
    query!(
        "INSERT INTO dashboard_sessions (id_hash, project, credential, started_ms, used_ms, expires_ms)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        &new.id_hash,
        &new.project,
        &new.credential,
        new.now_ms,
        new.expires_ms,
    )
}

pub(super) fn live(id_hash: &str, now_ms: i64) -> Query {
    query!("SELECT {COLUMNS} FROM dashboard_sessions WHERE id_hash = ?1 AND expires_ms > ?2", id_hash, now_ms)
}

pub(super) fn delete_if_ended(id_hash: &str, now_ms: i64) -> Query {
    query!("DELETE FROM dashboard_sessions WHERE id_hash = ?1 AND expires_ms <= ?2", id_hash, now_ms)
}

pub(super) fn touch(id_hash: &str, used_ms: i64, expires_ms: i64) -> Query {
    query!(
        "UPDATE dashboard_sessions SET used_ms = ?2, expires_ms = ?3 WHERE id_hash = ?1 AND used_ms < ?2",
        id_hash,
        used_ms,
        expires_ms
    )
}

/// The session's notice (a backend reads it and clears it, [`clear_notice`], in one transaction).
pub(super) fn notice(id_hash: &str) -> Query {
    query!("SELECT notice FROM dashboard_sessions WHERE id_hash = ?1", id_hash)
}

pub(super) fn clear_notice(id_hash: &str) -> Query {
    query!("UPDATE dashboard_sessions SET notice = NULL WHERE id_hash = ?1", id_hash)
}

pub(super) fn leave_notice(id_hash: &str, notice: &str) -> Query {
    query!("UPDATE dashboard_sessions SET notice = ?2 WHERE id_hash = ?1", id_hash, notice)
}

pub(super) fn end(id_hash: &str) -> Query {
    query!("DELETE FROM dashboard_sessions WHERE id_hash = ?1", id_hash)
}
