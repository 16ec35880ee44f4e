//! Retention (`serve --retain`): what the purge deletes and what it never deletes, on both stores.
//!
//! * In the store, exactly: two generations of rows (quotes, bridges in generated states, deposits, events with
//!   deliveries delivered, given up and pending, delivery attempts) are written on either side of a horizon read
//!   from the store's clock, with a few old rows changed in the second generation; a purge to that horizon, in
//!   batches of two, must delete exactly the rows the retention lets go (older than the horizon, and ended: a
//!   bridge under way, an event whose delivery is pending and that delivery's attempts are kept) and nothing
//!   else; the feed keeps its order, and a read after any purged position answers the events still kept after
//!   it. On PostgreSQL, two store handles (two instances) purge at once and delete each row once.
//! * Over HTTP on 127.0.0.1, a sandbox served with a retention of 2 s (a pass every 100 ms): old quotes, ended
//!   bridges, events and attempts go, a bridge under way stays, every row younger than the retention at the time
//!   it is read is there, a page token of a purged position answers the first page still kept, and `/metrics`
//!   counts what was purged.
#![allow(deprecated)] // `POST /bridge/quote/user`: the spec's single-token quote.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bridge_client::Client;
use bridge_contract::operations::{CommitQuoteError, GetBridgeError};
use bridge_contract::{
    BridgeQuoteRequest, BridgeRecord, CancelBridgeRequest, CancelBridgeRequestState, LastBridge, QuoteMode,
    QuoteResponse, SandboxListWebhookDeliveriesQuery, WebhookEvent, WebhookTestEvent,
};
use bridge_sandbox::clock::ProjectClock;
use bridge_sandbox::store::{
    AttemptOutcome, DeliveryClaim, NewEvent, PurgeBatch, PurgeCounts, PurgeTable, Store, StoredBridge, StoredDeposit,
    StoredQuote,
};
use bridge_sandbox::{Retention, ServeOptions};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::support::{
    advance, both_stores, commit, feed_query, pay, quote_request, send_test_event, state_of, wait_for, Running,
    TestStore,
};

const PROJECT: &str = "retention";
const CHAIN: &str = "ETHEREUM";
const ADDRESS: &str = "0xretention";
const HOOK: &str = "http://127.0.0.1:9/hook";

/// One value of `strategy`, from the test's deterministic runner.
fn pick<S: Strategy>(runner: &mut TestRunner, strategy: S) -> S::Value {
    strategy.new_tree(runner).unwrap().current()
}

/// What became of a delivery when a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Delivered,
    GivenUp,
    /// Failed; the next attempt is due far ahead (still pending).
    Retrying,
}

/// What was written, and in which generation (`old`: before the horizon).
#[derive(Default)]
struct Model {
    quotes: Vec<(String, bool)>,
    /// Each bridge as last saved, and whether that save was old.
    bridges: BTreeMap<String, (StoredBridge, bool)>,
    /// Each deposit: its transaction hash, its bridge, whether it is old.
    deposits: Vec<(String, Option<String>, bool)>,
    /// Events in the order they were appended (feed order): id, old, delivery (if it has a `webhookUrl`).
    events: Vec<(String, bool, Option<Fate>)>,
    /// Attempts: (event id, attempt number), old.
    attempts: Vec<((String, u64), bool)>,
    serial: u64,
}

impl Model {
    fn next(&mut self, what: &str) -> String {
        self.serial += 1;
        format!("{what}-{}", self.serial)
    }

    fn event(&mut self, old: bool, delivered: bool) -> NewEvent {
        let id = self.next("event");
        self.events.push((id.clone(), old, delivered.then_some(Fate::Retrying)));
        NewEvent {
            id: id.clone(),
            project: PROJECT.into(),
            created_ms: 1_000,
            event: WebhookTestEvent::new(id).into(),
            webhook_url: delivered.then(|| HOOK.to_owned()),
        }
    }

    fn bridge_purged(&self, id: &str) -> bool {
        let (bridge, old) = &self.bridges[id];
        *old && bridge.has_ended()
    }

    fn fate(&self, event: &str) -> Option<Fate> {
        self.events.iter().find(|(id, ..)| id == event).and_then(|(_, _, fate)| *fate)
    }

