//! The runner can fail: it is run against deliberately broken deployments (the sandbox behind a middleware that
//! rewrites answers, or a `BridgeApi` wrapper around `bridge_sandbox::Sandbox` that misbehaves) and each break
//! must be caught by the check named for it, while unrelated checks still pass (also an authenticator that forgets
//! revocations).

use std::collections::BTreeSet;
use std::sync::Mutex;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use bridge_conformance::runner::spawn::MAIN_PROJECT;
use bridge_conformance::{run, Report, SpawnedSandbox};
use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_sandbox::Sandbox;
use bridge_server::{Answer, AuthFailure, Authenticator, BridgeApi, Caller, ErrorsMode, ServerConfig};
use serde_json::{json, Value};

async fn run_only(sandbox: &SpawnedSandbox, only: &[&str]) -> Report {
    let mut config = sandbox.run_config();
    config.only = only.iter().map(|s| s.to_string()).collect();
    // Generous for a loaded CI machine: a delivery that arrives ends the wait at once.
    config.webhook_wait = std::time::Duration::from_secs(20);
    let mut out = Vec::new();
    let report = run(&config, &mut out).await.expect("the run starts");
    println!("{}", String::from_utf8_lossy(&out));
    report
}

#[track_caller]
fn caught(report: &Report, name: &str, reason_contains: &str) {
    let result = report.get(name).unwrap_or_else(|| panic!("no check {name} ran"));
    let reason = result.failure.as_deref().unwrap_or_else(|| panic!("{name} passed against a broken deployment"));
    assert!(reason.contains(reason_contains), "{name} failed, but not for the break: {reason}");
}

#[track_caller]
fn passed(report: &Report, name: &str) {
    let result = report.get(name).unwrap_or_else(|| panic!("no check {name} ran"));
    assert!(result.passed(), "{} (a false positive)", result.line());
}

/// Rewrites the JSON body of matching answers.
async fn rewrite(response: Response, edit: impl FnOnce(&mut Value)) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let mut value: Value = serde_json::from_slice(&bytes).unwrap();
    edit(&mut value);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(serde_json::to_vec(&value).unwrap()))
}

/// `payAmount` of bridge quotes as a JSON number instead of a decimal string.
async fn pay_amount_as_number(request: Request, next: Next) -> Response {
    let quote = request.uri().path() == "/bridge/quote/user";
    let response = next.run(request).await;
    if !quote || response.status() != 200 {
        return response;
    }
    rewrite(response, |v| {
        let n: f64 = v["payAmount"].as_str().unwrap().parse().unwrap();
        v["payAmount"] = json!(n);
    })
    .await
}

#[tokio::test]
async fn a_wrong_field_type_is_caught() {
    let sandbox = SpawnedSandbox::start_with(|opened| {
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn(pay_amount_as_number))
    })
    .await
    .unwrap();
    let report = run_only(
        &sandbox,
        &["schema::quoteBridge", "schema::getWebhookPublicKey", "behaviour::quote-pay-mode-adds-up"],
    )
    .await;
    caught(&report, "schema::quoteBridge", "/payAmount");
    caught(&report, "behaviour::quote-pay-mode-adds-up", "/payAmount");
    passed(&report, "schema::getWebhookPublicKey");
    sandbox.stop().await.unwrap();
}

/// Drops the last issue of every decode error.
async fn drop_an_issue(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != 400 {
        return response;
    }
    rewrite(response, |v| {
        if v["_tag"] == "HttpApiDecodeError" {
            v["issues"].as_array_mut().unwrap().pop();
        }
    })
    .await
}

