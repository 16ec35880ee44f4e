//! Dashboard sessions: server-side records keyed by a random id ([`session_id`]: `sbx_session_` and 32 bytes from
//! the operating system's RNG in base64url) that the browser holds in an `HttpOnly; SameSite=Strict;
//! Path=/dashboard` cookie. Session ids and CSRF tokens ([`csrf_token`]: `sbx_csrf_…`) have the sandbox's
//! credential form ([`bridge_server::credential`]), so logs, recordings and reports recognise and redact them
//! like API keys, wherever they appear.
//!
//! A session keeps the credential that signed in (a project token or an API key), never a caller: every request
//! verifies it again through the API's own authenticator, so a token that expires or a key that is no longer
//! accepted ends the session at once, exactly when the API would start refusing it. A session also ends
//! [`IDLE`] after its last request, [`LIFETIME`] after sign-in, and at sign-out (deleted here, not only in the
//! browser).
//!
//! Sessions live in this instance's memory: several instances behind a load balancer need sticky sessions (or
//! the user signs in again on another instance; signing in costs one paste). They are not written to the store
//! on purpose: a session holds a credential, and the store is shared and backed up.
//!
//! How many are kept, so that no project can take another's (docs/operations.md, "Threats"): at most
//! [`PER_PROJECT`] per project, a project signing in beyond it ends its own least recently used session; and at
//! most [`MAX_SESSIONS`] in all, beyond which a sign-in is refused (503, with the time until a session ends)
//! rather than ending anyone's session. Both rules count one project's sessions only, so they hold as they are
//! in a store shared by instances.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::TryRngCore;
use sha2::{Digest, Sha256};

/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(2 * 3600);
/// A session ends this long after sign-in, used or not.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions of one project kept at once: a project's sign-in beyond it ends that project's least recently
/// used session (never another project's).
pub const PER_PROJECT: usize = 20;
/// Most sessions kept at once, of all projects (a flood of sign-ins cannot exhaust memory): a sign-in beyond it is
/// refused, and no session is ended for it.
pub const MAX_SESSIONS: usize = 10_000;

/// The name of the session cookie.
pub const COOKIE: &str = "sandbox_dashboard";

/// What signed in.
#[derive(Clone, Debug)]
pub enum Credential {
    /// A project token (JWT), verified as `Authorization: Bearer`.
    Token(String),
    /// An API key, verified as the API verifies `x-api-key`.
    ApiKey(String),
}

/// A notice shown once on the next page (the outcome of an action).
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub ok: bool,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Session {
    /// The project that signed in.
    pub project: String,
    pub credential: Credential,
    /// The token every state-changing form carries (hidden field `csrf`).
    pub csrf: String,
    pub notice: Option<Notice>,
    started: Instant,
    used: Instant,
}

/// The sessions of this instance. Cheap to clone.
#[derive(Clone)]
pub struct Sessions(Arc<Mutex<Kept>>);

struct Kept {
    sessions: HashMap<String, Session>,
    per_project: usize,
    total: usize,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::with_caps(PER_PROJECT, MAX_SESSIONS)
    }
}

/// A sign-in refused because [`MAX_SESSIONS`] sessions are kept: retry after `retry_after`, when the first of them
/// ends by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    pub retry_after: Duration,
}

/// `prefix` and 32 random bytes from the operating system, in base64url (43 characters).
fn random_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.try_fill_bytes(&mut bytes).expect("the operating system's random number generator");
    format!("{prefix}{}", data_encoding::BASE64URL_NOPAD.encode(&bytes))
}

/// A new session id: `sbx_session_` and 43 base64url characters.
pub fn session_id() -> String {
    random_secret(bridge_server::credential::SESSION_PREFIX)
}

/// A new CSRF token: `sbx_csrf_` and 43 base64url characters.
pub fn csrf_token() -> String {
    random_secret(bridge_server::credential::CSRF_PREFIX)
}

/// Whether two secrets are equal, in time that depends on neither where they differ nor their lengths: their
/// SHA-256 digests are compared with `subtle`'s constant-time equality.
pub fn same_secret(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    Sha256::digest(a.as_bytes()).ct_eq(&Sha256::digest(b.as_bytes())).into()
}