    /// Whether the purge lets an event go: old, and no delivery of it is pending.
    fn event_purged(&self, (_, old, fate): &(String, bool, Option<Fate>)) -> bool {
        *old && *fate != Some(Fate::Retrying)
    }

    fn expected(&self) -> PurgeCounts {
        PurgeCounts {
            quotes: self.quotes.iter().filter(|(_, old)| *old).count() as u64,
            bridges: self.bridges.keys().filter(|id| self.bridge_purged(id)).count() as u64,
            deposits: self
                .deposits
                .iter()
                .filter(|(_, bridge, old)| match bridge {
                    Some(bridge) => self.bridge_purged(bridge),
                    None => *old,
                })
                .count() as u64,
            events: self.events.iter().filter(|e| self.event_purged(e)).count() as u64,
            webhook_deliveries: self.events.iter().filter(|e| self.event_purged(e) && e.2.is_some()).count() as u64,
            webhook_attempts: self
                .attempts
                .iter()
                .filter(|((event, _), old)| *old && self.fate(event) != Some(Fate::Retrying))
                .count() as u64,
        }
    }

    /// Everything the purge lets go is gone: old rows are young from now on (a purge to a later horizon).
    fn purged(&mut self) {
        let gone = |keep: bool, old: &mut bool| keep || !std::mem::replace(old, false);
        let bridges: BTreeSet<String> = self.bridges.keys().filter(|id| self.bridge_purged(id)).cloned().collect();
        let events: BTreeSet<String> =
            self.events.iter().filter(|e| self.event_purged(e)).map(|(id, ..)| id.clone()).collect();
        let retrying: BTreeSet<String> =
            self.events.iter().filter(|(.., fate)| *fate == Some(Fate::Retrying)).map(|(id, ..)| id.clone()).collect();
        self.quotes.retain_mut(|(_, old)| gone(false, old));
        self.bridges.retain(|id, _| !bridges.contains(id));
        self.deposits.retain_mut(|(_, bridge, old)| match bridge {
            Some(bridge) => !bridges.contains(bridge),
            None => gone(false, old),
        });
        self.events.retain(|(id, ..)| !events.contains(id));
        self.attempts.retain_mut(|((event, _), old)| gone(retrying.contains(event), old));
    }
}

/// Writes a generation of rows: quotes (half committed, into bridges in generated states), deposits with and
/// without a bridge, events with and without deliveries; then takes every due delivery and decides its fate. In
/// the second generation (`!old`), some old bridges are saved again, and some old pending deliveries are resent
/// and delivered.
async fn generation(store: &dyn Store, runner: &mut TestRunner, model: &mut Model, old: bool) {
    for _ in 0..10 {
        let id = model.next("quote");
        let quote = StoredQuote {
            id: id.clone(),
            project: PROJECT.into(),
            response: pick(runner, any::<QuoteResponse>()),
            mode: QuoteMode::Pay,
            created_ms: 1_000,
            expires_ms: 2_000,
            committed: false,
        };
        store.insert_quote(&quote).await.unwrap();
        model.quotes.push((id.clone(), old));
        if pick(runner, any::<bool>()) {
            let bridge = bridge(runner, model);
            let event = model.event(old, pick(runner, any::<bool>()));
            assert!(store.commit_quote(&id, &bridge, &[event]).await.unwrap());
            model.bridges.insert(bridge.id.clone(), (bridge, old));
        }
    }
    for bridged in [true, true, false, false] {
        let mut last_bridge = pick(runner, any::<LastBridge>());
        last_bridge.deposit_tx_hash = model.next("tx");
        let bridge = bridged.then(|| bridge(runner, model));
        let deposit =
            StoredDeposit { last_bridge: last_bridge.clone(), bridge_id: bridge.as_ref().map(|b| b.id.clone()) };
        let event = model.event(old, true);
        store.add_deposit(CHAIN, ADDRESS, &deposit, bridge.as_ref(), &[event]).await.unwrap();
        model.deposits.push((last_bridge.deposit_tx_hash, deposit.bridge_id, old));
        if let Some(bridge) = bridge {
            model.bridges.insert(bridge.id.clone(), (bridge, old));
        }
    }
    let events: Vec<NewEvent> = (0..4).map(|k| model.event(old, k % 2 == 0)).collect();
    store.append_events(&events).await.unwrap();
    if !old {
        let saved_again: Vec<String> =
            model.bridges.iter().filter(|(_, (_, o))| *o).map(|(id, _)| id.clone()).collect();
        for id in saved_again.into_iter().step_by(3) {
            let mut bridge = store.bridge(PROJECT, &id).await.unwrap().expect("an old bridge");
            bridge.next_ms = None;
            assert!(store.save_bridge(&bridge, &[]).await.unwrap());
            model.bridges.insert(id, (bridge, false));
        }
        let pending: Vec<String> = model
            .events
            .iter()
            .filter(|(_, o, fate)| *o && *fate == Some(Fate::Retrying))
            .map(|(id, ..)| id.clone())
            .step_by(2)
            .collect();
        for id in pending {
            assert_eq!(store.resend_deliveries(PROJECT, &id, 0).await.unwrap(), 1);
        }
    }
    deliver(store, runner, model, old).await;
}

