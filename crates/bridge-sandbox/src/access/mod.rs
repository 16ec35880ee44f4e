//! Who may call: the sandbox's [`Authenticator`], over what the store keeps about projects, API keys and signing
//! keys (`crate::infra::store::access`).
//!
//! Each instance keeps a **view** in memory: the signing keys (a [`JwtAuthenticator`] with each by its `kid`), the
//! ids of revoked API keys and the disabled projects, read in one snapshot at one access version. A task polls the
//! store's access version every [`REFRESH`] (one indexed read of one row) and reloads the view when it moved; every
//! change that must be seen at once (a revocation, a project disabled or enabled, a signing key made or rotated)
//! raises that version in the transaction that makes it. So a change made through any process on the store (the
//! `bridge-sandbox` commands, another instance) is in force on every instance within [`REFRESH`] plus one read, and
//! a request is decided from memory: a bearer token costs its signature check and three hash lookups.
//!
//! What the view has not met yet is looked up in the store by the request that meets it, so nothing made a moment
//! ago is refused: an API key (by the SHA-256 of its text; its id and project are then remembered, as they never
//! change), and a token naming a signing key the view does not have (a rotation not yet polled: the view is
//! reloaded before answering). A revoked key found that way is refused even before the view knows it.
//!
//! When keys were last used and projects last active is noted in memory and written every [`FLUSH`] (one write
//! for everything noted, keeping the later time when instances flush at once), not at every request. A key's use
//! is its own presentation (`x-api-key`, or the exchange); requests made with the token exchanged from it count
//! for its project's activity.

pub mod admin;
pub mod api_keys;
pub mod signing;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use bridge_server::{AuthFailure, Authenticator, Caller, JwtAuthenticator};

use crate::infra::clock::wall_ms;
use crate::infra::store::{AccessSnapshot, KeyLookup, Store, StoreError, StoredSigningKey, Usage};
use api_keys::{legacy, EXCHANGED_JWT_TTL};
use signing::TokenClaims;

/// How often each instance polls the store's access version.
pub const REFRESH: Duration = Duration::from_millis(250);

/// How often each instance writes the keys' last use and the projects' last activity it noted.
pub const FLUSH: Duration = Duration::from_secs(5);

/// Clock skew tolerated on a token's `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 5;

/// The signing keys, revocations and disabled projects at one access version.
struct View {
    version: i64,
    jwt: JwtAuthenticator,
    /// Every key by `kid`, retired ones too (their tokens verify, then are refused as retired: 401, not 400).
    keys: HashMap<String, StoredSigningKey>,
    /// The key of an earlier version: verifies tokens without a `kid`, and its secret checks legacy API keys.
    unlabelled: Option<StoredSigningKey>,
    current: Option<StoredSigningKey>,
    revoked: HashSet<String>,
    disabled: HashSet<String>,
}

impl View {
    fn new(snapshot: AccessSnapshot) -> Self {
        let mut jwt = JwtAuthenticator::new().with_leeway_seconds(LEEWAY_SECONDS);
        for key in &snapshot.signing_keys {
            jwt = jwt.with_hs256_kid(&key.kid, &key.secret);
        }
        let unlabelled = snapshot.signing_keys.iter().find(|k| k.unlabelled).cloned();
        if let Some(key) = &unlabelled {
            jwt = jwt.with_hs256(&key.secret);
        }
        Self {
            version: snapshot.version,
            jwt,
            current: signing::current(&snapshot.signing_keys).cloned(),
            keys: snapshot.signing_keys.into_iter().map(|k| (k.kid.clone(), k)).collect(),
            unlabelled,
            revoked: snapshot.revoked_keys.into_iter().collect(),
            disabled: snapshot.disabled_projects.into_iter().collect(),
        }
    }

    /// Refuses what a verified token's key, API key or project no longer allows.
    fn admit(&self, kid: Option<&str>, claims: &TokenClaims) -> Result<(), AuthFailure> {
        let key = match kid {
            Some(kid) => self.keys.get(kid),
            None => self.unlabelled.as_ref(),
        };
        if key.is_some_and(|k| signing::retired(k, wall_ms())) {
            return Err(AuthFailure::Rejected("the token was signed with a retired key".into()));
        }
        if let Some(id) = &claims.api_key_id {
            if self.revoked.contains(id) {
                return Err(AuthFailure::Rejected(format!(
                    "the API key {id} this token was exchanged from was revoked"
                )));
            }
        }
        self.admit_project(&claims.claims.sub)
    }

