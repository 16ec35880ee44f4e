//! Property tests of the decoder: every schema-valid request (generated from the schema with the contract
//! crate's proptest strategies) is accepted and reaches the handler unchanged; no input, however malformed,
//! makes the server panic or answer 500.

use crate::common;

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::decode::engine::trim_js;
use bridge_server::decode::shape::Shape;
use bridge_server::ServerConfig;
use common::{app, Send};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

/// The JSON a handler receives for a valid body: the same, with `x-trim` strings trimmed and absent members
/// that have a `default` filled in (read from the decoder tables, so this knows no field by name).
fn expected(shape: &Shape, value: &Value) -> Value {
    match (shape, value) {
        (Shape::String(rules), Value::String(s)) if rules.trim => Value::String(trim_js(s).to_owned()),
        (Shape::Array(a), Value::Array(items)) => Value::Array(items.iter().map(|i| expected(&a.items, i)).collect()),
        (Shape::Struct(s), Value::Object(map)) => {
            let mut out: serde_json::Map<String, Value> = map
                .iter()
                .map(|(k, v)| {
                    let field = s.fields.iter().find(|f| f.name == k);
                    (k.clone(), field.map_or(v.clone(), |f| expected(&f.shape, v)))
                })
                .collect();
            // Absent members with a schema `default` arrive with it.
            for field in s.fields {
                if let (false, Some(default)) = (out.contains_key(field.name), field.default) {
                    out.insert(field.name.to_owned(), serde_json::from_str(default).unwrap());
                }
            }
            Value::Object(out)
        }
        (Shape::Union(u), Value::Object(map)) => {
            let tag = map.get(u.tag).and_then(Value::as_str).unwrap_or_default();
            match u.variants.iter().find(|(t, _)| *t == tag) {
                Some((_, s)) => expected(&Shape::Struct(s), value),
                None => value.clone(),
            }
        }
        _ => value.clone(),
    }
}