/// A bridge of a generated record in a generated state, with a lifecycle step due or not.
fn bridge(runner: &mut TestRunner, model: &mut Model) -> StoredBridge {
    let record = pick(runner, any::<BridgeRecord>());
    let mut bridge = StoredBridge::new(PROJECT, record, 1_000, Some(HOOK.into()));
    bridge.id = model.next("bridge");
    bridge.next_ms = pick(runner, prop_oneof![Just(None), Just(Some(i64::MAX / 2))]);
    bridge
}

/// Takes every due delivery and records an attempt of it: delivered, given up, or failed with the next attempt far
/// ahead (pending). A resent delivery is always delivered.
async fn deliver(store: &dyn Store, runner: &mut TestRunner, model: &mut Model, old: bool) {
    let wall = bridge_sandbox::clock::wall_ms();
    let claim = DeliveryClaim {
        base_ms: 0,
        wall_ms: wall,
        lease_until_wall_ms: wall + 60_000,
        limit: 1_000,
        per_url: 1_000,
        busy: Default::default(),
    };
    for due in store.take_due_deliveries(&claim).await.unwrap() {
        let resent = due.attempt > 1;
        let fate = match resent {
            true => Fate::Delivered,
            false => pick(runner, prop_oneof![Just(Fate::Delivered), Just(Fate::GivenUp), Just(Fate::Retrying)]),
        };
        let outcome = AttemptOutcome {
            at_ms: 1_000,
            status: Some(if fate == Fate::Delivered { 200 } else { 500 }),
            error: None,
            delivered: fate == Fate::Delivered,
            next_ms: (fate == Fate::Retrying).then_some(i64::MAX / 2),
            latency_ms: Some(1),
            body_start: None,
            fault: None,
        };
        store.record_attempt(&due, &outcome).await.unwrap();
        let event = model.events.iter_mut().find(|(id, ..)| *id == due.event_id).expect("a delivery of a known event");
        event.2 = Some(fate);
        model.attempts.push(((due.event_id.clone(), due.attempt as u64), old));
    }
}

/// The project's feed, whole: (position, event id), in order, read from after `after`.
async fn feed(store: &dyn Store, after: i64) -> Vec<(i64, String)> {
    let (mut after, mut seen) = (after, Vec::new());
    loop {
        let page = store.events(PROJECT, i64::MIN, after, 3).await.unwrap();
        let Some((last, _)) = page.last() else { return seen };
        after = *last;
        for (position, event) in page {
            match event.decode().unwrap() {
                WebhookEvent::WebhookTest(e) => seen.push((position, e.message)),
                other => panic!("not a test event: {other:?}"),
            }
        }
    }
}

/// Purges everything older than `horizon_ms` with each of `stores` at once (instances of one database; each
/// batch of two rows), until each of them finds nothing left; what they deleted, summed.
async fn purge(stores: &[Arc<dyn Store>], horizon_ms: i64) -> PurgeCounts {
    let mut tasks = Vec::new();
    for store in stores {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut total = PurgeCounts::default();
            for table in PurgeTable::ALL {
                let mut after = 0;
                loop {
                    match store.purge(&PurgeBatch { table, horizon_ms, after, limit: 2 }).await.unwrap() {
                        None => tokio::time::sleep(Duration::from_millis(1)).await, // the other's batch
                        Some(purged) => {
                            total.add(&purged.counts);
                            match purged.next {
                                Some(next) => after = next,
                                None => break,
                            }
                        }
                    }
                }
            }
            total
        }));
    }
    let mut total = PurgeCounts::default();
    for task in tasks {
        total.add(&task.await.unwrap());
    }
    total
}

