//! The sandbox's pricing model: how bridge, bridge-swap and deposit-address quotes are computed from the
//! [`Catalogue`]. This text is the contract of the sandbox.
//!
//! # Arithmetic and rounding
//!
//! * All arithmetic is exact decimal arithmetic (`rust_decimal`). A product or sum that `rust_decimal`
//!   could only round (more than 28 decimal places or a 96-bit mantissa) is never rounded silently: the quote
//!   is refused with 422 `InvalidRequest` (only absurd amounts get there: the limits stop ordinary ones).
//! * Every token amount is a multiple of its **precision**: a plain bridge uses the route precision
//!   `d = min(decimals on chainIn, decimals on chainOut)` for every amount (`USDT` BINANCE → ETHEREUM: 6);
//!   in a bridge-swap the pay amount has tokenIn's decimals when a swap precedes the bridge, the receive
//!   amount has tokenOut's decimals when a swap follows it, and the bridge-token amounts (and the fees) have
//!   the bridge token's route precision. A requested `amount` with more decimal places than its precision is
//!   refused with `InvalidRequest` (it is never rounded), except for deposits into deposit addresses, which
//!   are rounded down to the precision.
//! * **Fees are rounded up** to the precision (`ceil(usd / price)`), **amounts received are rounded down**
//!   (swap outputs, `minReceiveAmount`); sums and differences are exact.
//! * Amounts are written without trailing zeros (`"100"`, `"0.5"`).
//! * Every `...Usd` member is `amount × usdPrice` of the token the amount is in (fees: the bridged token;
//!   `amountNativeUsd`: the destination chain's native token; `bridgePayAmountUsd`: the bridge token;
//!   `payAmountUsd`: tokenIn; `receiveAmountUsd`, `minReceiveAmountUsd`: tokenOut), computed exactly and
//!   written as the JSON number nearest to that exact decimal ([`usd_number`]: the correctly rounded
//!   `f64`, round-half-even). Its JSON text is the exact decimal whenever that has at most 15 significant
//!   digits. `usdPriceTokenIn`/`usdPriceTokenOut` are the catalogue prices, converted the same way. The
//!   USD members of limit errors are decimal strings and exact.
//!
//! # Fees of the bridged leg (in the bridged token, precision `d`, `p` its USD price on chainIn)
//!
//! * `gasFee` = `ceil(chainOut.gas_fee_usd / p)`: the destination leg;
//! * `sourceGasFee` = `ceil(chainIn.sweep_fee_usd / p)` for smart-deposit-address quotes (`isSda: "true"`
//!   and deposits into deposit addresses), else 0;
//! * `platformFee` = `ceil(fees.platform_fee_usd / p)`, or 0 when a **promotion** applies: the first
//!   promotion whose `chains_out` contains chainOut (or is empty) applies when the bridged pay amount is worth
//!   at most its `max_limit_usd` (always when that is absent); the quote then carries
//!   `promotion {name, maxLimitUsd}`;
//! * `percentageFee` = `ceil(payAmount × percentage_fee / 100)` (`percentage_fee` in percent, `0.1` =
//!   0.1 %) when the bridged pay amount is worth **more** than `percentage_fee_threshold_usd` (always when
//!   there is no threshold), else 0; `percentageFeeAmount` is the configured percentage (null when it is
//!   0) and `percentageFeeThreshold` the threshold (null when absent);
//! * **sponsored fees**: for a project listed in `[projects]`, each sponsored fee (`gasFee`,
//!   `sourceGasFee`, `platformFee` as configured) is charged as 0 and its value moves to the same member of
//!   `sponsoredFees`; `sponsoredFees.percentageFee` is always 0 and `sponsoredFees.fee` is the sum of the
//!   sponsored members. `sponsoredFees` is always present (all zeros for projects without sponsorship);
//! * `fee` = `gasFee + sourceGasFee + platformFee + percentageFee`: what the end customer pays, exactly.
//!
//! # Gas boost
//!
//! With `amountNative` (> 0; at most the native token's decimals) the quote delivers that much of
//! chainOut's native token; `gasBoost` = `{amountNative, amountNativeUsd = amountNative × native price,
//! amountNativeTokenCost = ceil(amountNativeUsd / p)}`. The cost is not part of `fee`; it is deducted from
//! what is received. `gasBoost` is absent when `amountNative` is absent or zero.
//!
//! # Invariants (exact, in decimal)
//!
//! * bridge and deposit-address quotes:
//!   `payAmount = receiveAmount + fee + gasBoost.amountNativeTokenCost` (cost 0 without a gas boost);
//! * bridge-swap quotes: `bridgePayAmount = bridgeReceiveAmount + fee + amountNativeTokenCost`, fees in the
//!   bridge token;
//! * `fee = gasFee + sourceGasFee + platformFee + percentageFee`;
//!   `sponsoredFees.fee = sponsoredFees.gasFee + sponsoredFees.sourceGasFee + sponsoredFees.platformFee`.
//!
//! # Modes
//!
//! * `pay`: `payAmount = amount`; every fee is computed from it and `receiveAmount = payAmount − fee − cost`.
//! * `receive`: `receiveAmount = amount`, and `payAmount` is the **smallest** amount of the precision whose
//!   pay-mode quote receives exactly `amount`: the promotion and the percentage threshold are decided on
//!   that pay amount, and the percentage fee is solved exactly (`P − ceil(P × r) = receive + fixed fees +
//!   cost`, `r = percentage_fee / 100`, always has a solution, since the left side grows by 0 or 1 unit
//!   per unit of `P`). For a plain bridge, quoting `pay` with the resulting `payAmount` gives back the same
//!   quote.
//!
//! # Bridge-swap quotes (`POST /bridge/quote/bridge-swap/user`)
//!
//! * the same symbol on both sides, bridgeable on both chains → the `bridge` variant (a plain bridge);
//!   `isSda: "true"` → the `depositAddressBridge` variant (a plain bridge priced as a smart-deposit-address
//!   quote; with two different tokens an SDA quote is the `bridgeSwap` variant priced with the SDA fees and
//!   limits, since only that variant can describe the swaps);
//! * otherwise `bridgeSwap`: swap tokenIn → bridge token on chainIn, bridge, swap bridge token → tokenOut on
//!   chainOut. The bridge token is tokenIn when it is bridgeable on both chains, else tokenOut when it is,
//!   else the first of `swap.bridge_token_preference` (USDC, USDT, ETH) bridgeable on both chains, else the
//!   first such symbol alphabetically. A swap of `x` at swap fee `f` % gives
//!   `floor(x × priceIn × (100 − f) / (priceOut × 100))` (at the output's precision), computed exactly;
//!   when tokenIn (tokenOut) is the bridge token there is no swap on that side. `bridgePayAmount` is the
//!   pre-swap's output, `bridgeReceiveAmount` the bridged leg's receive amount (fees as above, in the bridge
//!   token), `receiveAmount` the post-swap's output, `minReceiveAmount =
//!   floor(receiveAmount × (100 − slippage) / 100)`; `isAtomicSwap` is true when chainIn is an EVM chain.
//! * in `receive` mode the swaps are sized backwards with the smallest input whose output is at least the
//!   amount needed (`receiveAmount = amount`; the modelled swap output may exceed it by less than the value
//!   of one unit of the swap's input token, which the sandbox keeps as dust), so the exact invariant is the
//!   bridged leg's. [`swap_legs`] gives the two swaps as the `SwapQuote` objects of events.
//!
//! # Speed, duration, expiry
//!
//! `speed` is the slower and `estimatedDuration` the longer of the two chains' settings; `expiresAt` = now +
//! [`QUOTE_LIFETIME_MS`] (5 minutes); `quoteId` is the context's; `postBridgeData` and `webhookUrl` are
//! echoed from the request.
//!
//! # Errors (bodies are the contract's structs)
//!
//! Checked in this order:
//!
//! 1. the route: 422 `InvalidRequest{message}` for an unknown chainIn/chainOut; then (bridge)
//!    `InvalidRequest` for the same chain on both sides or a token that is not on both chains or not
//!    bridgeable, or (bridge-swap) 422 `SameChainSwapNotAvailable` for the same chain and 404
//!    `NoRouteFoundError` for tokenIn unknown on chainIn or tokenOut unknown on chainOut; `InvalidRequest` for
//!    a depositor (recipient, refundAddress) invalid for chainIn's (chainOut's, chainIn's) family;
//!    (bridge-swap) 422 `NoBridgeTokenFoundError` when a swap is needed and no token is bridgeable on both
//!    chains;
//! 2. the amounts: `InvalidRequest` for an `amount` ≤ 0, beyond `rust_decimal` (`DecimalRangeError`:
//!    `"1e40"`) or with more decimal places than its precision, and for an `amountNative` that is negative,
//!    beyond range or more precise than the native token;
//! 3. the limits, in `pay` mode: `DepositLimitReached` (payAmount > the chainIn token's `max_deposit`, with both USD
//!    values), `SdaDepositBelowMinimum` / `SdaDepositLimitExceeded` (SDA quotes: payAmountUsd outside the
//!    chainIn token's `[min_deposit_usd, max_deposit_usd]`), `NegativeReceiveAmount` (the bridged leg's
//!    receive amount before the gas boost is ≤ 0), `GasBoostGreaterThanReceiveAmount` (amountNativeTokenCost
//!    ≥ that receive amount, so nothing would be left), `NegativeReceiveAmount` (a post-swap output of 0),
//!    `WithdrawLimitReached` (receiveAmount > the chainOut token's `max_withdraw`); in `receive` mode:
//!    `WithdrawLimitReached` first (the receive amount is the input), then
//!    `DepositLimitReached` and the SDA limits on the solved pay amount.
//!
//! Deposits into deposit addresses ([`quote_deposit`]) map these to reject reasons: `UNSUPPORTED_TOKEN` (not
//! in the address's supported tokens), `UNDER_MIN` (`SdaDepositBelowMinimum`, `NegativeReceiveAmount`,
//! `GasBoostGreaterThanReceiveAmount`, an amount ≤ 0 or below one unit of the route's precision),
//! `OVER_MAX` (`SdaDepositLimitExceeded`, `DepositLimitReached`, `WithdrawLimitReached`, an amount beyond
//! range), `NO_ROUTE_FOUND` (no route or bridge token), `TERMINAL_PROCESSING_ISSUE` (anything else).
//!
//! The model's parts: `route` (the request and its route), `leg` (the bridged leg's fees and gas boost),
//! `price` (both modes through the swaps, and the limits), `exact` (exact decimal arithmetic), `assemble`
//! (the contract's quote variants) and `failure` (every refusal, as the operations' error bodies).