#[tokio::test]
async fn a_missing_issue_is_caught() {
    let sandbox = SpawnedSandbox::start_with(|opened| {
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn(drop_an_issue))
    })
    .await
    .unwrap();
    let report = run_only(
        &sandbox,
        &["decode::quoteBridge::body.mode", "decode::listUserEvents::query.pageSize", "auth::quoteBridge"],
    )
    .await;
    caught(&report, "decode::quoteBridge::body.mode::not-a-literal", "expected issues");
    caught(&report, "decode::quoteBridge::body.mode::missing", "expected issues");
    caught(&report, "decode::listUserEvents::query.pageSize::above-maximum", "expected issues");
    // Authentication errors carry no issues: untouched, still conformant.
    passed(&report, "auth::quoteBridge::malformed-token");
    assert!(
        report.results.iter().filter(|r| r.name.starts_with("decode::")).all(|r| !r.passed()),
        "every decode check sees the dropped issue"
    );
    sandbox.stop().await.unwrap();
}

/// What a [`Broken`] service gets wrong.
#[derive(Clone, Copy, PartialEq)]
enum Break {
    /// `getBridge` falls back to other projects' bridges.
    LeakBridges,
    /// The event feed skips the first item of every page after the first.
    SkipFeedItem,
    /// The served webhook public key is not the one that signs deliveries.
    WrongPublicKey,
}

/// `bridge_sandbox::Sandbox` with one break; everything else delegates.
struct Broken {
    inner: Sandbox,
    fault: Break,
    projects: Mutex<BTreeSet<String>>,
    wrong_key: String,
}

impl Broken {
    fn new(inner: Sandbox, fault: Break) -> Self {
        let wrong_key = match fault {
            Break::WrongPublicKey => {
                bridge_client::webhook::WebhookSigner::generate_with_bits(1024).unwrap().served_public_key()
            }
            _ => String::new(),
        };
        Self { inner, fault, projects: Mutex::new(BTreeSet::new()), wrong_key }
    }

    fn seen(&self, caller: &Caller) -> Caller {
        self.projects.lock().unwrap().insert(caller.project_id.clone());
        caller.clone()
    }
}

