//! Routing deposit addresses (sandbox helper `POST /sandbox/routing-deposit-addresses`): creation, and the
//! choice of the route a deposit follows. Deposits into them are simulated by [`crate::operations::deposits`].
//!
//! The spec knows routing deposit addresses only through their three event kinds; how routes are ordered and
//! matched is this contract's design, stated on `RoutingRoute` and `RoutingMatcher` in the schema.

use bridge_contract::operations::SandboxCreateRoutingDepositAddressError;
use bridge_contract::{
    DecimalNumber, InvalidRequest, RoutingAction, RoutingActionBridge, RoutingActionBridgeSwap, RoutingCompositeStep,
    RoutingDepositAddress, RoutingDepositAddressCreatedEvent, RoutingMatcher, RoutingRoute,
    SandboxRoutingDepositAddressRequest,
};
use bridge_server::Caller;

use crate::domain::catalogue::Catalogue;
use crate::infra::core::Core;
use crate::infra::store::{Counter, StoredRoutingAddress};

type CreateError = SandboxCreateRoutingDepositAddressError;

/// Seeds of routing addresses are kept apart from those of deposit addresses (both are also checked against
/// the store, so the two kinds never share an address on a chain).
const SEED_SPACE: u64 = 0x7007_0000_0000_0000;

/// What a route's matcher looks at in a deposit.
pub struct Deposit<'a> {
    token_symbol: &'a str,
    token_address: &'a str,
    sender: &'a str,
    chain: &'a str,
    amount_usd: f64,
}

impl<'a> Deposit<'a> {
    pub fn new(
        token_symbol: &'a str,
        token_address: &'a str,
        sender: &'a str,
        chain: &'a str,
        amount_usd: DecimalNumber,
    ) -> Self {
        Deposit { token_symbol, token_address, sender, chain, amount_usd: amount_usd.as_f64() }
    }
}

/// Whether `matcher` matches the deposit (the rules stated on each `RoutingMatcher*` component of the schema).
fn matches(matcher: &RoutingMatcher, d: &Deposit) -> bool {
    let within = |bound: f64, inclusive: Option<bool>, above: bool| match (above, inclusive.unwrap_or(false)) {
        (true, true) => d.amount_usd >= bound,
        (true, false) => d.amount_usd > bound,
        (false, true) => d.amount_usd <= bound,
        (false, false) => d.amount_usd < bound,
    };
    match matcher {
        RoutingMatcher::SentToken(m) => {
            m.symbols_or_addresses.iter().any(|s| s == d.token_symbol || s.eq_ignore_ascii_case(d.token_address))
        }
        RoutingMatcher::Sender(m) => m.addresses.iter().any(|a| a.eq_ignore_ascii_case(d.sender)),
        RoutingMatcher::DepositChain(m) => m.deposit_chains.iter().any(|c| c == d.chain),
        RoutingMatcher::SentAmountUsdLowerThan(m) => within(m.value.as_f64(), m.inclusive, false),
        RoutingMatcher::SentAmountUsdGreaterThan(m) => within(m.value.as_f64(), m.inclusive, true),
        RoutingMatcher::SentAmountUsdBetween(m) => {
            within(m.from.as_f64(), m.inclusive, true) && within(m.to.as_f64(), m.inclusive, false)
        }
    }
}

/// The route a deposit follows: by ascending `priority`, routes without one after all that have one, ties in the
/// order given; the first whose matcher matches (a route without a matcher matches every deposit). `None`: no
/// route matches.
pub fn choose_route<'r>(routes: &'r [RoutingRoute], deposit: &Deposit) -> Option<&'r RoutingRoute> {
    let mut ordered: Vec<&RoutingRoute> = routes.iter().collect();
    // A stable sort keeps the given order among equal priorities.
    ordered.sort_by_key(|r| (r.priority.is_none(), r.priority));
    ordered.into_iter().find(|r| r.matcher.as_ref().is_none_or(|m| matches(m, deposit)))
}

/// Where an action sends a deposit.
pub struct Destination<'a> {
    pub destination_chain: &'a str,
    pub destination_address: &'a str,
    pub token_out: Option<&'a str>,
}

