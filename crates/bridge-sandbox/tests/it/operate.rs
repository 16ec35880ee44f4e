//! Running the sandbox as a service, in process over real HTTP on 127.0.0.1: the probes (and readiness against a
//! PostgreSQL server the test stops and starts), `/metrics` read with a Prometheus text parser, the request and
//! body-read timeouts in the contract's 503 shape, and the idle keep-alive timeout apart from the header-read one.
//! The tests that need the binary as a process (logs, SIGTERM, open-file limits) are in `processes`.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge_contract::*;
use bridge_sandbox::ServeOptions;
use serde_json::Value;

use crate::support::{Running, TestStore};

/// GET `url`: the status and the JSON body (`Null` when it is not JSON).
async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Polls `/readyz` until it answers `status`, at most `bound`; returns how long that took.
async fn ready_becomes(base: &str, status: u16, bound: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let answered = reqwest::Client::new()
            .get(format!("{base}/readyz"))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .map(|r| r.status().as_u16());
        if answered.as_ref().is_ok_and(|s| *s == status) {
            return started.elapsed();
        }
        assert!(started.elapsed() < bound, "/readyz did not answer {status} within {bound:?}: {answered:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn check_names(body: &Value) -> BTreeSet<String> {
    body["checks"].as_object().map(|c| c.keys().cloned().collect()).unwrap_or_default()
}

#[tokio::test]
async fn probes_answer_per_check_json_and_need_no_credential() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let base = &sandbox.base_url;
    assert_eq!(get(&format!("{base}/livez")).await, (200, serde_json::json!({"status": "ok"})));
    ready_becomes(base, 200, Duration::from_secs(20)).await;
    assert_eq!(get(&format!("{base}/readyz")).await, (200, serde_json::json!({"status": "ok"})));

    let (status, verbose) = get(&format!("{base}/readyz?verbose")).await;
    assert_eq!(status, 200, "{verbose}");
    let all: BTreeSet<String> =
        ["store", "migrations", "lifecycle", "delivery", "shutdown"].map(String::from).into_iter().collect();
    assert_eq!(check_names(&verbose), all);
    assert!(verbose["checks"].as_object().unwrap().values().all(|c| c["status"] == "ok"), "{verbose}");

    let (_, some) = get(&format!("{base}/readyz?verbose&exclude=store&exclude=shutdown")).await;
    let left: BTreeSet<String> = ["migrations", "lifecycle", "delivery"].map(String::from).into_iter().collect();
    assert_eq!(check_names(&some), left);
    // Neither probe is part of the contract.
    let document: Value = serde_json::from_str(bridge_contract::OPENAPI_JSON).unwrap();
    for path in ["/livez", "/readyz", "/metrics"] {
        assert!(document["paths"].get(path).is_none(), "{path} is not in the OpenAPI document");
    }
    sandbox.stop().await;
}

/// Stopping PostgreSQL turns `/readyz` 503 (naming the store) within seconds while `/livez` stays 200; starting
/// it again brings `/readyz` back to 200 without restarting the sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_a_postgresql_server_that_stops_and_starts() {
    let Some(server) = crate::pg::dedicated() else { return };
    let server = Arc::new(server);
    let store = TestStore::postgres_on(server.clone());
    let sandbox = Running::on(&store).await;
    let base = &sandbox.base_url;
    ready_becomes(base, 200, Duration::from_secs(30)).await;

    let stopping = server.clone();
    tokio::task::spawn_blocking(move || stopping.stop()).await.unwrap();
    let down = ready_becomes(base, 503, Duration::from_secs(30)).await;
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "fail");
    assert_eq!(body["checks"]["store"]["status"], "fail", "{body}");
    assert!(body["checks"]["store"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert_eq!(get(&format!("{base}/livez")).await.0, 200, "alive while the database is down");

    let starting = server.clone();
    tokio::task::spawn_blocking(move || starting.restart()).await.unwrap();
    let up = ready_becomes(base, 200, Duration::from_secs(60)).await;
    eprintln!("readiness: 503 {down:?} after PostgreSQL stopped, 200 again {up:?} after it started");
    sandbox.stop().await;
}

/// A metric's value in a scrape: the sum over the samples of `name` whose labels include `labels` (a histogram
/// counts its observations).
pub(crate) fn value(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            prometheus_parse::Value::Histogram(buckets) => buckets.iter().map(|b| b.count).fold(0.0, f64::max),
            prometheus_parse::Value::Summary(_) => panic!("{name} is a summary, not a histogram"),
        })
        .sum()
}

