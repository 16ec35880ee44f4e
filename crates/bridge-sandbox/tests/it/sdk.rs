//! The production service's official TypeScript SDK (`@rhino.fi/sdk`, pinned in scripts/sdk/install.sh) as a
//! real client of a freshly started sandbox: its own HTTP clients (openapi-fetch, sending the JWT without a
//! scheme) call the public key, both quote calls and the deprecated single-token one, commit, the history page
//! and the bridge by id, deposit-address creation and search, the public status and the event feed, and the
//! production endpoints beyond the spec (`getBridgeConfig`, `cancelBridge`, the swap token configs, the cursor
//! history, the deposit-address rate-limit status); every answer
//! must be 2xx and decode into the contract type of its operation; every webhook the sandbox delivers meanwhile
//! is verified with the SDK's own `isSignatureValid` (and a tampered one must not verify). A receiver built on that
//! verifier (scripts/sdk/receiver.mjs) passes every check of the receiver check.
//!
//! Needs Node.js and npm, and the npm registry (install.sh fetches the SDK with `npm pack`). Outside CI the
//! tests are skipped, with the reason printed, when those are missing; in CI (`CI` set) they fail instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::support::Running;
use bridge_contract::operations::*;
use bridge_contract::Operation;
use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;

fn sdk_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/sdk")
}

/// Installs the pinned SDK once; `Err` says why it cannot run here.
fn installed() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    crate::support::install_once(&INSTALLED, &["node", "npm"], &sdk_dir().join("install.sh"))
}

/// Whether the test can run; in CI it must.
fn ready(test: &str) -> bool {
    crate::support::ready_or_skip(test, installed())
}

/// Decodes the answer of operation `id` into its contract type (`Operation::Response`).
fn decode_answer(id: &str, body: &Value) -> Result<(), String> {
    macro_rules! each {
        ($op:ident, $id:literal) => {
            if id == $id {
                return serde_json::from_value::<<$op as Operation>::Response>(body.clone())
                    .map(drop)
                    .map_err(|e| format!("{id}: {e}"));
            }
        };
    }
    bridge_contract::every_operation!(each);
    Err(format!("no operation {id}"))
}

