//! Fault profiles (`GET`/`PUT`/`DELETE /sandbox/faults`, `serve --faults`) over real HTTP on 127.0.0.1, on SQLite
//! and PostgreSQL: each kind of request fault answered as the schema says (429 with `Retry-After`, 503, a late
//! answer) with the `x-sandbox-fault` header, each kind of delivery fault seen at a receiver and marked in the
//! attempt list, another project of the same sandbox never faulted, the sandbox helpers never faulted, off by
//! default, the same faults for the same seed, a change followed by a second instance on one database, and
//! `/metrics` counting them. Nothing here asserts a time as performance: a late answer is only checked to have
//! come no sooner than its delay.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use bridge_contract::webhook::SIGNATURE_HEADER;
use bridge_contract::{SandboxDeliveryFault, SandboxWebhookDeliveries};
use bridge_sandbox::SandboxConfig;
use serde_json::{json, Value};

use crate::support::{both_stores, eventually, send_test_event, serve_locally, wait_for, Running, TestStore};

const HISTORY: &str = "/bridge/history/user?page=1&limit=10&sortBy=createdAt&sortDirection=desc";
const FAULT_HEADER: &str = bridge_contract::operations::SANDBOX_FAULT_HEADER;

/// One answer as a client sees it.
#[derive(Debug)]
struct Answer {
    status: u16,
    fault: Option<String>,
    retry_after: Option<String>,
    body: Value,
    took: Duration,
}

async fn call(sandbox: &Running, project: &str, method: &str, path: &str, body: Option<&str>) -> Answer {
    let url = format!("{}{path}", sandbox.base_url);
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new().request(method, url).bearer_auth(sandbox.token_of(project));
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_owned());
    }
    let started = Instant::now();
    let response = request.send().await.unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (status, fault, retry_after) = (response.status().as_u16(), header(FAULT_HEADER), header("retry-after"));
    let body = response.json().await.unwrap_or_default();
    Answer { status, fault, retry_after, body, took: started.elapsed() }
}

async fn get(sandbox: &Running, project: &str, path: &str) -> Answer {
    call(sandbox, project, "GET", path, None).await
}

/// `PUT /sandbox/faults` with `profile`.
async fn set(sandbox: &Running, project: &str, profile: Value) -> Answer {
    call(sandbox, project, "PUT", "/sandbox/faults", Some(&profile.to_string())).await
}

/// `count` reads of the history of `project`: the `x-sandbox-fault` of each answer (`None`: not faulted).
async fn faults_of(sandbox: &Running, project: &str, count: usize) -> Vec<Option<String>> {
    let mut seen = Vec::with_capacity(count);
    for _ in 0..count {
        let answer = get(sandbox, project, HISTORY).await;
        if answer.fault.is_none() {
            assert_eq!(answer.status, 200, "an answer without a fault is served: {answer:?}");
        }
        seen.push(answer.fault);
    }
    seen
}

/// A store like `store`, fresh (another data directory, or another database of the test server).
fn fresh_like(store: &TestStore) -> TestStore {
    match store.is_shared() {
        true => TestStore::postgres().expect("PostgreSQL, as the first store"),
        false => TestStore::sqlite(),
    }
}

/// The value of a counter of `/metrics` with these labels (0 when absent).
async fn counter(sandbox: &Running, name: &str, labels: &[(&str, &str)]) -> f64 {
    let text = reqwest::get(format!("{}/metrics", sandbox.base_url)).await.unwrap().text().await.unwrap();
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).unwrap();
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

