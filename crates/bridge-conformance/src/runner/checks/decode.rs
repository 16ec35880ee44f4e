//! The decode-error catalogue, generated from the server's decoder tables (`bridge_server::shapes`: every
//! request schema of the document, members in declaration order, with every constraint).
//!
//! For each operation with a body or query (and path parameters with constraints), the generator starts from a
//! valid request part made from the tables (required members only) and derives malformed ones: a required
//! member missing, each member of the wrong JSON type, `null` for optional members, strings too short or too
//! long (also in UTF-16 units), pattern mismatches, enum values not in the enum, undecodable decimals, dates and
//! numeric query strings, numbers out of bounds or not integers, arrays with too few or too many items or a bad
//! item, unknown and mistyped union tags and bad members of each union variant, non-object payloads, the body
//! sent with other content types, two failures at once (declaration order decides which is reported),
//! unknown members (ignored), duplicate keys (last wins) and repeated query keys.
//!
//! The expected answer of each request is computed by `bridge_server::decode::engine` from the same bytes, after
//! `bridge_server::decode::parts` turned them into the value the framework sees (path parameters, then body by
//! content type, then query), exactly in the server's order. That engine is the workspace's executable model of
//! the reference framework's behaviour, issue for issue (`docs/decode-errors.md`, pinned by its own snapshot
//! tests); the check expects 400 `HttpApiDecodeError` with exactly the engine's `issues` (tags,
//! paths, messages, in order). The top-level `message` is not compared (the spec leaves its wording free). A
//! generated request that the model decodes successfully is not a decode case and is never sent.
//!
//! Cases where the workspace deliberately differs from the framework (malformed JSON, `NaN`/`Infinity` in
//! numeric query strings) are not generated, so the catalogue also holds for the reference framework itself.

use std::sync::Arc;

use anyhow::bail;
use bridge_contract::js::JsValue;
use bridge_contract::Issue;
use bridge_server::decode::shape::{BodyShape, Shape, StructShape};
use bridge_server::decode::{engine, ErrorsMode};

use crate::contract::decode::simulate;
use crate::contract::{contract, OpInfo};
use crate::runner::check::{Check, Ctx, Needs};
use crate::runner::http::Body;

/// The members of an object, in order.
type Members = Vec<(String, JsValue)>;
/// A body: content type (or none) and bytes.
type RawBody = (Option<String>, Vec<u8>);

/// One malformed request and the issues it must get.
#[derive(Debug, Clone)]
pub struct DecodeCase {
    /// `decode::<operationId>::<part>[.member...]::<what>`.
    pub name: String,
    pub op: &'static OpInfo,
    pub path: Vec<(String, String)>,
    /// Encoded query string.
    pub query: String,
    /// Content type and bytes of the body, when one is sent.
    pub body: Option<(Option<String>, Vec<u8>)>,
    /// What the decode engine reports for this request.
    pub expected: Vec<Issue>,
}

/// One decode check per generated case, for every operation.
pub fn checks(mode: ErrorsMode) -> Vec<Check> {
    let mut checks = Vec::new();
    for op in contract().operations() {
        let needs = if op.sandbox_only { Needs::HELPERS } else { Needs::NOTHING };
        for case in cases(op, mode) {
            let case = Arc::new(case);
            checks.push(Check::new(case.name.clone(), needs, move |ctx| {
                let case = case.clone();
                Box::pin(async move { run_case(ctx, &case).await })
            }));
        }
    }
    checks
}

async fn run_case(ctx: &Ctx, case: &DecodeCase) -> anyhow::Result<()> {
    let path: Vec<(&str, &str)> = case.path.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = match &case.body {
        None => Body::None,
        Some((content_type, bytes)) => Body::Raw { content_type: content_type.clone(), bytes: bytes.clone() },
    };
    let reply = ctx.main.send(case.op, &path, &case.query, body).await?;
    let expected = serde_json::to_string(&case.expected)?;
    if reply.status != 400 || reply.tag() != Some("HttpApiDecodeError") {
        bail!("expected 400 HttpApiDecodeError with issues {expected}; got {}", reply.describe());
    }
    let actual: Vec<Issue> = match serde_json::from_value(reply.json["issues"].clone()) {
        Ok(issues) => issues,
        Err(e) => bail!("the issues do not decode ({e}): {}", reply.json["issues"]),
    };
    if actual != case.expected {
        bail!("expected issues {expected}; got {}", serde_json::to_string(&actual)?);
    }
    Ok(())
}

