//! Webhook deliveries: the outbox, its leases and the attempt log: the area's trait, what it stores, and the SQL
//! both backends share (`sqlite/deliveries.rs` and `postgres/deliveries.rs` implement the trait; how due
//! deliveries are taken and leased differs by backend).

use std::collections::HashMap;

use async_trait::async_trait;
use bridge_contract::{DateString, SandboxDeliveryFault, WebhookDeliveryAttempt, WebhookEvent};

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{from_json, from_text, StoreResult};

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
    /// The delivery's generation when it was taken: a resend or recovery acknowledged while the attempt is in
    /// flight raises it, and the attempt's outcome then no longer decides when (or whether) to try again.
    pub generation: i64,
    /// This attempt was held back by a fault ([`DeliveryStore::hold_back`]) and is made now, after the hold.
    pub held_back: bool,
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
    /// The start of the answer's body ([`crate::pipeline::delivery::BODY_START_BYTES`] at most), when there was an answer.
    pub body_start: Option<String>,
    /// The fault the sandbox injected into this attempt on purpose (the project's fault profile), if any.
    pub fault: Option<SandboxDeliveryFault>,
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

#[async_trait]
pub trait DeliveryStore: Send + Sync {
    /// The deliveries a [`DeliveryClaim`] allows, oldest first, each leased until the claim's wall-clock time.
    /// Leases are on the wall clock: they measure real time in flight, which moving the sandbox clock must not cut
    /// short (that would deliver an event twice). A worker that dies mid-delivery leaves its rows to be taken again
    /// when the lease runs out, or at once by the next [`DeliveryStore::release_leases`]. Fair to receivers: one
    /// slow or dead receiver cannot take every slot from the others.
    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>>;
    /// Releases every lease: a deliverer that starts (one per data directory) has nothing in flight yet. A store
    /// shared by instances releases nothing (the others' deliveries are in flight); leases run out instead.
    async fn release_leases(&self) -> StoreResult<()>;
    /// Records an attempt and schedules the next one (or closes the delivery); nothing when the delivery is gone
    /// (its project was reset meanwhile).
    async fn record_attempt(&self, delivery: &DueDelivery, outcome: &AttemptOutcome) -> StoreResult<()>;
    /// Records an attempt that sent again an envelope its receiver had acknowledged (a duplicate, `delivery`
    /// numbered after that attempt): logged, counted in the delivery's attempts, its schedule left as the
    /// acknowledged attempt set it (delivered). Nothing when the delivery is gone.
    async fn record_duplicate(&self, delivery: &DueDelivery, outcome: &AttemptOutcome) -> StoreResult<()>;
    /// Holds a taken delivery back until `until_wall_ms` (wall clock) without attempting it: it stays due and
    /// leased, so deliveries that fall due meanwhile are taken first; when taken again, its attempt is marked
    /// [`DueDelivery::held_back`].
    async fn hold_back(&self, delivery: &DueDelivery, until_wall_ms: i64) -> StoreResult<()>;
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
}

/// A delivery attempt (`delivery_attempts a`) and its event's body (`events e`, `NULL` when the event is gone).
const ATTEMPT_COLUMNS: &str = "a.event_id, a.url, a.attempt, a.at_ms, a.status, a.error, a.delivered, a.next_ms, \
     a.latency_ms, a.body_start, e.body, a.fault";

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
            fault: row.at::<Option<String>>(11)?.map(|fault| from_text(&fault)).transpose()?,
        })
    }
}

/// Schedules a delivery's next attempt (or closes it) and ends its lease: one row changed, or none when the
/// delivery is gone. When a resend or recovery raised the delivery's generation while the attempt was in flight,
/// the schedule it set stands (due, not delivered): the attempt is logged, but cannot close what was asked again.
pub(super) fn schedule(d: &DueDelivery, o: &AttemptOutcome) -> Query {
    query!(
        "UPDATE outbox SET attempts = ?2, leased_until = NULL,
                next_ms = CASE WHEN generation = ?5 THEN ?3 ELSE next_ms END,
                delivered = CASE WHEN generation = ?5 THEN ?4 ELSE FALSE END
         WHERE id = ?1",
        d.outbox_id,
        d.attempt,
        o.next_ms,
        o.delivered,
        d.generation,
    )
}

/// Counts a duplicate attempt in its delivery (nothing else of the schedule changes): one row, or none when the
/// delivery is gone.
pub(super) fn count_duplicate(d: &DueDelivery) -> Query {
    query!("UPDATE outbox SET attempts = greatest(attempts, ?2) WHERE id = ?1", d.outbox_id, d.attempt)
}

/// Holds a delivery back: leased (not taken) until the wall-clock time, the held attempt noted.
pub(super) fn hold_back(d: &DueDelivery, until_wall_ms: i64) -> Query {
    query!(
        "UPDATE outbox SET leased_until = ?2, held_back_attempt = ?3 WHERE id = ?1",
        d.outbox_id,
        until_wall_ms,
        d.attempt,
    )
}

/// The attempt's entry in the delivery log.
pub(super) fn log_attempt(d: &DueDelivery, o: &AttemptOutcome) -> Query {
    query!(
        "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms, latency_ms, body_start, fault, stored_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, wall_ms())",
        d.outbox_id,
        &d.event_id,
        &d.project,
        &d.url,
        d.attempt,
        o.at_ms,
        o.status.map(i64::from),
        &o.error,
        o.delivered,
        o.next_ms,
        o.latency_ms,
        &o.body_start,
        o.fault.map(SandboxDeliveryFault::as_str),
    )
}

pub(super) fn attempts(project: &str, event_id: Option<&str>, limit: u64) -> Query {
    query!(
        "SELECT {ATTEMPT_COLUMNS} FROM delivery_attempts a LEFT JOIN events e ON e.id = a.event_id
         WHERE a.project = ?1 AND (CAST(?2 AS TEXT) IS NULL OR a.event_id = ?2) ORDER BY a.id DESC LIMIT ?3",
        project,
        event_id,
        limit as i64,
    )
}

pub(super) fn resend(project: &str, event_id: &str, now_ms: i64) -> Query {
    query!(
        "UPDATE outbox SET next_ms = ?3, delivered = FALSE, generation = generation + 1
         WHERE project = ?1 AND event_id = ?2",
        project,
        event_id,
        now_ms,
    )
}

pub(super) fn recover(project: &str, since_ms: i64, now_ms: i64) -> Query {
    query!(
        "UPDATE outbox SET next_ms = ?3, generation = generation + 1 WHERE project = ?1 AND NOT delivered AND attempts > 0
           AND (SELECT max(a.at_ms) FROM delivery_attempts a WHERE a.outbox_id = outbox.id) >= ?2",
        project,
        since_ms,
        now_ms,
    )
}
