//! Payloads shaped as the production service sends them decode into the contract's types and encode back to the
//! same JSON. The fixtures (`tests/fixtures/production/`) are written from the production service's own
//! TypeScript types (the generated `*.d.ts` of its official SDK) by `scripts/sdk/production-fixtures.mjs`, not
//! from our sandbox: one per event kind variant, record family and state, quote variant, page, post-bridge-data
//! tag and error body, each with every member the production type has (`full`) and with only its required
//! members (`minimal`). Each file names the contract type it must decode into.

use std::path::Path;

use serde::{de::DeserializeOwned, Serialize};

/// Decodes `payload` into `T`, encodes it again and compares the two JSON values.
fn round_trip<T: DeserializeOwned + Serialize>(payload: &serde_json::Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(payload.clone()).map_err(|e| format!("does not decode: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("does not encode: {e}"))?;
    if &back != payload {
        return Err(format!(
            "encodes to different JSON:\n  expected {}\n  got      {}",
            serde_json::to_string(payload).unwrap(),
            serde_json::to_string(&back).unwrap()
        ));
    }
    // The text form too, as a receiver reads it.
    let text = serde_json::to_string(payload).unwrap();
    serde_json::from_str::<T>(&text).map_err(|e| format!("does not decode from text: {e}"))?;
    Ok(())
}

/// Round-trips `payload` through the contract type whose component name is `type_name`.
fn check(type_name: &str, payload: &serde_json::Value) -> Result<(), String> {
    use bridge_contract::*;
    macro_rules! dispatch {
        ($ty:ident, $name:literal) => {
            if type_name == $name {
                return round_trip::<$ty>(payload);
            }
        };
    }
    bridge_contract::every_component!(dispatch);
    Err(format!("no contract type named {type_name}"))
}

#[test]
fn production_payloads_round_trip_through_the_contract_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/production");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for file in &files {
        let fixture: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let type_name = fixture["type"].as_str().expect("a fixture names its type");
        if let Err(e) = check(type_name, &fixture["payload"]) {
            failures.push(format!("{} ({type_name}): {e}", file.file_name().unwrap().to_string_lossy()));
        }
    }
    // Every kind of payload is there: the fixtures cover the fifteen-kind union as production sends it.
    assert!(files.len() >= 100, "only {} fixtures in {}", files.len(), dir.display());
    assert!(
        failures.is_empty(),
        "{} of {} production payloads fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
