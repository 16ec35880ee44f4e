//! The bridge state machine and the events it emits: each transition is a function from one of the contract's state
//! types to the next (mostly the conversions `x-built-from` generates: EXECUTED is ACCEPTED plus the withdrawal),
//! and each event is built from the typed record and its new state by a generated conversion.
//!
//! ```text
//! commit ──► PENDING ──(sandbox deposit)──► PENDING_CONFIRMATION ──(30% of estimatedDuration)──► DEPOSIT_ACCEPTED
//!               │                                                                                   │ (10%)
//!               │ (quote expires, no deposit)                                                       ▼
//!               └──────────────► CANCELLED                         EXECUTED ◄──(60%)── ACCEPTED
//! ```
//!
//! Sandbox outcomes ([`Plan`]) leave the usual path, so that every state production's types have is reachable:
//! * `swapFailed` (bridgeSwap records): DEPOSIT_ACCEPTED → SWAP_FAILED (+10 %; the deposit becomes a rejection of
//!   the record, production's SWAP_FAILED record has no deposit members) → SWAP_FAILED_REFUNDED (+10 %, event
//!   BRIDGE_REFUNDED);
//! * `failed` (single-token `bridge` records, and deposit-address bridges): DEPOSIT_ACCEPTED → FAILED (+10 %, no
//!   event: production has none for it);
//! * a deposit into a CANCELLED bridgeSwap record came after the grace period: DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD
//!   → DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD_REFUNDED (+10 %, event BRIDGE_REFUNDED);
//! * a `delayed` deposit waits [`DELAY_MS`] in PENDING before it is seen and the record goes on from
//!   PENDING_CONFIRMATION.
//!
//! Events: BRIDGE_PENDING at commit, BRIDGE_ACCEPTED on ACCEPTED, BRIDGE_EXECUTED on EXECUTED, BRIDGE_CANCELLED on
//! CANCELLED, BRIDGE_REFUNDED on the two refunded states; a deposit-address bridge is reported with the events'
//! `depositAddressBridge` variants (and never with BRIDGE_PENDING, which has none), with the `addressNote` of its
//! address. A deposit-address record's states are the bridge states plus `depositAddress` (generated conversions
//! both ways), so the three families share the transitions. Durations come from the quote's `estimatedDuration`
//! (60 s when absent); the sandbox clock decides when they have passed.
//!
//! A step that finds nothing to do (a plan the record's family cannot take, such as `failed` for a swap record)
//! is [`Stuck`]: the bridge is parked where it is (no longer due), and the pass goes on with the others.

use bridge_contract::{
    BridgeAcceptedBridgeEvent, BridgeAcceptedBridgeSwapEvent, BridgeAcceptedDepositAddressBridgeEvent,
    BridgeCancelledBridgeEvent, BridgeCancelledBridgeSwapEvent, BridgeExecutedBridgeEvent,
    BridgeExecutedBridgeSwapEvent, BridgeExecutedDepositAddressBridgeEvent, BridgePendingBridgeEvent,
    BridgePendingBridgeSwapEvent, BridgeRecord, BridgeRecordBridge, BridgeRecordBridgeSwap,
    BridgeRecordDepositAddressBridge, BridgeRefundedEvent, BridgeState, BridgeSwapState, DateString,
    DepositAddressBridgeState, DepositAddressStateAccepted, DepositAddressStateDepositAccepted,
    DepositAddressStateExecuted, DepositAddressStateFailed, DepositAddressStatePendingConfirmation, Refund, Rejection,
    StateAccepted, StateCancelled, StateDepositAccepted, StateDepositReceivedAfterGracePeriod,
    StateDepositReceivedAfterGracePeriodRefunded, StateDepositReceivedAfterGracePeriodState, StateExecuted,
    StateFailed, StatePendingConfirmation, StateSwapFailed, StateSwapFailedRefunded, StateSwapFailedState,
    WebhookEvent,
};

use crate::domain::ids;
use crate::domain::records::date;
use crate::domain::records::StoredBridge;
use crate::domain::records::{self, Plan, SeenDeposit};

/// How long a record lasts when its quote has no `estimatedDuration`.
pub const DEFAULT_DURATION_MS: i64 = 60_000;
/// How long a delayed deposit waits before it is seen.
pub const DELAY_MS: i64 = 30_000;
/// Blocks between a deposit's block and the block at which it is expected to be final.
const CONFIRMATION_BLOCKS: i64 = 12;