/// The store holds exactly what `model` says is left.
async fn holds_what_is_left(store: &dyn Store, model: &Model, before: &[(i64, String)]) {
    for (id, _) in &model.quotes {
        assert!(store.quote(PROJECT, id).await.unwrap().is_some(), "quote {id} is kept");
    }
    for id in model.bridges.keys() {
        assert!(store.bridge(PROJECT, id).await.unwrap().is_some(), "bridge {id} is kept");
    }
    let deposits: BTreeSet<String> = store
        .deposits(CHAIN, ADDRESS, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.last_bridge.deposit_tx_hash)
        .collect();
    let expected: BTreeSet<String> = model.deposits.iter().map(|(tx, ..)| tx.clone()).collect();
    assert_eq!(deposits, expected, "the deposits kept");
    // The feed: the events kept, in the order they had; a read after any position, purged or not, answers the
    // events kept after it.
    let kept: BTreeSet<&String> = model.events.iter().map(|(id, ..)| id).collect();
    let remaining: Vec<(i64, String)> = before.iter().filter(|(_, id)| kept.contains(id)).cloned().collect();
    assert_eq!(feed(store, 0).await, remaining, "the feed keeps the events kept, in order");
    for (position, _) in before {
        let after: Vec<(i64, String)> = remaining.iter().filter(|(p, _)| p > position).cloned().collect();
        assert_eq!(feed(store, *position).await, after, "a read after position {position}");
    }
    let attempts: BTreeSet<(String, u64)> = store
        .delivery_attempts(PROJECT, None, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.event_id, a.attempt))
        .collect();
    let expected: BTreeSet<(String, u64)> = model.attempts.iter().map(|(a, _)| a.clone()).collect();
    assert_eq!(attempts, expected, "the delivery attempts kept");
}

async fn a_purge_deletes_exactly_what_is_older_than_its_horizon_and_ended(store: TestStore) {
    let handles: Vec<Arc<dyn Store>> = match store.is_shared() {
        true => vec![store.open().await, store.open().await],
        false => vec![store.open().await],
    };
    let db = handles[0].clone();
    // Every delivery is due on the project's clock.
    db.project_clock(PROJECT, &ProjectClock { value: 1_000_000, floor: 0, generation: 0 }).await.unwrap();
    let mut runner = TestRunner::deterministic();
    let mut model = Model::default();
    generation(&*db, &mut runner, &mut model, true).await;
    // The horizon, on the store's clock, strictly between the generations (its clock counts milliseconds).
    tokio::time::sleep(Duration::from_millis(5)).await;
    let horizon = db.wall_ms().await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    generation(&*db, &mut runner, &mut model, false).await;
    let expected = model.expected();
    assert!(
        [expected.quotes, expected.bridges, expected.deposits, expected.events, expected.webhook_deliveries]
            .into_iter()
            .chain([expected.webhook_attempts])
            .all(|n| n > 0),
        "the generations leave something to purge: {expected:?}"
    );
    let backlog = db.retention_backlog().await.unwrap();
    assert!(backlog.oldest_ms.is_some_and(|oldest| oldest < horizon), "the old rows are the backlog: {backlog:?}");

    let before = feed(&*db, 0).await;
    assert_eq!(before.len(), model.events.len());
    let purged = purge(&handles, horizon).await;
    assert_eq!(purged, expected, "what a purge to the horizon deletes");
    model.purged();
    holds_what_is_left(&*db, &model, &before).await;
    let backlog = db.retention_backlog().await.unwrap();
    assert!(backlog.oldest_ms.is_none_or(|oldest| oldest >= horizon), "nothing older is left: {backlog:?}");
    assert_eq!(backlog.lag_ms(backlog.now_ms - horizon), 0);

    // Then a purge of everything up to now: only what is under way is left (bridges whose lifecycle goes on, their
    // deposits, events whose delivery is pending and that delivery's attempts).
    tokio::time::sleep(Duration::from_millis(5)).await;
    let now = db.wall_ms().await.unwrap();
    let before = feed(&*db, 0).await;
    for (_, old) in model.bridges.values_mut() {
        *old = true;
    }
    for event in &mut model.events {
        event.1 = true;
    }
    for (_, old) in &mut model.attempts {
        *old = true;
    }
    for (_, old) in &mut model.quotes {
        *old = true;
    }
    for (_, _, old) in &mut model.deposits {
        *old = true;
    }
    let expected = model.expected();
    assert_eq!(purge(&handles, now).await, expected, "what a purge to now deletes");
    model.purged();
    holds_what_is_left(&*db, &model, &before).await;
    assert!(model.bridges.values().all(|(b, _)| !b.has_ended()), "only bridges under way are left");
    assert!(model.events.iter().all(|(.., fate)| *fate == Some(Fate::Retrying)), "only pending deliveries' events");
    assert_eq!(db.retention_backlog().await.unwrap().oldest_ms, None, "nothing is left to purge");
}

