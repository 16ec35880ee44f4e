//! Event kinds newer than this build in the event feed: kept raw by every path of the client (progenitor's raw
//! method, the typed method, the pager, the wait), while the contract's own page type stays exact; a known kind
//! whose members do not match the contract is still an error.

use std::time::Duration;

use bridge_client::{BridgeRecordExt as _, Event, Until};
use bridge_contract::{
    DecimalNumber, ListUserEventsQuery, SandboxBridgeDepositRequest, StateExecutedState, UserEventsPage,
};
use futures_util::TryStreamExt as _;
use serde_json::{json, Value};

use crate::live::harness::{advance, client_via, quick_retries, quote, Fault, Proxy, Sandbox};

const FEED: &str = "/webhook/user-events-cursor";

fn newer_event() -> Value {
    json!({ "_tag": "BRIDGE_TELEPORTED", "_id": "someone-else", "destination": "MARS", "eta": 1e21 })
}

/// Puts [`newer_event`] second in every page.
fn with_newer_kind() -> Fault {
    Fault::rewrite(|page| {
        if let Some(items) = page.get_mut("items").and_then(Value::as_array_mut) {
            let at = items.len().min(1);
            items.insert(at, newer_event());
        }
    })
}

fn query() -> ListUserEventsQuery {
    ListUserEventsQuery {
        since_timestamp: DecimalNumber::from(0u32),
        page_token: None,
        page_size: Some(DecimalNumber::from(50u32)),
    }
}

#[tokio::test]
async fn a_newer_event_kind_is_kept_raw_by_every_path() {
    let sandbox = Sandbox::start().await;
    for _ in 0..2 {
        let quote = quote(&sandbox).await;
        sandbox.client().commit_quote(&quote.quote_id).await.unwrap();
    }
    let known: Vec<Event> = sandbox.client().events_since(0).try_collect().await.unwrap();
    assert_eq!(known.len(), 2);
    let mut expected = known.clone();
    expected.insert(1, Event::Unknown { tag: "BRIDGE_TELEPORTED".into(), raw: newer_event() });

    let proxy = Proxy::start(sandbox.addr).await;
    proxy.inject("GET", FEED, 1000, with_newer_kind());
    let client = client_via(&proxy, &sandbox, quick_retries());

    // progenitor's method.
    let since = DecimalNumber::from(0u32);
    let raw = client.raw().list_user_events(None, None, &since).await.expect("the raw method decodes the page");
    assert_eq!(raw.into_inner().items, expected);
    // The typed method.
    assert_eq!(client.list_user_events(&query()).await.unwrap().items, expected);
    // The pager.
    let all: Vec<Event> = client.events_since(0).try_collect().await.unwrap();
    assert_eq!(all, expected);
    // The contract's page type is closed: the same body does not decode as `UserEventsPage`.
    let body = reqwest::Client::new()
        .get(format!("{}{FEED}?sinceTimestamp=0", proxy.base_url))
        .bearer_auth(sandbox.token())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let strict = serde_json::from_slice::<UserEventsPage>(&body).unwrap_err().to_string();
    assert!(strict.contains("BRIDGE_TELEPORTED"), "{strict}");

    // The wait reads the feed (its record only when the feed says so): it still sees the bridge executed.
    let quote = quote(&sandbox).await;
    let id = sandbox.client().commit_quote(&quote.quote_id).await.unwrap().quote_id;
    let policy = bridge_client::WaitPolicy::default()
        .with_feed_interval(Duration::from_millis(50))
        .with_poll_initial(Duration::from_secs(3600));
    let waiting = tokio::spawn({
        let client = client.clone().with_wait_policy(policy);
        let id = id.clone();
        async move { client.wait_for_bridge(&id, Until::Final, Duration::from_secs(20)).await }
    });
    crate::live::harness::eventually("the wait to read the feed", || async {
        (proxy.seen_at("GET", FEED).len() > 4).then_some(())
    })
    .await;
    sandbox
        .client()
        .sandbox_deposit_bridge(&id, &SandboxBridgeDepositRequest { tx_hash: None, outcome: None })
        .await
        .unwrap();
    advance(&sandbox, 3_600_000).await;
    let record = waiting.await.unwrap().expect("the feed with a newer kind still drives the wait");
    assert_eq!(record.state_tag(), StateExecutedState::Executed.as_str());
}

#[tokio::test]
async fn a_known_kind_whose_members_do_not_match_the_contract_fails_the_page() {
    let sandbox = Sandbox::start().await;
    let quote = quote(&sandbox).await;
    sandbox.client().commit_quote(&quote.quote_id).await.unwrap();
    let proxy = Proxy::start(sandbox.addr).await;
    // The first event with one of its string members (other than the tags) turned into a number: a known kind
    // whose members do not match the contract.
    proxy.inject(
        "GET",
        FEED,
        1000,
        Fault::rewrite(|page| {
            let first = page.pointer_mut("/items/0").and_then(Value::as_object_mut).expect("an event");
            let (_, member) = first
                .iter_mut()
                .find(|(name, value)| value.is_string() && !["_tag", "type"].contains(&name.as_str()))
                .expect("a string member");
            *member = json!(100);
        }),
    );
    let client = client_via(&proxy, &sandbox, quick_retries());
    let err = client.list_user_events(&query()).await.unwrap_err();
    let unexpected = err.unexpected().expect("an answer that does not match the contract");
    assert_eq!(unexpected.status.as_u16(), 200);
    assert!(!unexpected.decode_error.as_deref().unwrap_or_default().is_empty(), "{unexpected:?}");
    assert!(err.to_string().starts_with("listUserEvents (GET /webhook/user-events-cursor) failed: "), "{err}");
    assert!(client.events_since(0).try_collect::<Vec<_>>().await.is_err());
    // Not retried: a body that does not decode is not a transient failure.
    assert_eq!(proxy.seen_at("GET", FEED).len(), 2);
}
