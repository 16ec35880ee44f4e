//! Test support: a `BridgeApi` and `SandboxApi` that records the decoded input of every call and answers with a documented
//! error (or a minimal success where the operation documents none), plus helpers to send requests through
//! the router in process.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::{router, sandbox_router, BridgeApi, Caller, Claims, JwtAuthenticator, SandboxApi, ServerConfig};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde::Serialize;
use serde_json::{json, Value};
use tower::ServiceExt;

pub const SECRET: &[u8] = b"test secret test secret test secret!!";

/// What a handler received: operation id, caller project, and the typed inputs as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub operation: &'static str,
    pub project: String,
    pub input: Value,
}

#[derive(Clone, Default)]
pub struct Recorder {
    pub calls: Arc<Mutex<Vec<Call>>>,
    /// Every method panics after recording its call (to test the router's answer to a panicking handler).
    pub panics: bool,
}

impl Recorder {
    fn record(&self, operation: &'static str, caller: &Caller, input: impl Serialize) {
        let input = serde_json::to_value(input).expect("inputs encode");
        self.calls.lock().unwrap().push(Call { operation, project: caller.project_id.clone(), input });
        if self.panics {
            panic!("the recorder was told to panic in {operation}");
        }
    }

    pub fn last(&self) -> Option<Call> {
        self.calls.lock().unwrap().last().cloned()
    }
}

fn invalid(op: &str) -> InvalidRequest {
    InvalidRequest { tag: Default::default(), message: format!("recorded {op}") }
}

