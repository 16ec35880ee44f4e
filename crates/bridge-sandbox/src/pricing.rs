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

// The error types are the contract's (large) error bodies, as the interface requires.
#![allow(clippy::result_large_err)]

use bridge_contract::operations::{QuoteBridgeError, QuoteBridgeSwapError};
use bridge_contract::{
    BridgeQuote, BridgeQuoteRequest, BridgeSwapQuote, BridgeSwapQuoteRequest, DateString, DecimalNumber, DecimalString,
    DepositAddressBridgeQuote, DepositLimitReached, GasBoost, GasBoostGreaterThanReceiveAmount, InvalidRequest,
    IsSdaFlag, NegativeReceiveAmount, NoBridgeTokenFoundError, NoRouteFoundError, PostBridgeData, Promotion,
    QuoteBridgeSwapUnprocessable, QuoteBridgeUnprocessable, QuoteFees, QuoteMode, QuoteResponse, RejectReason,
    SameChainSwapNotAvailable, SdaDepositBelowMinimum, SdaDepositLimitExceeded, Speed, SponsoredFees, SwapQuote,
    WithdrawLimitReached,
};
use rust_decimal::{Decimal, RoundingStrategy};

pub use crate::catalogue::usd_number;
use crate::catalogue::{Catalogue, Chain, Family, FeeSettings, PromotionSetting, Sponsorship, Token};

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
pub fn quote_bridge(ctx: &QuoteContext, req: &BridgeQuoteRequest) -> Result<BridgeQuote, QuoteBridgeError> {
    bridge_quote(ctx, req).map_err(Failure::into_bridge_error)
}

/// POST /bridge/quote/bridge-swap/user: `bridge` variant for the same token, `bridgeSwap` otherwise,
/// `depositAddressBridge` when isSda is "true".
pub fn quote_bridge_swap(
    ctx: &QuoteContext,
    req: &BridgeSwapQuoteRequest,
) -> Result<QuoteResponse, QuoteBridgeSwapError> {
    bridge_swap_quote(ctx, req).map_err(Failure::into_bridge_swap_error)
}

