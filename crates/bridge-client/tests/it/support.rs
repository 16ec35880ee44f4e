//! A tiny HTTP server on 127.0.0.1 for the client tests: it records every request and answers with whatever
//! the test's responder returns (canned pages, error bodies). It does not depend on the server crate.

use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: HeaderMap,
}

impl Recorded {
    /// The value of query parameter `name`, if sent.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An answer: status, content type and body text.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

pub fn json(status: u16, body: impl Into<String>) -> Answer {
    Answer { status, content_type: "application/json", body: body.into() }
}

pub fn text(status: u16, body: impl Into<String>) -> Answer {
    Answer { status, content_type: "text/plain", body: body.into() }
}

type Responder = dyn Fn(&Recorded) -> Answer + Send + Sync;

#[derive(Clone)]
struct AppState {
    log: Arc<Mutex<Vec<Recorded>>>,
    responder: Arc<Responder>,
}

pub struct TestServer {
    pub base_url: String,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }
}

/// Starts a server on 127.0.0.1 (a free port) in the current tokio runtime.
pub async fn serve(responder: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> TestServer {
    let log = Arc::new(Mutex::new(Vec::new()));
    let state = AppState { log: log.clone(), responder: Arc::new(responder) };
    let app = Router::new().fallback(handle).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("test server");
    });
    TestServer { base_url: format!("http://{addr}"), log }
}

async fn handle(
    State(state): State<AppState>,
    uri: Uri,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Response {
    let recorded = Recorded { path: uri.path().to_owned(), query, headers };
    let answer = (state.responder)(&recorded);
    state.log.lock().unwrap().push(recorded);
    let status = StatusCode::from_u16(answer.status).unwrap();
    (status, [("content-type", answer.content_type)], answer.body).into_response()
}

/// A `WEBHOOK_TEST` event.
pub fn test_event(message: &str) -> serde_json::Value {
    serde_json::json!({ "_tag": "WEBHOOK_TEST", "type": "test", "message": message })
}

/// A `DEPOSIT_ADDRESS_CREATED` event.
pub fn created_event(address: &str) -> serde_json::Value {
    serde_json::json!({
        "_tag": "DEPOSIT_ADDRESS_CREATED",
        "depositChain": "ETHEREUM",
        "depositAddress": address,
        "destinationChain": "BASE",
    })
}

/// An event of a kind the contract does not (yet) have.
pub fn future_event() -> serde_json::Value {
    serde_json::json!({ "_tag": "TELEPORT_COMPLETED", "destination": "MARS", "amount": "1.50", "eta": 1e21 })
}

/// A valid `bridge` record in state `PENDING`.
pub fn pending_bridge(id: &str) -> serde_json::Value {
    serde_json::json!({
        "_id": id, "userId": "project-1", "chainIn": "ETHEREUM", "chainOut": "BASE",
        "amountIn": "100", "amountInUsd": 100, "amountOut": "99", "amountOutUsd": 99,
        "amountNative": null, "amountNativeUsd": null,
        "fee": "1", "feeUsd": 1, "gasFee": "0.5", "gasFeeUsd": 0.5, "platformFee": "0.5", "platformFeeUsd": 0.5,
        "percentageFee": "0", "percentageFeeUsd": 0, "sourceGasFee": "0", "sourceGasFeeUsd": 0,
        "sponsoredFees": {
            "fee": "0", "gasFee": "0", "platformFee": "0", "percentageFee": "0", "sourceGasFee": "0",
            "feeUsd": 0, "gasFeeUsd": 0, "platformFeeUsd": 0, "percentageFeeUsd": 0, "sourceGasFeeUsd": 0
        },
        "recipient": "0x2222", "depositor": "0x1111",
        "createdAt": "2026-01-02T03:04:05.678Z", "commitmentDate": "2026-01-02T03:04:05.678Z",
        "_tag": "bridge", "token": "USDC", "usdPrice": 1, "state": "PENDING"
    })
}