impl BridgeApi for Recorder {
    async fn quote_bridge(&self, caller: Caller, body: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> {
        self.record(QuoteBridge::ID, &caller, &body);
        Err(QuoteBridgeUnprocessable::from(invalid(QuoteBridge::ID)).into())
    }
    async fn quote_bridge_swap(
        &self,
        caller: Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        self.record(QuoteBridgeSwap::ID, &caller, &body);
        Err(QuoteBridgeSwapUnprocessable::from(invalid(QuoteBridgeSwap::ID)).into())
    }
    async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
        self.record(CommitQuote::ID, &caller, &path);
        Err(invalid(CommitQuote::ID).into())
    }
    async fn list_bridge_history(
        &self,
        caller: Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        self.record(ListBridgeHistory::ID, &caller, &query);
        Err(invalid(ListBridgeHistory::ID).into())
    }
    async fn get_bridge(
        &self,
        caller: Caller,
        path: GetBridgePath,
    ) -> Result<bridge_server::Answer<BridgeRecord>, GetBridgeError> {
        self.record(GetBridge::ID, &caller, &path);
        Err(invalid(GetBridge::ID).into())
    }
    async fn create_deposit_addresses(
        &self,
        caller: Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        self.record(CreateDepositAddresses::ID, &caller, &body);
        Ok(vec![DepositAddress {
            deposit_chain: body.deposit_chains[0].clone(),
            deposit_address: "0xdeposit".into(),
            destination_chain: body.destination_chain.clone(),
            supported_tokens: vec![],
            is_active: true,
            destination_address: Some(body.destination_address.clone()),
            address_note: None,
            post_bridge_data: None,
            token_out: None,
            refund_address: None,
            bridge_if_not_swappable: None,
            chain_metadata: Some(ChainMetadata::Stellar(StellarChainMetadata {
                tag: Default::default(),
                base_address: "GBASE".into(),
                memo_id: "1".into(),
            })),
        }])
    }
    async fn search_deposit_addresses(
        &self,
        caller: Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        self.record(SearchDepositAddresses::ID, &caller, &query);
        Err(invalid(SearchDepositAddresses::ID).into())
    }
    async fn get_deposit_address_public_status(
        &self,
        caller: Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        self.record(GetDepositAddressPublicStatus::ID, &caller, json!({"path": path, "query": query}));
        Err(PublicStatusUnprocessable::from(invalid(GetDepositAddressPublicStatus::ID)).into())
    }
    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        self.record(GetWebhookPublicKey::ID, &Caller::default(), ());
        Ok("public-key".into())
    }
    async fn list_user_events(
        &self,
        caller: Caller,
        query: ListUserEventsQuery,
    ) -> Result<bridge_server::Answer<UserEventsPage>, ListUserEventsError> {
        self.record(ListUserEvents::ID, &caller, &query);
        Ok(UserEventsPage { items: vec![], next_page_token: None }.into())
    }
    async fn cancel_bridge(
        &self,
        caller: Caller,
        path: CancelBridgePath,
        body: CancelBridgeRequest,
    ) -> Result<BridgeRecord, CancelBridgeError> {
        self.record(CancelBridge::ID, &caller, json!({"path": path, "body": body}));
        Err(BridgeNotFound::new(format!("recorded {}", CancelBridge::ID)).into())
    }
    async fn list_bridge_history_cursor(
        &self,
        caller: Caller,
        query: ListBridgeHistoryCursorQuery,
    ) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> {
        self.record(ListBridgeHistoryCursor::ID, &caller, &query);
        Err(invalid(ListBridgeHistoryCursor::ID).into())
    }
    async fn get_bridges_by_deposit_hash(
        &self,
        caller: Caller,
        path: GetBridgesByDepositHashPath,
    ) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> {
        self.record(GetBridgesByDepositHash::ID, &caller, &path);
        Err(HistoryNotFound::new(path.deposit_tx_hash).into())
    }
    async fn get_bridge_by_withdraw_hash(
        &self,
        caller: Caller,
        path: GetBridgeByWithdrawHashPath,
    ) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> {
        self.record(GetBridgeByWithdrawHash::ID, &caller, &path);
        Err(invalid(GetBridgeByWithdrawHash::ID).into())
    }
    async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> {
        self.record(GetBridgeConfigs::ID, &Caller::default(), ());
        Ok(BridgeConfigs::new())
    }
    async fn get_bridge_token_config(
        &self,
        path: GetBridgeTokenConfigPath,
    ) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> {
        self.record(GetBridgeTokenConfig::ID, &Caller::default(), &path);
        Err(InvalidToken::new(format!("recorded {}", GetBridgeTokenConfig::ID)).into())
    }
    async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> {
        self.record(GetBridgeSwapTokenConfigs::ID, &Caller::default(), ());
        Ok(SwapTokenConfigs::new())
    }
    async fn get_deposit_address_rate_limit_status(
        &self,
        caller: Caller,
    ) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> {
        self.record(GetDepositAddressRateLimitStatus::ID, &caller, ());
        Ok(DepositAddressRateLimitStatus {
            total_limit: Unlimited::new().into(),
            total_created: 0,
            window_limit: Unlimited::new().into(),
            window_created: None,
        })
    }
    async fn get_deposit_address_status(
        &self,
        caller: Caller,
        path: GetDepositAddressStatusPath,
    ) -> Result<DepositAddressStatus, GetDepositAddressStatusError> {
        self.record(GetDepositAddressStatus::ID, &caller, &path);
        Err(PublicStatusUnprocessable::from(invalid(GetDepositAddressStatus::ID)).into())
    }
    async fn get_deposit_address_history(
        &self,
        caller: Caller,
        path: GetDepositAddressHistoryPath,
        query: GetDepositAddressHistoryQuery,
    ) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> {
        self.record(GetDepositAddressHistory::ID, &caller, json!({"path": path, "query": query}));
        Err(DepositAddressHistoryUnprocessable::from(invalid(GetDepositAddressHistory::ID)).into())
    }
    async fn get_deposit_address_completed_refunds(
        &self,
        caller: Caller,
        path: GetDepositAddressCompletedRefundsPath,
    ) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> {
        self.record(GetDepositAddressCompletedRefunds::ID, &caller, &path);
        Err(PublicStatusUnprocessable::from(invalid(GetDepositAddressCompletedRefunds::ID)).into())
    }
    async fn get_deposit_address_supported_tokens(
        &self,
        path: GetDepositAddressSupportedTokensPath,
        query: GetDepositAddressSupportedTokensQuery,
    ) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> {
        self.record(GetDepositAddressSupportedTokens::ID, &Caller::default(), json!({"path": path, "query": query}));
        Err(DepositAddressChainsNotSupported::new(vec![path.deposit_chain]).into())
    }
    async fn exchange_api_key(&self, body: ApiKeyExchangeRequest) -> Result<ApiKeyExchange, ExchangeApiKeyError> {
        self.record(ExchangeApiKey::ID, &Caller::default(), &body);
        Err(Unauthorized::new(format!("recorded {}", ExchangeApiKey::ID)).into())
    }
}