impl BridgeApi for Broken {
    async fn quote_bridge(&self, caller: Caller, body: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> {
        self.inner.quote_bridge(self.seen(&caller), body).await
    }
    async fn quote_bridge_swap(
        &self,
        caller: Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        self.inner.quote_bridge_swap(self.seen(&caller), body).await
    }
    async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
        self.inner.commit_quote(self.seen(&caller), path).await
    }
    async fn list_bridge_history(
        &self,
        caller: Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        self.inner.list_bridge_history(self.seen(&caller), query).await
    }
    async fn get_bridge(&self, caller: Caller, path: GetBridgePath) -> Result<Answer<BridgeRecord>, GetBridgeError> {
        let answer = self.inner.get_bridge(self.seen(&caller), path.clone()).await;
        if self.fault == Break::LeakBridges && matches!(answer, Err(GetBridgeError::InvalidRequest(_))) {
            let others: Vec<String> =
                self.projects.lock().unwrap().iter().filter(|p| **p != caller.project_id).cloned().collect();
            for other in others {
                if let Ok(record) = self.inner.get_bridge(Caller::new(other), path.clone()).await {
                    return Ok(record);
                }
            }
        }
        answer
    }
    async fn create_deposit_addresses(
        &self,
        caller: Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        self.inner.create_deposit_addresses(self.seen(&caller), body).await
    }
    async fn search_deposit_addresses(
        &self,
        caller: Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        self.inner.search_deposit_addresses(self.seen(&caller), query).await
    }
    async fn get_deposit_address_public_status(
        &self,
        caller: Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        self.inner.get_deposit_address_public_status(self.seen(&caller), path, query).await
    }
    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        if self.fault == Break::WrongPublicKey {
            return Ok(self.wrong_key.clone());
        }
        self.inner.get_webhook_public_key().await
    }
    async fn list_user_events(
        &self,
        caller: Caller,
        query: ListUserEventsQuery,
    ) -> Result<Answer<UserEventsPage>, ListUserEventsError> {
        let later_page = query.page_token.is_some();
        let answer = self.inner.list_user_events(self.seen(&caller), query).await?;
        if self.fault != Break::SkipFeedItem || !later_page {
            return Ok(answer);
        }
        let mut page = answer.into_value().expect("the sandbox's page decodes");
        if !page.items.is_empty() {
            page.items.remove(0);
        }
        Ok(page.into())
    }
    async fn cancel_bridge(
        &self,
        caller: Caller,
        path: CancelBridgePath,
        body: CancelBridgeRequest,
    ) -> Result<BridgeRecord, CancelBridgeError> {
        self.inner.cancel_bridge(self.seen(&caller), path, body).await
    }
    async fn list_bridge_history_cursor(
        &self,
        caller: Caller,
        query: ListBridgeHistoryCursorQuery,
    ) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> {
        self.inner.list_bridge_history_cursor(self.seen(&caller), query).await
    }
    async fn get_bridges_by_deposit_hash(
        &self,
        caller: Caller,
        path: GetBridgesByDepositHashPath,
    ) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> {
        self.inner.get_bridges_by_deposit_hash(self.seen(&caller), path).await
    }
    async fn get_bridge_by_withdraw_hash(
        &self,
        caller: Caller,
        path: GetBridgeByWithdrawHashPath,
    ) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> {
        self.inner.get_bridge_by_withdraw_hash(self.seen(&caller), path).await
    }
    async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> {
        self.inner.get_bridge_configs().await
    }
    async fn get_bridge_token_config(
        &self,
        path: GetBridgeTokenConfigPath,
    ) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> {
        self.inner.get_bridge_token_config(path).await
    }
    async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> {
        self.inner.get_bridge_swap_token_configs().await
    }
    async fn get_deposit_address_rate_limit_status(
        &self,
        caller: Caller,
    ) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> {
        self.inner.get_deposit_address_rate_limit_status(self.seen(&caller)).await
    }
    async fn get_deposit_address_status(
        &self,
        caller: Caller,
        path: GetDepositAddressStatusPath,
    ) -> Result<DepositAddressStatus, GetDepositAddressStatusError> {
        self.inner.get_deposit_address_status(self.seen(&caller), path).await
    }
    async fn get_deposit_address_history(
        &self,
        caller: Caller,
        path: GetDepositAddressHistoryPath,
        query: GetDepositAddressHistoryQuery,
    ) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> {
        self.inner.get_deposit_address_history(self.seen(&caller), path, query).await
    }
    async fn get_deposit_address_completed_refunds(
        &self,
        caller: Caller,
        path: GetDepositAddressCompletedRefundsPath,
    ) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> {
        self.inner.get_deposit_address_completed_refunds(self.seen(&caller), path).await
    }
    async fn get_deposit_address_supported_tokens(
        &self,
        path: GetDepositAddressSupportedTokensPath,
        query: GetDepositAddressSupportedTokensQuery,
    ) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> {
        self.inner.get_deposit_address_supported_tokens(path, query).await
    }
    async fn exchange_api_key(&self, body: ApiKeyExchangeRequest) -> Result<ApiKeyExchange, ExchangeApiKeyError> {
        self.inner.exchange_api_key(body).await
    }
}

/// The sandbox with one break in its `BridgeApi`; its helpers (`SandboxApi`) are the sandbox's own.
async fn broken(fault: Break) -> SpawnedSandbox {
    SpawnedSandbox::start_with(move |opened| {
        let auth = opened.access.clone();
        let config = ServerConfig::default();
        bridge_server::router(Broken::new(opened.sandbox.clone(), fault), auth.clone(), config.clone())
            .merge(bridge_server::sandbox_router(opened.sandbox.clone(), auth, config))
    })
    .await
    .unwrap()
}

/// An authenticator that forgets revocations: a credential refused because its key was revoked is let through.
struct ForgetsRevocations(bridge_sandbox::access::Access);

fn forgive(verdict: Result<Caller, AuthFailure>) -> Result<Caller, AuthFailure> {
    match verdict {
        Err(AuthFailure::Rejected(why)) if why.contains("revoked") => Ok(Caller::new(MAIN_PROJECT)),
        other => other,
    }
}

