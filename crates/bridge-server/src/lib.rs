//! # bridge-server
//!
//! The server side of the bridge service contract: implement [`BridgeApi`] (one async method per operation of
//! `schema/openapi.yaml`, generated) and [`router`] gives an axum router that authenticates, decodes every
//! request exactly as the reference framework does (every 400 is an `HttpApiDecodeError` with the framework's
//! issues), calls your method and encodes its answer. Compose it with tower layers (tracing, timeouts) like
//! any axum router.
//!
//! The sandbox helpers (the operations tagged `sandbox`: simulated deposits, the sandbox clock, webhook tests)
//! are a trait of their own, [`SandboxApi`], served by [`sandbox_router`]: an implementation of the production
//! operations implements [`BridgeApi`] only and serves no `/sandbox/*` path; a sandbox merges both routers.
//!
//! ```no_run
//! use bridge_contract::operations::*;
//! use bridge_contract::*;
//! use bridge_server::{router, BridgeApi, Caller, JwtAuthenticator, ServerConfig};
//!
//! struct MyService;
//!
//! impl BridgeApi for MyService {
//!     async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
//!         Ok("LS0tLS1CRUdJTi...".to_owned())
//!     }
//!     async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
//!         Err(QuoteNotFound { tag: Default::default(), message: format!("no quote {}", path.quote_id) }.into())
//!     }
//!     // ... one method per operation; a missing one is a compile error.
//! #   async fn quote_bridge(&self, _: Caller, _: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> { todo!() }
//! #   async fn quote_bridge_swap(&self, _: Caller, _: BridgeSwapQuoteRequest) -> Result<QuoteResponse, QuoteBridgeSwapError> { todo!() }
//! #   async fn list_bridge_history(&self, _: Caller, _: ListBridgeHistoryQuery) -> Result<HistoryPage, ListBridgeHistoryError> { todo!() }
//! #   async fn get_bridge(&self, _: Caller, _: GetBridgePath) -> Result<bridge_server::Answer<BridgeRecord>, GetBridgeError> { todo!() }
//! #   async fn create_deposit_addresses(&self, _: Caller, _: DepositAddressCreateRequest) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> { todo!() }
//! #   async fn search_deposit_addresses(&self, _: Caller, _: SearchDepositAddressesQuery) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> { todo!() }
//! #   async fn get_deposit_address_public_status(&self, _: Caller, _: GetDepositAddressPublicStatusPath, _: GetDepositAddressPublicStatusQuery) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> { todo!() }
//! #   async fn list_user_events(&self, _: Caller, _: ListUserEventsQuery) -> Result<bridge_server::Answer<UserEventsPage>, ListUserEventsError> { todo!() }
//! #   async fn cancel_bridge(&self, _: Caller, _: CancelBridgePath, _: CancelBridgeRequest) -> Result<BridgeRecord, CancelBridgeError> { todo!() }
//! #   async fn list_bridge_history_cursor(&self, _: Caller, _: ListBridgeHistoryCursorQuery) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> { todo!() }
//! #   async fn get_bridges_by_deposit_hash(&self, _: Caller, _: GetBridgesByDepositHashPath) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> { todo!() }
//! #   async fn get_bridge_by_withdraw_hash(&self, _: Caller, _: GetBridgeByWithdrawHashPath) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> { todo!() }
//! #   async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> { todo!() }
//! #   async fn get_bridge_token_config(&self, _: GetBridgeTokenConfigPath) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> { todo!() }
//! #   async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> { todo!() }
//! #   async fn get_deposit_address_rate_limit_status(&self, _: Caller) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> { todo!() }
//! #   async fn get_deposit_address_status(&self, _: Caller, _: GetDepositAddressStatusPath) -> Result<DepositAddressStatus, GetDepositAddressStatusError> { todo!() }
//! #   async fn get_deposit_address_history(&self, _: Caller, _: GetDepositAddressHistoryPath, _: GetDepositAddressHistoryQuery) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> { todo!() }
//! #   async fn get_deposit_address_completed_refunds(&self, _: Caller, _: GetDepositAddressCompletedRefundsPath) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> { todo!() }
//! #   async fn get_deposit_address_supported_tokens(&self, _: GetDepositAddressSupportedTokensPath, _: GetDepositAddressSupportedTokensQuery) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> { todo!() }
//! #   async fn exchange_api_key(&self, _: ApiKeyExchangeRequest) -> Result<ApiKeyExchange, ExchangeApiKeyError> { todo!() }
//! }
//!
//! # async fn serve() -> std::io::Result<()> {
//! let auth = JwtAuthenticator::new().with_hs256(b"a secret of at least 32 bytes, please!!");
//! let app = router(MyService, auth, ServerConfig::default())
//!     .layer(tower_http::trace::TraceLayer::new_for_http());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! An operation the schema marks `x-encoded-answer` (the event feed, a bridge record) answers [`Answer<T>`](Answer): the value
//! (`Ok(page.into())`), or JSON the implementation already holds, served as it is (`Encoded<T>`, e.g. a page
//! put together from stored events by the answer type's generated `encode_with`, which copies their text).
//!
//! A sandbox also implements [`SandboxApi`] and merges its routes in (both routers authenticate alike):
//!
//! ```no_run
//! # use bridge_contract::operations::*;
//! # use bridge_contract::*;
//! # use bridge_server::{router, sandbox_router, BridgeApi, Caller, JwtAuthenticator, SandboxApi, ServerConfig};
//! # #[derive(Clone)] struct MySandbox;
//! # impl BridgeApi for MySandbox {
//! #   async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> { todo!() }
//! #   async fn commit_quote(&self, _: Caller, _: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> { todo!() }
//! #   async fn quote_bridge(&self, _: Caller, _: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> { todo!() }
//! #   async fn quote_bridge_swap(&self, _: Caller, _: BridgeSwapQuoteRequest) -> Result<QuoteResponse, QuoteBridgeSwapError> { todo!() }
//! #   async fn list_bridge_history(&self, _: Caller, _: ListBridgeHistoryQuery) -> Result<HistoryPage, ListBridgeHistoryError> { todo!() }
//! #   async fn get_bridge(&self, _: Caller, _: GetBridgePath) -> Result<bridge_server::Answer<BridgeRecord>, GetBridgeError> { todo!() }
//! #   async fn create_deposit_addresses(&self, _: Caller, _: DepositAddressCreateRequest) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> { todo!() }
//! #   async fn search_deposit_addresses(&self, _: Caller, _: SearchDepositAddressesQuery) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> { todo!() }
//! #   async fn get_deposit_address_public_status(&self, _: Caller, _: GetDepositAddressPublicStatusPath, _: GetDepositAddressPublicStatusQuery) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> { todo!() }
//! #   async fn list_user_events(&self, _: Caller, _: ListUserEventsQuery) -> Result<bridge_server::Answer<UserEventsPage>, ListUserEventsError> { todo!() }
//! #   async fn cancel_bridge(&self, _: Caller, _: CancelBridgePath, _: CancelBridgeRequest) -> Result<BridgeRecord, CancelBridgeError> { todo!() }
//! #   async fn list_bridge_history_cursor(&self, _: Caller, _: ListBridgeHistoryCursorQuery) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> { todo!() }
//! #   async fn get_bridges_by_deposit_hash(&self, _: Caller, _: GetBridgesByDepositHashPath) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> { todo!() }
//! #   async fn get_bridge_by_withdraw_hash(&self, _: Caller, _: GetBridgeByWithdrawHashPath) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> { todo!() }
//! #   async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> { todo!() }
//! #   async fn get_bridge_token_config(&self, _: GetBridgeTokenConfigPath) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> { todo!() }
//! #   async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> { todo!() }
//! #   async fn get_deposit_address_rate_limit_status(&self, _: Caller) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> { todo!() }
//! #   async fn get_deposit_address_status(&self, _: Caller, _: GetDepositAddressStatusPath) -> Result<DepositAddressStatus, GetDepositAddressStatusError> { todo!() }
//! #   async fn get_deposit_address_history(&self, _: Caller, _: GetDepositAddressHistoryPath, _: GetDepositAddressHistoryQuery) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> { todo!() }
//! #   async fn get_deposit_address_completed_refunds(&self, _: Caller, _: GetDepositAddressCompletedRefundsPath) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> { todo!() }
//! #   async fn get_deposit_address_supported_tokens(&self, _: GetDepositAddressSupportedTokensPath, _: GetDepositAddressSupportedTokensQuery) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> { todo!() }
//! #   async fn exchange_api_key(&self, _: ApiKeyExchangeRequest) -> Result<ApiKeyExchange, ExchangeApiKeyError> { todo!() }
//! # }
//! impl SandboxApi for MySandbox {
//!     async fn sandbox_advance_clock(&self, _: Caller, body: SandboxAdvanceClockRequest) -> Result<SandboxClock, SandboxAdvanceClockError> {
//!         Err(InvalidRequest::new(format!("this sandbox has no clock to move by {} ms", body.ms)).into())
//!     }
//!     // ... one method per operation tagged `sandbox`.
//! #   async fn sandbox_deposit_bridge(&self, _: Caller, _: SandboxDepositBridgePath, _: SandboxBridgeDepositRequest) -> Result<BridgeRecord, SandboxDepositBridgeError> { todo!() }
//! #   async fn sandbox_deposit_into_address(&self, _: Caller, _: SandboxDepositIntoAddressPath, _: SandboxAddressDepositRequest) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> { todo!() }
//! #   async fn sandbox_create_routing_deposit_address(&self, _: Caller, _: SandboxRoutingDepositAddressRequest) -> Result<RoutingDepositAddress, SandboxCreateRoutingDepositAddressError> { todo!() }
//! #   async fn sandbox_send_webhook_test(&self, _: Caller, _: SandboxWebhookTestRequest) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> { todo!() }
//! #   async fn sandbox_list_webhook_deliveries(&self, _: Caller, _: SandboxListWebhookDeliveriesQuery) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> { todo!() }
//! #   async fn sandbox_get_clock(&self, _: Caller) -> Result<SandboxClock, SandboxGetClockError> { todo!() }
//! #   async fn sandbox_reset_project(&self, _: Caller) -> Result<SandboxReset, SandboxResetProjectError> { todo!() }
//! #   async fn sandbox_resend_webhook_delivery(&self, _: Caller, _: SandboxResendWebhookDeliveryPath) -> Result<SandboxWebhookResend, SandboxResendWebhookDeliveryError> { todo!() }
//! #   async fn sandbox_recover_webhook_deliveries(&self, _: Caller, _: SandboxWebhookRecoverRequest) -> Result<SandboxWebhookRecover, SandboxRecoverWebhookDeliveriesError> { todo!() }
//! #   async fn sandbox_get_faults(&self, _: Caller) -> Result<<SandboxGetFaults as bridge_contract::Operation>::Response, SandboxGetFaultsError> { todo!() }
//! #   async fn sandbox_set_faults(&self, _: Caller, _: SandboxFaultProfile) -> Result<<SandboxSetFaults as bridge_contract::Operation>::Response, SandboxSetFaultsError> { todo!() }
//! #   async fn sandbox_clear_faults(&self, _: Caller) -> Result<<SandboxClearFaults as bridge_contract::Operation>::Response, SandboxClearFaultsError> { todo!() }
//! #   async fn sandbox_check_webhook_receiver(&self, _: Caller, _: SandboxReceiverCheckRequest) -> Result<<SandboxCheckWebhookReceiver as bridge_contract::Operation>::Response, SandboxCheckWebhookReceiverError> { todo!() }
//! }
//!
//! let auth = JwtAuthenticator::new().with_hs256(b"a secret of at least 32 bytes, please!!");
//! let app = router(MySandbox, auth.clone(), ServerConfig::default())
//!     .merge(sandbox_router(MySandbox, auth, ServerConfig::default()));
//! ```
//!
//! What the decoder matches, and where it deliberately differs from the reference framework, is
//! docs/decode-errors.md in the repository; [`decode::engine`] is its executable form.

