//! The access part of [`super::SqliteStore`] (projects, API keys, signing keys, the audit list: [`super::access`]):
//! the SQL of each operation, run by the store on its writer (changes, each one transaction with its audit
//! entries) or on a reader connection. Several processes may open one data directory (a serving sandbox and the
//! `bridge-sandbox` commands that change keys and projects); SQLite's lock makes their writes take turns.

use rusqlite::{params, Connection};

use crate::infra::store::access::audit;
use crate::infra::store::{
    AccessSnapshot, Areas, AuditEntry, AuditQuery, ProjectChange, Retire, StoreResult, StoredApiKey, StoredProject,
    StoredSigningKey, Usage,
};

use super::{select, select_first, SqliteStore};
use crate::infra::store::rows::{AUDIT_COLUMNS, KEY_COLUMNS, PROJECT_COLUMNS, SIGNING_COLUMNS};
use crate::infra::store::KeyLookup;

fn bump_version(c: &Connection) -> StoreResult<()> {
    c.prepare_cached("UPDATE access_head SET version = version + 1")?.execute([])?;
    Ok(())
}

fn write_audit(c: &Connection, entry: &AuditEntry) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO audit_log (at_ms, actor, action, project, subject, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        entry.at_ms,
        entry.actor,
        entry.action.as_str(),
        entry.project,
        entry.subject,
        entry.detail
    ])?;
    Ok(())
}

