//! [`AccessStore`] on SQLite (projects, API keys, signing keys, the audit list: [`crate::infra::store::access`]):
//! each change is one write closure, run on the store's writer with its audit entries; reads run on a reader
//! connection. Several processes may open one data directory (a serving sandbox and the `bridge-sandbox`
//! commands that change keys and projects); SQLite's lock makes their writes take turns.

use async_trait::async_trait;
use rusqlite::Connection;

use super::{execute, select, select_first, select_one, SqliteStore};
use crate::infra::store::access::{audit, next_signing_key, retirement, sql, AccessStore};
use crate::infra::store::rows::One;
use crate::infra::store::{
    AccessSnapshot, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoreResult, StoredApiKey, StoredProject,
    StoredSigningKey, Usage,
};

fn write_audit(c: &Connection, entry: &AuditEntry) -> StoreResult<()> {
    execute(c, &sql::write_audit(entry)).map(drop)
}

/// Makes a project's record unless it has one (with its audit entry); whether it was made.
fn ensure_project(c: &Connection, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
    let made = execute(c, &sql::insert_project(project, at_ms))? == 1;
    if made {
        write_audit(c, &audit::project_created(project, at_ms, actor, how))?;
    }
    Ok(made)
}

fn version(c: &Connection) -> StoreResult<i64> {
    Ok(select_one::<One<i64>>(c, &sql::version())?.0)
}

fn strings(c: &Connection, q: &crate::infra::store::sql::Query) -> StoreResult<Vec<String>> {
    Ok(select::<One<String>>(c, q)?.into_iter().map(|One(s)| s).collect())
}

/// Read in one read transaction, so every part is of the same version.
fn snapshot(c: &Connection) -> StoreResult<AccessSnapshot> {
    c.execute_batch("BEGIN")?;
    let read = (|| {
        Ok(AccessSnapshot {
            version: version(c)?,
            signing_keys: select(c, &sql::signing_keys())?,
            revoked_keys: strings(c, &sql::revoked_keys())?,
            disabled_projects: strings(c, &sql::disabled_projects())?,
        })
    })();
    c.execute_batch("COMMIT")?;
    read
}

fn insert_api_key(c: &Connection, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
    if execute(c, &sql::insert_api_key(key))? == 0 {
        return Ok(false);
    }
    ensure_project(c, &key.project, key.created_ms, actor, audit::with_key(imported))?;
    write_audit(c, &audit::key_created(key, imported, actor))?;
    Ok(true)
}

fn revoke_api_key(c: &Connection, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
    let Some(key) = select_first::<StoredApiKey>(c, &sql::revoke_api_key(id, at_ms))? else {
        // No such key, or revoked already: nothing changed.
        return select_first(c, &sql::api_key(KeyLookup::Id(id)));
    };
    write_audit(c, &audit::key_revoked(&key, at_ms, actor))?;
    execute(c, &sql::bump_version())?;
    Ok(Some(key))
}

fn set_project_disabled(
    c: &Connection,
    project: &str,
    disabled: bool,
    at_ms: i64,
    actor: &str,
) -> StoreResult<ProjectChange> {
    let created = ensure_project(c, project, at_ms, actor, audit::with_state(disabled))?;
    let changed = execute(c, &sql::set_disabled(project, disabled, at_ms))? == 1;
    if changed {
        write_audit(c, &audit::project_state(project, disabled, at_ms, actor))?;
        execute(c, &sql::bump_version())?;
    }
    Ok(ProjectChange { created, changed })
}

fn record_usage(c: &Connection, usage: &Usage) -> StoreResult<()> {
    for (id, at) in &usage.keys {
        execute(c, &sql::key_used(id, *at))?;
    }
    for (project, at) in &usage.projects {
        ensure_project(c, project, *at, "sandbox", audit::FIRST_REQUEST)?;
        execute(c, &sql::project_active(project, *at))?;
    }
    Ok(())
}

fn initial_signing_key(c: &Connection, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
    if execute(c, &sql::insert_signing_key(1, candidate))? == 0 {
        return Ok(false);
    }
    write_audit(c, &audit::signing_key_created(candidate, actor))?;
    execute(c, &sql::bump_version())?;
    Ok(true)
}

fn rotate_signing_key(
    c: &Connection,
    secret: &[u8],
    at_ms: i64,
    how: Retire,
    actor: &str,
) -> StoreResult<StoredSigningKey> {
    let before: Vec<StoredSigningKey> = select(c, &sql::signing_keys())?;
    let seq = before.len() as i64 + 1;
    let mut retired = Vec::new();
    for mut old in before {
        let retires = retirement(&old, at_ms, how);
        if retires != old.retires_ms {
            execute(c, &sql::retire_signing_key(&old.kid, retires))?;
            old.retires_ms = retires;
            retired.push(old);
        }
    }
    let new = next_signing_key(seq, secret, at_ms);
    execute(c, &sql::insert_signing_key(seq, &new))?;
    write_audit(c, &audit::signing_key_rotated(&new, &retired, how, actor))?;
    execute(c, &sql::bump_version())?;
    Ok(new)
}

#[async_trait]
impl AccessStore for SqliteStore {
    async fn access_version(&self) -> StoreResult<i64> {
        self.read_now(version).await
    }

    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        self.read(snapshot).await
    }

    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        let key = sql::api_key(lookup);
        self.read_now(move |c| select_first(c, &key)).await
    }

    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        let keys = sql::api_keys(project);
        self.read(move |c| select(c, &keys)).await
    }

    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        let (key, actor) = (key.clone(), actor.to_owned());
        self.run(move |c| insert_api_key(c, &key, imported, &actor)).await
    }

    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        let (id, actor) = (id.to_owned(), actor.to_owned());
        self.run(move |c| revoke_api_key(c, &id, at_ms, &actor)).await
    }

    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        let (project, actor, how) = (project.to_owned(), actor.to_owned(), how.to_owned());
        self.run(move |c| ensure_project(c, &project, at_ms, &actor, &how)).await
    }

    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        let (project, actor) = (project.to_owned(), actor.to_owned());
        self.run(move |c| set_project_disabled(c, &project, disabled, at_ms, &actor)).await
    }

    async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        self.read(|c| select(c, &sql::projects())).await
    }

    async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        let usage = usage.clone();
        self.run(move |c| record_usage(c, &usage)).await
    }

    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        let (candidate, actor) = (candidate.clone(), actor.to_owned());
        self.run(move |c| initial_signing_key(c, &candidate, &actor)).await
    }

    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        let (secret, actor) = (secret.to_vec(), actor.to_owned());
        self.run(move |c| rotate_signing_key(c, &secret, at_ms, how, &actor)).await
    }

    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        let extend = sql::extend_signed_until(kid, until_ms);
        self.run(move |c| Ok(execute(c, &extend)? == 1)).await
    }

    async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        let audit = sql::audit(query);
        self.read(move |c| select(c, &audit)).await
    }
}
