//! [`DecimalString`]: the schema's `type: string, format: decimal-string`, a lossless decimal number of
//! any magnitude and scale carried as a JSON string (token amounts, prices, rates).
//!
//! Decoding follows Effect-TS `BigDecimal.fromString` (what the production service runs) rule for rule;
//! encoding is plain positional notation that keeps the scale, so what was received is sent back byte
//! for byte whenever it was already written positionally without a sign or redundant leading zeros.
//! [`DecimalString::to_decimal`] converts to `rust_decimal::Decimal` exactly or reports why it cannot:
//! it never rounds.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use super::js::json_quote;
use arrayvec::ArrayString;
use rust_decimal::Decimal;

/// `Number.MAX_SAFE_INTEGER`: Effect rejects exponents and scales whose magnitude exceeds it.
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Positional encoding is used while it adds at most this many zeros that are not among the digits;
/// beyond that the scientific form keeps the encoding bounded (`"1e9000000000000"`).
const MAX_POSITIONAL_PADDING: i128 = 100;

/// The largest mantissa of a `rust_decimal::Decimal` (2^96 - 1).
const DECIMAL_MAX_MANTISSA: u128 = (1u128 << 96) - 1;

/// The largest scale of a `rust_decimal::Decimal`.
const DECIMAL_MAX_SCALE: i128 = 28;

/// The JSON Schema / OpenAPI `pattern` of a decimal string, as published in the schema.
///
/// It agrees with the parser on every ordinary input. Two differences are inherent to Effect's parser,
/// which a regular expression cannot express exactly: exponents (and resulting scales) beyond
/// `Number.MAX_SAFE_INTEGER` match the pattern but are rejected by the parser, and Effect's quirk of
/// accepting a sign right after a leading dot (`".+5"` is 0.05, `".-5"` is -0.05) is accepted by the
/// parser but does not match the pattern.
pub const DECIMAL_STRING_PATTERN: &str = r"^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)?$";

/// A lossless decimal number, `digits × 10^-scale` with a sign, carried on the wire as a JSON string.
///
/// * Decoding ([`FromStr`], [`serde::Deserialize`]) accepts exactly what Effect-TS
///   `BigDecimal.fromString` accepts: `""` (zero), `"1"`, `"-1"`, `"+1"`, `"1."`, `".5"`, `"-.5"`,
///   `"1.50"`, `"1e5"`, `"1E+5"`, `"1.5e-3"`; it rejects surrounding blanks, `"0x10"`, `"NaN"`,
///   `"Infinity"`, `"1_000"`, `"."`, `"-"`, `"e5"`, `"1e"`, and every JSON value that is not a string.
/// * The scale is kept as written: `"1.50"` has scale 2 and encodes as `"1.50"`; `"1e5"` has digits `1`
///   and scale -5. Equality ([`PartialEq`], [`Hash`]) is structural, so `1.5 != 1.50`; compare values with
///   [`DecimalString::cmp_numeric`].
/// * Encoding ([`fmt::Display`], [`serde::Serialize`]) is positional without exponent (`"1e5"` →
///   `"100000"`, `".5"` → `"0.5"`, `"+1"` → `"1"`, `""` → `"0"`), unless that would add more than 100
///   zeros, in which case it is `d.ddde±x` (which decodes to the same digits and scale).
/// * Zero is never negative: `"-0.00"` encodes as `"0.00"`.
///
/// Representation: a value is validated once, when it is decoded or built, and held as its encoding and its
/// scale (sign and digits are read from the encoding, which determines them given the scale), so that encoding a
/// value is handing over its text. Decoding canonicalises (`"+1.50"` is held as `"1.50"`, `"1e5"` as `"100000"`
/// with scale -5); a string that already is its own encoding (what the service and most clients send) is kept as
/// it came. Encodings up to 22 characters (nearly every amount, wei-sized integers excepted) are held inline,
/// without an allocation, longer ones on the heap.
#[derive(Clone)]
pub struct DecimalString {
    /// The encoding.
    text: Text,
    scale: i64,
}

