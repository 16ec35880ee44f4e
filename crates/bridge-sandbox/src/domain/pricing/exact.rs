//! Exact decimal arithmetic: products and sums that `rust_decimal` could only round are refused (never rounded
//! silently), fees round up and received amounts round down to a precision, swaps are sized exactly.

use bridge_contract::{DecimalNumber, DecimalString};
use rust_decimal::{Decimal, RoundingStrategy};

use crate::domain::catalogue::usd_number;

/// A result that exact decimal arithmetic could not give without rounding (the pricing model refuses the quote:
/// `From<OutOfRange> for Refusal` in `failure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OutOfRange;

pub(super) type Exact<T> = Result<T, OutOfRange>;

/// `a × b`, exact or an error (never rounded).
pub(super) fn mul(a: Decimal, b: Decimal) -> Exact<Decimal> {
    let (a, b) = (a.normalize(), b.normalize());
    if a.is_zero() || b.is_zero() {
        return Ok(Decimal::ZERO);
    }
    let p = a.checked_mul(b).ok_or(OutOfRange)?;
    if p.is_zero() || p.scale() != a.scale() + b.scale() {
        return Err(OutOfRange);
    }
    Ok(p)
}

/// `a + b`, exact or an error.
pub(super) fn add(a: Decimal, b: Decimal) -> Exact<Decimal> {
    let s = a.checked_add(b).ok_or(OutOfRange)?;
    if s.scale() < a.scale().max(b.scale()) && !(s.is_zero() && a == -b) {
        return Err(OutOfRange);
    }
    Ok(s)
}

/// `a − b`, exact or an error.
pub(super) fn sub(a: Decimal, b: Decimal) -> Exact<Decimal> {
    add(a, -b)
}

/// `10^-dp`.
pub(super) fn unit(dp: u32) -> Decimal {
    Decimal::new(1, dp)
}

/// The smallest multiple `q` of `10^-dp` with `q × den ≥ num` (`den > 0`).
pub(super) fn ceil_div(num: Decimal, den: Decimal, dp: u32) -> Exact<Decimal> {
    let u = unit(dp);
    let mut q =
        num.checked_div(den).ok_or(OutOfRange)?.round_dp_with_strategy(dp, RoundingStrategy::ToPositiveInfinity);
    for _ in 0..8 {
        if mul(q, den)? >= num {
            break;
        }
        q = add(q, u)?;
    }
    if mul(q, den)? < num {
        return Err(OutOfRange);
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
pub(super) fn floor_div(num: Decimal, den: Decimal, dp: u32) -> Exact<Decimal> {
    let u = unit(dp);
    let mut q =
        num.checked_div(den).ok_or(OutOfRange)?.round_dp_with_strategy(dp, RoundingStrategy::ToNegativeInfinity);
    for _ in 0..8 {
        if mul(q, den)? <= num {
            break;
        }
        q = sub(q, u)?;
    }
    if mul(q, den)? > num {
        return Err(OutOfRange);
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
pub(super) fn decimal_string(d: Decimal) -> DecimalString {
    DecimalString::from(d.normalize())
}

pub(super) fn usd_of(amount: Decimal, price: Decimal) -> Exact<DecimalNumber> {
    Ok(usd_number(mul(amount, price)?))
}

/// `floor(x × priceIn × (100 − f) / (priceOut × 100))` at `dp`: the output of a swap.
pub(super) fn swap_out(x: Decimal, price_in: Decimal, price_out: Decimal, fee: Decimal, dp: u32) -> Exact<Decimal> {
    let num = mul(mul(x, price_in)?, Decimal::ONE_HUNDRED - fee)?;
    let den = mul(price_out, Decimal::ONE_HUNDRED)?;
    floor_div(num, den, dp)
}

/// The smallest input (at `dp`) whose [`swap_out`] is at least `out`.
pub(super) fn swap_in_for(
    out: Decimal,
    price_in: Decimal,
    price_out: Decimal,
    fee: Decimal,
    dp: u32,
) -> Exact<Decimal> {
    let num = mul(mul(out, price_out)?, Decimal::ONE_HUNDRED)?;
    let den = mul(price_in, Decimal::ONE_HUNDRED - fee)?;
    ceil_div(num, den, dp)
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
