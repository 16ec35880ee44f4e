//! `/dashboard` and `/docs` in headless Chromium (crates/browser-test: Debian's chromium and chromedriver), and
//! the dashboard's session and cross-site protections over plain HTTP.
//!
//! The browser test signs in with a project token, makes a quote and commits it through the API, sees the bridge
//! appear (no reload), simulates its deposit (and one into a deposit address) from the page, watches it reach EXECUTED while the clock moves,
//! sees its webhook attempts fail against a receiver on 127.0.0.1 that the test controls, lets the receiver
//! recover and resends from the page, advances the clock from the page, and checks labels, landmarks, the
//! keyboard's first stop and a 380 px wide window. Every page is kept as a screenshot
//! (`target/ci-artifacts/screenshots/dashboard-*.png`). `/docs` is loaded in the same browser: its "try it"
//! server is this sandbox's address, and it makes no request elsewhere, fails none and logs no error.
// `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote and stays under test.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use bridge_contract::*;
use browser_test::fantoccini::Locator;
use browser_test::Browser;
use serde_json::Value;

use crate::support::{quote_request, Running};

/// A webhook receiver on 127.0.0.1: answers 500 while `failing`, else 200; counts what it got.
#[derive(Clone, Default)]
struct Receiver {
    failing: Arc<AtomicBool>,
    delivered: Arc<AtomicUsize>,
}

impl Receiver {
    async fn start() -> (Self, String) {
        let receiver = Receiver::default();
        let r = receiver.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let r = r.clone();
                async move {
                    if r.failing.load(Ordering::SeqCst) {
                        (StatusCode::INTERNAL_SERVER_ERROR, "receiver down (the test made it fail)")
                    } else {
                        r.delivered.fetch_add(1, Ordering::SeqCst);
                        (StatusCode::OK, "ok: received")
                    }
                }
            }),
        );
        let url = format!("http://{}/hook", crate::support::serve_locally(app).await);
        (receiver, url)
    }
}

/// Polls `condition` (a script returning a truthy value when met) for at most a minute.
async fn wait_for(browser: &Browser, condition: &str, what: &str) -> Value {
    wait_within(browser, condition, what, Duration::from_secs(60)).await
}

/// Polls `condition` for at most `bound`.
async fn wait_within(browser: &Browser, condition: &str, what: &str, bound: Duration) -> Value {
    let started = Instant::now();
    loop {
        let value = browser.eval(condition).await.unwrap();
        if !value.is_null() && value != Value::Bool(false) {
            return value;
        }
        assert!(started.elapsed() < bound, "waited {bound:?} for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn click(browser: &Browser, css: &str) {
    browser.client().find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).click().await.unwrap();
}

async fn fill(browser: &Browser, css: &str, value: &str) {
    let field = browser.client().find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}"));
    field.clear().await.unwrap();
    field.send_keys(value).await.unwrap();
}

/// The page's text.
const TEXT: &str = "return document.body.innerText";

