//! The access part of [`super::PgStore`] (projects, API keys, signing keys, the audit list: [`super::access`]).
//! Every change that instances must see starts by raising the access version (`access_head`, one row): its row
//! lock makes such changes take turns across instances and processes, and each later statement of the
//! transaction sees what the one before it committed (READ COMMITTED), so two rotations never pick one `kid`.
//! A change that turns out to change nothing rolls back, version included.

use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_postgres::Postgres;

use crate::infra::store::access::{audit, next_signing_key, retirement};
use crate::infra::store::{
    AccessSnapshot, Areas, AuditEntry, AuditQuery, ProjectChange, Retire, StoreError, StoreResult, StoredApiKey,
    StoredProject, StoredSigningKey, Usage,
};

use super::{all, PgStore};
use crate::infra::store::rows::{FromRow, AUDIT_COLUMNS, KEY_COLUMNS, PROJECT_COLUMNS, SIGNING_COLUMNS};
use crate::infra::store::KeyLookup;

type Tx = sqlx_core::transaction::Transaction<'static, Postgres>;

/// Raises the access version, taking its row lock until the transaction ends.
async fn bump_version(tx: &mut Tx) -> StoreResult<()> {
    query("UPDATE access_head SET version = version + 1").execute(&mut **tx).await?;
    Ok(())
}

