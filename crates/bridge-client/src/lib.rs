//! # bridge-client
//!
//! A client of the bridge, swap and smart-deposit-address service, generated from `schema/openapi.yaml` (the
//! workspace's single source of truth), plus what a generator cannot write: credentials, retries, a commit that
//! survives a lost answer, waiting for a bridge, typed errors that name the operation, pagers as streams, and
//! webhooks (verification and signing, and a receiver for axum).
//!
//! * [`Client`]: one async method per operation of the document (`quote_bridge`, `commit_quote`,
//!   `get_bridge`, `list_user_events`, ...), taking and returning the types of [`bridge_contract`]; query
//!   parameters are the contract's `{Operation}Query` structs. Methods of operations tagged `sandbox` are served
//!   only by the sandbox (`bridge-sandbox`); production answers 404.
//! * [`Credentials`]: a bearer JWT, a [`TokenProvider`] for rotating tokens (asked before every request and
//!   every retry), and the legacy API key (`x-api-key`, accepted by the event feed only).
//! * [`RetryPolicy`] ([`retry`]): safe requests (reads, quotes) retried on connection errors, timeouts, 429 and
//!   503 with jittered exponential backoff, honouring `retryAfter`; state-changing ones only when the answer
//!   proves nothing was done. On by default; [`RetryPolicy::none`] turns it off.
//! * [`Client::commit_quote`] ([`commit`]): a commit whose answer was lost is resolved by reading the bridge, so
//!   a quote is committed once and the caller gets the answer a first commit would have given.
//! * [`Client::wait_for_bridge`] and [`Client::bridge_states`] ([`wait`]): follow a bridge to a final state or a
//!   chosen one, told by the event feed when to look, polling with backoff otherwise.
//! * [`receiver`]: checks webhook deliveries (signature with the served key, refetched when it rotates; age;
//!   duplicates) and, with the `axum` feature, hands an axum handler the typed event.
//! * Every request carries `User-Agent: bridge-client/<version>` ([`DEFAULT_USER_AGENT`]; add your service's
//!   name with [`Client::with_user_agent`]).
//! * [`Error`]: a documented error answer decodes to the operation's error enum
//!   (`bridge_contract::operations::{Operation}Error`, one variant per documented status, each holding that
//!   status's body type); an undocumented status or body is [`Error::UnexpectedResponse`] with the status,
//!   headers and raw body. Its text names the operation (`getBridge (GET /bridge/history/bridge/{bridgeId})
//!   failed: HTTP 404 BridgeNotFound: ...`).
//! * Pagers ([`pagers`]): the event feed and the deposit-address search as streams following `nextPageToken`,
//!   the history page by page.
//! * [`webhook`]: verifying deliveries ([`webhook::WebhookVerifier::verify`]) and signing them
//!   ([`webhook::WebhookSigner`], used by the sandbox), one implementation for both sides; an event of a kind
//!   this build does not know arrives as [`webhook::Event::Unknown`] instead of failing the delivery.
//!
//! ## How the client is generated
//!
//! `cargo xtask regen` runs progenitor 0.15 (`progenitor::Generator`, in `xtask/src/client.rs`) and commits its
//! output to `src/generated/client.rs` (the [`raw`] module); it also writes `src/generated/operations.rs`, the
//! typed methods of [`Client`] over progenitor's, from progenitor's own method signatures. Generation happens
//! in the workspace, **not in a build script or macro**, so services that depend on this crate never compile
//! progenitor, typify or syn: they compile `progenitor-client` (a small runtime), `reqwest` and the contract
//! types. `cargo xtask check` fails when the committed output is stale.
//!
//! Every schema of the document is mapped to the [`bridge_contract`] type of the same name with
//! `GenerationSettings::with_replacement`, so there is no second copy of any type (one exception by design:
//! the event feed's page is [`EventPage`], whose items are [`webhook::Event`]s).
//!
//! ## Quote, commit, wait
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use bridge_client::{BridgeRecordExt as _, Client, Credentials, RetryPolicy, Until};
//! use bridge_contract::{BridgeSwapQuoteRequest, QuoteMode};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new("http://127.0.0.1:8080", Credentials::bearer("<JWT>"))?
//!     .with_retry(RetryPolicy::default()) // the default: 4 attempts within 30 s
//!     .with_user_agent("payments/2.3")?;
//! // A single-token bridge is a bridge-swap quote with the same token on both sides (production's way).
//! let quote = client
//!     .quote_bridge_swap(&BridgeSwapQuoteRequest {
//!         chain_in: "ETHEREUM".into(),
//!         chain_out: "BASE".into(),
//!         amount: "100.5".parse()?,
//!         amount_native: None,
//!         mode: QuoteMode::Pay,
//!         is_sda: None,
//!         token_in: "USDC".into(),
//!         token_out: "USDC".into(),
//!         depositor: "0x1111111111111111111111111111111111111111".into(),
//!         recipient: "0x2222222222222222222222222222222222222222".into(),
//!         post_bridge_data: None,
//!         webhook_url: None,
//!         refund_address: None,
//!     })
//!     .await?;
//! // Members every quote variant has are read without a `match`.
//! println!("pay {} to receive {}", quote.pay_amount(), quote.receive_amount());
//!
//! // Committed once, even when the answer is lost on the way back.
//! let bridge_id = client.commit_quote(quote.quote_id()).await?.quote_id;
//! let done = client.wait_for_bridge(&bridge_id, Until::Final, Duration::from_secs(30 * 60)).await?;
//! println!("{bridge_id}: {}", done.state_tag());
//! # Ok(()) }
//! ```
//!
//! A documented error is matched by type, for example a quote over the deposit limit:
//!
//! ```no_run
//! # use bridge_client::{Client, Error};
//! # use bridge_contract::BridgeSwapQuoteRequest;
//! use bridge_contract::operations::QuoteBridgeSwapError;
//! use bridge_contract::QuoteBridgeSwapUnprocessable;
//!
//! # async fn run(client: Client, request: BridgeSwapQuoteRequest) {
//! match client.quote_bridge_swap(&request).await {
//!     Ok(quote) => println!("quote {}", quote.quote_id()),
//!     Err(Error::Api(QuoteBridgeSwapError::QuoteBridgeSwapUnprocessable(
//!         QuoteBridgeSwapUnprocessable::DepositLimitReached(limit),
//!     ))) => println!("at most {} {}", limit.max_deposit_amount, limit.token),
//!     Err(Error::Api(other)) => println!("refused: {other:?}"),
//!     Err(Error::UnexpectedResponse(answer)) => println!("HTTP {}: {}", answer.status, answer.body_text()),
//!     Err(e) => println!("{e}"),
//! }
//! # }
//! ```
//!
//! ## Replay the event feed
//!
//! ```no_run
//! use bridge_client::{Client, Credentials, Event};
//! use futures_util::TryStreamExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // The event feed also accepts the legacy API key.
//! let client = Client::new("http://127.0.0.1:8080", Credentials::api_key("<key>"))?;
//! let mut events = client.events_since(1_767_225_600_000); // 2026-01-01T00:00:00Z, inclusive
//! while let Some(event) = events.try_next().await? {
//!     match event {
//!         Event::Known(event) => println!("{}", event.tag()),
//!         Event::Unknown { tag, raw } => println!("newer kind {tag}: {raw}"),
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! [`Client::event_pages`] yields whole pages with their `next_page_token`, to store as a checkpoint and
//! resume from.
//!
//! ## Receive webhooks
//!
//! ```no_run
//! use bridge_client::webhook::{Event, WebhookVerifier, SIGNATURE_HEADER};
//!
//! # async fn run(body: &[u8], headers: &reqwest::header::HeaderMap) -> Result<(), Box<dyn std::error::Error>> {
//! // At start-up (the key needs no credentials; or `WebhookVerifier::from_pem` with a key you configured):
//! let client = bridge_client::Client::new("http://127.0.0.1:8080", bridge_client::Credentials::none())?;
//! let verifier: WebhookVerifier = client.webhook_verifier().await?;
//!
//! // For each POST: the raw body and the signature header.
//! let signature = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
//! let delivery = verifier.verify(body, signature)?; // Err: answer 4xx, the service retries
//! match delivery.event {
//!     Event::Known(event) => println!("{} {}", delivery.event_id, event.tag()),
//!     Event::Unknown { tag, .. } => println!("{} {tag} (a kind newer than this build)", delivery.event_id),
//! }
//! # Ok(()) }
//! ```
//!
//! See [`webhook`] for the algorithm, [`receiver`] for a receiver on axum that does all of this (and fetches the
//! key again when it rotates), and `examples/quickstart.rs` and `examples/webhook_receiver.rs` for programs that
//! run against the sandbox.
//!
//! ## Features
//!
//! No default features: the client speaks plain HTTP (enough for a local sandbox), or HTTPS through the
//! `reqwest::Client` you hand it with [`Client::with_reqwest`] (the usual choice in a service that already
//! configures reqwest).
//!
//! `axum` (opt-in): the [`receiver::Webhook`] extractor for axum 0.8, through `axum-core` 0.5 (axum's small core
//! crate, not axum itself). [`receiver::WebhookReceiver`] works without it, in any framework.
//!
//! `rustls` (opt-in): HTTPS with rustls and the `ring` provider, configured on this client's own
//! `reqwest::Client`; no process-wide provider is installed. It turns on reqwest's `rustls-no-provider`
//! feature for the whole build, so any *other* `reqwest::Client::new()` in the same binary then panics unless the
//! program installs a provider first (`rustls::crypto::ring::default_provider().install_default()`). That is
//! why it is not a default: a contract crate must not change how the rest of your build behaves.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod auth;
pub mod commit;
mod error;
pub mod pagers;
pub mod receiver;
pub mod retry;
mod transport;
pub mod wait;
pub mod webhook;

