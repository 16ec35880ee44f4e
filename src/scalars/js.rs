//! Any JSON value as JavaScript's `JSON.parse` holds it (public as `bridge_contract::js`), used to write
//! `actual <value>` in decode errors exactly as the reference framework does: strings JSON-quoted, numbers as `String(n)`, arrays and
//! objects as compact JSON with object keys in JavaScript order (array-index keys first, ascending,
//! then the others in order of first appearance; a repeated key keeps its first position and last value).
//!
//! Also the two renderings everything in this crate shares: [`js_number_to_string`] (`String(n)`) and
//! `json_quote` (`JSON.stringify` of a string). The scalar types import them from here; nothing here imports
//! the scalar types.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// JSON string literal of `s`, as JavaScript's `JSON.stringify` writes it.
pub(crate) fn json_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// Integers up to 2^53 in magnitude are exact in an f64.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// JavaScript's `Number.prototype.toString()` (radix 10) of `x`, i.e. `String(x)`.
///
/// The shortest digits that read back as `x` (the same digits JavaScript picks), laid out by the
/// ECMAScript `Number::toString` rules: positional for magnitudes in `[1e-6, 1e21)`, otherwise
/// exponential with an explicit exponent sign: `100`, `1.5`, `-1.5`, `0.000001`, `1e-7`, `1e+21`,
/// `1.2345e+25`; also `0` for both zeros, `NaN`, `Infinity`, `-Infinity`.
pub fn js_number_to_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Integers up to 2^53: their shortest round-trip digits are the integer's own, printed positionally.
    if x.abs() <= MAX_EXACT_INTEGER && (x as i64) as f64 == x {
        return (x as i64).to_string();
    }
    // Rust's `{:e}` without precision prints the shortest round-trip digits: `d[.ddd]e<exp>`.
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').expect("`{:e}` always has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // ECMAScript: value = 0.digits × 10^n, k = number of digits.
    let k = digits.len() as i32;
    let n = exponent + 1;
    let mut out = String::with_capacity(k as usize + 8);
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).unsigned_abs().to_string());
    }
    out
}

/// A parsed JSON value with JavaScript's object key order; `Display` is `JSON.stringify`.
#[derive(Debug, Clone, PartialEq)]
pub enum JsValue {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<JsValue>),
    Object(Vec<(String, JsValue)>),
}

/// `true` for keys JavaScript orders as array indices: canonical integers below 2^32 - 1.
fn is_array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|n| *n != u32::MAX)
}

impl<'de> Deserialize<'de> for JsValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsValueVisitor)
    }
}

/// The visitor of [`JsValue`]'s `Deserialize`, also used to render the values that [`expect_string`] and
/// [`expect_number`] refuse.
struct JsValueVisitor;

impl<'de> Visitor<'de> for JsValueVisitor {
    type Value = JsValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsValue, E> {
        Ok(JsValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(JsValue::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsValue::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<JsValue, E> {
        Ok(JsValue::String(v))
    }
    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }
    fn visit_none<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        JsValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let mut entries: Vec<(String, JsValue)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, JsValue>()? {
            insert_entry(&mut entries, key, value);
        }
        Ok(js_object(entries))
    }
}

/// A member of an object being parsed: a repeated key keeps its first position and takes the last value.
fn insert_entry(entries: &mut Vec<(String, JsValue)>, key: String, value: JsValue) {
    match entries.iter_mut().find(|(k, _)| *k == key) {
        Some(entry) => entry.1 = value,
        None => entries.push((key, value)),
    }
}

/// The object with JavaScript's key order: array-index keys first, ascending, then the others.
fn js_object(entries: Vec<(String, JsValue)>) -> JsValue {
    let (mut indices, others): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(k, _)| is_array_index(k).is_some());
    indices.sort_by_key(|(k, _)| is_array_index(k));
    indices.extend(others);
    JsValue::Object(indices)
}

/// `JSON.parse(text)`: like `serde_json::from_slice::<JsValue>` (same errors, trailing characters refused)
/// except that every number is read exactly as JavaScript reads it, the nearest 64-bit float to its
/// decimal text. serde_json's own float parsing (without its `float_roundtrip` feature, which this crate
/// does not force on anyone) can be one unit in the last place off for long mantissas, so
/// `JSON.stringify(JSON.parse(text))` would not be reproduced: a webhook signature over such a body
/// would not verify. The numbers are taken from the text itself, in document order (the order in which
/// serde_json visits them), and parsed with Rust's correctly rounded `f64::from_str`.
pub fn from_json_slice(bytes: &[u8]) -> Result<JsValue, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let numbers = number_tokens(bytes);
    let next = std::cell::Cell::new(0usize);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Exact { numbers: &numbers, next: &next }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// The text of every number token outside strings, in document order. Only meaningful for valid JSON,
/// which is all [`from_json_slice`] uses it for (serde_json validates the same bytes); also used by the
/// server's body decoder to read numbers exactly.
#[doc(hidden)]
pub fn number_tokens(bytes: &[u8]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    i += 1;
                }
                out.push(std::str::from_utf8(&bytes[start..i]).unwrap_or_default());
            }
            _ => i += 1,
        }
    }
    out
}

