//! What a sandbox is driven with: its configuration for a test (a free loopback port, the manual clock) and the
//! requests the scenarios send. It depends on nothing but the contract and the sandbox's public API, so the
//! bench-fixtures example includes this very file (`#[path]`) and drives its sandbox with the same inputs.

use std::path::Path;

use bridge_contract::*;
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;

/// The depositor of every request here.
pub const EVM_A: &str = "0x1111111111111111111111111111111111111111";
/// The recipient and destination address of every request here.
pub const EVM_B: &str = "0x2222222222222222222222222222222222222222";

/// The configuration of a sandbox over the SQLite data directory `data` on a free loopback port, with a manual
/// clock and the defaults of `serve` otherwise.
pub fn local_config(data: &Path) -> SandboxConfig {
    SandboxConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.to_owned(),
        database_url: None,
        clock: ClockMode::Manual,
        seed: None,
        catalogue: None,
        errors: ErrorsMode::First,
        webhook_egress: Default::default(),
        rate_limit: None,
        faults: None,
    }
}

/// A single-token quote request: 100 USDC from ETHEREUM to BASE, `pay` mode.
pub fn quote_request() -> BridgeQuoteRequest {
    bridge_request("100")
}

/// A single-token quote request: `amount` USDC from ETHEREUM to BASE, `pay` mode, from [`EVM_A`] to [`EVM_B`].
pub fn bridge_request(amount: &str) -> BridgeQuoteRequest {
    BridgeQuoteRequest {
        token: "USDC".into(),
        chain_in: "ETHEREUM".into(),
        chain_out: "BASE".into(),
        amount: amount.parse().unwrap(),
        amount_native: None,
        mode: QuoteMode::Pay,
        is_sda: None,
        depositor: EVM_A.into(),
        recipient: EVM_B.into(),
        post_bridge_data: None,
        webhook_url: None,
    }
}

/// A bridge-swap quote request: `amount` ETH on ETHEREUM to USDC on BASE, `pay` mode, from [`EVM_A`] to [`EVM_B`].
pub fn swap_request(amount: &str) -> BridgeSwapQuoteRequest {
    BridgeSwapQuoteRequest {
        chain_in: "ETHEREUM".into(),
        chain_out: "BASE".into(),
        amount: amount.parse().unwrap(),
        amount_native: None,
        mode: QuoteMode::Pay,
        is_sda: None,
        token_in: "ETH".into(),
        token_out: "USDC".into(),
        depositor: EVM_A.into(),
        recipient: EVM_B.into(),
        post_bridge_data: None,
        webhook_url: None,
        refund_address: None,
    }
}

/// A deposit address on ETHEREUM that bridges to [`EVM_B`] on BASE, with no note and the default reuse policy.
pub fn address_request() -> DepositAddressCreateRequest {
    DepositAddressCreateRequest {
        deposit_chains: vec!["ETHEREUM".into()],
        address_note: None,
        reuse_policy: None,
        webhook_url: None,
        refund_address: None,
        destination_chain: "BASE".into(),
        destination_address: EVM_B.into(),
        post_bridge_data: None,
        token_out: None,
        bridge_if_not_swappable: None,
    }
}

/// A routing deposit address on ETHEREUM with one route (priority 1): what `matcher` matches is bridged to
/// [`EVM_B`] on BASE; its note is "router".
pub fn routing_request(matcher: RoutingMatcher) -> SandboxRoutingDepositAddressRequest {
    SandboxRoutingDepositAddressRequest {
        deposit_chain: "ETHEREUM".into(),
        routes: vec![RoutingRoute {
            matcher: Some(matcher),
            action: RoutingAction::Bridge(RoutingActionBridge {
                tag: Default::default(),
                destination_chain: "BASE".into(),
                destination_address: EVM_B.into(),
            }),
            priority: Some(1),
        }],
        address_note: Some("router".into()),
        webhook_url: None,
    }
}

/// A route's matcher: a deposit worth 10 USD or more.
pub fn ten_usd_or_more() -> RoutingMatcher {
    RoutingMatcher::SentAmountUsdGreaterThan(RoutingMatcherSentAmountUsdGreaterThan {
        tag: Default::default(),
        value: 10.into(),
        inclusive: Some(true),
    })
}

/// A deposit of `amount` `token` into a deposit address, with the sandbox's `outcome`.
pub fn address_deposit(
    token: &str,
    amount: &str,
    outcome: Option<SandboxDepositOutcome>,
) -> SandboxAddressDepositRequest {
    SandboxAddressDepositRequest { token: token.into(), amount: amount.parse().unwrap(), sender: None, outcome }
}

/// The payment of a committed bridge (no transaction hash given), with the sandbox's `outcome`.
pub fn bridge_deposit(outcome: Option<SandboxBridgeOutcome>) -> SandboxBridgeDepositRequest {
    SandboxBridgeDepositRequest { tx_hash: None, outcome }
}

/// A page of the event feed from its start (`sinceTimestamp=0`): after `page_token`, `page_size` events.
pub fn feed_query(page_token: Option<String>, page_size: u32) -> ListUserEventsQuery {
    ListUserEventsQuery { since_timestamp: 0.into(), page_token, page_size: Some(page_size.into()) }
}

/// The first page of the offset history, `limit` records by creation time in `direction`, of every state.
pub fn history_query(limit: u32, direction: SortDirection) -> ListBridgeHistoryQuery {
    ListBridgeHistoryQuery {
        page: 1.into(),
        limit: limit.into(),
        sort_by: HistorySortBy::CreatedAt,
        sort_direction: direction,
        state: None,
    }
}

/// A search of every deposit address of the project (no filter, the default page).
pub fn search_everything() -> SearchDepositAddressesQuery {
    SearchDepositAddressesQuery {
        address_note: None,
        deposit_chain: None,
        destination_chain: None,
        destination_address: None,
        page_token: None,
        page_size: None,
    }
}
