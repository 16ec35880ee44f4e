//! Receiving webhook deliveries in a service: [`WebhookReceiver`] checks each delivery and, with the `axum`
//! feature, the [`Webhook`] extractor hands an axum handler the checked, typed event.
//!
//! For each delivery the receiver:
//!
//! 1. verifies the `X-Webhook-Signature` header against the service's public key, fetched from
//!    `GET /webhook/public-key` on first use and cached; when a signature does not verify, the key is fetched
//!    again once (the service may have rotated it) and the delivery checked with the new key. Refetches are
//!    at most one per [`WebhookReceiver::with_min_refetch_interval`] (30 s by default), so forged deliveries
//!    cannot make the receiver hammer the service;
//! 2. refuses an envelope whose `ts` is more than [`WebhookReceiver::with_max_age`] (5 minutes by default) from
//!    the receiver's clock, either way: a captured delivery cannot be replayed later. The service signs every
//!    attempt with its own `ts`, so a retried delivery is fresh;
//! 3. asks the [`Deduplicate`] hook, if one is set, whether the `eventId` was processed already; a duplicate is
//!    acknowledged (200) without reaching the handler. The handler marks an event processed with
//!    [`Webhook::ack`] once it has stored or acted on it, so an event whose handling failed is delivered again;
//! 4. decodes the envelope: an event of a kind this build does not know is [`crate::Event::Unknown`] (tag and raw
//!    JSON), and a member a known kind does not have (at any depth) is ignored, so a newer service does not break
//!    the receiver; a known kind whose members do not match the contract (a required one missing, a wrong type)
//!    is refused (400).
//!
//! | what went wrong | answer |
//! |---|---|
//! | no signature header, a malformed or wrong signature, `ts` outside the window | 401 |
//! | the body is not JSON, or not an envelope of the contract | 400 |
//! | the body is larger than axum's limit (`DefaultBodyLimit`, 2 MiB by default) | 413 |
//! | the public key cannot be fetched | 503 (the service delivers again later) |
//! | a duplicate of a processed event | 200, the handler is not called |
//!
//! Every refusal is logged with `tracing` (WARN, target `bridge_client::receiver`) and answered with a one-line
//! text body; nothing panics. The service retries any non-2xx answer, so a refusal is never lost by the sender.
//!
//! ```no_run
//! # #[cfg(feature = "axum")]
//! # mod example {
//! use axum::routing::post;
//! use axum::Router;
//! use bridge_client::receiver::{InMemoryDeduplicator, Webhook, WebhookReceiver};
//! use bridge_client::{Client, Credentials, Event};
//!
//! async fn on_delivery(webhook: Webhook) -> axum::http::StatusCode {
//!     match &webhook.delivery.event {
//!         Event::Known(event) => println!("{} {}", webhook.delivery.event_id, event.tag()),
//!         Event::Unknown { tag, .. } => println!("{tag}: a kind newer than this build"),
//!     }
//!     webhook.ack().await // 200, and the event id is remembered
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new("https://bridge.example.com", Credentials::none())?; // the key needs no credential
//! let receiver = WebhookReceiver::new(client).with_deduplicator(InMemoryDeduplicator::new(100_000));
//! let app: Router = Router::new().route("/webhooks/bridge", post(on_delivery)).with_state(receiver);
//! # let _ = app; Ok(()) }
//! # }
//! ```

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::client::Client;
use crate::webhook::{VerifiedDelivery, WebhookError, WebhookVerifier};

/// The default of [`WebhookReceiver::with_max_age`]: 5 minutes, the usual tolerance of signed webhooks (clock
/// skew between two servers is seconds; a replay is refused after at most this long).
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(5 * 60);

/// The default of [`WebhookReceiver::with_min_refetch_interval`].
pub const DEFAULT_MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(30);

/// Remembers which events were processed, so that a delivery of one again (deliveries are at least once) is
/// acknowledged without being handled twice. Implement it over your store (ideally marking the event in the same
/// transaction as its effect), or use [`InMemoryDeduplicator`] in a single process.
pub trait Deduplicate: Send + Sync + 'static {
    /// Whether the event with this `eventId` was processed already.
    fn is_processed<'a>(&'a self, event_id: &'a str) -> BoxFuture<'a, bool>;
    /// Records that the event with this `eventId` was processed ([`Webhook::ack`],
    /// [`WebhookReceiver::mark_processed`]).
    fn mark_processed<'a>(&'a self, event_id: &'a str) -> BoxFuture<'a, ()>;
}

