//! Clients in other languages, made from the document the sandbox serves, as other teams make them: each test
//! starts a sandbox, runs a script of `scripts/clients/` that fetches `GET /openapi.json`, generates a client
//! with the mainstream generators (pinned in scripts/clients/, installed by its install.sh) and drives a
//! scenario through it against the sandbox (both kinds of quote, commit, the bridge, the history, a sandbox
//! deposit to EXECUTED, the event feed, deposit addresses and their search, a 400, a 401 and a 422), then reads
//! the script's JSON report: no generator may print a warning, every step must answer its status and parse into
//! the generated model it names.
//!
//! * Python: openapi-python-client's client, and datamodel-code-generator's pydantic models parsing the same
//!   answers and production's payloads (`tests/fixtures/production`) (`scripts/clients/python/scenario.py`);
//! * TypeScript: openapi-typescript's types, openapi-fetch calls typed by them, compiled with `tsc --strict` and
//!   run under node (`scripts/clients/typescript/`).
//!
//! The `*_rides_out_429_and_503_faults_*` tests run a shorter scenario (quote, commit, history, three rounds;
//! `scripts/clients/python/faults.py`, `scripts/clients/typescript/faults.ts`) against a sandbox whose
//! `--faults` answer a fifth of the requests 429 and a fifth 503 (`--seed 35`): with the few retrying lines
//! docs/integrating.md ("Faults") shows, which the generated clients lack, and again without them, which must fail.
//!
//! Needs Python 3 with venv, Node.js and npm, and the package registries (install.sh). Outside CI the tests are
//! skipped, with the reason printed, when those are missing; in CI (`CI` set) they fail instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::support::{Running, TestStore};
use bridge_contract::operations::*;
use bridge_contract::Operation;
use bridge_sandbox::SandboxConfig;
use serde_json::Value;

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/clients")
}

/// Installs the pinned generators once; `Err` says why it cannot run here.
fn installed() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    crate::support::install_once(&INSTALLED, &["python3", "node", "npm"], &clients_dir().join("install.sh"))
}

/// Whether the test can run; in CI it must.
fn ready(test: &str) -> bool {
    crate::support::ready_or_skip(test, installed())
}

/// Starts a sandbox, runs `program args… <base-url> <token> <work dir>` (with `env` set) and returns its JSON
/// report.
async fn run_scenario(project: &str, program: PathBuf, args: Vec<PathBuf>, env: Vec<(&'static str, PathBuf)>) -> Value {
    run_scenario_with(|config| config, project, program, args, env).await
}

/// [`run_scenario`] against a sandbox started with the configuration `configure` makes of the usual one.
async fn run_scenario_with(
    configure: impl FnOnce(SandboxConfig) -> SandboxConfig,
    project: &str,
    program: PathBuf,
    args: Vec<PathBuf>,
    env: Vec<(&'static str, PathBuf)>,
) -> Value {
    let store = TestStore::sqlite();
    let work = tempfile::tempdir().unwrap();
    let sandbox = Running::with(configure(store.config())).await;
    let token = bridge_sandbox::mint_token(store.dir(), project, false, Duration::from_secs(3600)).unwrap();
    let base = sandbox.base_url.clone();
    let work_dir = work.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(program).args(args).arg(base).arg(token).arg(work_dir).envs(env).output()
    })
    .await
    .unwrap()
    .unwrap();
    sandbox.stop().await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// The checks both languages share: no generator warned, no step failed, every step of the scenario was made
/// and answered its status.
fn check_report(report: &Value, generators: &[&str]) {
    for name in generators {
        let generator = &report["generators"][name];
        assert!(generator.is_object(), "{name} did not run: {report:#}");
        assert_eq!(generator["warnings"], serde_json::json!([]), "{name} {} warned", generator["version"]);
    }
    assert!(report["error"].is_null(), "the scenario failed: {}", report["error"].as_str().unwrap_or_default());
    let made: BTreeSet<(String, u64)> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["operation"].as_str().unwrap().to_owned(), c["status"].as_u64().unwrap()))
        .collect();
    let expected: BTreeSet<(String, u64)> = [
        (QuoteBridge::ID, 200),
        (QuoteBridgeSwap::ID, 200),
        (CommitQuote::ID, 200),
        (GetBridge::ID, 200),
        (ListBridgeHistory::ID, 200),
        (SandboxDepositBridge::ID, 200),
        (SandboxAdvanceClock::ID, 200),
        (ListUserEvents::ID, 200),
        (CreateDepositAddresses::ID, 200),
        (SearchDepositAddresses::ID, 200),
        (QuoteBridge::ID, 400),
        (ListBridgeHistory::ID, 401),
        (GetBridge::ID, 422),
    ]
    .into_iter()
    .map(|(id, status)| (id.to_owned(), status))
    .collect();
    let missing: Vec<_> = expected.difference(&made).collect();
    assert!(missing.is_empty(), "the scenario did not make {missing:?}: {report:#}");
}