/// The encoding of a [`DecimalString`]: inline up to 22 characters, else on the heap.
#[derive(Clone)]
enum Text {
    Short(ArrayString<22>),
    Long(Box<str>),
}

impl Text {
    fn of(s: &str) -> Self {
        match ArrayString::from(s) {
            Ok(short) => Self::Short(short),
            Err(_) => Self::Long(s.into()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::Short(text) => text.as_str(),
            Self::Long(text) => text,
        }
    }
}

/// Equality is structural: sign, digits and scale (`1.5 != 1.50`), which the encoding and the scale determine.
impl PartialEq for DecimalString {
    fn eq(&self, other: &Self) -> bool {
        self.scale == other.scale && self.text.as_str() == other.text.as_str()
    }
}

impl Eq for DecimalString {}

impl std::hash::Hash for DecimalString {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.as_str().hash(state);
        self.scale.hash(state);
    }
}

/// The input of [`DecimalString::from_str`] is not a decimal string.
///
/// Its `Display` is the reference framework's message: `Unable to decode "<input>" into a BigDecimal`,
/// with the input JSON-escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDecimalStringError {
    input: String,
}

impl ParseDecimalStringError {
    /// The rejected input.
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseDecimalStringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unable to decode {} into a BigDecimal", json_quote(&self.input))
    }
}

impl std::error::Error for ParseDecimalStringError {}

/// Why a value has no exact `rust_decimal::Decimal` representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecimalRangeErrorKind {
    /// More than 28 decimal places remain after removing trailing zeros.
    TooManyDecimalPlaces {
        /// The decimal places the value needs.
        needed: u64,
    },
    /// The unscaled integer does not fit the 96-bit mantissa, even with trailing zeros removed.
    TooManyDigits {
        /// The digits of the smallest unscaled integer that represents the value at scale ≤ 28.
        needed: u64,
    },
}

/// A decimal value cannot be converted to `rust_decimal::Decimal` without rounding.
///
/// `rust_decimal::Decimal` holds a 96-bit unsigned mantissa (at most 79228162514264337593543950335)
/// and a scale of at most 28. Conversions in this module never round: they fail with this error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecimalRangeError {
    value: String,
    kind: DecimalRangeErrorKind,
}

impl DecimalRangeError {
    pub(crate) fn new(value: String, kind: DecimalRangeErrorKind) -> Self {
        Self { value, kind }
    }

    /// The value that did not fit, as its decimal string.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Why it did not fit.
    pub fn kind(&self) -> DecimalRangeErrorKind {
        self.kind
    }
}

impl fmt::Display for DecimalRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot be represented exactly as a rust_decimal::Decimal: ", self.value)?;
        match self.kind {
            DecimalRangeErrorKind::TooManyDecimalPlaces { needed } => {
                write!(f, "it needs {needed} decimal places and at most {DECIMAL_MAX_SCALE} are supported")
            }
            DecimalRangeErrorKind::TooManyDigits { needed } => write!(
                f,
                "its unscaled integer needs {needed} digits and exceeds the 96-bit mantissa \
                 (at most {DECIMAL_MAX_MANTISSA})"
            ),
        }
    }
}

impl std::error::Error for DecimalRangeError {}

impl DecimalString {
    /// What the decoder writes a decoded value over (`crate::codec::Decode::blank`): no text, never handed to a
    /// caller. Unlike [`DecimalString::zero`], it costs two stores.
    pub(crate) const PLACEHOLDER: Self = Self { text: Text::Short(ArrayString::new_const()), scale: 0 };

    /// Zero with scale 0 (what `""` and `"0"` decode to).
    pub fn zero() -> Self {
        Self::from_canonical_parts(false, "0", 0)
    }

