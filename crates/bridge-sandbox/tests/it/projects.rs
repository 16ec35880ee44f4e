//! Projects isolated in time and ids (issue 22), over real HTTP on both stores, with two instances on PostgreSQL:
//! a clock per project (an advance moves only the caller's project, seen by the next request on any instance;
//! quote expiry, the lifecycle and delivery retries run on the owning project's clock), `POST /sandbox/reset`
//! (one project's data gone and its clock back at the sandbox's time, nothing of another project touched, ids
//! never reused), and ids unique across data directories and restarts, reproducible with `--seed`.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::{
    address_deposit, address_request, both_stores, committed, eventually, feed_query, history_query, quote_request,
    search_everything, send_test_event, Running, TestStore,
};
use bridge_client::Client;
use bridge_contract::*;

const CLOSED: &str = "http://127.0.0.1:9/closed";
const DAY_MS: u64 = 86_400_000;

async fn quote(client: &Client) -> String {
    client.quote_bridge(&quote_request()).await.unwrap().quote_id().to_owned()
}

async fn state(client: &Client, id: &str) -> String {
    let record = client.get_bridge(id).await.unwrap();
    let value = serde_json::to_value(&record).unwrap();
    value["state"].as_str().unwrap().to_owned()
}

async fn webhook_test(client: &Client, message: &str) -> String {
    send_test_event(client, CLOSED, message).await
}

async fn attempts(client: &Client) -> usize {
    let query = SandboxListWebhookDeliveriesQuery { event_id: None };
    client.sandbox_list_webhook_deliveries(&query).await.unwrap().items.len()
}

async fn feed_len(client: &Client) -> usize {
    client.list_user_events(&feed_query(None, 50)).await.unwrap().items.len()
}

async fn history_total(client: &Client) -> u64 {
    client.list_bridge_history(&history_query(10, SortDirection::Asc)).await.unwrap().total_items
}

fn ms(date: &DateString) -> i64 {
    date.millis()
}

/// Two instances on PostgreSQL (one store, one process on SQLite).
async fn instances(store: &TestStore) -> (Running, Option<Running>) {
    let one = Running::on(store).await;
    let two = if store.is_shared() { Some(Running::on(store).await) } else { None };
    (one, two)
}

async fn an_advance_moves_only_the_callers_project(store: TestStore) {
    let (one, two) = instances(&store).await;
    let other = two.as_ref().unwrap_or(&one);
    let (a, a_elsewhere) = (one.client_of("clock-a"), other.client_of("clock-a"));
    let (b, b_elsewhere) = (one.client_of("clock-b"), other.client_of("clock-b"));

    let a_start = a.sandbox_get_clock().await.unwrap().now;
    let open = quote(&a).await;
    let pending = committed(&a).await;
    webhook_test(&a, "retried on a's clock").await;
    eventually("a's first delivery attempt", || async { attempts(&a).await == 1 }).await;

    // B moves a day on: past A's quote expiry, A's bridge cancellation and A's next retry.
    let b_now = b.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: DAY_MS }).await.unwrap().now;
    assert_eq!(ms(&b_now), ms(&a_start) + DAY_MS as i64, "both started at the sandbox's time");
    assert_eq!(b_elsewhere.sandbox_get_clock().await.unwrap().now, b_now, "the next request elsewhere sees it");
    let b_bridge = committed(&b_elsewhere).await;
    let b_record = serde_json::to_value(b.get_bridge(&b_bridge).await.unwrap()).unwrap();
    assert_eq!(b_record["createdAt"], serde_json::to_value(b_now).unwrap(), "b's records on b's clock");

    assert_eq!(a_elsewhere.sandbox_get_clock().await.unwrap().now, a_start, "a's clock did not move");
    tokio::time::sleep(Duration::from_millis(1_500)).await; // lifecycle ticks and delivery passes on both
    assert_eq!(state(&a_elsewhere, &pending).await, "PENDING", "a's bridge is not cancelled by b's time");
    assert_eq!(attempts(&a).await, 1, "a's retry is not due on b's time");
    a_elsewhere.commit_quote(&open).await.expect("a's quote has not expired on b's time");

    // A's own advance does all of it.
    let a_now = a_elsewhere.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: DAY_MS }).await.unwrap().now;
    assert_eq!(a.sandbox_get_clock().await.unwrap().now, a_now);
    assert_eq!(state(&a, &pending).await, "CANCELLED");
    eventually("a's retry", || async { attempts(&a).await >= 2 }).await;
    assert_eq!(b.sandbox_get_clock().await.unwrap().now, b_now, "a's advance left b where it was");
    one.stop().await;
    if let Some(two) = two {
        two.stop().await;
    }
}

