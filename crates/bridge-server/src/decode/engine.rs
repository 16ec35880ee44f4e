//! The decode engine: walks a parsed request part (a [`JsValue`], which keeps JavaScript's key order, or the tree a
//! JSON body is read into by `decode::fast`: see `Node`) against a [`Shape`] and either produces the normalised
//! JSON that serde turns into the operation's Rust type, or the
//! issues the reference framework (Effect's `Schema` with `HttpApi`) reports for the same input: same `_tag`s,
//! paths and messages. The rules, what is accepted and where we deliberately differ are written out in the
//! repository's `docs/decode-errors.md`; this module is their executable form, pinned by the snapshot tests of
//! `tests/it/decode_errors.rs`.
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

use bridge_contract::codec::Buffered;
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
    let mut walker = Walker { mode, build: true, path: Vec::new(), issues: Vec::new() };
    match walker.go(shape, value) {
        Some(v) if walker.issues.is_empty() => Ok(v),
        _ => Err(walker.issues),
    }
}

/// Decodes a whole struct (a request part); a missing part is the empty object.
pub fn decode_struct(shape: &'static StructShape, value: &JsValue, mode: ErrorsMode) -> Result<Value, Vec<Issue>> {
    decode(&Shape::Struct(shape), value, mode)
}

/// Checks `value` against `shape` by the same rules as [`decode`], without writing the normalised JSON: the
/// issues, if any. Used on a body read into a [`Buffered`] tree (`decode::fast`).
pub(crate) fn check<N: Node>(shape: &Shape, value: &N, mode: ErrorsMode) -> Result<(), Vec<Issue>> {
    let mut walker = Walker { mode, build: false, path: Vec::new(), issues: Vec::new() };
    match walker.go(shape, value) {
        Some(_) if walker.issues.is_empty() => Ok(()),
        _ => Err(walker.issues),
    }
}

/// A parsed JSON value as the walker reads it: [`JsValue`] (JavaScript's key order, numbers read exactly), or a
/// [`Buffered`] tree of a body (strings borrowed from it; its numbers made exact by `decode::fast`).
pub(crate) trait Node: Sized {
    fn as_str(&self) -> Option<&str>;
    fn as_number(&self) -> Option<f64>;
    fn as_bool(&self) -> Option<bool>;
    fn as_array(&self) -> Option<&[Self]>;
    fn is_object(&self) -> bool;
    /// The member `name` of an object (its last value when it is repeated, as `JSON.parse` keeps it).
    fn member(&self, name: &str) -> Option<&Self>;
    /// `JSON.stringify` of the value as JavaScript holds it, to write in a message (`actual …`).
    fn render(&self) -> String;
}