/// Labels, landmarks and no console error or failed request on the page shown.
async fn check_page(browser: &Browser, name: &str) {
    let unlabelled = browser
        .eval(
            "return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
                .filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.outerHTML)",
        )
        .await
        .unwrap();
    assert_eq!(unlabelled, serde_json::json!([]), "{name}: controls without a label");
    let unnamed_buttons = browser
        .eval("return [...document.querySelectorAll('button')].filter(b => !b.innerText.trim() && !b.getAttribute('aria-label')).length")
        .await
        .unwrap();
    assert_eq!(unnamed_buttons, 0, "{name}: buttons without a name");
    let landmarks =
        browser.eval("return ['header', 'nav', 'main'].map(t => document.querySelectorAll(t).length)").await.unwrap();
    assert_eq!(landmarks, serde_json::json!([1, 1, 1]), "{name}: one header, nav and main");
    assert_eq!(browser.eval("return document.querySelectorAll('h1').length").await.unwrap(), 1, "{name}: one h1");
    let problems = browser.problems().await.unwrap();
    assert!(problems.is_empty(), "{name}: {problems:?}");
    browser.screenshot(&format!("dashboard-{name}")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_is_seen_and_driven_from_the_dashboard_in_a_browser() {
    let Some(browser) = Browser::start().await.unwrap() else { return };
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let base = sandbox.base_url.clone();
    let client = sandbox.client(data.path(), "dash-project");
    let token = bridge_sandbox::mint_token(data.path(), "dash-project", false, Duration::from_secs(3600)).unwrap();
    let (receiver, hook) = Receiver::start().await;
    receiver.failing.store(true, Ordering::SeqCst);

    // Sign in.
    browser.open(&format!("{base}/dashboard")).await.unwrap();
    browser.screenshot("dashboard-sign-in").await.unwrap();
    assert!(browser.problems().await.unwrap().is_empty());
    fill(&browser, "#credential", &token).await;
    click(&browser, "form[action='/dashboard/sign-in'] button").await;
    wait_for(&browser, "return location.pathname === '/dashboard/bridges'", "the bridges page after sign-in").await;
    let cookies = browser.eval("return document.cookie").await.unwrap();
    assert_eq!(cookies, "", "scripts cannot read the session cookie (HttpOnly)");

    // A quote committed through the API appears without a reload.
    browser.eval("window.__notReloaded = true; return true").await.unwrap();
    let quote =
        client.quote_bridge(&BridgeQuoteRequest { webhook_url: Some(hook.clone()), ..quote_request() }).await.unwrap();
    let quote_id = quote.quote_id().to_owned();
    client.commit_quote(&quote_id).await.unwrap();
    let link = format!("a[href='/dashboard/bridges/{quote_id}']");
    wait_for(&browser, &format!("return document.querySelector(\"{link}\") !== null"), "the committed bridge").await;
    assert_eq!(browser.eval("return window.__notReloaded === true").await.unwrap(), true, "no reload");
    check_page(&browser, "bridges").await;

    // Its page; the deposit, simulated from the page.
    click(&browser, &link).await;
    wait_for(&browser, &format!("return location.pathname === '/dashboard/bridges/{quote_id}'"), "the bridge page")
        .await;
    click(&browser, "form[action$='/deposit'] button[type=submit]").await;
    wait_for(
        &browser,
        "return document.querySelector('[role=status]')?.innerText.includes('Deposit seen')",
        "the deposit's notice",
    )
    .await;
    // The lifecycle moves as the project's clock advances (through the API here), and the page follows.
    browser.eval("window.__notReloaded = true; return true").await.unwrap();
    for _ in 0..3 {
        client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 600_000 }).await.unwrap();
    }
    // Badges are coloured from the decoded record and events (an EXECUTED record and its BRIDGE_EXECUTED event
    // ended well: `.ok`).
    wait_for(&browser, "return document.querySelector('dl.facts .badge.ok')?.innerText === 'EXECUTED'", "EXECUTED")
        .await;
    wait_for(
        &browser,
        "return [...document.querySelectorAll('td .badge.ok')].some(b => b.innerText === 'BRIDGE_EXECUTED')",
        "the BRIDGE_EXECUTED event coloured as ended",
    )
    .await;
    assert_eq!(browser.eval("return window.__notReloaded === true").await.unwrap(), true, "no reload");
    // Its webhook attempts, failing against the receiver.
    wait_for(
        &browser,
        "return [...document.querySelectorAll('#live table')].pop()?.innerText.includes('receiver down')",
        "failed attempts with the start of the receiver's answer",
    )
    .await;
    let text = browser.eval(TEXT).await.unwrap().to_string();
    for expected in ["BRIDGE_PENDING", "BRIDGE_EXECUTED", "500", "ms", "createdAt", "withdrawCommittedAt"] {
        assert!(text.contains(expected), "the bridge page shows {expected}: {text}");
    }
    check_page(&browser, "bridge").await;

    // The receiver recovers; resend from the deliveries page.
    receiver.failing.store(false, Ordering::SeqCst);
    click(&browser, "nav a[href='/dashboard/deliveries']").await;
    wait_for(&browser, "return location.pathname === '/dashboard/deliveries'", "the deliveries page").await;
    let before = receiver.delivered.load(Ordering::SeqCst);
    assert_eq!(before, 0, "nothing was delivered while the receiver failed");
    click(&browser, "button[id^='resend-']").await;
    wait_for(
        &browser,
        "return document.querySelector('[role=status]')?.innerText.includes('made due now')",
        "the resend's notice",
    )
    .await;
    wait_for(&browser, "return document.querySelector('#live .badge.ok') !== null", "a delivered attempt").await;
    assert!(receiver.delivered.load(Ordering::SeqCst) > before, "the resent delivery reached the receiver");
    let text = browser.eval(TEXT).await.unwrap().to_string();
    assert!(text.contains("ok: received") && text.contains("200"), "{text}");
    // Recover the rest.
    click(&browser, "form[action='/dashboard/deliveries/recover'] button").await;
    wait_for(
        &browser,
        "return document.querySelector('[role=status]')?.innerText.includes('failed deliveries made due now')",
        "the recovery's notice",
    )
    .await;
    // The recovered deliveries (the other two events) arrive: every event delivered.
    wait_for(&browser, "return document.querySelectorAll('#live .badge.ok').length >= 3", "the recovered deliveries")
        .await;
    check_page(&browser, "deliveries").await;

    // The feed.
    click(&browser, "nav a[href='/dashboard/events']").await;
    wait_for(
        &browser,
        "return location.pathname === '/dashboard/events' && document.body.innerText.includes('BRIDGE_EXECUTED')",
        "the events",
    )
    .await;
    check_page(&browser, "events").await;

    // A deposit address made through the API, and a deposit into it simulated from the page.
    let address = DepositAddressCreateRequest {
        deposit_chains: vec!["ETHEREUM".into()],
        address_note: Some("from the dashboard test".into()),
        reuse_policy: None,
        webhook_url: None,
        refund_address: None,
        destination_chain: "BASE".into(),
        destination_address: crate::support::EVM_B.into(),
        post_bridge_data: None,
        token_out: None,
        bridge_if_not_swappable: None,
    };
    client.create_deposit_addresses(&address).await.unwrap();
    click(&browser, "nav a[href='/dashboard/addresses']").await;
    wait_for(&browser, "return location.pathname === '/dashboard/addresses'", "the addresses page").await;
    click(&browser, "form[action='/dashboard/addresses/deposit'] button").await;
    wait_for(
        &browser,
        "return document.querySelector('[role=status]')?.innerText.includes('Deposit into the address simulated')",
        "the address deposit's notice",
    )
    .await;
    wait_for(
        &browser,
        "return document.querySelector('#live section a[href^=\"/dashboard/bridges/\"]') !== null
            && document.querySelector('#live section .badge.ok')?.innerText === 'accepted'",
        "the accepted deposit and its bridge",
    )
    .await;
    check_page(&browser, "addresses").await;

    // The clock, advanced from the page by an hour.
    click(&browser, "nav a[href='/dashboard/clock']").await;
    wait_for(&browser, "return location.pathname === '/dashboard/clock'", "the clock page").await;
    let before: String =
        serde_json::from_value(browser.eval("return document.querySelector('#clock-now').innerText").await.unwrap())
            .unwrap();
    fill(&browser, "#seconds", "3600").await;
    click(&browser, "form[action='/dashboard/clock/advance'] button").await;
    wait_for(
        &browser,
        "return document.querySelector('[role=status]')?.innerText.includes('clock is now')",
        "the advance's notice",
    )
    .await;
    let after: String =
        serde_json::from_value(browser.eval("return document.querySelector('#clock-now').innerText").await.unwrap())
            .unwrap();
    let (before, after) = (before.parse::<DateString>().unwrap(), after.parse::<DateString>().unwrap());
    assert_eq!(after.millis() - before.millis(), 3_600_000, "{before} → {after}");
    assert_eq!(client.sandbox_get_clock().await.unwrap().now, after, "the API sees the same clock");
    check_page(&browser, "clock").await;

    // Keyboard: the first Tab reaches the skip link, which is visible when focused.
    browser.open(&format!("{base}/dashboard/bridges")).await.unwrap();
    browser.client().active_element().await.unwrap().send_keys("\u{E004}").await.unwrap();
    let focused = browser
        .eval("return [document.activeElement.innerText, getComputedStyle(document.activeElement).left]")
        .await
        .unwrap();
    assert_eq!(focused[0], "Skip to content", "{focused}");
    assert_ne!(focused[1], "-10000px", "the skip link shows when focused");

    // A narrow window: nothing wider than the window but the tables' own scrolling boxes.
    browser.client().set_window_size(380, 900).await.unwrap();
    for (name, page) in [
        ("bridges", "bridges".to_owned()),
        ("bridge", format!("bridges/{quote_id}")),
        ("deliveries", "deliveries".to_owned()),
        ("clock", "clock".to_owned()),
    ] {
        browser.open(&format!("{base}/dashboard/{page}")).await.unwrap();
        browser.screenshot(&format!("dashboard-{name}-narrow")).await.unwrap();
        let widths = browser.eval("return [document.documentElement.scrollWidth, window.innerWidth]").await.unwrap();
        assert!(widths[0].as_f64() <= widths[1].as_f64(), "{page} at 380 px: {widths}");
    }
    browser.client().set_window_size(1280, 1000).await.unwrap();

    // Sign out: the session is gone, the pages send the browser to sign in.
    click(&browser, "form[action='/dashboard/sign-out'] button").await;
    wait_for(
        &browser,
        "return location.pathname === '/dashboard' && document.querySelector('#credential') !== null",
        "the sign-in page",
    )
    .await;
    browser.open(&format!("{base}/dashboard/clock")).await.unwrap();
    assert!(browser.eval("return document.querySelector('#credential') !== null").await.unwrap() == true);

    browser.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_page_offers_this_sandbox_and_loads_nothing_from_elsewhere() {
    let Some(browser) = Browser::start().await.unwrap() else { return };
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let base = sandbox.base_url.clone();
    // /docs: its "try it" server is this sandbox; nothing is loaded from elsewhere; nothing fails.
    // RapiDoc renders the whole document on the page's thread: scripts wait for it (minutes on a loaded machine).
    let timeouts = browser_test::fantoccini::wd::TimeoutConfiguration::new(
        Some(Duration::from_secs(300)),
        Some(Duration::from_secs(300)),
        Some(Duration::ZERO),
    );
    browser.client().update_timeouts(timeouts).await.unwrap();
    let started = Instant::now();
    browser.open(&format!("{base}/docs")).await.unwrap();
    let rendered = "const d = document.querySelector('rapi-doc'); return d && d.shadowRoot && d.shadowRoot.innerHTML.length > 10000";
    wait_within(&browser, rendered, "RapiDoc's rendering", Duration::from_secs(300)).await;
    let server = browser.eval("return document.querySelector('rapi-doc').getAttribute('server-url')").await.unwrap();
    assert_eq!(server, Value::from(base.clone()));
    let requests = browser.requests().await.unwrap();
    assert!(!requests.is_empty());
    for request in &requests {
        assert!(request.starts_with(&base), "/docs loaded {request} from outside the sandbox");
    }
    let problems = browser.problems().await.unwrap();
    assert!(problems.is_empty(), "/docs: {problems:?}");
    println!("/docs rendered in {:?}", started.elapsed());
    browser.screenshot("docs").await.unwrap();
    browser.close().await.unwrap();
}