mod assemble;
mod exact;
mod failure;
mod leg;
mod price;
mod route;

use bridge_contract::{
    BridgeQuote, BridgeQuoteRequest, BridgeSwapQuote, BridgeSwapQuoteRequest, DateString, DecimalString, QuoteMode,
    QuoteResponse, RejectReason, SameChainSwapNotAvailable, SwapQuote,
};
use rust_decimal::Decimal;

use crate::domain::catalogue::{usd_number, Catalogue};
use exact::{decimal_string, floor_div, mul};
pub use failure::Refusal;
use failure::{invalid, no_route, Failure, PricingResult};
use price::price;
use route::{check_address, is_sda, known_chain, plain_route, route_between, Request};

/// The quote lifetime (expiresAt = now + this): 5 minutes.
pub const QUOTE_LIFETIME_MS: i64 = 5 * 60 * 1000;

/// What a quote is made in.
pub struct QuoteContext<'a> {
    pub catalogue: &'a Catalogue,
    /// Sponsored-fee projects are configured in the catalogue's fee settings.
    pub project_id: &'a str,
    pub now: DateString,
    pub quote_id: String,
}

/// POST /bridge/quote/user. Never panics; every refusal is a documented error (422 InvalidRequest for an
/// unsupported chain/token, limits, NegativeReceiveAmount, GasBoostGreaterThanReceiveAmount, Sda* limits).
pub fn quote_bridge(ctx: &QuoteContext, req: &BridgeQuoteRequest) -> Result<BridgeQuote, Refusal> {
    bridge_quote(ctx, req)
}

