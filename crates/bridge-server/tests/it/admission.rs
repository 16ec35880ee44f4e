//! The admission step (`ServerConfig::with_admission`): asked after authentication and before decoding, for
//! every authenticated operation and no other; a refusal is 429 `TooManyRequests` with `retryAfter` and a
//! `Retry-After` header, documented by every operation that can answer it. And the `ErrorTag` extension every
//! error answer carries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use bridge_contract::operations::*;
use bridge_contract::{ErrorResponse, Operation, Security};
use bridge_server::{Admission, Caller, Decision, ErrorTag, ServerConfig, Throttled, Verdict};
use http::{Request, Response};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use crate::common::{self, token};

/// Refuses the project `throttled` (for 1.5 s), admits every other, and records what it was asked.
#[derive(Clone, Default)]
struct RefuseThrottled {
    asked: Arc<Mutex<Vec<(String, &'static str)>>>,
}

impl Admission for RefuseThrottled {
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled> {
        self.asked.lock().unwrap().push((caller.project_id.clone(), operation));
        match caller.project_id.as_str() {
            "throttled" => Err(Throttled { message: "slow down".into(), retry_after: Duration::from_millis(1500) }),
            _ => Ok(()),
        }
    }
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    authorization: Option<String>,
    body: &str,
) -> Response<Body> {
    let mut request = Request::builder().method(method).uri(uri).header("content-type", "application/json");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    app.clone().oneshot(request.body(Body::from(body.to_owned())).unwrap()).await.unwrap()
}

async fn json(response: Response<Body>) -> Value {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn bearer(project: &str) -> Option<String> {
    Some(format!("Bearer {}", token(project)))
}

/// Every operation, with a throttled project's token and an undecodable body: an authenticated one answers 429
/// `TooManyRequests` (decoded by the operation's own error type, so every such operation documents it) with the
/// `Retry-After` header, and its method is never called; one without `security` is never asked about. Another
/// project is admitted (its undecodable body then answers 400), and a request without a credential is refused by
/// authentication first (401: no project to ask about).
#[tokio::test]
async fn refusals_come_after_authentication_and_before_decoding() {
    let admission = RefuseThrottled::default();
    let (app, recorder) = common::app(ServerConfig::default().with_admission(admission.clone()));
    let (mut limited, mut open) = (0, 0);
    macro_rules! each {
        ($op:ident, $id:literal) => {
            let path = <$op as Operation>::PATH.replace(['{', '}'], "");
            let uri = format!("{path}?pageSize=notanumber");
            let method = <$op as Operation>::METHOD;
            admission.asked.lock().unwrap().clear();
            let response = send(&app, method, &uri, bearer("throttled"), "{not json").await;
            let status = response.status().as_u16();
            let header = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            let tag = response.extensions().get::<ErrorTag>().cloned();
            let body = json(response).await;
            if <$op as Operation>::SECURITY == Security::None {
                open += 1;
                assert_ne!(status, 429, "{} has no security: it is not limited", $id);
                assert!(admission.asked.lock().unwrap().is_empty(), "{}: admission not asked", $id);
            } else {
                limited += 1;
                assert_eq!(status, 429, "{}: {body}", $id);
                assert_eq!(header.as_deref(), Some("2"), "{}: Retry-After rounds 1.5 s up", $id);
                assert_eq!(tag, Some(ErrorTag("TooManyRequests".into())), "{}", $id);
                assert_eq!(body["retryAfter"], 1.5, "{}", $id);
                assert_eq!(body["message"], "slow down", "{}", $id);
                let text = body.to_string();
                let typed = <$op as Operation>::Error::from_response(429, text.as_bytes());
                assert!(
                    matches!(&typed, Some(Ok(e)) if e.status() == 429),
                    "{} documents the 429 TooManyRequests: {typed:?}",
                    $id
                );
                assert_eq!(*admission.asked.lock().unwrap(), [("throttled".to_owned(), $id)], "asked once");
                // Another project gets past admission to decoding.
                let other = send(&app, method, &uri, bearer("project-a"), "{not json").await;
                assert_ne!(other.status().as_u16(), 429, "{}: another project is admitted", $id);
                // No credential: authentication answers first, and admission is not asked.
                admission.asked.lock().unwrap().clear();
                let anonymous = send(&app, method, &uri, None, "{not json").await;
                assert_eq!(anonymous.status().as_u16(), 401, "{}", $id);
                assert!(admission.asked.lock().unwrap().is_empty(), "{}", $id);
            }
        };
    }
    bridge_contract::every_operation!(each);
    assert!(limited >= 20 && open >= 5, "{limited} limited, {open} open operations");
    let throttled_calls = recorder.calls.lock().unwrap().iter().filter(|c| c.project == "throttled").count();
    assert_eq!(throttled_calls, 0, "no method was called for the throttled project");
}

/// Without an admission step nothing is refused: the same requests of the same project are decoded (400).
#[tokio::test]
async fn without_admission_nothing_is_refused() {
    let (app, _) = common::app(ServerConfig::default());
    let response = send(&app, "POST", "/bridge/quote/user", bearer("throttled"), "{not json").await;
    assert_eq!(response.status().as_u16(), 400);
}

/// Every error answer carries its `_tag` as an `ErrorTag` extension (what a metrics layer counts 429s and other
/// errors by); a success and a 404 of an unknown path (no body) carry none.
#[tokio::test]
async fn every_error_answer_carries_its_tag() {
    let config = ServerConfig { body_limit: 200, ..ServerConfig::default() }.with_admission(RefuseThrottled::default());
    let (app, _) = common::app(config.clone());
    const HISTORY: &str = "/bridge/history/user?page=1&limit=1";
    const QUOTE: &str = "/bridge/quote/user";
    let quote = common::quote_body().to_string();
    // (method, uri, Authorization, body, status, tag)
    let cases = [
        ("GET", HISTORY, None, "", 401, Some("Unauthorized")),
        ("GET", HISTORY, Some("Bearer a.b.c".to_owned()), "", 400, Some("InvalidJwt")),
        ("POST", QUOTE, bearer("project-a"), "{", 400, Some("HttpApiDecodeError")),
        ("POST", QUOTE, bearer("project-a"), &"x".repeat(300), 413, Some("PayloadTooLarge")),
        ("POST", QUOTE, bearer("project-a"), &quote, 422, Some("InvalidRequest")),
        ("POST", QUOTE, bearer("throttled"), "{}", 429, Some("TooManyRequests")),
        ("GET", "/webhook/public-key", None, "", 200, None),
        ("GET", "/no/such/path", bearer("project-a"), "", 404, None),
    ];
    for (method, uri, authorization, body, status, tag) in cases {
        let response = send(&app, method, uri, authorization, body).await;
        assert_eq!(response.status().as_u16(), status, "{method} {uri}");
        assert_eq!(response.extensions().get::<ErrorTag>().map(|t| t.0.as_str()), tag, "{method} {uri}");
    }
    // A method that panics: 503 ServiceUnavailable, tagged too.
    let (panicking, _) = common::app_over(common::Recorder { panics: true, ..Default::default() }, config);
    let response =
        send(&panicking, "POST", "/bridge/quote/user", bearer("project-a"), &common::quote_body().to_string()).await;
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.extensions().get::<ErrorTag>().map(|t| t.0.as_str()), Some("ServiceUnavailable"));
}

/// An admission that decides more than "now or 429" (`Admission::decide`): by project, served after a wait,
/// answered 503 `ServiceUnavailable`, or 429; each answer carries the decision's header, whatever its status.
#[derive(Clone, Default)]
struct Faulty;

impl Admission for Faulty {
    fn admit(&self, _: &Caller, _: &'static str) -> Result<(), Throttled> {
        Ok(())
    }