/// A step with nothing to do: the record's state (and plan) have no next state.
#[derive(Debug)]
pub struct Stuck {
    pub state: &'static str,
    pub plan: Option<Plan>,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a record in state {} has nothing due", self.state)?;
        match &self.plan {
            Some(plan) => write!(f, " (plan {plan:?})"),
            None => Ok(()),
        }
    }
}

/// What a step leaves: when the next is due, the plan still to take, the events emitted.
struct Next {
    due_ms: Option<i64>,
    plan: Option<Plan>,
    events: Vec<WebhookEvent>,
}

impl Next {
    fn at(due_ms: i64) -> Self {
        Self { due_ms: Some(due_ms), plan: None, events: vec![] }
    }
    fn done() -> Self {
        Self { due_ms: None, plan: None, events: vec![] }
    }
    fn keeping(mut self, plan: Option<Plan>) -> Self {
        self.plan = plan;
        self
    }
    fn emitting(mut self, event: impl Into<WebhookEvent>) -> Self {
        self.events.push(event.into());
        self
    }
}

/// The record's `estimatedDuration` in ms, or [`DEFAULT_DURATION_MS`].
fn duration_ms(record: &BridgeRecord) -> i64 {
    record.common().estimated_duration.map(|d| d.as_f64() as i64).filter(|d| *d > 0).unwrap_or(DEFAULT_DURATION_MS)
}

// ------------------------------------------------------------------------------------------------- transitions

/// PENDING → PENDING_CONFIRMATION: the deposit is seen, final `confirm_ms` later.
fn seen(deposit: &SeenDeposit, at: DateString, confirm_at: DateString) -> StatePendingConfirmation {
    StatePendingConfirmation::new(deposit.tx_hash.clone(), at, confirm_at, deposit.block + CONFIRMATION_BLOCKS)
}

/// PENDING_CONFIRMATION → DEPOSIT_ACCEPTED: the deposit is final.
fn confirmed(s: &StatePendingConfirmation, at: DateString) -> StateDepositAccepted {
    StateDepositAccepted {
        deposit_confirmed_at: Some(at),
        is_confirmed: Some(true),
        ..StateDepositAccepted::from_state_pending_confirmation(s, at)
    }
}

/// ACCEPTED → EXECUTED: paid out by `withdraw_tx_hash`.
fn executed(s: &StateAccepted, withdraw_tx_hash: String, at: DateString) -> StateExecuted {
    StateExecuted::from_state_accepted(s, withdraw_tx_hash, at)
}

/// A rejected deposit (kept with the record, and the refunded states' deposit members).
fn rejection(tx_hash: &str, at: DateString, reason: &str) -> Rejection {
    Rejection {
        deposit_tx_hash: tx_hash.to_owned(),
        deposit_committed_at: at,
        reason: reason.to_owned(),
        additional_data: None,
    }
}

/// The refund of a record's rejected deposit: the deposited token and amount, back on chainIn.
fn refund(record: &BridgeRecord, at: DateString, seed: u64) -> Refund {
    let common = record.common();
    Refund {
        refund_tx_hash: ids::tx_hash(seed),
        refund_tx_timestamp: at,
        refunded_token: records::deposited_token(record).to_owned(),
        refunded_amount: common.amount_in.clone(),
        refunded_chain: common.chain_in.clone(),
    }
}

// ------------------------------------------------------------------------------------------------- steps

/// PENDING → PENDING_CONFIRMATION for a record of any family: its deposit is seen at `at_ms`.
pub fn see_deposit(bridge: &mut StoredBridge, deposit: &SeenDeposit, at_ms: i64) -> Result<(), Stuck> {
    let confirm_ms = at_ms + duration_ms(&bridge.record) * 3 / 10;
    let s = seen(deposit, date(at_ms), date(confirm_ms));
    let stuck = |record: &BridgeRecord| Stuck { state: records::state_name(record), plan: None };
    match &mut bridge.record {
        BridgeRecord::Bridge(r) if matches!(r.state, BridgeState::Pending(_)) => r.state = s.into(),
        BridgeRecord::BridgeSwap(r) if matches!(r.state, BridgeSwapState::Pending(_)) => r.state = s.into(),
        BridgeRecord::DepositAddressBridge(r) => {
            let DepositAddressBridgeState::Pending(pending) = &r.state else { return Err(stuck(&bridge.record)) };
            let deposit_address = pending.deposit_address.clone();
            r.state = DepositAddressStatePendingConfirmation {
                deposit_address,
                ..DepositAddressStatePendingConfirmation::from(&s)
            }
            .into();
        }
        other => return Err(stuck(other)),
    }
    bridge.updated_ms = at_ms;
    bridge.next_ms = Some(confirm_ms);
    Ok(())
}

