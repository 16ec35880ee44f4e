//! Persistence. The sandbox talks to the [`Store`] trait: one atomic domain operation per method, each an
//! `async` method whose future is `Send`, so a backend may be a blocking embedded database run off the async
//! workers ([`SqliteStore`], the default) or a server database reached through an async driver and a pool, shared
//! by several sandbox instances. Every failure is one typed [`StoreError`], which converts into every operation's
//! 503 `ServiceUnavailable` (`bridge_contract::IntoServiceUnavailable`), so the areas propagate it with `?`.
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

pub mod access;
mod postgres;
mod rows;
mod sqlite;

use std::collections::HashMap;
use std::fmt;

use async_trait::async_trait;
use bridge_contract::{
    BridgeRecord, DepositAddress, DepositAddressSearchItem, Encoded, HistorySortBy, HistoryStateFilter,
    IntoServiceUnavailable, LastBridge, QuoteMode, QuoteResponse, RoutingDepositAddress, ServiceUnavailable,
    SortDirection, WebhookDeliveryAttempt, WebhookEvent,
};
use serde::{de::DeserializeOwned, Serialize};

pub use crate::domain::ids::Counter;
pub use crate::domain::records::StoredBridge;
use crate::infra::clock::{ClockSync, ProjectClock};
pub use access::{
    AccessSnapshot, AuditAction, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoredApiKey, StoredProject,
    StoredSigningKey, Usage,
};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

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

/// The SQL of a history order, for both backends: the column sorted on, the direction, and the row comparison
/// that goes past a cursor in that order (`(column, id) > (key, id)` ascending, `<` descending).
fn history_order(sort_by: HistorySortBy, direction: SortDirection) -> (&'static str, &'static str, &'static str) {
    let column = match sort_by {
        HistorySortBy::CreatedAt => "created_ms",
        HistorySortBy::UpdatedAt => "updated_ms",
    };
    match direction {
        SortDirection::Asc => (column, "ASC", ">"),
        SortDirection::Desc => (column, "DESC", "<"),
    }
}

/// What a bridge is written as besides its plain fields, for both backends: its record, rejections and plan as
/// JSON text, and its state's name (the column the history's state filter reads).
struct BridgeText {
    record: String,
    rejections: String,
    state: &'static str,
    plan: Option<String>,
}

impl BridgeText {
    fn of(bridge: &StoredBridge) -> StoreResult<Self> {
        Ok(Self {
            record: to_json(&bridge.record)?,
            rejections: to_json(&bridge.rejections)?,
            state: crate::domain::records::state_name(&bridge.record),
            plan: bridge.plan.as_ref().map(to_json).transpose()?,
        })
    }
}

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

/// A deposit address of a project.
#[derive(Debug, Clone)]
pub struct StoredAddress {
    pub project: String,
    pub address: DepositAddress,
    pub search_item: DepositAddressSearchItem,
    /// Addresses with the same key are reused unless `reusePolicy` is `create-new`.
    pub reuse_key: String,
    pub webhook_url: Option<String>,
    pub created_ms: i64,
}

/// A routing deposit address of a project (sandbox helper `POST /sandbox/routing-deposit-addresses`).
#[derive(Debug, Clone)]
pub struct StoredRoutingAddress {
    pub project: String,
    pub address: RoutingDepositAddress,
    pub webhook_url: Option<String>,
    pub created_ms: i64,
}

/// A deposit into a deposit address, as the public status lists it, and the bridge it started (if any).
#[derive(Debug, Clone)]
pub struct StoredDeposit {
    pub last_bridge: LastBridge,
    pub bridge_id: Option<String>,
}

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

impl HistoryCursorQuery {
    /// The cursor as two nullable query parameters: the sort key and the id of the record to go past.
    fn after_parts(&self) -> (Option<i64>, Option<&str>) {
        match &self.after {
            Some((key, id)) => (Some(*key), Some(id)),
            None => (None, None),
        }
    }
}

