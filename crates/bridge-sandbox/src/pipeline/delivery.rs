//! Webhook delivery from the outbox.
//!
//! Every event with a `webhookUrl` (the quote's or the deposit address's) gets an outbox row in the same
//! transaction as the event itself, so an acknowledged change never loses its delivery, also across restarts.
//! A worker takes due rows, leasing each for [`LEASE_MS`] of real time (so that moving the sandbox clock never
//! makes an attempt in flight look abandoned, and a delivery cut short by a crash is tried again at the next start),
//! and POSTs the signed envelope `{event, eventId, ts}` with the `X-Webhook-Signature` header, signed by the
//! contract's [`WebhookSigner`] (one implementation for both sides: receivers verify with the same module,
//! `bridge_client::webhook`). The body is JavaScript's
//! `JSON.stringify` text of the envelope, so a receiver that parses it and serialises it again gets the very text
//! that was signed.
//!
//! Guarantees: **at least once** per event and URL (a receiver drops duplicates by `eventId`); no order across
//! events (order by the feed, or by `createdAt`/`eventId`). Any 2xx answer is a delivery; anything else, or no
//! answer within [`TIMEOUT`], is retried after `1 s × 2^(attempt−1)` (±20 % jitter, at most one hour) on the
//! owning project's clock, up to [`MAX_ATTEMPTS`] attempts. At most [`IN_FLIGHT`] deliveries run at once, each in its own
//! task, and at most [`PER_RECEIVER`] of them to one URL, so a slow or dead receiver never blocks the API or
//! other receivers: it only ever holds its own few slots. Every attempt is logged and listed
//! by `GET /sandbox/webhook-deliveries`. The sandbox speaks plain HTTP to receivers (no TLS).
//!
//! **Shutdown** ([`Deliverer::drain`]): an instance that stops takes nothing new and lets the attempts in flight
//! finish until a deadline; an attempt still waiting for its receiver then is cut, recorded as `interrupted` and
//! made due at once (its lease cleared), so another instance (or this one's next start) tries it again without
//! waiting for the lease to run out. An attempt whose receiver answered is always recorded as answered, so
//! shutting down never makes a delivered event be delivered again; a cut attempt had no answer, which is the case
//! at-least-once delivery retries anyway.
//!
//! **Faults** (the project's fault profile, `PUT /sandbox/faults`: [`crate::infra::faults`]): each attempt taken draws
//! once. `holdBack`: the delivery is not attempted but held (its lease extended, on the wall clock) while the
//! project's deliveries that fall due meanwhile are taken; its attempt after the hold is marked and draws nothing.
//! `delay`: the attempt waits before it sends, keeping its place at its URL but holding no slot of the instance (so
//! no other project's delivery waits for it). `duplicate`: once the receiver acknowledged the
//! attempt, the same signed envelope is sent again at once, recorded as the next attempt (the delivery stays
//! delivered whatever it answers). Each faulted attempt is recorded with its `fault`.
//!
//! Every attempt obeys the webhook egress policy ([`crate::infra::egress`]): the client resolves host names through the
//! policy's resolver, which hands the connector only allowed addresses; an IP literal is judged before anything is
//! sent; redirects are not followed and no proxy is used. An attempt the policy refuses connects nowhere, is
//! recorded with the reason (`refused by the webhook egress policy: ...`) and is not retried.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backon::BackoffBuilder as _;
use bridge_contract::webhook::{WebhookSigner, SIGNATURE_HEADER};
use bridge_contract::{DecimalNumber, SandboxDeliveryFault, WebhookEnvelope};
use rand::Rng;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use crate::domain::faults::DeliveryFault;
use crate::domain::webhook_url;
use crate::infra::core::Core;
use crate::infra::egress;
use crate::infra::faults::count_delivery_fault;
use crate::infra::store::{AttemptOutcome, DeliveryClaim, DueDelivery};
use crate::infra::telemetry;

pub const MAX_ATTEMPTS: u32 = 10;
pub const TIMEOUT: Duration = Duration::from_secs(10);
pub const LEASE_MS: i64 = 60_000;
pub const IN_FLIGHT: usize = 64;
pub const PER_RECEIVER: usize = 4;
const MAX_BACKOFF: Duration = Duration::from_secs(3_600);
/// How much of a receiver's answer body an attempt keeps (`responseBodyStart`).
pub const BODY_START_BYTES: usize = 256;

