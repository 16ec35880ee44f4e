//! The bridged leg: its fees (gas, source gas, platform with promotions, percentage with its threshold, sponsored
//! fees) and the gas boost, in `pay` mode and solved backwards in `receive` mode.

use bridge_contract::DecimalString;
use rust_decimal::Decimal;

use super::exact::{add, ceil_div, mul, sub, unit};
use super::failure::{invalid, out_of_range, shown, PricingResult};
use super::route::Route;
use super::QuoteContext;
use crate::domain::catalogue::{Chain, FeeSettings, PromotionSetting, Sponsorship};

#[derive(Debug, Clone, Copy)]
pub(super) struct Boost {
    pub(super) amount_native: Decimal,
    pub(super) native_usd: Decimal,
    pub(super) cost: Decimal,
}

/// The gas boost of `amountNative` on `chain_out`, paid in a token of `price` at `dp`.
pub(super) fn gas_boost(
    value: Option<&DecimalString>,
    chain_out: &Chain,
    price: Decimal,
    dp: u32,
) -> PricingResult<Option<Boost>> {
    let Some(value) = value else { return Ok(None) };
    let n = value.to_decimal().map_err(|e| invalid(out_of_range("amountNative", value, &e)))?.normalize();
    if n.is_sign_negative() && !n.is_zero() {
        return Err(invalid(format!("`amountNative` must not be negative (got {})", shown(&value.to_string()))));
    }
    if n.is_zero() {
        return Ok(None);
    }
    if n.scale() > chain_out.native_decimals {
        return Err(invalid(format!(
            "`amountNative` {} has more than {} decimal places, the precision of {} on {}",
            shown(&value.to_string()),
            chain_out.native_decimals,
            chain_out.native_symbol,
            chain_out.id
        )));
    }
    let native_usd = mul(n, chain_out.native_usd_price)?;
    let cost = ceil_div(native_usd, price, dp)?;
    Ok(Some(Boost { amount_native: n, native_usd, cost }))
}

/// The priced bridged leg, in the bridged token.
#[derive(Debug, Clone)]
pub(super) struct Leg {
    pub(super) pay: Decimal,
    /// `pay − fee`.
    pub(super) receive_before_boost: Decimal,
    /// `pay − fee − boost cost`.
    pub(super) receive: Decimal,
    pub(super) gas_fee: Decimal,
    pub(super) source_gas_fee: Decimal,
    pub(super) platform_fee: Decimal,
    pub(super) percentage_fee: Decimal,
    pub(super) fee: Decimal,
    pub(super) sponsored_gas_fee: Decimal,
    pub(super) sponsored_source_gas_fee: Decimal,
    pub(super) sponsored_platform_fee: Decimal,
    pub(super) sponsored_fee: Decimal,
    pub(super) promotion: Option<PromotionSetting>,
    pub(super) boost: Option<Boost>,
}

/// What prices the bridged leg: the fees at full value (before promotion and sponsorship).
pub(super) struct LegPricing<'a> {
    pub(super) fees: &'a FeeSettings,
    pub(super) price: Decimal,
    pub(super) dp: u32,
    pub(super) gas: Decimal,
    pub(super) source: Decimal,
    pub(super) platform: Decimal,
    pub(super) promotion: Option<&'a PromotionSetting>,
    pub(super) sponsorship: Sponsorship,
    pub(super) boost: Option<Boost>,
}

impl<'a> LegPricing<'a> {
    pub(super) fn new(ctx: &'a QuoteContext, route: &Route, is_sda: bool, boost: Option<Boost>) -> PricingResult<Self> {
        let fees = ctx.catalogue.fees();
        let (price, dp) = (route.bridge_in.usd_price, route.bridge_dp());
        let source = if is_sda { ceil_div(route.chain_in.sweep_fee_usd, price, dp)? } else { Decimal::ZERO };
        Ok(LegPricing {
            fees,
            price,
            dp,
            gas: ceil_div(route.chain_out.gas_fee_usd, price, dp)?,
            source,
            platform: ceil_div(fees.platform_fee_usd, price, dp)?,
            promotion: fees.promotions.iter().find(|p| p.covers(&route.chain_out.id)),
            sponsorship: ctx.catalogue.sponsorship(ctx.project_id),
            boost,
        })
    }

    pub(super) fn cost(&self) -> Decimal {
        self.boost.map_or(Decimal::ZERO, |b| b.cost)
    }

    pub(super) fn promotion_applies(&self, pay_usd: Decimal) -> bool {
        self.promotion.is_some_and(|p| p.max_limit_usd.is_none_or(|limit| pay_usd <= limit))
    }