pub(crate) async fn scrape(base: &str) -> prometheus_parse::Scrape {
    let response = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    let text = response.text().await.unwrap();
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap()
}

/// `/metrics` parsed as Prometheus reads it: requests by operation and status with their latency histogram, 429s
/// by reason, store commits and group-commit sizes, webhook attempts by outcome, the backlog gauges; names follow
/// Prometheus' conventions. Counters are compared before and after (the recorder is the process's, so other
/// tests may add to them too: each must move by at least what this test did).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_refusals_commits_and_deliveries() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("limits.toml");
    std::fs::write(&catalogue, "[projects.limited.deposit_address_limits]\ntotal = 1\n").unwrap();
    let sandbox = Running::start_with_catalogue(dir.path(), &catalogue).await;
    let base = &sandbox.base_url;
    let client = sandbox.client(dir.path(), "limited");
    let before = scrape(base).await;

    for _ in 0..3 {
        assert_eq!(get(&format!("{base}/bridge/configs")).await.0, 200);
    }
    let request = DepositAddressCreateRequest {
        deposit_chains: vec!["ETHEREUM".into()],
        address_note: None,
        reuse_policy: Some(ReusePolicy::CreateNew),
        webhook_url: None,
        refund_address: None,
        destination_chain: "BASE".into(),
        destination_address: "0x2222222222222222222222222222222222222222".into(),
        post_bridge_data: None,
        token_out: None,
        bridge_if_not_swappable: None,
    };
    client.create_deposit_addresses(&request).await.unwrap();
    assert!(client.create_deposit_addresses(&request).await.is_err(), "the second address is over the limit");
    // One webhook, delivered to a receiver on 127.0.0.1.
    let (received, url) = receiver().await;
    client.sandbox_send_webhook_test(&SandboxWebhookTestRequest { webhook_url: url, message: None }).await.unwrap();
    let started = Instant::now();
    while received.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(started.elapsed() < Duration::from_secs(20), "the webhook was not delivered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The attempt is counted once it is recorded, just after the answer.
    let mut after = scrape(base).await;
    // A lifecycle pass runs every `TICK` (250 ms), which a quick run of the above can take less than: wait for one.
    let delivered = [("outcome", "delivered")];
    let passes = [("outcome", "ok")];
    while value(&after, "bridge_sandbox_webhook_attempts_total", &delivered)
        <= value(&before, "bridge_sandbox_webhook_attempts_total", &delivered)
        || value(&after, "bridge_sandbox_lifecycle_passes_total", &passes)
            <= value(&before, "bridge_sandbox_lifecycle_passes_total", &passes)
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the delivered attempt or a lifecycle pass is never counted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = scrape(base).await;
    }

    let moved = |name: &str, labels: &[(&str, &str)]| value(&after, name, labels) - value(&before, name, labels);
    let configs = [("operation", "getBridgeConfigs"), ("status", "200")];
    assert!(moved("bridge_sandbox_http_requests_total", &configs) >= 3.0);
    assert!(moved("bridge_sandbox_http_request_duration_seconds", &[("operation", "getBridgeConfigs")]) >= 3.0);
    let refused = [("operation", "createDepositAddresses"), ("status", "429")];
    assert!(moved("bridge_sandbox_http_requests_total", &refused) >= 1.0);
    let reason = [("operation", "createDepositAddresses"), ("reason", "DepositAddressRateLimitExceeded")];
    assert!(moved("bridge_sandbox_http_rate_limited_total", &reason) >= 1.0);
    assert!(moved("bridge_sandbox_store_commit_duration_seconds", &[("backend", "sqlite")]) >= 2.0);
    assert!(moved("bridge_sandbox_store_group_commit_writes", &[]) >= 2.0);
    assert!(moved("bridge_sandbox_webhook_attempt_duration_seconds", &[]) >= 1.0);
    assert!(
        moved("bridge_sandbox_lifecycle_passes_total", &passes) >= 1.0,
        "{} then {}",
        value(&before, "bridge_sandbox_lifecycle_passes_total", &passes),
        value(&after, "bridge_sandbox_lifecycle_passes_total", &passes)
    );

    let names: BTreeSet<&str> = after.samples.iter().map(|s| s.metric.as_str()).collect();
    for gauge in [
        "bridge_sandbox_webhook_outbox_depth",
        "bridge_sandbox_webhook_oldest_due_age_seconds",
        "bridge_sandbox_lifecycle_lag_seconds",
        "bridge_sandbox_http_connections",
        "bridge_sandbox_http_connection_limit",
        "bridge_sandbox_open_files_limit",
        "bridge_sandbox_build_info",
    ] {
        assert!(names.contains(gauge), "{gauge} is served: {names:?}");
    }
    // Prometheus' conventions: one prefix, counters end in _total, durations are in seconds; every metric is
    // documented (# HELP).
    for sample in &after.samples {
        let name = sample.metric.as_str();
        let base = name.trim_end_matches("_sum").trim_end_matches("_count");
        assert!(name.starts_with("bridge_sandbox_"), "{name}");
        match sample.value {
            prometheus_parse::Value::Counter(_) => assert!(name.ends_with("_total"), "{name}"),
            prometheus_parse::Value::Histogram(_) => {
                assert!(name.ends_with("_seconds") || name.ends_with("_writes"), "{name}")
            }
            _ => {}
        }
        assert!(after.docs.contains_key(base), "{base} has a # HELP line");
        assert!(sample.labels.get("project").is_none(), "no metric is labelled by project: {name}");
    }
    sandbox.stop().await;
}