    /// Builds a value from its canonical parts: `digits` are ASCII digits without leading zeros
    /// (zero is `"0"`, never negative), `|scale| ≤ Number.MAX_SAFE_INTEGER`.
    fn from_canonical_parts(negative: bool, digits: &str, scale: i64) -> Self {
        debug_assert!(!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
        debug_assert!(digits == "0" || !digits.starts_with('0'));
        debug_assert!(scale.abs() <= MAX_SAFE_INTEGER);
        let negative = negative && digits != "0";
        let mut short = ArrayString::<22>::new();
        let text = match write_encoding(&mut short, negative, digits, scale) {
            Ok(()) => Text::Short(short),
            Err(_) => {
                let mut long = String::new();
                let _ = write_encoding(&mut long, negative, digits, scale);
                Text::Long(long.into_boxed_str())
            }
        };
        Self { text, scale }
    }

    /// Builds a value from a sign, the digits `lead` then `trail` (ASCII digits, leading zeros allowed, together
    /// non-empty) and a scale.
    fn from_raw_parts(negative: bool, lead: &str, trail: &str, scale: i64) -> Self {
        let lead = lead.trim_start_matches('0');
        let trail = if lead.is_empty() { trail.trim_start_matches('0') } else { trail };
        match (lead.is_empty(), trail.is_empty()) {
            (true, true) => Self::from_canonical_parts(false, "0", scale),
            (true, false) => Self::from_canonical_parts(negative, trail, scale),
            (false, true) => Self::from_canonical_parts(negative, lead, scale),
            (false, false) => Self::from_canonical_parts(negative, &[lead, trail].concat(), scale),
        }
    }

    /// A string that already is an encoding is kept as it came; any other is read by the general rules.
    fn parse(s: &str) -> Option<Self> {
        match encoding_scale(s) {
            Some(scale) => Some(Self { text: Text::of(s), scale }),
            None => Self::parse_general(s),
        }
    }

    /// Effect-TS `BigDecimal.fromString`, rule for rule.
    pub(super) fn parse_general(s: &str) -> Option<Self> {
        if s.is_empty() {
            return Some(Self::zero());
        }
        let (base, exponent) = match s.bytes().position(|b| b == b'e' || b == b'E') {
            Some(at) => {
                let (base, trail) = (&s[..at], &s[at + 1..]);
                if base.is_empty() {
                    return None;
                }
                (base, parse_safe_integer(trail)?)
            }
            None => (s, 0),
        };
        // Effect concatenates the text around the first dot and then tests `^[+-]?\d+$`; the offset is
        // the length of the text after the dot (so `".+5"` is +5 with offset 2: a quirk kept on purpose).
        let (lead, trail) = match base.bytes().position(|b| b == b'.') {
            Some(at) => (&base[..at], &base[at + 1..]),
            None => (base, ""),
        };
        let joined_first = lead.bytes().chain(trail.bytes()).next()?;
        let (negative, sign_in_lead, sign_len) = match joined_first {
            b'+' => (false, !lead.is_empty(), 1),
            b'-' => (true, !lead.is_empty(), 1),
            _ => (false, true, 0),
        };
        let (lead_digits, trail_digits) =
            if sign_in_lead { (&lead[sign_len..], trail) } else { (lead, &trail[sign_len..]) };
        if lead_digits.len() + trail_digits.len() == 0
            || !lead_digits.bytes().all(|b| b.is_ascii_digit())
            || !trail_digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let offset = i64::try_from(trail.len()).ok()?;
        let scale = offset.checked_sub(exponent)?;
        if scale.abs() > MAX_SAFE_INTEGER {
            return None;
        }
        Some(Self::from_raw_parts(negative, lead_digits, trail_digits, scale))
    }

    /// `true` for zero (at any scale).
    pub fn is_zero(&self) -> bool {
        // The digits of the encoding (before any exponent) are all zeros; zero is never negative.
        self.text.as_str().bytes().take_while(|b| *b != b'e').all(|b| b == b'0' || b == b'.')
    }

    /// `true` for values below zero (zero is never negative).
    pub fn is_negative(&self) -> bool {
        self.text.as_str().starts_with('-')
    }

    /// The scale: the value is `digits × 10^-scale`. Negative for forms like `"1e5"` (scale -5).
    pub fn scale(&self) -> i64 {
        self.scale
    }

    /// The unscaled magnitude as ASCII decimal digits without leading zeros (`"0"` for zero), read from the
    /// encoding: borrowed from it when they are written there in one piece (integers, `0.0015`), else assembled
    /// (`101.3685` has the digits `1013685`).
    pub fn digits(&self) -> Cow<'_, str> {
        if self.is_zero() {
            return Cow::Borrowed("0");
        }
        let text = self.text.as_str();
        let unsigned = text.strip_prefix('-').unwrap_or(text);
        let (mantissa, scientific) = match unsigned.find('e') {
            Some(at) => (&unsigned[..at], true),
            None => (unsigned, false),
        };
        match mantissa.split_once('.') {
            // `d.ddde±x`: the digits are `d` and `ddd`.
            Some((int, frac)) if scientific => Cow::Owned([int, frac].concat()),
            // `0.000ddd`
            Some(("0", frac)) => Cow::Borrowed(frac.trim_start_matches('0')),
            // `ddd.ddd`
            Some((int, frac)) => Cow::Owned([int, frac].concat()),
            None if scientific => Cow::Borrowed(mantissa),
            // `ddd` followed by -scale zeros.
            None => Cow::Borrowed(&mantissa[..mantissa.len() - (-self.scale).max(0) as usize]),
        }
    }

