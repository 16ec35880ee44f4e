//! The client against a tiny in-test server on 127.0.0.1: pagers, credentials, typed and untyped errors.
// `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote and stays under test.
#![allow(deprecated)]

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bridge_client::webhook::WebhookSigner;
use bridge_client::{Client, Credentials, Error, Event, RetryPolicy, TokenError};
use bridge_contract::operations::{ListUserEventsError, QuoteBridgeError, QuoteBridgeSwapError};
use bridge_contract::{
    BadRequest, DecimalNumber, HistorySortBy, ListBridgeHistoryQuery, ListUserEventsQuery, QuoteBridgeUnprocessable,
    SearchDepositAddressesQuery, SortDirection, WebhookEvent,
};
use futures_util::{StreamExt as _, TryStreamExt as _};
use serde_json::json;
use support::{json, text, Recorded};

const TOKEN_1: &str = "aaaaaaaaaaaaaaaaaaaaaaaa";
const TOKEN_2: &str = "bbbbbbbbbbbbbbbbbbbbbbbb";

fn bridge_request() -> bridge_contract::BridgeQuoteRequest {
    serde_json::from_value(json!({
        "token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100.5", "mode": "pay",
        "depositor": "0x1111", "recipient": "0x2222"
    }))
    .unwrap()
}

fn event_feed(req: &Recorded) -> support::Answer {
    let page = match req.param("pageToken") {
        None => {
            json!({ "items": [support::test_event("one"), support::created_event("0xa")], "nextPageToken": TOKEN_1 })
        }
        Some(TOKEN_1) => {
            json!({ "items": [support::future_event(), support::test_event("three")], "nextPageToken": TOKEN_2 })
        }
        Some(TOKEN_2) => json!({ "items": [support::test_event("four")], "nextPageToken": null }),
        Some(other) => {
            return json(
                400,
                json!({ "_tag": "InvalidJwt", "message": format!("unexpected token {other}") }).to_string(),
            )
        }
    };
    json(200, page.to_string())
}

#[tokio::test]
async fn the_event_feed_follows_next_page_token_until_null() {
    let server = support::serve(event_feed).await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt-1")).unwrap();

    let events: Vec<Event> = client.events_since(1_767_225_600_000).try_collect().await.unwrap();
    let tags: Vec<&str> = events.iter().map(Event::tag).collect();
    assert_eq!(tags, ["WEBHOOK_TEST", "DEPOSIT_ADDRESS_CREATED", "TELEPORT_COMPLETED", "WEBHOOK_TEST", "WEBHOOK_TEST"]);
    // The kind the contract does not know is kept, raw, and does not stop the replay.
    assert_eq!(events[2], Event::Unknown { tag: "TELEPORT_COMPLETED".into(), raw: support::future_event() });
    assert!(matches!(&events[4], Event::Known(WebhookEvent::WebhookTest(e)) if e.message == "four"));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let tokens: Vec<Option<&str>> = requests.iter().map(|r| r.param("pageToken")).collect();
    assert_eq!(tokens, [None, Some(TOKEN_1), Some(TOKEN_2)]);
    for r in &requests {
        assert_eq!(r.path, "/webhook/user-events-cursor");
        // Sent as JavaScript writes the number (no `.0`), on every page.
        assert_eq!(r.param("sinceTimestamp"), Some("1767225600000"));
        assert_eq!(r.header("authorization"), Some("Bearer jwt-1"));
        assert_eq!(r.header("x-api-key"), None);
    }
}

#[tokio::test]
async fn event_pages_resume_from_a_stored_cursor_and_keep_the_page_size() {
    let server = support::serve(event_feed).await;
    let client = Client::new(&server.base_url, Credentials::api_key("legacy-key")).unwrap();
    let query = ListUserEventsQuery {
        since_timestamp: DecimalNumber::from(42u32),
        page_token: Some(TOKEN_1.into()),
        page_size: Some(DecimalNumber::from(2u32)),
    };
    let pages: Vec<_> = client.event_pages(query).try_collect().await.unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0].next_page_token.as_deref(), Some(TOKEN_2));
    assert_eq!(pages[1].next_page_token, None);
    // A page with an unknown kind does not convert to the contract's strict page; one without does.
    assert!(bridge_contract::UserEventsPage::try_from(pages[0].clone()).is_err());
    assert_eq!(bridge_contract::UserEventsPage::try_from(pages[1].clone()).unwrap().items.len(), 1);

    for r in server.requests() {
        assert_eq!(r.param("pageSize"), Some("2"));
        assert_eq!(r.param("sinceTimestamp"), Some("42"));
        // Only the legacy key is configured: the event feed gets it, as `x-api-key`.
        assert_eq!(r.header("x-api-key"), Some("legacy-key"));
        assert_eq!(r.header("authorization"), None);
    }
}