/// A receiver on 127.0.0.1 that counts what it is sent and answers 204.
async fn receiver() -> (Arc<std::sync::atomic::AtomicUsize>, String) {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { axum::http::StatusCode::NO_CONTENT }
        }),
    );
    let url = format!("http://{}/hook", crate::support::serve_locally(app).await);
    (count, url)
}

/// Raw HTTP/1.1 on a new connection: sends `request`, returns the whole answer (until the server closes).
fn exchange(base: &str, request: &[u8], read_timeout: Duration) -> String {
    let mut stream = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(read_timeout)).unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON body of a raw answer.
fn body_of(answer: &str) -> Value {
    serde_json::from_str(answer.split_once("\r\n\r\n").map_or("", |(_, body)| body)).unwrap_or(Value::Null)
}

/// A request whose handler does not answer in time gets 503 `ServiceUnavailable`, the contract's shape, at the
/// request timeout (the store's write lock is held by the test, so the quote's write waits); a body that does
/// not arrive in time, the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_and_slow_bodies_are_answered_503_in_the_contract_shape() {
    let store = TestStore::sqlite();
    let options = ServeOptions {
        request_timeout: Duration::from_secs(2),
        body_read_timeout: Duration::from_millis(500),
        ..ServeOptions::default()
    };
    let sandbox = Running::on_with(&store, options).await;
    // No retries: the client would retry a 503 ServiceUnavailable (it says nothing was changed).
    let client = sandbox.client(store.dir(), "p").with_retry(bridge_client::RetryPolicy::none());
    let base = sandbox.base_url.clone();
    ready_becomes(&base, 200, Duration::from_secs(20)).await;

    // Another connection holds SQLite's write lock: the sandbox's writes wait for it (up to its 5 s busy timeout).
    let lock = rusqlite::Connection::open(store.dir().join("sandbox.db")).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let answered = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1 }).await;
    let Err(bridge_client::Error::Api(bridge_contract::operations::SandboxAdvanceClockError::ServiceUnavailable(e))) =
        answered
    else {
        panic!("expected 503 ServiceUnavailable: {answered:?}");
    };
    assert!(e.message.contains("did not answer within 2s"), "{}", e.message);
    assert!(started.elapsed() < Duration::from_millis(4900), "answered at the request timeout, not the store's");
    lock.execute_batch("ROLLBACK").unwrap();

    // Content-Length 100, 10 bytes sent, then nothing.
    let token = bridge_sandbox::mint_token(store.dir(), "p", false, Duration::from_secs(600)).unwrap();
    let request = format!(
        "POST /sandbox/clock/advance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"ms\": 1  "
    );
    let answer = tokio::task::spawn_blocking(move || exchange(&base, request.as_bytes(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let body = body_of(&answer);
    assert_eq!(body["_tag"], "ServiceUnavailable", "{answer}");
    assert!(body["message"].as_str().unwrap().contains("could not be read"), "{answer}");
    sandbox.stop().await;
}

/// A kept-alive connection may idle longer than the header-read timeout (load balancers keep connections for
/// their next requests), and is closed after the idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_alive_connections_idle_up_to_the_idle_timeout_not_the_header_timeout() {
    let store = TestStore::sqlite();
    let options = ServeOptions {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(4),
        ..ServeOptions::default()
    };
    let sandbox = Running::on_with(&store, options).await;
    let address = sandbox.base_url.trim_start_matches("http://").to_owned();
    let outcome = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let ask = |stream: &mut std::net::TcpStream| -> std::io::Result<String> {
            stream.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")?;
            let mut buffer = [0u8; 4096];
            let n = stream.read(&mut buffer)?;
            Ok(String::from_utf8_lossy(&buffer[..n]).into_owned())
        };
        let first = ask(&mut stream).unwrap();
        std::thread::sleep(Duration::from_secs(2)); // past the header-read timeout, within the idle timeout
        let second = ask(&mut stream);
        let idle_from = Instant::now();
        let mut rest = [0u8; 16];
        let closed = stream.read(&mut rest); // the server closes it: Ok(0)
        (first, second, closed.map_err(|e| e.kind()), idle_from.elapsed())
    })
    .await
    .unwrap();
    let (first, second, closed, after) = outcome;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(second.as_ref().is_ok_and(|s| s.starts_with("HTTP/1.1 200")), "still open after 2 s idle: {second:?}");
    assert_eq!(closed, Ok(0), "closed by the sandbox");
    assert!(
        after >= Duration::from_secs(3) && after < Duration::from_secs(9),
        "closed after the idle timeout: {after:?}"
    );
    sandbox.stop().await;
}