async fn write_audit(tx: &mut Tx, entry: &AuditEntry) -> StoreResult<()> {
    query("INSERT INTO audit_log (at_ms, actor, action, project, subject, detail) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(entry.at_ms)
        .bind(&entry.actor)
        .bind(entry.action.as_str())
        .bind(&entry.project)
        .bind(&entry.subject)
        .bind(&entry.detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

async fn ensure_project_in(tx: &mut Tx, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
    let made = query("INSERT INTO project_access (project, created_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(project)
        .bind(at_ms)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    if made == 1 {
        write_audit(tx, &audit::project_created(project, at_ms, actor, how)).await?;
    }
    Ok(made == 1)
}

async fn signing_keys(tx: &mut Tx) -> StoreResult<Vec<StoredSigningKey>> {
    all(&query(&format!("SELECT {SIGNING_COLUMNS} FROM signing_keys ORDER BY seq")).fetch_all(&mut **tx).await?)
}

/// The keys, locked until the transaction ends: a token's expiry being recorded at once is waited for and seen.
async fn signing_keys_locked(tx: &mut Tx) -> StoreResult<Vec<StoredSigningKey>> {
    let rows = query(&format!("SELECT {SIGNING_COLUMNS} FROM signing_keys ORDER BY seq FOR UPDATE"))
        .fetch_all(&mut **tx)
        .await?;
    all(&rows)
}

async fn insert_signing_key(tx: &mut Tx, seq: i64, key: &StoredSigningKey) -> StoreResult<u64> {
    Ok(query(&format!(
        "INSERT INTO signing_keys (seq, {SIGNING_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING"
    ))
    .bind(seq)
    .bind(&key.kid)
    .bind(hex::encode(&key.secret))
    .bind(key.created_ms)
    .bind(key.unlabelled)
    .bind(key.signed_until_ms)
    .bind(key.retires_ms)
    .execute(&mut **tx)
    .await?
    .rows_affected())
}

impl Areas<'_, PgStore> {
    pub(super) async fn access_version(&self) -> StoreResult<i64> {
        Ok(query_scalar("SELECT version FROM access_head").fetch_one(&self.pool).await?)
    }

    /// Read in one REPEATABLE READ transaction, so every part is of the same version.
    pub(super) async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        let mut tx = self.pool.begin().await?;
        query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        let version: i64 = query_scalar("SELECT version FROM access_head").fetch_one(&mut *tx).await?;
        let signing_keys = signing_keys(&mut tx).await?;
        let revoked_keys =
            query_scalar("SELECT id FROM api_keys WHERE revoked_ms IS NOT NULL").fetch_all(&mut *tx).await?;
        let disabled_projects = query_scalar("SELECT project FROM project_access WHERE disabled_ms IS NOT NULL")
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(AccessSnapshot { version, signing_keys, revoked_keys, disabled_projects })
    }

    pub(super) async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE {} = $1", lookup.column());
        self.select_first(query(&sql).bind(lookup.value())).await
    }

    pub(super) async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        let sql = format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE $1::text IS NULL OR project = $1 ORDER BY created_ms, id"
        );
        self.select(query(&sql).bind(project)).await
    }

    pub(super) async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let inserted = query(&format!(
            "INSERT INTO api_keys ({KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO NOTHING"
        ))
        .bind(&key.id)
        .bind(&key.project)
        .bind(&key.name)
        .bind(&key.hash)
        .bind(key.created_ms)
        .bind(key.last_used_ms)
        .bind(key.revoked_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(false); // rolled back when dropped
        }
        let how = audit::with_key(imported);
        ensure_project_in(&mut tx, &key.project, key.created_ms, actor, how).await?;
        write_audit(&mut tx, &audit::key_created(key, imported, actor)).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        let mut tx = self.pool.begin().await?;
        bump_version(&mut tx).await?;
        let revoked = query(&format!(
            "UPDATE api_keys SET revoked_ms = $2 WHERE id = $1 AND revoked_ms IS NULL RETURNING {KEY_COLUMNS}"
        ))
        .bind(id)
        .bind(at_ms)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = revoked else {
            drop(tx); // nothing changed: the version stays
            return self.api_key(KeyLookup::Id(id)).await;
        };
        let key = StoredApiKey::from_row(&row)?;
        write_audit(&mut tx, &audit::key_revoked(&key, at_ms, actor)).await?;
        tx.commit().await?;
        Ok(Some(key))
    }

    pub(super) async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let made = ensure_project_in(&mut tx, project, at_ms, actor, how).await?;
        tx.commit().await?;
        Ok(made)
    }

    pub(super) async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        let mut tx = self.pool.begin().await?;
        bump_version(&mut tx).await?;
        let how = audit::with_state(disabled);
        let created = ensure_project_in(&mut tx, project, at_ms, actor, how).await?;
        let change = match disabled {
            true => query("UPDATE project_access SET disabled_ms = $2 WHERE project = $1 AND disabled_ms IS NULL")
                .bind(project)
                .bind(at_ms),
            false => {
                query("UPDATE project_access SET disabled_ms = NULL WHERE project = $1 AND disabled_ms IS NOT NULL")
                    .bind(project)
            }
        };
        let changed = change.execute(&mut *tx).await?.rows_affected() == 1;
        if changed {
            write_audit(&mut tx, &audit::project_state(project, disabled, at_ms, actor)).await?;
        }
        if created || changed {
            tx.commit().await?; // a record made enabled raises the version too: harmless, instances reload once
        }
        Ok(ProjectChange { created, changed })
    }

    pub(super) async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        let sql = format!("SELECT {PROJECT_COLUMNS} FROM project_access ORDER BY project");
        self.select(query(&sql)).await
    }

    pub(super) async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for (id, at) in &usage.keys {
            query("UPDATE api_keys SET last_used_ms = GREATEST(last_used_ms, $2) WHERE id = $1")
                .bind(id)
                .bind(at)
                .execute(&mut *tx)
                .await?;
        }
        for (project, at) in &usage.projects {
            ensure_project_in(&mut tx, project, *at, "sandbox", audit::FIRST_REQUEST).await?;
            query("UPDATE project_access SET last_activity_ms = GREATEST(last_activity_ms, $2) WHERE project = $1")
                .bind(project)
                .bind(at)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        if insert_signing_key(&mut tx, 1, candidate).await? == 0 {
            return Ok(false);
        }
        write_audit(&mut tx, &audit::signing_key_created(candidate, actor)).await?;
        bump_version(&mut tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        let mut tx = self.pool.begin().await?;
        bump_version(&mut tx).await?;
        let before = signing_keys_locked(&mut tx).await?;
        let seq = before.len() as i64 + 1;
        let mut retired = Vec::new();
        for mut old in before {
            let retires = retirement(&old, at_ms, how);
            if retires != old.retires_ms {
                query("UPDATE signing_keys SET retires_ms = $2 WHERE kid = $1")
                    .bind(&old.kid)
                    .bind(retires)
                    .execute(&mut *tx)
                    .await?;
                old.retires_ms = retires;
                retired.push(old);
            }
        }
        let new = next_signing_key(seq, secret, at_ms);
        if insert_signing_key(&mut tx, seq, &new).await? == 0 {
            return Err(StoreError::new(anyhow::anyhow!("signing key {} exists already", new.kid)));
        }
        write_audit(&mut tx, &audit::signing_key_rotated(&new, &retired, how, actor)).await?;
        tx.commit().await?;
        Ok(new)
    }

    pub(super) async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        let updated = query(
        "UPDATE signing_keys SET signed_until_ms = GREATEST(signed_until_ms, $2) WHERE kid = $1 AND retires_ms IS NULL",
    )
    .bind(kid)
    .bind(until_ms)
    .execute(&self.pool)
    .await?
    .rows_affected();
        Ok(updated == 1)
    }

    pub(super) async fn audit(&self, q: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM (
             SELECT seq, {AUDIT_COLUMNS} FROM audit_log WHERE $1::text IS NULL OR project = $1 ORDER BY seq DESC LIMIT $2
         ) latest ORDER BY seq"
        );
        self.select(query(&sql).bind(&q.project).bind(q.limit as i64)).await
    }
}
