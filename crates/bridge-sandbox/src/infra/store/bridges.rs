//! Bridges: saving, the lifecycle's due bridges, history and lookups by transaction hash: the area's trait, its
//! queries and its SQL for both backends (`sqlite/bridges.rs` and `postgres/bridges.rs` implement the trait).

use async_trait::async_trait;
use bridge_contract::{BridgeRecord, Encoded, HistorySortBy, HistoryStateFilter, SortDirection};

use super::rows::{Columns, FromRow};
use super::sql::{query, Arg, Query};
use super::{from_json, to_json, NewEvent, StoreResult, StoredBridge};

/// History filters and order.
#[derive(Debug, Clone)]
pub struct HistoryQuery {
    pub state: Option<HistoryStateFilter>,
    pub sort_by: HistorySortBy,
    pub direction: SortDirection,
    pub offset: u64,
    pub limit: u64,
}

/// Cursor-paged history (`GET /bridge/history-cursor/user`): the filter and order of [`HistoryQuery`], after the
/// record at `after` = (its sort key in ms, its id) in that order.
#[derive(Debug, Clone)]
pub struct HistoryCursorQuery {
    pub state: Option<HistoryStateFilter>,
    pub sort_by: HistorySortBy,
    pub direction: SortDirection,
    pub after: Option<(i64, String)>,
    pub limit: u64,
}

