//! The caller's project as a whole: its clock (`GET /sandbox/clock`, `POST /sandbox/clock/advance`) and its
//! reset (`POST /sandbox/reset`). Each project's clock is kept in the store ([`crate::infra::clock`]), so these act on
//! every instance sharing a database at once.

use bridge_contract::operations::{SandboxAdvanceClockError, SandboxGetClockError, SandboxResetProjectError};
use bridge_contract::{InvalidRequest, SandboxAdvanceClockRequest, SandboxClock, SandboxReset, SandboxResetDeleted};
use bridge_server::Caller;

use crate::domain::records::date;
use crate::infra::clock::{base_ms, ProjectClock, LATEST_MS};
use crate::infra::core::Core;
use crate::pipeline::lifecycle;

/// `GET /sandbox/clock`: the caller's project time.
pub async fn get_clock(core: &Core, caller: &Caller) -> Result<SandboxClock, SandboxGetClockError> {
    Ok(SandboxClock { now: date(core.now_of(&caller.project_id).await?) })
}

/// `POST /sandbox/clock/advance`: moves the caller's project clock, then every bridge whose time has come.
pub async fn advance_clock(
    core: &Core,
    caller: &Caller,
    body: SandboxAdvanceClockRequest,
) -> Result<SandboxClock, SandboxAdvanceClockError> {
    let project = &caller.project_id;
    let refused = || InvalidRequest::new(format!("the project clock cannot be advanced past {}", date(LATEST_MS)));
    let ms = i64::try_from(body.ms).map_err(|_| refused())?;
    core.project_clock(project).await?; // first seen: from the sandbox's time
    let limit = ProjectClock::advance_limit(base_ms(core.clock.mode()), ms).ok_or_else(refused)?;
    let clock = core.store.advance_project_clock(project, ms, limit).await?.ok_or_else(refused)?;
    let now = core.answer(project, &clock);
    tracing::info!(project = %project, ms, now = %date(now), "project clock advanced");
    lifecycle::advance(core).await?;
    Ok(SandboxClock { now: date(now) })
}

/// `POST /sandbox/reset`: deletes everything of the caller's project and sets its clock to the sandbox's time.
pub async fn reset(core: &Core, caller: &Caller) -> Result<SandboxReset, SandboxResetProjectError> {
    let project = &caller.project_id;
    let (clock, deleted) = core.store.reset_project(project, &core.clock.project_start()).await?;
    let now = core.answer(project, &clock);
    tracing::info!(project = %project, ?deleted, "project reset");
    Ok(SandboxReset {
        now: date(now),
        deleted: SandboxResetDeleted {
            quotes: deleted.quotes,
            bridges: deleted.bridges,
            deposit_addresses: deleted.addresses,
            routing_deposit_addresses: deleted.routing_addresses,
            deposits: deleted.deposits,
            events: deleted.events,
            deliveries: deleted.deliveries,
        },
    })
}
