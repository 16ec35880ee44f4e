//! The JWT signing keys (HS256) and the tokens they sign.
//!
//! Keys live in the store (`signing_keys`), named `k1`, `k2`, … (the `kid` in every token's header). The newest is
//! the current key: every token is signed with it. `bridge-sandbox signing-key rotate` makes the next one; the key
//! it replaces keeps verifying the tokens it signed until the last of them expires (the latest expiry
//! `bridge-sandbox token` recorded, and at least [`INSTANCE_TOKENS`] after the rotation, which covers the tokens
//! instances sign themselves: exchanged ones live an hour), then it retires and verifies nothing. A leaked secret
//! is retired at once with `--retire-now`. Instances read the keys from the store and follow every change within
//! their refresh interval, without a restart (`crate::access`).
//!
//! Upgrading: the one secret of earlier versions (`DATA/keys/jwt-hs256.secret`, or the database's
//! `jwt-hs256-secret`) becomes `k1`, marked `unlabelled`: it also verifies tokens without a `kid`, which is how
//! those versions signed them. As their lifetimes were not recorded, it is taken to have signed tokens valid until
//! [`EARLIER_TOKENS`] after the upgrade (`bridge-sandbox token`'s default lifetime was and is 24 hours).

use std::time::Duration;

use bridge_server::Claims;
use serde::{Deserialize, Serialize};

use crate::access::api_keys::random_bytes;
use crate::infra::store::{Store, StoreResult, StoredSigningKey};

/// How long tokens that instances sign themselves (the API-key exchange) can outlive a rotation: their lifetime
/// and a minute for an instance that signs with the replaced key until its next refresh.
pub const INSTANCE_TOKENS: Duration = Duration::from_secs(3600 + 60);

/// How long tokens of earlier versions are taken to be valid after the upgrade (their expiries were not recorded).
pub const EARLIER_TOKENS: Duration = Duration::from_secs(24 * 3600);

/// A project token's claims: the contract's, and the API key a token was exchanged from (refused once that key
/// is revoked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenClaims {
    #[serde(flatten)]
    pub claims: Claims,
    /// The id of the API key this token was exchanged from (`POST /authentication/auth/apiKey`).
    #[serde(rename = "apiKeyId", default, skip_serializing_if = "Option::is_none")]
    pub api_key_id: Option<String>,
}

impl TokenClaims {
    /// The claims of a token of `project` issued at `now_ms` (wall clock) and valid for `ttl`.
    pub fn new(project: &str, post_bridge_data: bool, now_ms: i64, ttl: Duration) -> Self {
        let now = now_ms.max(0) as u64 / 1000;
        let features = if post_bridge_data { vec![bridge_server::auth::POST_BRIDGE_DATA.to_owned()] } else { vec![] };
        let claims = Claims { sub: project.to_owned(), exp: now + ttl.as_secs(), iat: Some(now), features };
        Self { claims, api_key_id: None }
    }

    /// The same claims, exchanged from the API key `id`.
    pub fn from_api_key(mut self, id: &str) -> Self {
        self.api_key_id = Some(id.to_owned());
        self
    }

    /// When the token expires, in wall-clock milliseconds.
    pub fn expires_ms(&self) -> i64 {
        (self.claims.exp as i64).saturating_mul(1000)
    }
}

/// Signs `claims` with `key` (HS256, its `kid` in the header).
pub fn sign(key: &StoredSigningKey, claims: &TokenClaims) -> Result<String, jsonwebtoken::errors::Error> {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some(key.kid.clone());
    bridge_server::auth::sign_claims(claims, &header, &jsonwebtoken::EncodingKey::from_secret(&key.secret))
}

/// The current key: the newest that is not retiring.
pub fn current(keys: &[StoredSigningKey]) -> Option<&StoredSigningKey> {
    keys.iter().rev().find(|k| k.retires_ms.is_none())
}

/// A new HS256 secret: 32 bytes from the operating system's random generator.
pub fn new_secret() -> anyhow::Result<Vec<u8>> {
    random_bytes(32)
}

/// Makes the first signing key of a store that has none: the secret of an earlier version if there is one
/// (`legacy`), else a new one. Instances and commands starting at once agree on one.
pub async fn ensure_initial(store: &dyn Store, legacy: Option<Vec<u8>>, now_ms: i64) -> anyhow::Result<()> {
    if !store.access_snapshot().await?.signing_keys.is_empty() {
        return Ok(());
    }
    let candidate = match legacy {
        Some(secret) => StoredSigningKey {
            kid: "k1".into(),
            secret,
            created_ms: now_ms,
            unlabelled: true,
            signed_until_ms: now_ms.saturating_add(EARLIER_TOKENS.as_millis() as i64),
            retires_ms: None,
        },
        None => crate::infra::store::access::next_signing_key(1, &new_secret()?, now_ms),
    };
    if store.initial_signing_key(&candidate, "sandbox").await? {
        tracing::info!(kid = %candidate.kid, carried_over = candidate.unlabelled, "made the first JWT signing key");
    }
    Ok(())
}

/// The current key of `store`, and the token `claims` signed with it; the expiry is recorded, so a rotation keeps
/// the key until this token expires.
pub async fn sign_recorded(store: &dyn Store, claims: &TokenClaims) -> anyhow::Result<String> {
    // A rotation between reading the current key and recording the expiry replaced it: sign with the new one.
    for _ in 0..5 {
        let keys = store.access_snapshot().await?.signing_keys;
        let key = current(&keys).ok_or_else(|| anyhow::anyhow!("the store has no signing key"))?;
        if store.extend_signed_until(&key.kid, claims.expires_ms()).await? {
            return Ok(sign(key, claims)?);
        }
    }
    anyhow::bail!("the signing key kept changing while a token was being signed; try again")
}

/// Whether a key verifies tokens at `now_ms`.
pub fn retired(key: &StoredSigningKey, now_ms: i64) -> bool {
    key.retires_ms.is_some_and(|at| at <= now_ms)
}

/// The store's keys, for `signing-key list`.
pub async fn keys(store: &dyn Store) -> StoreResult<Vec<StoredSigningKey>> {
    Ok(store.access_snapshot().await?.signing_keys)
}
