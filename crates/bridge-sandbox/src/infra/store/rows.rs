//! Every stored type read from a result row, once for both backends. A backend's row ([`Columns`]: rusqlite's
//! `Row`, sqlx's `PgRow`) is read by column position, in the order of the column lists here, which each
//! backend's `SELECT` names ([`BRIDGE_COLUMNS`], ...); the SQL around them stays per dialect in the backends.
//! The driver types a column decodes to are the ones both drivers share for the two schemas (`TEXT` as
//! `String`, `BIGINT` / `INTEGER` as `i64`, PostgreSQL's `INT` columns as `i32`, `BOOLEAN` / 0-1 integers as
//! `bool`).

use bridge_contract::{DateString, Encoded, WebhookDeliveryAttempt, WebhookEvent};
use sqlx_postgres::Postgres;

use super::access::{AuditAction, AuditEntry, StoredApiKey, StoredProject, StoredSigningKey};
use super::StoredRoutingAddress;
use super::{
    from_json, from_text, Backlog, StoreError, StoreResult, StoredAddress, StoredBridge, StoredDeposit, StoredQuote,
};
use crate::infra::clock::ProjectClock;

/// A column value both drivers decode.
pub(super) trait Column:
    rusqlite::types::FromSql + for<'r> sqlx_core::decode::Decode<'r, Postgres> + sqlx_core::types::Type<Postgres>
{
}

impl<T> Column for T where
    T: rusqlite::types::FromSql + for<'r> sqlx_core::decode::Decode<'r, Postgres> + sqlx_core::types::Type<Postgres>
{
}

/// A result row of either backend, read by column position.
pub(super) trait Columns {
    fn at<T: Column>(&self, index: usize) -> StoreResult<T>;
}

/// A value read from one result row whose columns are the type's column list.
pub(super) trait FromRow: Sized {
    fn from_row(row: &impl Columns) -> StoreResult<Self>;
}

pub(super) const BRIDGE_COLUMNS: &str =
    "id, project, record, rejections, created_ms, updated_ms, next_ms, webhook_url, plan, version, address_note";

impl FromRow for StoredBridge {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredBridge {
            id: row.at(0)?,
            project: row.at(1)?,
            record: from_json(&row.at::<String>(2)?)?,
            rejections: from_json(&row.at::<String>(3)?)?,
            created_ms: row.at(4)?,
            updated_ms: row.at(5)?,
            next_ms: row.at(6)?,
            webhook_url: row.at(7)?,
            plan: row.at::<Option<String>>(8)?.map(|p| from_json(&p)).transpose()?,
            version: row.at(9)?,
            address_note: row.at(10)?,
        })
    }
}

/// The backlog: one row of three columns, the outbox rows pending (`COUNT(*)`) and how late the latest due
/// delivery and the latest due lifecycle step are (`MAX(...)`, `NULL` when none is due).
impl FromRow for Backlog {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(Backlog {
            outbox_pending: row.at::<i64>(0)? as u64,
            oldest_due_delivery_late_ms: row.at(1)?,
            oldest_due_step_late_ms: row.at(2)?,
        })
    }
}

/// A project's clock (`projects`).
pub(super) const CLOCK_COLUMNS: &str = "clock_value, clock_floor, generation";

impl FromRow for ProjectClock {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(ProjectClock { value: row.at(0)?, floor: row.at(1)?, generation: row.at(2)? })
    }
}

pub(super) const QUOTE_COLUMNS: &str = "id, project, body, mode, created_ms, expires_ms, committed";

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

/// A deposit address and its position (`seq`, the search's cursor).
pub(super) const ADDRESS_COLUMNS: &str = "seq, project, reuse_key, body, search_item, webhook_url, created_ms";

impl FromRow for (i64, StoredAddress) {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok((
            row.at(0)?,
            StoredAddress {
                project: row.at(1)?,
                reuse_key: row.at(2)?,
                address: from_json(&row.at::<String>(3)?)?,
                search_item: from_json(&row.at::<String>(4)?)?,
                webhook_url: row.at(5)?,
                created_ms: row.at(6)?,
            },
        ))
    }
}