async fn request_faults_are_answered_per_kind_and_only_to_their_project(store: TestStore) {
    let sandbox = Running::on(&store).await;

    // Off by default: the default profile is empty, and nothing is faulted.
    let faults = get(&sandbox, "faulty", "/sandbox/faults").await;
    assert_eq!((faults.status, &faults.body), (200, &json!({"profile": {}, "source": "default"})));
    assert_eq!(faults_of(&sandbox, "faulty", 20).await, vec![None; 20], "off by default");

    // 429 TooManyRequests with retryAfter and Retry-After, before anything of the request is read.
    let on = set(&sandbox, "faulty", json!({"requests": {"tooManyRequests": {"fraction": 1, "ms": 1500}}})).await;
    assert_eq!(on.status, 200, "{on:?}");
    assert_eq!(on.body["source"], "project");
    let refused = get(&sandbox, "faulty", HISTORY).await;
    assert_eq!(refused.status, 429, "{refused:?}");
    assert_eq!(refused.fault.as_deref(), Some("tooManyRequests"));
    assert_eq!(refused.retry_after.as_deref(), Some("2"), "1.5 s rounded up");
    assert_eq!((&refused.body["_tag"], &refused.body["retryAfter"]), (&json!("TooManyRequests"), &json!(1.5)));
    assert!(refused.body["message"].as_str().unwrap().contains("on purpose"), "{:?}", refused.body);
    let undecodable = call(&sandbox, "faulty", "POST", "/bridge/quote/user", Some("{not json")).await;
    assert_eq!((undecodable.status, undecodable.fault.as_deref()), (429, Some("tooManyRequests")));

    // The sandbox helpers, the fault operations among them, are never faulted.
    for path in ["/sandbox/clock", "/sandbox/faults", "/sandbox/webhook-deliveries"] {
        let helper = get(&sandbox, "faulty", path).await;
        assert_eq!((helper.status, helper.fault), (200, None), "{path}");
    }
    // Operations without authentication name no project: never faulted.
    let key = reqwest::get(format!("{}/webhook/public-key", sandbox.base_url)).await.unwrap();
    assert!(key.status().is_success() && key.headers().get(FAULT_HEADER).is_none());
    // Another project of the same sandbox, meanwhile: not one fault.
    assert_eq!(faults_of(&sandbox, "bystander", 30).await, vec![None; 30], "another project is not faulted");

    // 503 ServiceUnavailable, without Retry-After.
    assert_eq!(set(&sandbox, "faulty", json!({"requests": {"unavailable": {"fraction": 1}}})).await.status, 200);
    let unavailable = get(&sandbox, "faulty", HISTORY).await;
    assert_eq!((unavailable.status, unavailable.fault.as_deref()), (503, Some("unavailable")), "{unavailable:?}");
    assert_eq!((&unavailable.body["_tag"], &unavailable.retry_after), (&json!("ServiceUnavailable"), &None));
    // The project can always read, change and drop its faults.
    for (method, body) in [("GET", None), ("PUT", Some(r#"{"requests":{"unavailable":{"fraction":1}}}"#))] {
        let answer = call(&sandbox, "faulty", method, "/sandbox/faults", body).await;
        assert_eq!((answer.status, answer.fault), (200, None), "{method} /sandbox/faults");
    }

    // A late answer: served as usual, after the delay.
    let late = json!({"requests": {"delay": {"fraction": 1, "ms": 400}}});
    assert_eq!(set(&sandbox, "faulty", late).await.status, 200);
    let slow = get(&sandbox, "faulty", HISTORY).await;
    assert_eq!((slow.status, slow.fault.as_deref()), (200, Some("delay")), "{slow:?}");
    assert!(slow.took >= Duration::from_millis(400), "answered after the delay: {:?}", slow.took);

    // Refused profiles change nothing: a group over 1 (422), a fraction out of bounds or an unknown kind (400).
    let over = set(
        &sandbox,
        "faulty",
        json!({"requests": {"unavailable": {"fraction": 0.6}, "delay": {"fraction": 0.5, "ms": 1}}}),
    )
    .await;
    assert_eq!((over.status, &over.body["_tag"]), (422, &json!("InvalidRequest")), "{over:?}");
    assert!(over.body["message"].as_str().unwrap().contains("add up to 1.1"), "{:?}", over.body);
    for bad in [
        json!({"requests": {"unavailable": {"fraction": 1.5}}}),
        json!({"requests": {"delay": {"fraction": 0.5}}}),
        json!({"requests": {"delay": {"fraction": 0.5, "ms": 600000}}}),
    ] {
        let refused = set(&sandbox, "faulty", bad.clone()).await;
        assert_eq!((refused.status, &refused.body["_tag"]), (400, &json!("HttpApiDecodeError")), "{bad}");
    }
    let kept = get(&sandbox, "faulty", "/sandbox/faults").await;
    assert_eq!(kept.body["profile"], json!({"requests": {"delay": {"fraction": 1, "ms": 400}}}), "unchanged");
    // A member the schema does not name is ignored, as in every request: the answer shows what is in force.
    let unknown = set(&sandbox, "faulty", json!({"requests": {"sometimes": {"fraction": 0.5}}})).await;
    assert_eq!((unknown.status, &unknown.body["profile"]), (200, &json!({"requests": {}})));
    assert_eq!(faults_of(&sandbox, "faulty", 10).await, vec![None; 10]);

    // `{}` turns every fault off for the project; DELETE goes back to the sandbox's default.
    let off = set(&sandbox, "faulty", json!({})).await;
    assert_eq!(off.body, json!({"profile": {}, "source": "project"}));
    assert_eq!(faults_of(&sandbox, "faulty", 20).await, vec![None; 20]);
    let cleared = call(&sandbox, "faulty", "DELETE", "/sandbox/faults", None).await;
    assert_eq!((cleared.status, &cleared.body), (200, &json!({"profile": {}, "source": "default"})));

    // A project's own profile survives `POST /sandbox/reset` and a restart.
    let kept = json!({"requests": {"unavailable": {"fraction": 1}}});
    assert_eq!(set(&sandbox, "faulty", kept.clone()).await.status, 200);
    assert_eq!(call(&sandbox, "faulty", "POST", "/sandbox/reset", None).await.status, 200);
    let after_reset = get(&sandbox, "faulty", "/sandbox/faults").await;
    assert_eq!(after_reset.body, json!({"profile": kept, "source": "project"}), "kept by a reset");

    // /metrics counted them by kind, never by project (the recorder is the process's: other tests count too).
    for kind in ["tooManyRequests", "unavailable", "delay"] {
        let counted =
            counter(&sandbox, "bridge_sandbox_faults_injected_total", &[("on", "request"), ("kind", kind)]).await;
        assert!(counted >= 1.0, "{kind}: {counted}");
    }
    sandbox.stop().await;
    let restarted = Running::on(&store).await;
    let after_restart = get(&restarted, "faulty", HISTORY).await;
    assert_eq!((after_restart.status, after_restart.fault.as_deref()), (503, Some("unavailable")), "kept by a restart");
    assert_eq!(faults_of(&restarted, "bystander", 5).await, vec![None; 5]);
    restarted.stop().await;
}

/// A fraction of the requests is faulted, each kind in its share, and which ones is a function of the seed and
/// the project's sequence: a fresh sandbox started with the same seed faults the same requests; another seed others.
async fn a_seed_fixes_which_requests_are_faulted(store: TestStore) {
    let profile = json!({"requests": {
        "tooManyRequests": {"fraction": 0.2, "ms": 1}, "unavailable": {"fraction": 0.2}, "delay": {"fraction": 0.2, "ms": 1}
    }});
    let run = |store: TestStore, seed: u64| {
        let profile = profile.clone();
        async move {
            let sandbox = Running::with(SandboxConfig { seed: Some(seed), ..store.config() }).await;
            assert_eq!(set(&sandbox, "seeded", profile).await.status, 200);
            let seen = faults_of(&sandbox, "seeded", 60).await;
            sandbox.stop().await;
            seen
        }
    };
    let first = run(fresh_like(&store), 42).await;
    let again = run(store, 42).await;
    assert_eq!(first, again, "the same seed faults the same requests");
    let other = run(TestStore::sqlite(), 43).await;
    assert_ne!(first, other, "another seed faults others");
    for kind in ["tooManyRequests", "unavailable", "delay"] {
        let n = first.iter().filter(|f| f.as_deref() == Some(kind)).count();
        assert!((3..=24).contains(&n), "{kind}: {n} of 60 at 0.2: {first:?}");
    }
    let served = first.iter().filter(|f| f.is_none()).count();
    assert!((10..=40).contains(&served), "{served} of 60 at 0.4: {first:?}");
}

/// One POST a receiver got: the event id, the body, the signature, when.
type Received = (String, Vec<u8>, String, Instant);

/// A receiver on 127.0.0.1: every POST it got, in arrival order.
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start() -> (Self, String) {
        let receiver = Receiver::default();
        let got = receiver.got.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let got = got.clone();
                async move {
                    let envelope: Value = serde_json::from_slice(&body).unwrap();
                    let id = envelope["eventId"].as_str().unwrap().to_owned();
                    let signature = headers[SIGNATURE_HEADER].to_str().unwrap().to_owned();
                    got.lock().unwrap().push((id, body.to_vec(), signature, Instant::now()));
                    StatusCode::NO_CONTENT
                }
            }),
        );
        let url = format!("http://{}/hook", serve_locally(app).await);
        (receiver, url)
    }

    fn of(&self, event: &str) -> Vec<(Vec<u8>, String, Instant)> {
        let got = self.got.lock().unwrap();
        got.iter().filter(|(id, ..)| id == event).map(|(_, body, sig, at)| (body.clone(), sig.clone(), *at)).collect()
    }

    fn order(&self) -> Vec<String> {
        self.got.lock().unwrap().iter().map(|(id, ..)| id.clone()).collect()
    }
}

