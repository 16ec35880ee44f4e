//! End-to-end scenarios over real HTTP on 127.0.0.1, through the client crate: a sandbox is started on a free
//! port with a temporary data directory and a manual clock, driven, stopped, and started again.
// `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote and stays under test.
#![allow(deprecated)]

use std::time::Duration;

use crate::support::{
    address_deposit, address_request, advance, both_stores, bridge_deposit, bridge_request, event_tags, history_query,
    pay, single_token, state_of, swap_request, Running, TestStore, EVM_A, EVM_B,
};
use bridge_client::Client;
use bridge_contract::operations::*;
use bridge_contract::*;
use serde_json::Value;

fn dec(s: &DecimalString) -> rust_decimal::Decimal {
    s.to_decimal().unwrap()
}

async fn quote_commit_deposit_executed(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");

    let quote = single_token(client.quote_bridge(&bridge_request("100")).await.unwrap());
    let fees = &quote.fees;
    assert_eq!(
        dec(&fees.fee),
        dec(&fees.gas_fee) + dec(&fees.source_gas_fee) + dec(&fees.platform_fee) + dec(&fees.percentage_fee),
        "fees add up"
    );
    assert_eq!(dec(&quote.pay_amount), dec(&quote.receive_amount) + dec(&fees.fee), "pay = receive + fee");

    let committed = client.commit_quote(&quote.quote_id).await.unwrap();
    assert_eq!(committed.quote_id, quote.quote_id);
    assert_eq!(state_of(&client.get_bridge(&quote.quote_id).await.unwrap()), "PENDING");
    let again = client.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(
        matches!(again, bridge_client::Error::Api(CommitQuoteError::InvalidRequest(_))),
        "committed once: {again:?}"
    );

    let record = client.sandbox_deposit_bridge(&quote.quote_id, &bridge_deposit(None)).await.unwrap();
    assert_eq!(state_of(&record), "PENDING_CONFIRMATION");
    for expected in ["DEPOSIT_ACCEPTED", "ACCEPTED", "EXECUTED"] {
        advance(&client, 60_000).await;
        let record = client.get_bridge(&quote.quote_id).await.unwrap();
        if state_of(&record) == "EXECUTED" {
            break;
        }
        assert_eq!(state_of(&record), expected);
    }
    assert_eq!(state_of(&client.get_bridge(&quote.quote_id).await.unwrap()), "EXECUTED");
    assert_eq!(event_tags(&client).await, ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED"]);

    let history = client
        .list_bridge_history(&ListBridgeHistoryQuery {
            state: Some(HistoryStateFilter::Executed),
            ..history_query(10, SortDirection::Desc)
        })
        .await
        .unwrap();
    assert_eq!(history.total_items, 1);
    sandbox.stop().await;
}

async fn an_uncommitted_or_expired_quote_cannot_be_committed_and_a_pending_bridge_is_cancelled(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");
    let late = single_token(client.quote_bridge(&bridge_request("50")).await.unwrap());
    let pending = single_token(client.quote_bridge(&bridge_request("60")).await.unwrap());
    client.commit_quote(&pending.quote_id).await.unwrap();
    advance(&client, bridge_sandbox::pricing::QUOTE_LIFETIME_MS as u64 + 1).await;
    let err = client.commit_quote(&late.quote_id).await.unwrap_err();
    assert!(matches!(err, bridge_client::Error::Api(CommitQuoteError::QuoteNotFound(_))), "{err:?}");
    assert_eq!(state_of(&client.get_bridge(&pending.quote_id).await.unwrap()), "CANCELLED");
    assert_eq!(event_tags(&client).await, ["BRIDGE_PENDING", "BRIDGE_CANCELLED"]);
    sandbox.stop().await;
}

async fn deposit_address_bridged_and_rejected_over_the_limit(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");
    let request = DepositAddressCreateRequest {
        deposit_chains: vec!["ETHEREUM".into(), "ARBITRUM".into()],
        address_note: Some("desk".into()),
        ..address_request()
    };
    let created = client.create_deposit_addresses(&request).await.unwrap();
    assert_eq!(created.len(), 2);
    let again = client.create_deposit_addresses(&request).await.unwrap();
    assert_eq!(again[0].deposit_address, created[0].deposit_address, "reused by default");
    let fresh = client
        .create_deposit_addresses(&DepositAddressCreateRequest {
            reuse_policy: Some(ReusePolicy::CreateNew),
            ..request.clone()
        })
        .await
        .unwrap();
    assert_ne!(fresh[0].deposit_address, created[0].deposit_address, "create-new makes another");

    let address = &created[0];
    let limits = address.supported_tokens.iter().find(|t| t.symbol == "USDC").expect("USDC is depositable");
    let ok = client
        .sandbox_deposit_into_address(&address.deposit_address, "ETHEREUM", &address_deposit("USDC", "25", None))
        .await
        .unwrap();
    let bridge_id = ok.bridge_id.clone().expect("a bridged deposit starts a bridge");
    assert!(matches!(ok.deposit.status, LastBridgeStatus::Accepted(_)));
    let too_much = format!("{}", limits.max_deposit_limit_usd.as_f64() * 2.0);
    let over = client
        .sandbox_deposit_into_address(&address.deposit_address, "ETHEREUM", &address_deposit("USDC", &too_much, None))
        .await
        .unwrap();
    assert!(
        matches!(
            over.deposit.status,
            LastBridgeStatus::Rejected(LastBridgeRejected { reason: RejectReason::OverMax, .. })
        ),
        "{:?}",
        over.deposit.status
    );
    assert!(over.bridge_id.is_none());

    for _ in 0..4 {
        advance(&client, 60_000).await;
    }
    assert_eq!(state_of(&client.get_bridge(&bridge_id).await.unwrap()), "EXECUTED");
    let status = client
        .get_deposit_address_public_status(
            &address.deposit_address,
            "ETHEREUM",
            &GetDepositAddressPublicStatusQuery { destination_address: EVM_B.into() },
        )
        .await
        .unwrap();
    assert_eq!(status.last_bridges.len(), 2);
    assert!(matches!(status.last_bridges[0].status, LastBridgeStatus::Rejected(_)), "newest first");
    assert!(matches!(status.last_bridges[1].status, LastBridgeStatus::Executed(_)));
    let tags = event_tags(&client).await;
    assert_eq!(tags.iter().filter(|t| *t == "DEPOSIT_ADDRESS_CREATED").count(), 4, "{tags:?}");
    for kind in [
        "DEPOSIT_ADDRESS_DEPOSIT_DETECTED",
        "DEPOSIT_ADDRESS_DEPOSIT_CONFIRMING",
        "BRIDGE_ACCEPTED",
        "BRIDGE_EXECUTED",
        "DEPOSIT_ADDRESS_BRIDGE_REJECTED",
        "SDA_REFUND_COMPLETED",
    ] {
        assert_eq!(tags.iter().filter(|t| *t == kind).count(), 1, "{kind} once in {tags:?}");
    }
    sandbox.stop().await;
}

async fn everything_survives_a_restart(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");
    let quote = single_token(client.quote_bridge(&bridge_request("10")).await.unwrap());
    client.commit_quote(&quote.quote_id).await.unwrap();
    advance(&client, 1_000).await;
    let clock_before = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now;
    let events_before = event_tags(&client).await;
    sandbox.stop().await;

    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");
    assert_eq!(state_of(&client.get_bridge(&quote.quote_id).await.unwrap()), "PENDING");
    assert_eq!(event_tags(&client).await, events_before);
    let clock_after = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now;
    assert_eq!(clock_after, clock_before, "the manual clock continues where it stopped");
    sandbox.stop().await;
}

async fn projects_never_see_each_other(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let a = sandbox.client_of("project-a");
    let b = sandbox.client_of("project-b");
    let quote = single_token(a.quote_bridge(&bridge_request("10")).await.unwrap());
    let err = b.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(matches!(err, bridge_client::Error::Api(CommitQuoteError::QuoteNotFound(_))), "{err:?}");
    a.commit_quote(&quote.quote_id).await.unwrap();
    let unknown = b.get_bridge("no-such-bridge").await.unwrap_err();
    let foreign = b.get_bridge(&quote.quote_id).await.unwrap_err();
    assert_eq!(
        format!("{unknown:?}").replace("no-such-bridge", "X"),
        format!("{foreign:?}").replace(&quote.quote_id, "X"),
        "answered like an unknown id"
    );
    assert!(event_tags(&b).await.is_empty());
    let history = b.list_bridge_history(&history_query(10, SortDirection::Asc)).await.unwrap();
    assert_eq!(history.total_items, 0);
    sandbox.stop().await;
}

/// Raw answers (not the client's typed view) validate against the schema of their operation and status.
#[tokio::test]
async fn every_answer_validates_against_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let token = bridge_sandbox::mint_token(dir.path(), "project-a", false, Duration::from_secs(600)).unwrap();
    let http = reqwest::Client::new();
    let doc: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
    let send = |method: &str, path: String, body: Option<Value>| {
        let mut req = http.request(method.parse().unwrap(), format!("{}{path}", sandbox.base_url)).bearer_auth(&token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        req.send()
    };
    let quote: Value =
        send("POST", "/bridge/quote/user".into(), Some(serde_json::to_value(bridge_request("42")).unwrap()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    let id = quote["quoteId"].as_str().unwrap().to_owned();
    let calls: Vec<(&str, &str, String, Option<Value>)> = vec![
        (
            "POST",
            "/bridge/quote/user",
            "/bridge/quote/user".into(),
            Some(serde_json::to_value(bridge_request("42")).unwrap()),
        ),
        (
            "POST",
            "/bridge/quote/user",
            "/bridge/quote/user".into(),
            Some(serde_json::to_value(bridge_request("0.000001")).unwrap()),
        ),
        ("POST", "/bridge/quote/commit/{quoteId}", format!("/bridge/quote/commit/{id}"), None),
        ("POST", "/bridge/quote/commit/{quoteId}", format!("/bridge/quote/commit/{id}"), None),
        (
            "POST",
            "/sandbox/bridges/{bridgeId}/deposit",
            format!("/sandbox/bridges/{id}/deposit"),
            Some(serde_json::json!({})),
        ),
        ("POST", "/sandbox/clock/advance", "/sandbox/clock/advance".into(), Some(serde_json::json!({"ms": 120000}))),
        ("GET", "/bridge/history/bridge/{bridgeId}", format!("/bridge/history/bridge/{id}"), None),
        ("GET", "/bridge/history/bridge/{bridgeId}", "/bridge/history/bridge/nope".into(), None),
        (
            "GET",
            "/bridge/history/user",
            "/bridge/history/user?page=1&limit=5&sortBy=updatedAt&sortDirection=desc".into(),
            None,
        ),
        (
            "GET",
            "/bridge/history/user",
            "/bridge/history/user?page=0&limit=5&sortBy=updatedAt&sortDirection=desc".into(),
            None,
        ),
        (
            "POST",
            "/sda/deposit-addresses",
            "/sda/deposit-addresses".into(),
            Some(
                serde_json::json!({"depositChains": ["STELLAR"], "destinationChain": "BASE", "destinationAddress": EVM_B}),
            ),
        ),
        (
            "POST",
            "/sda/deposit-addresses",
            "/sda/deposit-addresses".into(),
            Some(
                serde_json::json!({"depositChains": ["NOWHERE"], "destinationChain": "BASE", "destinationAddress": EVM_B}),
            ),
        ),
        (
            "POST",
            "/bridge/deposit-addresses",
            "/bridge/deposit-addresses".into(),
            Some(
                serde_json::json!({"depositChains": ["STELLAR"], "destinationChain": "BASE", "destinationAddress": EVM_B}),
            ),
        ),
        ("GET", "/sda/deposit-addresses/search", "/sda/deposit-addresses/search?pageSize=1".into(), None),
        ("GET", "/webhook/user-events-cursor", "/webhook/user-events-cursor?sinceTimestamp=0&pageSize=2".into(), None),
        ("GET", "/webhook/public-key", "/webhook/public-key".into(), None),
        (
            "POST",
            "/bridge/quote/bridge-swap/user",
            "/bridge/quote/bridge-swap/user".into(),
            Some(
                serde_json::json!({"chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "3", "mode": "pay", "tokenIn": "ETH", "tokenOut": "USDC", "depositor": EVM_A, "recipient": EVM_B}),
            ),
        ),
        (
            "POST",
            "/bridge/quote/bridge-swap/user",
            "/bridge/quote/bridge-swap/user".into(),
            Some(
                serde_json::json!({"chainIn": "ETHEREUM", "chainOut": "ETHEREUM", "amount": "3", "mode": "pay", "tokenIn": "ETH", "tokenOut": "USDC", "depositor": EVM_A, "recipient": EVM_B}),
            ),
        ),
    ];
    let mut checked = 0;
    for (method, template, path, body) in calls {
        let response = send(method, path.clone(), body).await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let op = &doc["paths"][template][method.to_lowercase()];
        let mut answer = op["responses"][status.to_string()].clone();
        if let Some(r) = answer.get("$ref").and_then(Value::as_str) {
            answer = doc.pointer(r.trim_start_matches('#')).unwrap().clone();
        }
        let schema = answer
            .pointer("/content/application~1json/schema")
            .unwrap_or_else(|| panic!("{method} {path}: status {status} is not documented: {body}"))
            .clone();
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(&bridge_contract::openapi::schema_for(&schema))
            .unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&body).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{method} {path} ({status}) does not validate: {errors:?}\n{body:#}");
        checked += 1;
    }
    assert_eq!(checked, 18);
    sandbox.stop().await;
}

async fn a_failed_swap_is_refunded_and_a_delayed_deposit_retries(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");

    // A bridge-swap whose swap fails after the deposit: SWAP_FAILED, then refunded with BRIDGE_REFUNDED.
    let quote = client.quote_bridge_swap(&swap_request("1")).await.unwrap();
    let QuoteResponse::BridgeSwap(quote) = quote else { panic!("ETH to USDC is a bridgeSwap quote") };
    client.commit_quote(&quote.quote_id).await.unwrap();
    pay(&client, &quote.quote_id, Some(SandboxBridgeOutcome::SwapFailed)).await;
    for _ in 0..4 {
        advance(&client, 60_000).await;
    }
    let record = client.get_bridge(&quote.quote_id).await.unwrap();
    assert_eq!(state_of(&record), "SWAP_FAILED_REFUNDED");
    let BridgeRecord::BridgeSwap(record) = record else { panic!("a swap record") };
    let BridgeSwapState::SwapFailedRefunded(refund) = record.state else { panic!("refunded") };
    assert_eq!(refund.refunded_amount, record.common.amount_in, "the deposit goes back whole");

    // A deposit-address deposit delayed once: RETRYING, then bridged.
    let address = client
        .create_deposit_addresses(&DepositAddressCreateRequest {
            deposit_chains: vec!["BASE".into()],
            destination_chain: "ARBITRUM".into(),
            ..address_request()
        })
        .await
        .unwrap()
        .remove(0);
    let deposit = client
        .sandbox_deposit_into_address(
            &address.deposit_address,
            "BASE",
            &address_deposit("USDC", "40", Some(SandboxDepositOutcome::Delayed)),
        )
        .await
        .unwrap();
    assert!(matches!(deposit.deposit.status, LastBridgeStatus::Retrying(_)));
    let status = |client: &Client| {
        let client = client.clone();
        let address = address.deposit_address.clone();
        async move {
            client
                .get_deposit_address_public_status(
                    &address,
                    "BASE",
                    &GetDepositAddressPublicStatusQuery { destination_address: EVM_B.into() },
                )
                .await
                .unwrap()
                .last_bridges[0]
                .status
                .clone()
        }
    };
    assert!(matches!(status(&client).await, LastBridgeStatus::Retrying(_)), "still delayed");
    for _ in 0..6 {
        advance(&client, 60_000).await;
    }
    assert!(matches!(status(&client).await, LastBridgeStatus::Executed(_)), "bridged after the delay");
    let tags = event_tags(&client).await;
    for kind in ["BRIDGE_REFUNDED", "DEPOSIT_ADDRESS_BRIDGE_DELAYED"] {
        assert_eq!(tags.iter().filter(|t| *t == kind).count(), 1, "{kind} once in {tags:?}");
    }
    assert!(
        !tags.contains(&"DEPOSIT_ADDRESS_DEPOSIT_CONFIRMING".to_owned()),
        "a delayed deposit is not confirming yet"
    );
    sandbox.stop().await;
}

both_stores!(
    quote_commit_deposit_executed,
    an_uncommitted_or_expired_quote_cannot_be_committed_and_a_pending_bridge_is_cancelled,
    deposit_address_bridged_and_rejected_over_the_limit,
    everything_survives_a_restart,
    projects_never_see_each_other,
    a_failed_swap_is_refunded_and_a_delayed_deposit_retries,
);

/// Two instances on one PostgreSQL database: one sandbox clock (an advance on one is the other's time after a
/// lifecycle tick), and each lifecycle step taken once although both instances' passes run: every bridge gets
/// each of its events exactly once.
#[tokio::test]
async fn two_instances_share_the_clock_and_step_each_bridge_once() {
    let Some(store) = TestStore::postgres() else { return };
    let (a, b) = (Running::on(&store).await, Running::on(&store).await);
    let (on_a, on_b) = (a.client_of("project-a"), b.client_of("project-a"));
    let mut ids = Vec::new();
    for (i, client) in [&on_a, &on_b].into_iter().cycle().take(8).enumerate() {
        let quote = single_token(client.quote_bridge(&bridge_request(&format!("{}", 10 + i))).await.unwrap());
        client.commit_quote(&quote.quote_id).await.unwrap();
        pay(client, &quote.quote_id, None).await;
        ids.push(quote.quote_id);
    }
    for _ in 0..3 {
        advance(&on_a, 60_000).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await; // one tick of B's lifecycle pass
        let now_a = on_a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now;
        let now_b = on_b.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now;
        assert_eq!(now_a, now_b, "one clock");
    }
    // A step that one instance's pass took at the time before the last advance is followed up by its next pass.
    for id in &ids {
        let mut state = "";
        for _ in 0..40 {
            state = state_of(&on_b.get_bridge(id).await.unwrap());
            if state == "EXECUTED" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let now = on_a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now;
        let record = serde_json::to_string(&on_b.get_bridge(id).await.unwrap()).unwrap();
        assert_eq!(state, "EXECUTED", "at {now:?}: {record}");
    }
    let mut tags = event_tags(&on_b).await;
    tags.sort();
    let mut expected: Vec<String> = ["BRIDGE_ACCEPTED", "BRIDGE_EXECUTED", "BRIDGE_PENDING"]
        .iter()
        .flat_map(|t| std::iter::repeat_n(t.to_string(), ids.len()))
        .collect();
    expected.sort();
    assert_eq!(tags, expected, "each event of each bridge once");
    a.stop().await;
    b.stop().await;
}
