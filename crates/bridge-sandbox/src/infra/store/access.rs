//! What the store keeps about who may call (issue 26): projects (`project_access`: enabled or disabled, last
//! activity), API keys (`api_keys`: only the SHA-256 of each secret), the JWT signing keys (`signing_keys`, by
//! `kid`), the audit list (`audit_log`) and the access version (`access_head`), which grows with every change an
//! instance must see at once (a revocation, a project disabled or enabled, a signing key made or replaced), so
//! instances poll one number and reload only when it moved (`crate::access`). Times here are wall-clock
//! milliseconds: they are about people and processes, not about the sandbox clock.
//!
//! The audit entries are made here, once for both backends ([`audit`]), and written by the backend in the same
//! transaction as the change they describe.

use bridge_contract::DateString;

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

impl KeyLookup<'_> {
    /// The column it is found by (both backends name them alike).
    pub fn column(&self) -> &'static str {
        match self {
            KeyLookup::Id(_) => "id",
            KeyLookup::Hash(_) => "hash",
        }
    }

    pub fn value(&self) -> &str {
        match self {
            KeyLookup::Id(value) | KeyLookup::Hash(value) => value,
        }
    }
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