/// progenitor's generated client (`src/generated/client.rs`), which [`Client`] wraps: the same operations,
/// returning `progenitor_client::ResponseValue` and leaving error bodies raw. Build it through [`Client`]
/// ([`Client::raw`]): with the `rustls` feature its own `Client::new` has no TLS provider configured.
#[rustfmt::skip] // generated by `cargo xtask regen` (prettyplease), not rustfmt
#[path = "generated/client.rs"]
pub mod raw;

#[rustfmt::skip] // generated by `cargo xtask regen` (prettyplease), not rustfmt
#[path = "generated/operations.rs"]
mod operations;

use std::time::Duration;

pub use auth::{Credentials, TokenError, TokenFuture, TokenProvider, API_KEY_HEADER};
pub use error::{Error, OperationError, UnexpectedResponse};
pub use futures_core::Stream;
pub use pagers::EventPage;
pub use retry::RetryPolicy;
pub use transport::{Settings, DEFAULT_USER_AGENT};
pub use wait::{BridgeRecordExt, Until, WaitError, WaitPolicy};
pub use webhook::Event;

use bridge_contract::operations::GetWebhookPublicKeyError;

/// The request and connect timeout of [`Client::new`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// A client of the bridge service. Cheap to clone (the connection pool is shared).
#[derive(Clone, Debug)]
pub struct Client {
    raw: raw::Client,
}