/// Plain HTTP against the dashboard: what a browser would send, and what a cross-site page could.
struct Http {
    base: String,
    http: reqwest::Client,
}

impl Http {
    fn new(base: &str) -> Self {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self { base: base.to_owned(), http }
    }

    /// Signs in with `credential`; returns the session cookie (`name=value`).
    async fn sign_in(&self, credential: &str) -> String {
        let response = self
            .http
            .post(format!("{}/dashboard/sign-in", self.base))
            .header("origin", &self.base)
            .form(&[("credential", credential)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "{:?}", response.text().await);
        let cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/dashboard"] {
            assert!(cookie.contains(attribute), "{cookie}");
        }
        cookie.split(';').next().unwrap().to_owned()
    }

    async fn get(&self, cookie: &str, path: &str) -> (u16, String) {
        let response = self.http.get(format!("{}{path}", self.base)).header("cookie", cookie).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// The CSRF token of the session's pages.
    async fn csrf(&self, cookie: &str) -> String {
        let (_, page) = self.get(cookie, "/dashboard/clock").await;
        let at = page.find(r#"name="csrf" value=""#).expect("a form with a token") + r#"name="csrf" value=""#.len();
        let token = &page[at..at + page[at..].find('"').expect("the end of the token")];
        assert!(bridge_server::credential::is_credential(token), "a token of the credential form: {token}");
        token.to_owned()
    }

    async fn post(&self, cookie: &str, path: &str, headers: &[(&str, &str)], form: &[(&str, &str)]) -> u16 {
        let mut request = self.http.post(format!("{}{path}", self.base)).header("cookie", cookie).form(form);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap().status().as_u16()
    }
}

#[tokio::test]
async fn every_action_needs_the_sessions_token_and_this_origin_and_a_project_sees_only_itself() {
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let base = sandbox.base_url.clone();
    let client = sandbox.client(data.path(), "alice");
    let http = Http::new(&base);

    // Alice signs in with her API key, the same key the API accepts.
    let key = bridge_sandbox::mint_api_key(data.path(), "alice").unwrap();
    let cookie = http.sign_in(&key).await;
    let csrf = http.csrf(&cookie).await;
    let clock = client.sandbox_get_clock().await.unwrap().now;

    // Refused, and nothing changes: no token, a wrong token, another origin, a cross-site fetch.
    let origin = [("origin", base.as_str())];
    type Pairs<'a> = Vec<(&'a str, &'a str)>;
    let refusals: Vec<(Pairs, Pairs)> = vec![
        (origin.to_vec(), vec![("seconds", "60")]),
        (
            origin.to_vec(),
            vec![("csrf", "0000000000000000000000000000000000000000000000000000000000000000"), ("seconds", "60")],
        ),
        (vec![("origin", "http://evil.example")], vec![("csrf", csrf.as_str()), ("seconds", "60")]),
        (vec![("sec-fetch-site", "cross-site")], vec![("csrf", csrf.as_str()), ("seconds", "60")]),
    ];
    for (headers, form) in &refusals {
        assert_eq!(http.post(&cookie, "/dashboard/clock/advance", headers, form).await, 403, "{headers:?} {form:?}");
        assert_eq!(
            http.post(&cookie, "/dashboard/reset", headers, &[form.as_slice(), &[("confirm", "yes")]].concat()).await,
            403
        );
    }
    assert_eq!(client.sandbox_get_clock().await.unwrap().now, clock, "a refused action changed nothing");
    // A sign-in from another origin is refused too.
    let status = http
        .http
        .post(format!("{base}/dashboard/sign-in"))
        .header("origin", "http://evil.example")
        .form(&[("credential", key.as_str())])
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 403);

    // With the token, from this origin: done, as the API would.
    assert_eq!(
        http.post(&cookie, "/dashboard/clock/advance", &origin, &[("csrf", &csrf), ("seconds", "60")]).await,
        303
    );
    assert_eq!(client.sandbox_get_clock().await.unwrap().now.millis(), clock.millis() + 60_000);

    // Bob's bridge is not Alice's: the dashboard answers as the API does (404), and lists only Alice's.
    let bob = sandbox.client(data.path(), "bob");
    let quote = bob.quote_bridge(&quote_request()).await.unwrap();
    bob.commit_quote(quote.quote_id()).await.unwrap();
    let (status, page) = http.get(&cookie, &format!("/dashboard/bridges/{}", quote.quote_id())).await;
    assert_eq!(status, 404);
    let api = client.get_bridge(quote.quote_id()).await.expect_err("Alice's API answers no such bridge");
    assert!(page.contains(&format!("no bridge {}", quote.quote_id())), "as the API: {api:?}\n{page}");
    let (_, page) = http.get(&cookie, "/dashboard/bridges").await;
    assert!(!page.contains(quote.quote_id()) && page.contains("Bridges: 0,"), "{page}");
    // Nor can Alice deposit into it from her session.
    let path = format!("/dashboard/bridges/{}/deposit", quote.quote_id());
    assert_eq!(http.post(&cookie, &path, &origin, &[("csrf", &csrf), ("outcome", "executed")]).await, 303);
    let state = serde_json::to_value(bob.get_bridge(quote.quote_id()).await.unwrap()).unwrap()["state"].clone();
    assert_eq!(state, "PENDING", "Bob's bridge did not move");

    // A token that does not verify does not sign in.
    let status = http
        .http
        .post(format!("{base}/dashboard/sign-in"))
        .header("origin", &base)
        .form(&[("credential", "sbx_bm9ib2R5.00")])
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);

