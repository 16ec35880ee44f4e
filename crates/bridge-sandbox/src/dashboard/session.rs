//! Dashboard sessions: server-side records keyed by a random id ([`session_id`]: `sbx_session_` and 32 bytes from
//! the operating system's RNG in base64url) that the browser holds in an `HttpOnly; SameSite=Strict;
//! Path=/dashboard` cookie. Session ids and CSRF tokens ([`csrf_of`]: `sbx_csrf_…`) have the sandbox's
//! credential form ([`bridge_server::credential`]), so logs, recordings and reports recognise and redact them
//! like API keys, wherever they appear.
//!
//! A session keeps the credential that signed in (a project token or an API key), never a caller: every request
//! verifies it again through the API's own authenticator, so a token that expires, a key revoked or a project
//! disabled ends the session at once, exactly when the API would start refusing it. A session also ends
//! [`IDLE`] after its last request, [`LIFETIME`] after sign-in, and at sign-out.
//!
//! **Kept in the store, shared by instances** (issue 36): a session signed in on one instance is served by every
//! instance of the database, and sign-out on one ends it on all (the row is deleted). What a row holds is useless
//! without the browser's cookie:
//!
//! * its key is the SHA-256 of the session id ([`id_hash`]), as API keys are kept: the id is 256 random bits, so
//!   its hash reveals nothing and cannot be searched back;
//! * the credential is sealed (ChaCha20-Poly1305, RustCrypto's `chacha20poly1305`) under a key derived from the
//!   session id itself (HKDF-SHA-256, [`Sealed`]), with the project as associated data: neither the database, nor
//!   a backup of it, nor the sandbox's own keys open it; only a request that presents the cookie does, for that
//!   request. (A key kept with the sandbox's secrets would have let whoever reads the database and those secrets
//!   open every session; keeping only a token's hash and claims would have meant verifying credentials other than
//!   the API does.)
//! * the CSRF token is not kept: it is derived from the session id ([`csrf_of`], HMAC-SHA-256), so any instance
//!   that sees the cookie renders and checks the same token, and a database reader learns nothing of it.
//!
//! Each dashboard request reads its session's row once (by primary key); the row's last use is written at most
//! once a minute ([`TOUCH_EVERY`]), so the idle end is kept to the minute.
//!
//! How many are kept, so that no project can take another's (docs/operations.md, "Threats"): at most
//! [`PER_PROJECT`] per project, a project signing in beyond it ends its own least recently used session; and at
//! most [`MAX_SESSIONS`] in all, beyond which a sign-in is refused (503, with the time until a session ends)
//! rather than ending anyone's session. Sign-ins take turns across instances (`SessionStore::start_session`),
//! so both caps hold for the whole fleet.

use std::sync::Arc;
use std::time::Duration;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use hmac::{Hmac, Mac};
use rand::TryRngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::infra::clock::wall_ms;
use crate::infra::store::{NewSession, SessionCaps, Store, StoreResult};

/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(2 * 3600);
/// A session ends this long after sign-in, used or not.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Most sessions of one project kept at once: a project's sign-in beyond it ends that project's least recently
/// used session (never another project's).
pub const PER_PROJECT: usize = 20;
/// Most sessions kept at once, of all projects (a flood of sign-ins cannot fill the store): a sign-in beyond it is
/// refused, and no session is ended for it.
pub const MAX_SESSIONS: usize = 10_000;
/// A session's last use is written when it is older than this (not at every request).
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// The name of the session cookie.
pub const COOKIE: &str = "sandbox_dashboard";

/// What signed in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Credential {
    /// A project token (JWT), verified as `Authorization: Bearer`.
    Token(String),
    /// An API key, verified as the API verifies `x-api-key`.
    ApiKey(String),
}

/// A notice shown once on the next page (the outcome of an action).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub ok: bool,
    pub text: String,
}

/// A live session, as a request that presented its id reads it.
#[derive(Clone, Debug)]
pub struct Session {
    /// The project that signed in.
    pub project: String,
    pub credential: Credential,
    /// The token every state-changing form carries (hidden field `csrf`): [`csrf_of`] the id.
    pub csrf: String,
}

