//! Webhook delivery from the outbox.
//!
//! Every event with a `webhookUrl` (the quote's or the deposit address's) gets an outbox row in the same
//! transaction as the event itself, so an acknowledged change never loses its delivery, also across restarts.
//! A worker takes due rows, leasing each for [`LEASE_MS`] of real time (so that moving the sandbox clock never
//! makes an attempt in flight look abandoned, and a delivery cut short by a crash is tried again at the next start),
//! and POSTs the signed envelope `{event, eventId, ts}` with the `X-Webhook-Signature` header, signed by the
//! client crate's [`WebhookSigner`] (one implementation for both sides). The body is JavaScript's
//! `JSON.stringify` text of the envelope, so a receiver that parses it and serialises it again gets the very text
//! that was signed.
//!
//! Guarantees: **at least once** per event and URL (a receiver drops duplicates by `eventId`); no order across
//! events (order by the feed, or by `createdAt`/`eventId`). Any 2xx answer is a delivery; anything else, or no
//! answer within [`TIMEOUT`], is retried after `1 s × 2^(attempt−1)` (±20 % jitter, at most one hour) on the
//! sandbox clock, up to [`MAX_ATTEMPTS`] attempts. At most [`IN_FLIGHT`] deliveries run at once, each in its own
//! task, and at most [`PER_RECEIVER`] of them to one URL, so a slow or dead receiver never blocks the API or
//! other receivers: it only ever holds its own few slots. Every attempt is logged and listed
//! by `GET /sandbox/webhook-deliveries`. The sandbox speaks plain HTTP to receivers (no TLS).
//!
//! Every attempt obeys the webhook egress policy ([`crate::egress`]): the client resolves host names through the
//! policy's resolver, which hands the connector only allowed addresses; an IP literal is judged before anything is
//! sent; redirects are not followed and no proxy is used. An attempt the policy refuses connects nowhere, is
//! recorded with the reason (`refused by the webhook egress policy: ...`) and is not retried.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_client::webhook::{WebhookSigner, SIGNATURE_HEADER};
use bridge_contract::{DecimalNumber, WebhookEnvelope};
use rand::Rng;
use tokio::sync::Semaphore;

use crate::egress;
use crate::service::Sandbox;
use crate::store::{AttemptOutcome, DeliveryClaim, DueDelivery};

pub const MAX_ATTEMPTS: u32 = 10;
pub const TIMEOUT: Duration = Duration::from_secs(10);
pub const LEASE_MS: i64 = 60_000;
pub const IN_FLIGHT: usize = 64;
pub const PER_RECEIVER: usize = 4;
const MAX_BACKOFF_MS: i64 = 3_600_000;

/// The wait before attempt `attempt + 1`, after `attempt` failed: `1 s × 2^(attempt−1)`, ±20 %, capped.
pub fn backoff_ms(attempt: u32, jitter: f64) -> i64 {
    let base = 1_000i64.saturating_mul(1i64 << (attempt.saturating_sub(1)).min(30)).min(MAX_BACKOFF_MS);
    let factor = 1.0 + 0.2 * jitter.clamp(-1.0, 1.0);
    ((base as f64) * factor) as i64
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
    sandbox: Sandbox,
    signer: Arc<WebhookSigner>,
    http: reqwest::Client,
    slots: Arc<Semaphore>,
    /// Attempts in flight per URL.
    busy: Arc<Mutex<HashMap<String, usize>>>,
}