/// Why a [`Client`] could not be built.
#[derive(Debug)]
pub struct BuildError(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot build the HTTP client: {}", self.0)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl Client {
    /// A client of the service at `base_url` (scheme, host, port and path prefix, such as
    /// `https://bridge.example.com` or `http://127.0.0.1:8080`), with [`DEFAULT_TIMEOUT`].
    pub fn new(base_url: &str, credentials: Credentials) -> Result<Self, BuildError> {
        let http = Self::reqwest_builder()?.build().map_err(|e| BuildError(Box::new(e)))?;
        Ok(Self::with_reqwest(base_url, http, credentials))
    }

    /// A `reqwest::ClientBuilder` set up as [`Client::new`] sets it up (TLS, timeouts), to adjust and pass to
    /// [`Client::with_reqwest`].
    pub fn reqwest_builder() -> Result<reqwest::ClientBuilder, BuildError> {
        let builder = reqwest::Client::builder().connect_timeout(DEFAULT_TIMEOUT).timeout(DEFAULT_TIMEOUT);
        #[cfg(feature = "rustls")]
        let builder = builder.tls_backend_preconfigured(tls_config()?);
        Ok(builder)
    }

    /// A client that sends its requests with `http`.
    pub fn with_reqwest(base_url: &str, http: reqwest::Client, credentials: Credentials) -> Self {
        Self { raw: raw::Client::new_with_client(base_url.trim_end_matches('/'), http, Settings::new(credentials)) }
    }

    /// This client with `policy` for retries ([`RetryPolicy::default`] unless set; [`RetryPolicy::none`] turns
    /// retries off).
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.raw.inner.retry = policy;
        self
    }

    /// This client with `policy` for [`Client::wait_for_bridge`] and [`Client::bridge_states`].
    pub fn with_wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.raw.inner.wait = policy;
        self
    }

    /// This client sending `User-Agent: <product> bridge-client/<version>`, `product` naming your service (for
    /// example `payments/2.3`). Fails when `product` cannot be a header value.
    pub fn with_user_agent(mut self, product: &str) -> Result<Self, BuildError> {
        let value = reqwest::header::HeaderValue::from_str(&format!("{} {DEFAULT_USER_AGENT}", product.trim()))
            .map_err(|e| BuildError(Box::new(e)))?;
        self.raw.inner.user_agent = value;
        Ok(self)
    }

    /// The settings applied to every request (credentials, retry and wait policies, user agent).
    pub fn settings(&self) -> &Settings {
        &self.raw.inner
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.raw.baseurl
    }

    /// progenitor's client underneath (same credentials and connection pool).
    pub fn raw(&self) -> &raw::Client {
        &self.raw
    }

    /// Fetches `GET /webhook/public-key` and makes the verifier of webhook deliveries from it. A 200 whose key
    /// cannot be read is an [`Error::UnexpectedResponse`] naming why.
    pub async fn webhook_verifier(&self) -> Result<webhook::WebhookVerifier, Error<GetWebhookPublicKeyError>> {
        let served = self.get_webhook_public_key().await?;
        webhook::WebhookVerifier::from_served_key(&served).map_err(|e| {
            Error::UnexpectedResponse(Box::new(UnexpectedResponse {
                status: reqwest::StatusCode::OK,
                headers: Default::default(),
                body: serde_json::to_vec(&served).unwrap_or_default().into(),
                decode_error: Some(e.to_string()),
            }))
        })
    }
}

#[cfg(feature = "rustls")]
fn tls_config() -> Result<rustls::ClientConfig, BuildError> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BuildError(Box::new(e)))?
        .with_platform_verifier()
        .map_err(|e| BuildError(Box::new(e)))?
        .with_no_client_auth();
    Ok(config)
}
