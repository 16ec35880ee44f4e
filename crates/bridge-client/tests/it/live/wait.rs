//! Waiting for a bridge: the event feed tells when to read it, polling covers the rest, the stream yields each
//! change once, and the wait ends at a final state or the one asked for.

use std::time::Duration;

use bridge_client::{BridgeRecordExt as _, Client, Until, WaitError, WaitPolicy};
use bridge_contract::{
    BridgeState, SandboxBridgeDepositRequest, StateCancelledState, StateExecutedState, StatePendingConfirmationState,
    StatePendingState,
};
use futures_util::StreamExt as _;

use crate::live::harness::{advance, client_via, eventually, quick_retries, quote, Proxy, Sandbox};

const FEED: &str = "/webhook/user-events-cursor";
const BRIDGE: &str = "/bridge/history/bridge/";
const HOUR_MS: u64 = 3_600_000;

async fn committed(sandbox: &Sandbox) -> String {
    let quote = quote(sandbox).await;
    sandbox.client().commit_quote(&quote.quote_id).await.unwrap().quote_id
}

async fn deposit(sandbox: &Sandbox, id: &str) {
    let request = SandboxBridgeDepositRequest { tx_hash: None, outcome: None };
    sandbox.client().sandbox_deposit_bridge(id, &request).await.unwrap();
}

/// Reads of the record only when the feed says so (the fallback poll is an hour away).
fn feed_only() -> WaitPolicy {
    WaitPolicy::default().with_feed_interval(Duration::from_millis(50)).with_poll_initial(Duration::from_secs(3600))
}

fn spawn_wait(
    client: Client,
    id: &str,
    until: Until,
    timeout: Duration,
) -> tokio::task::JoinHandle<Result<bridge_contract::BridgeRecord, WaitError>> {
    let id = id.to_owned();
    tokio::spawn(async move { client.wait_for_bridge(&id, until, timeout).await })
}

#[tokio::test]
async fn the_event_feed_tells_the_wait_when_to_read_the_bridge() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let id = committed(&sandbox).await;

    let client = client_via(&proxy, &sandbox, quick_retries()).with_wait_policy(feed_only());
    let waiting = spawn_wait(client, &id, Until::Final, Duration::from_secs(20));
    eventually("the wait to read the feed", || async { (!proxy.seen_at("GET", FEED).is_empty()).then_some(()) }).await;
    deposit(&sandbox, &id).await;
    advance(&sandbox, HOUR_MS).await;

    let record = waiting.await.unwrap().expect("the feed's BRIDGE_EXECUTED ends the wait");
    assert_eq!(record.state_tag(), StateExecutedState::Executed.as_str());
    // The record was read at the start and after the feed's events about it, not on a schedule.
    let reads = proxy.seen_at("GET", BRIDGE).len();
    assert!((2..=5).contains(&reads), "{reads} reads of the bridge");

    // Without the feed, the same wait (polling an hour apart) does not see it in time.
    let id = committed(&sandbox).await;
    let client = client_via(&proxy, &sandbox, quick_retries()).with_wait_policy(feed_only().without_feed());
    let waiting = spawn_wait(client, &id, Until::Final, Duration::from_millis(1500));
    eventually("the first read", || async {
        (!proxy.seen_at("GET", &format!("{BRIDGE}{id}")).is_empty()).then_some(())
    })
    .await;
    deposit(&sandbox, &id).await;
    advance(&sandbox, HOUR_MS).await;
    match waiting.await.unwrap() {
        Err(WaitError::TimedOut { last: Some(last), .. }) => {
            assert_eq!(last.state_tag(), StatePendingState::Pending.as_str())
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn without_the_feed_the_bridge_is_polled_with_backoff() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let id = committed(&sandbox).await;
    let policy = WaitPolicy::default()
        .without_feed()
        .with_poll_initial(Duration::from_millis(20))
        .with_poll_max(Duration::from_millis(200));
    let client = client_via(&proxy, &sandbox, quick_retries()).with_wait_policy(policy);
    let waiting = spawn_wait(client, &id, Until::Final, Duration::from_secs(20));
    deposit(&sandbox, &id).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    advance(&sandbox, HOUR_MS).await;
    let record = waiting.await.unwrap().unwrap();
    assert_eq!(record.state_tag(), StateExecutedState::Executed.as_str());
    assert!(proxy.seen_at("GET", FEED).is_empty());
    // 20, 40, 80, 160, 200 ms (each plus jitter) between reads while nothing changes: a handful, not dozens.
    let reads = proxy.seen_at("GET", BRIDGE);
    assert!(reads.len() >= 3 && reads.len() <= 15, "{} reads", reads.len());
}

#[tokio::test]
async fn the_stream_yields_each_state_once_in_order_and_ends_at_a_final_state() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let id = committed(&sandbox).await;
    let policy = WaitPolicy::default()
        .with_feed_interval(Duration::from_millis(50))
        .with_poll_initial(Duration::from_millis(20))
        .with_poll_max(Duration::from_millis(100));
    let client = client_via(&proxy, &sandbox, quick_retries()).with_wait_policy(policy);

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let follower = tokio::spawn({
        let id = id.clone();
        async move {
            let mut states = client.bridge_states(&id);
            while let Some(record) = states.next().await {
                tx.send(record.unwrap().state_tag()).unwrap();
            }
        }
    });
    assert_eq!(rx.recv().await, Some(StatePendingState::Pending.as_str()));
    deposit(&sandbox, &id).await;
    assert_eq!(rx.recv().await, Some(StatePendingConfirmationState::PendingConfirmation.as_str()));
    // Then minute by minute until it is done.
    let mut seen =
        vec![StatePendingState::Pending.as_str(), StatePendingConfirmationState::PendingConfirmation.as_str()];
    for _ in 0..120 {
        advance(&sandbox, 60_000).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        while let Ok(tag) = rx.try_recv() {
            seen.push(tag);
        }
        if seen.last() == Some(&StateExecutedState::Executed.as_str()) {
            break;
        }
    }
    tokio::time::timeout(Duration::from_secs(5), follower).await.expect("the stream ends after EXECUTED").unwrap();
    while let Ok(tag) = rx.try_recv() {
        seen.push(tag);
    }
    // Each state once, in the lifecycle's order (the order of the contract's `BridgeState` tags).
    let order: Vec<usize> = seen.iter().map(|t| BridgeState::TAGS.iter().position(|s| s == t).unwrap()).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&StateExecutedState::Executed.as_str()), "{seen:?}");
}

