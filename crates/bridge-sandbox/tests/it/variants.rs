//! Every record state and every event variant the schema has is reachable through the sandbox's helpers, so that
//! an integrator can see each production path locally. The sandbox is driven through all of them (bridges of the
//! three families to every state, with the `failed`, `swapFailed` and `delayed` outcomes and a late deposit;
//! deposit and routing addresses with bridged, rejected, delayed and failed deposits; a webhook test), the
//! records are sampled at every step of the clock, and the feed is read at the end. What is expected is read
//! from the schema, not written here: the (family, state) pairs of `BridgeRecord`'s state unions, the leaf
//! components of `WebhookEvent` (through the `type` unions and BRIDGE_CANCELLED's presence union), and the
//! refund triggers. Every event must validate against exactly one leaf component.
//!
//! The run is deterministic (`--seed`: ids and hashes from counters and a seeded key, the manual clock starting
//! at a fixed time), so the
//! JSON it writes, every event of the feed and every record at the end, is pinned byte for byte with an insta
//! snapshot: member order, number and date forms are what fixtures and webhook signatures depend on.
// `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote and stays under test.
#![allow(deprecated)]

use std::collections::{BTreeMap, BTreeSet};

use crate::support::{
    address_deposit, address_request, advance, bridge_request, commit, feed_query, history_query, pay, routing_request,
    swap_request, Running,
};
use bridge_client::Client;
use bridge_contract::*;
use serde_json::Value;

fn component<'d>(doc: &'d Value, reference: &str) -> (&'d str, &'d Value) {
    let name = reference.trim_start_matches("#/components/schemas/");
    let (key, value) = doc["components"]["schemas"].as_object().unwrap().get_key_value(name).unwrap();
    (key.as_str(), value)
}

/// The targets of a union: its discriminator mapping or its presence mapping (`None` for a non-union).
fn union_targets(schema: &Value) -> Option<Vec<(String, String)>> {
    let mapping = schema.pointer("/discriminator/mapping").or_else(|| schema.get("x-presence-discriminator"))?;
    Some(mapping.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())).collect())
}