    // Signing out deletes the session on the server: the old cookie no longer works.
    assert_eq!(http.post(&cookie, "/dashboard/sign-out", &origin, &[("csrf", &csrf)]).await, 303);
    let (status, _) = http.get(&cookie, "/dashboard/clock").await;
    assert_eq!(status, 303, "the ended session is sent to sign in");
    assert_eq!(
        http.post(&cookie, "/dashboard/clock/advance", &origin, &[("csrf", &csrf), ("seconds", "60")]).await,
        303
    );
    assert_eq!(client.sandbox_get_clock().await.unwrap().now.millis(), clock.millis() + 60_000, "nothing moved");
}

/// The clock the dashboard's clock page shows (a page only reads: it is not counted against the rate limit).
async fn clock_on_page(http: &Http, cookie: &str) -> i64 {
    let (_, page) = http.get(cookie, "/dashboard/clock").await;
    let at = page.find(r#"id="clock-now">"#).expect("the clock") + r#"id="clock-now">"#.len();
    page[at..at + 24].parse::<DateString>().unwrap().millis()
}

#[tokio::test]
async fn an_action_counts_against_the_projects_rate_limit_as_an_api_request_does() {
    let store = crate::support::TestStore::sqlite();
    let limit = bridge_sandbox::rate_limit::RateLimit::new(0.01, std::num::NonZeroU32::new(2));
    let sandbox = Running::with(bridge_sandbox::SandboxConfig { rate_limit: limit, ..store.config() }).await;
    let http = Http::new(&sandbox.base_url);
    let token = bridge_sandbox::mint_token(store.dir(), "limited", false, Duration::from_secs(3600)).unwrap();
    let cookie = http.sign_in(&token).await;
    let csrf = http.csrf(&cookie).await;
    let origin = [("origin", sandbox.base_url.as_str())];
    let start = clock_on_page(&http, &cookie).await;
    let form = [("csrf", csrf.as_str()), ("seconds", "60")];
    assert_eq!(http.post(&cookie, "/dashboard/clock/advance", &origin, &form).await, 303);
    assert_eq!(http.post(&cookie, "/dashboard/clock/advance", &origin, &form).await, 303);
    assert_eq!(http.post(&cookie, "/dashboard/clock/advance", &origin, &form).await, 429, "the burst is spent");
    assert_eq!(clock_on_page(&http, &cookie).await, start + 120_000, "the refused action changed nothing");
    // The API refuses the project too: one budget.
    let api = sandbox.client(store.dir(), "limited");
    let refused = api.sandbox_get_clock().await.unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(429), "{refused:?}");
}

/// A session keeps the credential, not the caller: revoking the API key it signed in with ends it at its next
/// request (the API's authenticator decides), and it stays ended.
#[tokio::test]
async fn a_revoked_api_key_ends_the_dashboard_session_it_signed_in() {
    let store = crate::support::TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let http = Http::new(&sandbox.base_url);
    let admin = store.admin("alice").await;
    let key = admin.create_api_key("team-a", "dashboard").await.unwrap();
    let cookie = http.sign_in(&key.text).await;
    assert_eq!(http.get(&cookie, "/dashboard/clock").await.0, 200);
    admin.revoke_api_key(&key.text).await.unwrap();
    let started = Instant::now();
    while http.get(&cookie, "/dashboard/clock").await.0 != 303 {
        assert!(started.elapsed() < Duration::from_secs(30), "the revoked key's session goes on");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(http.get(&cookie, "/dashboard/clock").await.0, 303, "the session was deleted");
}

/// Signs `credential` in `count` times, 16 at a time, from one client; each answer's status and `Retry-After`.
async fn sign_in_flood(http: &Http, credential: &str, count: usize) -> Vec<(u16, Option<String>)> {
    use futures_util::StreamExt;
    futures_util::stream::iter(0..count)
        .map(|_| async {
            let response = http
                .http
                .post(format!("{}/dashboard/sign-in", http.base))
                .header("origin", &http.base)
                .form(&[("credential", credential)])
                .send()
                .await
                .unwrap();
            let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            (response.status().as_u16(), retry)
        })
        .buffer_unordered(16)
        .collect()
        .await
}

/// Issue 32, item 3: 10,050 sign-ins of one project (which, when the sessions were one table of 10,000 that dropped
/// the oldest, ended every other project's session in 5.5 s) with the default budgets. The flood is refused past
/// the sign-in budget (429 with `Retry-After`, the sign-in page), and another project's session, signed in before
/// it from the same address, still works after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_flood_of_one_project_is_refused_past_its_budget_and_ends_no_other_projects_session() {
    let store = crate::support::TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let http = Http::new(&sandbox.base_url);
    let bob = http.sign_in(&sandbox.token_of("bob")).await;
    assert_eq!(http.get(&bob, "/dashboard/clock").await.0, 200);

    let started = Instant::now();
    let answers = sign_in_flood(&http, &sandbox.token_of("mallory"), 10_050).await;
    let took = started.elapsed();
    let signed_in = answers.iter().filter(|(status, _)| *status == 303).count();
    let refused: Vec<_> = answers.iter().filter(|(status, _)| *status != 303).collect();
    eprintln!("10,050 sign-ins in {took:?}: {signed_in} signed in, {} refused", refused.len());
    for (status, retry) in &refused {
        assert_eq!(*status, 429, "a sign-in over the budget is refused 429");
        let retry: u64 = retry.as_deref().expect("with Retry-After").parse().expect("whole seconds");
        assert!(retry >= 1, "Retry-After {retry}");
    }
    // The per-project budget: 10 at once, then one every 6 s (per address: 30 at once, one every 2 s).
    let refilled = (took.as_secs_f64() / 6.0).ceil() as usize;
    assert!(signed_in >= 1 && signed_in <= 10 + refilled, "{signed_in} sign-ins served in {took:?}");
    // Bob's session, older than the whole flood, is untouched.
    assert_eq!(http.get(&bob, "/dashboard/clock").await.0, 200, "another project's session survives the flood");
    sandbox.stop().await;
}

