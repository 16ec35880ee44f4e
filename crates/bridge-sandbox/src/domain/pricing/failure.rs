//! Every refusal of the pricing model ([`Refusal`]), and how it becomes an operation's error answer or a deposit's
//! reject reason.

use bridge_contract::operations::{QuoteBridgeError, QuoteBridgeSwapError};
use bridge_contract::{
    DecimalString, DepositLimitReached, GasBoostGreaterThanReceiveAmount, InvalidRequest, NegativeReceiveAmount,
    NoBridgeTokenFoundError, NoRouteFoundError, QuoteBridgeSwapUnprocessable, QuoteBridgeUnprocessable, RejectReason,
    SameChainSwapNotAvailable, SdaDepositBelowMinimum, SdaDepositLimitExceeded, WithdrawLimitReached,
};
use rust_decimal::Decimal;

use super::exact::{decimal_string, OutOfRange};
use crate::domain::catalogue::Chain;

/// Every refusal of the pricing model, before it is put into an operation's error enum.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Failure {
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

/// A refusal of the pricing model: the body of the operation's error answer (`QuoteBridgeError` and
/// `QuoteBridgeSwapError` convert from it, `?` included) or a deposit's [`RejectReason`]. Boxed, as the contract's
/// error bodies are large.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal(Box<Failure>);

impl From<Failure> for Refusal {
    fn from(failure: Failure) -> Self {
        Self(Box::new(failure))
    }
}

impl From<Refusal> for QuoteBridgeError {
    fn from(refusal: Refusal) -> Self {
        refusal.0.into_bridge_error()
    }
}

impl From<Refusal> for QuoteBridgeSwapError {
    fn from(refusal: Refusal) -> Self {
        refusal.0.into_bridge_swap_error()
    }
}

impl Refusal {
    /// Why a deposit into a deposit address that the model refuses is not bridged.
    pub fn reject_reason(self) -> RejectReason {
        self.0.reject_reason()
    }
}

pub(super) type PricingResult<T> = Result<T, Refusal>;

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

pub(super) fn invalid_body(message: impl Into<String>) -> InvalidRequest {
    InvalidRequest::new(message)
}

pub(super) fn invalid(message: impl Into<String>) -> Refusal {
    Failure::InvalidRequest(invalid_body(message)).into()
}

impl From<OutOfRange> for Refusal {
    fn from(_: OutOfRange) -> Self {
        invalid(
            "the amounts of this quote exceed exact decimal arithmetic (28 significant digits); use a smaller amount",
        )
    }
}

/// Why a decimal string cannot be priced, without echoing all of it.
pub(super) fn out_of_range(
    member: &str,
    value: &DecimalString,
    e: &bridge_contract::scalars::DecimalRangeError,
) -> String {
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
pub(super) fn shown(text: &str) -> String {
    crate::domain::catalogue::shorten(text)
}

pub(super) fn no_route(token_in: &str, token_out: &str, chain_in: &Chain, chain_out: &Chain) -> Refusal {
    Failure::NoRouteFound(NoRouteFoundError::new(token_in, token_out, chain_in.id.clone(), chain_out.id.clone())).into()
}

pub(super) fn negative(receive: Decimal) -> Refusal {
    Failure::NegativeReceiveAmount(NegativeReceiveAmount::new(decimal_string(receive))).into()
}