/// The start of an answer body as kept: at most [`BODY_START_BYTES`] bytes, cut before a character that the limit
/// would split, invalid UTF-8 replaced by U+FFFD.
pub fn body_start(body: &[u8]) -> String {
    let mut head = &body[..body.len().min(BODY_START_BYTES)];
    if head.len() < body.len() {
        // A character cut by the limit is left out, not replaced.
        if let Err(e) = std::str::from_utf8(head) {
            if e.error_len().is_none() {
                head = &head[..e.valid_up_to()];
            }
        }
    }
    String::from_utf8_lossy(head).into_owned()
}

/// Reads at most [`BODY_START_BYTES`] of an answer's body (the rest is never read).
pub async fn read_body_start(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() <= BODY_START_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body_start(&body)
}

/// The wait before attempt `attempt + 1`, after `attempt` failed: `1 s × 2^(attempt−1)` (backon's exponential
/// sequence), ±20 % (`jitter` in -1..=1), capped at an hour.
pub fn backoff_ms(attempt: u32, jitter: f64) -> i64 {
    let base = backon::ExponentialBuilder::new()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(MAX_BACKOFF)
        .with_factor(2.0)
        .without_max_times()
        .build()
        .nth(attempt.saturating_sub(1).min(30) as usize)
        .unwrap_or(MAX_BACKOFF);
    let factor = 1.0 + 0.2 * jitter.clamp(-1.0, 1.0);
    ((base.as_millis() as f64) * factor) as i64
}

/// One attempt in flight to a URL, counted in the deliverer's table while it lives.
struct InFlight {
    busy: Arc<Mutex<HashMap<String, usize>>>,
    url: String,
}

impl InFlight {
    fn start(busy: &Arc<Mutex<HashMap<String, usize>>>, url: &str) -> Self {
        *busy.lock().unwrap_or_else(|e| e.into_inner()).entry(url.to_owned()).or_default() += 1;
        Self { busy: busy.clone(), url: url.to_owned() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = busy.get_mut(&self.url) {
            *n -= 1;
            if *n == 0 {
                busy.remove(&self.url);
            }
        }
    }
}

#[derive(Clone)]
pub struct Deliverer {
    core: Arc<Core>,
    signer: Arc<WebhookSigner>,
    http: reqwest::Client,
    slots: Arc<Semaphore>,
    /// Attempts in flight per URL.
    busy: Arc<Mutex<HashMap<String, usize>>>,
    /// Set when the attempts in flight are to be cut short (shutdown).
    interrupt: Arc<watch::Sender<bool>>,
}

impl Deliverer {
    /// A deliverer for the sandbox's outbox. It takes over the leases of any earlier deliverer of the data
    /// directory (one sandbox process per data directory), so what was in flight at a crash is retried at once.
    pub async fn new(core: Arc<Core>, signer: Arc<WebhookSigner>) -> anyhow::Result<Self> {
        let http = core.egress.client_builder().timeout(TIMEOUT).build()?;
        core.store.release_leases().await?;
        Ok(Self {
            core,
            signer,
            http,
            slots: Arc::new(Semaphore::new(IN_FLIGHT)),
            busy: Default::default(),
            interrupt: Arc::new(watch::channel(false).0),
        })
    }

    /// Attempts in flight now.
    pub fn in_flight(&self) -> usize {
        IN_FLIGHT - self.slots.available_permits()
    }