/// Deposit-address search filters; `after` is the position of the last item of the previous page.
#[derive(Debug, Clone, Default)]
pub struct AddressSearch {
    pub address_note: Option<String>,
    pub deposit_chain: Option<String>,
    pub destination_chain: Option<String>,
    pub destination_address: Option<String>,
    pub after: i64,
    pub limit: u64,
}

/// A delivery that is due: the outbox row, its event, and the attempt number it is about to make.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    pub outbox_id: i64,
    pub event_id: String,
    pub project: String,
    pub url: String,
    pub event: WebhookEvent,
    /// 1 for the first attempt.
    pub attempt: u32,
}

/// What became of one attempt.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub at_ms: i64,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub delivered: bool,
    /// When to try again (`None`: delivered or given up).
    pub next_ms: Option<i64>,
    /// Real milliseconds from sending until the answer (or the failure).
    pub latency_ms: Option<i64>,
    /// The start of the answer's body ([`crate::infra::delivery::BODY_START_BYTES`] at most), when there was an answer.
    pub body_start: Option<String>,
}

/// What a project reset deleted ([`Store::reset_project`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResetCounts {
    pub quotes: u64,
    pub bridges: u64,
    pub addresses: u64,
    pub routing_addresses: u64,
    pub deposits: u64,
    pub events: u64,
    /// Delivery-log entries (pending deliveries go with their events).
    pub deliveries: u64,
}

/// Which deliveries to take: those due on their project's clock at `base_ms` ([`crate::infra::clock::base_ms`]: 0 under
/// `--clock manual`, the wall clock under `--clock real`) that no worker holds, leased until
/// `lease_until_wall_ms`, at most `limit`, and at most `per_url` of one URL counting the `busy` ones of that URL
/// already in flight.
#[derive(Debug, Clone)]
pub struct DeliveryClaim {
    pub base_ms: i64,
    pub wall_ms: i64,
    pub lease_until_wall_ms: i64,
    pub limit: u64,
    pub per_url: usize,
    pub busy: HashMap<String, usize>,
}

/// What the store holds that is waiting (for the metrics): the whole store, every instance's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Outbox rows neither delivered nor given up.
    pub outbox_pending: u64,
    /// How late (ms, each on its own project's clock) the latest of the deliveries that are due is.
    pub oldest_due_delivery_late_ms: Option<i64>,
    /// How late (ms, each on its own project's clock) the latest of the lifecycle steps that are due is.
    pub oldest_due_step_late_ms: Option<i64>,
}

/// How far the store's schema is migrated: the migrations this build knows, and how many of them are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaStatus {
    pub known: usize,
    pub applied: usize,
}

/// The clock a sync keeps: `sync.value` when nothing was kept, else the kept value plus `sync.advanced_by`; the
/// higher floor.
fn synced(kept: Option<(i64, i64)>, sync: ClockSync) -> (i64, i64) {
    match kept {
        None => (sync.value, sync.floor),
        Some((value, floor)) => (value.saturating_add(sync.advanced_by), floor.max(sync.floor)),
    }
}