    /// Compares numeric values, ignoring the scale: `1.5` and `1.50` are [`Ordering::Equal`].
    pub fn cmp_numeric(&self, other: &Self) -> Ordering {
        let sign = |x: &Self| -> i8 {
            if x.is_zero() {
                0
            } else if x.is_negative() {
                -1
            } else {
                1
            }
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let magnitude = match sign(self) {
            0 => return Ordering::Equal,
            _ => self.cmp_magnitude(other),
        };
        if self.is_negative() {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// Exponent of the most significant digit (`d.ddd × 10^x`); only for non-zero values.
    fn adjusted_exponent(&self) -> i128 {
        self.digits().len() as i128 - 1 - self.scale as i128
    }

    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        match self.adjusted_exponent().cmp(&other.adjusted_exponent()) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let (a, b) = (self.digits(), other.digits());
        let (a, b) = (a.as_bytes(), b.as_bytes());
        (0..a.len().max(b.len()))
            .map(|i| a.get(i).unwrap_or(&b'0').cmp(b.get(i).unwrap_or(&b'0')))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// The exact `rust_decimal::Decimal` of this value.
    ///
    /// The scale is kept when it fits; trailing zeros are removed only as far as needed to fit the
    /// scale limit (28) and the 96-bit mantissa, and a value with a negative scale is multiplied out to
    /// scale 0. When the value itself does not fit (more than 28 significant decimal places, or an
    /// integer beyond the 96-bit mantissa) the result is a [`DecimalRangeError`]: this never rounds.
    ///
    /// # Errors
    ///
    /// [`DecimalRangeError`] when the value has no exact `Decimal` representation.
    pub fn to_decimal(&self) -> Result<Decimal, DecimalRangeError> {
        if self.is_zero() {
            let scale = (self.scale as i128).clamp(0, DECIMAL_MAX_SCALE) as u32;
            return Ok(Decimal::from_i128_with_scale(0, scale));
        }
        let digits = self.digits();
        let significant = digits.trim_end_matches('0');
        let trailing_zeros = (digits.len() - significant.len()) as i128;
        // value = significant × 10^exponent
        let exponent = trailing_zeros - self.scale as i128;
        let error = |kind| DecimalRangeError::new(self.to_string(), kind);
        if exponent < -DECIMAL_MAX_SCALE {
            return Err(error(DecimalRangeErrorKind::TooManyDecimalPlaces { needed: (-exponent) as u64 }));
        }
        // Keep `zeros` of the trailing zeros (more when the scale is negative): scale = zeros - exponent.
        let fewest_zeros = exponent.max(0);
        let most_zeros = DECIMAL_MAX_SCALE + exponent;
        let too_many_digits = || {
            error(DecimalRangeErrorKind::TooManyDigits { needed: (significant.len() as i128 + fewest_zeros) as u64 })
        };
        if significant.len() > 29 || fewest_zeros > 29 {
            return Err(too_many_digits());
        }
        let significant_value: u128 = significant.parse().map_err(|_| too_many_digits())?;
        let mut zeros = trailing_zeros.clamp(fewest_zeros, most_zeros);
        loop {
            let mantissa = 10u128
                .checked_pow(zeros as u32)
                .and_then(|p| p.checked_mul(significant_value))
                .filter(|m| *m <= DECIMAL_MAX_MANTISSA);
            if let Some(mantissa) = mantissa {
                let signed = if self.is_negative() { -(mantissa as i128) } else { mantissa as i128 };
                return Ok(Decimal::from_i128_with_scale(signed, (zeros - exponent) as u32));
            }
            if zeros == fewest_zeros {
                return Err(too_many_digits());
            }
            zeros -= 1;
        }
    }
}

/// Parses `^[+-]?\d+$` text as `Number(text)` would and checks `Number.isSafeInteger`.
fn parse_safe_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() > 16 {
        return None;
    }
    let value: i64 = if significant.is_empty() { 0 } else { significant.parse().ok()? };
    if value > MAX_SAFE_INTEGER {
        return None;
    }
    Some(if negative { -value } else { value })
}

impl Default for DecimalString {
    /// Zero with scale 0.
    fn default() -> Self {
        Self::zero()
    }
}

impl FromStr for DecimalString {
    type Err = ParseDecimalStringError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| ParseDecimalStringError { input: s.to_owned() })
    }
}

