//! `/dashboard` and `/docs` in headless Chromium (crates/browser-test: Debian's chromium and chromedriver), and
//! the dashboard's session and cross-site protections over plain HTTP.
//!
//! The browser test signs in with a project token, makes a quote and commits it through the API, sees the bridge
//! appear (no reload), simulates its deposit from the page, watches it reach EXECUTED while the clock moves,
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
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
    wait_for(&browser, "return document.querySelector('dl.facts .badge')?.innerText === 'EXECUTED'", "EXECUTED").await;
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

    // Deposit addresses (none yet: the page says how to make one).
    click(&browser, "nav a[href='/dashboard/addresses']").await;
    wait_for(&browser, "return location.pathname === '/dashboard/addresses'", "the addresses page").await;
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