/// The sandbox's persistence, one atomic domain operation per method.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Syncs the shared clock (`crate::infra::clock`): keeps `sync.value` if nothing is kept yet, else adds
    /// `sync.advanced_by` to the kept value; keeps the higher floor; returns the kept (value, floor), atomically.
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)>;
    /// The clock of `project`; `start` becomes its clock if it has none yet (the project is first seen now).
    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock>;
    /// Adds `ms` to the clock value of `project` (which has one: [`Store::project_clock`]) unless the value would
    /// pass `limit`; the clock after, or `None` and nothing changed.
    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>>;
    /// Keeps each `(project, generation, floor)` as that project's floor where it is higher and the generation is
    /// still the project's.
    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()>;
    /// Deletes every quote, bridge, deposit address, routing deposit address, deposit, event, pending delivery and
    /// delivery-log entry of `project` and sets its clock to `start` (the next generation), in one transaction.
    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)>;
    /// Reserves the next `count` values of a counter (which starts at 1), atomically and durably: returns the last
    /// of them (the block is `last - count + 1 ..= last`); no later reservation, by any instance, gets any of them.
    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64>;

    async fn insert_quote(&self, quote: &StoredQuote) -> StoreResult<()>;
    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>>;
    /// Marks the quote committed and inserts its bridge with its events; `false` if it was already committed.
    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool>;

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
    /// A page of a project's bridges and the number of all that match the filter.
    async fn history(&self, project: &str, query: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)>;

    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>>;
    /// Inserts the addresses of one request and their events, all or nothing.
    async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()>;
    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>>;
    /// One page of a project's addresses in insertion order: (position, address).
    async fn search_addresses(&self, project: &str, search: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>>;
    /// Inserts a routing deposit address and its event, atomically.
    async fn insert_routing_address(&self, address: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()>;
    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>>;
    /// Whether an address on a chain is taken, by a deposit address or a routing deposit address.
    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool>;
    /// Records a deposit into an address, with the bridge it started (if any) and the events, atomically.
    async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()>;
    /// The most recent deposits into an address, newest first.
    async fn deposits(&self, deposit_chain: &str, deposit_address: &str, limit: u64)
        -> StoreResult<Vec<StoredDeposit>>;

    /// Appends events on their own.
    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()>;
    /// A project's events at or after `since_ms` with a sequence number above `after_seq`, in sequence order, as
    /// the JSON they were stored as (not decoded: the feed serves it as it is).
    async fn events(
        &self,
        project: &str,
        since_ms: i64,
        after_seq: i64,
        limit: u64,
    ) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>>;

    /// The deliveries a [`DeliveryClaim`] allows, oldest first, each leased until the claim's wall-clock time.
    /// Leases are on the wall clock: they measure real time in flight, which moving the sandbox clock must not cut
    /// short (that would deliver an event twice). A worker that dies mid-delivery leaves its rows to be taken again
    /// when the lease runs out, or at once by the next [`Store::release_leases`]. Fair to receivers: one slow or
    /// dead receiver cannot take every slot from the others.
    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>>;
    /// Releases every lease: a deliverer that starts (one per data directory) has nothing in flight yet. A store
    /// shared by instances releases nothing (the others' deliveries are in flight); leases run out instead.
    async fn release_leases(&self) -> StoreResult<()>;
    /// Records an attempt and schedules the next one (or closes the delivery); nothing when the delivery is gone
    /// (its project was reset meanwhile).
    async fn record_attempt(&self, delivery: &DueDelivery, outcome: &AttemptOutcome) -> StoreResult<()>;
    /// Makes every delivery of `event_id` (a project's) due at `now_ms`, delivered or not (a resend); returns how
    /// many (0: the project has no delivery of that event). The next attempt continues the delivery's numbering.
    async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64>;
    /// Makes every delivery of a project that is not delivered and whose latest attempt was at or after `since_ms`
    /// due at `now_ms` (a recovery); returns how many.
    async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64>;
    /// A project's delivery attempts, newest first, optionally of one event.
    async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>>;

    // ------------------------------------------------------------- production endpoints beyond the spec (issue 17)

    /// A page of a project's bridges after a cursor, in the query's order (sort key, then id).
    async fn history_after(&self, project: &str, query: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>>;
    /// A project's bridges whose deposit (or a rejected deposit) has this transaction hash, oldest first.
    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
    /// A project's bridges whose withdrawal has this transaction hash.
    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
    /// How many deposit addresses a project has created: in all, and at or after `since_ms`.
    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)>;

    // ------------------------------------------------------------ operating the sandbox (issue 23: src/operate/)

    /// One round trip to the store (readiness).
    async fn ping(&self) -> StoreResult<()>;
    /// How far the schema is migrated (readiness: every migration this build knows is applied).
    async fn schema_status(&self) -> StoreResult<SchemaStatus>;
    /// The outbox and lifecycle backlog, for the metrics: what is due is measured against each project's own
    /// clock at `base_ms` ([`crate::infra::clock::base_ms`]), as the lifecycle pass and the deliverer take it.
    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog>;
    /// Hands back the leases this store handle holds (deliveries taken by [`Store::take_due_deliveries`] and
    /// bridges taken by [`Store::due_bridges`] that were not finished): an instance that shuts down calls it last,
    /// so other instances take them at once instead of when the lease runs out. Leases of other instances stay.
    async fn release_own_leases(&self) -> StoreResult<()>;

    // ------------------------------------------- projects, API keys, signing keys, the audit list (issue 26)
    // (`access`; every change and its audit entries in one transaction; wall-clock times)

    /// The access version: it grows with every revocation, project state change and signing-key change.
    async fn access_version(&self) -> StoreResult<i64>;
    /// Everything an instance keeps in memory to decide on credentials, at one version.
    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot>;
    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>>;
    /// The keys of a project (or of all), oldest first.
    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>>;
    /// Inserts a key, and its project when the project has no record yet, with their audit entries (`imported`:
    /// a key of an earlier version seen for the first time). `false`: a key with that hash exists (nothing written).
    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool>;
    /// Revokes a key at `at_ms` (audited; the access version grows): the key as it is now, `None` when there is no
    /// such key. A key revoked already stays as it was (nothing written).
    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>>;
    /// Makes the project's record if it has none (audited, saying `how`); `true` when it was made.
    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool>;
    /// Disables or enables a project, making its record if it has none (audited; the access version grows when
    /// its state changed).
    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange>;
    /// Every project with a record, by id.
    async fn projects(&self) -> StoreResult<Vec<StoredProject>>;
    /// Keeps the later of the stored and the given last use and activity; a project seen for the first time gets
    /// its record (audited as made by `sandbox`). Not versioned: nobody decides on it.
    async fn record_usage(&self, usage: &Usage) -> StoreResult<()>;
    /// Keeps `candidate` as the first signing key unless there is one (audited); returns whether it was kept.
    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool>;
    /// Makes the next signing key (`k<n>`) from `secret` at `at_ms`, the current one from then on, and retires the
    /// ones it replaces as `how` says (audited; the access version grows). Returns the new key.
    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey>;
    /// Records that `kid` signed a token valid until `until_ms` (the later of that and what is kept stays), if
    /// `kid` is still the current key; `false` when a rotation replaced it meanwhile (sign with the new one).
    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool>;
    /// The latest audit entries, oldest first.
    async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>>;
}

/// A backend as its area files implement it: each [`Store`] method is an inherent method of `Areas<'_, Backend>`
/// of the same name and signature, in the backend's file for its area (`store/<backend>/<area>.rs`: quotes,
/// bridges, addresses, events, deliveries, clocks, health, access), and [`store_by_area!`] forwards the trait to
/// them (a trait's `impl` block cannot be split across files). The methods live on this wrapper, not on the
/// backend itself, so that the forwarding call cannot reach [`Store`]: `Areas` does not implement it, so a
/// missing area method is a compile error ("no function or associated item named `quote` found for struct
/// `Areas<'_, SqliteStore>`"), where a call `<SqliteStore>::quote` would have found the trait method and called
/// itself forever. It dereferences to the backend, so area methods use the backend's fields and helpers as
/// `self.pool`, `self.read(...)`.
pub(crate) struct Areas<'a, B>(pub(crate) &'a B);

