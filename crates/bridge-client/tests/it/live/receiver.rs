//! The axum webhook receiver against the sandbox's real deliveries: typed events, the key fetched once and again
//! after a rotation, refusals with clear statuses, duplicates acknowledged without reaching the handler.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use bridge_client::receiver::{InMemoryDeduplicator, Webhook, WebhookReceiver};
use bridge_client::webhook::{VerifiedDelivery, WebhookSigner, SIGNATURE_HEADER};
use bridge_client::{Client, Credentials, Event};
use bridge_contract::{
    SandboxListWebhookDeliveriesQuery, SandboxWebhookTestRequest, WebhookDeliveryAttempt, WebhookEvent,
};
use serde_json::json;

use crate::live::harness::{advance, eventually, Fault, Proxy, Sandbox};

const KEY: &str = "/webhook/public-key";

#[derive(Clone)]
struct App {
    receiver: WebhookReceiver,
    handled: Arc<Mutex<Vec<VerifiedDelivery>>>,
    /// The handler fails (500, no ack) this many more times.
    failures: Arc<AtomicUsize>,
}

impl FromRef<App> for WebhookReceiver {
    fn from_ref(app: &App) -> Self {
        app.receiver.clone()
    }
}

async fn handle(State(app): State<App>, webhook: Webhook) -> StatusCode {
    if app.failures.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    app.handled.lock().unwrap().push(webhook.delivery.clone());
    webhook.ack().await
}

/// A receiver on a free loopback port; its URL for deliveries is `{base}/hooks`.
struct Receiver {
    addr: SocketAddr,
    app: App,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    async fn start(receiver: WebhookReceiver) -> Self {
        let app = App { receiver, handled: Default::default(), failures: Default::default() };
        let router = Router::new().route("/hooks", post(handle)).with_state(app.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { addr, app, task }
    }

    fn url(&self) -> String {
        format!("http://{}/hooks", self.addr)
    }

    fn handled(&self) -> Vec<VerifiedDelivery> {
        self.app.handled.lock().unwrap().clone()
    }
}

/// A receiver fetching the key through `key_proxy`.
fn receiver_via(key_proxy: &Proxy) -> WebhookReceiver {
    WebhookReceiver::new(Client::new(&key_proxy.base_url, Credentials::none()).unwrap())
}

async fn send_test(sandbox: &Sandbox, url: &str, message: &str) -> String {
    let request = SandboxWebhookTestRequest { webhook_url: url.to_owned(), message: Some(message.to_owned()) };
    sandbox.client().sandbox_send_webhook_test(&request).await.unwrap().event_id
}

/// The sandbox's attempts to deliver `event_id`, oldest first.
async fn attempts(sandbox: &Sandbox, event_id: &str) -> Vec<WebhookDeliveryAttempt> {
    let query = SandboxListWebhookDeliveriesQuery { event_id: Some(event_id.to_owned()) };
    let mut items = sandbox.client().sandbox_list_webhook_deliveries(&query).await.unwrap().items;
    items.sort_by_key(|a| a.attempt);
    items
}

/// Waits until the sandbox has made `n` attempts to deliver `event_id`; their statuses.
async fn statuses(sandbox: &Sandbox, event_id: &str, n: usize) -> Vec<Option<i64>> {
    eventually(&format!("{n} attempts to deliver {event_id}"), || async {
        let items = attempts(sandbox, event_id).await;
        let finished = items.iter().filter(|a| a.delivered || a.status.is_some() || a.error.is_some()).count();
        (finished >= n).then(|| items.iter().map(|a| a.status).collect())
    })
    .await
}

#[tokio::test]
async fn sandbox_deliveries_reach_the_handler_typed_and_the_key_is_fetched_once() {
    let sandbox = Sandbox::start().await;
    let key_proxy = Proxy::start(sandbox.addr).await;
    let receiver = Receiver::start(receiver_via(&key_proxy).with_deduplicator(InMemoryDeduplicator::new(100))).await;

    let first = send_test(&sandbox, &receiver.url(), "one").await;
    let second = send_test(&sandbox, &receiver.url(), "two").await;
    let mut request = crate::live::harness::quote_request("100");
    request.webhook_url = Some(receiver.url());
    let quote = sandbox.client().quote_bridge(&request).await.unwrap();
    sandbox.client().commit_quote(quote.quote_id()).await.unwrap();

    eventually("three deliveries", || async { (receiver.handled().len() == 3).then_some(()) }).await;
    let handled = receiver.handled();
    let mut messages = Vec::new();
    for delivery in &handled {
        match &delivery.event {
            Event::Known(WebhookEvent::WebhookTest(e)) => messages.push((delivery.event_id.clone(), e.message.clone())),
            Event::Known(WebhookEvent::BridgePending(_)) => {}
            other => panic!("unexpected event {other:?}"),
        }
    }
    messages.sort();
    let mut expected = vec![(first.clone(), "one".to_owned()), (second.clone(), "two".to_owned())];
    expected.sort();
    assert_eq!(messages, expected);
    assert_eq!(statuses(&sandbox, &first, 1).await, [Some(200)]);
    // Fetched on the first delivery, then cached.
    assert_eq!(key_proxy.seen_at("GET", KEY).len(), 1);
}

#[tokio::test]
async fn a_rotated_key_is_fetched_again_once_and_a_wrong_key_is_refused() {
    let sandbox = Sandbox::start().await;
    let old = WebhookSigner::from_pem(include_str!("../../fixtures/signer_a.key.pem")).unwrap();
    let old_key = json!(old.served_public_key());

    // The receiver first gets a key the sandbox no longer signs with.
    let key_proxy = Proxy::start(sandbox.addr).await;
    key_proxy.inject("GET", KEY, 1, Fault::json(200, old_key.clone()));
    let receiver = Receiver::start(receiver_via(&key_proxy)).await;
    let event = send_test(&sandbox, &receiver.url(), "rotated").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [Some(200)]);
    assert_eq!(receiver.handled().len(), 1);
    assert_eq!(key_proxy.seen_at("GET", KEY).len(), 2, "fetched again once");

