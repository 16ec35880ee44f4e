//! The sandbox as the contract's service: [`Sandbox`] implements [`BridgeApi`] (the production operations) and
//! [`SandboxApi`] (the sandbox helpers), the traits `bridge-server` generates, each method the operation of the same
//! name on its [`Core`] ([`crate::operations`], one file per area). A project sees only its own quotes, bridges,
//! addresses and events; another project's id is answered exactly like an id that does not exist.
//!
//! Why a line here for every operation: a generated trait is one trait per API, with a method per operation, and
//! Rust takes all the methods of a trait in one `impl` block, while the operations live in their areas. So the
//! trait methods are a table, `on_core!(Operation: method(parts))`, whose types come from the operation (nothing
//! of a signature is written again); the adapter itself answers only what is not the core's: the webhook public
//! key this instance serves, and the API-key exchange, which is [`Access`]'s.

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

/// A method of the generated traits that is the operation of the same name on the core.
/// `on_core!(Operation: method(caller, path, query, body))` names the operation (its unit struct in
/// `bridge_contract::operations`) and the parts its method takes, in the trait's order; their types and its answer
/// are the operation's own (`<Operation as bridge_contract::Operation>::Body`, ...), so no signature is written
/// again here. `answer` marks an operation whose answer is served as it was stored ([`Answer`], `x-encoded-answer`).
macro_rules! on_core {
    (answer $op:ident: $method:ident(caller $(, $part:ident)*)) => {
        async fn $method(&self, caller: Caller $(, $part: part!($op, $part))*) -> StoredReply<$op> {
            self.core().$method(&caller $(, $part)*).await
        }
    };
    ($op:ident: $method:ident(caller $(, $part:ident)*)) => {
        async fn $method(&self, caller: Caller $(, $part: part!($op, $part))*) -> Reply<$op> {
            self.core().$method(&caller $(, $part)*).await
        }
    };
    ($op:ident: $method:ident($($part:ident),*)) => {
        async fn $method(&self $(, $part: part!($op, $part))*) -> Reply<$op> {
            self.core().$method($($part),*).await
        }
    };
}

/// The type of one part of an operation's request as its method takes it: `path`, `query` or `body`.
macro_rules! part {
    ($op:ident, path) => {
        <$op as Operation>::Path
    };
    ($op:ident, query) => {
        <$op as Operation>::Query
    };
    ($op:ident, body) => {
        <$op as Operation>::Body
    };
}

/// What the method of an operation answers: its success, or its error enum.
type Reply<O> = Result<<O as Operation>::Response, <O as Operation>::Error>;
/// What the method of an operation whose answer is served as it was stored answers.
type StoredReply<O> = Result<Answer<<O as Operation>::Response>, <O as Operation>::Error>;

impl BridgeApi for Sandbox {
    on_core!(QuoteBridge: quote_bridge(caller, body));
    on_core!(QuoteBridgeSwap: quote_bridge_swap(caller, body));
    on_core!(CommitQuote: commit_quote(caller, path));
    on_core!(ListBridgeHistory: list_bridge_history(caller, query));
    on_core!(answer GetBridge: get_bridge(caller, path));
    on_core!(CreateDepositAddresses: create_deposit_addresses(caller, body));
    on_core!(SearchDepositAddresses: search_deposit_addresses(caller, query));
    on_core!(GetDepositAddressPublicStatus: get_deposit_address_public_status(caller, path, query));
    on_core!(answer ListUserEvents: list_user_events(caller, query));
    on_core!(CancelBridge: cancel_bridge(caller, path, body));
    on_core!(ListBridgeHistoryCursor: list_bridge_history_cursor(caller, query));
    on_core!(GetBridgesByDepositHash: get_bridges_by_deposit_hash(caller, path));
    on_core!(GetBridgeByWithdrawHash: get_bridge_by_withdraw_hash(caller, path));
    on_core!(GetBridgeConfigs: get_bridge_configs());
    on_core!(GetBridgeTokenConfig: get_bridge_token_config(path));
    on_core!(GetBridgeSwapTokenConfigs: get_bridge_swap_token_configs());
    on_core!(GetDepositAddressRateLimitStatus: get_deposit_address_rate_limit_status(caller));
    on_core!(GetDepositAddressStatus: get_deposit_address_status(caller, path));
    on_core!(GetDepositAddressHistory: get_deposit_address_history(caller, path, query));
    on_core!(GetDepositAddressCompletedRefunds: get_deposit_address_completed_refunds(caller, path));
    on_core!(GetDepositAddressSupportedTokens: get_deposit_address_supported_tokens(path, query));

    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        Ok(self.0.served_key.clone())
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
    on_core!(SandboxDepositBridge: sandbox_deposit_bridge(caller, path, body));
    on_core!(SandboxDepositIntoAddress: sandbox_deposit_into_address(caller, path, body));
    on_core!(SandboxCreateRoutingDepositAddress: sandbox_create_routing_deposit_address(caller, body));
    on_core!(SandboxAdvanceClock: sandbox_advance_clock(caller, body));
    on_core!(SandboxGetClock: sandbox_get_clock(caller));
    on_core!(SandboxResetProject: sandbox_reset_project(caller));
    on_core!(SandboxSendWebhookTest: sandbox_send_webhook_test(caller, body));
    on_core!(SandboxListWebhookDeliveries: sandbox_list_webhook_deliveries(caller, query));
    on_core!(SandboxResendWebhookDelivery: sandbox_resend_webhook_delivery(caller, path));
    on_core!(SandboxRecoverWebhookDeliveries: sandbox_recover_webhook_deliveries(caller, body));
    on_core!(SandboxGetFaults: sandbox_get_faults(caller));
    on_core!(SandboxSetFaults: sandbox_set_faults(caller, body));
    on_core!(SandboxClearFaults: sandbox_clear_faults(caller));
    on_core!(SandboxCheckWebhookReceiver: sandbox_check_webhook_receiver(caller, body));
}