/// The sessions, kept in the store. Cheap to clone.
#[derive(Clone)]
pub struct Sessions {
    store: Arc<dyn Store>,
    caps: SessionCaps,
    touch_every: Duration,
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

/// The CSRF token of session `id`: `sbx_csrf_` and the base64url of HMAC-SHA-256 keyed by the id. Whoever can
/// compute it holds the id, and so the session already; a page of another site holds neither.
pub fn csrf_of(id: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(id.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"bridge-sandbox dashboard CSRF token v1");
    let tag = mac.finalize().into_bytes();
    format!("{}{}", bridge_server::credential::CSRF_PREFIX, data_encoding::BASE64URL_NOPAD.encode(&tag))
}

/// The key of session `id`'s row: its SHA-256, hex.
pub fn id_hash(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// A credential sealed for the store: base64url of a random 96-bit nonce and the ChaCha20-Poly1305 ciphertext of
/// the credential (JSON), under the key HKDF-SHA-256 derives from the session id, the project as associated data.
/// Each key seals one credential once.
pub struct Sealed;

impl Sealed {
    fn cipher(id: &str) -> ChaCha20Poly1305 {
        let hkdf = hkdf::Hkdf::<Sha256>::new(Some(b"bridge-sandbox dashboard session"), id.as_bytes());
        let mut key = [0u8; 32];
        hkdf.expand(b"credential sealing key v1", &mut key).expect("32 bytes is a valid HKDF-SHA-256 length");
        ChaCha20Poly1305::new(&key.into())
    }

    /// `credential` of session `id` of `project`, sealed.
    pub fn seal(id: &str, project: &str, credential: &Credential) -> String {
        let mut nonce = [0u8; 12];
        rand::rngs::OsRng.try_fill_bytes(&mut nonce).expect("the operating system's random number generator");
        let plain = serde_json::to_vec(credential).expect("a credential serializes");
        let sealed = Self::cipher(id)
            .encrypt(&Nonce::from(nonce), Payload { msg: &plain, aad: project.as_bytes() })
            .expect("ChaCha20-Poly1305 seals any message this short");
        data_encoding::BASE64URL_NOPAD.encode(&[&nonce[..], &sealed].concat())
    }

    /// The credential of session `id` of `project`, or `None` when `sealed` was not sealed for them.
    pub fn open(id: &str, project: &str, sealed: &str) -> Option<Credential> {
        let bytes = data_encoding::BASE64URL_NOPAD.decode(sealed.as_bytes()).ok()?;
        let (nonce, sealed) = bytes.split_at_checked(12)?;
        let nonce = Nonce::from(<[u8; 12]>::try_from(nonce).ok()?);
        let plain = Self::cipher(id).decrypt(&nonce, Payload { msg: sealed, aad: project.as_bytes() }).ok()?;
        serde_json::from_slice(&plain).ok()
    }
}

/// Whether two secrets are equal, in time that depends on neither where they differ nor their lengths: their
/// SHA-256 digests are compared with `subtle`'s constant-time equality.
pub fn same_secret(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    Sha256::digest(a.as_bytes()).ct_eq(&Sha256::digest(b.as_bytes())).into()
}

fn ms(d: Duration) -> i64 {
    d.as_millis() as i64
}

impl Sessions {
    /// The sessions kept in `store`, with the default caps.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self::with_caps(store, PER_PROJECT, MAX_SESSIONS)
    }

    /// Sessions with caps other than the defaults (`per_project` of one project, `total` in all).
    pub fn with_caps(store: Arc<dyn Store>, per_project: usize, total: usize) -> Self {
        let caps = SessionCaps { per_project: per_project as u64, total: total as u64 };
        Self { store, caps, touch_every: TOUCH_EVERY }
    }

    /// These sessions with their last use written whenever it is older than `every` (tests of the caps' order).
    #[cfg(test)]
    pub fn touched_every(mut self, every: Duration) -> Self {
        self.touch_every = every;
        self
    }

    /// Starts a session of `project` signed in with `credential`; returns its id. Ended sessions are deleted
    /// first; a project at its cap loses its own least recently used session; when the store is full of other
    /// projects' sessions, the sign-in is refused and nobody's session ends.
    pub async fn start(&self, project: &str, credential: &Credential) -> StoreResult<Result<String, Full>> {
        let id = session_id();
        let now = wall_ms();
        let new = NewSession {
            id_hash: id_hash(&id),
            project: project.to_owned(),
            credential: Sealed::seal(&id, project, credential),
            now_ms: now,
            expires_ms: now + ms(IDLE.min(LIFETIME)),
        };
        Ok(match self.store.start_session(&new, self.caps).await? {
            Ok(()) => Ok(id),
            Err(first_end_ms) => {
                let wait = Duration::from_millis(first_end_ms.saturating_sub(now).max(0) as u64);
                Err(Full { retry_after: wait.max(Duration::from_secs(1)) })
            }
        })
    }

    /// The live session `id` (marked used now), or `None` (unknown, ended: then it is deleted, or not openable).
    pub async fn get(&self, id: &str) -> StoreResult<Option<Session>> {
        let (hash, now) = (id_hash(id), wall_ms());
        let Some(row) = self.store.session(&hash, now).await? else { return Ok(None) };
        let Some(credential) = Sealed::open(id, &row.project, &row.credential) else {
            tracing::warn!("a dashboard session's credential does not open with its id; ending it");
            self.store.end_session(&hash).await?;
            return Ok(None);
        };
        if now - row.used_ms >= ms(self.touch_every) {
            let expires = (now + ms(IDLE)).min(row.started_ms + ms(LIFETIME));
            self.store.touch_session(&hash, now, expires).await?;
        }
        Ok(Some(Session { project: row.project, credential, csrf: csrf_of(id) }))
    }

    /// Takes the session's notice (shown once).
    pub async fn take_notice(&self, id: &str) -> StoreResult<Option<Notice>> {
        let notice = self.store.take_session_notice(&id_hash(id)).await?;
        Ok(notice.and_then(|n| serde_json::from_str(&n).ok()))
    }

    /// Leaves a notice for the next page of session `id`.
    pub async fn notify(&self, id: &str, notice: Notice) -> StoreResult<()> {
        let text = serde_json::to_string(&notice).expect("a notice serializes");
        self.store.leave_session_notice(&id_hash(id), &text).await
    }

    /// Deletes session `id` (sign-out, or a credential no longer accepted), on every instance.
    pub async fn end(&self, id: &str) -> StoreResult<()> {
        self.store.end_session(&id_hash(id)).await
    }

    /// How many sessions are kept.
    #[cfg(test)]
    pub async fn len(&self) -> StoreResult<u64> {
        self.store.session_count().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Arc<dyn Store>) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::infra::store::SqliteStore::open(dir.path()).unwrap();
        (dir, Arc::new(store))
    }