/// The attempts of one event, oldest first: (attempt, delivered, fault).
async fn attempts(sandbox: &Running, project: &str, event: &str) -> Vec<(u64, bool, Option<SandboxDeliveryFault>)> {
    let listed = get(sandbox, project, &format!("/sandbox/webhook-deliveries?eventId={event}")).await;
    let listed: SandboxWebhookDeliveries = serde_json::from_value(listed.body).unwrap();
    let mut attempts: Vec<_> = listed.items.iter().map(|a| (a.attempt, a.delivered, a.fault)).collect();
    attempts.sort();
    attempts
}

async fn delivery_faults_are_marked_and_seen_at_the_receiver(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let (receiver, url) = Receiver::start().await;
    let (faulty, bystander) = (sandbox.client_of("faulty-hooks"), sandbox.client_of("bystander-hooks"));

    // Duplicate: the receiver gets the same envelope, signature and all, twice; two attempts, the second marked.
    let profile = json!({"deliveries": {"duplicate": {"fraction": 1}}});
    assert_eq!(set(&sandbox, "faulty-hooks", profile).await.status, 200);
    let twice = send_test_event(&faulty, &url, "twice").await;
    let quiet = send_test_event(&bystander, &url, "once").await;
    wait_for("the duplicate", || receiver.of(&twice).len() == 2).await;
    let got = receiver.of(&twice);
    assert_eq!((&got[0].0, &got[0].1), (&got[1].0, &got[1].1), "the same body and signature");
    let marked = [(1, true, None), (2, true, Some(SandboxDeliveryFault::Duplicate))];
    eventually("both attempts listed", || async { attempts(&sandbox, "faulty-hooks", &twice).await == marked }).await;
    // Another project's delivery, meanwhile: once, unmarked.
    wait_for("the other project's delivery", || receiver.of(&quiet).len() == 1).await;
    eventually("its one attempt", || async {
        attempts(&sandbox, "bystander-hooks", &quiet).await == [(1, true, None)]
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.of(&quiet).len(), 1, "another project's delivery is not sent twice");

    // Delay: sent no sooner than its wait after the event; marked.
    let profile = json!({"deliveries": {"delay": {"fraction": 1, "ms": 1000}}});
    assert_eq!(set(&sandbox, "faulty-hooks", profile).await.status, 200);
    let sent = Instant::now();
    let late = send_test_event(&faulty, &url, "late").await;
    wait_for("the delayed delivery", || receiver.of(&late).len() == 1).await;
    let arrived = receiver.of(&late)[0].2 - sent;
    assert!(arrived >= Duration::from_millis(1000), "sent after its delay: {arrived:?}");
    let marked = [(1, true, Some(SandboxDeliveryFault::Delay))];
    eventually("the delayed attempt", || async { attempts(&sandbox, "faulty-hooks", &late).await == marked }).await;

    let counted =
        counter(&sandbox, "bridge_sandbox_faults_injected_total", &[("on", "delivery"), ("kind", "duplicate")]).await;
    assert!(counted >= 1.0, "{counted}");
    sandbox.stop().await;
}

/// Hold back: of two events sent one after the other, the first is held back (seed 5 draws it below 0.5, the
/// second above: `domain::faults`' tests pin that), so the receiver gets the second first; the held attempt is
/// marked.
async fn a_held_back_delivery_comes_after_a_later_one(store: TestStore) {
    let sandbox = Running::with(SandboxConfig { seed: Some(5), ..store.config() }).await;
    let (receiver, url) = Receiver::start().await;
    let client = sandbox.client_of("hold-back");
    let profile = json!({"deliveries": {"holdBack": {"fraction": 0.5, "ms": 1500}}});
    assert_eq!(set(&sandbox, "hold-back", profile).await.status, 200);
    let sent = Instant::now();
    let first = send_test_event(&client, &url, "first").await;
    let second = send_test_event(&client, &url, "second").await;
    wait_for("both deliveries", || receiver.of(&first).len() == 1 && receiver.of(&second).len() == 1).await;
    assert_eq!(receiver.order(), [second.clone(), first.clone()], "the later event arrived first");
    let held = receiver.of(&first)[0].2 - sent;
    assert!(held >= Duration::from_millis(1500), "held back at least its hold: {held:?}");
    let marked = [(1, true, Some(SandboxDeliveryFault::HoldBack))];
    eventually("the held attempt", || async { attempts(&sandbox, "hold-back", &first).await == marked }).await;
    eventually("the other", || async { attempts(&sandbox, "hold-back", &second).await == [(1, true, None)] }).await;
    sandbox.stop().await;
}

/// A project's delayed deliveries wait without taking a delivery slot of the instance (64): with more of them
/// waiting than there are slots (17 receiver URLs, 4 in flight to each), another project's delivery is made at
/// once, before any of them.
#[tokio::test]
async fn delayed_deliveries_never_hold_up_another_projects() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let (receiver, url) = Receiver::start().await;
    let (slow, other) = (sandbox.client_of("slow-hooks"), sandbox.client_of("prompt-hooks"));
    let profile = json!({"deliveries": {"delay": {"fraction": 1, "ms": 10000}}});
    assert_eq!(set(&sandbox, "slow-hooks", profile).await.status, 200);
    let delayed =
        || counter(&sandbox, "bridge_sandbox_faults_injected_total", &[("on", "delivery"), ("kind", "delay")]);
    let before = delayed().await;
    for n in 0..68 {
        send_test_event(&slow, &format!("{url}?receiver={}", n % 17), "late").await;
    }
    eventually("the 68 delayed deliveries taken", || async { delayed().await >= before + 68.0 }).await;
    let prompt = send_test_event(&other, &url, "prompt").await;
    wait_for("the other project's delivery", || !receiver.order().is_empty()).await;
    assert_eq!(receiver.order(), [prompt], "another project's delivery came first, and alone");
    sandbox.stop().await;
}