    fn admit_project(&self, project: &str) -> Result<(), AuthFailure> {
        match self.disabled.contains(project) {
            true => Err(AuthFailure::Rejected(format!("the project {project} is disabled"))),
            false => Ok(()),
        }
    }

    /// Whether `token`'s header names a signing key this view does not have.
    fn names_unknown_key(&self, token: &str) -> bool {
        jsonwebtoken::decode_header(token).ok().and_then(|h| h.kid).is_some_and(|kid| !self.keys.contains_key(&kid))
    }
}

/// An API key met before: what never changes about it.
#[derive(Clone)]
struct KnownKey {
    id: String,
    project: String,
}

/// Use noted since the last flush.
#[derive(Default)]
struct Noted {
    keys: HashMap<String, i64>,
    projects: HashMap<String, i64>,
}

fn note(map: &mut HashMap<String, i64>, what: &str, at: i64) {
    match map.get_mut(what) {
        Some(last) => *last = at,
        None => {
            map.insert(what.to_owned(), at);
        }
    }
}

struct Inner {
    store: Arc<dyn Store>,
    view: RwLock<Arc<View>>,
    known: RwLock<HashMap<String, KnownKey>>,
    noted: Mutex<Noted>,
    refreshing: tokio::sync::Mutex<()>,
}

/// The access control of one instance. Cheap to clone; its refresh task ends when the last clone is dropped.
#[derive(Clone)]
pub struct Access(Arc<Inner>);

fn unavailable(e: StoreError) -> AuthFailure {
    tracing::error!(error = %e, "the access store failed");
    AuthFailure::Unavailable(format!("the sandbox store failed: {e}"))
}

impl Access {
    /// The view of `store` (which has its signing keys: `signing::ensure_initial`), and its refresh task on the
    /// current tokio runtime (polling every [`REFRESH`], flushing use every [`FLUSH`]).
    pub async fn open(store: Arc<dyn Store>) -> Result<Self, StoreError> {
        let view = View::new(store.access_snapshot().await?);
        let access = Self(Arc::new(Inner {
            store,
            view: RwLock::new(Arc::new(view)),
            known: Default::default(),
            noted: Default::default(),
            refreshing: Default::default(),
        }));
        tokio::spawn(refresh_loop(Arc::downgrade(&access.0)));
        Ok(access)
    }