/// What an instance hands back when it stops: the deliveries it leased (and the bridges its lifecycle pass
/// took), none of another instance's. Two handles on one PostgreSQL database are two instances.
#[tokio::test]
async fn an_instance_hands_back_its_own_leases_and_no_others() {
    use bridge_sandbox::clock::ProjectClock;
    use bridge_sandbox::store::{DeliveryClaim, NewEvent};
    let Some(store) = TestStore::postgres() else { return };
    let (a, b) = (store.open().await, store.open().await);
    // The project's clock (manual, at 10): deliveries are due on their project's own time.
    a.project_clock("leases", &ProjectClock { value: 10, floor: 0, generation: 0 }).await.unwrap();
    let events: Vec<NewEvent> = (0..4)
        .map(|n| NewEvent {
            id: format!("lease-{n}"),
            project: "leases".into(),
            created_ms: 1,
            event: WebhookTestEvent::new(format!("{n}")).into(),
            webhook_url: Some(format!("http://127.0.0.1:9/{n}")),
        })
        .collect();
    a.append_events(&events).await.unwrap();
    let wall = bridge_sandbox::clock::wall_ms();
    let claim = |limit| DeliveryClaim {
        base_ms: 0,
        wall_ms: wall,
        lease_until_wall_ms: wall + 60_000,
        limit,
        per_url: 4,
        busy: Default::default(),
    };
    let by_a = a.take_due_deliveries(&claim(2)).await.unwrap();
    let by_b = b.take_due_deliveries(&claim(2)).await.unwrap();
    assert_eq!((by_a.len(), by_b.len()), (2, 2));
    assert!(a.take_due_deliveries(&claim(4)).await.unwrap().is_empty(), "all four are leased");

    a.release_own_leases().await.unwrap();
    let again: BTreeSet<i64> = b.take_due_deliveries(&claim(4)).await.unwrap().iter().map(|d| d.outbox_id).collect();
    let a_had: BTreeSet<i64> = by_a.iter().map(|d| d.outbox_id).collect();
    assert_eq!(again, a_had, "A's two are taken again at once; B's stay B's");
}