both_stores!(a_purge_deletes_exactly_what_is_older_than_its_horizon_and_ended);

/// A webhook receiver on 127.0.0.1 that answers 200: how many deliveries it took, and its URL.
async fn receiver() -> (Arc<AtomicUsize>, String) {
    let received = Arc::new(AtomicUsize::new(0));
    let counted = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { axum::http::StatusCode::OK }
        }),
    );
    (received, format!("http://{}/hook", crate::support::serve_locally(app).await))
}

/// A quote of [`crate::support::quote_request`] with `url` as its `webhookUrl`.
async fn quote(client: &Client, url: &str) -> QuoteResponse {
    client.quote_bridge(&BridgeQuoteRequest { webhook_url: Some(url.to_owned()), ..quote_request() }).await.unwrap()
}

/// A committed bridge (its `webhookUrl` `url`) paid and moved on until EXECUTED; its id.
async fn executed(client: &Client, url: &str) -> String {
    let id = commit(client, quote(client, url).await).await;
    pay(client, &id, None).await;
    for _ in 0..4 {
        advance(client, 60_000).await;
    }
    assert_eq!(state_of(&client.get_bridge(&id).await.unwrap()), "EXECUTED");
    id
}

/// The client's whole feed, in order, each event as it reads (its `Debug` text: events carry no id of their own).
async fn feed_events(client: &Client) -> Vec<String> {
    let (mut token, mut events) = (None, Vec::new());
    loop {
        let page = client.list_user_events(&feed_query(token, 50)).await.unwrap();
        events.extend(page.items.iter().map(|e| format!("{e:?}")));
        match page.next_page_token {
            Some(next) => token = Some(next),
            None => return events,
        }
    }
}

/// The event ids of the client's delivery attempts.
async fn attempted(client: &Client) -> BTreeSet<String> {
    let query = SandboxListWebhookDeliveriesQuery { event_id: None };
    client.sandbox_list_webhook_deliveries(&query).await.unwrap().items.into_iter().map(|a| a.event_id).collect()
}

/// Whether the client's bridge `id` is still there.
async fn has_bridge(client: &Client, id: &str) -> bool {
    match client.get_bridge(id).await {
        Ok(_) => true,
        Err(bridge_client::Error::Api(GetBridgeError::InvalidRequest(_))) => false,
        Err(e) => panic!("reading bridge {id}: {e:?}"),
    }
}

/// Whether the client's quote `id` can still be committed (it is not once purged: unknown, like an expired one).
async fn commits(client: &Client, id: &str) -> bool {
    match client.commit_quote(id).await {
        Ok(_) => true,
        Err(bridge_client::Error::Api(CommitQuoteError::QuoteNotFound(_))) => false,
        Err(e) => panic!("committing quote {id}: {e:?}"),
    }
}

const RETAIN: Duration = Duration::from_secs(2);