fn accepts<O: Operation>(path: &'static str)
where
    O::Body: Arbitrary + std::fmt::Debug,
{
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let shapes = bridge_server::shapes::by_operation_id(O::ID).unwrap();
    let body_shape = shapes.body.as_ref().unwrap().shape;
    let mut runner = TestRunner::new(Config { cases: 64, failure_persistence: None, ..Config::default() });
    runner
        .run(&any::<O::Body>(), |body| {
            let (app, recorder) = app(ServerConfig::default());
            let sent = serde_json::to_value(&body).unwrap();
            let answer = rt.block_on(Send::json(O::METHOD, path, &sent.to_string()).to(&app));
            prop_assert!(
                answer.status != 400 && answer.status != 401,
                "{} rejected a valid body: {}\n{sent:#}",
                O::ID,
                answer.body
            );
            let call = recorder.last().expect("the handler was called");
            let received = call.input.get("body").cloned().unwrap_or(call.input);
            prop_assert_eq!(received, expected(&body_shape, &sent));
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_valid_body_is_accepted_unchanged() {
    accepts::<QuoteBridge>("/bridge/quote/user");
    accepts::<QuoteBridgeSwap>("/bridge/quote/bridge-swap/user");
    accepts::<CreateDepositAddresses>("/sda/deposit-addresses");
    accepts::<CreateDepositAddressesLegacy>("/bridge/deposit-addresses");
    accepts::<SandboxAdvanceClock>("/sandbox/clock/advance");
    accepts::<SandboxSendWebhookTest>("/sandbox/webhook-test");
}

/// Query parameters as the query string a client sends: strings as they are, numbers as JavaScript prints them.
fn query_string(value: &Value) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in value.as_object().unwrap() {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => bridge_contract::scalars::js_number_to_string(n.as_f64().unwrap()),
            other => other.to_string(),
        };
        out.append_pair(k, &text);
    }
    out.finish()
}

fn accepts_query<O: Operation>(path: &'static str)
where
    O::Query: Arbitrary + std::fmt::Debug,
{
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut runner = TestRunner::new(Config { cases: 64, failure_persistence: None, ..Config::default() });
    runner
        .run(&any::<O::Query>(), |query| {
            let (app, recorder) = app(ServerConfig::default());
            let sent = serde_json::to_value(&query).unwrap();
            let uri = format!("{path}?{}", query_string(&sent));
            let answer = rt.block_on(Send::get(Box::leak(uri.into_boxed_str())).to(&app));
            prop_assert!(answer.status != 400, "{} rejected a valid query: {}\n{sent:#}", O::ID, answer.body);
            let received = recorder.last().expect("the handler was called").input;
            // Defaults fill absent members; everything sent arrives as sent.
            for (k, v) in sent.as_object().unwrap() {
                prop_assert_eq!(&received[k], v, "member {}", k);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_valid_query_is_accepted_unchanged() {
    accepts_query::<ListBridgeHistory>("/bridge/history/user");
    accepts_query::<SearchDepositAddresses>("/sda/deposit-addresses/search");
    accepts_query::<ListUserEvents>("/webhook/user-events-cursor");
}

const ROUTES: [(&str, &str); 8] = [
    ("POST", "/bridge/quote/user"),
    ("POST", "/bridge/quote/bridge-swap/user"),
    ("POST", "/sda/deposit-addresses"),
    ("POST", "/bridge/deposit-addresses"),
    ("GET", "/sda/deposit-addresses/search"),
    ("GET", "/bridge/history/user"),
    ("GET", "/webhook/user-events-cursor"),
    ("POST", "/sandbox/deposit-addresses/a/b/deposits"),
];

proptest! {
    #![proptest_config(Config { cases: 256, failure_persistence: None, ..Config::default() })]

    /// Arbitrary bytes as body, arbitrary content type, arbitrary query: always a documented 4xx or 200, never a
    /// panic or 500 (`Send::to` asserts the latter).
    #[test]
    fn arbitrary_input_never_breaks_the_server(
        route in 0..ROUTES.len(),
        body in proptest::collection::vec(any::<u8>(), 0..256),
        json_like in "[\\[\\]{}\",:0-9a-z_ \\\\.eE+-]{0,64}",
        use_json_like in any::<bool>(),
        content_type in prop_oneof![Just(None), Just(Some("application/json")), Just(Some("text/plain")),
            Just(Some("application/x-www-form-urlencoded")), Just(Some("image/png")), Just(Some("application/json; charset=latin1"))],
        query in "[a-zA-Z=&%0-9+]{0,40}",
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (app, _) = app(ServerConfig::default());
        let (method, path) = ROUTES[route];
        let uri = Box::leak(format!("{path}?{query}").into_boxed_str());
        let mut send = Send::json(method, uri, "").content_type(content_type);
        send.body = if use_json_like { json_like.into_bytes() } else { body };
        let answer = rt.block_on(send.to(&app));
        prop_assert!([200, 400, 401, 404, 413, 422].contains(&answer.status), "status {}", answer.status);
        if answer.status == 400 {
            prop_assert_eq!(answer.body["_tag"].as_str(), Some("HttpApiDecodeError"));
            prop_assert!(answer.body["issues"].as_array().is_some_and(|i| !i.is_empty()));
        }
    }
}

/// A handler that panics is answered 503 `ServiceUnavailable`, the documented shape, for every operation the
/// request reaches (the decode catalogue's valid quote, and the event feed).
#[tokio::test]
async fn a_panicking_handler_answers_503_service_unavailable() {
    let (app, recorder) =
        common::app_over(common::Recorder { panics: true, ..Default::default() }, ServerConfig::default());
    let quote = Send::json("POST", "/bridge/quote/user", &common::quote_body().to_string()).to(&app).await;
    assert_eq!(recorder.last().map(|c| c.operation), Some(QuoteBridge::ID), "the request reached the handler");
    let typed = QuoteBridgeError::from_response(quote.status, quote.body.to_string().as_bytes());
    assert!(matches!(typed, Some(Ok(QuoteBridgeError::ServiceUnavailable(_)))), "{quote:?}");
    let feed = Send::get("/webhook/user-events-cursor?sinceTimestamp=0").to(&app).await;
    assert_eq!(recorder.last().map(|c| c.operation), Some(ListUserEvents::ID));
    let typed = ListUserEventsError::from_response(feed.status, feed.body.to_string().as_bytes());
    assert!(matches!(typed, Some(Ok(ListUserEventsError::ServiceUnavailable(_)))), "{feed:?}");
}

/// A path with an empty segment matches no route, as production answers: every path parameter of every
/// operation (from `every_operation!`), emptied in turn, gives 404 with an empty body, before authentication
/// (no credential is sent either), and no handler is called.
#[tokio::test]
async fn an_empty_path_segment_matches_no_route() {
    let (app, recorder) = app(ServerConfig::default());
    let mut tried = 0;
    macro_rules! each {
        ($op:ident, $id:literal) => {
            let template = <$op as Operation>::PATH;
            let names: Vec<&str> =
                template.split('/').filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))).collect();
            for emptied in &names {
                let mut path = template.to_owned();
                for name in &names {
                    let value = if name == emptied { "" } else { "x1" };
                    path = path.replace(&format!("{{{name}}}"), value);
                }
                let uri = Box::leak(format!("{path}?a=1").into_boxed_str());
                let answer = Send::json(<$op as Operation>::METHOD, uri, "{}").without_auth().to(&app).await;
                assert_eq!(
                    (answer.status, &answer.body),
                    (404, &Value::Null),
                    "{} {uri} ({})",
                    <$op as Operation>::METHOD,
                    $id
                );
                tried += 1;
            }
        };
    }
    bridge_contract::every_operation!(each);
    assert!(tried >= 6, "the document has operations with path parameters ({tried} tried)");
    assert!(recorder.last().is_none(), "no handler was called");
    for path in ["/bridge//history/bridge/b1", "//bridge/history/bridge/b1"] {
        assert_eq!(Send::get(path).to(&app).await.status, 404, "{path}");
    }
    assert!(!bridge_server::serve::has_empty_segment("/bridge/history/bridge/b1"));
}

/// The sandbox helpers are a trait and a router of their own: `router` over a `BridgeApi` answers every operation
/// tagged `sandbox` 404 with an empty body (as production does), and once `sandbox_router` is merged in each reaches
/// its `SandboxApi` method, whose panic is answered 503 like any other.
#[tokio::test]
async fn sandbox_helpers_are_served_only_by_the_sandbox_router() {
    let doc = bridge_contract::openapi::document();
    let mut helpers = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op["tags"].as_array().is_some_and(|tags| tags.iter().any(|t| t == "sandbox")) {
                let id = op["operationId"].as_str().unwrap().to_owned();
                let uri = path.replace(['{', '}'], "");
                let methods: Vec<String> = item.as_object().unwrap().keys().map(|m| m.to_uppercase()).collect();
                helpers.push((method.to_uppercase(), uri, id, methods));
            }
        }
    }
    assert_eq!(helpers.len(), 14, "the 14 sandbox helpers of the schema: {helpers:?}");
    let production = common::production_app(common::Recorder::default(), ServerConfig::default());
    let (sandbox, recorder) =
        common::app_over(common::Recorder { panics: true, ..Default::default() }, ServerConfig::default());
    for (method, uri, id, methods) in &helpers {
        let answer = Send::json(method, uri, "{}").to(&production).await;
        assert_eq!((answer.status, &answer.body), (404, &Value::Null), "{method} {uri} on a production router");
        let answer = Send::json(method, uri, "{}").to(&sandbox).await;
        assert_ne!(answer.status, 404, "{method} {uri} with the sandbox router merged in");
        if answer.status == 503 {
            assert_eq!(recorder.last().map(|c| c.operation), Some(id.as_str()), "{method} {uri} reached its method");
        }
        // A method the path does not have (`/sandbox/faults` has GET, PUT and DELETE).
        let wrong_method = ["GET", "DELETE", "PATCH"].into_iter().find(|m| !methods.iter().any(|h| h == m)).unwrap();
        let answer = Send::json(wrong_method, uri, "{}").to(&sandbox).await;
        assert_eq!((answer.status, &answer.body), (404, &Value::Null), "{wrong_method} {uri}");
    }
    assert!(recorder.calls.lock().unwrap().len() >= 2, "valid helper requests reach their methods");
}