impl Sessions {
    /// Sessions with caps other than the defaults (`per_project` of one project, `total` in all).
    pub fn with_caps(per_project: usize, total: usize) -> Self {
        Self(Arc::new(Mutex::new(Kept { sessions: HashMap::new(), per_project, total })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a session of `project` signed in with `credential`; returns its id. Ended sessions are deleted
    /// first; a project at its cap loses its own least recently used session; when the store is full of other
    /// projects' sessions, the sign-in is refused and nobody's session ends.
    pub fn start(&self, project: &str, credential: Credential) -> Result<String, Full> {
        let now = Instant::now();
        let mut kept = self.lock();
        kept.sessions.retain(|_, s| alive(s, now));
        let own: Vec<(&String, Instant)> =
            kept.sessions.iter().filter(|(_, s)| s.project == project).map(|(id, s)| (id, s.used)).collect();
        let own_count = own.len();
        let least_used = own.into_iter().min_by_key(|(_, used)| *used).map(|(id, _)| id.clone());
        if own_count >= kept.per_project {
            if let Some(least_used) = least_used {
                kept.sessions.remove(&least_used);
            }
        } else if kept.sessions.len() >= kept.total {
            let first_end = kept.sessions.values().map(|s| ends(s, now)).min().unwrap_or(Duration::ZERO);
            return Err(Full { retry_after: first_end.max(Duration::from_secs(1)) });
        }
        let id = session_id();
        let session = Session {
            project: project.to_owned(),
            credential,
            csrf: csrf_token(),
            notice: None,
            started: now,
            used: now,
        };
        kept.sessions.insert(id.clone(), session);
        Ok(id)
    }

    /// The live session `id` (marked used now), or `None` (unknown, or ended: then it is deleted).
    pub fn get(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let sessions = &mut self.lock().sessions;
        match sessions.get_mut(id) {
            Some(s) if alive(s, now) => {
                s.used = now;
                Some(s.clone())
            }
            Some(_) => {
                sessions.remove(id);
                None
            }
            None => None,
        }
    }

    /// Takes the session's notice (shown once).
    pub fn take_notice(&self, id: &str) -> Option<Notice> {
        self.lock().sessions.get_mut(id).and_then(|s| s.notice.take())
    }

    /// Leaves a notice for the next page of session `id`.
    pub fn notify(&self, id: &str, notice: Notice) {
        if let Some(s) = self.lock().sessions.get_mut(id) {
            s.notice = Some(notice);
        }
    }

    /// Deletes session `id` (sign-out, or a credential no longer accepted).
    pub fn end(&self, id: &str) {
        self.lock().sessions.remove(id);
    }

    /// How many sessions are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn alive(s: &Session, now: Instant) -> bool {
    now.duration_since(s.used) < IDLE && now.duration_since(s.started) < LIFETIME
}

/// How long until a session ends by itself (idle, or at the end of its lifetime), unless used.
fn ends(s: &Session, now: Instant) -> Duration {
    (s.used + IDLE).min(s.started + LIFETIME).saturating_duration_since(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tokens_are_random_credentials_and_sessions_end_when_deleted() {
        for (made, prefix) in [(session_id as fn() -> String, "sbx_session_"), (csrf_token, "sbx_csrf_")] {
            let a = made();
            let tail = a.strip_prefix(prefix).expect(prefix);
            assert_eq!(data_encoding::BASE64URL_NOPAD.decode(tail.as_bytes()).map(|b| b.len()), Ok(32), "{a}");
            assert_ne!(a, made());
            assert!(bridge_server::credential::is_credential(&a), "recognised by its form: {a}");
            let cookie = super::super::session_cookie(&axum::http::HeaderMap::new(), Some(&a));
            assert!(cookie.to_str().unwrap().starts_with(&format!("{COOKIE}={a};")), "a cookie value as it is");
        }
        let sessions = Sessions::default();
        let id = sessions.start("p", Credential::ApiKey("k".into())).unwrap();
        let s = sessions.get(&id).expect("live");
        assert_ne!(s.csrf, id);
        assert!(sessions.get("not a session").is_none());
        sessions.notify(&id, Notice { ok: true, text: "done".into() });
        assert_eq!(sessions.take_notice(&id).map(|n| n.text), Some("done".into()));
        assert_eq!(sessions.take_notice(&id), None, "a notice is shown once");
        sessions.end(&id);
        assert!(sessions.get(&id).is_none());
        assert!(sessions.is_empty());
    }

    #[test]
    fn a_project_beyond_its_cap_ends_its_own_least_used_session_and_a_full_store_refuses_without_ending_any() {
        let sessions = Sessions::with_caps(3, 7);
        let start = |project: &str| sessions.start(project, Credential::ApiKey(project.into()));
        let bob: Vec<String> = (0..3).map(|_| start("bob").unwrap()).collect();
        let alice: Vec<String> = (0..3).map(|_| start("alice").unwrap()).collect();
        // Alice's first is used again: her second is now the least recently used.
        std::thread::sleep(Duration::from_millis(2));
        assert!(sessions.get(&alice[0]).is_some());
        let fourth = start("alice").unwrap();
        assert!(sessions.get(&alice[1]).is_none(), "her least recently used session ended");
        for id in [&alice[0], &alice[2], &fourth] {
            assert!(sessions.get(id).is_some());
        }
        // A hundred more of Alice's: still three of hers, and all of Bob's.
        for _ in 0..100 {
            start("alice").unwrap();
        }
        assert_eq!(sessions.len(), 6);
        for id in &bob {
            assert!(sessions.get(id).is_some(), "another project's sign-ins end none of Bob's sessions");
        }
        // The store holds 7: the seventh is Carol's; the eighth (Dave's) is refused, and nobody's session ends.
        let carol = start("carol").unwrap();
        let refused = start("dave").unwrap_err();
        assert!(refused.retry_after >= Duration::from_secs(1) && refused.retry_after <= IDLE, "{refused:?}");
        assert_eq!(sessions.len(), 7);
        assert!(sessions.get(&carol).is_some() && bob.iter().all(|id| sessions.get(id).is_some()));
        // A project at its own cap still signs in when the store is full: it ends one of its own.
        assert!(start("bob").is_ok());
        assert_eq!(sessions.len(), 7);
    }

    #[test]
    fn secrets_compare_by_value() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", ""));
    }
}