async fn a_reset_starts_one_project_over(store: TestStore) {
    let (one, two) = instances(&store).await;
    let other = two.as_ref().unwrap_or(&one);
    let (a, a_elsewhere, b) = (one.client_of("reset-a"), other.client_of("reset-a"), one.client_of("reset-b"));
    let start = a.sandbox_get_clock().await.unwrap().now;

    let mut a_ids = BTreeSet::from([quote(&a).await, committed(&a).await]);
    let address = a
        .create_deposit_addresses(&DepositAddressCreateRequest {
            address_note: Some("reset".into()),
            ..address_request()
        })
        .await
        .unwrap()
        .remove(0);
    let deposit = address_deposit("USDC", "25", None);
    a.sandbox_deposit_into_address(&address.deposit_address, &address.deposit_chain, &deposit).await.unwrap();
    a_ids.insert(webhook_test(&a, "before the reset").await);
    eventually("a's delivery attempt", || async { attempts(&a).await >= 1 }).await;
    a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: DAY_MS }).await.unwrap();
    let b_bridge = committed(&b).await;
    b.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1_000 }).await.unwrap();
    let (b_feed, b_clock) = (feed_len(&b).await, b.sandbox_get_clock().await.unwrap().now);

    let reset = a_elsewhere.sandbox_reset_project().await.unwrap();
    let deleted = &reset.deleted;
    assert_eq!((deleted.quotes, deleted.deposit_addresses, deleted.deposits), (2, 1, 1), "{deleted:?}");
    assert!(deleted.bridges >= 2 && deleted.events >= 4 && deleted.deliveries >= 1, "{deleted:?}");
    assert_eq!(reset.now, start, "the clock is back at the sandbox's (manual) time");
    assert_eq!(a.sandbox_get_clock().await.unwrap().now, start, "on every instance");

    assert_eq!((history_total(&a).await, feed_len(&a).await, attempts(&a).await), (0, 0, 0));
    assert!(a.search_deposit_addresses(&search_everything()).await.unwrap().items.is_empty());
    assert!(a.get_deposit_address_status(&address.deposit_address, &address.deposit_chain).await.is_err());

    assert_eq!(state(&b, &b_bridge).await, "PENDING", "b's bridge is untouched");
    assert_eq!((feed_len(&b).await, b.sandbox_get_clock().await.unwrap().now), (b_feed, b_clock));
    assert_eq!(history_total(&b).await, 1);

    // Ids are never reused: the project starts over, its ids do not.
    let after = [quote(&a_elsewhere).await, committed(&a).await, webhook_test(&a, "after the reset").await];
    for id in after {
        assert!(!a_ids.contains(&id), "{id} was handed out before the reset");
    }
    one.stop().await;
    if let Some(two) = two {
        two.stop().await;
    }
}

both_stores!(an_advance_moves_only_the_callers_project, a_reset_starts_one_project_over);

fn is_object_id(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// What a fresh sandbox answers to the same few requests: a quote id, an event id, a deposit address.
async fn first_answers(sandbox: &Running) -> (String, String, String) {
    let client = sandbox.client_of("ids");
    let quote = quote(&client).await;
    let event = webhook_test(&client, "ids").await;
    let request = DepositAddressCreateRequest { reuse_policy: Some(ReusePolicy::CreateNew), ..address_request() };
    let address = client.create_deposit_addresses(&request).await.unwrap().remove(0).deposit_address;
    (quote, event, address)
}

#[tokio::test]
async fn ids_are_unique_across_data_directories_and_restarts_unless_seeded() {
    let (first, second, seeded, seeded_again) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let sandbox = Running::start(first.path()).await;
    let one = first_answers(&sandbox).await;
    sandbox.stop().await;
    let sandbox = Running::start(first.path()).await;
    let restarted = first_answers(&sandbox).await;
    sandbox.stop().await;
    let sandbox = Running::start(second.path()).await;
    let elsewhere = first_answers(&sandbox).await;
    sandbox.stop().await;
    assert!(is_object_id(&one.0) && is_object_id(&one.1), "production's shape: {one:?}");
    for (a, b) in [(&one, &restarted), (&one, &elsewhere), (&restarted, &elsewhere)] {
        assert!(a.0 != b.0 && a.1 != b.1 && a.2 != b.2, "ids repeat: {a:?} {b:?}");
    }

    let sandbox = Running::start_seeded(seeded.path(), 7).await;
    let reproduced = first_answers(&sandbox).await;
    sandbox.stop().await;
    let sandbox = Running::start_seeded(seeded_again.path(), 7).await;
    assert_eq!(first_answers(&sandbox).await, reproduced, "--seed: the same ids for the same requests");
    sandbox.stop().await;
    let sandbox = Running::start_seeded(seeded.path(), 7).await;
    let after_restart = first_answers(&sandbox).await;
    sandbox.stop().await;
    assert!(after_restart.0 != reproduced.0 && after_restart.1 != reproduced.1, "a seeded restart repeats no id");
}

#[tokio::test]
async fn a_seed_needs_the_manual_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = TestStore::sqlite().config();
    config.data_dir = dir.path().to_owned();
    config.seed = Some(1);
    config.clock = bridge_sandbox::clock::ClockMode::Real;
    let error = bridge_sandbox::open(&config).await.err().expect("refused at startup");
    assert!(format!("{error}").contains("--seed needs --clock manual"), "{error}");
}