/// `serve --faults` is the default of every project without its own profile; a project's own overrides it.
async fn the_default_applies_to_every_project_without_its_own(store: TestStore) {
    let default = bridge_sandbox::faults::profile_from_flag("requests.unavailable=1").unwrap();
    let sandbox = Running::with(SandboxConfig { faults: Some(default), ..store.config() }).await;
    for project in ["one", "two"] {
        let answer = get(&sandbox, project, HISTORY).await;
        assert_eq!((answer.status, answer.fault.as_deref()), (503, Some("unavailable")), "{project}");
        let faults = get(&sandbox, project, "/sandbox/faults").await;
        assert_eq!(faults.body["source"], "default");
    }
    assert_eq!(set(&sandbox, "two", json!({})).await.status, 200);
    assert_eq!(faults_of(&sandbox, "two", 10).await, vec![None; 10], "its own empty profile: no fault");
    assert_eq!(get(&sandbox, "one", HISTORY).await.status, 503, "the other still has the default");
    sandbox.stop().await;
}

both_stores!(
    request_faults_are_answered_per_kind_and_only_to_their_project,
    a_seed_fixes_which_requests_are_faulted,
    delivery_faults_are_marked_and_seen_at_the_receiver,
    a_held_back_delivery_comes_after_a_later_one,
    the_default_applies_to_every_project_without_its_own,
);