#[async_trait]
pub trait BridgeStore: Send + Sync {
    async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>>;
    /// A bridge's record as the JSON it was stored as (not decoded: `GET /bridge/history/bridge/{id}` serves it).
    async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>>;
    /// Saves a changed bridge with the events its change emits, if it is still at the version it was read at
    /// (`bridge.version`): `true` when saved (the stored version is then one more), `false` when someone saved it
    /// in between, in which case nothing was written (read it again and redo the change).
    async fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool>;
    /// Bridges whose lifecycle is due on their project's clock at `base_ms` ([`crate::infra::clock::base_ms`]), oldest
    /// first, taken for the caller's lifecycle pass: a store shared by instances leases them, so that one instance
    /// steps each (saving the bridge ends the lease). One query over every project (a join of `projects` and the
    /// due index of `bridges`), not one per project.
    async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>>;
    /// The bridges of one project due on its clock at `base_ms`, oldest first, taken for the clock advance's own
    /// pass **whether or not another instance's pass holds them**: a store shared by instances waits for a bridge
    /// another instance is saving at that moment (its row lock) rather than skipping it, then leases it to the
    /// caller. Two passes that step one bridge at once cannot both save it (saves are versioned), so taking a
    /// bridge from another instance's lease costs at most a step computed twice; after an advance, a read of
    /// this that finds nothing means every bridge of the project is in its state at the new time.
    async fn take_due_bridges_of(&self, project: &str, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>>;
    /// A page of a project's bridges and the number of all that match the filter.
    async fn history(&self, project: &str, query: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)>;
    /// A page of a project's bridges after a cursor, in the query's order (sort key, then id).
    async fn history_after(&self, project: &str, query: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>>;
    /// A project's bridges whose deposit (or a rejected deposit) has this transaction hash, oldest first.
    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
    /// A project's bridges whose withdrawal has this transaction hash.
    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
}

/// A bridge's columns, in [`FromRow`]'s order.
pub(super) const COLUMNS: &str =
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

/// The values a bridge is written with: `(id, version, record, rejections, state, updated_ms, next_ms, plan, ended,
/// project, created_ms, webhook_url, address_note)` as `?1` to `?13`. A backend's insert (`upsert_bridge`) and save
/// (`?1` to `?9`: the first nine, [`SAVED_VALUES`]) name them so (`sqlite/`, `postgres/`: PostgreSQL's also end a
/// lease); both also set `stored_ms` to the store's wall clock (`wall_ms()`), the time retention measures an
/// ended bridge's age from.
pub(super) fn saved_values(b: &StoredBridge) -> StoreResult<Vec<Arg>> {
    Ok(vec![
        Arg::from(&b.id),
        Arg::from(b.version),
        Arg::from(to_json(&b.record)?),
        Arg::from(to_json(&b.rejections)?),
        Arg::from(crate::domain::records::state_name(&b.record)),
        Arg::from(b.updated_ms),
        Arg::from(b.next_ms),
        Arg::from(b.plan.as_ref().map(to_json).transpose()?),
        Arg::from(b.has_ended()),
        Arg::from(&b.project),
        Arg::from(b.created_ms),
        Arg::from(&b.webhook_url),
        Arg::from(&b.address_note),
    ])
}

/// How many of [`saved_values`] a save (of a bridge already stored) names.
pub(super) const SAVED_VALUES: usize = 9;

pub(super) fn by_id(project: &str, id: &str) -> Query {
    query!("SELECT {COLUMNS} FROM bridges WHERE id = ?1 AND project = ?2", id, project)
}

pub(super) fn record(project: &str, id: &str) -> Query {
    query!("SELECT record FROM bridges WHERE id = ?1 AND project = ?2", id, project)
}

/// The SQL of a history order: the column sorted on, the direction, and the row comparison that goes past a
/// cursor in that order (`(column, id) > (key, id)` ascending, `<` descending).
fn order(sort_by: HistorySortBy, direction: SortDirection) -> (&'static str, &'static str, &'static str) {
    let column = match sort_by {
        HistorySortBy::CreatedAt => "created_ms",
        HistorySortBy::UpdatedAt => "updated_ms",
    };
    match direction {
        SortDirection::Asc => (column, "ASC", ">"),
        SortDirection::Desc => (column, "DESC", "<"),
    }
}

/// How many of a project's bridges the history's filter keeps.
pub(super) fn history_count(project: &str, q: &HistoryQuery) -> Query {
    let state = q.state.map(|s| s.as_str());
    query!(
        "SELECT COUNT(*) FROM bridges WHERE project = ?1 AND (CAST(?2 AS TEXT) IS NULL OR state = ?2)",
        project,
        state
    )
}

pub(super) fn history_page(project: &str, q: &HistoryQuery) -> Query {
    let (column, direction, _) = order(q.sort_by, q.direction);
    let text = format!(
        "SELECT {COLUMNS} FROM bridges WHERE project = ?1 AND (CAST(?2 AS TEXT) IS NULL OR state = ?2)
         ORDER BY {column} {direction}, id {direction} LIMIT ?3 OFFSET ?4"
    );
    let state = q.state.map(|s| s.as_str());
    Query::made(text, vec![Arg::from(project), Arg::from(state), Arg::from(q.limit as i64), Arg::from(q.offset as i64)])
}

pub(super) fn history_after(project: &str, q: &HistoryCursorQuery) -> Query {
    let (column, direction, beyond) = order(q.sort_by, q.direction);
    let text = format!(
        "SELECT {COLUMNS} FROM bridges WHERE project = ?1 AND (CAST(?2 AS TEXT) IS NULL OR state = ?2)
           AND (CAST(?3 AS BIGINT) IS NULL OR ({column}, id) {beyond} (CAST(?3 AS BIGINT), CAST(?4 AS TEXT)))
         ORDER BY {column} {direction}, id {direction} LIMIT ?5"
    );
    let (after_key, after_id) = match &q.after {
        Some((key, id)) => (Some(*key), Some(id.as_str())),
        None => (None, None),
    };
    let state = q.state.map(|s| s.as_str());
    Query::made(
        text,
        vec![
            Arg::from(project),
            Arg::from(state),
            Arg::from(after_key),
            Arg::from(after_id),
            Arg::from(q.limit as i64),
        ],
    )
}

pub(super) fn by_deposit_hash(project: &str, tx_hash: &str) -> Query {
    query!(
        "SELECT {COLUMNS} FROM bridges WHERE project = ?1 AND (record::jsonb ->> 'depositTxHash' = ?2
           OR EXISTS (SELECT 1 FROM jsonb_array_elements(rejections::jsonb) WHERE value::jsonb ->> 'depositTxHash' = ?2))
         ORDER BY created_ms, id",
        project,
        tx_hash,
    )
}

pub(super) fn by_withdraw_hash(project: &str, tx_hash: &str) -> Query {
    query!(
        "SELECT {COLUMNS} FROM bridges WHERE project = ?1 AND record::jsonb ->> 'withdrawTxHash' = ?2
         ORDER BY created_ms, id",
        project,
        tx_hash,
    )
}
