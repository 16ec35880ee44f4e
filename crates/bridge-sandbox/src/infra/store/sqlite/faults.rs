//! [`FaultStore`] on SQLite: a change is one write with its version; the profiles are read in one read
//! transaction, so they are of the version read with them.

use async_trait::async_trait;
use bridge_contract::SandboxFaultProfile;
use rusqlite::Connection;

use super::{execute, select, select_one, SqliteStore};
use crate::infra::store::faults::{self, FaultSnapshot, FaultStore};
use crate::infra::store::rows::One;
use crate::infra::store::StoreResult;

fn version(c: &Connection) -> StoreResult<i64> {
    Ok(select_one::<One<i64>>(c, &faults::version())?.0)
}

fn snapshot(c: &Connection) -> StoreResult<FaultSnapshot> {
    c.execute_batch("BEGIN")?;
    let read = (|| Ok(FaultSnapshot { version: version(c)?, profiles: select(c, &faults::profiles())? }))();
    c.execute_batch("COMMIT")?;
    read
}

#[async_trait]
impl FaultStore for SqliteStore {
    async fn fault_version(&self) -> StoreResult<i64> {
        self.read_now(version).await
    }

    async fn fault_profiles(&self) -> StoreResult<FaultSnapshot> {
        self.read(snapshot).await
    }

    async fn set_fault_profile(&self, project: &str, profile: &SandboxFaultProfile, at_ms: i64) -> StoreResult<()> {
        let upsert = faults::upsert(project, profile, at_ms)?;
        self.run(move |c| {
            execute(c, &upsert)?;
            execute(c, &faults::bump_version()).map(drop)
        })
        .await
    }

    async fn clear_fault_profile(&self, project: &str) -> StoreResult<bool> {
        let delete = faults::delete(project);
        self.run(move |c| {
            let had = execute(c, &delete)? > 0;
            if had {
                execute(c, &faults::bump_version())?;
            }
            Ok(had)
        })
        .await
    }
}