/// Two instances on one PostgreSQL database: a profile set through one is in force on the other within a poll
/// (250 ms) plus a read; a profile dropped through the second stops on the first. The instance that made a change
/// applies it at once.
#[tokio::test]
async fn two_instances_on_one_database_follow_a_change() {
    let Some(store) = TestStore::postgres() else { return };
    let (first, second) = (Running::on(&store).await, Running::on(&store).await);
    assert_eq!(faults_of(&second, "shared", 5).await, vec![None; 5]);
    let changed = Instant::now();
    assert_eq!(set(&first, "shared", json!({"requests": {"unavailable": {"fraction": 1}}})).await.status, 200);
    assert_eq!(get(&first, "shared", HISTORY).await.status, 503, "at once on the instance that made it");
    eventually("the second instance faults", || async {
        let answer = get(&second, "shared", HISTORY).await;
        answer.status == 503 && answer.fault.as_deref() == Some("unavailable")
    })
    .await;
    println!("the second instance faulted within {:?} of the change (polled every 250 ms)", changed.elapsed());
    let cleared = Instant::now();
    assert_eq!(call(&second, "shared", "DELETE", "/sandbox/faults", None).await.status, 200);
    eventually("the first instance serves again", || async { get(&first, "shared", HISTORY).await.status == 200 })
        .await;
    println!("the first instance followed the drop within {:?}", cleared.elapsed());
    first.stop().await;
    second.stop().await;
}