#[tokio::test]
async fn a_pager_ends_after_the_first_error() {
    let server = support::serve(|req| match req.param("pageToken") {
        None => json(200, json!({ "items": [support::test_event("one")], "nextPageToken": TOKEN_1 }).to_string()),
        Some(_) => json(401, json!({ "_tag": "Unauthorized", "message": "token expired" }).to_string()),
    })
    .await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap();
    let mut events = client.events_since(0);
    assert_eq!(events.next().await.unwrap().unwrap().tag(), "WEBHOOK_TEST");
    match events.next().await.unwrap() {
        Err(Error::Api(ListUserEventsError::Unauthorized(e))) => {
            assert_eq!(e.message, "token expired")
        }
        other => panic!("expected the 401 Unauthorized body, got {other:?}"),
    }
    assert!(events.next().await.is_none());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn deposit_address_search_pages_repeat_the_filters() {
    let item = |addr: &str| {
        json!({ "depositChain": "ETHEREUM", "depositAddress": addr, "destinationChain": "BASE",
                "userId": "project-1", "destinationAddress": "0xdest" })
    };
    let server = support::serve(move |req| {
        let page = match req.param("pageToken") {
            None => json!({ "nextPageToken": "p2", "items": [item("0x1"), item("0x2")] }),
            Some("p2") => json!({ "nextPageToken": null, "items": [item("0x3")] }),
            Some(_) => json!({}),
        };
        json(200, page.to_string())
    })
    .await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap();
    let query = SearchDepositAddressesQuery {
        address_note: None,
        deposit_chain: Some("ETHEREUM".into()),
        destination_chain: None,
        destination_address: Some("0xdest".into()),
        page_token: None,
        page_size: Some(DecimalNumber::from(2u32)),
    };
    let found: Vec<_> = client.deposit_addresses(query).try_collect().await.unwrap();
    let addresses: Vec<&str> = found.iter().map(|i| i.deposit_address.as_str()).collect();
    assert_eq!(addresses, ["0x1", "0x2", "0x3"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/sda/deposit-addresses/search");
        assert_eq!(r.param("depositChain"), Some("ETHEREUM"));
        assert_eq!(r.param("destinationAddress"), Some("0xdest"));
        assert_eq!(r.param("pageSize"), Some("2"));
        assert_eq!(r.param("addressNote"), None);
    }
    assert_eq!(requests[1].param("pageToken"), Some("p2"));
}

#[tokio::test]
async fn history_is_read_page_by_page_until_total_items() {
    let server = support::serve(|req| {
        let page: u32 = req.param("page").unwrap().parse().unwrap();
        let items: Vec<_> = match page {
            1 => vec![support::pending_bridge("b1"), support::pending_bridge("b2")],
            2 => vec![support::pending_bridge("b3"), support::pending_bridge("b4")],
            3 => vec![support::pending_bridge("b5")],
            _ => vec![],
        };
        let items: Vec<_> = items.into_iter().map(|b| json!({ "bridge": b, "rejections": [] })).collect();
        json(200, json!({ "totalItems": 5, "items": items }).to_string())
    })
    .await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap();
    let query = ListBridgeHistoryQuery {
        page: DecimalNumber::from(1u32),
        limit: DecimalNumber::from(2u32),
        sort_by: HistorySortBy::CreatedAt,
        sort_direction: SortDirection::Desc,
        state: None,
    };
    let pages: Vec<_> = client.history_pages(query).try_collect().await.unwrap();
    assert_eq!(pages.iter().map(|p| p.items.len()).collect::<Vec<_>>(), [2, 2, 1]);
    let requests = server.requests();
    let numbers: Vec<_> = requests.iter().map(|r| r.param("page").unwrap().to_owned()).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    for r in &requests {
        assert_eq!(r.param("limit"), Some("2"));
        assert_eq!(r.param("sortBy"), Some("createdAt"));
        assert_eq!(r.param("sortDirection"), Some("desc"));
        assert_eq!(r.param("state"), None);
    }
}

#[tokio::test]
async fn documented_error_bodies_decode_to_their_types() {
    let server = support::serve(|req| match (req.path.as_str(), req.header("authorization")) {
        (_, Some("Bearer bad")) => json(400, json!({ "_tag": "InvalidJwt", "message": "jwt malformed" }).to_string()),
        ("/bridge/quote/user", _) => json(
            422,
            json!({ "_tag": "DepositLimitReached", "token": "USDC", "chain": "ETHEREUM", "payAmount": "100.5",
                    "maxDepositAmount": "50" })
            .to_string(),
        ),
        ("/bridge/quote/bridge-swap/user", _) => json(
            404,
            json!({ "_tag": "NoRouteFoundError", "tokenIn": "USDC", "tokenOut": "PEPE", "chainIn": "ETHEREUM",
                    "chainOut": "BASE" })
            .to_string(),
        ),
        _ => text(500, "unreachable"),
    })
    .await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap();
    match client.quote_bridge(&bridge_request()).await {
        Err(Error::Api(QuoteBridgeError::QuoteBridgeUnprocessable(QuoteBridgeUnprocessable::DepositLimitReached(
            e,
        )))) => {
            assert_eq!(e.max_deposit_amount.to_string(), "50");
            assert_eq!(e.pay_amount_usd, None);
        }
        other => panic!("expected DepositLimitReached, got {other:?}"),
    }
    let swap: bridge_contract::BridgeSwapQuoteRequest = serde_json::from_value(json!({
        "tokenIn": "USDC", "tokenOut": "PEPE", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "1",
        "mode": "receive", "depositor": "0x1", "recipient": "0x2"
    }))
    .unwrap();
    let err = client.quote_bridge_swap(&swap).await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(404));
    assert!(matches!(err, Error::Api(QuoteBridgeSwapError::NoRouteFoundError(ref e)) if e.token_out == "PEPE"));

    let bad = Client::new(&server.base_url, Credentials::bearer("bad")).unwrap();
    match bad.quote_bridge(&bridge_request()).await {
        Err(Error::Api(QuoteBridgeError::BadRequest(BadRequest::InvalidJwt(e)))) => {
            assert_eq!(e.message, "jwt malformed")
        }
        other => panic!("expected InvalidJwt, got {other:?}"),
    }
}

#[tokio::test]
async fn undocumented_answers_keep_status_and_raw_body() {
    let server = support::serve(|req| match req.path.as_str() {
        // An undocumented status.
        "/bridge/quote/user" => text(502, "<html>bad gateway</html>"),
        // A documented status whose body is not the documented one.
        "/bridge/quote/commit/q1" => json(422, r#"{"_tag":"Teapot","message":"short and stout"}"#),
        // A documented status whose body is not JSON.
        "/bridge/quote/commit/q2" => text(429, "slow down"),
        // A 200 whose body is not the documented success type.
        "/bridge/quote/commit/q3" => json(200, r#"{"id":"q3"}"#),
        _ => text(404, ""),
    })
    .await;
    // One attempt each (retries are tested against the sandbox in tests/it/live).
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap().with_retry(RetryPolicy::none());

    let err = client.quote_bridge(&bridge_request()).await.unwrap_err();
    let u = err.unexpected().expect("an undocumented answer");
    assert_eq!(u.status.as_u16(), 502);
    assert_eq!(u.body_text(), "<html>bad gateway</html>");
    assert_eq!(u.headers.get("content-type").unwrap(), "text/plain");
    assert_eq!(u.decode_error, None);

    for (id, status, body) in [
        ("q1", 422, r#"{"_tag":"Teapot","message":"short and stout"}"#),
        ("q2", 429, "slow down"),
        ("q3", 200, r#"{"id":"q3"}"#),
    ] {
        let err = client.commit_quote(id).await.unwrap_err();
        let u = err.unexpected().unwrap_or_else(|| panic!("{id}: {err:?}"));
        assert_eq!(u.status.as_u16(), status, "{id}");
        assert_eq!(&u.body[..], body.as_bytes(), "{id}");
        assert!(u.decode_error.is_some(), "{id}: the decode error is reported");
        assert_eq!(err.status().unwrap().as_u16(), status);
    }
    // A connection that cannot be made is a communication error.
    let nowhere = Client::new("http://127.0.0.1:9", Credentials::none()).unwrap().with_retry(RetryPolicy::none());
    assert!(matches!(nowhere.get_webhook_public_key().await, Err(Error::Communication(_))));
}

#[tokio::test]
async fn credentials_follow_each_operations_security() {
    let signer = WebhookSigner::from_pem(include_str!("../fixtures/signer_a.key.pem")).unwrap();
    let served = serde_json::to_string(&signer.served_public_key()).unwrap();
    let server = support::serve(move |req| match req.path.as_str() {
        "/webhook/public-key" => json(200, served.clone()),
        "/bridge/quote/commit/q1" => json(200, r#"{"quoteId":"q1"}"#),
        "/webhook/user-events-cursor" => json(200, r#"{"items":[],"nextPageToken":null}"#),
        _ => text(404, ""),
    })
    .await;

    // A rotating token: the provider is asked before every request that needs it.
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let provider = move || {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok::<_, TokenError>(format!("jwt-{n}")) }
    };
    let client = Client::new(&server.base_url, Credentials::token_provider(provider).with_api_key("key")).unwrap();
    let verifier = client.webhook_verifier().await.unwrap();
    assert_eq!(client.commit_quote("q1").await.unwrap().quote_id, "q1");
    assert_eq!(client.commit_quote("q1").await.unwrap().quote_id, "q1");
    let _: Vec<Event> = client.events_since(0).try_collect().await.unwrap();

    let requests = server.requests();
    let auth: Vec<_> =
        requests.iter().map(|r| (r.path.as_str(), r.header("authorization"), r.header("x-api-key"))).collect();
    assert_eq!(
        auth,
        [
            ("/webhook/public-key", None, None),
            ("/bridge/quote/commit/q1", Some("Bearer jwt-1"), None),
            ("/bridge/quote/commit/q1", Some("Bearer jwt-2"), None),
            // Both configured: the event feed gets the bearer token.
            ("/webhook/user-events-cursor", Some("Bearer jwt-3"), None),
        ]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // Every request says which interface version it was written against.
    assert!(requests.iter().all(|r| r.header("api-version") == Some("0.0.1")));

    // The fetched key verifies this signer's deliveries.
    let delivery =
        signer.signed_delivery(&json!({ "event": support::test_event("k"), "eventId": "e", "ts": 1 })).unwrap();
    verifier.verify(delivery.body.as_bytes(), &delivery.signature).unwrap();

    // Without a bearer credential, a bearer-only operation is sent without one (the service answers 401).
    let key_only = Client::new(&server.base_url, Credentials::api_key("key")).unwrap();
    key_only.commit_quote("q1").await.unwrap();
    let last = server.requests().pop().unwrap();
    assert_eq!((last.header("authorization"), last.header("x-api-key")), (None, None));
}

#[tokio::test]
async fn a_failing_token_provider_fails_the_call_before_sending() {
    let server = support::serve(|_| json(200, r#"{"quoteId":"q1"}"#)).await;
    let provider = || async { Err::<String, TokenError>("identity provider unreachable".into()) };
    let client = Client::new(&server.base_url, Credentials::token_provider(provider)).unwrap();
    match client.commit_quote("q1").await {
        Err(Error::InvalidRequest(why)) => {
            assert!(why.contains("identity provider unreachable"), "{why}")
        }
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn sandbox_operations_on_a_server_without_them_are_unexpected_404s() {
    let server = support::serve(|_| text(404, "")).await;
    let client = Client::new(&server.base_url, Credentials::bearer("jwt")).unwrap();
    let request =
        bridge_contract::SandboxWebhookTestRequest { webhook_url: "http://127.0.0.1:1/hook".into(), message: None };
    let err = client.sandbox_send_webhook_test(&request).await.unwrap_err();
    assert_eq!(err.unexpected().map(|u| u.status.as_u16()), Some(404));
}
