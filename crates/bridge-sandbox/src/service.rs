//! The sandbox as the contract's service: [`BridgeApi`] (the production operations) and [`SandboxApi`] (the sandbox
//! helpers), each method delegating to the area that owns it over the one [`Core`]. A project sees only its own
//! quotes, bridges, addresses and events; another project's id is answered exactly like an id that does not exist.
//! A `webhookUrl` is checked against the webhook egress policy ([`crate::infra::egress`]) before its area sees the request.

use std::sync::Arc;

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::{Answer, AuthFailure, BridgeApi, Caller, SandboxApi};

use crate::access::Access;
use crate::infra::clock::Clock;
use crate::infra::core::Core;
use crate::infra::store::StoreResult;
use crate::operations::addresses::{self, details as address_details};
use crate::operations::{bridge_config, bridges, deposits, feed, projects, quotes, routing, webhooks};
use crate::pipeline::lifecycle;

struct Inner {
    core: Arc<Core>,
    served_key: String,
    access: Access,
}

/// The sandbox service. Cheap to clone.
#[derive(Clone)]
pub struct Sandbox(Arc<Inner>);

impl Sandbox {
    /// The sandbox over its core (store, catalogue, clocks, id key, webhook egress policy); `served_key` is the
    /// webhook public key it serves, and `access` decides on credentials (and signs the tokens the API-key
    /// exchange answers).
    pub fn new(core: Core, served_key: String, access: Access) -> Self {
        Self(Arc::new(Inner { core: Arc::new(core), served_key, access }))
    }

    /// Who may call: the authenticator of this sandbox's routes.
    pub fn access(&self) -> &Access {
        &self.0.access
    }

    pub fn core(&self) -> &Core {
        &self.0.core
    }

    /// The core, shared (the webhook deliverer works on it alone).
    pub fn shared_core(&self) -> Arc<Core> {
        self.0.core.clone()
    }

    pub fn clock(&self) -> &Clock {
        &self.0.core.clock
    }

    /// Moves every bridge whose time has come; returns how many steps were taken.
    pub async fn tick(&self) -> StoreResult<usize> {
        lifecycle::advance(&self.0.core).await
    }
}

impl BridgeApi for Sandbox {
    async fn quote_bridge(&self, caller: Caller, body: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> {
        self.core().check_webhook_url(body.webhook_url.as_deref()).await?;
        quotes::quote_bridge(self.core(), &caller, body).await
    }

    async fn quote_bridge_swap(
        &self,
        caller: Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        self.core().check_webhook_url(body.webhook_url.as_deref()).await?;
        quotes::quote_bridge_swap(self.core(), &caller, body).await
    }

    async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
        quotes::commit_quote(self.core(), &caller, path).await
    }

    async fn list_bridge_history(
        &self,
        caller: Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        bridges::list_bridge_history(self.core(), &caller, query).await
    }

    async fn get_bridge(&self, caller: Caller, path: GetBridgePath) -> Result<Answer<BridgeRecord>, GetBridgeError> {
        bridges::get_bridge(self.core(), &caller, path).await
    }

    async fn create_deposit_addresses(
        &self,
        caller: Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        self.core().check_webhook_url(body.webhook_url.as_deref()).await?;
        addresses::create(self.core(), &caller, body).await
    }

    async fn search_deposit_addresses(
        &self,
        caller: Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        addresses::search(self.core(), &caller, query).await
    }