/// The last `capacity` processed event ids, in memory (lost on restart; per process).
#[derive(Debug)]
pub struct InMemoryDeduplicator {
    capacity: usize,
    seen: SyncMutex<(HashSet<String>, VecDeque<String>)>,
}

impl InMemoryDeduplicator {
    /// Remembers up to `capacity` event ids (at least 1), forgetting the oldest first.
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), seen: SyncMutex::new((HashSet::new(), VecDeque::new())) }
    }
}

impl Deduplicate for InMemoryDeduplicator {
    fn is_processed<'a>(&'a self, event_id: &'a str) -> BoxFuture<'a, bool> {
        let seen = self.seen.lock().map(|s| s.0.contains(event_id)).unwrap_or(false);
        Box::pin(async move { seen })
    }

    fn mark_processed<'a>(&'a self, event_id: &'a str) -> BoxFuture<'a, ()> {
        if let Ok(mut guard) = self.seen.lock() {
            let (set, order) = &mut *guard;
            if set.insert(event_id.to_owned()) {
                order.push_back(event_id.to_owned());
                while order.len() > self.capacity {
                    if let Some(old) = order.pop_front() {
                        set.remove(&old);
                    }
                }
            }
        }
        Box::pin(async {})
    }
}

/// Why a delivery was refused (or, for [`Rejection::Duplicate`], acknowledged without being handled).
#[derive(Debug)]
pub enum Rejection {
    /// No `X-Webhook-Signature` header (401).
    MissingSignature,
    /// The signature or the body is wrong (401 for the signature, 400 for the body).
    Invalid(WebhookError),
    /// The envelope's `ts` is outside the window (401).
    Stale {
        /// The envelope's `ts`, milliseconds since the Unix epoch.
        ts_ms: f64,
        /// The receiver's clock.
        now_ms: f64,
        /// The window.
        max_age: Duration,
    },
    /// The public key could not be fetched (503: the service delivers again later).
    KeyUnavailable(String),
    /// The event was processed already (200; the handler is not called).
    Duplicate {
        /// Its `eventId`.
        event_id: String,
    },
    /// The body could not be read (the status of the framework's rejection: 400, 413, ...).
    Body {
        /// The HTTP status.
        status: u16,
        /// Why.
        message: String,
    },
}

impl Rejection {
    /// The HTTP status to answer the sender with.
    pub fn status(&self) -> u16 {
        match self {
            Rejection::MissingSignature | Rejection::Stale { .. } => 401,
            Rejection::Invalid(WebhookError::MalformedSignature(_) | WebhookError::BadSignature) => 401,
            Rejection::Invalid(_) => 400,
            Rejection::KeyUnavailable(_) => 503,
            Rejection::Duplicate { .. } => 200,
            Rejection::Body { status, .. } => *status,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::MissingSignature => write!(f, "no {} header", crate::webhook::SIGNATURE_HEADER),
            Rejection::Invalid(e) => write!(f, "{e}"),
            Rejection::Stale { ts_ms, now_ms, max_age } => write!(
                f,
                "delivery outside the accepted window: ts {ts_ms} is {:.0} s from now ({now_ms}), more than {} s",
                (now_ms - ts_ms).abs() / 1000.0,
                max_age.as_secs()
            ),
            Rejection::KeyUnavailable(why) => write!(f, "the webhook public key cannot be fetched: {why}"),
            Rejection::Duplicate { event_id } => write!(f, "event {event_id} was processed already"),
            Rejection::Body { message, .. } => write!(f, "the body cannot be read: {message}"),
        }
    }
}

impl std::error::Error for Rejection {}

/// The key, as fetched; and when it was last fetched again after a failed signature.
struct KeyCache {
    verifier: Option<Arc<WebhookVerifier>>,
    last_refetch: Option<Instant>,
}

struct Inner {
    client: Client,
    key: Mutex<KeyCache>,
    max_age: Option<Duration>,
    min_refetch_interval: Duration,
    dedup: Option<Arc<dyn Deduplicate>>,
}

