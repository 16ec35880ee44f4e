//! What an operator does to a sandbox's projects and keys (`bridge-sandbox token|api-key|project|signing-key|audit`:
//! `main.rs` parses the command line, calls these and prints what they answer). Each change is made through the
//! store, in one transaction with its audit entry naming the operator, so every instance on that store sees it
//! within its refresh interval (`crate::access`), without a restart. Times are wall-clock.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};

use crate::access::api_keys::{self, legacy, NewKey};
use crate::access::signing::{self, TokenClaims};
use crate::infra::clock::wall_ms;
use crate::infra::store::access::time;
use crate::infra::store::{
    AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, Store, StoredApiKey, StoredProject, StoredSigningKey,
};

/// Who runs the command, for the audit list: `$USER` (or `$USERNAME`, `$LOGNAME`), else `unknown`.
pub fn operator() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

/// A project with its keys, for `project list`.
#[derive(Debug, Clone)]
pub struct ProjectSummary {
    pub project: StoredProject,
    pub keys: Vec<StoredApiKey>,
}

/// What `api-key revoke` did.
#[derive(Debug, Clone)]
pub struct Revoked {
    pub key: StoredApiKey,
    /// It was revoked before (nothing changed).
    pub already: bool,
}

/// The operator's side of one store.
pub struct Admin {
    store: Arc<dyn Store>,
    actor: String,
}

fn check_project(project: &str) -> anyhow::Result<()> {
    if project.trim().is_empty() {
        bail!("the project id must not be empty");
    }
    Ok(())
}

impl Admin {
    /// Changes made through this value are audited as made by `actor`.
    pub fn new(store: Arc<dyn Store>, actor: impl Into<String>) -> Self {
        Self { store, actor: actor.into() }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// A bearer token of `project` (made if new) valid for `ttl`, signed with the current key, its expiry
    /// recorded (a rotation keeps the key until then).
    pub async fn mint_token(&self, project: &str, post_bridge_data: bool, ttl: Duration) -> anyhow::Result<String> {
        check_project(project)?;
        let now = wall_ms();
        self.store.ensure_project(project, now, &self.actor, "a token was minted").await?;
        signing::sign_recorded(&*self.store, &TokenClaims::new(project, post_bridge_data, now, ttl)).await
    }

    /// A new API key of `project` (made if new) named `name`: its text is in the answer and nowhere else.
    pub async fn create_api_key(&self, project: &str, name: &str) -> anyhow::Result<NewKey> {
        check_project(project)?;
        let key = api_keys::generate(project, name, wall_ms())?;
        if !self.store.insert_api_key(&key.record, false, &self.actor).await? {
            bail!("a key with the same secret exists already (the random generator repeated itself?)");
        }
        Ok(key)
    }

    /// The keys of `project` (or of every project), oldest first.
    pub async fn api_keys(&self, project: Option<&str>) -> anyhow::Result<Vec<StoredApiKey>> {
        Ok(self.store.api_keys(project).await?)
    }

    /// Revokes a key given by its id (`key_…`) or its text. A key of an earlier version that was never used is
    /// kept as a revoked record.
    pub async fn revoke_api_key(&self, key_or_id: &str) -> anyhow::Result<Revoked> {
        let key_or_id = key_or_id.trim();
        let found = match api_keys::is_id(key_or_id) {
            true => self.store.api_key(KeyLookup::Id(key_or_id)).await?,
            false => match self.store.api_key(KeyLookup::Hash(&api_keys::hash(key_or_id))).await? {
                Some(key) => Some(key),
                None => self.import_legacy(key_or_id).await?,
            },
        };
        let Some(key) = found else {
            bail!("no API key {key_or_id} in this sandbox (`bridge-sandbox api-key list` shows the ids)");
        };
        let already = key.revoked_ms.is_some();
        let key = self
            .store
            .revoke_api_key(&key.id, wall_ms(), &self.actor)
            .await?
            .with_context(|| format!("the API key {} disappeared", key.id))?;
        Ok(Revoked { key, already })
    }

    /// The record of a key of an earlier version (checked against the secret it was made with), made now.
    async fn import_legacy(&self, text: &str) -> anyhow::Result<Option<StoredApiKey>> {
        let keys = self.store.access_snapshot().await?.signing_keys;
        let Some(secret) = keys.iter().find(|k| k.unlabelled).map(|k| &k.secret) else { return Ok(None) };
        let Some(project) = legacy::project_of(secret, text) else { return Ok(None) };
        let record = legacy::record(text, &project, wall_ms());
        self.store.insert_api_key(&record, true, &self.actor).await?;
        Ok(self.store.api_key(KeyLookup::Hash(&record.hash)).await?)
    }

    /// Every project with its keys.
    pub async fn projects(&self) -> anyhow::Result<Vec<ProjectSummary>> {
        let mut keys = self.store.api_keys(None).await?;
        let projects = self.store.projects().await?;
        Ok(projects
            .into_iter()
            .map(|project| {
                let (own, rest) = keys.drain(..).partition(|k| k.project == project.project);
                keys = rest;
                ProjectSummary { project, keys: own }
            })
            .collect())
    }

    /// Disables (or enables) a project: its tokens and keys are refused (accepted again); its data stays.
    pub async fn set_disabled(&self, project: &str, disabled: bool) -> anyhow::Result<ProjectChange> {
        check_project(project)?;
        Ok(self.store.set_project_disabled(project, disabled, wall_ms(), &self.actor).await?)
    }

    /// Makes a new current signing key; the ones it replaces retire when their tokens expire, or at once.
    pub async fn rotate_signing_key(&self, retire_now: bool) -> anyhow::Result<StoredSigningKey> {
        let now = wall_ms();
        let how = match retire_now {
            true => Retire::Now,
            false => Retire::AfterTheirTokens {
                at_least_ms: now.saturating_add(signing::INSTANCE_TOKENS.as_millis() as i64),
            },
        };
        Ok(self.store.rotate_signing_key(&signing::new_secret()?, now, how, &self.actor).await?)
    }

    pub async fn signing_keys(&self) -> anyhow::Result<Vec<StoredSigningKey>> {
        Ok(signing::keys(&*self.store).await?)
    }

    /// The latest `limit` audit entries (of one project, or all), oldest first.
    pub async fn audit(&self, project: Option<&str>, limit: u64) -> anyhow::Result<Vec<AuditEntry>> {
        Ok(self.store.audit(&AuditQuery { project: project.map(str::to_owned), limit }).await?)
    }
}

/// Rows under a header, each column as wide as its widest cell, two spaces apart.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        padded.join("  ").trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

fn or_never(ms: Option<i64>) -> String {
    ms.map(time).unwrap_or_else(|| "never".into())
}

fn key_state(key: &StoredApiKey) -> String {
    match key.revoked_ms {
        Some(at) => format!("revoked {}", time(at)),
        None => "active".into(),
    }
}

/// `api-key list`: id, project, name, created, last use, state.
pub fn render_keys(keys: &[StoredApiKey]) -> String {
    if keys.is_empty() {
        return "no API keys\n".into();
    }
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            vec![
                k.id.clone(),
                k.project.clone(),
                k.name.clone(),
                time(k.created_ms),
                or_never(k.last_used_ms),
                key_state(k),
            ]
        })
        .collect();
    table(&["ID", "PROJECT", "NAME", "CREATED", "LAST USED", "STATE"], &rows)
}