#[tokio::test]
async fn the_wait_ends_at_the_state_asked_for_or_a_final_one() {
    let sandbox = Sandbox::start().await;
    let policy = WaitPolicy::default()
        .with_feed_interval(Duration::from_millis(50))
        .with_poll_initial(Duration::from_millis(20))
        .with_poll_max(Duration::from_millis(100));
    let client = sandbox.client().with_retry(quick_retries()).with_wait_policy(policy);

    // A state on the way.
    let id = committed(&sandbox).await;
    let waiting = spawn_wait(
        client.clone(),
        &id,
        Until::State(StatePendingConfirmationState::PendingConfirmation.as_str()),
        Duration::from_secs(20),
    );
    deposit(&sandbox, &id).await;
    let record = waiting.await.unwrap().unwrap();
    assert_eq!(record.state_tag(), StatePendingConfirmationState::PendingConfirmation.as_str());
    let by_predicate =
        client.wait_for_bridge(&id, Until::Matches(|r| r.bridge_id().len() > 1), Duration::from_secs(5)).await.unwrap();
    assert_eq!(by_predicate.bridge_id(), id);

    // A final state other than the one asked for ends the wait too: the quote expires without a deposit.
    let id = committed(&sandbox).await;
    let waiting =
        spawn_wait(client.clone(), &id, Until::State(StateExecutedState::Executed.as_str()), Duration::from_secs(20));
    advance(&sandbox, HOUR_MS).await;
    let record = waiting.await.unwrap().unwrap();
    assert_eq!(record.state_tag(), StateCancelledState::Cancelled.as_str());
    assert!(record.is_final());

    // A state no record has, and a bridge that does not exist.
    assert!(matches!(
        client.wait_for_bridge(&id, Until::State("TELEPORTED"), Duration::from_secs(1)).await,
        Err(WaitError::UnknownState("TELEPORTED"))
    ));
    match client.wait_for_bridge("no-such-bridge", Until::Final, Duration::from_secs(5)).await {
        Err(WaitError::GetBridge(e)) => assert_eq!(e.status().map(|s| s.as_u16()), Some(422)),
        other => panic!("expected InvalidRequest (an unknown bridge id), got {other:?}"),
    }
}
