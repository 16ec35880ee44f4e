//! The bridge state machine and the events it emits.
//!
//! ```text
//! commit ──► PENDING ──(sandbox deposit)──► PENDING_CONFIRMATION ──(30% of estimatedDuration)──► DEPOSIT_ACCEPTED
//!               │                                                                                   │ (10%)
//!               │ (quote expires, no deposit)                                                       ▼
//!               └──────────────► CANCELLED                         EXECUTED ◄──(60%)── ACCEPTED
//! ```
//!
//! Sandbox outcomes leave the usual path: `swapFailed` (bridgeSwap records) goes DEPOSIT_ACCEPTED → SWAP_FAILED
//! (+10 %) → SWAP_FAILED_REFUNDED (+10 %, event BRIDGE_REFUNDED); a `delayed` deposit-address bridge waits
//! [`DELAY_MS`] in PENDING_CONFIRMATION (event DEPOSIT_ADDRESS_BRIDGE_DELAYED) before it goes on.
//!
//! A deposit into a deposit address starts a `depositAddressBridge` record directly in PENDING_CONFIRMATION
//! (events DEPOSIT_ADDRESS_DEPOSIT_DETECTED and DEPOSIT_ADDRESS_DEPOSIT_CONFIRMING), or is rejected
//! (DEPOSIT_ADDRESS_BRIDGE_REJECTED, then SDA_REFUND_COMPLETED: the deposit goes back to the address's refund
//! address, else to its sender).
//! Events: BRIDGE_PENDING at commit, BRIDGE_ACCEPTED on ACCEPTED, BRIDGE_EXECUTED on EXECUTED,
//! BRIDGE_CANCELLED on CANCELLED. Durations come from the quote's `estimatedDuration` (60 s when absent); the
//! sandbox clock decides when they have passed.
//!
//! Records are handled as JSON objects and always re-validated through the contract's types; an event is the
//! record's members cut down to the members its schema component declares (read from the OpenAPI document),
//! so no member list is written here.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use anyhow::{anyhow, Context};
use bridge_contract::{BridgeRecord, DateString, WebhookEvent, OPENAPI_JSON};
use serde_json::{json, Map, Value};

use crate::ids;
use crate::store::{NewEvent, StoredBridge};

pub const DEFAULT_DURATION_MS: i64 = 60_000;

pub fn iso(ms: i64) -> String {
    DateString::from_millis(ms).map(|d| d.to_string()).unwrap_or_default()
}

/// The property names of a schema component, from the bundled document.
fn component_properties(name: &str) -> Option<&'static BTreeSet<String>> {
    static MAP: OnceLock<HashMap<String, BTreeSet<String>>> = OnceLock::new();
    let map = MAP.get_or_init(|| {
        let doc: Value = serde_json::from_str(OPENAPI_JSON).expect("the bundled document is JSON");
        doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()))
            .collect()
    });
    map.get(name)
}

/// The record's family tag (`bridge` when absent).
pub fn family(record: &Value) -> &str {
    record.get("_tag").and_then(Value::as_str).unwrap_or("bridge")
}

/// A bridge event of `kind` (`BRIDGE_PENDING`, ...) from a record.
pub fn bridge_event(kind: &str, record: &Value) -> anyhow::Result<WebhookEvent> {
    bridge_event_with(kind, record, Map::new())
}

/// A bridge event with members the record does not have (`reason` of `BRIDGE_REFUNDED`).
pub fn bridge_event_with(kind: &str, record: &Value, extra: Map<String, Value>) -> anyhow::Result<WebhookEvent> {
    let swap = family(record) == "bridgeSwap";
    let kind_name: String = kind.trim_start_matches("BRIDGE_").split('_').map(|w| {
        let mut c = w.chars();
        c.next().map(|f| f.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase()).unwrap_or_default()
    }).collect();
    let component = format!("Bridge{kind_name}{}Event", if swap { "BridgeSwap" } else { "Bridge" });
    let allowed = component_properties(&component).ok_or_else(|| anyhow!("no event component {component}"))?;
    let mut event: Map<String, Value> = record.as_object().cloned().unwrap_or_default().into_iter().filter(|(k, _)| allowed.contains(k)).collect();
    event.extend(extra);
    event.insert("_tag".into(), json!(kind));
    event.insert("type".into(), json!(if swap { "bridgeSwap" } else { "bridge" }));
    serde_json::from_value(Value::Object(event)).with_context(|| format!("building {component}"))
}

/// The event a lifecycle step emits; `BRIDGE_REFUNDED` names why the deposit was refunded.
pub fn step_event(kind: &str, record: &Value) -> anyhow::Result<WebhookEvent> {
    let mut extra = Map::new();
    if kind == "BRIDGE_REFUNDED" {
        extra.insert("reason".into(), json!(record["state"].as_str().map(|s| s.trim_end_matches("_REFUNDED")).unwrap_or("SWAP_FAILED")));
    }
    bridge_event_with(kind, record, extra)
}