    async fn get_deposit_address_public_status(
        &self,
        caller: Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        addresses::public_status(self.core(), &caller, path, query).await
    }

    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        Ok(self.0.served_key.clone())
    }

    async fn list_user_events(
        &self,
        caller: Caller,
        query: ListUserEventsQuery,
    ) -> Result<Answer<UserEventsPage>, ListUserEventsError> {
        feed::list_user_events(self.core(), &caller, query).await
    }

    async fn cancel_bridge(
        &self,
        caller: Caller,
        path: CancelBridgePath,
        body: CancelBridgeRequest,
    ) -> Result<BridgeRecord, CancelBridgeError> {
        bridges::cancel(self.core(), &caller, path, body).await
    }

    async fn list_bridge_history_cursor(
        &self,
        caller: Caller,
        query: ListBridgeHistoryCursorQuery,
    ) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> {
        bridges::list_bridge_history_cursor(self.core(), &caller, query).await
    }

    async fn get_bridges_by_deposit_hash(
        &self,
        caller: Caller,
        path: GetBridgesByDepositHashPath,
    ) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> {
        bridges::by_deposit_hash(self.core(), &caller, path).await
    }

    async fn get_bridge_by_withdraw_hash(
        &self,
        caller: Caller,
        path: GetBridgeByWithdrawHashPath,
    ) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> {
        bridges::by_withdraw_hash(self.core(), &caller, path).await
    }

    async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> {
        bridge_config::configs(self.core())
    }

    async fn get_bridge_token_config(
        &self,
        path: GetBridgeTokenConfigPath,
    ) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> {
        bridge_config::token_config(self.core(), path)
    }

    async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> {
        bridge_config::swap_token_configs(self.core())
    }

    async fn get_deposit_address_rate_limit_status(
        &self,
        caller: Caller,
    ) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> {
        address_details::rate_limit_status(self.core(), &caller).await
    }

    async fn get_deposit_address_status(
        &self,
        caller: Caller,
        path: GetDepositAddressStatusPath,
    ) -> Result<DepositAddressStatus, GetDepositAddressStatusError> {
        address_details::status(self.core(), &caller, path).await
    }

    async fn get_deposit_address_history(
        &self,
        caller: Caller,
        path: GetDepositAddressHistoryPath,
        query: GetDepositAddressHistoryQuery,
    ) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> {
        address_details::history(self.core(), &caller, path, query).await
    }

    async fn get_deposit_address_completed_refunds(
        &self,
        caller: Caller,
        path: GetDepositAddressCompletedRefundsPath,
    ) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> {
        address_details::completed_refunds(self.core(), &caller, path).await
    }

    async fn get_deposit_address_supported_tokens(
        &self,
        path: GetDepositAddressSupportedTokensPath,
        query: GetDepositAddressSupportedTokensQuery,
    ) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> {
        address_details::supported_tokens(self.core(), path, query)
    }

    async fn exchange_api_key(&self, body: ApiKeyExchangeRequest) -> Result<ApiKeyExchange, ExchangeApiKeyError> {
        match self.0.access.exchange(&body.api_key).await {
            Ok(jwt) => Ok(ApiKeyExchange { jwt }),
            Err(AuthFailure::Unavailable(message)) => Err(ServiceUnavailable::new(message).into()),
            Err(AuthFailure::Rejected(message) | AuthFailure::Invalid(message)) => {
                Err(Unauthorized::new(message).into())
            }
        }
    }
}

impl SandboxApi for Sandbox {
    async fn sandbox_deposit_bridge(
        &self,
        caller: Caller,
        path: SandboxDepositBridgePath,
        body: SandboxBridgeDepositRequest,
    ) -> Result<BridgeRecord, SandboxDepositBridgeError> {
        bridges::deposit(self.core(), &caller, path, body).await
    }

    async fn sandbox_deposit_into_address(
        &self,
        caller: Caller,
        path: SandboxDepositIntoAddressPath,
        body: SandboxAddressDepositRequest,
    ) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
        deposits::deposit(self.core(), &caller, path, body).await
    }

    async fn sandbox_create_routing_deposit_address(
        &self,
        caller: Caller,
        body: SandboxRoutingDepositAddressRequest,
    ) -> Result<RoutingDepositAddress, SandboxCreateRoutingDepositAddressError> {
        self.core().check_webhook_url(body.webhook_url.as_deref()).await?;
        routing::create(self.core(), &caller, body).await
    }

    async fn sandbox_advance_clock(
        &self,
        caller: Caller,
        body: SandboxAdvanceClockRequest,
    ) -> Result<SandboxClock, SandboxAdvanceClockError> {
        projects::advance_clock(self.core(), &caller, body).await
    }

    async fn sandbox_get_clock(&self, caller: Caller) -> Result<SandboxClock, SandboxGetClockError> {
        projects::get_clock(self.core(), &caller).await
    }

    async fn sandbox_reset_project(&self, caller: Caller) -> Result<SandboxReset, SandboxResetProjectError> {
        projects::reset(self.core(), &caller).await
    }

    async fn sandbox_send_webhook_test(
        &self,
        caller: Caller,
        body: SandboxWebhookTestRequest,
    ) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> {
        self.core().check_webhook_url(Some(&body.webhook_url)).await?;
        webhooks::send_test(self.core(), &caller, body).await
    }

    async fn sandbox_list_webhook_deliveries(
        &self,
        caller: Caller,
        query: SandboxListWebhookDeliveriesQuery,
    ) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> {
        webhooks::list_deliveries(self.core(), &caller, query).await
    }

    async fn sandbox_resend_webhook_delivery(
        &self,
        caller: Caller,
        path: SandboxResendWebhookDeliveryPath,
    ) -> Result<SandboxWebhookResend, SandboxResendWebhookDeliveryError> {
        webhooks::resend(self.core(), &caller, path).await
    }

    async fn sandbox_recover_webhook_deliveries(
        &self,
        caller: Caller,
        body: SandboxWebhookRecoverRequest,
    ) -> Result<SandboxWebhookRecover, SandboxRecoverWebhookDeliveriesError> {
        webhooks::recover(self.core(), &caller, body).await
    }
}