impl<B> std::ops::Deref for Areas<'_, B> {
    type Target = B;

    fn deref(&self) -> &B {
        self.0
    }
}

/// Implements [`Store`] for a backend by forwarding each method to its [`Areas`] method of the same name and
/// signature. A method added to [`Store`] is added here too (the list is the trait's signatures, in its order).
macro_rules! store_by_area {
    ($backend:ty) => {
        $crate::infra::store::forward_store! { $backend;
            fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)>;
            fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock>;
            fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>>;
            fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()>;
            fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)>;
            fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64>;
            fn insert_quote(&self, quote: &StoredQuote) -> StoreResult<()>;
            fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>>;
            fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool>;
            fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>>;
            fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>>;
            fn save_bridge(&self, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool>;
            fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>>;
            fn history(&self, project: &str, query: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)>;
            fn reusable_address(&self, project: &str, deposit_chain: &str, reuse_key: &str) -> StoreResult<Option<StoredAddress>>;
            fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()>;
            fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>>;
            fn search_addresses(&self, project: &str, search: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>>;
            fn insert_routing_address(&self, address: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()>;
            fn routing_address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredRoutingAddress>>;
            fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool>;
            fn add_deposit(&self, deposit_chain: &str, deposit_address: &str, deposit: &StoredDeposit, bridge: Option<&StoredBridge>, events: &[NewEvent]) -> StoreResult<()>;
            fn deposits(&self, deposit_chain: &str, deposit_address: &str, limit: u64) -> StoreResult<Vec<StoredDeposit>>;
            fn append_events(&self, events: &[NewEvent]) -> StoreResult<()>;
            fn events(&self, project: &str, since_ms: i64, after_seq: i64, limit: u64) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>>;
            fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>>;
            fn release_leases(&self) -> StoreResult<()>;
            fn record_attempt(&self, delivery: &DueDelivery, outcome: &AttemptOutcome) -> StoreResult<()>;
            fn delivery_attempts(&self, project: &str, event_id: Option<&str>, limit: u64) -> StoreResult<Vec<WebhookDeliveryAttempt>>;
            fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64>;
            fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64>;
            fn history_after(&self, project: &str, query: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>>;
            fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
            fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>>;
            fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)>;
            fn ping(&self) -> StoreResult<()>;
            fn schema_status(&self) -> StoreResult<SchemaStatus>;
            fn backlog(&self, base_ms: i64) -> StoreResult<Backlog>;
            fn release_own_leases(&self) -> StoreResult<()>;
            fn access_version(&self) -> StoreResult<i64>;
            fn access_snapshot(&self) -> StoreResult<AccessSnapshot>;
            fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>>;
            fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>>;
            fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool>;
            fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>>;
            fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool>;
            fn set_project_disabled(&self, project: &str, disabled: bool, at_ms: i64, actor: &str) -> StoreResult<ProjectChange>;
            fn projects(&self) -> StoreResult<Vec<StoredProject>>;
            fn record_usage(&self, usage: &Usage) -> StoreResult<()>;
            fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool>;
            fn rotate_signing_key(&self, secret: &[u8], at_ms: i64, how: Retire, actor: &str) -> StoreResult<StoredSigningKey>;
            fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool>;
            fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>>;
        }
    };
}
pub(crate) use store_by_area;

/// [`store_by_area!`]'s expansion: the `impl Store` whose methods call `<Areas<'_, Backend>>::method`, a path that
/// finds only inherent methods of [`Areas`] (it implements no trait with these names).
macro_rules! forward_store {
    ($backend:ty; $(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        const _: () = {
            use $crate::infra::store::*;
            use $crate::infra::clock::{ClockSync, ProjectClock};
            use bridge_contract::{BridgeRecord, Encoded, WebhookDeliveryAttempt, WebhookEvent};

            #[async_trait::async_trait]
            impl Store for $backend {
                $(async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    <Areas<'_, $backend>>::$name(&Areas(self) $(, $arg)*).await
                })*
            }
        };
    };
}
pub(crate) use forward_store;