pub(super) const ROUTING_ADDRESS_COLUMNS: &str = "project, body, webhook_url, created_ms";

impl FromRow for StoredRoutingAddress {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredRoutingAddress {
            project: row.at(0)?,
            address: from_json(&row.at::<String>(1)?)?,
            webhook_url: row.at(2)?,
            created_ms: row.at(3)?,
        })
    }
}

pub(super) const DEPOSIT_COLUMNS: &str = "last_bridge, bridge_id";

impl FromRow for StoredDeposit {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredDeposit { last_bridge: from_json(&row.at::<String>(0)?)?, bridge_id: row.at(1)? })
    }
}

/// An event of the feed: its position and its body as stored (not decoded: the feed serves it as it is).
pub(super) const FEED_COLUMNS: &str = "seq, body";

impl FromRow for (i64, Encoded<WebhookEvent>) {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok((row.at(0)?, Encoded::from_stored(row.at(1)?)))
    }
}

/// A delivery attempt (`delivery_attempts a`) and its event's body (`events e`, `NULL` when the event is gone).
pub(super) const ATTEMPT_COLUMNS: &str =
    "a.event_id, a.url, a.attempt, a.at_ms, a.status, a.error, a.delivered, a.next_ms, a.latency_ms, a.body_start, e.body";

impl FromRow for WebhookDeliveryAttempt {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(WebhookDeliveryAttempt {
            event_id: row.at(0)?,
            url: row.at(1)?,
            attempt: row.at::<i32>(2)? as u64,
            at: DateString::from_millis(row.at(3)?).unwrap_or(DateString::MIN),
            status: row.at::<Option<i32>>(4)?.map(i64::from),
            error: row.at(5)?,
            delivered: row.at(6)?,
            next_attempt_at: row.at::<Option<i64>>(7)?.and_then(DateString::from_millis),
            latency_ms: row.at::<Option<i64>>(8)?.map(|ms| ms.max(0) as u64),
            response_body_start: row.at(9)?,
            event: row.at::<Option<String>>(10)?.map(|body| from_json(&body)).transpose()?,
        })
    }
}

pub(super) const KEY_COLUMNS: &str = "id, project, name, hash, created_ms, last_used_ms, revoked_ms";

impl FromRow for StoredApiKey {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredApiKey {
            id: row.at(0)?,
            project: row.at(1)?,
            name: row.at(2)?,
            hash: row.at(3)?,
            created_ms: row.at(4)?,
            last_used_ms: row.at(5)?,
            revoked_ms: row.at(6)?,
        })
    }
}

/// A signing key; its secret is stored as hex.
pub(super) const SIGNING_COLUMNS: &str = "kid, secret, created_ms, unlabelled, signed_until_ms, retires_ms";

impl FromRow for StoredSigningKey {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let secret: String = row.at(1)?;
        Ok(StoredSigningKey {
            kid: row.at(0)?,
            secret: hex::decode(secret).map_err(|e| StoreError::new(e).context("a stored signing key"))?,
            created_ms: row.at(2)?,
            unlabelled: row.at(3)?,
            signed_until_ms: row.at(4)?,
            retires_ms: row.at(5)?,
        })
    }
}

pub(super) const PROJECT_COLUMNS: &str = "project, created_ms, disabled_ms, last_activity_ms";

impl FromRow for StoredProject {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredProject {
            project: row.at(0)?,
            created_ms: row.at(1)?,
            disabled_ms: row.at(2)?,
            last_activity_ms: row.at(3)?,
        })
    }
}

/// An audit entry; its action is stored by name ([`AuditAction::as_str`]).
pub(super) const AUDIT_COLUMNS: &str = "at_ms, actor, action, project, subject, detail";

impl FromRow for AuditEntry {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let action: String = row.at(2)?;
        Ok(AuditEntry {
            at_ms: row.at(0)?,
            actor: row.at(1)?,
            action: AuditAction::from_name(&action)
                .ok_or_else(|| StoreError::new(anyhow::anyhow!("unknown audit action {action:?}")))?,
            project: row.at(3)?,
            subject: row.at(4)?,
            detail: row.at(5)?,
        })
    }
}