/// POST /bridge/quote/bridge-swap/user: `bridge` variant for the same token, `bridgeSwap` otherwise,
/// `depositAddressBridge` when isSda is "true".
pub fn quote_bridge_swap(ctx: &QuoteContext, req: &BridgeSwapQuoteRequest) -> Result<QuoteResponse, Refusal> {
    bridge_swap_quote(ctx, req)
}

/// A deposit into a deposit address, to be priced by [`quote_deposit`].
#[derive(Debug, Clone, Copy)]
pub struct DepositQuote<'a> {
    pub deposit_chain: &'a str,
    /// Where the deposit is bridged to (the address's destination, or its route's).
    pub destination_chain: &'a str,
    pub destination_address: &'a str,
    /// The deposited token's symbol.
    pub token: &'a str,
    pub amount: &'a DecimalString,
    /// The token to receive, when the address swaps.
    pub token_out: Option<&'a str>,
    /// The deposit's sender, taken as is.
    pub depositor: &'a str,
}

/// A deposit of `amount` `token` into a deposit address: the quote the bridge is made from, or the reject reason
/// (UNSUPPORTED_TOKEN, UNDER_MIN, OVER_MAX by the token's USD limits).
///
/// Priced as a `pay` quote with `isSda`, without gas boost, `depositor` taken as is (the sender, not
/// validated); the amount is rounded down to the route's precision. The answer is `depositAddressBridge`
/// when the deposited token is bridged as such, `bridgeSwap` when it is swapped (`token_out` differs, or
/// the token is not bridgeable).
pub fn quote_deposit(ctx: &QuoteContext, deposit: &DepositQuote) -> Result<QuoteResponse, RejectReason> {
    let DepositQuote { deposit_chain, destination_chain, destination_address, token, amount, token_out, depositor } =
        *deposit;
    let catalogue = ctx.catalogue;
    if !catalogue.supported_tokens(deposit_chain, destination_chain, token_out).iter().any(|t| t.symbol == token) {
        return Err(RejectReason::UnsupportedToken);
    }
    match amount.to_decimal() {
        Ok(a) if a <= Decimal::ZERO => return Err(RejectReason::UnderMin),
        Ok(_) => {}
        Err(e) => {
            return Err(match e.kind() {
                bridge_contract::scalars::DecimalRangeErrorKind::TooManyDigits { .. } => RejectReason::OverMax,
                _ => RejectReason::TerminalProcessingIssue,
            })
        }
    }
    let (Some(chain_in), Some(chain_out)) = (catalogue.chain(deposit_chain), catalogue.chain(destination_chain)) else {
        return Err(RejectReason::UnsupportedToken);
    };
    let token_out = token_out.unwrap_or(token);
    let request = Request {
        mode: QuoteMode::Pay,
        amount,
        amount_native: None,
        is_sda: true,
        round_amount_down: true,
        depositor: depositor.to_owned(),
        recipient: destination_address.to_owned(),
        post_bridge_data: None,
        webhook_url: None,
    };
    let answer = (|| -> PricingResult<QuoteResponse> {
        let (token_in, token_out) = (
            chain_in.token(token).ok_or_else(|| no_route(token, token_out, chain_in, chain_out))?,
            chain_out.token(token_out).ok_or_else(|| no_route(token, token_out, chain_in, chain_out))?,
        );
        let route = route_between(catalogue, chain_in, chain_out, token_in, token_out)?;
        let priced = price(ctx, &route, &request)?;
        Ok(if route.is_swap() {
            QuoteResponse::BridgeSwap(priced.bridge_swap_quote(ctx, &route, &request)?)
        } else {
            QuoteResponse::DepositAddressBridge(priced.deposit_address_quote(ctx, &route, &request)?)
        })
    })();
    answer.map_err(Refusal::reject_reason)
}