    /// For shutdown, once nothing new is taken: waits until the attempts in flight are done or `deadline` passes,
    /// then cuts those left (each is recorded as interrupted, due at once) and waits for them to be recorded
    /// (at most `deadline` plus 5 s). Returns how many were cut.
    pub async fn drain(&self, deadline: tokio::time::Instant) -> usize {
        let settled = |until: tokio::time::Instant| async move {
            while self.in_flight() > 0 && tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        settled(deadline).await;
        let cut = self.in_flight();
        if cut > 0 {
            tracing::info!(attempts = cut, "handing back webhook attempts still in flight");
            let _ = self.interrupt.send(true);
            settled(tokio::time::Instant::now() + Duration::from_secs(5)).await;
        }
        cut
    }

    /// Starts every due delivery that a free slot allows; returns how many were started.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let free = self.slots.available_permits();
        if free == 0 {
            return Ok(0);
        }
        let wall = crate::infra::clock::wall_ms();
        let claim = DeliveryClaim {
            base_ms: crate::infra::clock::base_ms(self.core.clock.mode()),
            wall_ms: wall,
            lease_until_wall_ms: wall + LEASE_MS,
            limit: free as u64,
            per_url: PER_RECEIVER,
            busy: self.busy.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        };
        let due = self.core.store.take_due_deliveries(&claim).await?;
        let mut started = 0;
        for delivery in due {
            let fault = match (delivery.held_back, self.core.faults.for_delivery(&delivery.project)) {
                (true, _) => Some(AttemptFault::HeldBack),
                (false, Some(DeliveryFault::HoldBack(hold))) => {
                    self.hold_back(&delivery, hold).await;
                    continue;
                }
                (false, Some(DeliveryFault::Delay(wait))) => Some(AttemptFault::Delay(wait)),
                (false, Some(DeliveryFault::Duplicate)) => Some(AttemptFault::Duplicate),
                (false, None) => None,
            };
            started += 1;
            if let Some(AttemptFault::Delay(wait)) = fault {
                // Its place at its URL is kept while it waits, but no slot of the instance: another project's
                // deliveries never wait for a project's delay faults.
                let in_flight = InFlight::start(&self.busy, &delivery.url);
                tokio::spawn(self.clone().deliver_late(delivery, wait, in_flight));
                continue;
            }
            let permit = self.slots.clone().acquire_owned().await?;
            let in_flight = InFlight::start(&self.busy, &delivery.url);
            tokio::spawn(self.clone().deliver_in_slot(delivery, fault, permit, in_flight));
        }
        Ok(started)
    }

    /// Makes the attempt in the slot `permit` holds, then frees it and the URL's place.
    async fn deliver_in_slot(
        self,
        delivery: DueDelivery,
        fault: Option<AttemptFault>,
        permit: OwnedSemaphorePermit,
        in_flight: InFlight,
    ) {
        metrics::gauge!(telemetry::WEBHOOK_IN_FLIGHT).set(self.in_flight() as f64);
        if let Err(e) = self.deliver(delivery, fault).await {
            tracing::warn!(error = %format!("{e:#}"), "recording a delivery attempt failed");
        }
        drop((permit, in_flight));
        metrics::gauge!(telemetry::WEBHOOK_IN_FLIGHT).set(self.in_flight() as f64);
    }

    /// A delay fault: waits `wait` holding the URL's place but no slot, then takes a slot and makes the attempt,
    /// marked `delay`. A wait cut by shutdown makes an interrupted attempt (due again at once); a wait still
    /// running when the process ends makes none: the delivery stays leased, and is attempted when its lease runs
    /// out or is handed back at the next start.
    async fn deliver_late(self, delivery: DueDelivery, wait: Duration, in_flight: InFlight) {
        count_delivery_fault(SandboxDeliveryFault::Delay);
        tracing::info!(event = %delivery.event_id, project = %delivery.project, attempt = delivery.attempt,
            wait_ms = wait.as_millis() as u64, "webhook fault injected: delayed");
        self.wait(wait).await;
        let Ok(permit) = self.slots.clone().acquire_owned().await else { return };
        self.deliver_in_slot(delivery, Some(AttemptFault::Delay(wait)), permit, in_flight).await;
    }

    /// A hold-back fault: the delivery is not attempted now but leased for `hold` (real time), so the project's
    /// deliveries that fall due meanwhile go first. A failure to hold it leaves the lease it was taken with: it is
    /// attempted when that runs out.
    async fn hold_back(&self, delivery: &DueDelivery, hold: Duration) {
        let until = crate::infra::clock::wall_ms() + hold.as_millis().min(i64::MAX as u128) as i64;
        match self.core.store.hold_back(delivery, until).await {
            Ok(()) => {
                count_delivery_fault(SandboxDeliveryFault::HoldBack);
                tracing::info!(event = %delivery.event_id, project = %delivery.project, attempt = delivery.attempt,
                    hold_ms = hold.as_millis() as u64, "webhook fault injected: held back");
            }
            Err(e) => tracing::warn!(error = %e, event = %delivery.event_id, "holding a delivery back failed"),
        }
    }

