//! A project's fault profile (`GET`, `PUT` and `DELETE /sandbox/faults`): which faults the sandbox injects into the
//! caller's own requests and webhook deliveries ([`crate::infra::faults`] keeps and applies them). Only the
//! caller's project is read or changed.

use bridge_contract::operations::{SandboxClearFaultsError, SandboxGetFaultsError, SandboxSetFaultsError};
use bridge_contract::{InvalidRequest, SandboxFaultProfile, SandboxFaultSource, SandboxFaults};
use bridge_server::Caller;

use crate::domain::faults;
use crate::infra::core::Core;

impl Core {
    /// `GET /sandbox/faults`: the profile in force for the caller's project, and whether it is its own.
    pub async fn sandbox_get_faults(&self, caller: &Caller) -> Result<SandboxFaults, SandboxGetFaultsError> {
        Ok(self.faults.answer(&caller.project_id))
    }

    /// `PUT /sandbox/faults`: `profile` becomes the caller's own (422 when a group's fractions add up to more
    /// than 1: nothing is changed).
    pub async fn sandbox_set_faults(
        &self,
        caller: &Caller,
        profile: SandboxFaultProfile,
    ) -> Result<SandboxFaults, SandboxSetFaultsError> {
        faults::check(&profile).map_err(InvalidRequest::new)?;
        self.faults.set(&caller.project_id, &profile).await?;
        let shown = serde_json::to_string(&profile).unwrap_or_default();
        tracing::info!(project = %caller.project_id, profile = %shown, "fault profile set");
        Ok(SandboxFaults { profile, source: SandboxFaultSource::Project })
    }

    /// `DELETE /sandbox/faults`: the caller's project follows the sandbox's default again.
    pub async fn sandbox_clear_faults(&self, caller: &Caller) -> Result<SandboxFaults, SandboxClearFaultsError> {
        self.faults.clear(&caller.project_id).await?;
        tracing::info!(project = %caller.project_id, "fault profile cleared: the sandbox's default applies");
        Ok(self.faults.answer(&caller.project_id))
    }
}
