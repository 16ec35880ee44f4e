//! Hand-written scalar newtypes: the only hand-written types of the contract.
//!
//! The OpenAPI document names three scalar schema components, and the code generator maps each of them
//! (by name) to a type of this module instead of generating one:
//!
//! | component | wire form | Rust type |
//! |---|---|---|
//! | `DecimalString` | JSON string, `format: decimal-string` | [`DecimalString`] |
//! | `DecimalNumber` | JSON number, `format: decimal-number` | [`DecimalNumber`] |
//! | `DateString` | JSON string, `format: date-time` | [`DateString`] |
//!
//! Their behaviour cannot be generated from the schema: a decimal string must stay lossless at any
//! magnitude and scale (token amounts exceed `rust_decimal` and `f64`) and must decode exactly what
//! Effect-TS's `BigDecimal` accepts; a decimal number must read and print numbers the way JavaScript
//! does (a 64-bit float, `Number.prototype.toString`); a date must accept what JavaScript's `Date`
//! parser accepts and print `toISOString()`. The production service is written in TypeScript with
//! Effect, so these types reproduce its decoding and encoding rule for rule; see each module.
//!
//! Decoding errors for JSON values of the wrong type render the raw value the way the reference
//! framework does (`Expected string, actual 1`, `Expected number, actual "1"`).

mod date_string;
mod decimal_number;
mod decimal_string;
pub mod js;

pub use date_string::{DateString, ParseDateStringError};
pub use decimal_number::{DecimalNumber, NonFiniteNumberError};
pub use decimal_string::{
    DecimalRangeError, DecimalRangeErrorKind, DecimalString, ParseDecimalStringError, DECIMAL_STRING_PATTERN,
};
pub use js::js_number_to_string;

/// The scalars' general parsers, which their fast paths must agree with exactly (`tests/it/scalars.rs` checks it
/// by property). Not part of the API: hidden, and free to change in any release.
#[doc(hidden)]
pub mod oracle {
    use super::{date_string, decimal_string, DateString, DecimalString};

    /// A decimal string read by the general rules only (no fast path).
    pub fn decimal_general(s: &str) -> Option<DecimalString> {
        DecimalString::parse_general(s)
    }

    /// The scale of `s` when it is already an encoding (`-?(0|[1-9]d*)(.d+)?`), which is then kept as it came.
    pub fn decimal_encoding_scale(s: &str) -> Option<i64> {
        decimal_string::encoding_scale(s)
    }

    /// A date string read by the general parser only (no `toISOString()` short path).
    pub fn date_general(s: &str) -> Option<DateString> {
        date_string::parse(s).and_then(DateString::from_millis)
    }

    /// `toISOString()` of an instant in milliseconds since the epoch.
    pub fn date_iso(millis: i64) -> String {
        date_string::iso(millis).to_string()
    }
}
