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
