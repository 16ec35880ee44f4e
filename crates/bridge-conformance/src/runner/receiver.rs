//! A tiny webhook receiver on 127.0.0.1 for the delivery checks: records every POST (signature header and raw
//! body) and answers 200, or 503 to the first attempt of each event when asked to (to see retries).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use tokio::sync::{oneshot, Notify};

/// One POST the receiver got.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The `X-Webhook-Signature` header.
    pub signature: Option<String>,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// What the receiver answered.
    pub answered: u16,
}

struct Shared {
    deliveries: Mutex<Vec<Delivery>>,
    refused: Mutex<HashSet<String>>,
    fail_first_attempt: bool,
    notify: Notify,
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    /// Where to send deliveries: `http://127.0.0.1:<port>/hook`.
    pub url: String,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
}

impl Receiver {
    /// Starts a receiver on a free loopback port. With `fail_first_attempt`, the first delivery of each
    /// `eventId` is answered 503.
    pub async fn start(fail_first_attempt: bool) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            deliveries: Mutex::new(Vec::new()),
            refused: Mutex::new(HashSet::new()),
            fail_first_attempt,
            notify: Notify::new(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let app = axum::Router::new().route("/hook", post(receive)).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self { url, shared, stop: Some(stop) })
    }

    /// Every delivery so far.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.shared.deliveries.lock().unwrap().clone()
    }

    /// Waits (real time) until `done` holds for the deliveries so far, or `timeout` passes; between waits
    /// `nudge` runs (the checks advance the sandbox clock there). Returns whether `done` held.
    pub async fn wait_until<F, N, Fut>(&self, timeout: Duration, done: F, mut nudge: N) -> bool
    where
        F: Fn(&[Delivery]) -> bool,
        N: FnMut() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            if done(&self.deliveries()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            nudge().await;
            let wait = (deadline - now).min(Duration::from_millis(250));
            let _ = tokio::time::timeout(wait, self.shared.notify.notified()).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let mut status = StatusCode::OK;
    if shared.fail_first_attempt {
        let event_id = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["eventId"].as_str().map(str::to_owned))
            .unwrap_or_default();
        if shared.refused.lock().unwrap().insert(event_id) {
            status = StatusCode::SERVICE_UNAVAILABLE;
        }
    }
    shared.deliveries.lock().unwrap().push(Delivery {
        signature: header(bridge_client::webhook::SIGNATURE_HEADER),
        content_type: header("content-type"),
        body: body.to_vec(),
        answered: status.as_u16(),
    });
    shared.notify.notify_waiters();
    status
}
