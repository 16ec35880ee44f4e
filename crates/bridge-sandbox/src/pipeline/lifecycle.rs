//! The lifecycle pass: the job that moves every bridge whose time has come one step along its state machine
//! ([`crate::domain::lifecycle`]), saving each step with the events it emits (and their outbox rows) in one
//! transaction. Run by the server every 250 ms (`crate::operate::workers`) over every project; and over the
//! advancing project alone by each clock advance (`POST /sandbox/clock/advance`: [`settle_project`]), which answers
//! only once that project has no bridge due. The deliverer ([`super::delivery`]) takes the outbox rows from there.

use crate::domain::lifecycle;
use crate::domain::records;
use crate::infra::clock::{base_ms, ClockMode};
use crate::infra::core::Core;
use crate::infra::store::{Counter, StoreResult, StoredBridge};

/// Bridges moved per store read of a lifecycle pass.
const PASS_BATCH: u64 = 100;

/// The lifecycle pass: moves every bridge whose time has come on its project's clock, one step each, until none
/// is due; returns how many steps were taken. One pass at a time; the sandbox's clock is synced with the store
/// first (shared by instances), and the latest times this instance answered per project are stored. On a store
/// shared by instances it skips the bridges another instance's pass holds (leases: [`crate::infra::store::BridgeStore::due_bridges`]).
pub async fn advance(core: &Core) -> StoreResult<usize> {
    let _pass = core.pass.lock().await;
    let (value, floor) = core.store.sync_clock(core.clock.take_sync()).await?;
    core.clock.adopt(value, floor);
    if core.clock.mode() == ClockMode::Real {
        core.store.keep_project_floors(&core.floors.take_changed()).await?;
    }
    let mut steps = 0;
    loop {
        let due = core.store.due_bridges(base_ms(core.clock.mode()), PASS_BATCH).await?;
        if due.is_empty() {
            return Ok(steps);
        }
        steps += step_each(core, due).await?;
    }
}

/// The pass of a clock advance: moves every bridge of `project` whose time has come, taking over those another
/// instance's pass holds ([`crate::infra::store::BridgeStore::take_due_bridges_of`]), until a read finds none
/// due; returns how many steps this instance took. So when the advance answers, every bridge it made due is in
/// its new state on every instance (issue 36: it used to skip the bridges another instance's pass had just
/// leased, and answered while that instance was still stepping them). Another project's due bridges are left to
/// the passes of [`advance`]: an advance never waits for another tenant's work.
pub async fn settle_project(core: &Core, project: &str) -> StoreResult<usize> {
    let mut steps = 0;
    loop {
        let due = core.store.take_due_bridges_of(project, base_ms(core.clock.mode()), PASS_BATCH).await?;
        if due.is_empty() {
            return Ok(steps);
        }
        steps += step_each(core, due).await?;
    }
}

/// Moves each of `due` one step and saves it with its events; how many were saved (one saved by someone else
/// meanwhile is left: read again, if still due, by the caller's next round).
async fn step_each(core: &Core, due: Vec<StoredBridge>) -> StoreResult<usize> {
    let mut steps = 0;
    for mut bridge in due {
        let at = bridge.next_ms.unwrap_or(bridge.updated_ms);
        let seed = core.next(Counter::Tx).await?;
        let events = match lifecycle::step(&mut bridge, at, seed) {
            Ok(events) => events,
            Err(stuck) => {
                tracing::warn!(bridge = %bridge.id, error = %stuck, "lifecycle step failed; parking the bridge");
                vec![]
            }
        };
        let new_events = core.new_events(&bridge.project, at, events, &bridge.webhook_url).await?;
        if !core.store.save_bridge(&bridge, &new_events).await? {
            tracing::debug!(bridge = %bridge.id, "changed meanwhile; stepped again from its new state");
            continue;
        }
        tracing::info!(bridge = %bridge.id, state = records::state_name(&bridge.record), "bridge advanced");
        steps += 1;
    }
    Ok(steps)
}