#[tokio::test]
async fn the_official_sdk_works_against_the_sandbox() {
    if !ready("the_official_sdk_works_against_the_sandbox") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let token = bridge_sandbox::mint_token(dir.path(), "sdk", false, Duration::from_secs(3600)).unwrap();
    let api_key = bridge_sandbox::mint_api_key(dir.path(), "sdk").unwrap();
    let script = sdk_dir().join("sdk-test.mjs");
    let base = sandbox.base_url.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node").arg(script).arg(base).arg(token).arg(api_key).output()
    })
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(report.get("error").is_none(), "the SDK run failed: {}", report["error"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let calls = report["calls"].as_array().unwrap();
    let mut operations = BTreeSet::new();
    for call in calls {
        let (name, id, status) = (&call["name"], call["operation"].as_str().unwrap(), call["status"].as_u64().unwrap());
        assert!((200..300).contains(&status), "{name} answered {status}: {}", call["body"]);
        decode_answer(id, &call["body"]).unwrap_or_else(|e| panic!("{name}: the answer does not decode: {e}"));
        operations.insert(id.to_owned());
    }
    let expected: BTreeSet<String> = [
        GetWebhookPublicKey::ID,
        QuoteBridge::ID,
        QuoteBridgeSwap::ID,
        CommitQuote::ID,
        ListBridgeHistory::ID,
        GetBridge::ID,
        CreateDepositAddresses::ID,
        SearchDepositAddresses::ID,
        GetDepositAddressPublicStatus::ID,
        ListUserEvents::ID,
        // Production endpoints beyond the spec, through the SDK's own methods and clients.
        GetBridgeConfigs::ID,
        GetBridgeSwapTokenConfigs::ID,
        CancelBridge::ID,
        ListBridgeHistoryCursor::ID,
        GetBridgesByDepositHash::ID,
        GetBridgeByWithdrawHash::ID,
        GetDepositAddressStatus::ID,
        GetDepositAddressHistory::ID,
        GetDepositAddressCompletedRefunds::ID,
        GetDepositAddressSupportedTokens::ID,
        GetDepositAddressRateLimitStatus::ID,
        ExchangeApiKey::ID,
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let missing: Vec<_> = expected.difference(&operations).collect();
    assert!(missing.is_empty(), "the SDK did not call {missing:?}");

    // Every event of the project was delivered once at least and verified by the SDK.
    let deliveries = report["deliveries"].as_array().unwrap();
    let unverified: Vec<&Value> = deliveries.iter().filter(|d| d["verified"] != Value::Bool(true)).collect();
    assert!(unverified.is_empty(), "the SDK rejected the signature of {unverified:?}");
    let delivered: BTreeSet<&str> = deliveries.iter().filter_map(|d| d["eventId"].as_str()).collect();
    let feed = report["feedLength"].as_u64().unwrap() as usize;
    assert!(feed >= 10, "the feed has {feed} events");
    assert_eq!(delivered.len(), feed, "every event of the feed is delivered ({} of {feed})", delivered.len());
    assert_eq!(report["tamperedVerifies"], Value::Bool(false), "a tampered delivery does not verify");
    sandbox.stop().await;
}

/// The committed production payload fixtures (tests/fixtures/production) are what production-fixtures.mjs writes
/// from the pinned SDK's types today: a newer SDK pin, or a change of the script, shows up here.
#[test]
fn production_payload_fixtures_match_the_pinned_sdk() {
    if !ready("production_payload_fixtures_match_the_pinned_sdk") {
        return;
    }
    let out = Command::new("node")
        .arg(sdk_dir().join("production-fixtures.mjs"))
        .env("FIXTURES_STDOUT", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/production");
    let committed: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    let names: BTreeSet<String> = written.iter().map(|f| f["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, committed, "run `node scripts/sdk/production-fixtures.mjs` and commit tests/fixtures/production");
    for fixture in &written {
        let name = fixture["name"].as_str().unwrap();
        let on_disk: Value = serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap();
        let expected = serde_json::json!({"type": fixture["type"], "payload": fixture["json"]});
        assert_eq!(on_disk, expected, "{name} differs from what the pinned SDK's types give");
    }
}

/// The receiver check against a receiver built on the production SDK's own verifier (`isSignatureValid`;
/// scripts/sdk/receiver.mjs, a small Node receiver as a team integrating with production would write one): it
/// passes every check, `must` and `should` (the totals are printed).
#[tokio::test]
async fn the_receiver_check_passes_a_receiver_on_the_sdks_verifier() {
    if !ready("the_receiver_check_passes_a_receiver_on_the_sdks_verifier") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let mut node = tokio::process::Command::new("node")
        .arg(sdk_dir().join("receiver.mjs"))
        .arg(&sandbox.base_url)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(node.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the receiver listens within 30 s")
        .unwrap()
        .and_then(|line| line.strip_prefix("listening ").map(str::to_owned))
        .expect("the receiver prints the URL it listens on");
    let http = bridge_client::Client::reqwest_builder().unwrap().timeout(Duration::from_secs(60)).build().unwrap();
    let client = bridge_client::Client::with_reqwest(&sandbox.base_url, http, sandbox.credentials_of("sdk-receiver"));
    let request = bridge_contract::SandboxReceiverCheckRequest { url, timeout_ms: None };
    let report = client.sandbox_check_webhook_receiver(&request).await.unwrap();
    println!(
        "SDK receiver: {} passed, {} failed ({} must) in {} ms",
        report.passed, report.failed, report.must_failed, report.duration_ms
    );
    let failed: Vec<&bridge_contract::ReceiverCheck> =
        report.checks.iter().filter(|c| c.outcome == bridge_contract::ReceiverCheckOutcome::Failed).collect();
    assert!(failed.is_empty(), "{}", serde_json::to_string_pretty(&failed).unwrap());
    node.kill().await.unwrap();
    sandbox.stop().await;
}