/// The session store's own rule, with the sign-in budgets lifted: 10,050 sign-ins of one project end only that
/// project's least recently used sessions (it keeps its cap of the latest), never another project's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_sign_ins_beyond_its_session_cap_end_only_its_own_sessions() {
    let store = crate::support::TestStore::sqlite();
    let lifted = bridge_sandbox::rate_limit::RateLimit::per_minute(1_000_000);
    let options = bridge_sandbox::ServeOptions {
        sign_ins: bridge_sandbox::SignInBudget { per_address: lifted, per_project: lifted },
        ..Default::default()
    };
    let sandbox = Running::on_with(&store, options).await;
    let http = Http::new(&sandbox.base_url);
    let bob = http.sign_in(&sandbox.token_of("bob")).await;
    let mallory = sandbox.token_of("mallory");
    let first = http.sign_in(&mallory).await;

    let started = Instant::now();
    let answers = sign_in_flood(&http, &mallory, 10_050).await;
    let signed_in = answers.iter().filter(|(status, _)| *status == 303).count();
    eprintln!("10,050 sign-ins of one project in {:?}: {signed_in} signed in", started.elapsed());
    assert_eq!(signed_in, 10_050, "no budget stood in the way: {:?}", &answers[..3]);
    let last = http.sign_in(&mallory).await;

    assert_eq!(http.get(&bob, "/dashboard/clock").await.0, 200, "another project's session survives the flood");
    assert_eq!(http.get(&last, "/dashboard/clock").await.0, 200, "the project's latest session works");
    assert_eq!(http.get(&first, "/dashboard/clock").await.0, 303, "its oldest ended (its cap is 20)");
    sandbox.stop().await;
}

/// Issue 36, item 2: in Chromium, through two instances of one PostgreSQL database alternately: signed in on A,
/// the session works on B; an action on A and one on B (each page's form carrying the CSRF token that instance
/// rendered); sign-out on B; then A refuses the same session cookie, put back in the browser (sign-out deleted the
/// session from the store, not only the cookie). Before issue 36 sessions were in each instance's memory: B sent
/// the browser to sign in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_signed_in_on_one_instance_works_on_another_and_sign_out_ends_it_on_all_in_a_browser() {
    let Some(store) = crate::support::TestStore::postgres() else { return };
    let Some(browser) = Browser::start().await.unwrap() else { return };
    let (a, b) = (Running::on(&store).await, Running::on(&store).await);
    let api = a.client_of("fleet-dashboard");
    let clock_now = r#"return document.querySelector('#clock-now')?.innerText"#;
    let now_on_page = || async {
        let text: String = serde_json::from_value(browser.eval(clock_now).await.unwrap()).unwrap();
        text.parse::<DateString>().unwrap().millis()
    };

    // Sign in on A.
    browser.open(&format!("{}/dashboard", a.base_url)).await.unwrap();
    fill(&browser, "#credential", &a.token_of("fleet-dashboard")).await;
    click(&browser, "form[action='/dashboard/sign-in'] button").await;
    wait_for(&browser, "return location.pathname === '/dashboard/bridges'", "A's bridges page after sign-in").await;
    let cookie = browser.client().get_named_cookie("sandbox_dashboard").await.expect("the session cookie");

    // Navigate on B: signed in there too.
    browser.open(&format!("{}/dashboard/clock", b.base_url)).await.unwrap();
    wait_for(&browser, "return location.pathname === '/dashboard/clock'", "B's clock page, signed in").await;
    let start = now_on_page().await;

    // Act on A, then on B: each instance's form carries the token it rendered, and each accepts it.
    for (instance, seconds) in [(&a, 3600), (&b, 60)] {
        browser.open(&format!("{}/dashboard/clock", instance.base_url)).await.unwrap();
        wait_for(&browser, "return location.pathname === '/dashboard/clock'", "the clock page").await;
        fill(&browser, "#seconds", &seconds.to_string()).await;
        click(&browser, "form[action='/dashboard/clock/advance'] button").await;
        wait_for(
            &browser,
            "return document.querySelector('[role=status]')?.innerText.includes('clock is now')",
            "the advance's notice",
        )
        .await;
    }
    assert_eq!(now_on_page().await, start + 3_660_000, "both actions done");
    assert_eq!(api.sandbox_get_clock().await.unwrap().now.millis(), start + 3_660_000);

    // Sign out on B.
    click(&browser, "form[action='/dashboard/sign-out'] button").await;
    wait_for(
        &browser,
        "return location.pathname === '/dashboard' && document.querySelector('#credential') !== null",
        "B's sign-in page",
    )
    .await;
    // A refuses the session, even with its cookie back in the browser.
    browser.client().add_cookie(cookie).await.unwrap();
    browser.open(&format!("{}/dashboard/clock", a.base_url)).await.unwrap();
    wait_for(
        &browser,
        "return location.pathname === '/dashboard' && document.querySelector('#credential') !== null",
        "A's sign-in page for the ended session",
    )
    .await;
    browser.close().await.unwrap();
    a.stop().await;
    b.stop().await;
}