/// A deposit of `amount` `token` into a deposit address: the quote the bridge is made from, or the reject reason
/// (UNSUPPORTED_TOKEN, UNDER_MIN, OVER_MAX by the token's USD limits).
///
/// Priced as a `pay` quote with `isSda`, without gas boost, `depositor` taken as is (the sender, not
/// validated); the amount is rounded down to the route's precision. The answer is `depositAddressBridge`
/// when the deposited token is bridged as such, `bridgeSwap` when it is swapped (`token_out` differs, or
/// the token is not bridgeable).
#[allow(clippy::too_many_arguments)]
pub fn quote_deposit(
    ctx: &QuoteContext,
    deposit_chain: &str,
    destination_chain: &str,
    destination_address: &str,
    token: &str,
    amount: &DecimalString,
    token_out: Option<&str>,
    depositor: &str,
) -> Result<QuoteResponse, RejectReason> {
    let cat = ctx.catalogue;
    if !cat.supported_tokens(deposit_chain, destination_chain, token_out).iter().any(|t| t.symbol == token) {
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
    let (Some(chain_in), Some(chain_out)) = (cat.chain(deposit_chain), cat.chain(destination_chain)) else {
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
    let answer = (|| -> R<QuoteResponse> {
        let (t_in, t_out) = (
            chain_in.token(token).ok_or_else(|| no_route(token, token_out, chain_in, chain_out))?,
            chain_out.token(token_out).ok_or_else(|| no_route(token, token_out, chain_in, chain_out))?,
        );
        let route = route_between(cat, chain_in, chain_out, t_in, t_out)?;
        let priced = price(ctx, &route, &request)?;
        Ok(if route.is_swap() {
            QuoteResponse::BridgeSwap(priced.bridge_swap_quote(ctx, &route, &request)?)
        } else {
            QuoteResponse::DepositAddressBridge(priced.deposit_address_quote(ctx, &route, &request)?)
        })
    })();
    answer.map_err(|f| f.reject_reason())
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
        let min = dstr(min);
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

// ---------------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------------

/// Every refusal of the pricing model, before it is put into an operation's error enum.
#[derive(Debug, Clone, PartialEq)]
enum Failure {
    InvalidRequest(InvalidRequest),
    WithdrawLimitReached(WithdrawLimitReached),
    DepositLimitReached(DepositLimitReached),
    GasBoostGreaterThanReceiveAmount(GasBoostGreaterThanReceiveAmount),
    NegativeReceiveAmount(NegativeReceiveAmount),
    SdaDepositLimitExceeded(SdaDepositLimitExceeded),
    SdaDepositBelowMinimum(SdaDepositBelowMinimum),
    NoRouteFound(NoRouteFoundError),
    SameChainSwapNotAvailable(SameChainSwapNotAvailable),
    NoBridgeTokenFound(NoBridgeTokenFoundError),
}

type R<T> = Result<T, Failure>;

impl Failure {
    fn into_bridge_error(self) -> QuoteBridgeError {
        use QuoteBridgeUnprocessable as U;
        let u = match self {
            Failure::InvalidRequest(e) => U::InvalidRequest(e),
            Failure::WithdrawLimitReached(e) => U::WithdrawLimitReached(e),
            Failure::DepositLimitReached(e) => U::DepositLimitReached(e),
            Failure::GasBoostGreaterThanReceiveAmount(e) => U::GasBoostGreaterThanReceiveAmount(e),
            Failure::NegativeReceiveAmount(e) => U::NegativeReceiveAmount(e),
            Failure::SdaDepositLimitExceeded(e) => U::SdaDepositLimitExceeded(e),
            Failure::SdaDepositBelowMinimum(e) => U::SdaDepositBelowMinimum(e),
            // Not produced by bridge quotes; kept total.
            Failure::NoRouteFound(e) => U::InvalidRequest(invalid_body(format!(
                "no route from {} on {} to {} on {}",
                e.token_in, e.chain_in, e.token_out, e.chain_out
            ))),
            Failure::SameChainSwapNotAvailable(e) => U::InvalidRequest(invalid_body(e.message)),
            Failure::NoBridgeTokenFound(e) => U::InvalidRequest(invalid_body(e.message)),
        };
        QuoteBridgeError::QuoteBridgeUnprocessable(u)
    }

    fn into_bridge_swap_error(self) -> QuoteBridgeSwapError {
        use QuoteBridgeSwapUnprocessable as U;
        let u = match self {
            Failure::NoRouteFound(e) => return QuoteBridgeSwapError::NoRouteFoundError(e),
            Failure::InvalidRequest(e) => U::InvalidRequest(e),
            Failure::WithdrawLimitReached(e) => U::WithdrawLimitReached(e),
            Failure::DepositLimitReached(e) => U::DepositLimitReached(e),
            Failure::GasBoostGreaterThanReceiveAmount(e) => U::GasBoostGreaterThanReceiveAmount(e),
            Failure::NegativeReceiveAmount(e) => U::NegativeReceiveAmount(e),
            Failure::SdaDepositLimitExceeded(e) => U::SdaDepositLimitExceeded(e),
            Failure::SdaDepositBelowMinimum(e) => U::SdaDepositBelowMinimum(e),
            Failure::SameChainSwapNotAvailable(e) => U::SameChainSwapNotAvailable(e),
            Failure::NoBridgeTokenFound(e) => U::NoBridgeTokenFoundError(e),
        };
        QuoteBridgeSwapError::QuoteBridgeSwapUnprocessable(u)
    }

    fn reject_reason(self) -> RejectReason {
        match self {
            Failure::SdaDepositBelowMinimum(_)
            | Failure::NegativeReceiveAmount(_)
            | Failure::GasBoostGreaterThanReceiveAmount(_) => RejectReason::UnderMin,
            Failure::SdaDepositLimitExceeded(_)
            | Failure::DepositLimitReached(_)
            | Failure::WithdrawLimitReached(_) => RejectReason::OverMax,
            Failure::NoRouteFound(_) | Failure::NoBridgeTokenFound(_) | Failure::SameChainSwapNotAvailable(_) => {
                RejectReason::NoRouteFound
            }
            Failure::InvalidRequest(_) => RejectReason::TerminalProcessingIssue,
        }
    }
}

fn invalid_body(message: impl Into<String>) -> InvalidRequest {
    InvalidRequest { tag: Default::default(), message: message.into() }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::InvalidRequest(invalid_body(message))
}

fn range_error() -> Failure {
    invalid("the amounts of this quote exceed exact decimal arithmetic (28 significant digits); use a smaller amount")
}

/// Why a decimal string cannot be priced, without echoing all of it.
fn out_of_range(member: &str, value: &DecimalString, e: &bridge_contract::scalars::DecimalRangeError) -> String {
    use bridge_contract::scalars::DecimalRangeErrorKind as K;
    let why = match e.kind() {
        K::TooManyDecimalPlaces { needed } => {
            format!("it has {needed} decimal places and at most 28 are supported")
        }
        K::TooManyDigits { needed } => {
            format!("its {needed} digits exceed exact decimal arithmetic (at most 79228162514264337593543950335)")
        }
        _ => "it has no exact rust_decimal value".to_owned(),
    };
    format!("`{member}` {} is out of range: {why}", shown(&value.to_string()))
}

/// `text`, cut to 64 characters for error messages.
fn shown(text: &str) -> String {
    crate::catalogue::shorten(text)
}

fn no_route(token_in: &str, token_out: &str, chain_in: &Chain, chain_out: &Chain) -> Failure {
    Failure::NoRouteFound(NoRouteFoundError {
        tag: Default::default(),
        token_in: token_in.to_owned(),
        token_out: token_out.to_owned(),
        chain_in: chain_in.id.clone(),
        chain_out: chain_out.id.clone(),
    })
}

// ---------------------------------------------------------------------------------------------------
// Exact decimal arithmetic
// ---------------------------------------------------------------------------------------------------

/// `a × b`, exact or an error (never rounded).
fn mul(a: Decimal, b: Decimal) -> R<Decimal> {
    let (a, b) = (a.normalize(), b.normalize());
    if a.is_zero() || b.is_zero() {
        return Ok(Decimal::ZERO);
    }
    let p = a.checked_mul(b).ok_or_else(range_error)?;
    if p.is_zero() || p.scale() != a.scale() + b.scale() {
        return Err(range_error());
    }
    Ok(p)
}

/// `a + b`, exact or an error.
fn add(a: Decimal, b: Decimal) -> R<Decimal> {
    let s = a.checked_add(b).ok_or_else(range_error)?;
    if s.scale() < a.scale().max(b.scale()) && !(s.is_zero() && a == -b) {
        return Err(range_error());
    }
    Ok(s)
}

/// `a − b`, exact or an error.
fn sub(a: Decimal, b: Decimal) -> R<Decimal> {
    add(a, -b)
}

/// `10^-dp`.
fn unit(dp: u32) -> Decimal {
    Decimal::new(1, dp)
}

/// The smallest multiple `q` of `10^-dp` with `q × den ≥ num` (`den > 0`).
fn ceil_div(num: Decimal, den: Decimal, dp: u32) -> R<Decimal> {
    let u = unit(dp);
    let mut q =
        num.checked_div(den).ok_or_else(range_error)?.round_dp_with_strategy(dp, RoundingStrategy::ToPositiveInfinity);
    for _ in 0..8 {
        if mul(q, den)? >= num {
            break;
        }
        q = add(q, u)?;
    }
    if mul(q, den)? < num {
        return Err(range_error());
    }
    for _ in 0..8 {
        let lower = sub(q, u)?;
        if mul(lower, den)? >= num {
            q = lower;
        } else {
            break;
        }
    }
    Ok(q.normalize())
}

/// The largest multiple `q` of `10^-dp` with `q × den ≤ num` (`den > 0`).
fn floor_div(num: Decimal, den: Decimal, dp: u32) -> R<Decimal> {
    let u = unit(dp);
    let mut q =
        num.checked_div(den).ok_or_else(range_error)?.round_dp_with_strategy(dp, RoundingStrategy::ToNegativeInfinity);
    for _ in 0..8 {
        if mul(q, den)? <= num {
            break;
        }
        q = sub(q, u)?;
    }
    if mul(q, den)? > num {
        return Err(range_error());
    }
    for _ in 0..8 {
        let higher = add(q, u)?;
        if mul(higher, den)? <= num {
            q = higher;
        } else {
            break;
        }
    }
    Ok(q.normalize())
}

/// A decimal string without trailing zeros.
fn dstr(d: Decimal) -> DecimalString {
    DecimalString::from(d.normalize())
}

fn usd_of(amount: Decimal, price: Decimal) -> R<DecimalNumber> {
    Ok(usd_number(mul(amount, price)?))
}

/// `floor(x × priceIn × (100 − f) / (priceOut × 100))` at `dp`: the output of a swap.
fn swap_out(x: Decimal, price_in: Decimal, price_out: Decimal, fee: Decimal, dp: u32) -> R<Decimal> {
    let num = mul(mul(x, price_in)?, Decimal::ONE_HUNDRED - fee)?;
    let den = mul(price_out, Decimal::ONE_HUNDRED)?;
    floor_div(num, den, dp)
}

/// The smallest input (at `dp`) whose [`swap_out`] is at least `out`.
fn swap_in_for(out: Decimal, price_in: Decimal, price_out: Decimal, fee: Decimal, dp: u32) -> R<Decimal> {
    let num = mul(mul(out, price_out)?, Decimal::ONE_HUNDRED)?;
    let den = mul(price_in, Decimal::ONE_HUNDRED - fee)?;
    ceil_div(num, den, dp)
}

// ---------------------------------------------------------------------------------------------------
// Requests and routes
// ---------------------------------------------------------------------------------------------------

/// The parts of a quote request the model uses.
struct Request<'a> {
    mode: QuoteMode,
    amount: &'a DecimalString,
    amount_native: Option<&'a DecimalString>,
    is_sda: bool,
    /// Deposits: round the amount down to its precision instead of refusing extra decimals.
    round_amount_down: bool,
    depositor: String,
    recipient: String,
    post_bridge_data: Option<PostBridgeData>,
    webhook_url: Option<String>,
}

/// tokenIn on chainIn → bridge token (chainIn → chainOut) → tokenOut on chainOut.
struct Route<'a> {
    chain_in: &'a Chain,
    chain_out: &'a Chain,
    token_in: &'a Token,
    token_out: &'a Token,
    bridge_in: &'a Token,
    bridge_out: &'a Token,
    /// Answer with the `bridgeSwap` variant.
    swap: bool,
}

impl Route<'_> {
    fn is_swap(&self) -> bool {
        self.swap
    }
    fn pre_swap(&self) -> bool {
        self.token_in.symbol != self.bridge_in.symbol
    }
    fn post_swap(&self) -> bool {
        self.token_out.symbol != self.bridge_out.symbol
    }
    fn bridge_dp(&self) -> u32 {
        self.bridge_in.decimals.min(self.bridge_out.decimals)
    }
    fn pay_dp(&self) -> u32 {
        if self.pre_swap() {
            self.token_in.decimals
        } else {
            self.bridge_dp()
        }
    }
    fn receive_dp(&self) -> u32 {
        if self.post_swap() {
            self.token_out.decimals
        } else {
            self.bridge_dp()
        }
    }
}