/// A project's clock stops at 9999-01-01T00:00:00.000Z: an advance past it is a 422 that leaves the clock (and the
/// other projects) as they were; it survives a restart.
#[tokio::test]
async fn a_project_clock_stops_at_the_latest_date_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let (a, b) = (sandbox.client_of("latest-a"), sandbox.client_of("latest-b"));
    let start = a.sandbox_get_clock().await.unwrap().now;
    let b_start = b.sandbox_get_clock().await.unwrap().now;
    let latest: DateString = "9999-01-01T00:00:00.000Z".parse().unwrap();
    let to_latest = (latest.millis() - start.millis()) as u64;
    let refused = a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: to_latest + 1 }).await.unwrap_err();
    assert!(format!("{refused:?}").contains("cannot be advanced past 9999-01-01"), "{refused:?}");
    assert_eq!(a.sandbox_get_clock().await.unwrap().now, start, "a refused advance changes nothing");
    let now = a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: to_latest }).await.unwrap().now;
    assert_eq!(now, latest, "up to the latest date exactly");
    assert!(a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1 }).await.is_err());
    assert_eq!(b.sandbox_get_clock().await.unwrap().now, b_start);
    sandbox.stop().await;
    let sandbox = Running::start(dir.path()).await;
    assert_eq!(sandbox.client_of("latest-a").sandbox_get_clock().await.unwrap().now, latest, "kept across a restart");
    assert_eq!(sandbox.client_of("latest-b").sandbox_get_clock().await.unwrap().now, b_start);
    sandbox.stop().await;
}

/// The feed's page tokens of `client`, one event a page, in order.
async fn page_tokens(client: &Client) -> Vec<String> {
    let (mut tokens, mut token) = (Vec::new(), None);
    loop {
        let page = client.list_user_events(&feed_query(token, 1)).await.unwrap();
        match page.next_page_token {
            Some(next) => {
                tokens.push(next.clone());
                token = Some(next);
            }
            None => return tokens,
        }
    }
}