/// `project list`: each project, its state, creation, last activity, then its keys indented.
pub fn render_projects(projects: &[ProjectSummary]) -> String {
    if projects.is_empty() {
        return "no projects\n".into();
    }
    let mut rows = Vec::new();
    for p in projects {
        let active = p.keys.iter().filter(|k| k.revoked_ms.is_none()).count();
        rows.push(vec![
            p.project.project.clone(),
            match p.project.disabled_ms {
                Some(at) => format!("disabled {}", time(at)),
                None => "enabled".into(),
            },
            time(p.project.created_ms),
            or_never(p.project.last_activity_ms),
            format!("{active} active, {} revoked", p.keys.len() - active),
        ]);
        for k in &p.keys {
            rows.push(vec![
                format!("  {}", k.id),
                key_state(k),
                time(k.created_ms),
                or_never(k.last_used_ms),
                format!("\"{}\"", k.name),
            ]);
        }
    }
    table(&["PROJECT / KEY", "STATE", "CREATED", "LAST ACTIVITY / USE", "KEYS / NAME"], &rows)
}

/// `signing-key list`: kid, created, state at `now_ms`, what it verifies.
pub fn render_signing_keys(keys: &[StoredSigningKey], now_ms: i64) -> String {
    let current = signing::current(keys).map(|k| k.kid.clone());
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            let state = match k.retires_ms {
                _ if Some(&k.kid) == current.as_ref() => "current: signs new tokens".to_owned(),
                Some(at) if at <= now_ms => format!("retired {}", time(at)),
                Some(at) => format!("verifies its tokens until {}", time(at)),
                None => "verifies its tokens".to_owned(),
            };
            let note = if k.unlabelled { "also tokens without a kid (earlier versions)" } else { "" };
            vec![k.kid.clone(), time(k.created_ms), state, note.to_owned()]
        })
        .collect();
    table(&["KID", "CREATED", "STATE", "NOTE"], &rows)
}

/// `audit`: time, who, what, project, subject, detail.
pub fn render_audit(entries: &[AuditEntry]) -> String {
    if entries.is_empty() {
        return "no audit entries\n".into();
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                time(e.at_ms),
                e.actor.clone(),
                e.action.as_str().to_owned(),
                e.project.clone().unwrap_or_else(|| "-".into()),
                e.subject.clone().unwrap_or_else(|| "-".into()),
                e.detail.clone(),
            ]
        })
        .collect();
    table(&["TIME", "BY", "ACTION", "PROJECT", "SUBJECT", "WHAT CHANGED"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_their_columns() {
        let out = table(&["A", "LONG HEADER"], &[vec!["wide cell".into(), "x".into()], vec!["y".into(), "z".into()]]);
        assert_eq!(out, "A          LONG HEADER\nwide cell  x\ny          z\n");
    }
}