/// The swaps of a bridge-swap quote as the `SwapQuote` objects of events (`preSwap`, `postSwap`): `None`
/// for a side without a swap (or chains/tokens no longer in the catalogue). The pre-swap's `minAmountOut`
/// applies the slippage to `bridgePayAmount`; the post-swap's is `minReceiveAmount`.
pub fn swap_legs(catalogue: &Catalogue, quote: &BridgeSwapQuote) -> (Option<SwapQuote>, Option<SwapQuote>) {
    let fees = catalogue.fees();
    let price = |chain: &str, symbol: &str| catalogue.chain(chain).and_then(|c| c.token(symbol)).map(|t| t.usd_price);
    let usd = |amount: &DecimalString, p: Decimal| {
        amount.to_decimal().ok().and_then(|a| mul(a, p).ok()).map(usd_number).unwrap_or_default()
    };
    let pre = (quote.token_in != quote.bridge_token).then(|| {
        let p_in = price(&quote.chain_in, &quote.token_in)?;
        let p_b = price(&quote.chain_in, &quote.bridge_token)?;
        let dp = catalogue.chain(&quote.chain_in)?.token(&quote.bridge_token)?.decimals;
        let out = quote.bridge_pay_amount.to_decimal().ok()?;
        let min = mul(out, Decimal::ONE_HUNDRED - fees.swap_slippage_percentage)
            .and_then(|n| floor_div(n, Decimal::ONE_HUNDRED, dp))
            .ok()?;
        let min = decimal_string(min);
        Some(SwapQuote {
            token_in: quote.token_in.clone(),
            token_out: quote.bridge_token.clone(),
            amount_in: quote.pay_amount.clone(),
            amount_in_usd: usd(&quote.pay_amount, p_in),
            amount_out: quote.bridge_pay_amount.clone(),
            amount_out_usd: usd(&quote.bridge_pay_amount, p_b),
            min_amount_out_usd: usd(&min, p_b),
            min_amount_out: min,
            aggregator: fees.aggregator,
        })
    });
    let post = (quote.token_out != quote.bridge_token).then(|| {
        let p_b = price(&quote.chain_out, &quote.bridge_token)?;
        let p_out = price(&quote.chain_out, &quote.token_out)?;
        Some(SwapQuote {
            token_in: quote.bridge_token.clone(),
            token_out: quote.token_out.clone(),
            amount_in: quote.bridge_receive_amount.clone(),
            amount_in_usd: usd(&quote.bridge_receive_amount, p_b),
            amount_out: quote.receive_amount.clone(),
            amount_out_usd: usd(&quote.receive_amount, p_out),
            min_amount_out: quote.min_receive_amount.clone(),
            min_amount_out_usd: quote.min_receive_amount_usd,
            aggregator: fees.aggregator,
        })
    });
    (pre.flatten(), post.flatten())
}