    async fn deliver(&self, delivery: DueDelivery, fault: Option<AttemptFault>) -> anyhow::Result<()> {
        let core = &self.core;
        let ts = core.now_of(&delivery.project).await?;
        let envelope = WebhookEnvelope {
            event: delivery.event.clone(),
            event_id: delivery.event_id.clone(),
            ts: DecimalNumber::try_from(ts as f64).unwrap_or_default(),
        };
        let started = std::time::Instant::now();
        let Attempt { status, error, refused, interrupted, body } = self.attempt(&delivery.url, &envelope).await;
        let latency_ms = Some(started.elapsed().as_millis().min(i64::MAX as u128) as i64);
        metrics::histogram!(telemetry::WEBHOOK_ATTEMPT_DURATION).record(started.elapsed().as_secs_f64());
        let delivered = error.is_none();
        let at_ms = core.now_of(&delivery.project).await?;
        let next_ms = if delivered || refused {
            None
        } else if interrupted {
            // Handed back: due at once, for whichever instance takes it first (never the attempt's last word).
            Some(at_ms)
        } else if delivery.attempt >= MAX_ATTEMPTS {
            None
        } else {
            Some(at_ms + backoff_ms(delivery.attempt, rand::rng().random_range(-1.0..=1.0)))
        };
        let outcome = match (delivered, interrupted, next_ms) {
            (true, _, _) => "delivered",
            (_, true, _) => "interrupted",
            (_, _, Some(_)) => "retrying",
            (_, _, None) => "exhausted",
        };
        metrics::counter!(telemetry::WEBHOOK_ATTEMPTS, "outcome" => outcome).increment(1);
        let url = webhook_url::redacted(&delivery.url);
        match (&error, next_ms) {
            (None, _) => {
                tracing::info!(event = %delivery.event_id, url = %url, attempt = delivery.attempt, "webhook delivered")
            }
            (Some(e), Some(next)) => {
                tracing::info!(event = %delivery.event_id, url = %url, attempt = delivery.attempt, error = %e, retry_in_ms = next - at_ms, "webhook delivery failed; will retry")
            }
            (Some(e), None) => {
                tracing::warn!(event = %delivery.event_id, url = %url, attempt = delivery.attempt, error = %e, "webhook delivery failed; giving up")
            }
        }
        let mark = fault.and_then(AttemptFault::mark);
        let outcome =
            AttemptOutcome { at_ms, status, error, delivered, next_ms, latency_ms, body_start: body, fault: mark };
        self.core.store.record_attempt(&delivery, &outcome).await?;
        if delivered && fault == Some(AttemptFault::Duplicate) {
            self.duplicate(&delivery, &envelope).await?;
        }
        Ok(())
    }

    /// Waits `wait` before an attempt, unless this instance's shutdown cuts it first (the attempt is then
    /// interrupted at once: [`Deliverer::attempt`] sees the cut).
    async fn wait(&self, wait: Duration) {
        let mut interrupt = self.interrupt.subscribe();
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = interrupt.wait_for(|cut| *cut) => {}
        }
    }

    /// A duplicate fault: `envelope`, just acknowledged, sent again as it was (the same body and signature) and
    /// recorded as the delivery's next attempt, marked `duplicate`; the delivery stays delivered.
    async fn duplicate(&self, delivery: &DueDelivery, envelope: &WebhookEnvelope) -> anyhow::Result<()> {
        count_delivery_fault(SandboxDeliveryFault::Duplicate);
        tracing::info!(event = %delivery.event_id, project = %delivery.project, attempt = delivery.attempt + 1,
            "webhook fault injected: sent twice");
        let again = DueDelivery { attempt: delivery.attempt + 1, ..delivery.clone() };
        let started = std::time::Instant::now();
        let Attempt { status, error, body, .. } = self.attempt(&again.url, envelope).await;
        let latency_ms = Some(started.elapsed().as_millis().min(i64::MAX as u128) as i64);
        let outcome = AttemptOutcome {
            at_ms: self.core.now_of(&again.project).await?,
            status,
            delivered: error.is_none(),
            error,
            next_ms: None,
            latency_ms,
            body_start: body,
            fault: Some(SandboxDeliveryFault::Duplicate),
        };
        Ok(self.core.store.record_duplicate(&again, &outcome).await?)
    }