async fn a_sandbox_keeping_two_seconds_purges_what_is_older_and_keeps_the_rest(store: TestStore) {
    let options = ServeOptions { retention: Retention::For(RETAIN), ..ServeOptions::default() };
    let sandbox = Running::on_with(&store, options).await;
    let base = sandbox.base_url.clone();
    let client = sandbox.client_of("kept-for-two-seconds");
    let (received, url) = receiver().await;
    let metrics_before = crate::operate::scrape(&base).await;

    // Old: an EXECUTED bridge, a CANCELLED one, one left PENDING (under way: never purged), a quote never committed,
    // two test events; every event delivered.
    let done = executed(&client, &url).await;
    let pending = commit(&client, quote(&client, &url).await).await;
    let cancelled = commit(&client, quote(&client, &url).await).await;
    let cancel = CancelBridgeRequest { state: CancelBridgeRequestState::Cancelled };
    client.cancel_bridge(&cancelled, &cancel).await.unwrap();
    let old_quote = quote(&client, &url).await;
    for message in ["old-1", "old-2"] {
        send_test_event(&client, &url, message).await;
    }
    let old_events = feed_events(&client).await;
    assert_eq!(old_events.len(), 8, "3 of the EXECUTED bridge, 1 of the PENDING one, 2 of the CANCELLED one, 2 tests");
    let stale_token = client.list_user_events(&feed_query(None, 1)).await.unwrap().next_page_token.unwrap();
    wait_for("the old events are delivered", || received.load(Ordering::SeqCst) == old_events.len()).await;
    let old_attempts = attempted(&client).await;
    assert_eq!(old_attempts.len(), old_events.len());

    // Older than the retention, they go (each within a pass, 100 ms, once 2 s old).
    crate::support::eventually("the old rows are purged", || async {
        feed_events(&client).await.is_empty()
            && attempted(&client).await.is_empty()
            && !has_bridge(&client, &done).await
            && !has_bridge(&client, &cancelled).await
    })
    .await;
    assert!(!commits(&client, old_quote.quote_id()).await, "an old quote is gone: unknown, like an expired one");
    assert!(has_bridge(&client, &pending).await, "a bridge under way is kept, however old");

    // Young: written now, and read at once. A row is sure to be kept while it is younger than the retention on the
    // store's clock (this host's): those written after `written` are, as long as the reads end within 2 s of it.
    let written = SystemTime::now();
    let young = executed(&client, &url).await;
    let young_quote = quote(&client, &url).await;
    send_test_event(&client, &url, "young").await;
    let quote_kept = commits(&client, young_quote.quote_id()).await;
    let feed = feed_events(&client).await;
    let bridge_kept = has_bridge(&client, &young).await;
    let stale = client.list_user_events(&feed_query(Some(stale_token), 50)).await.unwrap();
    // The project's clock moved 400 days ahead changes nothing: age is wall-clock time.
    advance(&client, 400 * 86_400_000).await;
    let young_after_advance = has_bridge(&client, &young).await && feed_events(&client).await.starts_with(&feed);
    let read_within = written.elapsed().unwrap();
    if read_within < RETAIN {
        assert!(quote_kept, "the young quote is kept (and commits)");
        assert_eq!(
            feed.len(),
            5,
            "the young events are all kept (3 of the EXECUTED bridge, a test, a commit): {feed:?}"
        );
        assert!(feed.iter().any(|e| e.contains("\"young\"")), "{feed:?}");
        assert!(bridge_kept, "the young EXECUTED bridge is kept");
        // A page token naming a purged position answers the first page still kept.
        let page: Vec<String> = stale.items.iter().map(|e| format!("{e:?}")).collect();
        assert_eq!(page, feed, "the stale token's page is the first page still kept");
        assert!(young_after_advance, "a project clock 400 days ahead purges nothing young");
    } else {
        eprintln!("the young rows were read {read_within:?} after they were written: their presence is not checked");
    }
    assert!(old_events.iter().all(|e| !feed.contains(e)), "no old event is back");

    // /metrics counts what was purged (the recorder is the process's: at least this sandbox's deletions) and how
    // far behind the purge is.
    let metrics = crate::operate::scrape(&base).await;
    let purged = |kind: &str| {
        let name = "bridge_sandbox_retention_purged_total";
        crate::operate::value(&metrics, name, &[("kind", kind)])
            - crate::operate::value(&metrics_before, name, &[("kind", kind)])
    };
    assert!(purged("events") >= old_events.len() as f64, "events purged: {}", purged("events"));
    assert!(purged("webhook_deliveries") >= old_events.len() as f64);
    assert!(purged("webhook_attempts") >= old_attempts.len() as f64);
    assert!(purged("bridges") >= 2.0, "the EXECUTED and CANCELLED bridges");
    assert!(purged("quotes") >= 4.0, "the four old quotes");
    let lag = metrics.samples.iter().find(|s| s.metric == "bridge_sandbox_retention_lag_seconds");
    assert!(lag.is_some(), "the lag is reported");
    sandbox.stop().await;
}

both_stores!(a_sandbox_keeping_two_seconds_purges_what_is_older_and_keeps_the_rest);