/// The ids of a quiet project read nothing of a busy one (issue 32): between each two of its quotes and events
/// another project makes five of each. Ids were 4 bytes of time, 5 bytes fixed for 2^24 values and the global
/// counter's low 3 bytes, so the quiet project's consecutive ids differed by the other's activity plus one; its
/// page tokens were global feed positions, likewise. Now the 8 bytes after the time, and a page token, are a keyed
/// permutation of the counter (of the feed position): consecutive ones differ in their high bytes too, and the
/// differences form no arithmetic progression. The tokens still have the schema's shape, and still name the same
/// positions after a restart and on another instance of the same database (the key is kept with the data).
async fn ids_and_page_tokens_reveal_nothing_of_other_projects(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let (quiet, busy) = (sandbox.client_of("quiet"), sandbox.client_of("busy"));
    let (mut quotes, mut events) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        quotes.push(quote(&quiet).await);
        events.push(webhook_test(&quiet, "quiet").await);
        for _ in 0..5 {
            quote(&busy).await;
            webhook_test(&busy, "busy").await;
        }
    }
    for ids in [&quotes, &events] {
        assert!(ids.iter().all(|id| is_object_id(id)), "production's shape: {ids:?}");
        let tails: Vec<u64> = ids.iter().map(|id| u64::from_str_radix(&id[8..], 16).unwrap()).collect();
        for pair in ids.windows(2) {
            assert_ne!(pair[0][8..18], pair[1][8..18], "consecutive ids differ beyond the low bytes: {pair:?}");
        }
        let steps: Vec<u64> = tails.windows(2).map(|t| t[1].wrapping_sub(t[0])).collect();
        assert!(steps.windows(2).all(|s| s[0] != s[1]), "no arithmetic progression: {ids:?}");
    }

    let tokens = page_tokens(&quiet).await;
    assert_eq!(tokens.len(), 3, "four events, one a page: {tokens:?}");
    assert!(tokens.iter().all(|t| is_object_id(t)), "the schema's pattern ^[0-9a-f]{{24}}$: {tokens:?}");
    let values: Vec<u128> = tokens.iter().map(|t| u128::from_str_radix(t, 16).unwrap()).collect();
    for pair in values.windows(2) {
        assert!(pair[0].abs_diff(pair[1]) >= 1 << 32, "not near each other: {tokens:?}");
    }
    assert_ne!(values[1].wrapping_sub(values[0]), values[2].wrapping_sub(values[1]), "no progression: {tokens:?}");
    let pages = |client: Client, tokens: Vec<String>| async move {
        let mut pages = Vec::new();
        for token in tokens {
            let page = client.list_user_events(&feed_query(Some(token), 1)).await.unwrap();
            pages.push(serde_json::to_value(&page.items).unwrap());
        }
        pages
    };
    let seen = pages(quiet.clone(), tokens.clone()).await;
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|items| items.as_array().unwrap().len() == 1), "each token is a position: {seen:?}");

    if store.is_shared() {
        let other = Running::on(&store).await;
        assert_eq!(pages(other.client_of("quiet"), tokens.clone()).await, seen, "another instance agrees");
        other.stop().await;
    }
    sandbox.stop().await;
    let restarted = Running::on(&store).await;
    assert_eq!(pages(restarted.client_of("quiet"), tokens).await, seen, "the same positions after a restart");
    restarted.stop().await;
}

both_stores!(ids_and_page_tokens_reveal_nothing_of_other_projects);

/// An advance is done when it answers, on every instance (issue 36): after `POST /sandbox/clock/advance` answers
/// on instance A, instance B reads every bridge the advance made due in its new state, while another instance's
/// lifecycle pass runs without pause (taking, with its lease, whatever is due the moment it looks) and both
/// served instances are under quote load. Each round commits bridges on A, advances A's project a day (past their
/// cancellation) on A, and reads them on B at once: every one must be `CANCELLED`.
#[tokio::test]
async fn an_advance_is_done_on_every_instance_when_it_answers() {
    let Some(store) = TestStore::postgres() else { return };
    let (a, b) = (Running::on(&store).await, Running::on(&store).await);
    // A third instance that only runs lifecycle passes, one after the other: "another instance's pass in the way".
    let passer = bridge_sandbox::open(&store.config()).await.expect("the third instance opens");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut background = Vec::new();
    {
        let (sandbox, stop) = (passer.sandbox.clone(), stop.clone());
        background.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                sandbox.tick().await.expect("a pass");
            }
        }));
    }
    // Load on both served instances: quotes and commits of other projects (whose bridges the passes move too).
    for (i, instance) in [&a, &b, &a, &b].into_iter().enumerate() {
        let (client, stop) = (instance.client_of(&format!("load-{i}")), stop.clone());
        background.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                committed(&client).await;
                client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 60_000 }).await.unwrap();
            }
        }));
    }
    let (on_a, on_b) = (a.client_of("advanced"), b.client_of("advanced"));
    let (rounds, per_round) = (40, 3);
    let mut late = Vec::new();
    for round in 0..rounds {
        let mut ids = Vec::new();
        for _ in 0..per_round {
            ids.push(committed(&on_a).await);
        }
        on_a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: DAY_MS }).await.unwrap();
        for id in &ids {
            let seen = state(&on_b, id).await;
            if seen != "CANCELLED" {
                late.push(format!("round {round}: {id} {seen}"));
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in background {
        task.await.unwrap();
    }
    a.stop().await;
    b.stop().await;
    assert!(
        late.is_empty(),
        "{} of {} bridges read on B in their past state: {late:#?}",
        late.len(),
        rounds * per_round
    );
}