pub mod admission;
pub mod auth;
pub mod body;
pub mod credential;
pub mod decode;
mod respond;
// The generated files (`cargo xtask regen`, formatted by prettyplease, not rustfmt) are modules of their own: the
// route tables (`api`) use `serve`, which uses the decoder tables (`shapes`).
#[rustfmt::skip]
#[path = "generated/api.rs"]
mod api;
/// The decoder tables of every operation (generated), for tools that build requests from the schema.
#[rustfmt::skip]
#[path = "generated/shapes.rs"]
pub mod shapes;
pub mod serve;

pub use admission::{Admission, Decision, Throttled, Verdict};
pub use api::{BridgeApi, SandboxApi};
pub use auth::{AuthFailure, Authenticator, Caller, Claims, JwtAuthenticator};
pub use body::UnauthenticatedBody;
pub use decode::ErrorsMode;
pub use serve::{Answer, ErrorTag, OperationId, ServerConfig};

// The package page (`README.md`, the manifest's `readme`) is compiled and run as a doctest too, so its examples
// stay true; the crate's own docs are the text above.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// An axum router serving every operation of the document over `api`. Unknown paths and wrong methods answer
/// 404 with an empty body; a method that panics answers 503 `ServiceUnavailable` (the panic is logged as an
/// error), so no request ever gets an undocumented 500.
pub fn router<A: BridgeApi>(api: A, auth: impl Authenticator, config: ServerConfig) -> axum::Router {
    api::routes::<A>()
        .fallback(serve::not_found)
        .method_not_allowed_fallback(serve::not_found)
        .with_state(serve::AppState::new(api, auth, config))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(serve::panicked))
}

/// An axum router serving the sandbox helpers (the operations tagged `sandbox`) over `api`, to merge into
/// [`router`]'s: `router(service, auth.clone(), config.clone()).merge(sandbox_router(sandbox, auth, config))`. It
/// has no fallback of its own (the merged router answers unknown paths 404); a wrong method on one of its paths is
/// 404 with an empty body and a method that panics answers 503 `ServiceUnavailable`, as in [`router`].
pub fn sandbox_router<S: SandboxApi>(api: S, auth: impl Authenticator, config: ServerConfig) -> axum::Router {
    api::sandbox_routes::<S>()
        .method_not_allowed_fallback(serve::not_found)
        .with_state(serve::AppState::new(api, auth, config))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(serve::panicked))
}