/// The transfer an action makes: its own, or the first step of a composite action (whose order
/// `route_problem` checked when the route was created).
pub fn destination(action: &RoutingAction) -> Destination<'_> {
    fn transfer(step: &RoutingCompositeStep) -> Option<Destination<'_>> {
        match step {
            RoutingCompositeStep::Bridge(b) => Some(bridge_destination(b)),
            RoutingCompositeStep::BridgeSwap(s) => Some(swap_destination(s)),
            RoutingCompositeStep::PostBridgeAction(_) => None,
        }
    }
    match action {
        RoutingAction::Bridge(b) => bridge_destination(b),
        RoutingAction::BridgeSwap(s) => swap_destination(s),
        RoutingAction::Composite(c) => c.actions.first().and_then(transfer).unwrap_or(Destination {
            destination_chain: "",
            destination_address: "",
            token_out: None,
        }),
    }
}

fn bridge_destination(b: &RoutingActionBridge) -> Destination<'_> {
    Destination {
        destination_chain: &b.destination_chain,
        destination_address: &b.destination_address,
        token_out: None,
    }
}

fn swap_destination(s: &RoutingActionBridgeSwap) -> Destination<'_> {
    Destination {
        destination_chain: &s.destination_chain,
        destination_address: &s.destination_address,
        token_out: Some(&s.token_out),
    }
}

/// Checks every route against the catalogue and the composite-action order: the first problem, in the words of
/// a 422 answer.
fn route_problem(catalogue: &Catalogue, caller: &Caller, routes: &[RoutingRoute]) -> Option<String> {
    routes.iter().enumerate().find_map(|(i, route)| {
        if let RoutingAction::Composite(c) = &route.action {
            let transfer_first = matches!(c.actions.first(), Some(RoutingCompositeStep::Bridge(_) | RoutingCompositeStep::BridgeSwap(_)));
            let then_post = c.actions.get(1).is_none_or(|s| matches!(s, RoutingCompositeStep::PostBridgeAction(_)));
            if !transfer_first || !then_post {
                return Some(format!("routes[{i}].action: a composite action is a bridge or bridgeSwap step, optionally followed by a postBridgeAction step"));
            }
            if c.actions.len() > 1 && !caller.has_post_bridge_data() {
                return Some(format!("routes[{i}].action: postBridgeAction needs the project's post-bridge feature"));
            }
        }
        let to = destination(&route.action);
        let Some(chain) = catalogue.chain(to.destination_chain) else {
            return Some(format!("routes[{i}]: unsupported destination chain {}", to.destination_chain));
        };
        if let Some(reason) = catalogue.invalid_address(to.destination_chain, to.destination_address) {
            return Some(format!("routes[{i}]: invalid destination address {}: {reason}", to.destination_address));
        }
        if let Some(token_out) = to.token_out {
            if !chain.tokens.contains_key(token_out) {
                return Some(format!("routes[{i}]: tokenOut {token_out} is not a token of {}", to.destination_chain));
            }
        }
        if let Some(RoutingMatcher::SentAmountUsdBetween(m)) = &route.matcher {
            if m.from > m.to {
                return Some(format!("routes[{i}].matcher: from {} is above to {}", m.from, m.to));
            }
        }
        None
    })
}

