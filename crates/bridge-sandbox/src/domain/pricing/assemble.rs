//! A priced quote written as the contract's quote variants: [`BridgeQuote`] (the members every quote has and the
//! bridged token), [`DepositAddressBridgeQuote`] (the same members under its own tag, a generated conversion), and
//! [`BridgeSwapQuote`] (those members and the swaps'). Typed throughout: the compiler checks every member.

use bridge_contract::{
    BridgeQuote, BridgeSwapQuote, DateString, DecimalNumber, DepositAddressBridgeQuote, GasBoost, Promotion, QuoteFees,
    SponsoredFees,
};
use rust_decimal::Decimal;

use super::exact::{decimal_string, usd_of};
use super::failure::PricingResult;
use super::price::Priced;
use super::route::{Request, Route};
use super::{QuoteContext, QUOTE_LIFETIME_MS};
use crate::domain::catalogue::{usd_number, Family};

impl Priced {
    /// The fee breakdown, in the bridged token (USD values at its price on chainIn).
    fn fees(&self, ctx: &QuoteContext, route: &Route) -> PricingResult<QuoteFees> {
        let settings = ctx.catalogue.fees();
        let leg = &self.leg;
        let p = route.bridge_in.usd_price;
        Ok(QuoteFees {
            fee: decimal_string(leg.fee),
            gas_fee: decimal_string(leg.gas_fee),
            source_gas_fee: decimal_string(leg.source_gas_fee),
            platform_fee: decimal_string(leg.platform_fee),
            percentage_fee: decimal_string(leg.percentage_fee),
            fee_usd: usd_of(leg.fee, p)?,
            gas_fee_usd: usd_of(leg.gas_fee, p)?,
            source_gas_fee_usd: usd_of(leg.source_gas_fee, p)?,
            platform_fee_usd: usd_of(leg.platform_fee, p)?,
            percentage_fee_usd: usd_of(leg.percentage_fee, p)?,
            percentage_fee_amount: (settings.percentage_fee > Decimal::ZERO)
                .then(|| usd_number(settings.percentage_fee)),
            percentage_fee_threshold: settings.percentage_fee_threshold_usd.map(usd_number),
            sponsored_fees: Some(SponsoredFees {
                fee: decimal_string(leg.sponsored_fee),
                gas_fee: decimal_string(leg.sponsored_gas_fee),
                platform_fee: decimal_string(leg.sponsored_platform_fee),
                percentage_fee: decimal_string(Decimal::ZERO),
                source_gas_fee: decimal_string(leg.sponsored_source_gas_fee),
                fee_usd: usd_of(leg.sponsored_fee, p)?,
                gas_fee_usd: usd_of(leg.sponsored_gas_fee, p)?,
                platform_fee_usd: usd_of(leg.sponsored_platform_fee, p)?,
                percentage_fee_usd: DecimalNumber::ZERO,
                source_gas_fee_usd: usd_of(leg.sponsored_source_gas_fee, p)?,
            }),
        })
    }

    /// The `bridge` variant: the members every quote has, and the bridged token.
    pub(super) fn bridge_quote(&self, ctx: &QuoteContext, route: &Route, req: &Request) -> PricingResult<BridgeQuote> {
        let leg = &self.leg;
        let (speed, duration) = ctx
            .catalogue
            .route_timing(&route.chain_in.id, &route.chain_out.id)
            .map_or((None, None), |(s, d)| (Some(s), DecimalNumber::try_from(d as f64).ok()));
        let expires_at =
            DateString::from_millis(ctx.now.millis().saturating_add(QUOTE_LIFETIME_MS)).unwrap_or(DateString::MAX);
        // Too many members for a generated constructor: a literal, checked member for member by the compiler.
        Ok(BridgeQuote {
            tag: Default::default(),
            chain_in: route.chain_in.id.clone(),
            chain_out: route.chain_out.id.clone(),
            pay_amount: decimal_string(self.pay),
            pay_amount_usd: usd_of(self.pay, route.token_in.usd_price)?,
            receive_amount: decimal_string(self.receive),
            receive_amount_usd: usd_of(self.receive, route.token_out.usd_price)?,
            fees: self.fees(ctx, route)?,
            depositor: req.depositor.clone(),
            recipient: req.recipient.clone(),
            expires_at,
            quote_id: ctx.quote_id.clone(),
            promotion: leg
                .promotion
                .as_ref()
                .map(|p| Promotion { name: p.name.clone(), max_limit_usd: p.max_limit_usd.map(usd_number) }),
            gas_boost: leg.boost.map(|b| GasBoost {
                amount_native: decimal_string(b.amount_native),
                amount_native_usd: usd_number(b.native_usd),
                amount_native_token_cost: decimal_string(b.cost),
            }),
            speed,
            estimated_duration: duration,
            post_bridge_data: req.post_bridge_data.clone(),
            webhook_url: req.webhook_url.clone(),
            token: route.token_in.symbol.clone(),
        })
    }

    /// The `depositAddressBridge` variant: the `bridge` variant's members under its own tag.
    pub(super) fn deposit_address_quote(
        &self,
        ctx: &QuoteContext,
        route: &Route,
        req: &Request,
    ) -> PricingResult<DepositAddressBridgeQuote> {
        Ok(DepositAddressBridgeQuote::from(&self.bridge_quote(ctx, route, req)?))
    }

    /// The `bridgeSwap` variant: the members every quote has, and the swaps' (the bridge token, the bridged leg's
    /// amounts, the minimum received and the prices).
    pub(super) fn bridge_swap_quote(
        &self,
        ctx: &QuoteContext,
        route: &Route,
        req: &Request,
    ) -> PricingResult<BridgeSwapQuote> {
        let q = self.bridge_quote(ctx, route, req)?;
        Ok(BridgeSwapQuote {
            tag: Default::default(),
            chain_in: q.chain_in,
            chain_out: q.chain_out,
            pay_amount: q.pay_amount,
            pay_amount_usd: q.pay_amount_usd,
            receive_amount: q.receive_amount,
            receive_amount_usd: q.receive_amount_usd,
            fees: q.fees,
            depositor: q.depositor,
            recipient: q.recipient,
            expires_at: q.expires_at,
            quote_id: q.quote_id,
            promotion: q.promotion,
            gas_boost: q.gas_boost,
            speed: q.speed,
            estimated_duration: q.estimated_duration,
            post_bridge_data: q.post_bridge_data,
            webhook_url: q.webhook_url,
            token_in: route.token_in.symbol.clone(),
            token_out: route.token_out.symbol.clone(),
            bridge_token: route.bridge_in.symbol.clone(),
            bridge_pay_amount: decimal_string(self.leg.pay),
            bridge_pay_amount_usd: usd_of(self.leg.pay, route.bridge_in.usd_price)?,
            bridge_receive_amount: decimal_string(self.leg.receive),
            min_receive_amount: decimal_string(self.min_receive),
            min_receive_amount_usd: usd_of(self.min_receive, route.token_out.usd_price)?,
            usd_price_token_in: usd_number(route.token_in.usd_price),
            usd_price_token_out: usd_number(route.token_out.usd_price),
            is_atomic_swap: Some(route.chain_in.family == Family::Evm),
        })
    }
}
