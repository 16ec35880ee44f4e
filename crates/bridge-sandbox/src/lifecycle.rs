//! The bridge state machine and the events it emits.
//!
//! ```text
//! commit ──► PENDING ──(sandbox deposit)──► PENDING_CONFIRMATION ──(30% of estimatedDuration)──► DEPOSIT_ACCEPTED
//!               │                                                                                   │ (10%)
//!               │ (quote expires, no deposit)                                                       ▼
//!               └──────────────► CANCELLED                         EXECUTED ◄──(60%)── ACCEPTED
//! ```
//!
//! Sandbox outcomes leave the usual path, so that every state production's types have is reachable:
//! * `swapFailed` (bridgeSwap records): DEPOSIT_ACCEPTED → SWAP_FAILED (+10 %; the deposit becomes a rejection of
//!   the record, production's SWAP_FAILED record has no deposit members) → SWAP_FAILED_REFUNDED (+10 %, event
//!   BRIDGE_REFUNDED);
//! * `failed` (single-token `bridge` records, and deposit-address bridges): DEPOSIT_ACCEPTED → FAILED (+10 %, no
//!   event: production has none for it);
//! * a deposit into a CANCELLED bridgeSwap record came after the grace period: DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD
//!   → DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD_REFUNDED (+10 %, event BRIDGE_REFUNDED);
//! * a `delayed` deposit-address bridge waits [`DELAY_MS`] in PENDING (event DEPOSIT_ADDRESS_BRIDGE_DELAYED)
//!   before its deposit is seen and it goes on from PENDING_CONFIRMATION.
//!
//! A deposit into a deposit address starts a `depositAddressBridge` record in PENDING_CONFIRMATION (events
//! DEPOSIT_ADDRESS_DEPOSIT_DETECTED and DEPOSIT_ADDRESS_DEPOSIT_CONFIRMING), or is rejected
//! (DEPOSIT_ADDRESS_BRIDGE_REJECTED, then SDA_REFUND_COMPLETED: the deposit goes back to the address's refund
//! address, else to its sender).
//! Events: BRIDGE_PENDING at commit, BRIDGE_ACCEPTED on ACCEPTED, BRIDGE_EXECUTED on EXECUTED,
//! BRIDGE_CANCELLED on CANCELLED, BRIDGE_REFUNDED on the two refunded states; a deposit-address bridge is
//! reported with the events' `depositAddressBridge` variants (and never with BRIDGE_PENDING, which has none).
//! Durations come from the quote's `estimatedDuration` (60 s when absent); the sandbox clock decides when they
//! have passed.
//!
//! Records are handled as JSON objects and always re-validated through the contract's types; an event is the
//! record's members cut down to the members its schema component declares (read from the OpenAPI document),
//! so no member list is written here.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use anyhow::{anyhow, Context};
use bridge_contract::{BridgeRecord, DateString, Rejection, WebhookEvent, OPENAPI_JSON};
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
            .map(|(k, v)| {
                (k.clone(), v["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default())
            })
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

/// A bridge event with members the record does not have (`addressNote` of a deposit-address bridge's events).
/// The event's component follows production's shapes: a `type` variant per record family for PENDING, ACCEPTED
/// and EXECUTED; the two shapes without `type` of CANCELLED; the one swap-shaped REFUNDED.
pub fn bridge_event_with(kind: &str, record: &Value, extra: Map<String, Value>) -> anyhow::Result<WebhookEvent> {
    let family = family(record);
    let kind_name: String = kind
        .trim_start_matches("BRIDGE_")
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase()).unwrap_or_default()
        })
        .collect();
    let variant = match family {
        "bridgeSwap" => "BridgeSwap",
        "depositAddressBridge" => "DepositAddressBridge",
        _ => "Bridge",
    };
    let component = if kind == "BRIDGE_REFUNDED" {
        "BridgeRefundedEvent".to_owned()
    } else {
        format!("Bridge{kind_name}{variant}Event")
    };
    let allowed = component_properties(&component).ok_or_else(|| anyhow!("no event component {component}"))?;
    let mut event: Map<String, Value> =
        record.as_object().cloned().unwrap_or_default().into_iter().filter(|(k, _)| allowed.contains(k)).collect();
    event.extend(extra.into_iter().filter(|(k, _)| allowed.contains(k)));
    event.insert("_tag".into(), json!(kind));
    if allowed.contains("type") {
        event.insert("type".into(), json!(family));
    }
    serde_json::from_value(Value::Object(event)).with_context(|| format!("building {component}"))
}

/// An event ready to append, with a deterministic id.
pub fn new_event(
    project: &str,
    now_ms: i64,
    counter: u64,
    event: WebhookEvent,
    webhook_url: Option<String>,
) -> NewEvent {
    NewEvent {
        id: format!("evt_{}", ids::hex_digits(counter ^ 0x4556_0000_0000_0000, 24)),
        project: project.to_owned(),
        created_ms: now_ms,
        event,
        webhook_url,
    }
}

fn duration(record: &Value) -> i64 {
    record
        .get("estimatedDuration")
        .and_then(Value::as_f64)
        .map(|d| d as i64)
        .filter(|d| *d > 0)
        .unwrap_or(DEFAULT_DURATION_MS)
}