impl SandboxApi for Recorder {
    async fn sandbox_deposit_bridge(
        &self,
        caller: Caller,
        path: SandboxDepositBridgePath,
        body: SandboxBridgeDepositRequest,
    ) -> Result<BridgeRecord, SandboxDepositBridgeError> {
        self.record(SandboxDepositBridge::ID, &caller, json!({"path": path, "body": body}));
        Err(invalid(SandboxDepositBridge::ID).into())
    }
    async fn sandbox_deposit_into_address(
        &self,
        caller: Caller,
        path: SandboxDepositIntoAddressPath,
        body: SandboxAddressDepositRequest,
    ) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
        self.record(SandboxDepositIntoAddress::ID, &caller, json!({"path": path, "body": body}));
        Err(PublicStatusUnprocessable::from(invalid(SandboxDepositIntoAddress::ID)).into())
    }
    async fn sandbox_advance_clock(
        &self,
        caller: Caller,
        body: SandboxAdvanceClockRequest,
    ) -> Result<SandboxClock, SandboxAdvanceClockError> {
        self.record(SandboxAdvanceClock::ID, &caller, &body);
        Err(invalid(SandboxAdvanceClock::ID).into())
    }
    async fn sandbox_create_routing_deposit_address(
        &self,
        caller: Caller,
        body: SandboxRoutingDepositAddressRequest,
    ) -> Result<RoutingDepositAddress, SandboxCreateRoutingDepositAddressError> {
        self.record(SandboxCreateRoutingDepositAddress::ID, &caller, &body);
        Err(invalid(SandboxCreateRoutingDepositAddress::ID).into())
    }
    async fn sandbox_send_webhook_test(
        &self,
        caller: Caller,
        body: SandboxWebhookTestRequest,
    ) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> {
        self.record(SandboxSendWebhookTest::ID, &caller, &body);
        Err(invalid(SandboxSendWebhookTest::ID).into())
    }
    async fn sandbox_list_webhook_deliveries(
        &self,
        caller: Caller,
        query: SandboxListWebhookDeliveriesQuery,
    ) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> {
        self.record(SandboxListWebhookDeliveries::ID, &caller, &query);
        Ok(SandboxWebhookDeliveries { items: vec![] })
    }
    async fn sandbox_resend_webhook_delivery(
        &self,
        caller: Caller,
        path: SandboxResendWebhookDeliveryPath,
    ) -> Result<SandboxWebhookResend, SandboxResendWebhookDeliveryError> {
        self.record(SandboxResendWebhookDelivery::ID, &caller, &path);
        Err(WebhookDeliveryNotFound::new(path.event_id).into())
    }
    async fn sandbox_recover_webhook_deliveries(
        &self,
        caller: Caller,
        body: SandboxWebhookRecoverRequest,
    ) -> Result<SandboxWebhookRecover, SandboxRecoverWebhookDeliveriesError> {
        self.record(SandboxRecoverWebhookDeliveries::ID, &caller, &body);
        Ok(SandboxWebhookRecover { deliveries: 0 })
    }
    async fn sandbox_check_webhook_receiver(
        &self,
        caller: Caller,
        body: SandboxReceiverCheckRequest,
    ) -> Result<ReceiverCheckReport, SandboxCheckWebhookReceiverError> {
        self.record(SandboxCheckWebhookReceiver::ID, &caller, &body);
        Err(invalid(SandboxCheckWebhookReceiver::ID).into())
    }
    async fn sandbox_get_clock(&self, caller: Caller) -> Result<SandboxClock, SandboxGetClockError> {
        self.record(SandboxGetClock::ID, &caller, json!(null));
        Err(ServiceUnavailable::new(SandboxGetClock::ID).into())
    }
    async fn sandbox_reset_project(&self, caller: Caller) -> Result<SandboxReset, SandboxResetProjectError> {
        self.record(SandboxResetProject::ID, &caller, json!(null));
        Err(ServiceUnavailable::new(SandboxResetProject::ID).into())
    }
    async fn sandbox_get_faults(&self, caller: Caller) -> Result<SandboxFaults, SandboxGetFaultsError> {
        self.record(SandboxGetFaults::ID, &caller, json!(null));
        Err(ServiceUnavailable::new(SandboxGetFaults::ID).into())
    }
    async fn sandbox_set_faults(
        &self,
        caller: Caller,
        body: SandboxFaultProfile,
    ) -> Result<SandboxFaults, SandboxSetFaultsError> {
        self.record(SandboxSetFaults::ID, &caller, &body);
        Err(invalid(SandboxSetFaults::ID).into())
    }
    async fn sandbox_clear_faults(&self, caller: Caller) -> Result<SandboxFaults, SandboxClearFaultsError> {
        self.record(SandboxClearFaults::ID, &caller, json!(null));
        Err(ServiceUnavailable::new(SandboxClearFaults::ID).into())
    }
}

