//! The binary: output format, exit status, JUnit file, `--help`.

use std::process::Command;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use bridge_conformance::SpawnedSandbox;
use bridge_server::ErrorsMode;

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bridge-conformance"));
    command.env_remove("BRIDGE_CONFORMANCE_TOKEN").env_remove("BRIDGE_CONFORMANCE_BASE_URL").env("RUST_LOG", "warn");
    command
}

#[test]
fn spawn_sandbox_runs_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("conformance.xml");
    let output = binary()
        .args(["--spawn-sandbox", "--only", "auth::quoteBridge", "--only", "schema::getBridge", "--junit"])
        .arg(&junit)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.last().copied(), Some("10 passed, 0 failed"), "{stdout}");
    assert!(lines.contains(&"PASS auth::quoteBridge::no-credential"), "{stdout}");
    assert!(lines.contains(&"PASS auth::quoteBridge::revoked-key-token"), "{stdout}");
    assert!(lines.contains(&"PASS schema::getBridge"), "{stdout}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"<testsuite name="auth" tests="9""#), "{xml}");
    assert!(xml.contains(r#"<testcase name="schema::getBridge" classname="schema""#), "{xml}");
}

async fn quote_pay_amount_as_number(request: Request, next: Next) -> Response {
    let quote = request.uri().path() == "/bridge/quote/user";
    let response = next.run(request).await;
    if !quote || response.status() != 200 {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut value: serde_json::Value =
        serde_json::from_slice(&axum::body::to_bytes(body, usize::MAX).await.unwrap()).unwrap();
    value["payAmount"] = serde_json::json!(1.5);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(serde_json::to_vec(&value).unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_is_printed_and_exits_non_zero() {
    let sandbox = SpawnedSandbox::start_with(|opened| {
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn(quote_pay_amount_as_number))
    })
    .await
    .unwrap();
    let (base_url, token) = (sandbox.base_url.clone(), sandbox.token.clone());
    let output = tokio::task::spawn_blocking(move || {
        binary()
            .args([
                "--base-url",
                &base_url,
                "--token",
                &token,
                "--only",
                "schema::quoteBridge",
                "--only",
                "schema::getWebhookPublicKey",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    sandbox.stop().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("FAIL schema::quoteBridge: ") && l.contains("/payAmount")),
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l == "PASS schema::getWebhookPublicKey"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("1 passed, 1 failed"), "{stdout}");
}

#[test]
fn an_unreachable_deployment_is_a_setup_error() {
    let output = binary().args(["--base-url", "http://127.0.0.1:9", "--token", "x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach the deployment at http://127.0.0.1:9"), "{stderr}");
    assert!(output.stdout.is_empty());
}

/// Issue 36, item 6: the log (stderr) carries ANSI colour codes only on a terminal, and not even there with
/// `NO_COLOR` set to anything but the empty string (https://no-color.org); a file or a pipe gets plain text (before:
/// always coloured). The terminal is a new pseudo-terminal of util-linux's `script`.
#[test]
fn logs_are_coloured_only_on_a_terminal_and_never_with_no_color() {
    let run = ["--base-url", "http://127.0.0.1:9", "--token", "x"];
    let log_of = |terminal: bool, no_color: Option<&str>| {
        let mut command = match terminal {
            false => {
                let mut command = binary();
                command.args(run);
                command
            }
            true => {
                let line: Vec<String> = [env!("CARGO_BIN_EXE_bridge-conformance")]
                    .iter()
                    .chain(&run)
                    .map(|arg| format!("'{arg}'"))
                    .collect();
                let mut script = Command::new("script");
                script.args(["--quiet", "--return", "--command", &line.join(" "), "/dev/null"]);
                script
            }
        };
        command
            .env("RUST_LOG", "info")
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("BRIDGE_CONFORMANCE_TOKEN")
            .env_remove("BRIDGE_CONFORMANCE_BASE_URL")
            .stdin(std::process::Stdio::null());
        if let Some(value) = no_color {
            command.env("NO_COLOR", value);
        }
        let output = command.output().expect("the binary (and util-linux's script) run");
        assert_eq!(output.status.code(), Some(2), "unreachable: {}", String::from_utf8_lossy(&output.stderr));
        let log = [output.stdout, output.stderr].concat();
        assert!(String::from_utf8_lossy(&log).contains("check(s) not run"), "{}", String::from_utf8_lossy(&log));
        log
    };
    for (terminal, no_color, coloured) in
        [(false, None, false), (true, None, true), (true, Some(""), true), (true, Some("1"), false)]
    {
        let log = log_of(terminal, no_color);
        let text = String::from_utf8_lossy(&log);
        assert_eq!(log.contains(&0x1b), coloured, "terminal {terminal}, NO_COLOR {no_color:?}: {text:?}");
    }
}

#[test]
fn help_shows_how_to_run_against_staging() {
    let output = binary().arg("--help").output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    for needle in [
        "--base-url https://bridge.staging.example.com",
        "BRIDGE_CONFORMANCE_TOKEN",
        "--spawn-sandbox",
        "--other-token",
        "--junit",
        "--only",
        "N passed, M failed",
        "proxy --upstream",
        "replay FILE",
        "--html",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
    let missing = binary().output().unwrap();
    assert_eq!(missing.status.code(), Some(2), "no target is a usage error");
}

/// Starts `bridge-conformance proxy` on a free port of 127.0.0.1 in front of `upstream`; returns the child and the
/// proxy's URL (read from the line it prints first).
fn start_proxy(upstream: &str, extra: &[&str]) -> (std::process::Child, String) {
    let mut child = binary()
        .args(["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("bridge-conformance proxy: ") {
                let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_owned());
            }
        }
    });
    let url = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the proxy prints its address");
    (child, url)
}

async fn wait(child: std::process::Child) -> std::process::Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_writes_its_reports_when_signalled_and_gates_the_exit_status() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (json, junit, html, record) = (path("r.json"), path("r.xml"), path("r.html"), path("r.jsonl"));
    let (child, url) = start_proxy(
        &sandbox.base_url,
        &[
            "--json",
            &json,
            "--junit",
            &junit,
            "--html",
            &html,
            "--record",
            &record,
            "--fail-under",
            "50",
            "--max-violations",
            "0",
        ],
    );
    let http = reqwest::Client::new();
    let key = http.get(format!("{url}/webhook/public-key")).send().await.unwrap();
    assert_eq!(key.status(), 200);
    let quote = http
        .post(format!("{url}/bridge/quote/user"))
        .bearer_auth(&sandbox.token)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(quote.status(), 400, "a decode error, as the contract says");
    assert!(quote.headers().get("x-contract-violations").is_none());
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let output = wait(child).await;
    sandbox.stop().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "--fail-under 50 fails with 2 operations exercised: {stdout}{stderr}");
    assert!(stdout.starts_with("2 requests, 0 violations"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["requests"], 2);
    assert_eq!(report["coverage"]["exercised"], 2);
    assert!(std::fs::read_to_string(&junit).unwrap().contains(r#"<testsuite name="operations""#));
    assert!(std::fs::read_to_string(&html).unwrap().starts_with("<!doctype html>"));
    assert_eq!(std::fs::read_to_string(&record).unwrap().lines().count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_stops_after_n_requests() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let (child, url) = start_proxy(&sandbox.base_url, &["--requests", "1", "--max-violations", "0"]);
    let key = reqwest::get(format!("{url}/webhook/public-key")).await.unwrap();
    assert_eq!(key.status(), 200);
    let output = wait(child).await;
    sandbox.stop().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("1 requests, 0 violations"));
}