/// A deposit into a CANCELLED bridgeSwap record, after the grace period: DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD, with
/// the deposit as the record's rejection; refunded later.
pub fn late_deposit(bridge: &mut StoredBridge, tx_hash: &str, at_ms: i64) -> Result<(), Stuck> {
    let refund_in = duration_ms(&bridge.record) / 10;
    let BridgeRecord::BridgeSwap(r @ BridgeRecordBridgeSwap { state: BridgeSwapState::Cancelled(_), .. }) =
        &mut bridge.record
    else {
        return Err(Stuck { state: records::state_name(&bridge.record), plan: bridge.plan.clone() });
    };
    let reason = StateDepositReceivedAfterGracePeriodState::DepositReceivedAfterGracePeriod.as_str();
    let rejected = rejection(tx_hash, date(at_ms), reason);
    r.state = StateDepositReceivedAfterGracePeriod::from(&rejected).into();
    bridge.rejections.push(rejected);
    bridge.updated_ms = at_ms;
    bridge.next_ms = Some(at_ms + refund_in);
    Ok(())
}

/// The owner cancels a PENDING `bridge` or `bridgeSwap` record whose deposit was not paid
/// (`PATCH /bridge/history/bridge/{bridgeId}`): CANCELLED at `at_ms`, with its BRIDGE_CANCELLED event. A
/// deposit-address bridge (its deposit is already there), a record whose delayed deposit was paid, or a record
/// past PENDING is [`Stuck`].
pub fn cancel(bridge: &mut StoredBridge, at_ms: i64) -> Result<WebhookEvent, Stuck> {
    let stuck = |bridge: &StoredBridge| Stuck { state: records::state_name(&bridge.record), plan: bridge.plan.clone() };
    if matches!(bridge.plan, Some(Plan::Delayed(_))) {
        return Err(stuck(bridge));
    }
    let s = StateCancelled::new(date(at_ms));
    let event: WebhookEvent = match &mut bridge.record {
        BridgeRecord::Bridge(r) if matches!(r.state, BridgeState::Pending(_)) => {
            r.state = s.clone().into();
            BridgeCancelledBridgeEvent::from((&*r, &s)).into()
        }
        BridgeRecord::BridgeSwap(r) if matches!(r.state, BridgeSwapState::Pending(_)) => {
            r.state = s.clone().into();
            BridgeCancelledBridgeSwapEvent::from((&*r, &s)).into()
        }
        _ => return Err(stuck(bridge)),
    };
    bridge.updated_ms = at_ms;
    bridge.next_ms = None;
    Ok(event)
}

/// The event a record emits when it is committed: BRIDGE_PENDING (none for a deposit-address bridge, which is never
/// committed from a quote).
pub fn committed_event(record: &BridgeRecord) -> Option<WebhookEvent> {
    match record {
        BridgeRecord::Bridge(r @ BridgeRecordBridge { state: BridgeState::Pending(s), .. }) => {
            Some(BridgePendingBridgeEvent::from((r, s)).into())
        }
        BridgeRecord::BridgeSwap(r @ BridgeRecordBridgeSwap { state: BridgeSwapState::Pending(s), .. }) => {
            Some(BridgePendingBridgeSwapEvent::from((r, s)).into())
        }
        _ => None,
    }
}

/// Moves a bridge whose time has come one step on, at `at_ms`; returns the events it emits. `seed` makes up the
/// step's transaction (a withdrawal, a refund).
pub fn step(bridge: &mut StoredBridge, at_ms: i64, seed: u64) -> Result<Vec<WebhookEvent>, Stuck> {
    let d = duration_ms(&bridge.record);
    let plan = bridge.plan.take();
    let at = Moment { ms: at_ms, d, seed };
    let next = match &mut bridge.record {
        BridgeRecord::Bridge(r) => bridge_step(r, plan, &at),
        BridgeRecord::BridgeSwap(r) => swap_step(r, plan, &mut bridge.rejections, &at),
        BridgeRecord::DepositAddressBridge(r) => deposit_address_step(r, plan, &at, bridge.address_note.as_deref()),
    };
    match next {
        Ok(next) => {
            bridge.plan = next.plan;
            bridge.next_ms = next.due_ms;
            bridge.updated_ms = at_ms;
            Ok(next.events)
        }
        Err(stuck) => {
            // Parked: nothing will move it (and a pass does not meet it again).
            bridge.plan = stuck.plan.clone();
            bridge.next_ms = None;
            Err(stuck)
        }
    }
}