/// Polls both instances with `cookie` until each sends it to sign in (303); how long each took. Panics after 30 s.
async fn ended_on_both(on: [&Http; 2], cookie: &str) -> [Duration; 2] {
    let started = Instant::now();
    let mut took = [None, None];
    while took.iter().any(Option::is_none) {
        for (i, http) in on.iter().enumerate() {
            if took[i].is_none() && http.get(cookie, "/dashboard/clock").await.0 == 303 {
                took[i] = Some(started.elapsed());
            }
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the session goes on: {took:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    took.map(Option::unwrap)
}

/// Issue 36, item 2, over HTTP on two instances of one PostgreSQL database: a session signed in on either is
/// served by both; revoking its API key, or disabling its project, ends it on both at once (and for good: the
/// session is deleted, so enabling the project again does not bring it back); sign-out on one ends it on the
/// other; a backup of the database (`pg_dump`) holds no session id, CSRF token or credential.
#[tokio::test]
async fn on_two_instances_revocation_disabling_and_sign_out_end_a_session_on_both() {
    let Some(store) = crate::support::TestStore::postgres() else { return };
    let (a, b) = (Running::on(&store).await, Running::on(&store).await);
    let (on_a, on_b) = (Http::new(&a.base_url), Http::new(&b.base_url));
    let admin = store.admin("ops").await;

    // An API key's session, signed in on A, served by B with the same CSRF token.
    let key = admin.create_api_key("fleet-a", "dashboard").await.unwrap();
    let cookie = on_a.sign_in(&key.text).await;
    let csrf = on_b.csrf(&cookie).await;
    assert_eq!(on_a.csrf(&cookie).await, csrf, "one token, whichever instance renders it");
    let token = a.token_of("fleet-b");
    let other = on_b.sign_in(&token).await;
    assert_eq!(on_a.get(&other, "/dashboard/clock").await.0, 200);

    // Nothing usable at rest: the session ids, the CSRF tokens and the credentials are not in a backup.
    let dump = store.dump().unwrap();
    assert!(dump.contains("dashboard_sessions") && dump.contains("fleet-a"), "the sessions are in the database");
    let id = |cookie: &str| cookie.split_once('=').unwrap().1.to_owned();
    for secret in [id(&cookie), id(&other), csrf.clone(), on_a.csrf(&other).await, key.text.clone(), token.clone()] {
        assert!(!dump.contains(&secret), "a backup holds {}…", &secret[..12]);
    }

    // Revoked on the command line: ended on both.
    admin.revoke_api_key(&key.text).await.unwrap();
    let took = ended_on_both([&on_a, &on_b], &cookie).await;
    eprintln!("revoked key's session ended on A after {:?}, on B after {:?}", took[0], took[1]);
    assert_eq!(on_b.get(&other, "/dashboard/clock").await.0, 200, "another project's session goes on");

    // Project disabled: ended on both, and still ended once enabled again.
    admin.set_disabled("fleet-b", true).await.unwrap();
    let took = ended_on_both([&on_a, &on_b], &other).await;
    eprintln!("disabled project's session ended on A after {:?}, on B after {:?}", took[0], took[1]);
    admin.set_disabled("fleet-b", false).await.unwrap();
    for instance in [&a, &b] {
        let api = instance.client_of("fleet-b");
        let enabled = || async { api.sandbox_get_clock().await.is_ok() };
        crate::support::eventually("each instance accepts the enabled project", enabled).await;
    }
    let third = on_a.sign_in(&token).await;
    assert_eq!(on_b.get(&third, "/dashboard/clock").await.0, 200, "enabled again: a new session works");
    for http in [&on_a, &on_b] {
        assert_eq!(http.get(&other, "/dashboard/clock").await.0, 303, "the ended session stays ended");
    }

    // Sign-out on A ends the session on B.
    let origin = [("origin", a.base_url.as_str())];
    let third_csrf = on_b.csrf(&third).await;
    assert_eq!(on_a.post(&third, "/dashboard/sign-out", &origin, &[("csrf", &third_csrf)]).await, 303);
    assert_eq!(on_b.get(&third, "/dashboard/clock").await.0, 303, "signed out on A: ended on B at once");
    a.stop().await;
    b.stop().await;
}

/// Issue 36, item 2: the session caps hold for the fleet. 25 sign-ins of one project, alternately on two
/// instances (sign-in budgets lifted), keep its 20 latest sessions: its first five end on both instances, and
/// another project's session is untouched.
#[tokio::test]
async fn the_per_project_session_cap_holds_across_instances() {
    let Some(store) = crate::support::TestStore::postgres() else { return };
    let lifted = bridge_sandbox::rate_limit::RateLimit::per_minute(1_000_000);
    let options = || bridge_sandbox::ServeOptions {
        sign_ins: bridge_sandbox::SignInBudget { per_address: lifted, per_project: lifted },
        ..Default::default()
    };
    let (a, b) = (Running::on_with(&store, options()).await, Running::on_with(&store, options()).await);
    let (on_a, on_b) = (Http::new(&a.base_url), Http::new(&b.base_url));
    let bob = on_b.sign_in(&a.token_of("bob")).await;
    let mallory = a.token_of("mallory");
    let mut sessions = Vec::new();
    for i in 0..25 {
        let http = if i % 2 == 0 { &on_a } else { &on_b };
        sessions.push(http.sign_in(&mallory).await);
        // Least recently used is by the millisecond, and sessions of one millisecond are ordered by their id's hash
        // (unpredictable): which five end is only known when no two sign-ins share a millisecond.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    for http in [&on_a, &on_b] {
        for (i, cookie) in sessions.iter().enumerate() {
            let expected = if i < 5 { 303 } else { 200 };
            assert_eq!(http.get(cookie, "/dashboard/clock").await.0, expected, "session {i}");
        }
        assert_eq!(http.get(&bob, "/dashboard/clock").await.0, 200, "another project's session");
    }
    a.stop().await;
    b.stop().await;
}

/// The faults form on the clock page: its kinds and the bounds of their durations come from the schema; it sets
/// the project's own profile as `PUT /sandbox/faults` does (a refused form changes nothing and says why); the page
/// shows the profile in force; a faulted delivery attempt is marked on the deliveries page; "Use the sandbox's
/// default" drops the project's own.
#[tokio::test]
async fn the_faults_form_sets_the_projects_profile_and_faulted_attempts_are_marked() {
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let http = Http::new(&sandbox.base_url);
    let key = bridge_sandbox::mint_api_key(data.path(), "faulty").unwrap();
    let cookie = http.sign_in(&key).await;
    let csrf = http.csrf(&cookie).await;
    let origin = [("origin", sandbox.base_url.as_str())];
    let client = sandbox.client(data.path(), "faulty");
    let profile = || async { serde_json::to_value(client.sandbox_get_faults().await.unwrap()).unwrap() };

    let (_, page) = http.get(&cookie, "/dashboard/clock").await;
    for kind in ["tooManyRequests", "unavailable", "delay"] {
        assert!(page.contains(&format!(r#"name="requests.{kind}""#)), "requests.{kind}: {page}");
    }
    for kind in ["duplicate", "holdBack", "delay"] {
        assert!(page.contains(&format!(r#"name="deliveries.{kind}""#)), "deliveries.{kind}");
    }
    assert!(page.contains(r#"name="deliveries.holdBack.ms" type="number" step="1" min="100" max="60000""#), "{page}");
    assert!(page.contains("None: every request and webhook is served as usual."));

    let form = [
        ("csrf", csrf.as_str()),
        ("requests.unavailable", "0.25"),
        ("requests.delay", ""),
        ("requests.delay.ms", ""),
        ("deliveries.duplicate", "1"),
    ];
    assert_eq!(http.post(&cookie, "/dashboard/faults", &origin, &form).await, 303);
    let set = serde_json::json!({
        "profile": {"requests": {"unavailable": {"fraction": 0.25}}, "deliveries": {"duplicate": {"fraction": 1}}},
        "source": "project"
    });
    assert_eq!(profile().await, set);
    let (_, page) = http.get(&cookie, "/dashboard/clock").await;
    assert!(page.contains("<code>requests.unavailable</code></td><td class=\"num\">0.25"), "{page}");

    // Refused as the API refuses: a group over 1 (422), a duration out of the schema's bounds (400).
    for (bad, says) in [
        (vec![("requests.unavailable", "0.6"), ("requests.delay", "0.6"), ("requests.delay.ms", "10")], "add up to"),
        (vec![("deliveries.holdBack", "0.5"), ("deliveries.holdBack.ms", "5")], "holdBack"),
    ] {
        let form = [vec![("csrf", csrf.as_str())], bad].concat();
        assert_eq!(http.post(&cookie, "/dashboard/faults", &origin, &form).await, 303);
        let (_, page) = http.get(&cookie, "/dashboard/clock").await;
        assert!(page.contains(says), "the notice says why ({says}): {page}");
        assert_eq!(profile().await, set, "a refused form changed nothing");
    }

    // A delivery sent twice: the repeat is marked on the deliveries page.
    let app = axum::Router::new().route("/hook", axum::routing::post(|| async { StatusCode::NO_CONTENT }));
    let url = format!("http://{}/hook", crate::support::serve_locally(app).await);
    let event = crate::support::send_test_event(&client, &url, "twice").await;
    crate::support::eventually("the repeat recorded", || async {
        let (_, page) = http.get(&cookie, "/dashboard/deliveries").await;
        page.contains(&event) && page.contains("fault: duplicate")
    })
    .await;

    assert_eq!(http.post(&cookie, "/dashboard/faults/clear", &origin, &[("csrf", csrf.as_str())]).await, 303);
    assert_eq!(profile().await, serde_json::json!({"profile": {}, "source": "default"}));
}

/// "Check a receiver": the form runs the receiver check as the signed-in project and the page shows its report
/// (the summary, every check, each failed one with why it matters and what was sent and came back), labelled,
/// without a console error or a request elsewhere, and within a 380 px window (the table of checks too, unscrolled).
/// The receiver checked answers 500 to a duplicate, so the report has one failed `should` check, whose row links to
/// its deliveries. docs/receiver-check.png is cut from this test's `dashboard-receiver-check-readme` screenshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_is_checked_from_the_dashboard_in_a_browser() {
    let Some(browser) = Browser::start().await.unwrap() else { return };
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let base = sandbox.base_url.clone();
    let client = sandbox.client(data.path(), "receiver-team");
    let served = client.get_webhook_public_key().await.unwrap();
    let (_receiver, url) = crate::receiver_check::start(crate::receiver_check::Fault::RefusesDuplicates, &served).await;
    let token = bridge_sandbox::mint_token(data.path(), "receiver-team", false, Duration::from_secs(3600)).unwrap();

    browser.open(&format!("{base}/dashboard")).await.unwrap();
    fill(&browser, "#credential", &token).await;
    click(&browser, "form[action='/dashboard/sign-in'] button").await;
    wait_for(&browser, "return location.pathname === '/dashboard/bridges'", "the bridges page after sign-in").await;
    click(&browser, "nav a[href='/dashboard/receiver-check']").await;
    wait_for(&browser, "return document.querySelector('#receiver-url') !== null", "the receiver check's form").await;
    check_page(&browser, "receiver-check-form").await;

    fill(&browser, "#receiver-url", &url).await;
    click(&browser, "form[action='/dashboard/receiver-check'] button").await;
    wait_for(&browser, "return document.querySelector('#report-heading') !== null", "the report").await;
    let text = browser.eval(TEXT).await.unwrap().as_str().unwrap().to_owned();
    for expected in [
        "23 passed",
        "0 must failed",
        "1 should failed",
        "The receiver meets every must.",
        "acknowledges a signed BRIDGE_EXECUTED delivery",
        "delivery 2 of 2: not acknowledged: answered 500 (duplicate key)",
        "Why it matters: Delivery is at least once",
        "X-Webhook-Signature: ",
    ] {
        assert!(text.contains(expected), "{expected:?} on the page:\n{text}");
    }
    let rows = browser.eval("return document.querySelectorAll('#content tbody tr').length").await.unwrap();
    assert_eq!(rows, 24, "a row per check");
    let url_kept = browser.eval("return document.querySelector('#receiver-url').value").await.unwrap();
    assert_eq!(url_kept, url.as_str(), "the form stays filled in");
    assert!(browser.requests().await.unwrap().iter().all(|r| r.starts_with(&base)), "nothing from elsewhere");
    check_page(&browser, "receiver-check").await;
    browser.client().set_window_size(960, 800).await.unwrap();
    browser.screenshot("dashboard-receiver-check-readme").await.unwrap();

    // The failed check's row links to its account, which shows what was sent and what came back.
    click(&browser, "#content tbody tr.failed th a").await;
    let shown = browser
        .eval(
            "const d = document.querySelector(location.hash); \
             return d !== null && d.open && d.innerText.includes('Received') && d.innerText.includes('duplicate key')",
        )
        .await
        .unwrap();
    assert_eq!(shown, true, "the link leads to the failed check's deliveries");

    browser.client().set_window_size(380, 900).await.unwrap();
    let widths = browser
        .eval(
            "const t = document.querySelector('#content .table-wrap'); \
             return [document.documentElement.scrollWidth, window.innerWidth, t.scrollWidth, t.clientWidth]",
        )
        .await
        .unwrap();
    browser.screenshot("dashboard-receiver-check-narrow").await.unwrap();
    assert!(widths[0].as_f64() <= widths[1].as_f64(), "the report at 380 px: {widths}");
    assert!(widths[2].as_f64() <= widths[3].as_f64(), "the table of checks fits 380 px unscrolled: {widths}");
    browser.close().await.unwrap();
}

/// Posts the dashboard's receiver-check form as a page of this origin would; the status and the page.
async fn post_check(http: &Http, cookie: &str, form: &[(&str, &str)]) -> (u16, String) {
    let request = http.http.post(format!("{}/dashboard/receiver-check", http.base)).header("cookie", cookie);
    let response = request.header("origin", &http.base).form(form).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The receiver check from the dashboard is an action like the others: without the session's token, or from
/// another origin, it is refused (403) and nothing is sent to the receiver; a form the API's decoder refuses (a
/// timeout that is no number, or below the schema's minimum) answers its 400 and sends nothing; a URL the API
/// refuses answers the page with the API's 422 and its message; with the token, the page answers the report.
#[tokio::test]
async fn the_dashboards_receiver_check_needs_the_sessions_token_and_answers_the_report() {
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let base = sandbox.base_url.clone();
    let http = Http::new(&base);
    let served = sandbox.client(data.path(), "carol").get_webhook_public_key().await.unwrap();
    let (receiver, url) = crate::receiver_check::start(crate::receiver_check::Fault::None, &served).await;
    let key = bridge_sandbox::mint_api_key(data.path(), "carol").unwrap();
    let cookie = http.sign_in(&key).await;
    let csrf = http.csrf(&cookie).await;
    let origin = [("origin", base.as_str())];
    let path = "/dashboard/receiver-check";
    assert_eq!(http.post(&cookie, path, &origin, &[("url", &url)]).await, 403, "no token");
    let foreign = [("origin", "http://evil.example")];
    assert_eq!(http.post(&cookie, path, &foreign, &[("csrf", &csrf), ("url", &url)]).await, 403, "another origin");
    let cross = [("sec-fetch-site", "cross-site")];
    assert_eq!(http.post(&cookie, path, &cross, &[("csrf", &csrf), ("url", &url)]).await, 403, "cross-site");

    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url), ("timeout_ms", "soon")]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("400 HttpApiDecodeError: [&quot;timeoutMs&quot;]: Expected"), "{page}");
    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url), ("timeout_ms", "5")]).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("[&quot;timeoutMs&quot;]: Expected a number greater than or equal to 100"), "{page}");
    assert!(page.contains(r#"value="5""#), "the form keeps what was typed: {page}");
    let with_password = url.replace("http://", "http://user:secret@");
    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &with_password)]).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("422 InvalidRequest: url http://user:***@") && !page.contains("secret"), "{page}");
    assert!(receiver.handled.lock().unwrap().is_empty(), "a refused action sent nothing");

    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url), ("timeout_ms", "")]).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("24 passed") && page.contains("0 must failed"), "{page}");
    assert!(page.contains("None: the receiver did what production needs of it in every check."), "{page}");
    let out_of_order = "delivery 1 of 2: acknowledged: 204; delivery 2 of 2: acknowledged: 204";
    assert!(page.contains(out_of_order), "a check of two deliveries says what each got: {page}");
    assert!(!receiver.handled.lock().unwrap().is_empty(), "the receiver got the deliveries");
}

