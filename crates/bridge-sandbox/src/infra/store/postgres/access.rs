//! [`AccessStore`] on PostgreSQL (projects, API keys, signing keys, the audit list:
//! [`crate::infra::store::access`]). Every change that instances must see starts by raising the access version
//! (`access_head`, one row): its row lock makes such changes take turns across instances and processes, and each
//! later statement of the transaction sees what the one before it committed (READ COMMITTED), so two rotations
//! never pick one `kid`. A change that turns out to change nothing rolls back, version included.

use async_trait::async_trait;
use sqlx_core::query::query;
use sqlx_postgres::Postgres;

use super::{execute, select, select_first, select_one, PgStore};
use crate::infra::store::access::{audit, next_signing_key, retirement, sql, AccessStore};
use crate::infra::store::rows::One;
use crate::infra::store::{
    AccessSnapshot, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoreError, StoreResult, StoredApiKey,
    StoredProject, StoredSigningKey, Usage,
};

type Tx = sqlx_core::transaction::Transaction<'static, Postgres>;

async fn write_audit(tx: &mut Tx, entry: &AuditEntry) -> StoreResult<()> {
    execute(&mut **tx, sql::write_audit(entry)).await.map(drop)
}

async fn ensure_project_in(tx: &mut Tx, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
    let made = execute(&mut **tx, sql::insert_project(project, at_ms)).await? == 1;
    if made {
        write_audit(tx, &audit::project_created(project, at_ms, actor, how)).await?;
    }
    Ok(made)
}

async fn strings(tx: &mut Tx, q: crate::infra::store::sql::Query) -> StoreResult<Vec<String>> {
    Ok(select::<One<String>>(&mut **tx, q).await?.into_iter().map(|One(s)| s).collect())
}

/// The keys, locked until the transaction ends: a token's expiry being recorded at once is waited for and seen.
async fn signing_keys_locked(tx: &mut Tx) -> StoreResult<Vec<StoredSigningKey>> {
    let mut keys = sql::signing_keys();
    keys.text = crate::infra::store::sql::Text::Made(format!("{} FOR UPDATE", keys.text.postgres()));
    select(&mut **tx, keys).await
}

#[async_trait]
impl AccessStore for PgStore {
    async fn access_version(&self) -> StoreResult<i64> {
        Ok(select_one::<One<i64>>(&self.pool, sql::version()).await?.0)
    }

    /// Read in one REPEATABLE READ transaction, so every part is of the same version.
    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        let mut tx = self.pool.begin().await?;
        query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        let One(version) = select_one::<One<i64>>(&mut *tx, sql::version()).await?;
        let signing_keys = select(&mut *tx, sql::signing_keys()).await?;
        let revoked_keys = strings(&mut tx, sql::revoked_keys()).await?;
        let disabled_projects = strings(&mut tx, sql::disabled_projects()).await?;
        tx.commit().await?;
        Ok(AccessSnapshot { version, signing_keys, revoked_keys, disabled_projects })
    }

    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        select_first(&self.pool, sql::api_key(lookup)).await
    }

    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        select(&self.pool, sql::api_keys(project)).await
    }

    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, sql::insert_api_key(key)).await? == 0 {
            return Ok(false); // rolled back when dropped
        }
        ensure_project_in(&mut tx, &key.project, key.created_ms, actor, audit::with_key(imported)).await?;
        write_audit(&mut tx, &audit::key_created(key, imported, actor)).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, sql::bump_version()).await?;
        let Some(key) = select_first::<StoredApiKey>(&mut *tx, sql::revoke_api_key(id, at_ms)).await? else {
            drop(tx); // nothing changed: the version stays
            return self.api_key(KeyLookup::Id(id)).await;
        };
        write_audit(&mut tx, &audit::key_revoked(&key, at_ms, actor)).await?;
        tx.commit().await?;
        Ok(Some(key))
    }

    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let made = ensure_project_in(&mut tx, project, at_ms, actor, how).await?;
        tx.commit().await?;
        Ok(made)
    }

    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, sql::bump_version()).await?;
        let created = ensure_project_in(&mut tx, project, at_ms, actor, audit::with_state(disabled)).await?;
        let changed = execute(&mut *tx, sql::set_disabled(project, disabled, at_ms)).await? == 1;
        if changed {
            write_audit(&mut tx, &audit::project_state(project, disabled, at_ms, actor)).await?;
        }
        if created || changed {
            tx.commit().await?; // a record made enabled raises the version too: harmless, instances reload once
        }
        Ok(ProjectChange { created, changed })
    }

    async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        select(&self.pool, sql::projects()).await
    }

    async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for (id, at) in &usage.keys {
            execute(&mut *tx, sql::key_used(id, *at)).await?;
        }
        for (project, at) in &usage.projects {
            ensure_project_in(&mut tx, project, *at, "sandbox", audit::FIRST_REQUEST).await?;
            execute(&mut *tx, sql::project_active(project, *at)).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        if execute(&mut *tx, sql::insert_signing_key(1, candidate)).await? == 0 {
            return Ok(false);
        }
        write_audit(&mut tx, &audit::signing_key_created(candidate, actor)).await?;
        execute(&mut *tx, sql::bump_version()).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, sql::bump_version()).await?;
        let before = signing_keys_locked(&mut tx).await?;
        let seq = before.len() as i64 + 1;
        let mut retired = Vec::new();
        for mut old in before {
            let retires = retirement(&old, at_ms, how);
            if retires != old.retires_ms {
                execute(&mut *tx, sql::retire_signing_key(&old.kid, retires)).await?;
                old.retires_ms = retires;
                retired.push(old);
            }
        }
        let new = next_signing_key(seq, secret, at_ms);
        if execute(&mut *tx, sql::insert_signing_key(seq, &new)).await? == 0 {
            return Err(StoreError::new(anyhow::anyhow!("signing key {} exists already", new.kid)));
        }
        write_audit(&mut tx, &audit::signing_key_rotated(&new, &retired, how, actor)).await?;
        tx.commit().await?;
        Ok(new)
    }

    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        Ok(execute(&self.pool, sql::extend_signed_until(kid, until_ms)).await? == 1)
    }

    async fn audit(&self, q: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        select(&self.pool, sql::audit(q)).await
    }
}