/// Writes the encoding (see [`fmt::Display`]) of the canonical parts to `f`; done once, when a value is made.
fn write_encoding<W: fmt::Write>(f: &mut W, negative: bool, digits: &str, scale: i64) -> fmt::Result {
    let len = digits.len() as i128;
    let scale = i128::from(scale);
    if negative {
        f.write_char('-')?;
    }
    if digits == "0" && scale <= 0 {
        return f.write_char('0');
    }
    let padding = if scale < 0 {
        -scale
    } else if scale >= len {
        scale - len + 1
    } else {
        0
    };
    let zeros = |f: &mut W, n: i128| (0..n).try_for_each(|_| f.write_char('0'));
    if padding > MAX_POSITIONAL_PADDING {
        // d[.ddd]e±x, which decodes to the same digits and scale.
        let exponent = len - 1 - scale;
        f.write_str(&digits[..1])?;
        if len > 1 {
            f.write_char('.')?;
            f.write_str(&digits[1..])?;
        }
        return write!(f, "e{}{}", if exponent < 0 { '-' } else { '+' }, exponent.unsigned_abs());
    }
    if scale <= 0 {
        f.write_str(digits)?;
        zeros(f, -scale)
    } else if scale < len {
        let point = (len - scale) as usize;
        f.write_str(&digits[..point])?;
        f.write_char('.')?;
        f.write_str(&digits[point..])
    } else {
        f.write_str("0.")?;
        zeros(f, scale - len)?;
        f.write_str(digits)
    }
}