    /// One POST of the signed envelope to `url`, unless the egress policy refuses its address.
    async fn attempt(&self, url: &str, envelope: &WebhookEnvelope) -> Attempt {
        let egress = &self.core.egress;
        if let Err(refusal) = reqwest::Url::parse(url).map_or(Ok(()), |url| egress.check_literal(&url)) {
            return Attempt::refused(&refusal);
        }
        let signed = match self.signer.signed_delivery(envelope) {
            Ok(signed) => signed,
            Err(e) => return Attempt::failed(None, format!("signing failed: {e}")),
        };
        let mut interrupt = self.interrupt.subscribe();
        let send = async {
            let response = self
                .http
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(SIGNATURE_HEADER, signed.signature)
                .body(signed.body)
                .send()
                .await?;
            let status = response.status();
            Ok::<_, reqwest::Error>((status, read_body_start(response).await))
        };
        let sent = tokio::select! {
            biased;
            _ = interrupt.wait_for(|cut| *cut) => return Attempt::interrupted(),
            sent = send => sent,
        };
        match sent {
            Ok((status, body)) if status.is_success() => Attempt {
                status: Some(status.as_u16()),
                error: None,
                refused: false,
                interrupted: false,
                body: Some(body),
            },
            Ok((status, body)) => {
                Attempt { body: Some(body), ..Attempt::failed(Some(status.as_u16()), format!("answered {status}")) }
            }
            Err(e) => match egress::refusal_in(&e) {
                Some(refusal) => Attempt::refused(refusal),
                None if e.is_timeout() => Attempt::failed(None, format!("no answer within {TIMEOUT:?}")),
                None => Attempt::failed(None, without_url(e)),
            },
        }
    }
}

/// The fault an attempt gets from its project's profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AttemptFault {
    /// Waits this long before sending.
    Delay(Duration),
    /// Sent again once acknowledged.
    Duplicate,
    /// Held back by a fault when it fell due, made now.
    HeldBack,
}

impl AttemptFault {
    /// The mark of the attempt itself: a duplicate's first send is an ordinary attempt (its repeat is marked).
    fn mark(self) -> Option<SandboxDeliveryFault> {
        match self {
            Self::Delay(_) => Some(SandboxDeliveryFault::Delay),
            Self::Duplicate => None,
            Self::HeldBack => Some(SandboxDeliveryFault::HoldBack),
        }
    }
}

/// What one attempt came to: the answer's status, why it failed, whether the egress policy refused it,
/// whether this instance's shutdown cut it before the receiver answered, and the start of the answer's body.
struct Attempt {
    status: Option<u16>,
    error: Option<String>,
    refused: bool,
    interrupted: bool,
    body: Option<String>,
}

impl Attempt {
    fn failed(status: Option<u16>, error: String) -> Self {
        Self { status, error: Some(error), refused: false, interrupted: false, body: None }
    }

    fn refused(refusal: &egress::Refusal) -> Self {
        Self {
            status: None,
            error: Some(format!("{REFUSED_PREFIX}{refusal}")),
            refused: true,
            interrupted: false,
            body: None,
        }
    }

    fn interrupted() -> Self {
        let error = "interrupted: this sandbox instance shut down before the receiver answered".to_string();
        Self { status: None, error: Some(error), refused: false, interrupted: true, body: None }
    }
}

/// What a failed send recorded: the error and its causes, without the URL (the attempt names it once, in its
/// `url`; reqwest's own text would repeat it, however long, in every attempt).
pub fn without_url(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// How the recorded error of a refused attempt starts.
pub const REFUSED_PREFIX: &str = "refused by the webhook egress policy, nothing sent: ";

#[cfg(test)]
mod tests {
    use super::{backoff_ms, body_start, BODY_START_BYTES};

    #[test]
    fn the_body_start_is_cut_on_a_character_and_never_longer_than_the_limit() {
        assert_eq!(body_start(b"ok"), "ok");
        assert_eq!(body_start(b""), "");
        let long = "a".repeat(BODY_START_BYTES + 10);
        assert_eq!(body_start(long.as_bytes()), "a".repeat(BODY_START_BYTES));
        // "é" is two bytes: one `a` less puts its second byte past the limit, so it is left out.
        let cut = format!("{}é tail", "a".repeat(BODY_START_BYTES - 1));
        assert_eq!(body_start(cut.as_bytes()), "a".repeat(BODY_START_BYTES - 1));
        let fits = format!("{}é tail", "a".repeat(BODY_START_BYTES - 2));
        assert_eq!(body_start(fits.as_bytes()), format!("{}é", "a".repeat(BODY_START_BYTES - 2)));
        assert_eq!(body_start(b"bad \xff byte"), "bad \u{fffd} byte");
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter_and_a_cap() {
        assert_eq!(backoff_ms(1, 0.0), 1_000);
        assert_eq!(backoff_ms(2, 0.0), 2_000);
        assert_eq!(backoff_ms(5, 0.0), 16_000);
        assert_eq!(backoff_ms(4, 1.0), 9_600);
        assert_eq!(backoff_ms(4, -1.0), 6_400);
        assert_eq!(backoff_ms(40, 0.0), 3_600_000);
    }
}
