//! A request priced on a route ([`price`]): the amounts of both modes through the swaps and the bridged leg, with
//! the deposit, withdraw and smart-deposit-address limits.

use bridge_contract::{
    DepositLimitReached, GasBoostGreaterThanReceiveAmount, QuoteMode, SdaDepositBelowMinimum, SdaDepositLimitExceeded,
    WithdrawLimitReached,
};
use rust_decimal::Decimal;

use super::exact::{decimal_string, floor_div, mul, swap_in_for, swap_out};
use super::failure::{negative, Failure, PricingResult};
use super::leg::{gas_boost, Leg, LegPricing};
use super::route::{requested_amount, Request, Route};
use super::QuoteContext;

/// A priced quote.
pub(super) struct Priced {
    pub(super) pay: Decimal,
    pub(super) receive: Decimal,
    pub(super) min_receive: Decimal,
    pub(super) leg: Leg,
}

pub(super) fn check_deposit_limit(route: &Route, pay: Decimal) -> PricingResult<()> {
    let t = route.token_in;
    if pay > t.max_deposit {
        return Err(Failure::DepositLimitReached(DepositLimitReached {
            pay_amount_usd: mul(pay, t.usd_price).ok().map(decimal_string),
            max_deposit_amount_usd: mul(t.max_deposit, t.usd_price).ok().map(decimal_string),
            ..DepositLimitReached::new(
                t.symbol.clone(),
                route.chain_in.id.clone(),
                decimal_string(pay),
                decimal_string(t.max_deposit),
            )
        })
        .into());
    }
    Ok(())
}

pub(super) fn check_sda_limits(route: &Route, pay: Decimal) -> PricingResult<()> {
    let t = route.token_in;
    let pay_usd = mul(pay, t.usd_price)?;
    if pay_usd < t.min_deposit_usd {
        return Err(Failure::SdaDepositBelowMinimum(SdaDepositBelowMinimum::new(
            t.symbol.clone(),
            route.chain_in.id.clone(),
            route.chain_out.id.clone(),
            decimal_string(pay_usd),
            decimal_string(t.min_deposit_usd),
        ))
        .into());
    }
    if pay_usd > t.max_deposit_usd {
        return Err(Failure::SdaDepositLimitExceeded(SdaDepositLimitExceeded::new(
            t.symbol.clone(),
            route.chain_in.id.clone(),
            route.chain_out.id.clone(),
            decimal_string(pay_usd),
            decimal_string(t.max_deposit_usd),
        ))
        .into());
    }
    Ok(())
}

pub(super) fn check_withdraw_limit(route: &Route, receive: Decimal) -> PricingResult<()> {
    let t = route.token_out;
    if receive > t.max_withdraw {
        return Err(Failure::WithdrawLimitReached(WithdrawLimitReached::new(
            t.symbol.clone(),
            route.chain_out.id.clone(),
            decimal_string(receive),
            decimal_string(t.max_withdraw),
        ))
        .into());
    }
    Ok(())
}

/// Prices a request on a route (the model of the module documentation).
pub(super) fn price(ctx: &QuoteContext, route: &Route, req: &Request) -> PricingResult<Priced> {
    let fees = ctx.catalogue.fees();
    let swap_fee = fees.swap_fee_percentage;
    let (bridge_dp, pay_dp, receive_dp) = (route.bridge_dp(), route.pay_dp(), route.receive_dp());
    let (p_in, p_b_in, p_b_out, p_out) =
        (route.token_in.usd_price, route.bridge_in.usd_price, route.bridge_out.usd_price, route.token_out.usd_price);
    let amount = match req.mode {
        QuoteMode::Pay => requested_amount(
            req.amount,
            pay_dp,
            req.round_amount_down,
            &format!("{} on this route from {}", route.token_in.symbol, route.chain_in.id),
        )?,
        QuoteMode::Receive => requested_amount(
            req.amount,
            receive_dp,
            req.round_amount_down,
            &format!("{} on this route to {}", route.token_out.symbol, route.chain_out.id),
        )?,
    };
    let boost = gas_boost(req.amount_native, route.chain_out, p_b_in, bridge_dp)?;
    let pricing = LegPricing::new(ctx, route, req.is_sda, boost)?;
    let (pay, receive, leg) = match req.mode {
        QuoteMode::Pay => {
            let pay = amount;
            check_deposit_limit(route, pay)?;
            if req.is_sda {
                check_sda_limits(route, pay)?;
            }
            let bridge_pay = if route.pre_swap() { swap_out(pay, p_in, p_b_in, swap_fee, bridge_dp)? } else { pay };
            let leg = pricing.at_pay(bridge_pay)?;
            if leg.receive_before_boost <= Decimal::ZERO {
                return Err(negative(leg.receive_before_boost));
            }
            if let Some(b) = leg.boost {
                if b.cost >= leg.receive_before_boost {
                    return Err(Failure::GasBoostGreaterThanReceiveAmount(GasBoostGreaterThanReceiveAmount::new(
                        decimal_string(b.cost),
                        decimal_string(leg.receive_before_boost),
                    ))
                    .into());
                }
            }
            let receive = if route.post_swap() {
                swap_out(leg.receive, p_b_out, p_out, swap_fee, receive_dp)?
            } else {
                leg.receive
            };
            if receive <= Decimal::ZERO {
                return Err(negative(receive));
            }
            check_withdraw_limit(route, receive)?;
            (pay, receive, leg)
        }
        QuoteMode::Receive => {
            let receive = amount;
            check_withdraw_limit(route, receive)?;
            let bridge_receive =
                if route.post_swap() { swap_in_for(receive, p_b_out, p_out, swap_fee, bridge_dp)? } else { receive };
            let leg = pricing.at_receive(bridge_receive)?;
            let pay = if route.pre_swap() { swap_in_for(leg.pay, p_in, p_b_in, swap_fee, pay_dp)? } else { leg.pay };
            check_deposit_limit(route, pay)?;
            if req.is_sda {
                check_sda_limits(route, pay)?;
            }
            (pay, receive, leg)
        }
    };
    let min_receive = floor_div(
        mul(receive, Decimal::ONE_HUNDRED - fees.swap_slippage_percentage)?,
        Decimal::ONE_HUNDRED,
        receive_dp,
    )?;
    Ok(Priced { pay, receive, min_receive, leg })
}
