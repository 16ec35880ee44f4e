//! The decode engine: walks a parsed request part (a [`JsValue`], which keeps JavaScript's key order) against
//! a [`Shape`] and either produces the normalised JSON that serde turns into the operation's Rust type, or the
//! issues the reference framework (Effect's `Schema` with `HttpApi`) reports for the same input: same `_tag`s,
//! paths and messages (`../shared/spec/decode-errors.md`).
//!
//! Rules, in the framework's terms:
//! * a struct checks its members in declaration order; in `First` mode it stops at the first failing member,
//!   in `All` mode it reports every failing member; an array likewise stops at its first bad index;
//! * a union reports every member's failure, even in `First` mode: a string enum gives one `Type` issue per
//!   allowed value; an optional member is `X | undefined`, so a bad value gives X's issues and then
//!   `Expected undefined, actual <value>` at the member's own path (`null` is a bad value, not absence);
//! * refinements (lengths, pattern, bounds, item counts) run only after their base type decoded, first
//!   failing refinement only;
//! * unknown members are ignored (and dropped from the output).

use bridge_contract::js::JsValue;
use bridge_contract::scalars::js_number_to_string;
use bridge_contract::{DecimalNumber, Issue, IssueTag, PropertyKey};
use serde_json::{Map, Value};

use super::render;
use super::shape::{NumberRules, Shape, StringRules, StructShape, UnionShape};

/// How many failures a decode error reports (the framework's `errors` parse option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorsMode {
    /// Only the first failing property, in declaration order (the framework's default).
    #[default]
    First,
    /// Every failing property.
    All,
}

/// Decodes `value` against `shape`: the normalised JSON value, or the issues.
pub fn decode(shape: &Shape, value: &JsValue, mode: ErrorsMode) -> Result<Value, Vec<Issue>> {
    let mut walker = Walker { mode, path: Vec::new(), issues: Vec::new() };
    match walker.go(shape, value) {
        Some(v) if walker.issues.is_empty() => Ok(v),
        _ => Err(walker.issues),
    }
}

/// Decodes a whole struct (a request part); a missing part is the empty object.
pub fn decode_struct(shape: &'static StructShape, value: &JsValue, mode: ErrorsMode) -> Result<Value, Vec<Issue>> {
    decode(&Shape::Struct(shape), value, mode)
}

struct Walker {
    mode: ErrorsMode,
    path: Vec<PropertyKey>,
    issues: Vec<Issue>,
}

impl Walker {
    fn issue(&mut self, tag: IssueTag, message: String) {
        self.issues.push(Issue { tag, path: self.path.clone(), message });
    }

    fn expected(&mut self, what: &str, actual: &JsValue) {
        self.issue(IssueTag::Type, format!("Expected {what}, actual {actual}"));
    }

