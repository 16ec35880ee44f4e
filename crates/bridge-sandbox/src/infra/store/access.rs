//! What the store keeps about who may call (issue 26): projects (`project_access`: enabled or disabled, last
//! activity), API keys (`api_keys`: only the SHA-256 of each secret), the JWT signing keys (`signing_keys`, by
//! `kid`), the audit list (`audit_log`) and the access version (`access_head`), which grows with every change an
//! instance must see at once (a revocation, a project disabled or enabled, a signing key made or replaced), so
//! instances poll one number and reload only when it moved (`crate::access`). Times here are wall-clock
//! milliseconds: they are about people and processes, not about the sandbox clock.
//!
//! The audit entries are made here, once for both backends ([`audit`]), and written by the backend in the same
//! transaction as the change they describe; so is the SQL both backends share (`sqlite/access.rs` and
//! `postgres/access.rs` implement [`AccessStore`] with it: how a change takes its turn differs).

use async_trait::async_trait;
use bridge_contract::DateString;

use super::rows::{Columns, FromRow};
use super::sql::{query, Query};
use super::{StoreError, StoreResult};

/// An API key as the store keeps it: its secret never, only the SHA-256 of the key's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredApiKey {
    /// The key's public id (`key_…`): what lists show and what `api-key revoke` takes.
    pub id: String,
    pub project: String,
    pub name: String,
    /// SHA-256 of the key's whole text, hex.
    pub hash: String,
    pub created_ms: i64,
    /// Last use, as flushed by the instances (coalesced: [`Usage`]).
    pub last_used_ms: Option<i64>,
    pub revoked_ms: Option<i64>,
}

/// A project as access control sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredProject {
    pub project: String,
    pub created_ms: i64,
    /// When it was disabled (`None`: enabled). A disabled project's tokens and keys are refused; its data stays.
    pub disabled_ms: Option<i64>,
    /// Its last authenticated request, as flushed by the instances (coalesced: [`Usage`]).
    pub last_activity_ms: Option<i64>,
}

/// A JWT signing key (HS256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSigningKey {
    /// The key id tokens name in their header (`k1`, `k2`, …).
    pub kid: String,
    pub secret: Vec<u8>,
    pub created_ms: i64,
    /// It also verifies tokens without a `kid`: the secret of an earlier version, carried over, whose tokens
    /// name no key.
    pub unlabelled: bool,
    /// The latest expiry of a token it signed that was recorded (`bridge-sandbox token` records each).
    pub signed_until_ms: i64,
    /// When it stops verifying tokens (set when a newer key replaced it); `None`: the current key.
    pub retires_ms: Option<i64>,
}

/// How a rotation retires the keys it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retire {
    /// When their last recorded token expires, and not before `at_least_ms` (tokens the instances themselves
    /// signed, which are not recorded one by one, live at most until then).
    AfterTheirTokens { at_least_ms: i64 },
    /// At once (a leaked secret): their tokens are refused from the next refresh on.
    Now,
}

/// When a key replaced at `at_ms` by a rotation retires: a current key as `how` says; one retiring already keeps
/// its time, unless `how` is [`Retire::Now`] and that time is later.
pub fn retirement(key: &StoredSigningKey, at_ms: i64, how: Retire) -> Option<i64> {
    match (how, key.retires_ms) {
        (Retire::AfterTheirTokens { at_least_ms }, None) => Some(key.signed_until_ms.max(at_least_ms)),
        (Retire::Now, Some(retires)) if retires <= at_ms => Some(retires),
        (Retire::Now, _) => Some(at_ms),
        (Retire::AfterTheirTokens { .. }, Some(retires)) => Some(retires),
    }
}

/// The `seq`-th signing key (`k<seq>`), made at `at_ms`.
pub fn next_signing_key(seq: i64, secret: &[u8], at_ms: i64) -> StoredSigningKey {
    StoredSigningKey {
        kid: format!("k{seq}"),
        secret: secret.to_vec(),
        created_ms: at_ms,
        unlabelled: false,
        signed_until_ms: at_ms,
        retires_ms: None,
    }
}

/// What one instance keeps in memory to decide on credentials without reading the store (`crate::access`).
#[derive(Debug, Clone, Default)]
pub struct AccessSnapshot {
    /// The access version it was read at.
    pub version: i64,
    pub signing_keys: Vec<StoredSigningKey>,
    /// Ids of every revoked API key.
    pub revoked_keys: Vec<String>,
    pub disabled_projects: Vec<String>,
}

