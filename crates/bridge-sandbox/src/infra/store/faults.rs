//! Fault profiles: each project's own profile (`PUT /sandbox/faults`, kept as the contract's JSON) and the fault
//! version (`fault_head`), which grows with every change, so that each instance keeps every profile in memory and
//! reads them again only when the version moved (`crate::infra::faults`). The area's trait and its SQL for both
//! backends (`sqlite/faults.rs`, `postgres/faults.rs`).

use async_trait::async_trait;
use bridge_contract::SandboxFaultProfile;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{from_json, to_json, StoreResult};

/// A project's own fault profile.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFaultProfile {
    pub project: String,
    pub profile: SandboxFaultProfile,
}

/// Every project's own profile, at one fault version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSnapshot {
    pub version: i64,
    pub profiles: Vec<StoredFaultProfile>,
}

#[async_trait]
pub trait FaultStore: Send + Sync {
    /// The fault version: it grows with every profile set or cleared.
    async fn fault_version(&self) -> StoreResult<i64>;
    /// Every project's own profile, read at one version.
    async fn fault_profiles(&self) -> StoreResult<FaultSnapshot>;
    /// Makes `profile` `project`'s own (replacing any earlier one) at `at_ms` (wall clock), raising the version
    /// in the same transaction.
    async fn set_fault_profile(&self, project: &str, profile: &SandboxFaultProfile, at_ms: i64) -> StoreResult<()>;
    /// Forgets `project`'s own profile, raising the version when there was one; whether there was.
    async fn clear_fault_profile(&self, project: &str) -> StoreResult<bool>;
}

/// A project's own profile (`fault_profiles`).
const PROFILE_COLUMNS: &str = "project, profile";

impl FromRow for StoredFaultProfile {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let text: String = row.at(1)?;
        Ok(StoredFaultProfile { project: row.at(0)?, profile: from_json(&text)? })
    }
}

/// Raises the fault version (on PostgreSQL, taking its row lock until the transaction ends: changes take turns).
pub(super) fn bump_version() -> Query {
    query!("UPDATE fault_head SET version = version + 1")
}

pub(super) fn version() -> Query {
    query!("SELECT version FROM fault_head")
}

pub(super) fn profiles() -> Query {
    query!("SELECT {PROFILE_COLUMNS} FROM fault_profiles ORDER BY project")
}

pub(super) fn upsert(project: &str, profile: &SandboxFaultProfile, at_ms: i64) -> StoreResult<Query> {
    Ok(query!(
        "INSERT INTO fault_profiles (project, profile, updated_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT (project) DO UPDATE SET profile = ?2, updated_ms = ?3",
        project,
        to_json(profile)?,
        at_ms,
    ))
}

pub(super) fn delete(project: &str) -> Query {
    query!("DELETE FROM fault_profiles WHERE project = ?1", project)
}