fn is_sda(flag: Option<IsSdaFlag>) -> bool {
    flag == Some(IsSdaFlag::True)
}

fn known_chain<'a>(cat: &'a Catalogue, member: &str, id: &str) -> R<&'a Chain> {
    cat.chain(id).ok_or_else(|| {
        let known: Vec<&str> = cat.chains().map(|c| c.id.as_str()).collect();
        invalid(format!("`{member}`: unknown chain {:?}; supported chains: {}", shown(id), known.join(", ")))
    })
}

fn check_address(cat: &Catalogue, chain: &Chain, member: &str, address: &str) -> R<()> {
    match cat.invalid_address(&chain.id, address) {
        None => Ok(()),
        Some(reason) => Err(invalid(format!("`{member}`: {reason}"))),
    }
}

/// A plain route of `symbol` (bridgeable on both chains), or InvalidRequest.
fn plain_route<'a>(chain_in: &'a Chain, chain_out: &'a Chain, symbol: &str) -> R<Route<'a>> {
    let on = |chain: &'a Chain| -> R<&'a Token> {
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
    let (t_in, t_out) = (on(chain_in)?, on(chain_out)?);
    Ok(Route { chain_in, chain_out, token_in: t_in, token_out: t_out, bridge_in: t_in, bridge_out: t_out, swap: false })
}

/// The route between two tokens: plain when they are the same bridgeable symbol, else through a bridge
/// token (NoBridgeTokenFoundError when there is none).
fn route_between<'a>(
    cat: &Catalogue,
    chain_in: &'a Chain,
    chain_out: &'a Chain,
    t_in: &'a Token,
    t_out: &'a Token,
) -> R<Route<'a>> {
    if t_in.symbol == t_out.symbol && t_in.bridgeable && t_out.bridgeable {
        return plain_route(chain_in, chain_out, &t_in.symbol);
    }
    let symbol = cat.bridge_token(&chain_in.id, &chain_out.id, &t_in.symbol, &t_out.symbol).ok_or_else(|| {
        Failure::NoBridgeTokenFound(NoBridgeTokenFoundError {
            tag: Default::default(),
            message: format!("no token is bridged between {} and {}", chain_in.id, chain_out.id),
        })
    })?;
    let (Some(bridge_in), Some(bridge_out)) = (chain_in.token(&symbol), chain_out.token(&symbol)) else {
        return Err(invalid(format!("bridge token {symbol} is missing")));
    };
    Ok(Route { chain_in, chain_out, token_in: t_in, token_out: t_out, bridge_in, bridge_out, swap: true })
}

