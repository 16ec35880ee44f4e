//! Routing deposit addresses (sandbox helper `POST /sandbox/routing-deposit-addresses`): creation, and the
//! choice of the route a deposit follows. Deposits into them are simulated by [`crate::addresses::deposit`].
//!
//! The spec knows routing deposit addresses only through their three event kinds; how routes are ordered and
//! matched is this contract's design, stated on `RoutingRoute` and `RoutingMatcher` in the schema.

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::Caller;

use crate::service::{invalid, storage, Sandbox};
use crate::store::StoredRoutingAddress;

type CreateError = SandboxCreateRoutingDepositAddressError;

/// Seeds of routing addresses are kept apart from those of deposit addresses (both are also checked against
/// the store, so the two kinds never share an address on a chain).
const SEED_SPACE: u64 = 0x7007_0000_0000_0000;

/// The route a deposit of `amount_usd` in `token` follows: by ascending `priority`, routes without one after
/// all that have one, ties in the order given; the first whose matcher matches. `None`: no route matches.
pub fn choose_route<'r>(routes: &'r [RoutingRoute], token: &str, amount_usd: DecimalNumber) -> Option<&'r RoutingRoute> {
    let mut ordered: Vec<&RoutingRoute> = routes.iter().collect();
    // A stable sort keeps the given order among equal priorities.
    ordered.sort_by_key(|r| (r.priority.is_none(), r.priority));
    ordered.into_iter().find(|r| match &r.matcher {
        None => true,
        Some(m) => {
            m.token_symbol.as_deref().is_none_or(|s| s == token)
                && m.min_amount_usd.is_none_or(|min| amount_usd >= min)
                && m.max_amount_usd.is_none_or(|max| amount_usd <= max)
        }
    })
}

/// Checks every route against the catalogue: the first problem, in the words of a 422 answer.
fn route_problem(sb: &Sandbox, routes: &[RoutingRoute]) -> Option<String> {
    let cat = sb.catalogue();
    routes.iter().enumerate().find_map(|(i, route)| {
        let action = &route.action;
        let Some(chain) = cat.chain(&action.destination_chain) else {
            return Some(format!("routes[{i}]: unsupported destination chain {}", action.destination_chain));
        };
        if let Some(reason) = cat.invalid_address(&action.destination_chain, &action.destination_address) {
            return Some(format!("routes[{i}]: invalid destination address {}: {reason}", action.destination_address));
        }
        if let Some(token_out) = &action.token_out {
            if !chain.tokens.contains_key(token_out) {
                return Some(format!("routes[{i}]: tokenOut {token_out} is not a token of {}", action.destination_chain));
            }
        }
        if let Some(m) = &route.matcher {
            if let (Some(min), Some(max)) = (m.min_amount_usd, m.max_amount_usd) {
                if min > max {
                    return Some(format!("routes[{i}]: minAmountUsd {min} is above maxAmountUsd {max}"));
                }
            }
        }
        None
    })
}

pub async fn create(
    sb: &Sandbox,
    caller: &Caller,
    body: SandboxRoutingDepositAddressRequest,
) -> Result<RoutingDepositAddress, CreateError> {
    if sb.catalogue().chain(&body.deposit_chain).is_none() {
        return Err(invalid(format!("unsupported deposit chain {}", body.deposit_chain)).into());
    }
    if let Some(problem) = route_problem(sb, &body.routes) {
        return Err(invalid(problem).into());
    }
    let deposit_address = loop {
        let seed = sb.next("routing-address").await.map_err(storage::<CreateError>)?;
        let Some((address, _)) = sb.catalogue().deposit_address(&body.deposit_chain, seed ^ SEED_SPACE) else {
            return Err(invalid(format!("unsupported deposit chain {}", body.deposit_chain)).into());
        };
        let (c, a) = (body.deposit_chain.clone(), address.clone());
        if !sb.store_call(move |s| s.address_taken(&c, &a)).await.map_err(storage::<CreateError>)? {
            break address;
        }
    };
    let address = RoutingDepositAddress {
        deposit_chain: body.deposit_chain.clone(),
        deposit_address,
        routes: body.routes,
        address_note: body.address_note,
    };
    let created = WebhookEvent::RoutingDepositAddressCreated(RoutingDepositAddressCreatedEvent {
        tag: Default::default(),
        deposit_chain: address.deposit_chain.clone(),
        deposit_address: address.deposit_address.clone(),
        routes: address.routes.clone(),
        address_note: address.address_note.clone(),
    });
    let event = sb.make_event(&caller.project_id, created, body.webhook_url.clone()).await.map_err(storage::<CreateError>)?;
    let stored = StoredRoutingAddress { project: caller.project_id.clone(), address: address.clone(), webhook_url: body.webhook_url, created_ms: sb.now_ms() };
    sb.store_call(move |s| s.insert_routing_address(&stored, &[event])).await.map_err(storage::<CreateError>)?;
    tracing::info!(project = %caller.project_id, chain = %address.deposit_chain, address = %address.deposit_address, routes = address.routes.len(), "routing deposit address");
    Ok(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(priority: Option<i64>, token: Option<&str>, min: Option<i32>, max: Option<i32>, to: &str) -> RoutingRoute {
        RoutingRoute {
            matcher: Some(RoutingMatcher {
                token_symbol: token.map(str::to_owned),
                min_amount_usd: min.map(DecimalNumber::from),
                max_amount_usd: max.map(DecimalNumber::from),
            }),
            action: RoutingAction { destination_chain: "base".into(), destination_address: to.into(), token_out: None },
            priority,
        }
    }

    fn chosen<'r>(routes: &'r [RoutingRoute], token: &str, usd: i32) -> Option<&'r str> {
        choose_route(routes, token, DecimalNumber::from(usd)).map(|r| r.action.destination_address.as_str())
    }

    #[test]
    fn lower_priority_first_then_unprioritised_in_given_order() {
        let routes = [route(None, None, None, None, "a"), route(Some(5), None, None, None, "b"), route(Some(1), None, None, None, "c"), route(None, None, None, None, "d")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("c"));
        let routes = [route(None, None, None, None, "a"), route(None, None, None, None, "d")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("a"));
        let routes = [route(Some(2), None, None, None, "x"), route(Some(2), None, None, None, "y")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("x"));
    }

    #[test]
    fn matcher_bounds_are_inclusive_and_token_exact() {
        let routes = [route(Some(1), Some("USDC"), Some(10), Some(100), "usdc"), route(Some(2), None, Some(500), None, "big")];
        assert_eq!(chosen(&routes, "USDC", 10), Some("usdc"));
        assert_eq!(chosen(&routes, "USDC", 100), Some("usdc"));
        assert_eq!(chosen(&routes, "USDC", 101), None);
        assert_eq!(chosen(&routes, "usdc", 50), None);
        assert_eq!(chosen(&routes, "ETH", 500), Some("big"));
        assert_eq!(chosen(&routes, "ETH", 9), None);
    }

    #[test]
    fn a_route_without_matcher_takes_everything() {
        let mut open = route(None, None, None, None, "all");
        open.matcher = None;
        assert_eq!(chosen(&[open], "ANY", 0), Some("all"));
    }
}