#[tokio::test]
async fn python_clients_generated_from_the_served_document_work() {
    if !ready("python_clients_generated_from_the_served_document_work") {
        return;
    }
    let python = clients_dir().join("python/.venv/bin/python");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/production");
    let script = vec![clients_dir().join("python/scenario.py")];
    let report = run_scenario("python-client", python, script, vec![("PRODUCTION_FIXTURES", fixtures)]).await;
    check_report(&report, &["openapi-python-client", "datamodel-code-generator"]);
    // Each answer parsed into the generated model it should: the record states among them, which the published
    // document states as complete objects.
    let models: BTreeSet<&str> =
        report["calls"].as_array().unwrap().iter().filter_map(|c| c["model"].as_str()).collect();
    for model in ["BridgeRecordBridgePending", "BridgeRecordBridgeExecuted", "HttpApiDecodeError", "InvalidRequest"] {
        assert!(models.contains(model), "no answer parsed into {model}: {models:?}");
    }
    // Production's payloads parse with the pydantic models too: the records without `_tag` among them, which a
    // discriminator on `_tag` would refuse.
    let payloads = &report["productionPayloads"];
    assert!(payloads["checked"].as_u64().unwrap() > 150, "{payloads}");
    assert_eq!(payloads["failures"], serde_json::json!([]), "production payloads the pydantic models refuse");
}

#[tokio::test]
async fn typescript_client_generated_from_the_served_document_works() {
    if !ready("typescript_client_generated_from_the_served_document_works") {
        return;
    }
    let report =
        run_scenario("typescript-client", "node".into(), vec![clients_dir().join("typescript/run.mjs")], vec![]).await;
    check_report(&report, &["openapi-typescript", "typescript"]);
    let kinds: BTreeSet<&str> = report["kinds"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(kinds.contains("BRIDGE_EXECUTED of this bridge"), "the feed's events were read: {kinds:?}");
}

/// The faults of the two tests below: `serve --seed 35 --faults` answering a fifth of every project's requests 429
/// (`retryAfter` 0.2 s, `Retry-After: 1`) and a fifth 503. The seed fixes which requests: the same in every run.
fn faulty(config: SandboxConfig) -> SandboxConfig {
    let faults =
        bridge_sandbox::faults::profile_from_flag("requests.tooManyRequests=0.2:200ms,requests.unavailable=0.2");
    SandboxConfig { seed: Some(35), faults: Some(faults.unwrap()), ..config }
}

/// What a faults scenario must show: the generator did not warn, the scenario (quote, commit, history, three rounds)
/// completed with the retrying code the docs show, after at least one 429 and one 503, and failed at a fault
/// without it.
fn check_faults_report(report: &Value, generator: &str) {
    assert_eq!(report["generators"][generator]["warnings"], serde_json::json!([]), "{report:#}");
    assert!(report["error"].is_null(), "the scenario failed: {}", report["error"].as_str().unwrap_or_default());
    let faults = &report["faults"];
    assert!(faults["tooManyRequests"].as_u64() >= Some(1) && faults["unavailable"].as_u64() >= Some(1), "{report:#}");
    let without = &report["withoutRetries"];
    assert!([429, 503].contains(&without["status"].as_u64().unwrap_or_default()), "without retries: {report:#}");
    assert!(without["fault"].is_string(), "the refusal carried x-sandbox-fault: {report:#}");
    println!("{generator}: {} faults ridden out ({} retries) in {} s", faults, report["retries"], report["seconds"]);
}

#[tokio::test]
async fn python_client_rides_out_429_and_503_faults_with_a_retrying_transport() {
    if !ready("python_client_rides_out_429_and_503_faults_with_a_retrying_transport") {
        return;
    }
    let python = clients_dir().join("python/.venv/bin/python");
    let script = vec![clients_dir().join("python/faults.py")];
    let report = run_scenario_with(faulty, "python-faults", python, script, vec![]).await;
    check_faults_report(&report, "openapi-python-client");
}

#[tokio::test]
async fn typescript_client_rides_out_429_and_503_faults_with_a_retrying_fetch() {
    if !ready("typescript_client_rides_out_429_and_503_faults_with_a_retrying_fetch") {
        return;
    }
    let run = vec![clients_dir().join("typescript/run.mjs")];
    let report =
        run_scenario_with(faulty, "typescript-faults", "node".into(), run, vec![("SCENARIO", "faults".into())]).await;
    check_faults_report(&report, "openapi-typescript");
}