/// Checks webhook deliveries (see the [module documentation](self)). Cheap to clone; share one per service.
#[derive(Clone)]
pub struct WebhookReceiver {
    inner: Arc<Inner>,
}

impl fmt::Debug for WebhookReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookReceiver")
            .field("service", &self.inner.client.base_url())
            .field("max_age", &self.inner.max_age)
            .field("min_refetch_interval", &self.inner.min_refetch_interval)
            .field("deduplicates", &self.inner.dedup.is_some())
            .finish()
    }
}

impl WebhookReceiver {
    /// A receiver that fetches the public key through `client` (the key needs no credential) on first use.
    pub fn new(client: Client) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                key: Mutex::new(KeyCache { verifier: None, last_refetch: None }),
                max_age: Some(DEFAULT_MAX_AGE),
                min_refetch_interval: DEFAULT_MIN_REFETCH_INTERVAL,
                dedup: None,
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            client: shared.client.clone(),
            key: Mutex::new(KeyCache { verifier: None, last_refetch: None }),
            max_age: shared.max_age,
            min_refetch_interval: shared.min_refetch_interval,
            dedup: shared.dedup.clone(),
        });
        change(&mut inner);
        Self { inner: Arc::new(inner) }
    }

    /// Starts with this key instead of fetching it on first use (it is still fetched again when a signature
    /// fails).
    pub fn with_key(self, verifier: WebhookVerifier) -> Self {
        self.with(|inner| inner.key.get_mut().verifier = Some(Arc::new(verifier)))
    }

    /// Refuses envelopes whose `ts` is further than `max_age` from now (either way); `None` accepts any `ts`.
    pub fn with_max_age(self, max_age: Option<Duration>) -> Self {
        self.with(|inner| inner.max_age = max_age)
    }

    /// The key is fetched again after a failed signature at most once per `interval`.
    pub fn with_min_refetch_interval(self, interval: Duration) -> Self {
        self.with(|inner| inner.min_refetch_interval = interval)
    }

    /// Acknowledges deliveries of events `dedup` says were processed, without handing them over.
    pub fn with_deduplicator(self, dedup: impl Deduplicate) -> Self {
        self.with(|inner| inner.dedup = Some(Arc::new(dedup)))
    }

    /// Records that the event was processed (in the [`Deduplicate`] hook, if one is set).
    pub async fn mark_processed(&self, event_id: &str) {
        if let Some(dedup) = &self.inner.dedup {
            dedup.mark_processed(event_id).await;
        }
    }

    /// Checks one delivery: `signature` is the `X-Webhook-Signature` header's value, `body` the raw body.
    pub async fn check(&self, signature: Option<&str>, body: &[u8]) -> Result<VerifiedDelivery, Rejection> {
        let result = self.check_inner(signature, body).await;
        if let Err(rejection) = &result {
            if !matches!(rejection, Rejection::Duplicate { .. }) {
                tracing::warn!(status = rejection.status(), reason = %rejection, "webhook delivery refused");
            }
        }
        result
    }

    async fn check_inner(&self, signature: Option<&str>, body: &[u8]) -> Result<VerifiedDelivery, Rejection> {
        let signature = signature.map(str::trim).filter(|s| !s.is_empty()).ok_or(Rejection::MissingSignature)?;
        let key = self.key().await?;
        let delivery = match key.verify(body, signature) {
            Ok(delivery) => delivery,
            Err(WebhookError::BadSignature) => match self.refetch(&key).await {
                Some(fresh) => fresh.verify(body, signature).map_err(Rejection::Invalid)?,
                None => return Err(Rejection::Invalid(WebhookError::BadSignature)),
            },
            Err(e) => return Err(Rejection::Invalid(e)),
        };
        if let Some(max_age) = self.inner.max_age {
            let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as f64;
            let ts_ms = delivery.ts.as_f64();
            if (now_ms - ts_ms).abs() > max_age.as_millis() as f64 {
                return Err(Rejection::Stale { ts_ms, now_ms, max_age });
            }
        }
        if let Some(dedup) = &self.inner.dedup {
            if dedup.is_processed(&delivery.event_id).await {
                tracing::info!(event_id = %delivery.event_id, "duplicate webhook delivery acknowledged");
                return Err(Rejection::Duplicate { event_id: delivery.event_id });
            }
        }
        Ok(delivery)
    }

    /// The cached key, fetched if there is none yet.
    async fn key(&self) -> Result<Arc<WebhookVerifier>, Rejection> {
        let mut cache = self.inner.key.lock().await;
        if let Some(key) = &cache.verifier {
            return Ok(key.clone());
        }
        let key =
            Arc::new(self.inner.client.webhook_verifier().await.map_err(|e| Rejection::KeyUnavailable(e.to_string()))?);
        tracing::info!(service = self.inner.client.base_url(), "webhook public key fetched");
        cache.verifier = Some(key.clone());
        Ok(key)
    }

    /// The key fetched again after `failed` did not verify a signature: the new key, or `None` when it is the
    /// same, cannot be fetched, or was fetched again too recently.
    async fn refetch(&self, failed: &Arc<WebhookVerifier>) -> Option<Arc<WebhookVerifier>> {
        let mut cache = self.inner.key.lock().await;
        if let Some(current) = &cache.verifier {
            if !Arc::ptr_eq(current, failed) {
                // Another delivery fetched it again meanwhile.
                return Some(current.clone());
            }
        }
        if cache.last_refetch.is_some_and(|at| at.elapsed() < self.inner.min_refetch_interval) {
            return None;
        }
        cache.last_refetch = Some(Instant::now());
        match self.inner.client.webhook_verifier().await {
            Ok(fresh) if fresh.public_key() == failed.public_key() => None,
            Ok(fresh) => {
                tracing::info!(
                    service = self.inner.client.base_url(),
                    "the webhook public key changed; using the new one"
                );
                let fresh = Arc::new(fresh);
                cache.verifier = Some(fresh.clone());
                Some(fresh)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the webhook public key cannot be fetched again");
                None
            }
        }
    }
}