impl Deliverer {
    /// A deliverer for the sandbox's outbox. It takes over the leases of any earlier deliverer of the data
    /// directory (one sandbox process per data directory), so what was in flight at a crash is retried at once.
    pub async fn new(sandbox: Sandbox, signer: Arc<WebhookSigner>) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(sandbox.core().egress.resolver())
            .build()?;
        sandbox.core().store.release_leases().await?;
        Ok(Self { sandbox, signer, http, slots: Arc::new(Semaphore::new(IN_FLIGHT)), busy: Default::default() })
    }

    /// Starts every due delivery that a free slot allows; returns how many were started.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let free = self.slots.available_permits();
        if free == 0 {
            return Ok(0);
        }
        let wall = crate::clock::wall_ms();
        let claim = DeliveryClaim {
            now_ms: self.sandbox.now_ms(),
            wall_ms: wall,
            lease_until_wall_ms: wall + LEASE_MS,
            limit: free as u64,
            per_url: PER_RECEIVER,
            busy: self.busy.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        };
        let due = self.sandbox.core().store.take_due_deliveries(&claim).await?;
        let started = due.len();
        for delivery in due {
            let permit = self.slots.clone().acquire_owned().await?;
            let in_flight = InFlight::start(&self.busy, &delivery.url);
            let this = self.clone();
            tokio::spawn(async move {
                let _held = (permit, in_flight);
                if let Err(e) = this.deliver(delivery).await {
                    tracing::warn!(error = %format!("{e:#}"), "recording a delivery attempt failed");
                }
            });
        }
        Ok(started)
    }

    async fn deliver(&self, delivery: DueDelivery) -> anyhow::Result<()> {
        let ts = self.sandbox.now_ms();
        let envelope = WebhookEnvelope {
            event: delivery.event.clone(),
            event_id: delivery.event_id.clone(),
            ts: DecimalNumber::try_from(ts as f64).unwrap_or_default(),
        };
        let Attempt { status, error, refused } = self.attempt(&delivery.url, &envelope).await;
        let delivered = error.is_none();
        let at_ms = self.sandbox.now_ms();
        let next_ms = if delivered || refused || delivery.attempt >= MAX_ATTEMPTS {
            None
        } else {
            Some(at_ms + backoff_ms(delivery.attempt, rand::rng().random_range(-1.0..=1.0)))
        };
        match (&error, next_ms) {
            (None, _) => {
                tracing::info!(event = %delivery.event_id, url = %delivery.url, attempt = delivery.attempt, "webhook delivered")
            }
            (Some(e), Some(next)) => {
                tracing::info!(event = %delivery.event_id, url = %delivery.url, attempt = delivery.attempt, error = %e, retry_in_ms = next - at_ms, "webhook delivery failed; will retry")
            }
            (Some(e), None) => {
                tracing::warn!(event = %delivery.event_id, url = %delivery.url, attempt = delivery.attempt, error = %e, "webhook delivery failed; giving up")
            }
        }
        let outcome = AttemptOutcome { at_ms, status, error, delivered, next_ms };
        Ok(self.sandbox.core().store.record_attempt(&delivery, &outcome).await?)
    }

    /// One POST of the signed envelope to `url`, unless the egress policy refuses its address.
    async fn attempt(&self, url: &str, envelope: &WebhookEnvelope) -> Attempt {
        let egress = &self.sandbox.core().egress;
        if let Err(refusal) = reqwest::Url::parse(url).map_or(Ok(()), |url| egress.check_literal(&url)) {
            return Attempt::refused(&refusal);
        }
        let signed = match self.signer.signed_delivery(envelope) {
            Ok(signed) => signed,
            Err(e) => return Attempt::failed(None, format!("signing failed: {e}")),
        };
        let sent = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(SIGNATURE_HEADER, signed.signature)
            .body(signed.body)
            .send()
            .await;
        match sent {
            Ok(response) if response.status().is_success() => {
                Attempt { status: Some(response.status().as_u16()), error: None, refused: false }
            }
            Ok(response) => {
                Attempt::failed(Some(response.status().as_u16()), format!("answered {}", response.status()))
            }
            Err(e) => match egress::refusal_in(&e) {
                Some(refusal) => Attempt::refused(refusal),
                None if e.is_timeout() => Attempt::failed(None, format!("no answer within {TIMEOUT:?}")),
                None => Attempt::failed(None, format!("{e}")),
            },
        }
    }
}

/// What one attempt came to: the answer's status, why it failed, and whether the egress policy refused it.
struct Attempt {
    status: Option<u16>,
    error: Option<String>,
    refused: bool,
}

impl Attempt {
    fn failed(status: Option<u16>, error: String) -> Self {
        Self { status, error: Some(error), refused: false }
    }

    fn refused(refusal: &egress::Refusal) -> Self {
        Self { status: None, error: Some(format!("{REFUSED_PREFIX}{refusal}")), refused: true }
    }
}

/// How the recorded error of a refused attempt starts.
pub const REFUSED_PREFIX: &str = "refused by the webhook egress policy, nothing sent: ";

#[cfg(test)]
mod tests {
    use super::backoff_ms;

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
