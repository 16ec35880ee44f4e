//! Every generated type, property-tested: an arbitrary schema-valid value encodes to JSON that validates against
//! its source component in the OpenAPI document (with the `jsonschema` crate), and decodes back to an equal
//! value, both from the `serde_json::Value` and from the JSON text. The list of types is the generated
//! `every_component!`, so a new component is covered without touching this file.

use crate::support;

use std::fmt::Debug;

use bridge_contract::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{de::DeserializeOwned, Serialize};

fn check<T>(doc: &serde_json::Value, component: &str, cases: u32, failures: &mut Vec<String>)
where
    T: Arbitrary + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let validator = support::validator(doc, component);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let result = runner.run(&any::<T>(), |value| {
        let json = serde_json::to_value(&value).map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        let errors: Vec<String> =
            validator.iter_errors(&json).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        prop_assert!(errors.is_empty(), "encoded value does not validate: {errors:?}\n{json:#}");
        let back: T =
            serde_json::from_value(json.clone()).map_err(|e| TestCaseError::fail(format!("decode: {e}\n{json:#}")))?;
        prop_assert_eq!(&back, &value);
        let text = serde_json::to_string(&value).map_err(|e| TestCaseError::fail(format!("encode text: {e}")))?;
        let back: T =
            serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("decode text: {e}\n{text}")))?;
        prop_assert_eq!(&back, &value);
        Ok(())
    });
    if let Err(e) = result {
        failures.push(format!("{component}: {e}"));
    }
}

#[test]
fn every_component_round_trips_and_validates() {
    let doc = support::json_schema_document();
    let cases = std::env::var("ROUNDTRIP_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48);
    let mut failures = Vec::new();
    let mut checked = 0;
    macro_rules! each {
        ($ty:ident, $name:literal) => {
            check::<$ty>(&doc, $name, cases, &mut failures);
            checked += 1;
        };
    }
    bridge_contract::every_component!(each);
    assert!(checked > 100, "every component is covered ({checked})");
    assert!(failures.is_empty(), "{} of {checked} types failed:\n{}", failures.len(), failures.join("\n\n"));
}

/// The validator is not vacuous: values that break the schema are rejected.
#[test]
fn validator_rejects_what_the_schema_forbids() {
    let doc = support::json_schema_document();
    let events = support::validator(&doc, "WebhookEvent");
    assert!(events.validate(&serde_json::json!({"_tag": "WEBHOOK_TEST", "type": "test", "message": "hi"})).is_ok());
    assert!(events
        .validate(&serde_json::json!({"_tag": "WEBHOOK_TEST", "type": "test", "message": "hi", "extra": 1}))
        .is_err());
    let pbd = support::validator(&doc, "PostBridgeData");
    assert!(pbd.validate(&serde_json::json!({"_tag": "partnerbtcfiv2", "spans": vec!["a"; 70]})).is_ok());
    assert!(pbd.validate(&serde_json::json!({"_tag": "partnerbtcfiv2", "spans": vec!["a"; 71]})).is_err());
    assert!(pbd.validate(&serde_json::json!({"_tag": "extended", "vaultId": -1})).is_err());
    let fees = support::validator(&doc, "QuoteFees");
    let mut f = serde_json::json!({"fee":"1","gasFee":"1","sourceGasFee":"0","platformFee":"0","percentageFee":"0",
        "feeUsd":1,"gasFeeUsd":1,"sourceGasFeeUsd":0,"platformFeeUsd":0,"percentageFeeUsd":0,
        "percentageFeeAmount":null,"percentageFeeThreshold":null});
    assert!(fees.validate(&f).is_ok());
    f["fee"] = serde_json::json!("0x10");
    assert!(fees.validate(&f).is_err(), "a bad decimal string is rejected through the decimal-string format");
}
