//! What a quote is priced on: the parts of the request the model uses ([`Request`]) and the route
//! ([`Route`]: tokenIn on chainIn → bridge token → tokenOut on chainOut), with the refusals of the route and the
//! requested amount.

use bridge_contract::{DecimalString, IsSdaFlag, NoBridgeTokenFoundError, PostBridgeData, QuoteMode};
use rust_decimal::{Decimal, RoundingStrategy};

use super::failure::{invalid, negative, out_of_range, shown, Failure, PricingResult, Refusal};
use crate::domain::catalogue::{Catalogue, Chain, Token};

/// The parts of a quote request the model uses.
pub(super) struct Request<'a> {
    pub(super) mode: QuoteMode,
    pub(super) amount: &'a DecimalString,
    pub(super) amount_native: Option<&'a DecimalString>,
    pub(super) is_sda: bool,
    /// Deposits: round the amount down to its precision instead of refusing extra decimals.
    pub(super) round_amount_down: bool,
    pub(super) depositor: String,
    pub(super) recipient: String,
    pub(super) post_bridge_data: Option<PostBridgeData>,
    pub(super) webhook_url: Option<String>,
}

/// tokenIn on chainIn → bridge token (chainIn → chainOut) → tokenOut on chainOut.
pub(super) struct Route<'a> {
    pub(super) chain_in: &'a Chain,
    pub(super) chain_out: &'a Chain,
    pub(super) token_in: &'a Token,
    pub(super) token_out: &'a Token,
    pub(super) bridge_in: &'a Token,
    pub(super) bridge_out: &'a Token,
    /// Answer with the `bridgeSwap` variant.
    pub(super) swap: bool,
}

impl Route<'_> {
    pub(super) fn is_swap(&self) -> bool {
        self.swap
    }
    pub(super) fn pre_swap(&self) -> bool {
        self.token_in.symbol != self.bridge_in.symbol
    }
    pub(super) fn post_swap(&self) -> bool {
        self.token_out.symbol != self.bridge_out.symbol
    }
    pub(super) fn bridge_dp(&self) -> u32 {
        self.bridge_in.decimals.min(self.bridge_out.decimals)
    }
    pub(super) fn pay_dp(&self) -> u32 {
        if self.pre_swap() {
            self.token_in.decimals
        } else {
            self.bridge_dp()
        }
    }
    pub(super) fn receive_dp(&self) -> u32 {
        if self.post_swap() {
            self.token_out.decimals
        } else {
            self.bridge_dp()
        }
    }
}

pub(super) fn is_sda(flag: Option<IsSdaFlag>) -> bool {
    flag == Some(IsSdaFlag::True)
}

pub(super) fn known_chain<'a>(catalogue: &'a Catalogue, member: &str, id: &str) -> PricingResult<&'a Chain> {
    catalogue.chain(id).ok_or_else(|| {
        let known: Vec<&str> = catalogue.chains().map(|c| c.id.as_str()).collect();
        invalid(format!("`{member}`: unknown chain {:?}; supported chains: {}", shown(id), known.join(", ")))
    })
}

pub(super) fn check_address(catalogue: &Catalogue, chain: &Chain, member: &str, address: &str) -> PricingResult<()> {
    match catalogue.invalid_address(&chain.id, address) {
        None => Ok(()),
        Some(reason) => Err(invalid(format!("`{member}`: {reason}"))),
    }
}

/// A plain route of `symbol` (bridgeable on both chains), or InvalidRequest.
pub(super) fn plain_route<'a>(chain_in: &'a Chain, chain_out: &'a Chain, symbol: &str) -> PricingResult<Route<'a>> {
    let on = |chain: &'a Chain| -> PricingResult<&'a Token> {
        let token = chain
            .token(symbol)
            .ok_or_else(|| invalid(format!("token {:?} is not supported on {}", shown(symbol), chain.id)))?;
        if !token.bridgeable {
            return Err(invalid(format!(
                "token {symbol:?} is not bridged from or to {}; use a bridge-swap quote",
                chain.id
            )));
        }
        Ok(token)
    };
    let (token_in, token_out) = (on(chain_in)?, on(chain_out)?);
    Ok(Route { chain_in, chain_out, token_in, token_out, bridge_in: token_in, bridge_out: token_out, swap: false })
}

/// The route between two tokens: plain when they are the same bridgeable symbol, else through a bridge
/// token (NoBridgeTokenFoundError when there is none).
pub(super) fn route_between<'a>(
    catalogue: &Catalogue,
    chain_in: &'a Chain,
    chain_out: &'a Chain,
    token_in: &'a Token,
    token_out: &'a Token,
) -> PricingResult<Route<'a>> {
    if token_in.symbol == token_out.symbol && token_in.bridgeable && token_out.bridgeable {
        return plain_route(chain_in, chain_out, &token_in.symbol);
    }
    let symbol = catalogue.bridge_token(&chain_in.id, &chain_out.id, &token_in.symbol, &token_out.symbol).ok_or_else(
        || -> Refusal {
            Failure::NoBridgeTokenFound(NoBridgeTokenFoundError::new(format!(
                "no token is bridged between {} and {}",
                chain_in.id, chain_out.id
            )))
            .into()
        },
    )?;
    let (Some(bridge_in), Some(bridge_out)) = (chain_in.token(&symbol), chain_out.token(&symbol)) else {
        return Err(invalid(format!("bridge token {symbol} is missing")));
    };
    Ok(Route { chain_in, chain_out, token_in, token_out, bridge_in, bridge_out, swap: true })
}

/// The requested amount: exact, > 0, with at most `dp` decimal places (rounded down to them for deposits).
pub(super) fn requested_amount(value: &DecimalString, dp: u32, round_down: bool, what: &str) -> PricingResult<Decimal> {
    let d = value.to_decimal().map_err(|e| invalid(out_of_range("amount", value, &e)))?.normalize();
    if round_down {
        let rounded = d.round_dp_with_strategy(dp, RoundingStrategy::ToZero).normalize();
        if rounded <= Decimal::ZERO {
            // a deposit smaller than one unit of the route: nothing would arrive (UNDER_MIN)
            return Err(negative(Decimal::ZERO));
        }
        return Ok(rounded);
    }
    if d <= Decimal::ZERO {
        return Err(invalid(format!("`amount` must be greater than 0 (got {})", shown(&value.to_string()))));
    }
    if d.scale() > dp {
        return Err(invalid(format!(
            "`amount` {} has more than {dp} decimal places, the precision of {what}",
            shown(&value.to_string())
        )));
    }
    Ok(d)
}
