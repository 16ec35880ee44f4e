//! The validating proxy over real HTTP on 127.0.0.1: in front of the sandbox under the runner's whole scenario it
//! sees no violation and every operation; in front of a deliberately wrong server (the sandbox behind a
//! middleware that alters answers in each way the checks know, chosen per request by an `x-break` header) it
//! reports each alteration at its location, in the `x-contract-violations` header and in the report; `--strict`
//! answers 502 instead; the HTML report opens in headless Chromium without errors (screenshot kept as a CI
//! artifact); and a recording replays against a fresh sandbox with no difference, and against a changed one with
//! the change.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bridge_conformance::proxy::replay::{replay, ReplayConfig};
use bridge_conformance::proxy::{Proxy, ProxyConfig};
use bridge_conformance::report::coverage::TrafficReport;
use bridge_conformance::SpawnedSandbox;
use bridge_server::ErrorsMode;
use serde_json::{json, Value};

fn quote_body() -> Value {
    json!({"token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100", "mode": "pay",
           "depositor": "0x1111111111111111111111111111111111111111", "recipient": "0x2222222222222222222222222222222222222222"})
}

async fn json_of(response: Response) -> (http::response::Parts, Value) {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    (parts, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn with_json(mut parts: http::response::Parts, value: &Value) -> Response {
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(serde_json::to_vec(value).unwrap()))
}

/// The sandbox, wrong in the way the request's `x-break` header names (the token of `no-auth` is the state).
async fn alter(State(token): State<String>, mut request: Request, next: Next) -> Response {
    let Some(alteration) = request.headers().get("x-break").and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return next.run(request).await;
    };
    match alteration.as_str() {
        "undocumented-route" => return "hello".into_response(),
        "refuse-valid" => {
            let body = json!({"_tag": "HttpApiDecodeError", "message": "x",
                              "issues": [{"_tag": "Missing", "path": ["token"], "message": "is missing"}]});
            let mut response = (http::StatusCode::BAD_REQUEST, body.to_string()).into_response();
            response.headers_mut().insert(http::header::CONTENT_TYPE, "application/json".parse().unwrap());
            return response;
        }
        "accept-invalid" => {
            let (parts, _) = request.into_parts();
            request = Request::from_parts(parts, Body::from(quote_body().to_string()));
            request.headers_mut().remove(http::header::CONTENT_LENGTH);
        }
        "no-auth" => {
            request.headers_mut().insert(http::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
        }
        _ => {}
    }
    let response = next.run(request).await;
    let (mut parts, value) = json_of(response).await;
    let mut value = value;
    match alteration.as_str() {
        "status" => parts.status = http::StatusCode::IM_A_TEAPOT,
        "number-amount" => value["payAmount"] = json!(100.5),
        "nested-number" => value["fees"]["fee"] = json!(1.5),
        "bad-decimal" => value["payAmount"] = json!("1,5"),
        "extra-member" => match value.get_mut("items").and_then(|items| items.get_mut(0)) {
            Some(item) => item["surprise"] = json!(1),
            None => value["surprise"] = json!(1),
        },
        "unknown-tag" => value["_tag"] = json!("teleport"),
        "missing-member" => {
            value.as_object_mut().unwrap().remove("quoteId");
        }
        "bad-date" => value["expiresAt"] = json!("tomorrow"),
        "drop-issue" => {
            value["issues"].as_array_mut().unwrap().pop();
        }
        "content-type" => {
            parts.headers.insert(http::header::CONTENT_TYPE, "text/plain".parse().unwrap());
        }
        "not-json" => {
            parts.headers.remove(http::header::CONTENT_LENGTH);
            return Response::from_parts(parts, Body::from("oops"));
        }
        _ => {}
    }
    with_json(parts, &value)
}

async fn wrong_sandbox() -> SpawnedSandbox {
    SpawnedSandbox::start_with(|opened| {
        // The credential `no-auth` adds: a token of the sandbox's own key.
        let project = bridge_conformance::runner::spawn::MAIN_PROJECT;
        let token = opened.access.session_token(project, false).unwrap();
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn_with_state(token, alter))
    })
    .await
    .unwrap()
}