/// An event ready to append, with a deterministic id.
pub fn new_event(project: &str, now_ms: i64, counter: u64, event: WebhookEvent, webhook_url: Option<String>) -> NewEvent {
    NewEvent { id: format!("evt_{}", ids::hex_digits(counter ^ 0x4556_0000_0000_0000, 24)), project: project.to_owned(), created_ms: now_ms, event, webhook_url }
}

fn duration(record: &Value) -> i64 {
    record.get("estimatedDuration").and_then(Value::as_f64).map(|d| d as i64).filter(|d| *d > 0).unwrap_or(DEFAULT_DURATION_MS)
}

fn set_state(bridge: &mut StoredBridge, record: Value, state: &str, now_ms: i64, next_ms: Option<i64>) -> anyhow::Result<()> {
    let mut record = record;
    record["state"] = json!(state);
    bridge.record = serde_json::from_value::<BridgeRecord>(record.clone()).with_context(|| format!("record in state {state}"))?;
    bridge.state = state.to_owned();
    bridge.updated_ms = now_ms;
    bridge.next_ms = next_ms;
    Ok(())
}

/// The depositor paid: PENDING → PENDING_CONFIRMATION.
pub fn deposit_seen(bridge: &mut StoredBridge, now_ms: i64, tx_hash: &str, block: i64) -> anyhow::Result<()> {
    let mut record = serde_json::to_value(&bridge.record)?;
    let confirm = duration(&record) * 3 / 10;
    record["depositTxHash"] = json!(tx_hash);
    record["depositDiscoveredAt"] = json!(iso(now_ms));
    record["expectedDepositConfirmedAt"] = json!(iso(now_ms + confirm));
    record["expectedDepositConfirmedAtBlock"] = json!(block + 12);
    set_state(bridge, record, "PENDING_CONFIRMATION", now_ms, Some(now_ms + confirm))
}

/// The plan that fails a swap after the deposit (`outcome: swapFailed`).
pub const PLAN_SWAP_FAILED: &str = "swapFailed";
/// The plan that delays a deposit-address bridge once (`outcome: delayed`).
pub const PLAN_DELAYED: &str = "delayed";
/// How long a delayed deposit-address bridge waits before it goes on.
pub const DELAY_MS: i64 = 30_000;

/// Moves a bridge whose time has come one step on; returns the event kinds it emits.
pub fn step(bridge: &mut StoredBridge, now_ms: i64, seed: u64) -> anyhow::Result<Vec<&'static str>> {
    let mut record = serde_json::to_value(&bridge.record)?;
    let d = duration(&record);
    let plan = bridge.plan.clone();
    match (bridge.state.as_str(), plan.as_deref()) {
        ("PENDING_CONFIRMATION", Some(PLAN_DELAYED)) => {
            // The delay is over: the deposit goes on from here.
            bridge.plan = None;
            bridge.next_ms = Some(now_ms + d * 3 / 10);
            bridge.updated_ms = now_ms;
            return Ok(vec![]);
        }
        ("DEPOSIT_ACCEPTED", Some(PLAN_SWAP_FAILED)) => {
            record["failedAt"] = json!(iso(now_ms));
            set_state(bridge, record, "SWAP_FAILED", now_ms, Some(now_ms + d / 10))?;
            return Ok(vec![]);
        }
        ("SWAP_FAILED", _) => {
            let token_in = record["tokenIn"].clone();
            record["refundTxHash"] = json!(ids::tx_hash(seed));
            record["refundTxTimestamp"] = json!(iso(now_ms));
            record["refundedToken"] = token_in;
            record["refundedAmount"] = record["amountIn"].clone();
            record["refundedChain"] = record["chainIn"].clone();
            set_state(bridge, record, "SWAP_FAILED_REFUNDED", now_ms, None)?;
            bridge.plan = None;
            return Ok(vec!["BRIDGE_REFUNDED"]);
        }
        _ => {}
    }
    match bridge.state.as_str() {
        "PENDING" => {
            record["cancelledAt"] = json!(iso(now_ms));
            set_state(bridge, record, "CANCELLED", now_ms, None)?;
            Ok(vec!["BRIDGE_CANCELLED"])
        }
        "PENDING_CONFIRMATION" => {
            record["depositCommittedAt"] = json!(iso(now_ms));
            record["depositConfirmedAt"] = json!(iso(now_ms));
            record["isConfirmed"] = json!(true);
            set_state(bridge, record, "DEPOSIT_ACCEPTED", now_ms, Some(now_ms + d / 10))?;
            Ok(vec![])
        }
        "DEPOSIT_ACCEPTED" => {
            set_state(bridge, record, "ACCEPTED", now_ms, Some(now_ms + d * 6 / 10))?;
            Ok(vec!["BRIDGE_ACCEPTED"])
        }
        "ACCEPTED" => {
            record["withdrawTxHash"] = json!(ids::tx_hash(seed));
            record["withdrawCommittedAt"] = json!(iso(now_ms));
            set_state(bridge, record, "EXECUTED", now_ms, None)?;
            Ok(vec!["BRIDGE_EXECUTED"])
        }
        other => {
            bridge.next_ms = None;
            Err(anyhow!("bridge {} in state {other} has nothing due", bridge.id))
        }
    }
}