/// The requested amount: exact, > 0, with at most `dp` decimal places (rounded down to them for deposits).
fn requested_amount(value: &DecimalString, dp: u32, round_down: bool, what: &str) -> R<Decimal> {
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

// ---------------------------------------------------------------------------------------------------
// The bridged leg
// ---------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Boost {
    amount_native: Decimal,
    native_usd: Decimal,
    cost: Decimal,
}

/// The gas boost of `amountNative` on `chain_out`, paid in a token of `price` at `dp`.
fn gas_boost(value: Option<&DecimalString>, chain_out: &Chain, price: Decimal, dp: u32) -> R<Option<Boost>> {
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
struct Leg {
    pay: Decimal,
    /// `pay − fee`.
    receive_before_boost: Decimal,
    /// `pay − fee − boost cost`.
    receive: Decimal,
    gas_fee: Decimal,
    source_gas_fee: Decimal,
    platform_fee: Decimal,
    percentage_fee: Decimal,
    fee: Decimal,
    sponsored_gas_fee: Decimal,
    sponsored_source_gas_fee: Decimal,
    sponsored_platform_fee: Decimal,
    sponsored_fee: Decimal,
    promotion: Option<PromotionSetting>,
    boost: Option<Boost>,
}

/// What prices the bridged leg: the fees at full value (before promotion and sponsorship).
struct LegPricing<'a> {
    fees: &'a FeeSettings,
    price: Decimal,
    dp: u32,
    gas: Decimal,
    source: Decimal,
    platform: Decimal,
    promotion: Option<&'a PromotionSetting>,
    sponsorship: Sponsorship,
    boost: Option<Boost>,
}