/// Which key to find.
#[derive(Debug, Clone, Copy)]
pub enum KeyLookup<'a> {
    Id(&'a str),
    /// SHA-256 of the key's text, hex.
    Hash(&'a str),
}

/// Use seen by one instance since its last flush (wall clock): keys' last use and projects' last activity. Both
/// backends keep the later of what they have and what they get, so instances flushing at once agree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    pub keys: Vec<(String, i64)>,
    pub projects: Vec<(String, i64)>,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.projects.is_empty()
    }
}

/// What enabling or disabling did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectChange {
    /// The project had no record yet (it was made, in the state asked for).
    pub created: bool,
    /// Its state changed (`false`: it was in that state already; nothing was written).
    pub changed: bool,
}

/// The kinds of audit entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditAction {
    ProjectCreated,
    ProjectDisabled,
    ProjectEnabled,
    ApiKeyCreated,
    /// A key printed by an earlier version (an HMAC of the project) seen for the first time and kept as a record.
    ApiKeyImported,
    ApiKeyRevoked,
    SigningKeyCreated,
    SigningKeyRotated,
}

impl AuditAction {
    pub const ALL: [AuditAction; 8] = [
        AuditAction::ProjectCreated,
        AuditAction::ProjectDisabled,
        AuditAction::ProjectEnabled,
        AuditAction::ApiKeyCreated,
        AuditAction::ApiKeyImported,
        AuditAction::ApiKeyRevoked,
        AuditAction::SigningKeyCreated,
        AuditAction::SigningKeyRotated,
    ];

    /// The stored and printed name (`project.disabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::ProjectCreated => "project.created",
            AuditAction::ProjectDisabled => "project.disabled",
            AuditAction::ProjectEnabled => "project.enabled",
            AuditAction::ApiKeyCreated => "api-key.created",
            AuditAction::ApiKeyImported => "api-key.imported",
            AuditAction::ApiKeyRevoked => "api-key.revoked",
            AuditAction::SigningKeyCreated => "signing-key.created",
            AuditAction::SigningKeyRotated => "signing-key.rotated",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// One entry of the audit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub at_ms: i64,
    /// Who: the operating-system user who ran the command (`$USER`), or `sandbox` for what an instance did.
    pub actor: String,
    pub action: AuditAction,
    pub project: Option<String>,
    /// The key id or signing-key id the entry is about.
    pub subject: Option<String>,
    /// What changed, in words.
    pub detail: String,
}

/// Which audit entries to list: the latest `limit`, of one project or all, oldest first.
#[derive(Debug, Clone)]
pub struct AuditQuery {
    pub project: Option<String>,
    pub limit: u64,
}

/// A wall-clock time as the lists print it (`2026-11-21T10:00:00.000Z`).
pub fn time(ms: i64) -> String {
    DateString::from_millis(ms).map(|d| d.to_string()).unwrap_or_else(|| ms.to_string())
}

/// The audit entries of each change, made once for both backends.
/// Projects, API keys, signing keys and the audit list (every change and its audit entries in one transaction;
/// wall-clock times).
#[async_trait]
pub trait AccessStore: Send + Sync {
    /// The access version: it grows with every revocation, project state change and signing-key change.
    async fn access_version(&self) -> StoreResult<i64>;
    /// Everything an instance keeps in memory to decide on credentials, at one version.
    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot>;
    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>>;
    /// The keys of a project (or of all), oldest first.
    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>>;
    /// Inserts a key, and its project when the project has no record yet, with their audit entries (`imported`:
    /// a key of an earlier version seen for the first time). `false`: a key with that hash exists (nothing written).
    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool>;
    /// Revokes a key at `at_ms` (audited; the access version grows): the key as it is now, `None` when there is no
    /// such key. A key revoked already stays as it was (nothing written).
    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>>;
    /// Makes the project's record if it has none (audited, saying `how`); `true` when it was made.
    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool>;
    /// Disables or enables a project, making its record if it has none (audited; the access version grows when
    /// its state changed).
    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange>;
    /// Every project with a record, by id.
    async fn projects(&self) -> StoreResult<Vec<StoredProject>>;
    /// Keeps the later of the stored and the given last use and activity; a project seen for the first time gets
    /// its record (audited as made by `sandbox`). Not versioned: nobody decides on it.
    async fn record_usage(&self, usage: &Usage) -> StoreResult<()>;
    /// Keeps `candidate` as the first signing key unless there is one (audited); returns whether it was kept.
    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool>;
    /// Makes the next signing key (`k<n>`) from `secret` at `at_ms`, the current one from then on, and retires the
    /// ones it replaces as `how` says (audited; the access version grows). Returns the new key.
    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey>;
    /// Records that `kid` signed a token valid until `until_ms` (the later of that and what is kept stays), if
    /// `kid` is still the current key; `false` when a rotation replaced it meanwhile (sign with the new one).
    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool>;
    /// The latest audit entries, oldest first.
    async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>>;
}