    #[tokio::test]
    async fn ids_and_tokens_are_random_credentials_and_sessions_end_when_deleted() {
        for (a, prefix) in [(session_id(), "sbx_session_"), (csrf_of(&session_id()), "sbx_csrf_")] {
            let tail = a.strip_prefix(prefix).expect(prefix);
            assert_eq!(data_encoding::BASE64URL_NOPAD.decode(tail.as_bytes()).map(|b| b.len()), Ok(32), "{a}");
            assert!(bridge_server::credential::is_credential(&a), "recognised by its form: {a}");
            let cookie = super::super::session_cookie(&axum::http::HeaderMap::new(), Some(&a));
            assert!(cookie.to_str().unwrap().starts_with(&format!("{COOKIE}={a};")), "a cookie value as it is");
        }
        assert_ne!(session_id(), session_id());
        let (_dir, store) = store();
        let sessions = Sessions::new(store);
        let id = sessions.start("p", &Credential::ApiKey("k".into())).await.unwrap().unwrap();
        let s = sessions.get(&id).await.unwrap().expect("live");
        assert_eq!((s.project.as_str(), &s.credential), ("p", &Credential::ApiKey("k".into())));
        assert_eq!(s.csrf, csrf_of(&id), "the same token on every instance");
        assert_ne!(s.csrf, csrf_of(&session_id()));
        assert!(sessions.get("not a session").await.unwrap().is_none());
        sessions.notify(&id, Notice { ok: true, text: "done".into() }).await.unwrap();
        assert_eq!(sessions.take_notice(&id).await.unwrap().map(|n| n.text), Some("done".into()));
        assert_eq!(sessions.take_notice(&id).await.unwrap(), None, "a notice is shown once");
        sessions.end(&id).await.unwrap();
        assert!(sessions.get(&id).await.unwrap().is_none());
        assert_eq!(sessions.len().await.unwrap(), 0);
    }