fn bridge_quote(ctx: &QuoteContext, req: &BridgeQuoteRequest) -> PricingResult<BridgeQuote> {
    let catalogue = ctx.catalogue;
    let chain_in = known_chain(catalogue, "chainIn", &req.chain_in)?;
    let chain_out = known_chain(catalogue, "chainOut", &req.chain_out)?;
    if chain_in.id == chain_out.id {
        return Err(invalid(format!(
            "chainIn and chainOut are both {}: a bridge needs two different chains",
            chain_in.id
        )));
    }
    let route = plain_route(chain_in, chain_out, &req.token)?;
    check_address(catalogue, chain_in, "depositor", &req.depositor)?;
    check_address(catalogue, chain_out, "recipient", &req.recipient)?;
    let request = Request {
        mode: req.mode,
        amount: &req.amount,
        amount_native: req.amount_native.as_ref(),
        is_sda: is_sda(req.is_sda),
        round_amount_down: false,
        depositor: req.depositor.clone(),
        recipient: req.recipient.clone(),
        post_bridge_data: req.post_bridge_data.clone(),
        webhook_url: req.webhook_url.clone(),
    };
    price(ctx, &route, &request)?.bridge_quote(ctx, &route, &request)
}

fn bridge_swap_quote(ctx: &QuoteContext, req: &BridgeSwapQuoteRequest) -> PricingResult<QuoteResponse> {
    let catalogue = ctx.catalogue;
    let chain_in = known_chain(catalogue, "chainIn", &req.chain_in)?;
    let chain_out = known_chain(catalogue, "chainOut", &req.chain_out)?;
    if chain_in.id == chain_out.id {
        return Err(Failure::SameChainSwapNotAvailable(SameChainSwapNotAvailable::new(format!(
            "chainIn and chainOut are both {}: same-chain swaps are not available",
            chain_in.id
        )))
        .into());
    }
    let token_in =
        chain_in.token(&req.token_in).ok_or_else(|| no_route(&req.token_in, &req.token_out, chain_in, chain_out))?;
    let token_out =
        chain_out.token(&req.token_out).ok_or_else(|| no_route(&req.token_in, &req.token_out, chain_in, chain_out))?;
    check_address(catalogue, chain_in, "depositor", &req.depositor)?;
    check_address(catalogue, chain_out, "recipient", &req.recipient)?;
    if let Some(refund) = &req.refund_address {
        check_address(catalogue, chain_in, "refundAddress", refund)?;
    }
    let route = route_between(catalogue, chain_in, chain_out, token_in, token_out)?;
    let request = Request {
        mode: req.mode,
        amount: &req.amount,
        amount_native: req.amount_native.as_ref(),
        is_sda: is_sda(req.is_sda),
        round_amount_down: false,
        depositor: req.depositor.clone(),
        recipient: req.recipient.clone(),
        post_bridge_data: req.post_bridge_data.clone(),
        webhook_url: req.webhook_url.clone(),
    };
    let priced = price(ctx, &route, &request)?;
    Ok(if route.is_swap() {
        QuoteResponse::BridgeSwap(priced.bridge_swap_quote(ctx, &route, &request)?)
    } else if request.is_sda {
        QuoteResponse::DepositAddressBridge(priced.deposit_address_quote(ctx, &route, &request)?)
    } else {
        QuoteResponse::Bridge(priced.bridge_quote(ctx, &route, &request)?)
    })
}