const KEY_COLUMNS: &str = "id, project, name, hash, created_ms, last_used_ms, revoked_ms";

impl FromRow for StoredApiKey {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredApiKey {
            id: row.at(0)?,
            project: row.at(1)?,
            name: row.at(2)?,
            hash: row.at(3)?,
            created_ms: row.at(4)?,
            last_used_ms: row.at(5)?,
            revoked_ms: row.at(6)?,
        })
    }
}

/// A signing key; its secret is stored as hex.
const SIGNING_COLUMNS: &str = "kid, secret, created_ms, unlabelled, signed_until_ms, retires_ms";

impl FromRow for StoredSigningKey {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let secret: String = row.at(1)?;
        Ok(StoredSigningKey {
            kid: row.at(0)?,
            secret: hex::decode(secret).map_err(|e| StoreError::new(e).context("a stored signing key"))?,
            created_ms: row.at(2)?,
            unlabelled: row.at(3)?,
            signed_until_ms: row.at(4)?,
            retires_ms: row.at(5)?,
        })
    }
}

const PROJECT_COLUMNS: &str = "project, created_ms, disabled_ms, last_activity_ms";

impl FromRow for StoredProject {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(StoredProject {
            project: row.at(0)?,
            created_ms: row.at(1)?,
            disabled_ms: row.at(2)?,
            last_activity_ms: row.at(3)?,
        })
    }
}

/// An audit entry; its action is stored by name ([`AuditAction::as_str`]).
const AUDIT_COLUMNS: &str = "at_ms, actor, action, project, subject, detail";

impl FromRow for AuditEntry {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        let action: String = row.at(2)?;
        Ok(AuditEntry {
            at_ms: row.at(0)?,
            actor: row.at(1)?,
            action: AuditAction::from_name(&action)
                .ok_or_else(|| StoreError::new(anyhow::anyhow!("unknown audit action {action:?}")))?,
            project: row.at(3)?,
            subject: row.at(4)?,
            detail: row.at(5)?,
        })
    }
}

/// The SQL of the access area, for both backends.
pub(super) mod sql {
    use super::*;

    /// Raises the access version (on PostgreSQL, taking its row lock until the transaction ends).
    pub(in crate::infra::store) fn bump_version() -> Query {
        query!("UPDATE access_head SET version = version + 1")
    }

    pub(in crate::infra::store) fn version() -> Query {
        query!("SELECT version FROM access_head")
    }

    pub(in crate::infra::store) fn write_audit(entry: &AuditEntry) -> Query {
        query!(
            "INSERT INTO audit_log (at_ms, actor, action, project, subject, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            entry.at_ms,
            &entry.actor,
            entry.action.as_str(),
            &entry.project,
            &entry.subject,
            &entry.detail,
        )
    }

    /// Makes a project's record unless it has one: one row, or none.
    pub(in crate::infra::store) fn insert_project(project: &str, at_ms: i64) -> Query {
        query!(
            "INSERT INTO project_access (project, created_ms) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            project,
            at_ms
        )
    }

    pub(in crate::infra::store) fn signing_keys() -> Query {
        query!("SELECT {SIGNING_COLUMNS} FROM signing_keys ORDER BY seq")
    }

    pub(in crate::infra::store) fn revoked_keys() -> Query {
        query!("SELECT id FROM api_keys WHERE revoked_ms IS NOT NULL")
    }

    pub(in crate::infra::store) fn disabled_projects() -> Query {
        query!("SELECT project FROM project_access WHERE disabled_ms IS NOT NULL")
    }

    pub(in crate::infra::store) fn api_key(lookup: KeyLookup<'_>) -> Query {
        match lookup {
            KeyLookup::Id(id) => query!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1", id),
            KeyLookup::Hash(hash) => query!("SELECT {KEY_COLUMNS} FROM api_keys WHERE hash = ?1", hash),
        }
    }

