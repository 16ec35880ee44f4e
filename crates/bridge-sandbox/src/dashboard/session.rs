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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::TryRngCore;
use sha2::{Digest, Sha256};

/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(2 * 3600);
/// A session ends this long after sign-in, used or not.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions kept at once: the oldest are dropped beyond it (a flood of sign-ins cannot exhaust memory).
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
    pub credential: Credential,
    /// The token every state-changing form carries (hidden field `csrf`).
    pub csrf: String,
    pub notice: Option<Notice>,
    started: Instant,
    used: Instant,
}

/// The sessions of this instance. Cheap to clone.
#[derive(Clone, Default)]
pub struct Sessions(Arc<Mutex<HashMap<String, Session>>>);

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
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a session for `credential`; returns its id.
    pub fn start(&self, credential: Credential) -> String {
        let now = Instant::now();
        let id = session_id();
        let session = Session { credential, csrf: csrf_token(), notice: None, started: now, used: now };
        let mut sessions = self.lock();
        sessions.retain(|_, s| alive(s, now));
        if sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| k.clone()) {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(id.clone(), session);
        id
    }

    /// The live session `id` (marked used now), or `None` (unknown, or ended: then it is deleted).
    pub fn get(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let mut sessions = self.lock();
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
        self.lock().get_mut(id).and_then(|s| s.notice.take())
    }

    /// Leaves a notice for the next page of session `id`.
    pub fn notify(&self, id: &str, notice: Notice) {
        if let Some(s) = self.lock().get_mut(id) {
            s.notice = Some(notice);
        }
    }

    /// Deletes session `id` (sign-out, or a credential no longer accepted).
    pub fn end(&self, id: &str) {
        self.lock().remove(id);
    }

    /// How many sessions are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn alive(s: &Session, now: Instant) -> bool {
    now.duration_since(s.used) < IDLE && now.duration_since(s.started) < LIFETIME
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
        let id = sessions.start(Credential::ApiKey("k".into()));
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
    fn secrets_compare_by_value() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", ""));
    }
}
