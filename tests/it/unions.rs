//! The unions and the structs that flatten `allOf` members read their object whole before they know what to read
//! from it (`bridge_contract::codec`), from JSON text as from a `serde_json::Value`. For every generated type,
//! decoding the text of an arbitrary value whose objects have their members in another order gives the value; for
//! the types that read their object whole (read from the document: discriminated `oneOf`, `allOf` of components),
//! also when members are repeated, an earlier occurrence with another value, anywhere in the object: the last one
//! wins, as in the `serde_json::Value` they read before (and as `JSON.parse` does). Other structs refuse a
//! repeated member, as serde's derived impls always did. And the errors read as they did when the unions read a
//! `Value` first (pinned below).

use std::fmt::Debug;

use bridge_contract::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

/// `value` as JSON text, each object's members rotated and possibly reversed, and some members written twice,
/// first with a wrong value.
fn scrambled(value: &Value, repeat: bool, seed: &mut u64, out: &mut String) {
    /// splitmix64
    fn next(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if !entries.is_empty() {
                let by = (next(seed) as usize) % entries.len();
                entries.rotate_left(by);
            }
            if next(seed) % 2 == 0 {
                entries.reverse();
            }
            out.push('{');
            let mut first = true;
            for (key, member) in entries {
                let wrong = match next(seed) % 6 {
                    _ if !repeat => None,
                    0 => Some(Value::Null),
                    1 => Some(Value::String("wrong".into())),
                    2 => Some(serde_json::json!({"wrong": [1, 2.5]})),
                    _ => None,
                };
                for member in wrong.iter().chain([member]) {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(&serde_json::to_string(key).unwrap());
                    out.push(':');
                    let mut inner = String::new();
                    scrambled(member, repeat, seed, &mut inner);
                    out.push_str(&inner);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                scrambled(item, repeat, seed, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Components whose `Deserialize` reads the object whole: discriminated unions and structs with `allOf` members.
fn reads_whole_object(doc: &Value, name: &str) -> bool {
    let schema = &doc["components"]["schemas"][name];
    let union = schema.get("discriminator").is_some();
    let flattens = schema["allOf"].as_array().is_some_and(|members| members.iter().any(|m| m.get("$ref").is_some()));
    union || flattens
}

fn check<T>(name: &str, repeat: bool, failures: &mut Vec<String>)
where
    T: Arbitrary + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let mut runner = TestRunner::new(Config { cases: 16, failure_persistence: None, ..Config::default() });
    let result = runner.run(&(any::<T>(), any::<u64>()), |(value, mut seed)| {
        let json = serde_json::to_value(&value).map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        let mut text = String::new();
        scrambled(&json, repeat, &mut seed, &mut text);
        let from_value: T =
            serde_json::from_value(json.clone()).map_err(|e| TestCaseError::fail(format!("from the Value: {e}")))?;
        let from_text: T =
            serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("from the text: {e}\n{text}")))?;
        prop_assert_eq!(&from_value, &value);
        prop_assert_eq!(&from_text, &value, "{}", text);
        Ok(())
    });
    if let Err(e) = result {
        failures.push(format!("{name}: {e}"));
    }
}

#[test]
fn members_in_any_order_and_repeated_decode_as_from_a_value() {
    let doc: Value = serde_json::from_str(OPENAPI_SOURCE_JSON).unwrap();
    let mut failures = Vec::new();
    let (mut checked, mut repeated) = (0, 0);
    macro_rules! each {
        ($ty:ident, $name:literal) => {
            let repeat = reads_whole_object(&doc, $name);
            check::<$ty>($name, repeat, &mut failures);
            checked += 1;
            repeated += usize::from(repeat);
        };
    }
    bridge_contract::every_component!(each);
    assert!(checked > 100, "every component is covered ({checked})");
    assert!(repeated > 20, "the unions and flattening structs are checked with repeated members ({repeated})");
    assert!(failures.is_empty(), "{} of {checked} types failed:\n{}", failures.len(), failures.join("\n\n"));
}

/// The error of decoding `text` as `T`, from the text and from its `Value` (without serde_json's position).
fn errors<T: DeserializeOwned + Debug>(text: &str) -> (String, String) {
    let from_text = serde_json::from_str::<T>(text).expect_err(text).to_string();
    let value: Value = serde_json::from_str(text).unwrap();
    let from_value = serde_json::from_value::<T>(value).expect_err(text).to_string();
    (from_text, from_value)
}

/// Messages as the unions gave them when they read a `serde_json::Value` first (recorded with that code).
#[test]
fn errors_read_as_before() {
    let record = include_str!("../../benches/fixtures/bridge-record.json");
    let cases: Vec<(String, (String, String), &str)> = vec![
        (
            r#"{"_tag":"teleport"}"#.into(),
            errors::<QuoteResponse>(r#"{"_tag":"teleport"}"#),
            r#"unknown `_tag` "teleport" of QuoteResponse; expected one of "bridge", "bridgeSwap", "depositAddressBridge""#,
        ),
        (
            "{}".into(),
            errors::<QuoteResponse>("{}"),
            r#"missing `_tag` of QuoteResponse; expected one of "bridge", "bridgeSwap", "depositAddressBridge""#,
        ),
        (
            r#"{"_tag":{"b":1,"a":[1.0,1e21]}}"#.into(),
            errors::<QuoteResponse>(r#"{"_tag":{"b":1,"a":[1.0,1e21]}}"#),
            r#"`_tag` of QuoteResponse must be a string, got {"a":[1.0,1e+21],"b":1}; expected one of "bridge", "bridgeSwap", "depositAddressBridge""#,
        ),
        ("[1]".into(), errors::<QuoteResponse>("[1]"), "expected an object (QuoteResponse), got a JSON array"),
        ("{}".into(), errors::<BridgeRecord>("{}"), "missing field `token`"),
        (
            "record, amountIn x57.26".into(),
            errors::<BridgeRecord>(&record.replace("\"amountIn\":\"", "\"amountIn\":\"x")),
            r#"Unable to decode "x57.26" into a BigDecimal"#,
        ),
        (
            "record, withdrawTxHash 1".into(),
            errors::<BridgeRecord>(&record.replace("\"withdrawTxHash\":\"", "\"withdrawTxHash\":1,\"x\":\"")),
            "invalid type: integer `1`, expected a string",
        ),
        (
            "record, _tag bridge then bridgeSwap".into(),
            errors::<BridgeRecord>(
                &record.replace("\"_tag\":\"bridge\",", "\"_tag\":\"bridge\",\"_tag\":\"bridgeSwap\","),
            ),
            "missing field `tokenIn`",
        ),
        (
            r#"{"_tag":"BRIDGE_PENDING","type":"nope"}"#.into(),
            errors::<WebhookEvent>(r#"{"_tag":"BRIDGE_PENDING","type":"nope"}"#),
            r#"unknown `type` "nope" of BridgePendingEvent; expected one of "bridge", "bridgeSwap""#,
        ),
        (
            r#"{"_tag":"WEBHOOK_TEST","type":"test","message":"m","extra":1}"#.into(),
            errors::<WebhookEvent>(r#"{"_tag":"WEBHOOK_TEST","type":"test","message":"m","extra":1}"#),
            "unknown field `extra`, expected one of `_tag`, `type`, `message`",
        ),
        (
            "true".into(),
            errors::<StringOrNumber>("true"),
            "expected one of string, number (StringOrNumber), got a JSON boolean",
        ),
        (
            r#"{"_tag":"SymbolKey"}"#.into(),
            errors::<PropertyKey>(r#"{"_tag":"SymbolKey"}"#),
            "unknown variant `SymbolKey`, expected `symbol`",
        ),
    ];
    for (input, (from_text, from_value), expected) in cases {
        assert_eq!(from_text, expected, "from the text of {input}");
        assert_eq!(from_value, expected, "from the Value of {input}");
    }
    // A struct that flattens `allOf` members refuses other JSON kinds as serde's derived impl does, with its position.
    assert_eq!(
        serde_json::from_str::<BridgeRecordBridge>(r#""x""#).unwrap_err().to_string(),
        r#"invalid type: string "x", expected struct BridgeRecordBridge at line 1 column 3"#
    );
    // Inside a page, serde_json adds where the union's object ended.
    let page = format!(
        r#"{{"totalItems":1,"items":[{{"bridge":{},"rejections":[]}}]}}"#,
        record.replace("\"state\":\"EXECUTED\"", "\"state\":9")
    );
    let message = serde_json::from_str::<HistoryPage>(&page).unwrap_err().to_string();
    assert!(
        message.starts_with("`state` of BridgeState must be a string, got 9; expected one of \"PENDING\""),
        "{message}"
    );
    assert!(message.ends_with(&format!(" at line 1 column {}", page.find(",\"rejections\"").unwrap())), "{message}");
}