    /// Decodes one value; `None` when it failed (the issues are recorded).
    fn go(&mut self, shape: &Shape, value: &JsValue) -> Option<Value> {
        match shape {
            Shape::String(rules) => self.string(rules, value),
            Shape::Decimal => match value {
                JsValue::String(s) => match s.parse::<bridge_contract::DecimalString>() {
                    Ok(_) => Some(Value::String(s.clone())),
                    Err(_) => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a BigDecimal", render::quote(s)),
                        );
                        None
                    }
                },
                other => {
                    self.expected("string", other);
                    None
                }
            },
            Shape::Date => match value {
                JsValue::String(s) => match s.parse::<bridge_contract::DateString>() {
                    Ok(d) => Some(Value::String(d.to_string())),
                    Err(_) => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a Date", render::quote(s)),
                        );
                        None
                    }
                },
                other => {
                    self.expected("string", other);
                    None
                }
            },
            Shape::Number(rules) => match value {
                JsValue::Number(n) => self.number(rules, *n),
                other => {
                    self.expected("number", other);
                    None
                }
            },
            Shape::NumberFromString(rules) => match value {
                JsValue::String(s) => match parse_js_number(s) {
                    Some(n) => self.number(rules, n),
                    None => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a number", render::quote(s)),
                        );
                        None
                    }
                },
                other => {
                    self.expected("string", other);
                    None
                }
            },
            Shape::Boolean => match value {
                JsValue::Bool(b) => Some(Value::Bool(*b)),
                other => {
                    self.expected("boolean", other);
                    None
                }
            },
            Shape::Literals(values) => match value {
                JsValue::String(s) if values.contains(&s.as_str()) => Some(Value::String(s.clone())),
                other => {
                    for literal in values.iter() {
                        self.expected(&render::quote(literal), other);
                    }
                    None
                }
            },
            Shape::Array(array) => {
                let JsValue::Array(items) = value else {
                    self.expected(&render::array(&array.items), value);
                    return None;
                };
                let mut out = Vec::with_capacity(items.len());
                let mut failed = false;
                for (i, item) in items.iter().enumerate() {
                    self.path.push(PropertyKey::Number(DecimalNumber::from(i as u32)));
                    let decoded = self.go(&array.items, item);
                    self.path.pop();
                    match decoded {
                        Some(v) => out.push(v),
                        None => {
                            failed = true;
                            if self.mode == ErrorsMode::First {
                                return None;
                            }
                        }
                    }
                }
                if failed {
                    return None;
                }
                if let Some(min) = array.min_items.filter(|m| (items.len() as u64) < *m) {
                    self.issue(
                        IssueTag::Refinement,
                        format!("Expected an array of at least {min} item(s), actual {value}"),
                    );
                    return None;
                }
                if let Some(max) = array.max_items.filter(|m| (items.len() as u64) > *m) {
                    self.issue(
                        IssueTag::Refinement,
                        format!("Expected an array of at most {max} item(s), actual {value}"),
                    );
                    return None;
                }
                Some(Value::Array(out))
            }
            Shape::Struct(s) => self.structure(s, value),
            Shape::Union(u) => self.union(u, value),
        }
    }

    fn string(&mut self, rules: &StringRules, value: &JsValue) -> Option<Value> {
        let JsValue::String(raw) = value else {
            self.expected("string", value);
            return None;
        };
        let s = if rules.trim { trim_js(raw).to_owned() } else { raw.clone() };
        let len = s.encode_utf16().count() as u64;
        let actual = render::quote(&s);
        if let Some(min) = rules.min_length.filter(|m| len < *m) {
            let what = if min == 1 {
                "a non empty string".to_owned()
            } else {
                format!("a string at least {min} character(s) long")
            };
            self.issue(IssueTag::Refinement, format!("Expected {what}, actual {actual}"));
            return None;
        }
        if let Some(max) = rules.max_length.filter(|m| len > *m) {
            self.issue(
                IssueTag::Refinement,
                format!("Expected a string at most {max} character(s) long, actual {actual}"),
            );
            return None;
        }
        if let Some(pattern) = rules.pattern {
            if !super::pattern::matches(pattern, &s) {
                self.issue(
                    IssueTag::Refinement,
                    format!("Expected a string matching the pattern {pattern}, actual {actual}"),
                );
                return None;
            }
        }
        Some(Value::String(s))
    }

    fn number(&mut self, rules: &NumberRules, n: f64) -> Option<Value> {
        let actual = js_number_to_string(n);
        if let Some(min) = rules.minimum.filter(|m| below(n, *m)) {
            let what = if min == 0.0 {
                "a non-negative number".to_owned()
            } else {
                format!("a number greater than or equal to {}", js_number_to_string(min))
            };
            self.issue(IssueTag::Refinement, format!("Expected {what}, actual {actual}"));
            return None;
        }
        if let Some(max) = rules.maximum.filter(|m| below(*m, n)) {
            self.issue(
                IssueTag::Refinement,
                format!("Expected a number less than or equal to {}, actual {actual}", js_number_to_string(max)),
            );
            return None;
        }
        // The framework's `int` is `Number.isSafeInteger`: an integral number beyond 2^53 - 1 is not an integer.
        if rules.integer && !(n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0) {
            self.issue(IssueTag::Refinement, format!("Expected an integer, actual {actual}"));
            return None;
        }
        if !n.is_finite() {
            // The framework would pass NaN and ±Infinity on; the contract's numbers are finite (see README).
            self.issue(IssueTag::Transformation, format!("Unable to decode {actual} into a finite number"));
            return None;
        }
        Some(json_number(n))
    }

    fn structure(&mut self, s: &StructShape, value: &JsValue) -> Option<Value> {
        let JsValue::Object(entries) = value else {
            self.expected(&render::structure(s), value);
            return None;
        };
        let mut out = Map::new();
        let mut failed = false;
        for field in s.fields {
            let present = entries.iter().find(|(k, _)| k == field.name).map(|(_, v)| v);
            self.path.push(PropertyKey::String(field.name.to_owned()));
            let ok = match present {
                None if field.required => {
                    self.issue(IssueTag::Missing, "is missing".to_owned());
                    false
                }
                None => {
                    if let Some(default) = field.default {
                        out.insert(field.name.to_owned(), serde_json::from_str(default).unwrap_or(Value::Null));
                    }
                    true
                }
                Some(v) => match self.go(&field.shape, v) {
                    Some(decoded) => {
                        out.insert(field.name.to_owned(), decoded);
                        true
                    }
                    None => {
                        if !field.required {
                            // `X | undefined`: the `undefined` member fails too, at the member's own path.
                            self.expected("undefined", v);
                        }
                        false
                    }
                },
            };
            self.path.pop();
            if !ok {
                failed = true;
                if self.mode == ErrorsMode::First {
                    return None;
                }
            }
        }
        (!failed).then_some(Value::Object(out))
    }

    fn union(&mut self, u: &UnionShape, value: &JsValue) -> Option<Value> {
        let entries = match value {
            JsValue::Object(entries) => entries.as_slice(),
            JsValue::Array(_) => &[],
            other => {
                self.expected(&render::union(u), other);
                return None;
            }
        };
        self.path.push(PropertyKey::String(u.tag.to_owned()));
        let tag = entries.iter().find(|(k, _)| k == u.tag).map(|(_, v)| v);
        let variant = match tag {
            None => {
                self.issue(IssueTag::Missing, "is missing".to_owned());
                None
            }
            Some(JsValue::String(t)) => match u.variants.iter().find(|(name, _)| name == t) {
                Some((_, s)) => Some(*s),
                None => {
                    let tags: Vec<&str> = u.variants.iter().map(|(n, _)| *n).collect();
                    self.expected(&render::literals(&tags), &JsValue::String(t.clone()));
                    None
                }
            },
            Some(other) => {
                let tags: Vec<&str> = u.variants.iter().map(|(n, _)| *n).collect();
                self.expected(&render::literals(&tags), other);
                None
            }
        };
        self.path.pop();
        self.structure(variant?, value)
    }
}