fn set_state(
    bridge: &mut StoredBridge,
    record: Value,
    state: &str,
    now_ms: i64,
    next_ms: Option<i64>,
) -> anyhow::Result<()> {
    let mut record = record;
    record["state"] = json!(state);
    bridge.record =
        serde_json::from_value::<BridgeRecord>(record.clone()).with_context(|| format!("record in state {state}"))?;
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

/// A deposit arrived for a CANCELLED bridgeSwap record: DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD, with the deposit as
/// the record's rejection; refunded later.
pub fn late_deposit(bridge: &mut StoredBridge, now_ms: i64, tx_hash: &str) -> anyhow::Result<()> {
    let mut record = serde_json::to_value(&bridge.record)?;
    for member in ["cancelledAt"] {
        record.as_object_mut().map(|r| r.remove(member));
    }
    let reason = "DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD";
    record["depositTxHash"] = json!(tx_hash);
    record["depositCommittedAt"] = json!(iso(now_ms));
    record["reason"] = json!(reason);
    bridge.rejections.push(rejection(tx_hash, now_ms, reason)?);
    let refund_in = duration(&record) / 10;
    set_state(bridge, record, reason, now_ms, Some(now_ms + refund_in))
}

fn rejection(tx_hash: &str, at_ms: i64, reason: &str) -> anyhow::Result<Rejection> {
    Ok(serde_json::from_value(json!({"depositTxHash": tx_hash, "depositCommittedAt": iso(at_ms), "reason": reason}))?)
}

/// The members of a record's deposit (its state's deposit block), removed from the record.
const DEPOSIT_MEMBERS: [&str; 9] = [
    "depositTxHash",
    "depositCommittedAt",
    "depositDiscoveredAt",
    "depositConfirmedAt",
    "expectedDepositConfirmedAt",
    "expectedDepositConfirmedAtBlock",
    "preSwapTxHash",
    "preSwapCommittedAt",
    "isConfirmed",
];

/// The refund of a rejected deposit (the refund block of the refunded states).
fn refund(record: &mut Value, now_ms: i64, seed: u64) {
    let token_in = record.get("tokenIn").or_else(|| record.get("token")).cloned().unwrap_or_default();
    record["refundTxHash"] = json!(ids::tx_hash(seed));
    record["refundTxTimestamp"] = json!(iso(now_ms));
    record["refundedToken"] = token_in;
    record["refundedAmount"] = record["amountIn"].clone();
    record["refundedChain"] = record["chainIn"].clone();
}

/// The plan that fails a swap after the deposit (`outcome: swapFailed`).
pub const PLAN_SWAP_FAILED: &str = "swapFailed";
/// The plan that fails a bridge after the deposit (`outcome: failed`).
pub const PLAN_FAILED: &str = "failed";
/// The plan that delays a deposit-address bridge once (`outcome: delayed`), with the deposit it waits to see.
pub fn plan_delayed(tx_hash: &str, block: i64) -> String {
    format!("{PLAN_DELAYED}:{tx_hash}:{block}")
}

/// The deposit a delayed deposit-address bridge waits to see, if `plan` delays it.
pub fn delayed_deposit(plan: &str) -> Option<(String, i64)> {
    let mut parts = plan.strip_prefix(PLAN_DELAYED)?.strip_prefix(':')?.split(':');
    let tx_hash = parts.next()?.to_owned();
    let block = parts.next()?.parse().ok()?;
    Some((tx_hash, block))
}

const PLAN_DELAYED: &str = "delayed";
/// How long a delayed deposit-address bridge waits before it goes on.
pub const DELAY_MS: i64 = 30_000;

/// Moves a bridge whose time has come one step on; returns the event kinds it emits.
pub fn step(bridge: &mut StoredBridge, now_ms: i64, seed: u64) -> anyhow::Result<Vec<&'static str>> {
    let mut record = serde_json::to_value(&bridge.record)?;
    let d = duration(&record);
    let plan = bridge.plan.clone();
    match (bridge.state.as_str(), plan.as_deref()) {
        ("PENDING", Some(plan)) if delayed_deposit(plan).is_some() => {
            // The delay is over: the deposit is seen and the bridge goes on from here.
            let (tx_hash, block) = delayed_deposit(plan).unwrap_or_default();
            bridge.plan = None;
            deposit_seen(bridge, now_ms, &tx_hash, block)?;
            return Ok(vec![]);
        }
        ("DEPOSIT_ACCEPTED", Some(PLAN_SWAP_FAILED)) => {
            // The swap failed: the deposit is rejected (kept as the record's rejection) and will be refunded.
            let tx_hash = record["depositTxHash"].as_str().unwrap_or_default().to_owned();
            bridge.rejections.push(rejection(&tx_hash, now_ms, "SWAP_FAILED")?);
            for member in DEPOSIT_MEMBERS {
                record.as_object_mut().map(|r| r.remove(member));
            }
            set_state(bridge, record, "SWAP_FAILED", now_ms, Some(now_ms + d / 10))?;
            return Ok(vec![]);
        }
        ("DEPOSIT_ACCEPTED", Some(PLAN_FAILED)) => {
            record["failedAt"] = json!(iso(now_ms));
            set_state(bridge, record, "FAILED", now_ms, None)?;
            bridge.plan = None;
            return Ok(vec![]);
        }
        ("SWAP_FAILED", _) | ("DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD", _) => {
            let rejected = bridge
                .rejections
                .last()
                .cloned()
                .ok_or_else(|| anyhow!("bridge {} has no rejected deposit to refund", bridge.id))?;
            record["depositTxHash"] = json!(rejected.deposit_tx_hash);
            record["depositCommittedAt"] = json!(rejected.deposit_committed_at);
            record["reason"] = json!(rejected.reason);
            refund(&mut record, now_ms, seed);
            let refunded = format!("{}_REFUNDED", bridge.state);
            set_state(bridge, record, &refunded, now_ms, None)?;
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