/// The example alert rules (docs/prometheus-alerts.yml) name only metrics the sandbox serves, every metric is in
/// docs/operations.md, and the rules file is valid for Prometheus (`promtool check rules`, when promtool is
/// installed: Debian's `prometheus` package; CI installs it, so there a missing promtool fails).
#[test]
fn the_example_alert_rules_name_served_metrics_and_pass_promtool() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rules_path = root.join("docs/prometheus-alerts.yml");
    let rules = std::fs::read_to_string(&rules_path).unwrap();
    let named: BTreeSet<&str> = rules
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("bridge_sandbox_"))
        .collect();
    assert!(named.len() >= 8, "{named:?}");
    for name in &named {
        let base = name.trim_end_matches("_bucket").trim_end_matches("_sum").trim_end_matches("_count");
        assert!(bridge_sandbox::telemetry::ALL.contains(&base), "{name} in the alert rules is not a served metric");
    }
    let operations = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    for name in bridge_sandbox::telemetry::ALL {
        assert!(operations.contains(name), "docs/operations.md lists {name}");
    }
    match std::process::Command::new("promtool").arg("check").arg("rules").arg(&rules_path).output() {
        Ok(output) => assert!(
            output.status.success(),
            "promtool check rules: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) if std::env::var_os("CI").is_some() => panic!("promtool is not installed ({e}): CI installs it"),
        Err(e) => eprintln!("skipping promtool check rules: {e} (apt-get install prometheus)"),
    }
}

/// The operations that read a body before any credential (the API-key exchange, the dashboard's sign-in) read at
/// most 4 KiB of it, whole within the short deadline (`--unauthenticated-body-timeout`, here 300 ms against a
/// 10 s body-read timeout): a body that announces 100 bytes and sends one is answered 408 at the deadline (the
/// exchange in the contract's shape, `RequestTimeout`), and its connection closed; one announcing 5,000 bytes is
/// answered 413 without being read. A normal exchange is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_bodies_are_refused_past_their_short_deadline_or_small_limit_and_closed() {
    let store = TestStore::sqlite();
    let options = ServeOptions {
        body_read_timeout: Duration::from_secs(10),
        unauthenticated_body_timeout: Duration::from_millis(300),
        ..ServeOptions::default()
    };
    let sandbox = Running::on_with(&store, options).await;
    let base = sandbox.base_url.clone();
    let key = bridge_sandbox::mint_api_key(store.dir(), "p").unwrap();
    let ask = |request: String| {
        let base = base.clone();
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let answer = exchange(&base, request.as_bytes(), Duration::from_secs(8));
            (answer, started.elapsed())
        })
    };
    let exchange_head = |length: usize| {
        format!(
            "POST /authentication/auth/apiKey HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {length}\r\n\r\n"
        )
    };
    let sign_in_head = |length: usize| {
        format!(
            "POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {length}\r\n\r\n"
        )
    };

    // Slow: the answer comes at the deadline, and then the connection is closed (read_to_end returned).
    let (answer, took) = ask(exchange_head(100) + "{").await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    assert_eq!(body_of(&answer)["_tag"], "RequestTimeout", "{answer}");
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(8), "answered at the deadline: {took:?}");
    let (answer, _) = ask(sign_in_head(100) + "c").await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive whole within 300 ms"), "the sign-in page says why: {answer}");

    // Large: refused from its Content-Length.
    let (answer, _) = ask(exchange_head(5_000) + "{").await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(body_of(&answer)["_tag"], "PayloadTooLarge", "{answer}");
    assert!(body_of(&answer)["message"].as_str().unwrap().contains("4096 bytes"), "{answer}");
    let (answer, _) = ask(sign_in_head(5_000) + "c").await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Normal: served.
    let body = serde_json::json!({ "apiKey": key }).to_string();
    let (answer, _) =
        ask(exchange_head(body.len()).replace("Host: x", "Host: x\r\nConnection: close") + &body).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(body_of(&answer)["jwt"].is_string(), "{answer}");
    sandbox.stop().await;
}
