//! `bridge-conformance receiver`: the exit status gates on `must` checks only, the report in each format (text,
//! JSON, JUnit with a test case per check and a failure per failed check, HTML), and a check that cannot run.

use std::collections::HashSet;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use bridge_client::webhook::{WebhookVerifier, SIGNATURE_HEADER};
use bridge_conformance::SpawnedSandbox;
use bridge_contract::ReceiverCheckReport;

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bridge-conformance"));
    command
        .env_remove("BRIDGE_CONFORMANCE_TOKEN")
        .env_remove("BRIDGE_CONFORMANCE_SANDBOX")
        .env("RUST_LOG", "warn")
        .arg("receiver");
    command
}

async fn run(command: Command) -> Output {
    let mut command = command;
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// A receiver that answers 200 to everything: it verifies nothing, so the signature checks (musts) fail.
async fn accepting_everything() -> String {
    let app = axum::Router::new().route("/hooks", axum::routing::post(|| async { StatusCode::OK }));
    serve(app).await
}

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A receiver that does everything right but one `should`: it answers 500 to an event it has handled.
struct RefusingDuplicates {
    verifier: WebhookVerifier,
    handled: Mutex<HashSet<String>>,
}

async fn refusing_duplicates(
    State(receiver): State<Arc<RefusingDuplicates>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let Some(signature) = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok()) else {
        return StatusCode::UNAUTHORIZED;
    };
    if receiver.verifier.verify_signature(&body, signature).is_err() {
        return StatusCode::UNAUTHORIZED;
    }
    let envelope: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as f64;
    if (now - envelope["ts"].as_f64().unwrap_or_default()).abs() > 300_000.0 {
        return StatusCode::UNAUTHORIZED;
    }
    let event_id = envelope["eventId"].as_str().unwrap_or_default().to_owned();
    match receiver.handled.lock().unwrap().insert(event_id) {
        true => StatusCode::NO_CONTENT,
        false => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A `must` check failed: exit status 1; the text names each failed check with its severity, what happened, why
/// and what was sent and came back; the JUnit file has a test case per check and a failure per failed check,
/// `must` and `should` alike; the JSON file is the report; the HTML file is the page. The sandbox is spawned
/// (here on a free port: this receiver needs no key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_must_exits_non_zero_and_every_format_has_every_check() {
    let url = accepting_everything().await;
    let dir = tempfile::tempdir().unwrap();
    let (junit, json, html) = (dir.path().join("r.xml"), dir.path().join("r.json"), dir.path().join("r.html"));
    let mut command = binary();
    command.args(["--url", &url, "--spawn-sandbox", "--sandbox-listen", "127.0.0.1:0"]);
    command.arg("--junit").arg(&junit).arg("--json").arg(&json).arg("--html").arg(&html);
    let output = run(command).await;
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let failed = [
        "FAIL must   refuses a delivery without a signature",
        "FAIL must   refuses a delivery signed with another key",
        "FAIL must   refuses a delivery whose body was changed after signing",
        "FAIL should refuses or flags a delivery whose ts is an hour old",
    ];
    for line in failed {
        assert!(stdout.lines().any(|l| l == line), "{line}\n{stdout}");
    }
    assert!(stdout.contains("       what: accepted: answered 200"), "{stdout}");
    assert!(stdout.contains("       why:  Anyone can POST to your URL"), "{stdout}");
    assert!(stdout.contains("       received: 200 in "), "{stdout}");
    assert!(stdout.lines().any(|l| l == "PASS must   acknowledges a signed BRIDGE_EXECUTED delivery"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("20 passed, 4 failed (3 must, 1 should)"), "{stdout}");

    let report: ReceiverCheckReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!((report.checks.len(), report.failed, report.must_failed), (24, 4, 3));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), report.checks.len(), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 4, "a failure per failed check, must or should: {xml}");
    assert!(
        xml.contains(
            r#"<testcase name="refuses or flags a delivery whose ts is an hour old" classname="receiver.should""#
        ),
        "{xml}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>") && page.contains("Webhook receiver check"), "{page}");
    assert_eq!(page.matches("<details ").count(), 4);
}

/// Only `should` checks failed: exit status 0 (CI gates on musts); the failure is still reported. The sandbox is
/// given (`--sandbox`, `--token`), so that the receiver verifies with its key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_failed_shoulds_exit_zero() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let served: String =
        reqwest::get(format!("{}/webhook/public-key", sandbox.base_url)).await.unwrap().json().await.unwrap();
    let receiver = Arc::new(RefusingDuplicates {
        verifier: WebhookVerifier::from_served_key(&served).unwrap(),
        handled: Mutex::default(),
    });
    let url =
        serve(axum::Router::new().route("/hooks", axum::routing::post(refusing_duplicates)).with_state(receiver)).await;
    let mut command = binary();
    command.args(["--url", &url, "--sandbox", &sandbox.base_url, "--token", &sandbox.token, "--format", "junit"]);
    let output = run(command).await;
    sandbox.stop().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.matches("<testcase ").count(), 24, "{stdout}");
    assert_eq!(stdout.matches("<failure ").count(), 1, "{stdout}");
    assert!(
        stdout.contains(r#"<testcase name="acknowledges the same event delivered twice" classname="receiver.should""#),
        "{stdout}"
    );
    assert!(stdout.contains("should: delivery 2 of 2: not acknowledged: answered 500"), "{stdout}");
}

/// A check the sandbox refuses (a URL with a password: 422) did not run: exit status 2, the reason on stderr, the
/// password not repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_cannot_run_exits_two() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let mut command = binary();
    command.args([
        "--url",
        "http://user:secret@127.0.0.1:9/hooks",
        "--sandbox",
        &sandbox.base_url,
        "--token",
        &sandbox.token,
    ]);
    let output = run(command).await;
    sandbox.stop().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("user name or password") && !stderr.contains("secret"), "{stderr}");
    assert!(output.stdout.is_empty());
}