/// The scale of `s` when `s` already is the encoding of the value it decodes to, so that it can be kept as it
/// came: `-?(0|[1-9]\d*)(\.\d+)?`, not a negative zero, and (after `0.`) fewer than 100 zeros before the first
/// significant digit, beyond which the encoding is scientific. `None` for every other string (decoded by
/// [`DecimalString::parse`]'s general rules, which give the same value).
pub(super) fn encoding_scale(s: &str) -> Option<i64> {
    let bytes = s.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let unsigned = if negative { &bytes[1..] } else { bytes };
    let (int, frac) = match unsigned.iter().position(|b| *b == b'.') {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, &[][..]),
    };
    let has_point = int.len() < unsigned.len();
    if int.is_empty() || (int.len() > 1 && int[0] == b'0') || (has_point && frac.is_empty()) {
        return None;
    }
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    if int == b"0" {
        let zeros = frac.iter().take_while(|b| **b == b'0').count();
        if zeros >= 100 || (negative && zeros == frac.len()) {
            return None;
        }
    }
    i64::try_from(frac.len()).ok().filter(|scale| *scale <= MAX_SAFE_INTEGER)
}

impl fmt::Display for DecimalString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text.as_str())
    }
}

impl fmt::Debug for DecimalString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DecimalString").field(&format_args!("{self}")).finish()
    }
}

impl From<Decimal> for DecimalString {
    /// Exact, keeping the decimal's scale (`Decimal` `1.50` becomes `"1.50"`).
    fn from(value: Decimal) -> Self {
        let mantissa = value.mantissa();
        Self::from_canonical_parts(mantissa < 0, &mantissa.unsigned_abs().to_string(), i64::from(value.scale()))
    }
}

impl TryFrom<&DecimalString> for Decimal {
    type Error = DecimalRangeError;

    /// See [`DecimalString::to_decimal`].
    fn try_from(value: &DecimalString) -> Result<Self, Self::Error> {
        value.to_decimal()
    }
}

impl TryFrom<DecimalString> for Decimal {
    type Error = DecimalRangeError;

    /// See [`DecimalString::to_decimal`].
    fn try_from(value: DecimalString) -> Result<Self, Self::Error> {
        value.to_decimal()
    }
}

impl serde::Serialize for DecimalString {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for DecimalString {
    /// Accepts a string that [`FromStr`] accepts. The error for a bad string is the
    /// [`ParseDecimalStringError`] message; for any other JSON value it is `Expected string, actual <value>`.
    // Not inlined: a struct with many scalar members calls one copy instead of carrying one per member (decoding
    // was bound by instruction-cache misses, docs/performance.md).
    #[inline(never)]
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        super::js::with_str(deserializer, str::parse::<Self>)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for DecimalString {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DecimalString".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::DecimalString").into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "decimal-string",
            "pattern": DECIMAL_STRING_PATTERN,
        })
    }
}

#[cfg(feature = "proptest")]
impl proptest::arbitrary::Arbitrary for DecimalString {
    type Parameters = ();
    type Strategy = proptest::strategy::BoxedStrategy<Self>;

    /// Zero at scales 0..=40, small values, up to 31 significant digits at scales 0..=40, and
    /// integers up to 40 digits (wei-sized amounts), both signs.
    fn arbitrary_with(_: ()) -> Self::Strategy {
        use proptest::prelude::*;
        let sign = any::<bool>();
        let zero = (0i64..=40).prop_map(|scale| Self::from_canonical_parts(false, "0", scale));
        let small = (sign, 1u64..100_000, 0i64..=6)
            .prop_map(|(negative, n, scale)| Self::from_canonical_parts(negative, &n.to_string(), scale));
        let precise = (sign, proptest::string::string_regex("[1-9][0-9]{0,30}").unwrap(), 0i64..=40)
            .prop_map(|(negative, digits, scale)| Self::from_canonical_parts(negative, &digits, scale));
        let wei =
            (sign, proptest::string::string_regex("[1-9][0-9]{0,39}").unwrap(), prop_oneof![Just(0i64), Just(18)])
                .prop_map(|(negative, digits, scale)| Self::from_canonical_parts(negative, &digits, scale));
        prop_oneof![1 => zero, 3 => small, 3 => precise, 3 => wei].boxed()
    }
}