/// A JSON number for serde: integers (up to 2^53) as integers, so that integer fields decode.
/// `a < b`, or either is NaN: JavaScript's `!(a >= b)`, the failing side of a bound check.
fn below(a: f64, b: f64) -> bool {
    matches!(a.partial_cmp(&b), None | Some(std::cmp::Ordering::Less))
}

fn json_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0 {
        if n >= 0.0 {
            Value::from(n as u64)
        } else {
            Value::from(n as i64)
        }
    } else {
        serde_json::Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// Effect's `Number.parse` (used by `NumberFromString`): JavaScript's `Number(s)`, except that a blank string
/// fails instead of being 0. Accepts surrounding white space, `1e1`, `.5`, `5.`, `0x10`, `0o7`, `0b1`,
/// `Infinity`; rejects `1_000`, `1n`, `--1`.
pub fn parse_js_number(s: &str) -> Option<f64> {
    match s {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let t = trim_js(s);
    if t.is_empty() {
        return None;
    }
    let radix = |prefix: [&str; 2], radix: u32| {
        prefix.iter().find_map(|p| t.strip_prefix(p)).map(|digits| {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            Some(digits.chars().fold(0f64, |acc, c| acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap())))
        })
    };
    for (prefix, r) in [(["0x", "0X"], 16), (["0o", "0O"], 8), (["0b", "0B"], 2)] {
        if let Some(result) = radix(prefix, r) {
            return result;
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return Some(if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // StrDecimalLiteral: digits [. digits] [e [+-] digits] | . digits [e ...]
    let bytes = unsigned.as_bytes();
    let mut i = 0;
    let int_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        let f = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - f;
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    // Rust's float parser reads exactly this grammar (it also needs at least one digit, checked above).
    let normalised = if unsigned.starts_with('.') { format!("0{unsigned}") } else { unsigned.to_owned() };
    let normalised = normalised.strip_suffix('.').map(str::to_owned).unwrap_or(normalised);
    let value: f64 = normalised.replace(".e", "e").replace(".E", "E").parse().ok()?;
    Some(if t.starts_with('-') { -value } else { value })
}

/// JavaScript's `String.prototype.trim`: white space and line terminators as ECMAScript defines them.
pub fn trim_js(s: &str) -> &str {
    s.trim_matches(|c: char| {
        matches!(
            c,
            '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
        )
    })
}

#[cfg(test)]
mod tests {
    use super::parse_js_number;

    /// `integer` is the framework's `int`, `Number.isSafeInteger`: integral numbers past 2^53 - 1 are refused
    /// (found by fuzzing: `{"ms": 1e300}` passed the engine, then failed serde into `u64`).
    #[test]
    fn integers_are_safe_integers() {
        use super::super::shape::{NumberRules, Shape};
        use bridge_contract::js::JsValue;
        let shape = Shape::Number(NumberRules { minimum: Some(0.0), maximum: None, integer: true });
        let decode = |n: f64| super::decode(&shape, &JsValue::Number(n), super::ErrorsMode::First);
        assert_eq!(decode(9_007_199_254_740_991.0).unwrap(), serde_json::json!(9_007_199_254_740_991u64));
        for n in [9_007_199_254_740_992.0, 1e300] {
            let issues = decode(n).unwrap_err();
            assert_eq!(issues.len(), 1);
            assert_eq!(
                issues[0].message,
                format!("Expected an integer, actual {}", bridge_contract::scalars::js_number_to_string(n))
            );
        }
        assert_eq!(decode(-1.0).unwrap_err()[0].message, "Expected a non-negative number, actual -1");
    }

    #[test]
    fn numbers_parse_like_javascript() {
        // Expected values are what `Number(s)` gives in JavaScript (blank input is the one exception).
        let cases: &[(&str, Option<f64>)] = &[
            ("1", Some(1.0)),
            (" 1", Some(1.0)),
            ("1 ", Some(1.0)),
            ("\u{a0}2\n", Some(2.0)),
            ("1e1", Some(10.0)),
            ("1E+2", Some(100.0)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("-0.25", Some(-0.25)),
            ("+3", Some(3.0)),
            ("0x10", Some(16.0)),
            ("0X1f", Some(31.0)),
            ("0o17", Some(15.0)),
            ("0b101", Some(5.0)),
            ("", None),
            ("   ", None),
            ("abc", None),
            ("1_000", None),
            ("1n", None),
            ("--1", None),
            ("-0x10", None),
            (".", None),
            ("1e", None),
            ("e1", None),
            ("0x", None),
            ("1.2.3", None),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_js_number(input), *expected, "Number({input:?})");
        }
        assert_eq!(parse_js_number("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_js_number("NaN").unwrap().is_nan());
    }
}