/// When a step happens: its time, the record's duration and the seed of what it makes up.
struct Moment {
    ms: i64,
    d: i64,
    seed: u64,
}

impl Moment {
    fn date(&self) -> DateString {
        date(self.ms)
    }
    fn after(&self, tenths: i64) -> i64 {
        self.ms + self.d * tenths / 10
    }
}

fn bridge_step(r: &mut BridgeRecordBridge, plan: Option<Plan>, at: &Moment) -> Result<Next, Stuck> {
    Ok(match (r.state.clone(), plan) {
        (BridgeState::Pending(_), Some(Plan::Delayed(deposit))) => {
            let confirm_ms = at.after(3);
            r.state = seen(&deposit, at.date(), date(confirm_ms)).into();
            Next::at(confirm_ms)
        }
        (BridgeState::Pending(_), plan) => {
            let s = StateCancelled::new(at.date());
            r.state = s.clone().into();
            Next::done().keeping(plan).emitting(BridgeCancelledBridgeEvent::from((&*r, &s)))
        }
        (BridgeState::PendingConfirmation(s), plan) => {
            r.state = confirmed(&s, at.date()).into();
            Next::at(at.after(1)).keeping(plan)
        }
        (BridgeState::DepositAccepted(s), Some(Plan::Failed)) => {
            r.state = StateFailed::from_state_deposit_accepted(&s, at.date()).into();
            Next::done()
        }
        (BridgeState::DepositAccepted(s), plan) => {
            let s = StateAccepted::from(&s);
            r.state = s.clone().into();
            Next::at(at.after(6)).keeping(plan).emitting(BridgeAcceptedBridgeEvent::from((&*r, &s)))
        }
        (BridgeState::Accepted(s), plan) => {
            let s = executed(&s, ids::tx_hash(at.seed), at.date());
            r.state = s.clone().into();
            Next::done().keeping(plan).emitting(BridgeExecutedBridgeEvent::from((&*r, &s)))
        }
        (other, plan) => return Err(Stuck { state: other.tag(), plan }),
    })
}

fn swap_step(
    r: &mut BridgeRecordBridgeSwap,
    plan: Option<Plan>,
    rejections: &mut Vec<Rejection>,
    at: &Moment,
) -> Result<Next, Stuck> {
    let refund_of = |r: &BridgeRecordBridgeSwap| refund(&BridgeRecord::BridgeSwap(r.clone()), at.date(), at.seed);
    Ok(match (r.state.clone(), plan) {
        (BridgeSwapState::Pending(_), Some(Plan::Delayed(deposit))) => {
            let confirm_ms = at.after(3);
            r.state = seen(&deposit, at.date(), date(confirm_ms)).into();
            Next::at(confirm_ms)
        }
        (BridgeSwapState::Pending(_), plan) => {
            let s = StateCancelled::new(at.date());
            r.state = s.clone().into();
            Next::done().keeping(plan).emitting(BridgeCancelledBridgeSwapEvent::from((&*r, &s)))
        }
        (BridgeSwapState::PendingConfirmation(s), plan) => {
            r.state = confirmed(&s, at.date()).into();
            Next::at(at.after(1)).keeping(plan)
        }
        (BridgeSwapState::DepositAccepted(s), Some(Plan::SwapFailed)) => {
            // The swap failed: the deposit is rejected (kept as the record's rejection) and will be refunded.
            rejections.push(rejection(&s.deposit_tx_hash, at.date(), StateSwapFailedState::SwapFailed.as_str()));
            r.state = StateSwapFailed::new().into();
            Next::at(at.after(1))
        }
        // A swap record has no FAILED state: `failed` (a deposit into an address that swaps) parks it.
        (state @ BridgeSwapState::DepositAccepted(_), plan @ Some(Plan::Failed)) => {
            return Err(Stuck { state: state.tag(), plan })
        }
        (BridgeSwapState::DepositAccepted(s), plan) => {
            let s = StateAccepted::from(&s);
            r.state = s.clone().into();
            Next::at(at.after(6)).keeping(plan).emitting(BridgeAcceptedBridgeSwapEvent::from((&*r, &s)))
        }
        (BridgeSwapState::Accepted(s), plan) => {
            let s = executed(&s, ids::tx_hash(at.seed), at.date());
            r.state = s.clone().into();
            Next::done().keeping(plan).emitting(BridgeExecutedBridgeSwapEvent::from((&*r, &s)))
        }
        (state @ BridgeSwapState::SwapFailed(_), plan) => {
            let Some(rejected) = rejections.last() else { return Err(Stuck { state: state.tag(), plan }) };
            let s = StateSwapFailedRefunded::from((rejected, &refund_of(r)));
            r.state = s.clone().into();
            Next::done().emitting(BridgeRefundedEvent::from((&*r, &s)))
        }
        (state @ BridgeSwapState::DepositReceivedAfterGracePeriod(_), plan) => {
            let Some(rejected) = rejections.last() else { return Err(Stuck { state: state.tag(), plan }) };
            let s = StateDepositReceivedAfterGracePeriodRefunded::from((rejected, &refund_of(r)));
            r.state = s.clone().into();
            Next::done().emitting(BridgeRefundedEvent::from((&*r, &s)))
        }
        (other, plan) => return Err(Stuck { state: other.tag(), plan }),
    })
}