/// A router over a fresh recorder, accepting HS256 tokens signed with [`SECRET`] and the API key `legacy-key`.
pub fn app(config: ServerConfig) -> (axum::Router, Recorder) {
    app_over(Recorder::default(), config)
}

/// A router over `recorder`, authenticated like [`app`].
pub fn app_over(recorder: Recorder, config: ServerConfig) -> (axum::Router, Recorder) {
    let auth = JwtAuthenticator::new().with_hs256(SECRET).with_api_key("legacy-key", Caller::new("project-legacy"));
    let app =
        router(recorder.clone(), auth.clone(), config.clone()).merge(sandbox_router(recorder.clone(), auth, config));
    (app, recorder)
}

/// A router over `recorder` serving only the production operations ([`BridgeApi`]), as a production service does.
pub fn production_app(recorder: Recorder, config: ServerConfig) -> axum::Router {
    let auth = JwtAuthenticator::new().with_hs256(SECRET);
    router(recorder, auth, config)
}

/// A valid HS256 token for `project`.
pub fn token(project: &str) -> String {
    let claims = Claims { sub: project.into(), exp: now() + 3600, iat: Some(now()), features: vec![] };
    bridge_server::auth::sign_token(&claims, Algorithm::HS256, &EncodingKey::from_secret(SECRET)).unwrap()
}

pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// An answer: status, and the body as JSON (or as a string when it is not JSON; `null` when empty).
#[derive(Debug, Serialize, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

pub struct Send<'a> {
    pub method: &'a str,
    pub uri: &'a str,
    pub content_type: Option<&'a str>,
    pub body: Vec<u8>,
    pub headers: Vec<(&'a str, String)>,
}

impl<'a> Send<'a> {
    /// An authenticated request (bearer token of `project-a`) with a JSON body.
    pub fn json(method: &'a str, uri: &'a str, body: &str) -> Self {
        Self {
            method,
            uri,
            content_type: Some("application/json"),
            body: body.as_bytes().to_vec(),
            headers: vec![("authorization", format!("Bearer {}", token("project-a")))],
        }
    }

    pub fn get(uri: &'a str) -> Self {
        Self {
            method: "GET",
            uri,
            content_type: None,
            body: vec![],
            headers: vec![("authorization", format!("Bearer {}", token("project-a")))],
        }
    }

    pub fn content_type(mut self, ct: Option<&'a str>) -> Self {
        self.content_type = ct;
        self
    }

    pub fn without_auth(mut self) -> Self {
        self.headers.retain(|(k, _)| *k != "authorization");
        self
    }

    pub fn header(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.retain(|(k, _)| *k != name);
        self.headers.push((name, value.into()));
        self
    }

    pub async fn to(self, app: &axum::Router) -> Answer {
        let mut request = Request::builder().method(self.method).uri(self.uri);
        if let Some(ct) = self.content_type {
            request = request.header("content-type", ct);
        }
        for (k, v) in &self.headers {
            request = request.header(*k, v.as_str());
        }
        let response = app.clone().oneshot(request.body(Body::from(self.body)).unwrap()).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "never a 500: {body}");
        Answer { status: status.as_u16(), body }
    }
}

/// A valid quote/user body, as JSON text.
pub fn quote_body() -> Value {
    json!({"token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100.5", "mode": "pay",
           "depositor": "0xabc", "recipient": "0xdef"})
}

pub fn with(mut base: Value, key: &str, value: Value) -> String {
    base[key] = value;
    base.to_string()
}