    // A key that stays wrong: refused with 401, and fetched again at most once per interval.
    let key_proxy = Proxy::start(sandbox.addr).await;
    key_proxy.inject("GET", KEY, 1000, Fault::json(200, old_key));
    let receiver = Receiver::start(receiver_via(&key_proxy)).await;
    let one = send_test(&sandbox, &receiver.url(), "refused").await;
    assert_eq!(statuses(&sandbox, &one, 1).await, [Some(401)]);
    let two = send_test(&sandbox, &receiver.url(), "refused too").await;
    assert_eq!(statuses(&sandbox, &two, 1).await, [Some(401)]);
    assert!(receiver.handled().is_empty());
    assert_eq!(key_proxy.seen_at("GET", KEY).len(), 2, "one fetch, one refetch");

    // A key that cannot be fetched: 503, so that the service delivers again later.
    let key_proxy = Proxy::start(sandbox.addr).await;
    key_proxy.inject("GET", KEY, 1000, Fault::Answer { status: 404, headers: vec![], body: String::new() });
    let receiver = Receiver::start(receiver_via(&key_proxy)).await;
    let event = send_test(&sandbox, &receiver.url(), "no key").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [Some(503)]);
}

#[tokio::test]
async fn forged_stale_and_malformed_deliveries_get_clear_statuses() {
    let sandbox = Sandbox::start().await;
    let key_proxy = Proxy::start(sandbox.addr).await;
    let receiver = Receiver::start(receiver_via(&key_proxy)).await;
    let http = reqwest::Client::new();
    let post = |body: Vec<u8>, signature: Option<String>| {
        let mut request = http.post(receiver.url()).header("content-type", "application/json").body(body);
        if let Some(signature) = signature {
            request = request.header(SIGNATURE_HEADER, signature);
        }
        async move {
            let answer = request.send().await.unwrap();
            (answer.status().as_u16(), answer.text().await.unwrap())
        }
    };
    let envelope =
        json!({ "event": { "_tag": "WEBHOOK_TEST", "type": "test", "message": "forged" }, "eventId": "e-1", "ts": 1 });
    let forger = WebhookSigner::from_pem(include_str!("../../fixtures/signer_b.key.pem")).unwrap();
    let forged = forger.signed_delivery(&envelope).unwrap();

    let (status, text) = post(forged.body.clone().into_bytes(), None).await;
    assert_eq!((status, text.as_str()), (401, "no X-Webhook-Signature header"));
    let (status, text) = post(forged.body.clone().into_bytes(), Some("zz".into())).await;
    assert_eq!(status, 401, "{text}");
    assert!(text.starts_with("malformed X-Webhook-Signature header"), "{text}");
    let (status, text) = post(forged.body.clone().into_bytes(), Some(forged.signature.clone())).await;
    assert_eq!((status, text.as_str()), (401, "webhook signature does not match the body and the key"));
    let (status, text) = post(b"{not json".to_vec(), Some(forged.signature.clone())).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.starts_with("webhook body is not JSON"), "{text}");

    // A genuine delivery from 10 minutes ahead (the sandbox clock moved): outside the 5-minute window.
    advance(&sandbox, 10 * 60_000).await;
    let event = send_test(&sandbox, &receiver.url(), "late").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [Some(401)]);
    assert!(receiver.handled().is_empty());
    // The forged signatures made the receiver fetch the key, and again once, not once per forgery.
    assert_eq!(key_proxy.seen_at("GET", KEY).len(), 2);

    // With a wider window the same delivery, made again, is accepted.
    let wide = Receiver::start(receiver_via(&key_proxy).with_max_age(Some(Duration::from_secs(3600)))).await;
    let event = send_test(&sandbox, &wide.url(), "late").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [Some(200)]);
}