/// Makes a project's record unless it has one (with its audit entry); whether it was made.
pub fn ensure_project(c: &Connection, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
    let made = c
        .prepare_cached("INSERT INTO project_access (project, created_ms) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?
        .execute(params![project, at_ms])?;
    if made == 1 {
        write_audit(c, &audit::project_created(project, at_ms, actor, how))?;
    }
    Ok(made == 1)
}

pub fn version(c: &Connection) -> StoreResult<i64> {
    Ok(c.prepare_cached("SELECT version FROM access_head")?.query_row([], |r| r.get(0))?)
}

fn signing_keys(c: &Connection) -> StoreResult<Vec<StoredSigningKey>> {
    select(c, &format!("SELECT {SIGNING_COLUMNS} FROM signing_keys ORDER BY seq"), [])
}

/// Read in one read transaction, so every part is of the same version.
pub fn snapshot(c: &Connection) -> StoreResult<AccessSnapshot> {
    c.execute_batch("BEGIN")?;
    let read = (|| {
        let strings = |sql: &str| -> StoreResult<Vec<String>> {
            let mut stmt = c.prepare_cached(sql)?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        Ok(AccessSnapshot {
            version: version(c)?,
            signing_keys: signing_keys(c)?,
            revoked_keys: strings("SELECT id FROM api_keys WHERE revoked_ms IS NOT NULL")?,
            disabled_projects: strings("SELECT project FROM project_access WHERE disabled_ms IS NOT NULL")?,
        })
    })();
    c.execute_batch("COMMIT")?;
    read
}

/// The key whose `column` (`KeyLookup::column`) is `value`.
pub fn api_key(c: &Connection, column: &str, value: &str) -> StoreResult<Option<StoredApiKey>> {
    select_first(c, &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE {column} = ?1"), [value])
}

pub fn api_keys(c: &Connection, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE ?1 IS NULL OR project = ?1 ORDER BY created_ms, id");
    select(c, &sql, [project])
}

pub fn insert_api_key(c: &Connection, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
    if api_key(c, "hash", &key.hash)?.is_some() {
        return Ok(false);
    }
    let how = audit::with_key(imported);
    ensure_project(c, &key.project, key.created_ms, actor, how)?;
    c.prepare_cached(&format!("INSERT INTO api_keys ({KEY_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))?
        .execute(params![key.id, key.project, key.name, key.hash, key.created_ms, key.last_used_ms, key.revoked_ms])?;
    write_audit(c, &audit::key_created(key, imported, actor))?;
    Ok(true)
}

pub fn revoke_api_key(c: &Connection, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
    let Some(mut key) = api_key(c, "id", id)? else { return Ok(None) };
    if key.revoked_ms.is_none() {
        c.prepare_cached("UPDATE api_keys SET revoked_ms = ?2 WHERE id = ?1")?.execute(params![id, at_ms])?;
        key.revoked_ms = Some(at_ms);
        write_audit(c, &audit::key_revoked(&key, at_ms, actor))?;
        bump_version(c)?;
    }
    Ok(Some(key))
}

pub fn set_project_disabled(
    c: &Connection,
    project: &str,
    disabled: bool,
    at_ms: i64,
    actor: &str,
) -> StoreResult<ProjectChange> {
    let how = audit::with_state(disabled);
    let created = ensure_project(c, project, at_ms, actor, how)?;
    let changed = match disabled {
        true => c
            .prepare_cached("UPDATE project_access SET disabled_ms = ?2 WHERE project = ?1 AND disabled_ms IS NULL")?
            .execute(params![project, at_ms])?,
        false => c
            .prepare_cached(
                "UPDATE project_access SET disabled_ms = NULL WHERE project = ?1 AND disabled_ms IS NOT NULL",
            )?
            .execute(params![project])?,
    } == 1;
    if changed {
        write_audit(c, &audit::project_state(project, disabled, at_ms, actor))?;
        bump_version(c)?;
    }
    Ok(ProjectChange { created, changed })
}

pub fn projects(c: &Connection) -> StoreResult<Vec<StoredProject>> {
    select(c, &format!("SELECT {PROJECT_COLUMNS} FROM project_access ORDER BY project"), [])
}

pub fn record_usage(c: &Connection, usage: &Usage) -> StoreResult<()> {
    let mut key =
        c.prepare_cached("UPDATE api_keys SET last_used_ms = max(coalesce(last_used_ms, ?2), ?2) WHERE id = ?1")?;
    for (id, at) in &usage.keys {
        key.execute(params![id, at])?;
    }
    drop(key);
    for (project, at) in &usage.projects {
        ensure_project(c, project, *at, "sandbox", audit::FIRST_REQUEST)?;
        c.prepare_cached(
            "UPDATE project_access SET last_activity_ms = max(coalesce(last_activity_ms, ?2), ?2) WHERE project = ?1",
        )?
        .execute(params![project, at])?;
    }
    Ok(())
}

fn insert_signing_key(c: &Connection, seq: i64, key: &StoredSigningKey) -> StoreResult<()> {
    c.prepare_cached(&format!(
        "INSERT INTO signing_keys (seq, {SIGNING_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    ))?
    .execute(params![
        seq,
        key.kid,
        hex::encode(&key.secret),
        key.created_ms,
        key.unlabelled,
        key.signed_until_ms,
        key.retires_ms
    ])?;
    Ok(())
}

pub fn initial_signing_key(c: &Connection, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
    let any: bool = c.query_row("SELECT EXISTS (SELECT 1 FROM signing_keys)", [], |r| r.get(0))?;
    if any {
        return Ok(false);
    }
    insert_signing_key(c, 1, candidate)?;
    write_audit(c, &audit::signing_key_created(candidate, actor))?;
    bump_version(c)?;
    Ok(true)
}

pub fn rotate_signing_key(
    c: &Connection,
    secret: &[u8],
    at_ms: i64,
    how: Retire,
    actor: &str,
) -> StoreResult<StoredSigningKey> {
    let before = signing_keys(c)?;
    let seq = before.len() as i64 + 1;
    let mut retired = Vec::new();
    for mut old in before {
        let retires = crate::infra::store::access::retirement(&old, at_ms, how);
        if retires != old.retires_ms {
            c.prepare_cached("UPDATE signing_keys SET retires_ms = ?2 WHERE kid = ?1")?
                .execute(params![old.kid, retires])?;
            old.retires_ms = retires;
            retired.push(old);
        }
    }
    let new = crate::infra::store::access::next_signing_key(seq, secret, at_ms);
    insert_signing_key(c, seq, &new)?;
    write_audit(c, &audit::signing_key_rotated(&new, &retired, how, actor))?;
    bump_version(c)?;
    Ok(new)
}

pub fn extend_signed_until(c: &Connection, kid: &str, until_ms: i64) -> StoreResult<bool> {
    let updated = c
        .prepare_cached(
            "UPDATE signing_keys SET signed_until_ms = max(signed_until_ms, ?2) WHERE kid = ?1 AND retires_ms IS NULL",
        )?
        .execute(params![kid, until_ms])?;
    Ok(updated == 1)
}

pub fn audit_list(c: &Connection, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
    let sql = format!(
        "SELECT {AUDIT_COLUMNS} FROM (
             SELECT seq, {AUDIT_COLUMNS} FROM audit_log WHERE ?1 IS NULL OR project = ?1 ORDER BY seq DESC LIMIT ?2
         ) ORDER BY seq"
    );
    select(c, &sql, params![query.project, query.limit as i64])
}

impl Areas<'_, SqliteStore> {
    pub(super) async fn access_version(&self) -> StoreResult<i64> {
        self.read_now(version).await
    }

    pub(super) async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        self.read(snapshot).await
    }

    pub(super) async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        let (column, value) = (lookup.column(), lookup.value().to_owned());
        self.read_now(move |c| api_key(c, column, &value)).await
    }

    pub(super) async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        let project = project.map(str::to_owned);
        self.read(move |c| api_keys(c, project.as_deref())).await
    }

    pub(super) async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        let (key, actor) = (key.clone(), actor.to_owned());
        self.run(move |c| insert_api_key(c, &key, imported, &actor)).await
    }

    pub(super) async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        let (id, actor) = (id.to_owned(), actor.to_owned());
        self.run(move |c| revoke_api_key(c, &id, at_ms, &actor)).await
    }

    pub(super) async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        let (project, actor, how) = (project.to_owned(), actor.to_owned(), how.to_owned());
        self.run(move |c| ensure_project(c, &project, at_ms, &actor, &how)).await
    }

    pub(super) async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        let (project, actor) = (project.to_owned(), actor.to_owned());
        self.run(move |c| set_project_disabled(c, &project, disabled, at_ms, &actor)).await
    }

    pub(super) async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        self.read(projects).await
    }

    pub(super) async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        let usage = usage.clone();
        self.run(move |c| record_usage(c, &usage)).await
    }

    pub(super) async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        let (candidate, actor) = (candidate.clone(), actor.to_owned());
        self.run(move |c| initial_signing_key(c, &candidate, &actor)).await
    }

    pub(super) async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        let (secret, actor) = (secret.to_vec(), actor.to_owned());
        self.run(move |c| rotate_signing_key(c, &secret, at_ms, how, &actor)).await
    }

    pub(super) async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        let kid = kid.to_owned();
        self.run(move |c| extend_signed_until(c, &kid, until_ms)).await
    }

    pub(super) async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        let query = query.clone();
        self.read(move |c| audit_list(c, &query)).await
    }
}
