//! The sandbox as the contract's service: [`Sandbox`] implements [`BridgeApi`] (the production operations) and
//! [`SandboxApi`] (the sandbox helpers), the traits `bridge-server` generates, by calling the operation of the same
//! name on its [`Core`] ([`crate::operations`], one file per area). A project sees only its own quotes, bridges,
//! addresses and events; another project's id is answered exactly like an id that does not exist.
//!
//! Why a method here for every operation, each one line: a generated trait is one trait per API with a method per
//! operation, and Rust takes all the methods of a trait in one `impl` block, so the operations, which live in
//! their areas, are reached from here. The adapter adds nothing of its own but what is not the core's: the
//! webhook public key this instance serves and the API-key exchange, which belongs to [`Access`].

use std::sync::Arc;

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::{Answer, AuthFailure, BridgeApi, Caller, SandboxApi};

use crate::access::Access;
use crate::infra::clock::Clock;
use crate::infra::core::Core;
use crate::infra::store::StoreResult;
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
        self.core().quote_bridge(&caller, body).await
    }

    async fn quote_bridge_swap(
        &self,
        caller: Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        self.core().quote_bridge_swap(&caller, body).await
    }

    async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
        self.core().commit_quote(&caller, path).await
    }

    async fn list_bridge_history(
        &self,
        caller: Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        self.core().list_bridge_history(&caller, query).await
    }

    async fn get_bridge(&self, caller: Caller, path: GetBridgePath) -> Result<Answer<BridgeRecord>, GetBridgeError> {
        self.core().get_bridge(&caller, path).await
    }

    async fn create_deposit_addresses(
        &self,
        caller: Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        self.core().create_deposit_addresses(&caller, body).await
    }

    async fn search_deposit_addresses(
        &self,
        caller: Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        self.core().search_deposit_addresses(&caller, query).await
    }

    async fn get_deposit_address_public_status(
        &self,
        caller: Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        self.core().get_deposit_address_public_status(&caller, path, query).await
    }

    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        Ok(self.0.served_key.clone())
    }

    async fn list_user_events(
        &self,
        caller: Caller,
        query: ListUserEventsQuery,
    ) -> Result<Answer<UserEventsPage>, ListUserEventsError> {
        self.core().list_user_events(&caller, query).await
    }

    async fn cancel_bridge(
        &self,
        caller: Caller,
        path: CancelBridgePath,
        body: CancelBridgeRequest,
    ) -> Result<BridgeRecord, CancelBridgeError> {
        self.core().cancel_bridge(&caller, path, body).await
    }

    async fn list_bridge_history_cursor(
        &self,
        caller: Caller,
        query: ListBridgeHistoryCursorQuery,
    ) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> {
        self.core().list_bridge_history_cursor(&caller, query).await
    }

    async fn get_bridges_by_deposit_hash(
        &self,
        caller: Caller,
        path: GetBridgesByDepositHashPath,
    ) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> {
        self.core().get_bridges_by_deposit_hash(&caller, path).await
    }

    async fn get_bridge_by_withdraw_hash(
        &self,
        caller: Caller,
        path: GetBridgeByWithdrawHashPath,
    ) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> {
        self.core().get_bridge_by_withdraw_hash(&caller, path).await
    }

    async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> {
        self.core().get_bridge_configs()
    }

    async fn get_bridge_token_config(
        &self,
        path: GetBridgeTokenConfigPath,
    ) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> {
        self.core().get_bridge_token_config(path)
    }

    async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> {
        self.core().get_bridge_swap_token_configs()
    }

    async fn get_deposit_address_rate_limit_status(
        &self,
        caller: Caller,
    ) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> {
        self.core().get_deposit_address_rate_limit_status(&caller).await
    }

    async fn get_deposit_address_status(
        &self,
        caller: Caller,
        path: GetDepositAddressStatusPath,
    ) -> Result<DepositAddressStatus, GetDepositAddressStatusError> {
        self.core().get_deposit_address_status(&caller, path).await
    }

    async fn get_deposit_address_history(
        &self,
        caller: Caller,
        path: GetDepositAddressHistoryPath,
        query: GetDepositAddressHistoryQuery,
    ) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> {
        self.core().get_deposit_address_history(&caller, path, query).await
    }

    async fn get_deposit_address_completed_refunds(
        &self,
        caller: Caller,
        path: GetDepositAddressCompletedRefundsPath,
    ) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> {
        self.core().get_deposit_address_completed_refunds(&caller, path).await
    }

    async fn get_deposit_address_supported_tokens(
        &self,
        path: GetDepositAddressSupportedTokensPath,
        query: GetDepositAddressSupportedTokensQuery,
    ) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> {
        self.core().get_deposit_address_supported_tokens(path, query)
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
        self.core().sandbox_deposit_bridge(&caller, path, body).await
    }

    async fn sandbox_deposit_into_address(
        &self,
        caller: Caller,
        path: SandboxDepositIntoAddressPath,
        body: SandboxAddressDepositRequest,
    ) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
        self.core().sandbox_deposit_into_address(&caller, path, body).await
    }

    async fn sandbox_create_routing_deposit_address(
        &self,
        caller: Caller,
        body: SandboxRoutingDepositAddressRequest,
    ) -> Result<RoutingDepositAddress, SandboxCreateRoutingDepositAddressError> {
        self.core().sandbox_create_routing_deposit_address(&caller, body).await
    }

    async fn sandbox_advance_clock(
        &self,
        caller: Caller,
        body: SandboxAdvanceClockRequest,
    ) -> Result<SandboxClock, SandboxAdvanceClockError> {
        self.core().sandbox_advance_clock(&caller, body).await
    }

    async fn sandbox_get_clock(&self, caller: Caller) -> Result<SandboxClock, SandboxGetClockError> {
        self.core().sandbox_get_clock(&caller).await
    }

    async fn sandbox_reset_project(&self, caller: Caller) -> Result<SandboxReset, SandboxResetProjectError> {
        self.core().sandbox_reset_project(&caller).await
    }

    async fn sandbox_send_webhook_test(
        &self,
        caller: Caller,
        body: SandboxWebhookTestRequest,
    ) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> {
        self.core().sandbox_send_webhook_test(&caller, body).await
    }

    async fn sandbox_list_webhook_deliveries(
        &self,
        caller: Caller,
        query: SandboxListWebhookDeliveriesQuery,
    ) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> {
        self.core().sandbox_list_webhook_deliveries(&caller, query).await
    }

    async fn sandbox_resend_webhook_delivery(
        &self,
        caller: Caller,
        path: SandboxResendWebhookDeliveryPath,
    ) -> Result<SandboxWebhookResend, SandboxResendWebhookDeliveryError> {
        self.core().sandbox_resend_webhook_delivery(&caller, path).await
    }

    async fn sandbox_recover_webhook_deliveries(
        &self,
        caller: Caller,
        body: SandboxWebhookRecoverRequest,
    ) -> Result<SandboxWebhookRecover, SandboxRecoverWebhookDeliveriesError> {
        self.core().sandbox_recover_webhook_deliveries(&caller, body).await
    }
}
