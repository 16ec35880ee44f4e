//! [`DecimalNumber`]: the schema's `type: number, format: decimal-number`, a JSON number that the
//! production service (JavaScript) reads as a 64-bit float; and [`js_number_to_string`], JavaScript's
//! `Number.prototype.toString()`, which renders such numbers (also in decode error messages).
//!
//! Reading goes through serde's `i64`/`u64`/`f64` callbacks, so serde_json's `arbitrary_precision`
//! feature is neither needed nor wanted. Note that serde_json parses floats with a fast algorithm
//! unless its `float_roundtrip` feature is enabled in the final binary: without it, a number with many
//! significant digits can come out one unit in the last place away from what JavaScript reads.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use rust_decimal::Decimal;

use super::decimal_string::{DecimalRangeError, DecimalString};
use super::js::js_number_to_string;

/// 2^53: integral values up to this magnitude are written as JSON integers (`1`, not `1.0`).
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A finite JSON number, held as the 64-bit float JavaScript reads it as.
///
/// * Decoding ([`serde::Deserialize`]) accepts any JSON number (integers are converted to the nearest
///   `f64`, as JavaScript does; `-0` becomes `0`) and rejects everything else with
///   `Expected number, actual <value>` (for example `Expected number, actual "1"`).
/// * Encoding ([`serde::Serialize`]) writes integral values up to 2^53 in magnitude as JSON integers
///   (`1`, as JavaScript does, not serde_json's `1.0`) and other values as `f64`.
/// * [`fmt::Display`] is JavaScript's `String(x)`: see [`js_number_to_string`].
/// * Equality and hashing are on the value (there is no NaN and no negative zero), and the order is
///   total ([`Ord`]).
#[derive(Clone, Copy)]
pub struct DecimalNumber(f64);

/// A non-finite `f64` (NaN or an infinity) was given where a [`DecimalNumber`] is required.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NonFiniteNumberError {
    value: f64,
}

impl NonFiniteNumberError {
    /// The rejected value.
    pub fn value(&self) -> f64 {
        self.value
    }
}

impl fmt::Display for NonFiniteNumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a finite number", js_number_to_string(self.value))
    }
}

impl std::error::Error for NonFiniteNumberError {}

impl DecimalNumber {
    /// Zero.
    pub const ZERO: Self = Self(0.0);

    /// The value as an `f64` (finite, never `-0.0`).
    pub fn as_f64(self) -> f64 {
        self.0
    }

    /// The shortest decimal that reads back as this number (the digits of [`js_number_to_string`]),
    /// exactly: `0.1` is `0.1`, `1e21` is digits `1`, scale -21.
    pub fn to_decimal_string(self) -> DecimalString {
        format!("{:e}", self.0).parse().expect("`{:e}` output of a finite f64 is a decimal string")
    }

    /// The shortest decimal that reads back as this number, as an exact `rust_decimal::Decimal`, or a
    /// [`DecimalRangeError`] when it has more than 28 decimal places or exceeds the 96-bit mantissa
    /// (`1e30`, `1e-30`). Never rounds. See [`DecimalString::to_decimal`].
    ///
    /// # Errors
    ///
    /// [`DecimalRangeError`] when the shortest decimal has no exact `Decimal` representation.
    pub fn to_decimal(self) -> Result<Decimal, DecimalRangeError> {
        self.to_decimal_string().to_decimal()
    }
}

impl Default for DecimalNumber {
    /// Zero.
    fn default() -> Self {
        Self::ZERO
    }
}

impl TryFrom<f64> for DecimalNumber {
    type Error = NonFiniteNumberError;

    /// Accepts finite values; `-0.0` becomes `0.0`.
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        if value.is_finite() {
            Ok(Self(if value == 0.0 { 0.0 } else { value }))
        } else {
            Err(NonFiniteNumberError { value })
        }
    }
}

impl From<i32> for DecimalNumber {
    fn from(value: i32) -> Self {
        Self(f64::from(value))
    }
}

impl From<u32> for DecimalNumber {
    fn from(value: u32) -> Self {
        Self(f64::from(value))
    }
}

impl From<DecimalNumber> for f64 {
    fn from(value: DecimalNumber) -> Self {
        value.0
    }
}

impl PartialEq for DecimalNumber {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for DecimalNumber {}

impl Hash for DecimalNumber {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl PartialOrd for DecimalNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DecimalNumber {
    /// Numeric order (total: values are finite and zero has one sign).
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl fmt::Display for DecimalNumber {
    /// JavaScript's `String(x)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&js_number_to_string(self.0))
    }
}

impl fmt::Debug for DecimalNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DecimalNumber").field(&format_args!("{self}")).finish()
    }
}

impl serde::Serialize for DecimalNumber {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        // Integral and at most 2^53 in magnitude (the cast is exact then; `fract()` would call `trunc`).
        if x.abs() <= MAX_EXACT_INTEGER && (x as i64) as f64 == x {
            serializer.serialize_i64(x as i64)
        } else {
            serializer.serialize_f64(x)
        }
    }
}

impl<'de> serde::Deserialize<'de> for DecimalNumber {
    // Not inlined: a struct with many scalar members calls one copy instead of carrying one per member (decoding
    // was bound by instruction-cache misses, docs/performance.md).
    #[inline(never)]
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let x = super::js::expect_number(deserializer)?;
        Self::try_from(x).map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for DecimalNumber {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DecimalNumber".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::DecimalNumber").into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "number",
            "format": "decimal-number",
        })
    }
}

#[cfg(feature = "proptest")]
impl proptest::arbitrary::Arbitrary for DecimalNumber {
    type Parameters = ();
    type Strategy = proptest::strategy::BoxedStrategy<Self>;

    /// Integers (up to 2^53 and beyond), everyday fractions, and finite floats of every exponent
    /// (subnormal to `f64::MAX`), both signs.
    fn arbitrary_with(_: ()) -> Self::Strategy {
        use proptest::num::f64 as float;
        use proptest::prelude::*;
        let integers = (-(1i64 << 53)..=(1i64 << 53)).prop_map(|n| n as f64);
        let small_integers = (-1000i64..=1000).prop_map(|n| n as f64);
        let everyday = -1.0e6f64..1.0e6;
        let cents = (-10_000_000i64..10_000_000).prop_map(|n| n as f64 / 100.0);
        let any_finite = float::POSITIVE | float::NEGATIVE | float::NORMAL | float::SUBNORMAL | float::ZERO;
        prop_oneof![integers, small_integers, everyday, cents, any_finite]
            .prop_map(|x| Self::try_from(x).expect("strategies produce finite values"))
            .boxed()
    }
}