    pub(super) fn percentage_applies(&self, pay_usd: Decimal) -> bool {
        self.fees.percentage_fee > Decimal::ZERO && self.fees.percentage_fee_threshold_usd.is_none_or(|t| pay_usd > t)
    }

    pub(super) fn percentage_fee(&self, pay: Decimal) -> PricingResult<Decimal> {
        Ok(ceil_div(mul(pay, self.fees.percentage_fee)?, Decimal::ONE_HUNDRED, self.dp)?)
    }

    /// (charged gas, source, platform), (sponsored gas, source, platform).
    pub(super) fn fixed(&self, promotion: bool) -> ([Decimal; 3], [Decimal; 3]) {
        let platform = if promotion { Decimal::ZERO } else { self.platform };
        let split = |value: Decimal, sponsored: bool| {
            if sponsored {
                (Decimal::ZERO, value)
            } else {
                (value, Decimal::ZERO)
            }
        };
        let (g, gs) = split(self.gas, self.sponsorship.gas_fee);
        let (s, ss) = split(self.source, self.sponsorship.source_gas_fee);
        let (p, ps) = split(platform, self.sponsorship.platform_fee);
        ([g, s, p], [gs, ss, ps])
    }

    pub(super) fn leg(&self, pay: Decimal, promotion: bool, percentage_fee: Decimal) -> PricingResult<Leg> {
        let ([gas, source, platform], [s_gas, s_source, s_platform]) = self.fixed(promotion);
        let fee = add(add(add(gas, source)?, platform)?, percentage_fee)?;
        let sponsored_fee = add(add(s_gas, s_source)?, s_platform)?;
        let receive_before_boost = sub(pay, fee)?;
        let receive = sub(receive_before_boost, self.cost())?;
        Ok(Leg {
            pay,
            receive_before_boost,
            receive,
            gas_fee: gas,
            source_gas_fee: source,
            platform_fee: platform,
            percentage_fee,
            fee,
            sponsored_gas_fee: s_gas,
            sponsored_source_gas_fee: s_source,
            sponsored_platform_fee: s_platform,
            sponsored_fee,
            promotion: if promotion { self.promotion.cloned() } else { None },
            boost: self.boost,
        })
    }

    /// `pay` mode.
    pub(super) fn at_pay(&self, pay: Decimal) -> PricingResult<Leg> {
        let pay_usd = mul(pay, self.price)?;
        let percentage = if self.percentage_applies(pay_usd) { self.percentage_fee(pay)? } else { Decimal::ZERO };
        self.leg(pay, self.promotion_applies(pay_usd), percentage)
    }

    /// `receive` mode: the smallest pay amount whose `pay`-mode leg receives exactly `receive`.
    pub(super) fn at_receive(&self, receive: Decimal) -> PricingResult<Leg> {
        let target = add(receive, self.cost())?;
        let (mut promotion, mut percentage) = (self.promotion.is_some(), false);
        // Each pass can only raise the pay amount, and each decision, once flipped, stays consistent.
        for _ in 0..4 {
            let [g, s, p] = self.fixed(promotion).0;
            let base = add(add(add(target, g)?, s)?, p)?;
            let pay = if percentage { self.solve_percentage(base)? } else { base };
            let pay_usd = mul(pay, self.price)?;
            if promotion && !self.promotion_applies(pay_usd) {
                promotion = false;
                continue;
            }
            if !percentage && self.percentage_applies(pay_usd) {
                percentage = true;
                continue;
            }
            let fee = if percentage { self.percentage_fee(pay)? } else { Decimal::ZERO };
            let leg = self.leg(pay, promotion, fee)?;
            if leg.receive != receive {
                return Err(invalid("internal error: receive-mode pricing is inconsistent"));
            }
            return Ok(leg);
        }
        Err(invalid("internal error: receive-mode pricing did not converge"))
    }

    /// The smallest `P` (at `dp`) with `P − ceil(P × r / 100) = base`.
    pub(super) fn solve_percentage(&self, base: Decimal) -> PricingResult<Decimal> {
        let u = unit(self.dp);
        let net = |p: Decimal| -> PricingResult<Decimal> { Ok(sub(p, self.percentage_fee(p)?)?) };
        let mut p =
            ceil_div(mul(base, Decimal::ONE_HUNDRED)?, Decimal::ONE_HUNDRED - self.fees.percentage_fee, self.dp)?;
        for _ in 0..64 {
            if net(p)? >= base {
                break;
            }
            p = add(p, u)?;
        }
        for _ in 0..64 {
            let lower = sub(p, u)?;
            if lower > Decimal::ZERO && net(lower)? >= base {
                p = lower;
            } else {
                break;
            }
        }
        if net(p)? != base {
            return Err(invalid("internal error: no exact pay amount for the percentage fee"));
        }
        Ok(p.normalize())
    }
}