impl Node for JsValue {
    fn as_str(&self) -> Option<&str> {
        match self {
            JsValue::String(s) => Some(s),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<f64> {
        match self {
            JsValue::Number(n) => Some(*n),
            _ => None,
        }
    }
    fn as_bool(&self) -> Option<bool> {
        match self {
            JsValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Self]> {
        match self {
            JsValue::Array(items) => Some(items),
            _ => None,
        }
    }
    fn is_object(&self) -> bool {
        matches!(self, JsValue::Object(_))
    }
    fn member(&self, name: &str) -> Option<&Self> {
        match self {
            JsValue::Object(entries) => entries.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl Node for Buffered<'_> {
    fn as_str(&self) -> Option<&str> {
        Buffered::as_str(self)
    }
    fn as_number(&self) -> Option<f64> {
        match self {
            Buffered::U64(n) => Some(*n as f64),
            Buffered::I64(n) => Some(*n as f64),
            Buffered::F64(n) => Some(*n),
            _ => None,
        }
    }
    fn as_bool(&self) -> Option<bool> {
        match self {
            Buffered::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Self]> {
        match self {
            Buffered::Seq(items) => Some(items),
            _ => None,
        }
    }
    fn is_object(&self) -> bool {
        matches!(self, Buffered::Map(_))
    }
    fn member(&self, name: &str) -> Option<&Self> {
        match self {
            Buffered::Map(entries) => {
                entries.iter().rev().find(|(k, _)| same(k.as_bytes(), name.as_bytes())).map(|(_, v)| v)
            }
            _ => None,
        }
    }
    fn render(&self) -> String {
        match self {
            Buffered::Null => "null".to_owned(),
            Buffered::Bool(b) => b.to_string(),
            Buffered::Str(s) => render::quote(s),
            Buffered::String(s) => render::quote(s),
            number @ (Buffered::U64(_) | Buffered::I64(_) | Buffered::F64(_)) => {
                js_number_to_string(number.as_number().unwrap_or_default())
            }
            // Objects in JavaScript's key order (array indices first), repeated members once.
            Buffered::Seq(_) | Buffered::Map(_) => {
                use serde::Deserialize;
                JsValue::deserialize(self.replay(true)).unwrap_or(JsValue::Null).to_string()
            }
        }
    }
}

/// `a == b` for member names (short): lengths first, then a plain loop instead of a call to `memcmp`.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// One step of the path to the value being decoded; made into `PropertyKey`s only for an issue.
#[derive(Clone, Copy)]
enum Step {
    Key(&'static str),
    Index(usize),
}

struct Walker {
    mode: ErrorsMode,
    /// Whether to write the normalised JSON (else `go` answers `Some(Value::Null)` for a good value).
    build: bool,
    path: Vec<Step>,
    issues: Vec<Issue>,
}

impl Walker {
    /// An issue at the current path. A credential in its message (the value quoted after `actual`) is written
    /// redacted ([`crate::credential::redact`]): a deliberate difference from the reference framework, which quotes
    /// the value whole.
    fn issue(&mut self, tag: IssueTag, mut message: String) {
        crate::credential::redact_in_place(&mut message);
        let path = self
            .path
            .iter()
            .map(|step| match step {
                Step::Key(name) => PropertyKey::String((*name).to_owned()),
                Step::Index(i) => PropertyKey::Number(DecimalNumber::from(*i as u32)),
            })
            .collect();
        self.issues.push(Issue { tag, path, message });
    }

    fn expected<N: Node>(&mut self, what: &str, actual: &N) {
        self.expected_rendered(what, &actual.render());
    }

    fn expected_rendered(&mut self, what: &str, actual: &str) {
        let mut message = String::with_capacity(what.len() + actual.len() + 18);
        for part in ["Expected ", what, ", actual ", actual] {
            message.push_str(part);
        }
        self.issue(IssueTag::Type, message);
    }

    /// The value written when not building the normalised JSON.
    fn done(&self, build: impl FnOnce() -> Value) -> Option<Value> {
        Some(if self.build { build() } else { Value::Null })
    }

    /// Decodes one value; `None` when it failed (the issues are recorded).
    fn go<N: Node>(&mut self, shape: &Shape, value: &N) -> Option<Value> {
        match shape {
            Shape::String(rules) => self.string(rules, value),
            Shape::Decimal => match value.as_str() {
                Some(s) => match s.parse::<bridge_contract::DecimalString>() {
                    Ok(_) => self.done(|| Value::String(s.to_owned())),
                    Err(_) => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a BigDecimal", render::quote(s)),
                        );
                        None
                    }
                },
                None => {
                    self.expected("string", value);
                    None
                }
            },
            Shape::Date => match value.as_str() {
                Some(s) => match s.parse::<bridge_contract::DateString>() {
                    Ok(d) => self.done(|| Value::String(d.to_string())),
                    Err(_) => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a Date", render::quote(s)),
                        );
                        None
                    }
                },
                None => {
                    self.expected("string", value);
                    None
                }
            },
            Shape::Number(rules) => match value.as_number() {
                Some(n) => self.number(rules, n),
                None => {
                    self.expected("number", value);
                    None
                }
            },
            Shape::NumberFromString(rules) => match value.as_str() {
                Some(s) => match parse_js_number(s) {
                    Some(n) => self.number(rules, n),
                    None => {
                        self.issue(
                            IssueTag::Transformation,
                            format!("Unable to decode {} into a number", render::quote(s)),
                        );
                        None
                    }
                },
                None => {
                    self.expected("string", value);
                    None
                }
            },
            Shape::Boolean => match value.as_bool() {
                Some(b) => self.done(|| Value::Bool(b)),
                None => {
                    self.expected("boolean", value);
                    None
                }
            },
            Shape::Literals(values) => match value.as_str() {
                Some(s) if values.contains(&s) => self.done(|| Value::String(s.to_owned())),
                _ => {
                    let actual = value.render();
                    for literal in values.iter() {
                        self.expected_rendered(&render::quote(literal), &actual);
                    }
                    None
                }
            },
            Shape::Array(array) => {
                let Some(items) = value.as_array() else {
                    self.expected(&render::array(&array.items), value);
                    return None;
                };
                let mut out = Vec::with_capacity(if self.build { items.len() } else { 0 });
                let mut failed = false;
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    let decoded = self.go(&array.items, item);
                    self.path.pop();
                    match decoded {
                        Some(v) => {
                            if self.build {
                                out.push(v);
                            }
                        }
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
                        format!("Expected an array of at least {min} item(s), actual {}", value.render()),
                    );
                    return None;
                }
                if let Some(max) = array.max_items.filter(|m| (items.len() as u64) > *m) {
                    self.issue(
                        IssueTag::Refinement,
                        format!("Expected an array of at most {max} item(s), actual {}", value.render()),
                    );
                    return None;
                }
                self.done(|| Value::Array(out))
            }
            Shape::Struct(s) => self.structure(s, value),
            Shape::Union(u) => self.union(u, value),
        }
    }

    fn string<N: Node>(&mut self, rules: &StringRules, value: &N) -> Option<Value> {
        let Some(raw) = value.as_str() else {
            self.expected("string", value);
            return None;
        };
        let s = if rules.trim { trim_js(raw) } else { raw };
        if rules.min_length.is_some() || rules.max_length.is_some() {
            let len = s.encode_utf16().count() as u64;
            if let Some(min) = rules.min_length.filter(|m| len < *m) {
                let what = if min == 1 {
                    "a non empty string".to_owned()
                } else {
                    format!("a string at least {min} character(s) long")
                };
                self.issue(IssueTag::Refinement, format!("Expected {what}, actual {}", render::quote(s)));
                return None;
            }
            if let Some(max) = rules.max_length.filter(|m| len > *m) {
                self.issue(
                    IssueTag::Refinement,
                    format!("Expected a string at most {max} character(s) long, actual {}", render::quote(s)),
                );
                return None;
            }
        }
        if let Some(pattern) = rules.pattern {
            if !super::pattern::matches(pattern, s) {
                self.issue(
                    IssueTag::Refinement,
                    format!("Expected a string matching the pattern {pattern}, actual {}", render::quote(s)),
                );
                return None;
            }
        }
        self.done(|| Value::String(s.to_owned()))
    }

    fn number(&mut self, rules: &NumberRules, n: f64) -> Option<Value> {
        let actual = || js_number_to_string(n);
        if let Some(min) = rules.minimum.filter(|m| below(n, *m)) {
            let what = if min == 0.0 {
                "a non-negative number".to_owned()
            } else {
                format!("a number greater than or equal to {}", js_number_to_string(min))
            };
            self.issue(IssueTag::Refinement, format!("Expected {what}, actual {}", actual()));
            return None;
        }
        if let Some(max) = rules.maximum.filter(|m| below(*m, n)) {
            self.issue(
                IssueTag::Refinement,
                format!("Expected a number less than or equal to {}, actual {}", js_number_to_string(max), actual()),
            );
            return None;
        }
        // The framework's `int` is `Number.isSafeInteger`: an integral number beyond 2^53 - 1 is not an integer.
        if rules.integer && !(n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0) {
            self.issue(IssueTag::Refinement, format!("Expected an integer, actual {}", actual()));
            return None;
        }
        if !n.is_finite() {
            // The framework would pass NaN and ±Infinity on; the contract's numbers are finite (docs/decode-errors.md).
            self.issue(IssueTag::Transformation, format!("Unable to decode {} into a finite number", actual()));
            return None;
        }
        self.done(|| json_number(n))
    }

    fn structure<N: Node>(&mut self, s: &StructShape, value: &N) -> Option<Value> {
        if !value.is_object() {
            self.expected(&render::structure(s), value);
            return None;
        }
        let mut out = Map::new();
        let mut failed = false;
        for field in s.fields {
            let present = value.member(field.name);
            self.path.push(Step::Key(field.name));
            let ok = match present {
                None if field.required => {
                    self.issue(IssueTag::Missing, "is missing".to_owned());
                    false
                }
                None => {
                    if let (true, Some(default)) = (self.build, field.default) {
                        out.insert(field.name.to_owned(), serde_json::from_str(default).unwrap_or(Value::Null));
                    }
                    true
                }
                Some(v) => match self.go(&field.shape, v) {
                    Some(decoded) => {
                        if self.build {
                            out.insert(field.name.to_owned(), decoded);
                        }
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
        (!failed).then_some(if self.build { Value::Object(out) } else { Value::Null })
    }

    fn union<N: Node>(&mut self, u: &UnionShape, value: &N) -> Option<Value> {
        // An array has no members: its tag is missing.
        if !value.is_object() && value.as_array().is_none() {
            self.expected(&render::union(u), value);
            return None;
        }
        self.path.push(Step::Key(u.tag));
        let variant = match value.member(u.tag) {
            None => {
                self.issue(IssueTag::Missing, "is missing".to_owned());
                None
            }
            Some(tag) => match tag.as_str().and_then(|t| u.variants.iter().find(|(name, _)| *name == t)) {
                Some((_, s)) => Some(*s),
                None => {
                    let tags: Vec<&str> = u.variants.iter().map(|(n, _)| *n).collect();
                    self.expected(&render::literals(&tags), tag);
                    None
                }
            },
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

pub(crate) fn json_number(n: f64) -> Value {
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
