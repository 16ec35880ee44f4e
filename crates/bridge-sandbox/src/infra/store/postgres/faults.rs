//! [`FaultStore`] on PostgreSQL: a change raises the fault version first (its row lock makes changes take turns
//! across instances); the profiles are read in one REPEATABLE READ transaction, so they are of the version read
//! with them.

use async_trait::async_trait;
use bridge_contract::SandboxFaultProfile;
use sqlx_core::query::query;

use super::{commit, execute, select, select_one, PgStore};
use crate::infra::store::faults::{self, FaultSnapshot, FaultStore};
use crate::infra::store::rows::One;
use crate::infra::store::StoreResult;

#[async_trait]
impl FaultStore for PgStore {
    async fn fault_version(&self) -> StoreResult<i64> {
        Ok(select_one::<One<i64>>(&self.pool, faults::version()).await?.0)
    }

    async fn fault_profiles(&self) -> StoreResult<FaultSnapshot> {
        let mut tx = self.pool.begin().await?;
        query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        let One(version) = select_one::<One<i64>>(&mut *tx, faults::version()).await?;
        let profiles = select(&mut *tx, faults::profiles()).await?;
        tx.commit().await?;
        Ok(FaultSnapshot { version, profiles })
    }

    async fn set_fault_profile(&self, project: &str, profile: &SandboxFaultProfile, at_ms: i64) -> StoreResult<()> {
        let upsert = faults::upsert(project, profile, at_ms)?;
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, faults::bump_version()).await?;
        execute(&mut *tx, upsert).await?;
        commit(tx).await
    }

    async fn clear_fault_profile(&self, project: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, faults::bump_version()).await?;
        if execute(&mut *tx, faults::delete(project)).await? == 0 {
            return Ok(false); // nothing changed: the version stays (rolled back when dropped)
        }
        commit(tx).await?;
        Ok(true)
    }
}