fn deposit_address_step(
    r: &mut BridgeRecordDepositAddressBridge,
    plan: Option<Plan>,
    at: &Moment,
    address_note: Option<&str>,
) -> Result<Next, Stuck> {
    let note = address_note.map(str::to_owned);
    Ok(match (r.state.clone(), plan) {
        (DepositAddressBridgeState::Pending(p), Some(Plan::Delayed(deposit))) => {
            let confirm_ms = at.after(3);
            let s = seen(&deposit, at.date(), date(confirm_ms));
            r.state = DepositAddressStatePendingConfirmation {
                deposit_address: p.deposit_address,
                ..DepositAddressStatePendingConfirmation::from(&s)
            }
            .into();
            Next::at(confirm_ms)
        }
        (DepositAddressBridgeState::PendingConfirmation(s), plan) => {
            let next = confirmed(&StatePendingConfirmation::from(&s), at.date());
            r.state = DepositAddressStateDepositAccepted {
                deposit_address: s.deposit_address,
                ..DepositAddressStateDepositAccepted::from(&next)
            }
            .into();
            Next::at(at.after(1)).keeping(plan)
        }
        (DepositAddressBridgeState::DepositAccepted(s), Some(Plan::Failed)) => {
            let failed = StateFailed::from_state_deposit_accepted(&StateDepositAccepted::from(&s), at.date());
            r.state = DepositAddressStateFailed {
                deposit_address: s.deposit_address,
                ..DepositAddressStateFailed::from(&failed)
            }
            .into();
            Next::done()
        }
        (DepositAddressBridgeState::DepositAccepted(s), plan) => {
            let accepted = StateAccepted::from(&StateDepositAccepted::from(&s));
            let s = DepositAddressStateAccepted {
                deposit_address: s.deposit_address,
                ..DepositAddressStateAccepted::from(&accepted)
            };
            r.state = s.clone().into();
            let event = BridgeAcceptedDepositAddressBridgeEvent {
                address_note: note,
                ..BridgeAcceptedDepositAddressBridgeEvent::from((&*r, &s))
            };
            Next::at(at.after(6)).keeping(plan).emitting(event)
        }
        (DepositAddressBridgeState::Accepted(s), plan) => {
            let Some(address) = s.deposit_address.clone() else {
                return Err(Stuck { state: r.state.tag(), plan });
            };
            let paid = executed(&StateAccepted::from(&s), ids::tx_hash(at.seed), at.date());
            let s = DepositAddressStateExecuted::from_state_executed(&paid, address);
            r.state = s.clone().into();
            let event = BridgeExecutedDepositAddressBridgeEvent {
                address_note: note,
                ..BridgeExecutedDepositAddressBridgeEvent::from((&*r, &s))
            };
            Next::done().keeping(plan).emitting(event)
        }
        (other, plan) => return Err(Stuck { state: other.tag(), plan }),
    })
}