/// What a receiver answers is shown as text, never as markup: a receiver answering every delivery 500 with an
/// HTML body fails every `signedEvent` check, and the page shows its body escaped.
#[tokio::test]
async fn the_dashboards_receiver_report_shows_a_receivers_answer_as_text() {
    let data = tempfile::tempdir().unwrap();
    let sandbox = Running::start(data.path()).await;
    let http = Http::new(&sandbox.base_url);
    let answer = "<script>alert('receiver')</script><img src=x onerror=alert(1)>";
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(move || async move { (StatusCode::INTERNAL_SERVER_ERROR, answer) }));
    let url = format!("http://{}/hook", crate::support::serve_locally(app).await);
    let token = bridge_sandbox::mint_token(data.path(), "dave", false, Duration::from_secs(3600)).unwrap();
    let cookie = http.sign_in(&token).await;
    let csrf = http.csrf(&cookie).await;
    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("15 must failed"), "every signedEvent check failed: {page}");
    assert!(!page.contains("<script>alert") && !page.contains("<img src=x"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(") && page.contains("&lt;img src=x onerror=alert(1)&gt;"), "{page}");
}

/// The dashboard's receiver check obeys the webhook egress policy (a loopback URL under `--webhook-egress public`
/// is refused 422 before any connection) and counts once against the project's rate limit, as the API's does:
/// past the burst it is refused 429.
#[tokio::test]
async fn the_dashboards_receiver_check_obeys_the_egress_policy_and_the_rate_limit() {
    let store = crate::support::TestStore::sqlite();
    let limit = bridge_sandbox::rate_limit::RateLimit::new(0.01, std::num::NonZeroU32::new(2));
    let egress = bridge_sandbox::egress::WebhookEgress::new(bridge_sandbox::egress::EgressMode::Public);
    let config = bridge_sandbox::SandboxConfig { rate_limit: limit, webhook_egress: egress, ..store.config() };
    let sandbox = Running::with(config).await;
    let http = Http::new(&sandbox.base_url);
    let delivered = Arc::new(AtomicUsize::new(0));
    let counted = delivered.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { StatusCode::NO_CONTENT }
        }),
    );
    let url = format!("http://{}/hook", crate::support::serve_locally(app).await);
    let token = bridge_sandbox::mint_token(store.dir(), "erin", false, Duration::from_secs(3600)).unwrap();
    let cookie = http.sign_in(&token).await;
    let csrf = http.csrf(&cookie).await;
    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("--webhook-egress public"), "the refusal names the rule: {page}");
    assert_eq!(post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url)]).await.0, 422);
    let (status, page) = post_check(&http, &cookie, &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(status, 429, "the burst of 2 is spent: {page}");
    assert_eq!(delivered.load(Ordering::SeqCst), 0, "nothing was sent to a refused address");
    let api = sandbox.client(store.dir(), "erin");
    let refused = api.sandbox_get_clock().await.unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(429), "one budget with the API: {refused:?}");
}