impl<'a> LegPricing<'a> {
    fn new(ctx: &'a QuoteContext, route: &Route, is_sda: bool, boost: Option<Boost>) -> R<Self> {
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

    fn cost(&self) -> Decimal {
        self.boost.map_or(Decimal::ZERO, |b| b.cost)
    }

    fn promotion_applies(&self, pay_usd: Decimal) -> bool {
        self.promotion.is_some_and(|p| p.max_limit_usd.is_none_or(|limit| pay_usd <= limit))
    }

    fn percentage_applies(&self, pay_usd: Decimal) -> bool {
        self.fees.percentage_fee > Decimal::ZERO && self.fees.percentage_fee_threshold_usd.is_none_or(|t| pay_usd > t)
    }

    fn percentage_fee(&self, pay: Decimal) -> R<Decimal> {
        ceil_div(mul(pay, self.fees.percentage_fee)?, Decimal::ONE_HUNDRED, self.dp)
    }

    /// (charged gas, source, platform), (sponsored gas, source, platform).
    fn fixed(&self, promotion: bool) -> ([Decimal; 3], [Decimal; 3]) {
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

    fn leg(&self, pay: Decimal, promotion: bool, percentage_fee: Decimal) -> R<Leg> {
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
    fn at_pay(&self, pay: Decimal) -> R<Leg> {
        let pay_usd = mul(pay, self.price)?;
        let percentage = if self.percentage_applies(pay_usd) { self.percentage_fee(pay)? } else { Decimal::ZERO };
        self.leg(pay, self.promotion_applies(pay_usd), percentage)
    }

    /// `receive` mode: the smallest pay amount whose `pay`-mode leg receives exactly `receive`.
    fn at_receive(&self, receive: Decimal) -> R<Leg> {
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
    fn solve_percentage(&self, base: Decimal) -> R<Decimal> {
        let u = unit(self.dp);
        let net = |p: Decimal| -> R<Decimal> { sub(p, self.percentage_fee(p)?) };
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

// ---------------------------------------------------------------------------------------------------
// Whole quotes
// ---------------------------------------------------------------------------------------------------

/// A priced quote.
struct Priced {
    pay: Decimal,
    receive: Decimal,
    min_receive: Decimal,
    leg: Leg,
}

fn check_deposit_limit(route: &Route, pay: Decimal) -> R<()> {
    let t = route.token_in;
    if pay > t.max_deposit {
        return Err(Failure::DepositLimitReached(DepositLimitReached {
            tag: Default::default(),
            token: t.symbol.clone(),
            chain: route.chain_in.id.clone(),
            pay_amount: dstr(pay),
            max_deposit_amount: dstr(t.max_deposit),
            pay_amount_usd: mul(pay, t.usd_price).ok().map(dstr),
            max_deposit_amount_usd: mul(t.max_deposit, t.usd_price).ok().map(dstr),
        }));
    }
    Ok(())
}

fn check_sda_limits(route: &Route, pay: Decimal) -> R<()> {
    let t = route.token_in;
    let pay_usd = mul(pay, t.usd_price)?;
    if pay_usd < t.min_deposit_usd {
        return Err(Failure::SdaDepositBelowMinimum(SdaDepositBelowMinimum {
            tag: Default::default(),
            token: t.symbol.clone(),
            chain_in: route.chain_in.id.clone(),
            chain_out: route.chain_out.id.clone(),
            pay_amount_usd: dstr(pay_usd),
            min_deposit_amount_usd: dstr(t.min_deposit_usd),
        }));
    }
    if pay_usd > t.max_deposit_usd {
        return Err(Failure::SdaDepositLimitExceeded(SdaDepositLimitExceeded {
            tag: Default::default(),
            token: t.symbol.clone(),
            chain_in: route.chain_in.id.clone(),
            chain_out: route.chain_out.id.clone(),
            pay_amount_usd: dstr(pay_usd),
            max_deposit_amount_usd: dstr(t.max_deposit_usd),
        }));
    }
    Ok(())
}

fn check_withdraw_limit(route: &Route, receive: Decimal) -> R<()> {
    let t = route.token_out;
    if receive > t.max_withdraw {
        return Err(Failure::WithdrawLimitReached(WithdrawLimitReached {
            tag: Default::default(),
            token: t.symbol.clone(),
            chain: route.chain_out.id.clone(),
            receive_amount: dstr(receive),
            max_withdraw_amount: dstr(t.max_withdraw),
        }));
    }
    Ok(())
}

fn negative(receive: Decimal) -> Failure {
    Failure::NegativeReceiveAmount(NegativeReceiveAmount { tag: Default::default(), receive_amount: dstr(receive) })
}

/// Prices a request on a route (the model of the module documentation).
fn price(ctx: &QuoteContext, route: &Route, req: &Request) -> R<Priced> {
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
                    return Err(Failure::GasBoostGreaterThanReceiveAmount(GasBoostGreaterThanReceiveAmount {
                        tag: Default::default(),
                        amount_native_token_cost: dstr(b.cost),
                        receive_amount: dstr(leg.receive_before_boost),
                    }));
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

/// The members every quote variant has (with the wire names of the schema).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Common {
    chain_in: String,
    chain_out: String,
    pay_amount: DecimalString,
    pay_amount_usd: DecimalNumber,
    receive_amount: DecimalString,
    receive_amount_usd: DecimalNumber,
    fees: QuoteFees,
    depositor: String,
    recipient: String,
    expires_at: DateString,
    quote_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    promotion: Option<Promotion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gas_boost: Option<GasBoost>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed: Option<Speed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_duration: Option<DecimalNumber>,
    #[serde(skip_serializing_if = "Option::is_none")]
    post_bridge_data: Option<PostBridgeData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    webhook_url: Option<String>,
}

impl Priced {
    fn common(&self, ctx: &QuoteContext, route: &Route, req: &Request) -> R<Common> {
        let settings = ctx.catalogue.fees();
        let leg = &self.leg;
        let p = route.bridge_in.usd_price;
        let fees = QuoteFees {
            fee: dstr(leg.fee),
            gas_fee: dstr(leg.gas_fee),
            source_gas_fee: dstr(leg.source_gas_fee),
            platform_fee: dstr(leg.platform_fee),
            percentage_fee: dstr(leg.percentage_fee),
            fee_usd: usd_of(leg.fee, p)?,
            gas_fee_usd: usd_of(leg.gas_fee, p)?,
            source_gas_fee_usd: usd_of(leg.source_gas_fee, p)?,
            platform_fee_usd: usd_of(leg.platform_fee, p)?,
            percentage_fee_usd: usd_of(leg.percentage_fee, p)?,
            percentage_fee_amount: (settings.percentage_fee > Decimal::ZERO)
                .then(|| usd_number(settings.percentage_fee)),
            percentage_fee_threshold: settings.percentage_fee_threshold_usd.map(usd_number),
            sponsored_fees: Some(SponsoredFees {
                fee: dstr(leg.sponsored_fee),
                gas_fee: dstr(leg.sponsored_gas_fee),
                platform_fee: dstr(leg.sponsored_platform_fee),
                percentage_fee: dstr(Decimal::ZERO),
                source_gas_fee: dstr(leg.sponsored_source_gas_fee),
                fee_usd: usd_of(leg.sponsored_fee, p)?,
                gas_fee_usd: usd_of(leg.sponsored_gas_fee, p)?,
                platform_fee_usd: usd_of(leg.sponsored_platform_fee, p)?,
                percentage_fee_usd: DecimalNumber::ZERO,
                source_gas_fee_usd: usd_of(leg.sponsored_source_gas_fee, p)?,
            }),
        };
        let gas_boost = leg.boost.map(|b| GasBoost {
            amount_native: dstr(b.amount_native),
            amount_native_usd: usd_number(b.native_usd),
            amount_native_token_cost: dstr(b.cost),
        });
        let (speed, duration) = ctx
            .catalogue
            .route_timing(&route.chain_in.id, &route.chain_out.id)
            .map_or((None, None), |(s, d)| (Some(s), DecimalNumber::try_from(d as f64).ok()));
        let expires_at =
            DateString::from_millis(ctx.now.millis().saturating_add(QUOTE_LIFETIME_MS)).unwrap_or(DateString::MAX);
        Ok(Common {
            chain_in: route.chain_in.id.clone(),
            chain_out: route.chain_out.id.clone(),
            pay_amount: dstr(self.pay),
            pay_amount_usd: usd_of(self.pay, route.token_in.usd_price)?,
            receive_amount: dstr(self.receive),
            receive_amount_usd: usd_of(self.receive, route.token_out.usd_price)?,
            fees,
            depositor: req.depositor.clone(),
            recipient: req.recipient.clone(),
            expires_at,
            quote_id: ctx.quote_id.clone(),
            promotion: leg
                .promotion
                .as_ref()
                .map(|p| Promotion { name: p.name.clone(), max_limit_usd: p.max_limit_usd.map(usd_number) }),
            gas_boost,
            speed,
            estimated_duration: duration,
            post_bridge_data: req.post_bridge_data.clone(),
            webhook_url: req.webhook_url.clone(),
        })
    }

    fn bridge_quote(&self, ctx: &QuoteContext, route: &Route, req: &Request) -> R<BridgeQuote> {
        let c = self.common(ctx, route, req)?;
        quote_variant(c, serde_json::json!({"_tag": "bridge", "token": route.token_in.symbol}))
    }

    fn deposit_address_quote(&self, ctx: &QuoteContext, route: &Route, req: &Request) -> R<DepositAddressBridgeQuote> {
        let c = self.common(ctx, route, req)?;
        quote_variant(c, serde_json::json!({"_tag": "depositAddressBridge", "token": route.token_in.symbol}))
    }

    fn bridge_swap_quote(&self, ctx: &QuoteContext, route: &Route, req: &Request) -> R<BridgeSwapQuote> {
        let c = self.common(ctx, route, req)?;
        let swap = BridgeSwapMembers {
            token_in: route.token_in.symbol.clone(),
            token_out: route.token_out.symbol.clone(),
            bridge_token: route.bridge_in.symbol.clone(),
            bridge_pay_amount: dstr(self.leg.pay),
            bridge_pay_amount_usd: usd_of(self.leg.pay, route.bridge_in.usd_price)?,
            bridge_receive_amount: dstr(self.leg.receive),
            min_receive_amount: dstr(self.min_receive),
            min_receive_amount_usd: usd_of(self.min_receive, route.token_out.usd_price)?,
            usd_price_token_in: usd_number(route.token_in.usd_price),
            usd_price_token_out: usd_number(route.token_out.usd_price),
            is_atomic_swap: Some(route.chain_in.family == Family::Evm),
        };
        let mut extra = serde_json::to_value(&swap).map_err(|e| invalid(format!("encoding a quote: {e}")))?;
        extra["_tag"] = serde_json::json!("bridgeSwap");
        quote_variant(c, extra)
    }
}

/// The members only `bridgeSwap` quotes have (with the wire names of the schema).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct BridgeSwapMembers {
    token_in: String,
    token_out: String,
    bridge_token: String,
    bridge_pay_amount: DecimalString,
    bridge_pay_amount_usd: DecimalNumber,
    bridge_receive_amount: DecimalString,
    min_receive_amount: DecimalString,
    min_receive_amount_usd: DecimalNumber,
    usd_price_token_in: DecimalNumber,
    usd_price_token_out: DecimalNumber,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_atomic_swap: Option<bool>,
}

/// One quote variant: the members every quote has, the variant's own members, decoded (and so checked) through
/// the contract's type of that variant.
fn quote_variant<T: serde::de::DeserializeOwned>(common: Common, own: serde_json::Value) -> R<T> {
    let mut value = serde_json::to_value(&common).map_err(|e| invalid(format!("encoding a quote: {e}")))?;
    if let (Some(map), serde_json::Value::Object(own)) = (value.as_object_mut(), own) {
        map.extend(own);
    }
    serde_json::from_value(value).map_err(|e| invalid(format!("a quote that does not decode: {e}")))
}

fn bridge_quote(ctx: &QuoteContext, req: &BridgeQuoteRequest) -> R<BridgeQuote> {
    let cat = ctx.catalogue;
    let chain_in = known_chain(cat, "chainIn", &req.chain_in)?;
    let chain_out = known_chain(cat, "chainOut", &req.chain_out)?;
    if chain_in.id == chain_out.id {
        return Err(invalid(format!(
            "chainIn and chainOut are both {}: a bridge needs two different chains",
            chain_in.id
        )));
    }
    let route = plain_route(chain_in, chain_out, &req.token)?;
    check_address(cat, chain_in, "depositor", &req.depositor)?;
    check_address(cat, chain_out, "recipient", &req.recipient)?;
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

fn bridge_swap_quote(ctx: &QuoteContext, req: &BridgeSwapQuoteRequest) -> R<QuoteResponse> {
    let cat = ctx.catalogue;
    let chain_in = known_chain(cat, "chainIn", &req.chain_in)?;
    let chain_out = known_chain(cat, "chainOut", &req.chain_out)?;
    if chain_in.id == chain_out.id {
        return Err(Failure::SameChainSwapNotAvailable(SameChainSwapNotAvailable {
            tag: Default::default(),
            message: format!("chainIn and chainOut are both {}: same-chain swaps are not available", chain_in.id),
        }));
    }
    let t_in =
        chain_in.token(&req.token_in).ok_or_else(|| no_route(&req.token_in, &req.token_out, chain_in, chain_out))?;
    let t_out =
        chain_out.token(&req.token_out).ok_or_else(|| no_route(&req.token_in, &req.token_out, chain_in, chain_out))?;
    check_address(cat, chain_in, "depositor", &req.depositor)?;
    check_address(cat, chain_out, "recipient", &req.recipient)?;
    if let Some(refund) = &req.refund_address {
        check_address(cat, chain_in, "refundAddress", refund)?;
    }
    let route = route_between(cat, chain_in, chain_out, t_in, t_out)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn exact_arithmetic_refuses_to_round() {
        assert_eq!(mul(d("1.5"), d("2")).unwrap(), d("3"));
        assert!(mul(d("1.000000000000000001"), d("1.0000000000001")).is_err());
        assert!(mul(d("7922816251426433759354395033.5"), d("2")).is_err());
        assert!(add(d("7922816251426433759354395033.5"), d("0.05")).is_err());
        assert_eq!(add(d("1.5"), d("-1.5")).unwrap(), Decimal::ZERO);
    }

    #[test]
    fn ceil_and_floor_division() {
        assert_eq!(ceil_div(d("2"), d("3000"), 18).unwrap(), d("0.000666666666666667"));
        assert_eq!(floor_div(d("2"), d("3000"), 18).unwrap(), d("0.000666666666666666"));
        assert_eq!(ceil_div(d("1"), d("1"), 6).unwrap(), d("1"));
        assert_eq!(floor_div(d("0.0000009"), d("1"), 6).unwrap(), d("0"));
        assert_eq!(ceil_div(d("0.0000001"), d("1"), 6).unwrap(), d("0.000001"));
    }
}