    pub(in crate::infra::store) fn api_keys(project: Option<&str>) -> Query {
        query!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE CAST(?1 AS TEXT) IS NULL OR project = ?1 ORDER BY created_ms, id",
            project,
        )
    }

    /// Inserts a key unless one with its hash exists: one row, or none.
    pub(in crate::infra::store) fn insert_api_key(key: &StoredApiKey) -> Query {
        query!(
            "INSERT INTO api_keys ({KEY_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (hash) DO NOTHING",
            &key.id,
            &key.project,
            &key.name,
            &key.hash,
            key.created_ms,
            key.last_used_ms,
            key.revoked_ms,
        )
    }

    /// Revokes a key unless it is revoked: the key after, or no row.
    pub(in crate::infra::store) fn revoke_api_key(id: &str, at_ms: i64) -> Query {
        query!(
            "UPDATE api_keys SET revoked_ms = ?2 WHERE id = ?1 AND revoked_ms IS NULL RETURNING {KEY_COLUMNS}",
            id,
            at_ms,
        )
    }

    /// Disables or enables a project unless it is so already: one row, or none.
    pub(in crate::infra::store) fn set_disabled(project: &str, disabled: bool, at_ms: i64) -> Query {
        match disabled {
            true => query!(
                "UPDATE project_access SET disabled_ms = ?2 WHERE project = ?1 AND disabled_ms IS NULL",
                project,
                at_ms,
            ),
            false => query!(
                "UPDATE project_access SET disabled_ms = NULL WHERE project = ?1 AND disabled_ms IS NOT NULL",
                project,
            ),
        }
    }

    pub(in crate::infra::store) fn projects() -> Query {
        query!("SELECT {PROJECT_COLUMNS} FROM project_access ORDER BY project")
    }

    pub(in crate::infra::store) fn key_used(id: &str, at_ms: i64) -> Query {
        query!("UPDATE api_keys SET last_used_ms = greatest(coalesce(last_used_ms, ?2), ?2) WHERE id = ?1", id, at_ms,)
    }

    pub(in crate::infra::store) fn project_active(project: &str, at_ms: i64) -> Query {
        query!(
            "UPDATE project_access SET last_activity_ms = greatest(coalesce(last_activity_ms, ?2), ?2) WHERE project = ?1",
            project,
            at_ms,
        )
    }

    /// Inserts the `seq`-th signing key unless there is one: one row, or none.
    pub(in crate::infra::store) fn insert_signing_key(seq: i64, key: &StoredSigningKey) -> Query {
        query!(
            "INSERT INTO signing_keys (seq, {SIGNING_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            seq,
            &key.kid,
            hex::encode(&key.secret),
            key.created_ms,
            key.unlabelled,
            key.signed_until_ms,
            key.retires_ms,
        )
    }

    pub(in crate::infra::store) fn retire_signing_key(kid: &str, retires_ms: Option<i64>) -> Query {
        query!("UPDATE signing_keys SET retires_ms = ?2 WHERE kid = ?1", kid, retires_ms)
    }

    /// Extends the current key's signed-until time: one row, or none when `kid` is not the current key.
    pub(in crate::infra::store) fn extend_signed_until(kid: &str, until_ms: i64) -> Query {
        query!(
            "UPDATE signing_keys SET signed_until_ms = greatest(signed_until_ms, ?2) WHERE kid = ?1 AND retires_ms IS NULL",
            kid,
            until_ms,
        )
    }

    pub(in crate::infra::store) fn audit(q: &AuditQuery) -> Query {
        query!(
            "SELECT {AUDIT_COLUMNS} FROM (
                 SELECT seq, {AUDIT_COLUMNS} FROM audit_log WHERE CAST(?1 AS TEXT) IS NULL OR project = ?1
                 ORDER BY seq DESC LIMIT ?2
             ) latest ORDER BY seq",
            &q.project,
            q.limit as i64,
        )
    }
}

pub mod audit {
    use super::{time, AuditAction, AuditEntry, Retire, StoredApiKey, StoredSigningKey};

    fn entry(
        at_ms: i64,
        actor: &str,
        action: AuditAction,
        project: Option<&str>,
        subject: Option<&str>,
        detail: String,
    ) -> AuditEntry {
        AuditEntry {
            at_ms,
            actor: actor.to_owned(),
            action,
            project: project.map(str::to_owned),
            subject: subject.map(str::to_owned),
            detail,
        }
    }