#[tokio::test]
async fn a_redelivery_is_handled_after_a_failure_and_acknowledged_after_a_success() {
    let sandbox = Sandbox::start().await;
    let key_proxy = Proxy::start(sandbox.addr).await;
    let receiver = Receiver::start(receiver_via(&key_proxy).with_deduplicator(InMemoryDeduplicator::new(100))).await;
    // The handler fails once: the event is not marked processed, so the redelivery is handled.
    receiver.app.failures.store(1, Ordering::SeqCst);
    let event = send_test(&sandbox, &receiver.url(), "twice").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [Some(500)]);
    assert!(receiver.handled().is_empty());
    advance(&sandbox, 5_000).await;
    assert_eq!(statuses(&sandbox, &event, 2).await, [Some(500), Some(200)]);
    assert_eq!(receiver.handled().len(), 1);

    // The sandbox delivers through a proxy that loses the receiver's first answer.
    let lossy = Proxy::start(receiver.addr).await;
    let url = format!("{}/hooks", lossy.base_url);
    // Handled and acknowledged, but the answer is lost: the redelivery is a duplicate, acknowledged unhandled.
    lossy.inject("POST", "/hooks", 1, Fault::ForwardThenDrop);
    let event = send_test(&sandbox, &url, "once").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [None]);
    assert_eq!(receiver.handled().len(), 2);
    advance(&sandbox, 5_000).await;
    assert_eq!(statuses(&sandbox, &event, 2).await, [None, Some(200)]);
    assert_eq!(receiver.handled().len(), 2, "the duplicate did not reach the handler");

    // Without a deduplicator the handler sees it twice.
    let plain = Receiver::start(receiver_via(&key_proxy)).await;
    let lossy = Proxy::start(plain.addr).await;
    lossy.inject("POST", "/hooks", 1, Fault::ForwardThenDrop);
    let event = send_test(&sandbox, &format!("{}/hooks", lossy.base_url), "twice").await;
    assert_eq!(statuses(&sandbox, &event, 1).await, [None]);
    advance(&sandbox, 5_000).await;
    assert_eq!(statuses(&sandbox, &event, 2).await, [None, Some(200)]);
    assert_eq!(plain.handled().len(), 2);
}