/// One request through the proxy: status, the parsed `x-contract-violations` header (empty when absent), body.
async fn send(
    http: &reqwest::Client,
    proxy: &Proxy,
    token: Option<&str>,
    alteration: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Vec<Value>, Value) {
    let mut request = http.request(method.parse().unwrap(), format!("{}{path}", proxy.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(alteration) = alteration {
        request = request.header("x-break", alteration);
    }
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let header: Vec<Value> = response
        .headers()
        .get("x-contract-violations")
        .map(|v| serde_json::from_str(v.to_str().unwrap()).expect("the header is JSON"))
        .unwrap_or_default();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null);
    (status, header, body)
}

const QUOTE: &str = "/bridge/quote/user";
const FEED: &str = "/webhook/user-events-cursor?sinceTimestamp=0&pageSize=5";

/// One alteration of the wrong sandbox and what the proxy must report for it.
struct Alteration {
    /// The `x-break` header.
    name: &'static str,
    credential: bool,
    method: &'static str,
    path: &'static str,
    body: Option<Value>,
    rule: &'static str,
    at: &'static str,
}

fn alterations() -> Vec<Alteration> {
    let mut no_mode = quote_body();
    no_mode.as_object_mut().unwrap().remove("mode");
    let quote = |name, body: &Value, rule, at| Alteration {
        name,
        credential: true,
        method: "POST",
        path: QUOTE,
        body: Some(body.clone()),
        rule,
        at,
    };
    let valid = quote_body();
    vec![
        quote("number-amount", &valid, "decimal-string", "answer/payAmount"),
        quote("nested-number", &valid, "decimal-string", "answer/fees/fee"),
        quote("bad-decimal", &valid, "decimal-string", "answer/payAmount"),
        quote("unknown-tag", &valid, "union", "answer/_tag"),
        quote("missing-member", &valid, "required-member", "answer/quoteId"),
        quote("bad-date", &valid, "date", "answer/expiresAt"),
        quote("status", &valid, "status", "answer.status"),
        quote("content-type", &valid, "content-type", "answer.headers/content-type"),
        quote("not-json", &valid, "json", "answer"),
        quote("drop-issue", &no_mode, "decode-error", "answer/issues"),
        quote("refuse-valid", &valid, "decode-error", "answer/issues"),
        quote("accept-invalid", &no_mode, "request-refused", "request.body/mode"),
        Alteration { credential: false, ..quote("no-auth", &valid, "security", "request.headers/authorization") },
        Alteration {
            name: "extra-member",
            credential: true,
            method: "GET",
            path: FEED,
            body: None,
            rule: "closed-object",
            at: "answer/items/0/surprise",
        },
    ]
}

/// Sends every alteration (and clean requests) through a proxy in front of the wrong sandbox; checks each answer's
/// header, and returns the proxy and the sandbox, for their report.
async fn broken_traffic(http: &reqwest::Client) -> (SpawnedSandbox, Proxy) {
    let sandbox = wrong_sandbox().await;
    let proxy = Proxy::start(ProxyConfig::new(&sandbox.base_url)).await.unwrap();
    let token = sandbox.token.clone();
    let (status, header, quote) = send(http, &proxy, Some(&token), None, "POST", QUOTE, Some(&quote_body())).await;
    assert_eq!((status, header.len()), (200, 0), "a conforming answer has no violations header");
    // A committed quote puts an event in the feed.
    let commit = format!("/bridge/quote/commit/{}", quote["quoteId"].as_str().unwrap());
    let (status, header, _) = send(http, &proxy, Some(&token), None, "POST", &commit, None).await;
    assert_eq!((status, header.len()), (200, 0));

    for a in alterations() {
        let token = a.credential.then_some(token.as_str());
        let (_, header, _) = send(http, &proxy, token, Some(a.name), a.method, a.path, a.body.as_ref()).await;
        assert!(
            header.iter().any(|v| v["rule"] == a.rule && v["at"] == a.at),
            "{}: expected {} at {} in the header, got {header:?}",
            a.name,
            a.rule,
            a.at
        );
    }
    let (status, header, _) =
        send(http, &proxy, Some(&token), Some("undocumented-route"), "GET", "/bridge/secret-admin", None).await;
    assert_eq!(status, 200);
    assert_eq!((header[0]["rule"].as_str(), header[0]["at"].as_str()), (Some("route"), Some("request")), "{header:?}");
    // An unknown path answered 404 with an empty body is what the contract says: no violation.
    let (status, header, _) = send(http, &proxy, Some(&token), None, "GET", "/bridge/nowhere", None).await;
    assert_eq!((status, header.len()), (404, 0));
    (sandbox, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_alteration_is_reported_at_its_location() {
    let http = reqwest::Client::new();
    let (sandbox, proxy) = broken_traffic(&http).await;
    let report: TrafficReport = serde_json::from_str(
        &http.get(format!("{}/_conformance/report", proxy.url)).send().await.unwrap().text().await.unwrap(),
    )
    .unwrap();
    let quote = report.operations.iter().find(|o| o.operation == "quoteBridge").unwrap();
    assert_eq!(quote.requests, alterations().iter().filter(|a| a.path == QUOTE).count() as u64 + 1);
    for a in alterations() {
        let op = report.operations.iter().find(|o| o.path == a.path.split('?').next().unwrap()).unwrap();
        let found = op.groups.iter().any(|g| g.rule == a.rule && g.first.at == a.at);
        assert!(found, "{}: no {} group at {}: {:?}", a.name, a.rule, a.at, op.groups);
    }
    assert_eq!(quote.statuses_seen.get("418"), Some(&1), "{:?}", quote.statuses_seen);
    assert_eq!(report.not_in_contract.len(), 1);
    assert_eq!(report.not_in_contract[0].path, "/bridge/secret-admin");
    // Every example redacts the credential.
    let text = serde_json::to_string(&report).unwrap();
    assert!(!text.contains(&sandbox.token), "the token leaked into the report");
    assert!(text.contains("authorization: [redacted]"));
    let stopped = proxy.stop().await.unwrap();
    assert_eq!(stopped.violations, report.violations);
    sandbox.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_answers_502_with_the_violations() {
    let sandbox = wrong_sandbox().await;
    let mut config = ProxyConfig::new(&sandbox.base_url);
    config.strict = true;
    let proxy = Proxy::start(config).await.unwrap();
    let http = reqwest::Client::new();
    let token = sandbox.token.clone();
    let (status, _, body) =
        send(&http, &proxy, Some(&token), Some("nested-number"), "POST", "/bridge/quote/user", Some(&quote_body()))
            .await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["_tag"], "ContractViolations");
    assert_eq!(body["upstreamStatus"], 200);
    assert_eq!(
        (body["violations"][0]["rule"].as_str(), body["violations"][0]["at"].as_str()),
        (Some("decimal-string"), Some("answer/fees/fee"))
    );
    let (status, header, body) =
        send(&http, &proxy, Some(&token), None, "POST", "/bridge/quote/user", Some(&quote_body())).await;
    assert_eq!((status, header.len()), (200, 0), "{body}");
    proxy.stop().await.unwrap();
    sandbox.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_scenario_through_the_proxy_has_no_violation() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let mut config = sandbox.run_config();
    config.webhook_wait = std::time::Duration::from_secs(20);
    let mut out = Vec::new();
    let (report, traffic) = bridge_conformance::run_through_proxy(&config, &mut out).await.unwrap();
    sandbox.stop().await.unwrap();
    let failures: Vec<String> = report.failures().map(|r| r.line()).collect();
    assert!(failures.is_empty(), "{failures:?}");
    let violations: Vec<String> = traffic
        .operations
        .iter()
        .flat_map(|o| {
            o.groups
                .iter()
                .map(move |g| format!("{} {} x{} at {}: {}", o.operation, g.rule, g.count, g.first.at, g.first.message))
        })
        .collect();
    assert!(violations.is_empty(), "{} violation(s):\n{}", traffic.violations, violations.join("\n"));
    assert_eq!(traffic.violations, 0);
    assert_eq!(traffic.upstream_errors, 0);
    assert!(traffic.never_exercised.is_empty(), "never exercised: {:?}", traffic.never_exercised);
    assert_eq!((traffic.coverage.exercised, traffic.coverage.percent), (traffic.coverage.operations, 100.0));
    assert!(traffic.not_in_contract.is_empty(), "{:?}", traffic.not_in_contract);
    assert!(traffic.requests > report.results.len() as u64);
    let (seen, documented) = traffic.statuses_covered();
    println!("{} requests, statuses covered {seen}/{documented}", traffic.requests);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_report_opens_in_chromium_without_errors() {
    let Some(browser) = browser_test::Browser::start().await.unwrap() else { return };
    let http = reqwest::Client::new();
    let (sandbox, proxy) = broken_traffic(&http).await;
    browser.open(&format!("{}/_conformance/report?format=html", proxy.url)).await.unwrap();
    let problems = browser.problems().await.unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(browser.requests().await.unwrap(), Vec::<String>::new(), "the page loads nothing else");
    // Readable and navigable: a language, one h1, headed tables, every violation group in a details element.
    let facts = browser
        .eval(
            "return {lang: document.documentElement.lang, h1: document.querySelectorAll('h1').length,
                     unheaded: [...document.querySelectorAll('table')].filter(t => !t.querySelector('th[scope]')).length,
                     details: document.querySelectorAll('details').length, title: document.title}",
        )
        .await
        .unwrap();
    assert_eq!(facts["lang"], "en");
    assert_eq!(facts["h1"], 1);
    assert_eq!(facts["unheaded"], 0);
    assert!(facts["details"].as_u64().unwrap() >= alterations().len() as u64 - 2, "{facts}");
    assert!(facts["title"].as_str().unwrap().starts_with("Contract conformance"));
    browser
        .client()
        .find(browser_test::fantoccini::Locator::Css("details summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let shot = browser.screenshot("conformance-proxy-report").await.unwrap();
    assert!(std::fs::metadata(shot).unwrap().len() > 10_000);
    browser.close().await.unwrap();
    proxy.stop().await.unwrap();
    sandbox.stop().await.unwrap();
}

/// A short session of a client through the proxy (one project): quote, commit, read, history, deposit addresses,
/// the event feed, a simulated deposit.
async fn session(http: &reqwest::Client, base: &str, token: &str) {
    let call = |method: &str, path: &str, body: Option<Value>| {
        let mut r = http.request(method.parse().unwrap(), format!("{base}{path}")).bearer_auth(token);
        if let Some(body) = body {
            r = r.header("content-type", "application/json").body(body.to_string());
        }
        let path = path.to_owned();
        async move {
            let response = r.send().await.unwrap();
            assert!(response.status().is_success(), "{path}: {}", response.status());
            response.json::<Value>().await.unwrap()
        }
    };
    let quote = call("POST", "/bridge/quote/user", Some(quote_body())).await;
    let id = quote["quoteId"].as_str().unwrap().to_owned();
    call("POST", &format!("/bridge/quote/commit/{id}"), None).await;
    call("GET", &format!("/bridge/history/bridge/{id}"), None).await;
    call("GET", "/bridge/history/user?page=1&limit=5&sortBy=createdAt&sortDirection=desc", None).await;
    let addresses = call(
        "POST",
        "/sda/deposit-addresses",
        Some(json!({"depositChains": ["ETHEREUM"], "destinationChain": "BASE",
        "destinationAddress": "0x2222222222222222222222222222222222222222", "addressNote": "replay"})),
    )
    .await;
    let address = addresses[0]["depositAddress"].as_str().unwrap().to_owned();
    call("GET", "/sda/deposit-addresses/search?addressNote=replay", None).await;
    call("GET", &format!("/sda/deposit-addresses/{address}/ETHEREUM/public-status?destinationAddress=0x2222222222222222222222222222222222222222"), None).await;
    call("POST", &format!("/sandbox/bridges/{id}/deposit"), Some(json!({}))).await;
    call("GET", &format!("/bridge/history/bridge/{id}"), None).await;
    call("GET", "/webhook/user-events-cursor?sinceTimestamp=0&pageSize=5", None).await;
}

/// The sandbox with every quote's `payAmountUsd` changed.
async fn dearer(request: Request, next: Next) -> Response {
    let quote = request.uri().path() == "/bridge/quote/user";
    let response = next.run(request).await;
    if !quote {
        return response;
    }
    let (parts, mut value) = json_of(response).await;
    value["payAmountUsd"] = json!(1234.5);
    with_json(parts, &value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_replays_without_difference_and_shows_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("session.jsonl");
    let recorded_on = SpawnedSandbox::start().await.unwrap();
    let mut config = ProxyConfig::new(&recorded_on.base_url);
    config.record = Some(recording.clone());
    let proxy = Proxy::start(config).await.unwrap();
    let http = reqwest::Client::new();
    session(&http, &proxy.url, &recorded_on.token).await;
    let report = proxy.stop().await.unwrap();
    assert_eq!(report.violations, 0);
    let text = std::fs::read_to_string(&recording).unwrap();
    assert!(!text.contains(&recorded_on.token), "the token is redacted");
    let recorded = bridge_conformance::proxy::record::read(&recording).unwrap();
    assert_eq!(recorded.len(), 10);
    recorded_on.stop().await.unwrap();

    // A fresh sandbox: other ids, addresses and times, the same answers otherwise.
    let fresh = SpawnedSandbox::start().await.unwrap();
    let mut config = ReplayConfig::new(&fresh.base_url);
    config.token = Some(fresh.token.clone());
    let mut out = Vec::new();
    let result = replay(&recorded, &config, &mut out).await.unwrap();
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(result.failed(), 0, "{printed}");
    assert!(result.substitutions >= 3, "ids, addresses and cursors were mapped: {}", result.substitutions);
    assert_eq!(printed.lines().last(), Some("10 passed, 0 failed"));
    fresh.stop().await.unwrap();

    // A sandbox whose quotes changed: the replay shows where.
    let changed = SpawnedSandbox::start_with(|opened| {
        bridge_sandbox::app(opened, ErrorsMode::First).layer(axum::middleware::from_fn(dearer))
    })
    .await
    .unwrap();
    let mut config = ReplayConfig::new(&changed.base_url);
    config.token = Some(changed.token.clone());
    let mut out = Vec::new();
    let result = replay(&recorded, &config, &mut out).await.unwrap();
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(result.failed(), 1, "{printed}");
    let quote = &result.exchanges[0];
    assert_eq!(quote.operation.as_deref(), Some("quoteBridge"));
    assert_eq!(quote.differences.len(), 1, "{printed}");
    assert_eq!(quote.differences[0].at, "answer/payAmountUsd");
    assert_eq!(quote.differences[0].replayed, json!(1234.5));
    changed.stop().await.unwrap();
}
