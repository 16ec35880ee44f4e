//! The lifecycle pass: the job that moves every bridge whose time has come one step along its state machine
//! ([`crate::domain::lifecycle`]), saving each step with the events it emits (and their outbox rows) in one
//! transaction. Run by the server every 250 ms (`crate::operate::workers`) and after each clock advance
//! (`POST /sandbox/clock/advance`); the deliverer ([`super::delivery`]) takes the outbox rows from there.

use crate::domain::lifecycle;
use crate::domain::records;
use crate::infra::clock::{base_ms, ClockMode};
use crate::infra::core::Core;
use crate::infra::store::{Counter, StoreResult};

/// Bridges moved per store read of a lifecycle pass.
const PASS_BATCH: u64 = 100;

/// The lifecycle pass: moves every bridge whose time has come on its project's clock, one step each, until none
/// is due; returns how many steps were taken. One pass at a time; the sandbox's clock is synced with the store
/// first (shared by instances), and the latest times this instance answered per project are stored.
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
                // A request changed it since it was taken: it is read again (if still due) by the next round.
                tracing::debug!(bridge = %bridge.id, "changed meanwhile; stepped again from its new state");
                continue;
            }
            tracing::info!(bridge = %bridge.id, state = records::state_name(&bridge.record), "bridge advanced");
            steps += 1;
        }
    }
}