/// Every decode case of one operation.
pub fn cases(op: &'static OpInfo, mode: ErrorsMode) -> Vec<DecodeCase> {
    let shapes = op.shapes;
    let path_base: Vec<(String, JsValue)> = shapes.path.map(valid_query_struct).unwrap_or_default();
    let query_base: Vec<(String, JsValue)> = shapes.query.map(valid_query_struct).unwrap_or_default();
    let body_base: Option<(Option<String>, Vec<u8>)> = shapes
        .body
        .as_ref()
        .map(|b| (Some("application/json".to_owned()), valid_json(&b.shape).to_string().into_bytes()));

    // (name, path, query, body)
    let mut variants: Vec<(String, Members, Members, Option<RawBody>)> = Vec::new();
    if let Some(s) = shapes.path {
        for (name, path) in query_struct_variants("path", s, &path_base) {
            // An empty segment would not route to the operation at all.
            if path.iter().all(|(_, v)| matches!(v, JsValue::String(s) if !s.is_empty())) {
                variants.push((name, path, query_base.clone(), body_base.clone()));
            }
        }
    }
    if let Some(b) = &shapes.body {
        for (name, content_type, bytes) in body_variants(b) {
            variants.push((name, path_base.clone(), query_base.clone(), Some((content_type, bytes))));
        }
    }
    if let Some(s) = shapes.query {
        for (name, query) in query_struct_variants("query", s, &query_base) {
            variants.push((name, path_base.clone(), query, body_base.clone()));
        }
    }

    let mut out: Vec<DecodeCase> = Vec::new();
    for (name, path, query, body) in variants {
        let path: Vec<(String, String)> = path
            .into_iter()
            .map(|(k, v)| match v {
                JsValue::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
        let query = encode_query(&query);
        let Err(expected) = simulate(op, &path, body.as_ref(), &query, mode) else {
            continue;
        };
        let mut name = format!("decode::{}::{name}", op.id);
        if out.iter().any(|c| c.name == name) {
            let mut n = 2;
            while out.iter().any(|c| c.name == format!("{name}-{n}")) {
                n += 1;
            }
            name = format!("{name}-{n}");
        }
        out.push(DecodeCase { name, op, path, query, body, expected });
    }
    out
}

fn s(v: &str) -> JsValue {
    JsValue::String(v.to_owned())
}

fn accepted(shape: &Shape, value: &JsValue) -> bool {
    engine::decode(shape, value, ErrorsMode::First).is_ok()
}

/// A valid value of a JSON body position.
pub fn valid_json(shape: &Shape) -> JsValue {
    let first_ok =
        |candidates: Vec<JsValue>| candidates.into_iter().find(|c| accepted(shape, c)).unwrap_or(JsValue::Null);
    match shape {
        Shape::String(_) => first_ok(string_candidates()),
        Shape::Decimal => s("1"),
        Shape::Date => s("2026-01-01T00:00:00.000Z"),
        Shape::Number(r) => {
            let mut c = vec![JsValue::Number(1.0), JsValue::Number(0.0)];
            c.extend(r.minimum.map(JsValue::Number));
            c.extend(r.maximum.map(JsValue::Number));
            first_ok(c)
        }
        Shape::NumberFromString(_) => first_ok(vec![s("1"), s("0")]),
        Shape::Boolean => JsValue::Bool(false),
        Shape::Literals(values) => s(values[0]),
        Shape::Array(a) => JsValue::Array(vec![valid_json(&a.items); a.min_items.unwrap_or(1).max(1) as usize]),
        Shape::Struct(st) => JsValue::Object(valid_struct(st)),
        Shape::Union(u) => JsValue::Object(valid_struct(u.variants[0].1)),
    }
}

fn string_candidates() -> Vec<JsValue> {
    vec![s("conformance"), s("000000000000000000000000"), s("x")]
}

/// The required members of a struct, with valid values, in declaration order.
fn valid_struct(st: &StructShape) -> Vec<(String, JsValue)> {
    st.fields.iter().filter(|f| f.required).map(|f| (f.name.to_owned(), valid_json(&f.shape))).collect()
}

/// A valid value of a query or path position: a string.
fn valid_query(shape: &Shape) -> JsValue {
    match shape {
        Shape::NumberFromString(_) | Shape::String(_) | Shape::Literals(_) | Shape::Decimal | Shape::Date => {
            valid_json(shape)
        }
        Shape::Number(_) => s("1"),
        Shape::Boolean => s("false"),
        _ => s("conformance"),
    }
}

fn valid_query_struct(st: &'static StructShape) -> Vec<(String, JsValue)> {
    st.fields.iter().filter(|f| f.required).map(|f| (f.name.to_owned(), valid_query(&f.shape))).collect()
}

fn with(base: &[(String, JsValue)], key: &str, value: JsValue) -> Vec<(String, JsValue)> {
    let mut out = base.to_vec();
    match out.iter_mut().find(|(k, _)| k == key) {
        Some(entry) => entry.1 = value,
        None => out.push((key.to_owned(), value)),
    }
    out
}

fn without(base: &[(String, JsValue)], key: &str) -> Vec<(String, JsValue)> {
    base.iter().filter(|(k, _)| k != key).cloned().collect()
}

/// A bad value at a position: where below the position (`.member`, `[1]`, `(variant).member`), what is
/// wrong, and the value.
struct Bad {
    at: String,
    what: String,
    value: JsValue,
}

fn bad(at: impl Into<String>, what: impl Into<String>, value: JsValue) -> Bad {
    Bad { at: at.into(), what: what.into(), value }
}

/// Too long in UTF-16 code units but not in characters: `max / 2 + 1` characters outside the BMP.
fn utf16_too_long(max: u64) -> Option<JsValue> {
    let chars = max / 2 + 1;
    (max >= 2 && chars <= max).then(|| JsValue::String("\u{1F600}".repeat(chars as usize)))
}

/// Bad values of a JSON body position.
fn json_bad(shape: &Shape) -> Vec<Bad> {
    let mut out = Vec::new();
    match shape {
        Shape::String(r) => {
            out.push(bad("", "wrong-type", JsValue::Number(1.0)));
            if let Some(min) = r.min_length.filter(|m| *m > 0) {
                out.push(bad("", "too-short", s(&"x".repeat(min as usize - 1))));
            }
            if let Some(max) = r.max_length {
                out.push(bad("", "too-long", s(&"x".repeat(max as usize + 1))));
                out.extend(utf16_too_long(max).map(|v| bad("", "too-long-in-utf16-units", v)));
            }
            if r.pattern.is_some() {
                out.push(bad("", "pattern-mismatch", s("XYZ")));
            }
        }
        Shape::Decimal => {
            out.push(bad("", "wrong-type", JsValue::Number(1.5)));
            out.push(bad("", "not-a-decimal", s("abc")));
            out.push(bad("", "hexadecimal", s("0x10")));
            out.push(bad("", "padded", s(" 1")));
            out.push(bad("", "digit-separator", s("1_000")));
        }
        Shape::Date => {
            out.push(bad("", "wrong-type", JsValue::Number(0.0)));
            out.push(bad("", "not-a-date", s("conformance")));
        }
        Shape::Number(r) => {
            out.push(bad("", "wrong-type", s("1")));
            if let Some(min) = r.minimum {
                out.push(bad("", "below-minimum", JsValue::Number(min - 1.0)));
                if r.integer {
                    out.push(bad("", "below-minimum-fraction", JsValue::Number(min - 1.5)));
                }
            }
            if r.integer {
                out.push(bad("", "fraction", JsValue::Number(r.minimum.unwrap_or(0.0) + 1.5)));
            }
            if let Some(max) = r.maximum {
                out.push(bad("", "above-maximum", JsValue::Number(max + 1.0)));
            }
        }
        Shape::NumberFromString(_) => {
            out.push(bad("", "wrong-type", JsValue::Number(1.0)));
            out.push(bad("", "not-a-number", s("abc")));
        }
        Shape::Boolean => {
            out.push(bad("", "wrong-type", s("true")));
            out.push(bad("", "number", JsValue::Number(1.0)));
        }
        Shape::Literals(values) => {
            out.push(bad("", "not-a-literal", s("conformance-bogus")));
            out.push(bad("", "wrong-type", JsValue::Number(1.0)));
            let upper = values[0].to_uppercase();
            if upper != values[0] && !values.contains(&upper.as_str()) {
                out.push(bad("", "wrong-case", s(&upper)));
            }
        }
        Shape::Array(a) => {
            let item = valid_json(&a.items);
            let not_array = if matches!(item, JsValue::String(_)) { item.clone() } else { s("conformance") };
            out.push(bad("", "not-an-array", not_array));
            if let Some(min) = a.min_items.filter(|m| *m > 0) {
                out.push(bad("", "too-few-items", JsValue::Array(vec![item.clone(); min as usize - 1])));
            }
            if let Some(max) = a.max_items {
                out.push(bad("", "too-many-items", JsValue::Array(vec![item.clone(); max as usize + 1])));
            }
            for b in json_bad(&a.items).into_iter().filter(|b| b.at.is_empty()) {
                out.push(bad("[1]", b.what, JsValue::Array(vec![item.clone(), b.value])));
            }
        }
        Shape::Struct(st) => {
            out.push(bad("", "not-an-object", s("conformance")));
            out.push(bad("", "array", JsValue::Array(Vec::new())));
            out.extend(member_bad(st, "", None));
        }
        Shape::Union(u) => {
            let tag_at = format!(".{}", u.tag);
            out.push(bad("", "not-an-object", s("conformance")));
            out.push(bad(tag_at.clone(), "missing", JsValue::Object(Vec::new())));
            out.push(bad(
                tag_at.clone(),
                "unknown",
                JsValue::Object(vec![(u.tag.to_owned(), s("conformance-unknown"))]),
            ));
            out.push(bad(tag_at, "wrong-type", JsValue::Object(vec![(u.tag.to_owned(), JsValue::Number(1.0))])));
            for (name, variant) in u.variants {
                out.extend(member_bad(variant, &format!("({name})"), Some(u.tag)));
            }
        }
    }
    out
}

/// Bad members of a struct (every member but `skip`): missing (required), `null` (optional), and each member's
/// bad values, the other members valid.
fn member_bad(st: &StructShape, prefix: &str, skip: Option<&str>) -> Vec<Bad> {
    let base = valid_struct(st);
    let mut out = Vec::new();
    for f in st.fields.iter().filter(|f| Some(f.name) != skip) {
        let at = format!("{prefix}.{}", f.name);
        if f.required {
            out.push(bad(at.clone(), "missing", JsValue::Object(without(&base, f.name))));
        } else {
            out.push(bad(at.clone(), "null", JsValue::Object(with(&base, f.name, JsValue::Null))));
        }
        for b in json_bad(&f.shape) {
            out.push(bad(format!("{at}{}", b.at), b.what, JsValue::Object(with(&base, f.name, b.value))));
        }
    }
    out
}

/// Every malformed body: bad members (from the tables) and whole-payload variants.
fn body_variants(b: &BodyShape) -> Vec<(String, Option<String>, Vec<u8>)> {
    let json = Some("application/json".to_owned());
    let mut out: Vec<(String, Option<String>, Vec<u8>)> = Vec::new();
    for v in json_bad(&b.shape) {
        out.push((format!("body{}::{}", v.at, v.what), json.clone(), v.value.to_string().into_bytes()));
    }
    let base = valid_json(&b.shape);
    out.push(("body::empty".into(), json.clone(), Vec::new()));
    out.push(("body::null".into(), json.clone(), b"null".to_vec()));
    out.push(("body::text-plain".into(), Some("text/plain".into()), base.to_string().into_bytes()));
    out.push(("body::octet-stream".into(), Some("application/octet-stream".into()), base.to_string().into_bytes()));
    let Shape::Struct(st) = &b.shape else {
        return out;
    };
    let members = valid_struct(st);
    let Some(last) = st.fields.iter().rev().find(|f| f.required) else {
        return out;
    };
    // Each of these lacks the last required member, so that it fails whatever else the content type does.
    let lacking = without(&members, last.name);
    let text = |entries: &[(String, JsValue)]| JsValue::Object(entries.to_vec()).to_string().into_bytes();
    out.push(("body::json-with-charset".into(), Some("application/json; charset=utf-8".into()), text(&lacking)));
    out.push(("body::no-content-type".into(), None, text(&lacking)));
    let form: Vec<(&str, &str)> = lacking
        .iter()
        .filter_map(|(k, v)| match v {
            JsValue::String(s) => Some((k.as_str(), s.as_str())),
            _ => None,
        })
        .collect();
    out.push((
        "body::form-urlencoded".into(),
        Some("application/x-www-form-urlencoded".into()),
        crate::runner::http::encode_query(form).into_bytes(),
    ));
    let mut extra = lacking.clone();
    extra.push(("conformanceUnknownMember".into(), JsValue::Number(1.0)));
    out.push(("body::unknown-members-ignored".into(), json.clone(), text(&extra)));
    // Two failures: the first member is bad and the last required one is missing; declaration order decides.
    if let Some(first) = st.fields.first().filter(|f| f.name != last.name) {
        if let Some(b) = json_bad(&first.shape).into_iter().find(|b| b.at.is_empty()) {
            out.push(("body::two-failures".into(), json.clone(), text(&with(&lacking, first.name, b.value))));
        }
    }
    // Duplicate keys: the last one wins (the first is valid, the last is not).
    if let Some(f) = st.fields.iter().find(|f| matches!(f.shape, Shape::Literals(_))) {
        let valid = JsValue::Object(with(&members, f.name, valid_json(&f.shape))).to_string();
        let duplicate = format!(",{}:\"conformance-bogus\"}}", JsValue::String(f.name.to_owned()));
        let body = format!("{}{duplicate}", valid.strip_suffix('}').unwrap_or(&valid));
        out.push((format!("body.{}::duplicate-key-last-wins", f.name), json.clone(), body.into_bytes()));
    }
    out
}

/// Bad values of a query (or path) position: strings, or repeated keys (arrays of strings).
fn query_bad(shape: &Shape) -> Vec<(String, JsValue)> {
    let v = valid_query(shape);
    let mut out = vec![("repeated-key".to_owned(), JsValue::Array(vec![v.clone(), v.clone()]))];
    match shape {
        Shape::String(r) => {
            if let Some(min) = r.min_length.filter(|m| *m > 0) {
                out.push(("too-short".into(), s(&"x".repeat(min as usize - 1))));
            }
            if let Some(max) = r.max_length {
                out.push(("too-long".into(), s(&"x".repeat(max as usize + 1))));
                out.extend(utf16_too_long(max).map(|v| ("too-long-in-utf16-units".to_owned(), v)));
            }
            if r.pattern.is_some() {
                out.push(("pattern-mismatch".into(), s("XYZ")));
                if let JsValue::String(valid) = &v {
                    out.push(("pattern-too-long".into(), s(&format!("{valid}0"))));
                }
            }
        }
        Shape::NumberFromString(r) => {
            out.push(("not-a-number".into(), s("abc")));
            out.push(("blank".into(), s("")));
            out.push(("digit-separator".into(), s("1_000")));
            if let Some(min) = r.minimum {
                out.push(("below-minimum".into(), s(&bridge_contract::scalars::js_number_to_string(min - 1.0))));
            }
            if let Some(max) = r.maximum {
                out.push(("above-maximum".into(), s(&bridge_contract::scalars::js_number_to_string(max + 1.0))));
            }
            if r.integer {
                out.push(("fraction".into(), s("1.5")));
            }
        }
        Shape::Literals(_) => {
            out.push(("not-a-literal".into(), s("conformance-bogus")));
            out.push(("empty".into(), s("")));
        }
        _ => {}
    }
    out
}

/// Bad query parts: each required member missing, each member bad, two failures at once, and an unknown
/// parameter next to a missing one. Path parameters can only be bad values (a path cannot lack a parameter,
/// repeat one or carry an unknown one).
fn query_struct_variants(
    part: &str,
    st: &StructShape,
    base: &[(String, JsValue)],
) -> Vec<(String, Vec<(String, JsValue)>)> {
    let is_path = part == "path";
    let mut out = Vec::new();
    for f in st.fields {
        if f.required && !is_path {
            out.push((format!("{part}.{}::missing", f.name), without(base, f.name)));
        }
        for (what, value) in query_bad(&f.shape) {
            if is_path && !matches!(value, JsValue::String(_)) {
                continue;
            }
            out.push((format!("{part}.{}::{what}", f.name), with(base, f.name, value)));
        }
    }
    if is_path {
        return out;
    }
    if let Some(last) = st.fields.iter().rev().find(|f| f.required) {
        let lacking = without(base, last.name);
        if let Some(first) = st.fields.first().filter(|f| f.name != last.name) {
            if let Some((_, value)) = query_bad(&first.shape).into_iter().nth(1) {
                out.push((format!("{part}::two-failures"), with(&lacking, first.name, value)));
            }
        }
        out.push((format!("{part}::unknown-parameters-ignored"), with(&lacking, "conformanceUnknown", s("1"))));
    }
    out
}

/// `a=1&b=2&b=3` from members whose values are strings or arrays of strings (repeated keys).
fn encode_query(entries: &[(String, JsValue)]) -> String {
    let mut pairs: Vec<(&str, String)> = Vec::new();
    for (k, v) in entries {
        match v {
            JsValue::Array(items) => pairs.extend(items.iter().map(|i| (k.as_str(), as_text(i)))),
            other => pairs.push((k.as_str(), as_text(other))),
        }
    }
    crate::runner::http::encode_query(pairs.iter().map(|(k, v)| (*k, v.as_str())))
}

fn as_text(v: &JsValue) -> String {
    match v {
        JsValue::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::AnyOperation;

    fn case<'a>(cases: &'a [DecodeCase], name: &str) -> &'a DecodeCase {
        cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name}: {:?}", cases.iter().map(|c| &c.name).collect::<Vec<_>>()))
    }

    #[test]
    fn the_catalogue_covers_the_spec_table() {
        let quote = cases(contract().op(AnyOperation::QuoteBridge), ErrorsMode::First);
        let c = case(&quote, "decode::quoteBridge::body.mode::not-a-literal");
        assert_eq!(c.expected.len(), 2, "one Type issue per literal: {:?}", c.expected);
        let c = case(&quote, "decode::quoteBridge::body.amount::not-a-decimal");
        assert_eq!(c.expected[0].message, r#"Unable to decode "abc" into a BigDecimal"#);
        let c = case(&quote, "decode::quoteBridge::body.postBridgeData._tag::unknown");
        assert_eq!(serde_json::to_value(&c.expected[0].path).unwrap(), serde_json::json!(["postBridgeData", "_tag"]));
        let c = case(&quote, "decode::quoteBridge::body.amountNative::null");
        assert_eq!(c.expected.last().unwrap().message, "Expected undefined, actual null");
        let c = case(&quote, "decode::quoteBridge::body::two-failures");
        assert_eq!(c.expected.len(), 1, "first error only: {:?}", c.expected);
        let c = case(&quote, "decode::quoteBridge::body.mode::duplicate-key-last-wins");
        assert!(c.expected[0].message.contains("conformance-bogus"), "{:?}", c.expected);
        case(&quote, "decode::quoteBridge::body.postBridgeData(extended).vaultId::fraction");
        case(&quote, "decode::quoteBridge::body.postBridgeData(partnerbtcfiv2).spans::too-many-items");
        case(&quote, "decode::quoteBridge::body::text-plain");
        case(&quote, "decode::quoteBridge::body::empty");

        let sda = cases(contract().op(AnyOperation::CreateDepositAddresses), ErrorsMode::First);
        let c = case(&sda, "decode::createDepositAddresses::body.addressNote::too-long-in-utf16-units");
        assert!(
            c.expected[0].message.starts_with("Expected a string at most 80 character(s) long"),
            "{:?}",
            c.expected
        );
        case(&sda, "decode::createDepositAddresses::body.depositChains::too-few-items");
        case(&sda, "decode::createDepositAddresses::body.depositChains[1]::too-short");

        let events = cases(contract().op(AnyOperation::ListUserEvents), ErrorsMode::First);
        let c = case(&events, "decode::listUserEvents::query.pageSize::above-maximum");
        assert!(c.expected[0].message.contains("less than or equal to 50"), "{:?}", c.expected);
        case(&events, "decode::listUserEvents::query.pageToken::pattern-mismatch");
        let c = case(&events, "decode::listUserEvents::query.sinceTimestamp::repeated-key");
        assert_eq!(c.expected[0].message, r#"Expected string, actual ["1","1"]"#);

        // Nothing is generated that the model decodes successfully.
        for c in quote.iter().chain(&sda).chain(&events) {
            assert!(!c.expected.is_empty(), "{}", c.name);
        }
        // No decode cases for operations without body or query constraints.
        assert!(cases(contract().op(AnyOperation::GetWebhookPublicKey), ErrorsMode::First).is_empty());
    }

    #[test]
    fn all_mode_reports_every_failure() {
        let quote = cases(contract().op(AnyOperation::QuoteBridge), ErrorsMode::All);
        let c = case(&quote, "decode::quoteBridge::body::two-failures");
        assert_eq!(c.expected.len(), 2, "{:?}", c.expected);
    }
}