    fn decide(&self, caller: &Caller, _: &'static str) -> Decision {
        let verdict = match caller.project_id.as_str() {
            "slow" => Verdict::ServeAfter(Duration::from_millis(300)),
            "unavailable" => Verdict::Unavailable("on purpose".into()),
            "throttled" => Verdict::TooManyRequests(Throttled {
                message: "on purpose".into(),
                retry_after: Duration::from_millis(200),
            }),
            _ => return Decision::serve(),
        };
        Decision::new(verdict)
            .with_header(http::HeaderName::from_static("x-decided"), http::HeaderValue::from_static("yes"))
    }
}

#[tokio::test]
async fn a_decision_delays_or_refuses_with_503_or_429_and_marks_the_answer() {
    let (app, recorder) = common::app(ServerConfig::default().with_admission(Faulty));
    const HISTORY: &str = "/bridge/history/user?page=1&limit=1&sortBy=createdAt&sortDirection=desc";
    let marked =
        |response: &Response<Body>| response.headers().get("x-decided").map(|v| v.to_str().unwrap().to_owned());

    let started = std::time::Instant::now();
    let slow = send(&app, "GET", HISTORY, bearer("slow"), "").await;
    assert!(started.elapsed() >= Duration::from_millis(300), "served after the wait: {:?}", started.elapsed());
    assert_eq!(slow.status().as_u16(), 422, "decoded and served (the recorder answers 422)");
    assert_eq!(marked(&slow).as_deref(), Some("yes"), "a served answer carries the decision's header");

    let unavailable = send(&app, "POST", "/bridge/quote/user", bearer("unavailable"), "{not json").await;
    assert_eq!(unavailable.status().as_u16(), 503, "refused before decoding");
    assert_eq!(marked(&unavailable).as_deref(), Some("yes"));
    assert_eq!(unavailable.extensions().get::<ErrorTag>(), Some(&ErrorTag("ServiceUnavailable".into())));
    let body = json(unavailable).await;
    assert_eq!(body, serde_json::json!({"_tag": "ServiceUnavailable", "message": "on purpose"}));
    let typed = QuoteBridgeError::from_response(503, body.to_string().as_bytes());
    assert!(matches!(typed, Some(Ok(QuoteBridgeError::ServiceUnavailable(_)))), "the documented 503: {typed:?}");

    let throttled = send(&app, "GET", HISTORY, bearer("throttled"), "").await;
    assert_eq!(throttled.status().as_u16(), 429);
    assert_eq!(marked(&throttled).as_deref(), Some("yes"));
    assert_eq!(throttled.headers().get("retry-after").unwrap(), "1");

    let plain = send(&app, "GET", HISTORY, bearer("project-a"), "").await;
    assert_eq!((plain.status().as_u16(), marked(&plain)), (422, None));
    let served: Vec<String> = recorder.calls.lock().unwrap().iter().map(|c| c.project.clone()).collect();
    assert_eq!(served, ["slow", "project-a"], "the refused requests reached no method");
}