    /// What the store keeps of a session is useless without its id: the row's key is the id's hash, the credential
    /// opens only with the id (and only for its project), and neither the id, the credential nor the CSRF token is
    /// in the row.
    #[test]
    fn a_sealed_credential_opens_only_with_its_session_id_and_project() {
        let (id, other) = (session_id(), session_id());
        let credential = Credential::Token("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.c2lnbmF0dXJl".into());
        let sealed = Sealed::seal(&id, "p", &credential);
        assert_eq!(Sealed::open(&id, "p", &sealed), Some(credential.clone()));
        assert_eq!(Sealed::open(&other, "p", &sealed), None, "another session's id does not open it");
        assert_eq!(Sealed::open(&id, "q", &sealed), None, "nor another project's row");
        assert_eq!(Sealed::open(&id_hash(&id), "p", &sealed), None, "nor the row's own key");
        assert_ne!(Sealed::seal(&id, "p", &credential), sealed, "a fresh nonce each time");
        let row = format!("{} {sealed}", id_hash(&id));
        for secret in [id.as_str(), "eyJhbGciOiJIUzI1NiJ9", &csrf_of(&id)] {
            assert!(!row.contains(secret), "{secret} is in the row");
        }
        assert_eq!(id_hash(&id).len(), 64);
    }

    #[tokio::test]
    async fn a_project_beyond_its_cap_ends_its_own_least_used_session_and_a_full_store_refuses_without_ending_any() {
        let (_dir, store) = store();
        let sessions = Sessions::with_caps(store, 3, 7).touched_every(Duration::ZERO);
        let start = |project: &'static str| {
            let sessions = sessions.clone();
            async move { sessions.start(project, &Credential::ApiKey(project.into())).await.unwrap() }
        };
        let live = |id: String| {
            let sessions = sessions.clone();
            async move { sessions.get(&id).await.unwrap().is_some() }
        };
        let mut bob = Vec::new();
        for _ in 0..3 {
            bob.push(start("bob").await.unwrap());
        }
        let mut alice = Vec::new();
        for _ in 0..3 {
            alice.push(start("alice").await.unwrap());
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        // Alice's first is used again: her second is now the least recently used.
        assert!(live(alice[0].clone()).await);
        tokio::time::sleep(Duration::from_millis(2)).await;
        let fourth = start("alice").await.unwrap();
        assert!(!live(alice[1].clone()).await, "her least recently used session ended");
        for id in [&alice[0], &alice[2], &fourth] {
            assert!(live(id.clone()).await);
        }
        // A hundred more of Alice's: still three of hers, and all of Bob's.
        for _ in 0..100 {
            start("alice").await.unwrap();
        }
        assert_eq!(sessions.len().await.unwrap(), 6);
        for id in &bob {
            assert!(live(id.clone()).await, "another project's sign-ins end none of Bob's sessions");
        }
        // The store holds 7: the seventh is Carol's; the eighth (Dave's) is refused, and nobody's session ends.
        let carol = start("carol").await.unwrap();
        let refused = start("dave").await.unwrap_err();
        assert!(refused.retry_after >= Duration::from_secs(1) && refused.retry_after <= IDLE, "{refused:?}");
        assert_eq!(sessions.len().await.unwrap(), 7);
        assert!(live(carol).await);
        for id in &bob {
            assert!(live(id.clone()).await);
        }
        // A project at its own cap still signs in when the store is full: it ends one of its own.
        assert!(start("bob").await.is_ok());
        assert_eq!(sessions.len().await.unwrap(), 7);
    }

    #[test]
    fn secrets_compare_by_value() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", ""));
    }
}
