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
//!   failed: HTTP 422 InvalidRequest: ...`).
//! * Pagers ([`pagers`]): the event feed and the deposit-address search as streams following `nextPageToken`,
//!   the history page by page.
//! * [`webhook`]: verifying deliveries ([`webhook::WebhookVerifier::verify`]) and signing them
//!   ([`webhook::WebhookSigner`], used by the sandbox), one implementation for both sides (`bridge_contract`'s,
//!   feature `webhook-signing`, re-exported); an event of a kind this build does not know arrives as
//!   [`webhook::Event::Unknown`] instead of failing the delivery.
//!
//! ## How the client is generated
//!
//! `cargo xtask regen` runs progenitor 0.15 (`progenitor::Generator`, in `xtask/src/client.rs`) and commits its
//! output to `src/generated/client.rs` (the [`raw`] module); it also writes `src/generated/methods.rs`, the
//! typed methods of [`Client`] over progenitor's, from progenitor's own method signatures, and
//! `src/generated/operations.rs`, what the request hooks know of each operation. Generation happens
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

mod api_key;
mod auth;
mod client;
pub mod commit;
mod error;
mod event_page;
mod hooks;
pub mod pagers;
pub mod receiver;
pub mod retry;
mod transport;
pub mod wait;
mod wait_policy;
/// Webhook deliveries: verifying and signing them, one implementation for both sides (`bridge_contract`'s, with
/// its `webhook-signing` feature; these paths are the ones earlier versions had here).
#[doc(inline)]
pub use bridge_contract::webhook;

/// progenitor's generated client (`src/generated/client.rs`), which [`Client`] wraps: the same operations,
/// returning `progenitor_client::ResponseValue` and leaving error bodies raw. Build it through [`Client`]
/// ([`Client::raw`]): with the `rustls` feature its own `Client::new` has no TLS provider configured.
#[rustfmt::skip] // generated by `cargo xtask regen` (prettyplease), not rustfmt
#[path = "generated/client.rs"]
pub mod raw;

/// The typed methods of [`Client`], one per operation (generated).
#[rustfmt::skip] // generated by `cargo xtask regen` (prettyplease), not rustfmt
#[path = "generated/methods.rs"]
mod methods;

/// What the request hooks and errors know of each operation: its security, whether it is safe to retry, and the
/// operation of each error enum (generated).
#[rustfmt::skip] // generated by `cargo xtask regen` (prettyplease), not rustfmt
#[path = "generated/operations.rs"]
mod operations;

pub use api_key::{expiry as jwt_expiry, ApiKeyTokenProvider, RENEW_BEFORE_EXPIRY};
pub use auth::{Credentials, TokenError, TokenFuture, TokenProvider, API_KEY_HEADER};
pub use client::{BuildError, Client, DEFAULT_TIMEOUT};
pub use error::{Error, OperationError, UnexpectedResponse};
pub use event_page::EventPage;
pub use futures_core::Stream;
pub use retry::RetryPolicy;
pub use transport::{Settings, DEFAULT_USER_AGENT};
pub use wait::{BridgeRecordExt, Until, WaitError, WaitPolicy};
pub use webhook::Event;

// The package page (`README.md`, the manifest's `readme`) is compiled as a doctest too, so its example stays
// true; the crate's own docs are the text above.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
