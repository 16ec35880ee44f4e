//! How the reference framework (Effect's `Schema`) writes a schema in a message: `string`, `NonEmptyString`,
//! `ReadonlyArray<NonEmptyString>`, `"pay" | "receive"`, `{ readonly token: string; readonly amountNative?:
//! BigDecimal | undefined }`. Used by `Expected <schema>, actual <value>` issues.

use super::shape::{NumberRules, Shape, StringRules, StructShape, UnionShape};

pub fn shape(shape: &Shape) -> String {
    match shape {
        Shape::String(rules) => string(rules),
        Shape::Decimal => "BigDecimal".into(),
        Shape::Date => "Date".into(),
        Shape::Number(rules) => number(rules, "number"),
        Shape::NumberFromString(rules) => number(rules, "NumberFromString"),
        Shape::Boolean => "boolean".into(),
        Shape::Literals(values) => literals(values),
        Shape::Array(a) => match (a.min_items, a.max_items) {
            (Some(min), _) => format!("minItems({min})"),
            (None, Some(max)) => format!("maxItems({max})"),
            (None, None) => array(&a.items),
        },
        Shape::Struct(s) => structure(s),
        Shape::Union(u) => union(u),
    }
}

/// The array itself, without its item-count refinement: `ReadonlyArray<NonEmptyString>`.
pub fn array(items: &Shape) -> String {
    format!("ReadonlyArray<{}>", shape(items))
}

pub fn literals(values: &[&str]) -> String {
    values.iter().map(|v| quote(v)).collect::<Vec<_>>().join(" | ")
}

fn string(rules: &StringRules) -> String {
    if rules.trim {
        return "Trim".into();
    }
    match (rules.min_length, rules.max_length, rules.pattern) {
        (None, None, None) => "string".into(),
        (Some(1), None, None) => "NonEmptyString".into(),
        (_, _, Some(pattern)) => format!("pattern(/{pattern}/)"),
        (_, Some(max), None) => format!("maxLength({max})"),
        (Some(min), None, None) => format!("minLength({min})"),
    }
}

fn number(rules: &NumberRules, base: &str) -> String {
    match (rules.integer, rules.minimum, rules.maximum) {
        (true, Some(0.0), None) => "NonNegativeInt".into(),
        (true, None, None) => "int".into(),
        (false, Some(0.0), None) => "NonNegative".into(),
        (_, _, Some(max)) => format!("lessThanOrEqualTo({})", bridge_contract::scalars::js_number_to_string(max)),
        (_, Some(min), None) => format!("greaterThanOrEqualTo({})", bridge_contract::scalars::js_number_to_string(min)),
        (false, None, None) => base.into(),
    }
}

pub fn structure(s: &StructShape) -> String {
    let members: Vec<String> = s
        .fields
        .iter()
        .map(|f| {
            if f.required {
                format!("readonly {}: {}", f.name, shape(&f.shape))
            } else {
                format!("readonly {}?: {} | undefined", f.name, shape(&f.shape))
            }
        })
        .collect();
    if members.is_empty() {
        "{}".into()
    } else {
        format!("{{ {} }}", members.join("; "))
    }
}

pub fn union(u: &UnionShape) -> String {
    u.variants.iter().map(|(_, s)| structure(s)).collect::<Vec<_>>().join(" | ")
}

/// `JSON.stringify` of a string (serde_json escapes exactly the characters JavaScript escapes).
pub fn quote(s: &str) -> String {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return serde_json::to_string(s).unwrap_or_default();
    }
    let mut quoted = String::with_capacity(s.len() + 2);
    quoted.push('"');
    quoted.push_str(s);
    quoted.push('"');
    quoted
}