    /// Why a project got its record with an API key (see [`project_created`]).
    pub fn with_key(imported: bool) -> &'static str {
        if imported {
            "its API key of an earlier version was used"
        } else {
            "an API key was made"
        }
    }

    /// Why a project got its record when it was disabled or enabled.
    pub fn with_state(disabled: bool) -> &'static str {
        if disabled {
            "disabled before it was used"
        } else {
            "enabled before it was used"
        }
    }

    /// Why a project got its record when an instance flushed its activity (a token not minted by the commands).
    pub const FIRST_REQUEST: &str = "first seen in a request";

    /// A project's first record; `how` says what made it (`a token was minted`, [`with_key`], ...).
    pub fn project_created(project: &str, at_ms: i64, actor: &str, how: &str) -> AuditEntry {
        entry(at_ms, actor, AuditAction::ProjectCreated, Some(project), None, format!("project created ({how})"))
    }

    pub fn project_state(project: &str, disabled: bool, at_ms: i64, actor: &str) -> AuditEntry {
        let (action, detail) = match disabled {
            true => (AuditAction::ProjectDisabled, "enabled → disabled: its tokens and keys are refused"),
            false => (AuditAction::ProjectEnabled, "disabled → enabled: its tokens and keys are accepted again"),
        };
        entry(at_ms, actor, action, Some(project), None, detail.to_owned())
    }

    pub fn key_created(key: &StoredApiKey, imported: bool, actor: &str) -> AuditEntry {
        let (action, detail) = match imported {
            false => (AuditAction::ApiKeyCreated, format!("API key {} \"{}\" created", key.id, key.name)),
            true => (
                AuditAction::ApiKeyImported,
                format!("API key {} of an earlier version (an HMAC of the project) kept as a record", key.id),
            ),
        };
        entry(key.created_ms, actor, action, Some(&key.project), Some(&key.id), detail)
    }

    pub fn key_revoked(key: &StoredApiKey, at_ms: i64, actor: &str) -> AuditEntry {
        let detail = format!("API key {} \"{}\" revoked: active → revoked", key.id, key.name);
        entry(at_ms, actor, AuditAction::ApiKeyRevoked, Some(&key.project), Some(&key.id), detail)
    }

    pub fn signing_key_created(key: &StoredSigningKey, actor: &str) -> AuditEntry {
        let detail = match key.unlabelled {
            true => format!("signing key {} made from the secret of an earlier version", key.kid),
            false => format!("signing key {} made", key.kid),
        };
        entry(key.created_ms, actor, AuditAction::SigningKeyCreated, None, Some(&key.kid), detail)
    }

    /// A rotation: the new key, and when each key it replaced retires.
    pub fn signing_key_rotated(
        new: &StoredSigningKey,
        retired: &[StoredSigningKey],
        how: Retire,
        actor: &str,
    ) -> AuditEntry {
        let mut detail = format!("signing key {} made; new tokens use it", new.kid);
        for old in retired {
            let when = old.retires_ms.map(time).unwrap_or_default();
            detail.push_str(&match how {
                Retire::Now => format!("; {} retired at once ({when})", old.kid),
                Retire::AfterTheirTokens { .. } => format!("; {} retires at {when}", old.kid),
            });
        }
        entry(new.created_ms, actor, AuditAction::SigningKeyRotated, None, Some(&new.kid), detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_key_retires_after_its_tokens_or_at_once() {
        let key = |signed_until_ms, retires_ms| StoredSigningKey {
            signed_until_ms,
            retires_ms,
            ..next_signing_key(1, b"s", 0)
        };
        let after = |at_least_ms| Retire::AfterTheirTokens { at_least_ms };
        // The current key: when its last recorded token expires, but not before the instances' own tokens do.
        assert_eq!(retirement(&key(5_000, None), 1_000, after(3_000)), Some(5_000));
        assert_eq!(retirement(&key(2_000, None), 1_000, after(3_000)), Some(3_000));
        // A key retiring already keeps its time; at once shortens it, never lengthens it.
        assert_eq!(retirement(&key(9_000, Some(4_000)), 1_000, after(3_000)), Some(4_000));
        assert_eq!(retirement(&key(9_000, Some(4_000)), 1_000, Retire::Now), Some(1_000));
        assert_eq!(retirement(&key(9_000, Some(500)), 1_000, Retire::Now), Some(500));
        assert_eq!(retirement(&key(9_000, None), 1_000, Retire::Now), Some(1_000));
    }

    #[test]
    fn audit_actions_round_trip_their_names() {
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::from_name(action.as_str()), Some(action));
        }
        assert_eq!(AuditAction::from_name("project.renamed"), None);
    }
}