/// The leaf components of `WebhookEvent`: event kinds, through their own unions.
fn event_leaves(doc: &Value) -> BTreeSet<String> {
    fn walk(doc: &Value, reference: &str, out: &mut BTreeSet<String>) {
        let (name, schema) = component(doc, reference);
        match union_targets(schema) {
            Some(targets) => targets.iter().for_each(|(_, t)| walk(doc, t, out)),
            None => {
                out.insert(name.to_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(doc, "#/components/schemas/WebhookEvent", &mut out);
    out
}

/// The (family, state) pairs of `BridgeRecord`: each family's `allOf` names its state union.
fn record_pairs(doc: &Value) -> BTreeSet<(String, String)> {
    let (_, record) = component(doc, "#/components/schemas/BridgeRecord");
    let mut out = BTreeSet::new();
    for (family, target) in union_targets(record).unwrap() {
        let (_, family_schema) = component(doc, &target);
        for member in family_schema["allOf"].as_array().unwrap() {
            let Some(reference) = member.get("$ref").and_then(Value::as_str) else { continue };
            let (_, schema) = component(doc, reference);
            if schema.pointer("/discriminator/propertyName") == Some(&Value::from("state")) {
                for (state, _) in union_targets(schema).unwrap() {
                    out.insert((family.clone(), state));
                }
            }
        }
    }
    out
}

fn validator(leaf: &str) -> jsonschema::Validator {
    let schema =
        bridge_contract::openapi::schema_for(&serde_json::json!({"$ref": format!("#/components/schemas/{leaf}")}));
    jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(&schema).unwrap()
}

async fn into_address(
    client: &Client,
    address: &str,
    token: &str,
    amount: &str,
    outcome: Option<SandboxDepositOutcome>,
) {
    let request = address_deposit(token, amount, outcome);
    client.sandbox_deposit_into_address(address, "ETHEREUM", &request).await.unwrap();
}

/// The (family, state) of every record of the project now.
async fn sample(client: &Client, seen: &mut BTreeSet<(String, String)>) {
    for item in client.list_bridge_history(&history_query(100, SortDirection::Asc)).await.unwrap().items {
        let json = serde_json::to_value(&item.bridge).unwrap();
        let family = json["_tag"].as_str().unwrap_or("bridge").to_owned();
        seen.insert((family, json["state"].as_str().unwrap().to_owned()));
    }
}

#[tokio::test]
async fn every_record_state_and_event_variant_is_reachable() {
    let doc = bridge_contract::openapi::document();
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start_seeded(dir.path(), 1).await;
    let client = sandbox.client(dir.path(), "variants");
    let mut records = BTreeSet::new();

    // Single-token bridges: executed, left to expire, failed. Swaps: executed, swap failed, expired then paid late.
    let single = commit(&client, client.quote_bridge(&bridge_request("100")).await.unwrap()).await;
    let _unpaid = commit(&client, client.quote_bridge(&bridge_request("50")).await.unwrap()).await;
    let failing = commit(&client, client.quote_bridge(&bridge_request("70")).await.unwrap()).await;
    let swap = commit(&client, client.quote_bridge_swap(&swap_request("0.1")).await.unwrap()).await;
    let swap_failing = commit(&client, client.quote_bridge_swap(&swap_request("0.2")).await.unwrap()).await;
    let late = commit(&client, client.quote_bridge_swap(&swap_request("0.3")).await.unwrap()).await;
    sample(&client, &mut records).await;
    pay(&client, &single, None).await;
    pay(&client, &failing, Some(SandboxBridgeOutcome::Failed)).await;
    pay(&client, &swap, None).await;
    pay(&client, &swap_failing, Some(SandboxBridgeOutcome::SwapFailed)).await;

    // A deposit address: bridged, delayed, failed, an unsupported token, over the maximum.
    let address = client
        .create_deposit_addresses(&DepositAddressCreateRequest {
            address_note: Some("variants".into()),
            ..address_request()
        })
        .await
        .unwrap()
        .remove(0)
        .deposit_address;
    into_address(&client, &address, "USDC", "25", None).await;
    into_address(&client, &address, "USDC", "30", Some(SandboxDepositOutcome::Delayed)).await;
    into_address(&client, &address, "USDC", "35", Some(SandboxDepositOutcome::Failed)).await;
    into_address(&client, &address, "NOT_A_TOKEN", "1", None).await;
    into_address(&client, &address, "USDC", "1000000000", None).await;

    // A routing deposit address: routed, unmatched, delayed.
    let routing = client
        .sandbox_create_routing_deposit_address(&routing_request(RoutingMatcher::SentToken(RoutingMatcherSentToken {
            tag: Default::default(),
            symbols_or_addresses: vec!["USDC".into()],
        })))
        .await
        .unwrap()
        .deposit_address;
    into_address(&client, &routing, "USDC", "40", None).await;
    into_address(&client, &routing, "USDT", "40", None).await;
    into_address(&client, &routing, "USDC", "45", Some(SandboxDepositOutcome::Delayed)).await;
    client
        .sandbox_send_webhook_test(&SandboxWebhookTestRequest {
            webhook_url: "http://127.0.0.1:9/hook".into(),
            message: None,
        })
        .await
        .unwrap();

    // Time passes in small steps (records are sampled at each); the expired swap is paid late.
    for step in 0..180 {
        sample(&client, &mut records).await;
        advance(&client, 10_000).await;
        if step == 40 {
            pay(&client, &late, None).await;
        }
    }
    sample(&client, &mut records).await;

    let expected_records = record_pairs(&doc);
    let missing: Vec<_> = expected_records.difference(&records).collect();
    assert!(missing.is_empty(), "record states never reached: {missing:?} (reached: {records:?})");

    // The feed: every event validates against exactly one leaf of the schema, and every leaf is there.
    let leaves = event_leaves(&doc);
    let validators: BTreeMap<&String, jsonschema::Validator> = leaves.iter().map(|l| (l, validator(l))).collect();
    let union = validator("WebhookEvent");
    let mut seen_leaves = BTreeSet::new();
    let mut triggers = BTreeSet::new();
    let mut page_token = None;
    let mut wire = String::new();
    loop {
        let page = client.list_user_events(&feed_query(page_token.clone(), 50)).await.unwrap();
        for event in &page.items {
            wire.push_str(&serde_json::to_string(event).unwrap());
            wire.push('\n');
            let json = serde_json::to_value(event).unwrap();
            let errors: Vec<String> =
                union.iter_errors(&json).map(|e| format!("{} at {}", e, e.instance_path())).collect();
            assert!(errors.is_empty(), "an event does not validate against WebhookEvent: {errors:?}\n{json}");
            let matching: Vec<&&String> =
                validators.iter().filter(|(_, v)| v.is_valid(&json)).map(|(l, _)| l).collect();
            assert_eq!(matching.len(), 1, "an event matches {matching:?}, not exactly one leaf: {json}");
            seen_leaves.insert((*matching[0]).clone());
            if let Some(trigger) = json.pointer("/trigger/_tag").and_then(Value::as_str) {
                triggers.insert(trigger.to_owned());
            }
        }
        match page.next_page_token {
            Some(token) => page_token = Some(token),
            None => break,
        }
    }
    let missing: Vec<_> = leaves.difference(&seen_leaves).collect();
    assert!(missing.is_empty(), "event variants never emitted: {missing:?}");
    let (_, trigger_union) = component(&doc, "#/components/schemas/SdaRefundTrigger");
    let expected_triggers: BTreeSet<String> =
        union_targets(trigger_union).unwrap().into_iter().map(|(tag, _)| tag).collect();
    assert_eq!(triggers, expected_triggers, "refund triggers");

    // The JSON written, byte for byte: the feed, then every record (and its rejections) as the history has it.
    let history = client.list_bridge_history(&history_query(100, SortDirection::Asc)).await.unwrap();
    for item in &history.items {
        wire.push_str(&serde_json::to_string(item).unwrap());
        wire.push('\n');
    }
    insta::assert_snapshot!("variants_wire", wire);
    sandbox.stop().await;
}