/// A delivery whose signature, age and novelty were checked: the extractor of the `axum` feature.
#[derive(Debug)]
pub struct Webhook {
    /// The delivery: the typed event ([`crate::Event`]), its `eventId` and `ts`.
    pub delivery: VerifiedDelivery,
    receiver: WebhookReceiver,
}

impl Webhook {
    /// Marks the event processed (in the [`Deduplicate`] hook, if one is set) and returns 200 for the sender.
    /// Call it once the event is stored or acted on; answer an error status otherwise, and the service will
    /// deliver it again.
    pub async fn ack(self) -> http::StatusCode {
        self.receiver.mark_processed(&self.delivery.event_id).await;
        http::StatusCode::OK
    }

    /// The delivery.
    pub fn into_delivery(self) -> VerifiedDelivery {
        self.delivery
    }
}

#[cfg(feature = "axum")]
mod axum_extractor {
    use axum_core::extract::{FromRef, FromRequest, Request};
    use axum_core::response::{IntoResponse, Response};
    use bytes::Bytes;
    use http::header::CONTENT_TYPE;
    use http::StatusCode;

    use super::{Rejection, Webhook, WebhookReceiver};
    use crate::webhook::SIGNATURE_HEADER;

    impl<S> FromRequest<S> for Webhook
    where
        WebhookReceiver: FromRef<S>,
        S: Send + Sync,
    {
        type Rejection = Rejection;

        async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
            let receiver = WebhookReceiver::from_ref(state);
            let signature = req.headers().get(SIGNATURE_HEADER).map(|v| v.to_str().map(str::to_owned));
            let body = Bytes::from_request(req, state).await.map_err(|e| {
                let status = e.status().as_u16();
                Rejection::Body { status, message: e.body_text() }
            })?;
            let signature = match signature {
                None => None,
                Some(Ok(value)) => Some(value),
                Some(Err(_)) => {
                    let why = crate::webhook::WebhookError::MalformedSignature("not visible ASCII".to_owned());
                    return Err(Rejection::Invalid(why));
                }
            };
            let delivery = receiver.check(signature.as_deref(), &body).await?;
            Ok(Webhook { delivery, receiver })
        }
    }

    impl IntoResponse for Rejection {
        fn into_response(self) -> Response {
            let status = StatusCode::from_u16(self.status()).unwrap_or(StatusCode::BAD_REQUEST);
            (status, [(CONTENT_TYPE, "text/plain; charset=utf-8")], self.to_string()).into_response()
        }
    }
}
