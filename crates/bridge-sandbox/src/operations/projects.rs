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

impl Core {
    /// `GET /sandbox/clock`: the caller's project time.
    pub async fn sandbox_get_clock(&self, caller: &Caller) -> Result<SandboxClock, SandboxGetClockError> {
        Ok(SandboxClock { now: date(self.now_of(&caller.project_id).await?) })
    }

    /// `POST /sandbox/clock/advance`: moves the caller's project clock, then every bridge of the project whose time
    /// has come, and answers once none is due.
    pub async fn sandbox_advance_clock(
        &self,
        caller: &Caller,
        body: SandboxAdvanceClockRequest,
    ) -> Result<SandboxClock, SandboxAdvanceClockError> {
        let project = &caller.project_id;
        let refused = || InvalidRequest::new(format!("the project clock cannot be advanced past {}", date(LATEST_MS)));
        let ms = i64::try_from(body.ms).map_err(|_| refused())?;
        self.project_clock(project).await?; // first seen: from the sandbox's time
        let limit = ProjectClock::advance_limit(base_ms(self.clock.mode()), ms).ok_or_else(refused)?;
        let clock = self.store.advance_project_clock(project, ms, limit).await?.ok_or_else(refused)?;
        let now = self.answer(project, &clock);
        tracing::info!(project = %project, ms, now = %date(now), "project clock advanced");
        // Done when it answers: every bridge of the project the advance made due is in its new state, on every
        // instance (another instance's pass holding one is waited for or taken over).
        lifecycle::settle_project(self, project).await?;
        Ok(SandboxClock { now: date(now) })
    }

    /// `POST /sandbox/reset`: deletes everything of the caller's project and sets its clock to the sandbox's time.
    pub async fn sandbox_reset_project(&self, caller: &Caller) -> Result<SandboxReset, SandboxResetProjectError> {
        let project = &caller.project_id;
        let (clock, deleted) = self.store.reset_project(project, &self.clock.project_start()).await?;
        let now = self.answer(project, &clock);
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
}