/// [`JsValue`]'s deserialisation with numbers re-read from their text (see [`from_json_slice`]).
struct Exact<'a> {
    numbers: &'a [&'a str],
    next: &'a std::cell::Cell<usize>,
}

impl Exact<'_> {
    fn number(&self, parsed: f64) -> JsValue {
        let k = self.next.get();
        self.next.set(k + 1);
        let exact = self.numbers.get(k).and_then(|text| text.parse::<f64>().ok());
        JsValue::Number(exact.unwrap_or(parsed))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Exact<'_> {
    type Value = JsValue;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<JsValue, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact<'_> {
    type Value = JsValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsValue, E> {
        Ok(JsValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(self.number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(self.number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(self.number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsValue::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<JsValue, E> {
        Ok(JsValue::String(v))
    }
    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Exact { numbers: self.numbers, next: self.next })? {
            items.push(item);
        }
        Ok(JsValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let mut entries: Vec<(String, JsValue)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Exact { numbers: self.numbers, next: self.next })?;
            insert_entry(&mut entries, key, value);
        }
        Ok(js_object(entries))
    }
}

impl fmt::Display for JsValue {
    /// `JSON.stringify(value)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsValue::Null => f.write_str("null"),
            JsValue::Bool(b) => write!(f, "{b}"),
            JsValue::Number(n) if n.is_finite() => f.write_str(&js_number_to_string(*n)),
            JsValue::Number(_) => f.write_str("null"),
            JsValue::String(s) => f.write_str(&json_quote(s)),
            JsValue::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            JsValue::Object(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{value}", json_quote(key))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Reads a JSON string and hands it to `parse` (borrowed from the input when the deserializer can lend it, so
/// nothing is copied); any other JSON value fails with `Expected string, actual <value>`, the value written
/// as `JSON.stringify` would. `parse`'s error becomes the deserializer's (custom) error.
///
/// Both errors are made once the deserializer has returned, as when the string was first read whole: a
/// deserializer that notes positions (serde_json) then places them as before, at the enclosing value.
pub(crate) fn with_str<'de, D, T, E>(deserializer: D, parse: impl FnOnce(&str) -> Result<T, E>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    E: fmt::Display,
{
    if !deserializer.is_human_readable() {
        let text = String::deserialize(deserializer)?;
        return parse(&text).map_err(D::Error::custom);
    }
    match deserializer.deserialize_any(StrVisitor(parse))? {
        Ok(value) => Ok(value),
        Err(Refused::Parse(e)) => Err(D::Error::custom(e)),
        Err(Refused::Kind(other)) => Err(D::Error::custom(format_args!("Expected string, actual {other}"))),
    }
}

/// Why [`with_str`] refused a value.
enum Refused<E> {
    /// A string that `parse` refused.
    Parse(E),
    /// Not a string.
    Kind(JsValue),
}

/// [`with_str`]'s visitor: a string is parsed in place; anything else is read as a [`JsValue`] to be named in
/// the error.
struct StrVisitor<F>(F);

impl<'de, F, T, E> Visitor<'de> for StrVisitor<F>
where
    F: FnOnce(&str) -> Result<T, E>,
{
    type Value = Result<T, Refused<E>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        JsValueVisitor.expecting(f)
    }
    fn visit_str<R: serde::de::Error>(self, v: &str) -> Result<Self::Value, R> {
        Ok((self.0)(v).map_err(Refused::Parse))
    }
    fn visit_bool<R: serde::de::Error>(self, v: bool) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_bool(v)?)))
    }
    fn visit_i64<R: serde::de::Error>(self, v: i64) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_i64(v)?)))
    }
    fn visit_u64<R: serde::de::Error>(self, v: u64) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_u64(v)?)))
    }
    fn visit_f64<R: serde::de::Error>(self, v: f64) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_f64(v)?)))
    }
    fn visit_unit<R: serde::de::Error>(self) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_unit()?)))
    }
    fn visit_none<R: serde::de::Error>(self) -> Result<Self::Value, R> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_none()?)))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_some(d)?)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_seq(seq)?)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(Err(Refused::Kind(JsValueVisitor.visit_map(map)?)))
    }
}

/// Reads a JSON number as JavaScript does (a 64-bit float); any other JSON value fails with
/// `Expected number, actual <value>` (made once the deserializer has returned, like [`with_str`]'s errors).
pub(crate) fn expect_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    if !deserializer.is_human_readable() {
        return f64::deserialize(deserializer);
    }
    deserializer
        .deserialize_any(NumberVisitor)?
        .map_err(|other| D::Error::custom(format_args!("Expected number, actual {other}")))
}

/// [`expect_number`]'s visitor: numbers are taken as they come; anything else is read as a [`JsValue`] to be
/// named in the error.
struct NumberVisitor;

impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Result<f64, JsValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        JsValueVisitor.expecting(f)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Ok(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Ok(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Ok(v))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        JsValueVisitor.visit_bool(v).map(Err)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        JsValueVisitor.visit_str(v).map(Err)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        JsValueVisitor.visit_unit().map(Err)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        JsValueVisitor.visit_none().map(Err)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        JsValueVisitor.visit_some(d).map(Err)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        JsValueVisitor.visit_seq(seq).map(Err)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        JsValueVisitor.visit_map(map).map(Err)
    }
}