    fn view(&self) -> Arc<View> {
        self.0.view.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reloads the view if the store's access version moved; whether it did.
    pub async fn refresh(&self) -> Result<bool, StoreError> {
        let _one_at_a_time = self.0.refreshing.lock().await;
        if self.0.store.access_version().await? == self.view().version {
            return Ok(false);
        }
        let view = View::new(self.0.store.access_snapshot().await?);
        tracing::debug!(version = view.version, "access view reloaded");
        *self.0.view.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(view);
        Ok(true)
    }

    /// Writes the use noted since the last flush (also when an instance stops).
    pub async fn flush(&self) -> Result<(), StoreError> {
        let noted = std::mem::take(&mut *self.0.noted.lock().unwrap_or_else(|p| p.into_inner()));
        let usage = Usage { keys: noted.keys.into_iter().collect(), projects: noted.projects.into_iter().collect() };
        if usage.is_empty() {
            return Ok(());
        }
        self.0.store.record_usage(&usage).await
    }

    fn note(&self, project: &str, key: Option<&str>) {
        let now = wall_ms();
        let mut noted = self.0.noted.lock().unwrap_or_else(|p| p.into_inner());
        note(&mut noted.projects, project, now);
        if let Some(key) = key {
            note(&mut noted.keys, key, now);
        }
    }

    /// Verifies a bearer token: its signature (by its `kid`), expiry, signing key not retired, the API key it was
    /// exchanged from not revoked, its project not disabled.
    pub async fn verify_token(&self, token: &str) -> Result<Caller, AuthFailure> {
        let mut view = self.view();
        let data = match view.jwt.verify::<TokenClaims>(token) {
            Err(AuthFailure::Invalid(_)) if view.names_unknown_key(token) => {
                // Rotated a moment ago by another process: read the new keys before answering.
                self.refresh().await.map_err(unavailable)?;
                view = self.view();
                view.jwt.verify::<TokenClaims>(token)?
            }
            verified => verified?,
        };
        view.admit(data.header.kid.as_deref(), &data.claims)?;
        self.note(&data.claims.claims.sub, None);
        data.claims.claims.into_caller()
    }

    /// Verifies an API key: known (in memory or in the store, or a key of an earlier version), not revoked, its
    /// project not disabled. Returns its project and its id.
    pub async fn verify_key(&self, text: &str) -> Result<(Caller, String), AuthFailure> {
        let hash = api_keys::hash(text);
        let cached = self.0.known.read().unwrap_or_else(|p| p.into_inner()).get(&hash).cloned();
        let key = match cached {
            Some(key) => key,
            None => self.look_up(text, &hash).await?,
        };
        let view = self.view();
        if view.revoked.contains(&key.id) {
            return Err(AuthFailure::Rejected(format!("the API key {} was revoked", key.id)));
        }
        view.admit_project(&key.project)?;
        self.note(&key.project, Some(&key.id));
        Ok((Caller::new(key.project), key.id))
    }

    /// A key the view has not met: from the store, or a key of an earlier version kept as a record now.
    async fn look_up(&self, text: &str, hash: &str) -> Result<KnownKey, AuthFailure> {
        let store = &self.0.store;
        let mut stored = store.api_key(KeyLookup::Hash(hash)).await.map_err(unavailable)?;
        if stored.is_none() {
            let view = self.view();
            let legacy_secret = view.unlabelled.as_ref().filter(|k| !signing::retired(k, wall_ms())).map(|k| &k.secret);
            let Some(project) = legacy_secret.and_then(|secret| legacy::project_of(secret, text)) else {
                return Err(AuthFailure::Rejected("unknown API key".into()));
            };
            let record = legacy::record(text, &project, wall_ms());
            store.insert_api_key(&record, true, "sandbox").await.map_err(unavailable)?;
            tracing::info!(id = %record.id, %project, "an API key of an earlier version was kept as a record");
            stored = store.api_key(KeyLookup::Hash(hash)).await.map_err(unavailable)?;
        }
        let stored = stored.ok_or_else(|| AuthFailure::Rejected("unknown API key".into()))?;
        if stored.revoked_ms.is_some() {
            return Err(AuthFailure::Rejected(format!("the API key {} was revoked", stored.id)));
        }
        let key = KnownKey { id: stored.id, project: stored.project };
        self.0.known.write().unwrap_or_else(|p| p.into_inner()).insert(hash.to_owned(), key.clone());
        Ok(key)
    }

    /// `POST /authentication/auth/apiKey`: a token of the key's project, valid [`EXCHANGED_JWT_TTL`], naming the
    /// key (refused from the moment the key is revoked).
    pub async fn exchange(&self, text: &str) -> Result<String, AuthFailure> {
        let (caller, id) = self.verify_key(text).await?;
        let claims = TokenClaims::new(&caller.project_id, false, wall_ms(), EXCHANGED_JWT_TTL).from_api_key(&id);
        self.sign(&claims)
    }

    /// A token of `project` valid an hour, signed with the current key (what the exchange answers, without a key:
    /// for tests and tools in the same process; `bridge-sandbox token` makes tokens for people).
    pub fn session_token(&self, project: &str, post_bridge_data: bool) -> Result<String, AuthFailure> {
        self.sign(&TokenClaims::new(project, post_bridge_data, wall_ms(), EXCHANGED_JWT_TTL))
    }

    fn sign(&self, claims: &TokenClaims) -> Result<String, AuthFailure> {
        let view = self.view();
        let key = view.current.as_ref().ok_or_else(|| AuthFailure::Unavailable("no signing key".into()))?;
        signing::sign(key, claims).map_err(|e| AuthFailure::Unavailable(format!("signing the token failed: {e}")))
    }
}

impl Authenticator for Access {
    async fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        self.verify_token(token).await
    }

    async fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        Ok(self.verify_key(key).await?.0)
    }
}

/// Polls the access version every [`REFRESH`] and flushes use every [`FLUSH`], until the access is dropped.
async fn refresh_loop(access: Weak<Inner>) {
    let mut flushed = std::time::Instant::now();
    loop {
        tokio::time::sleep(REFRESH).await;
        let Some(inner) = access.upgrade() else { return };
        let access = Access(inner);
        if let Err(e) = access.refresh().await {
            tracing::warn!(error = %e, "refreshing the access view failed");
        }
        if flushed.elapsed() >= FLUSH {
            flushed = std::time::Instant::now();
            if let Err(e) = access.flush().await {
                tracing::warn!(error = %e, "writing the keys' last use failed");
            }
        }
    }
}