impl Authenticator for ForgetsRevocations {
    async fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        forgive(self.0.verify_bearer(token).await)
    }
    async fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        forgive(self.0.verify_api_key(key).await)
    }
}

#[tokio::test]
async fn a_revoked_key_still_accepted_is_caught() {
    let sandbox = SpawnedSandbox::start_with(|opened| {
        let config = ServerConfig::default();
        bridge_server::router(opened.sandbox.clone(), ForgetsRevocations(opened.access.clone()), config.clone()).merge(
            bridge_server::sandbox_router(opened.sandbox.clone(), ForgetsRevocations(opened.access.clone()), config),
        )
    })
    .await
    .unwrap();
    let report = run_only(&sandbox, &["revoked-api-key", "revoked-key-token"]).await;
    caught(&report, "auth::listUserEvents::revoked-api-key", "expected 401 Unauthorized");
    caught(&report, "auth::getBridge::revoked-key-token", "expected 401 Unauthorized");
    caught(&report, "auth::quoteBridge::revoked-key-token", "expected 401 Unauthorized");
    passed(&report, "auth::exchangeApiKey::revoked-api-key");
    sandbox.stop().await.unwrap();
}

#[tokio::test]
async fn a_leaking_project_is_caught() {
    let sandbox = broken(Break::LeakBridges).await;
    let report = run_only(&sandbox, &["isolation"]).await;
    caught(&report, "isolation::get-foreign-bridge", "the other project's id is answered 200");
    passed(&report, "isolation::commit-foreign-quote");
    passed(&report, "isolation::search");
    sandbox.stop().await.unwrap();
}

#[tokio::test]
async fn a_skipped_feed_item_is_caught() {
    let sandbox = broken(Break::SkipFeedItem).await;
    let report = run_only(&sandbox, &["behaviour::event-feed-cursor", "behaviour::search-cursor"]).await;
    caught(&report, "behaviour::event-feed-cursor", "missing");
    passed(&report, "behaviour::search-cursor");
    sandbox.stop().await.unwrap();
}

#[tokio::test]
async fn a_bad_webhook_signature_is_caught() {
    let sandbox = broken(Break::WrongPublicKey).await;
    let report = run_only(&sandbox, &["webhook"]).await;
    caught(&report, "webhook::test-event-delivered", "signature does not match");
    caught(&report, "webhook::bridge-events-delivered", "signature does not match");
    // The served key is still a readable key: only verification shows the break.
    passed(&report, "webhook::public-key");
    sandbox.stop().await.unwrap();
}

/// Drops the `Retry-After` header of every 429.
async fn drop_retry_after(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    response.headers_mut().remove(axum::http::header::RETRY_AFTER);
    response
}

/// A rate-limited deployment whose 429 has no `Retry-After` header, and one that does not limit at all: both are
/// caught by the `limits` checks, run against them as `--rate-limited` deployments.
#[tokio::test]
async fn a_429_without_retry_after_and_a_missing_limit_are_caught() {
    let broken = SpawnedSandbox::start_rate_limited_with(|opened| {
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn(drop_retry_after))
    })
    .await
    .unwrap();
    let mut config = broken.run_config();
    config.rate_limited = Some(broken.rate_limited());
    config.only = vec!["limits::too-many-requests".into()];
    let report = run(&config, &mut Vec::new()).await.unwrap();
    caught(&report, "limits::too-many-requests", "no Retry-After header");
    broken.stop().await.unwrap();

    let unlimited = SpawnedSandbox::start().await.unwrap();
    let mut config = unlimited.run_config();
    config.rate_limited = Some(unlimited.rate_limited());
    config.only = vec!["limits::too-many-requests".into()];
    let report = run(&config, &mut Vec::new()).await.unwrap();
    caught(&report, "limits::too-many-requests", "were all served");
    unlimited.stop().await.unwrap();
}