impl Core {
    pub async fn sandbox_create_routing_deposit_address(
        &self,
        caller: &Caller,
        body: SandboxRoutingDepositAddressRequest,
    ) -> Result<RoutingDepositAddress, CreateError> {
        self.check_webhook_url(body.webhook_url.as_deref()).await?;
        let catalogue = &self.catalogue;
        if catalogue.chain(&body.deposit_chain).is_none() {
            return Err(InvalidRequest::new(format!("unsupported deposit chain {}", body.deposit_chain)).into());
        }
        if let Some(problem) = route_problem(catalogue, caller, &body.routes) {
            return Err(InvalidRequest::new(problem).into());
        }
        let deposit_address = loop {
            let seed = self.next(Counter::RoutingAddress).await?;
            let Some((address, _)) = catalogue.deposit_address(&body.deposit_chain, seed ^ SEED_SPACE) else {
                return Err(InvalidRequest::new(format!("unsupported deposit chain {}", body.deposit_chain)).into());
            };
            if !self.store.address_taken(&body.deposit_chain, &address).await? {
                break address;
            }
        };
        let address = RoutingDepositAddress {
            deposit_chain: body.deposit_chain.clone(),
            deposit_address,
            routes: body.routes,
            address_note: body.address_note,
        };
        let created = RoutingDepositAddressCreatedEvent {
            address_note: address.address_note.clone(),
            ..RoutingDepositAddressCreatedEvent::new(
                address.deposit_chain.clone(),
                address.deposit_address.clone(),
                address.routes.clone(),
            )
        };
        let now = self.now_of(&caller.project_id).await?;
        let event = self.event(&caller.project_id, now, created, body.webhook_url.clone()).await?;
        let stored = StoredRoutingAddress {
            project: caller.project_id.clone(),
            address: address.clone(),
            webhook_url: body.webhook_url,
            created_ms: now,
        };
        self.store.insert_routing_address(&stored, &[event]).await?;
        tracing::info!(project = %caller.project_id, chain = %address.deposit_chain, address = %address.deposit_address, routes = address.routes.len(), "routing deposit address");
        Ok(address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::{
        RoutingActionComposite, RoutingMatcherSentAmountUsdBetween, RoutingMatcherSentAmountUsdLowerThan,
        RoutingMatcherSentToken,
    };

    fn bridge_to(to: &str) -> RoutingAction {
        RoutingAction::Bridge(RoutingActionBridge::new("BASE", to))
    }

    fn route(priority: Option<i64>, matcher: Option<RoutingMatcher>, to: &str) -> RoutingRoute {
        RoutingRoute { matcher, action: bridge_to(to), priority }
    }

    fn tokens(list: &[&str]) -> Option<RoutingMatcher> {
        Some(RoutingMatcher::SentToken(RoutingMatcherSentToken::new(
            list.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )))
    }

    fn lower(value: i32, inclusive: Option<bool>) -> Option<RoutingMatcher> {
        Some(RoutingMatcher::SentAmountUsdLowerThan(RoutingMatcherSentAmountUsdLowerThan {
            inclusive,
            ..RoutingMatcherSentAmountUsdLowerThan::new(value)
        }))
    }

    fn between(from: i32, to: i32, inclusive: Option<bool>) -> Option<RoutingMatcher> {
        Some(RoutingMatcher::SentAmountUsdBetween(RoutingMatcherSentAmountUsdBetween {
            inclusive,
            ..RoutingMatcherSentAmountUsdBetween::new(from, to)
        }))
    }

    fn chosen<'r>(routes: &'r [RoutingRoute], token: &str, usd: i32) -> Option<&'r str> {
        let deposit = Deposit::new(
            token,
            "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
            "0xSender",
            "ETHEREUM",
            DecimalNumber::from(usd),
        );
        choose_route(routes, &deposit).map(|r| destination(&r.action).destination_address)
    }

    #[test]
    fn lower_priority_first_then_unprioritised_in_given_order() {
        let routes =
            [route(None, None, "a"), route(Some(5), None, "b"), route(Some(1), None, "c"), route(None, None, "d")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("c"));
        let routes = [route(None, None, "a"), route(None, None, "d")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("a"));
        let routes = [route(Some(2), None, "x"), route(Some(2), None, "y")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("x"));
    }

    #[test]
    fn token_matches_by_exact_symbol_or_any_case_address() {
        let routes = [
            route(Some(1), tokens(&["USDC"]), "by-symbol"),
            route(Some(2), tokens(&["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]), "by-address"),
        ];
        assert_eq!(chosen(&routes, "USDC", 10), Some("by-symbol"));
        assert_eq!(chosen(&routes, "usdc", 10), Some("by-address"));
        assert_eq!(chosen(&routes[..1], "usdc", 10), None);
    }

    #[test]
    fn amount_bounds_are_strict_unless_inclusive() {
        assert_eq!(chosen(&[route(None, lower(100, None), "x")], "USDC", 100), None);
        assert_eq!(chosen(&[route(None, lower(100, Some(true)), "x")], "USDC", 100), Some("x"));
        assert_eq!(chosen(&[route(None, lower(100, None), "x")], "USDC", 99), Some("x"));
        assert_eq!(chosen(&[route(None, between(10, 100, None), "x")], "USDC", 10), None);
        assert_eq!(chosen(&[route(None, between(10, 100, Some(true)), "x")], "USDC", 10), Some("x"));
        assert_eq!(chosen(&[route(None, between(10, 100, Some(true)), "x")], "USDC", 101), None);
    }

    #[test]
    fn a_route_without_matcher_takes_everything() {
        assert_eq!(chosen(&[route(None, None, "all")], "ANY", 0), Some("all"));
    }

    #[test]
    fn a_composite_action_sends_the_deposit_where_its_first_step_does() {
        let swap = RoutingCompositeStep::BridgeSwap(RoutingActionBridgeSwap::new("ARBITRUM", "0xdest", "USDT"));
        let action = RoutingAction::Composite(RoutingActionComposite::new(vec![swap]));
        let to = destination(&action);
        assert_eq!((to.destination_chain, to.destination_address, to.token_out), ("ARBITRUM", "0xdest", Some("USDT")));
    }
}
