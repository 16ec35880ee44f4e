//! Authentication, which runs before any decoding.
//!
//! An [`Authenticator`] turns a credential into a [`Caller`]: the project (`userId`) and its enabled features.
//! [`JwtAuthenticator`] verifies bearer JWTs (HS256, RS256, ES256; `exp` is required and checked; `alg: none`
//! and any algorithm not configured are refused) and optionally legacy API keys. Answers, for every
//! authenticated operation (facts file):
//!
//! The bearer token is `Authorization: Bearer <JWT>` or, as the production service's official SDK sends it, the
//! JWT as the whole header value with no scheme (`Authorization: <JWT>`); both are accepted everywhere and behave
//! the same ([`bearer_token`]).
//!
//! | credential | answer |
//! |---|---|
//! | none (no bearer token in `Authorization`, no accepted API key header) | 401 `Unauthorized` |
//! | a bearer token that is malformed or whose signature does not verify | 400 `InvalidJwt` |
//! | a verified token that is expired, not yet valid, or rejected by the authenticator | 401 `Unauthorized` |
//! | a legacy API key (`x-api-key`, event feed only) that is unknown | 401 `Unauthorized` |

use std::collections::BTreeSet;
use std::sync::Arc;

use http::HeaderMap;
use jsonwebtoken::{errors::ErrorKind, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use bridge_contract::Security;

/// The feature name that enables `postBridgeData` (JWT claim `features`).
pub const POST_BRIDGE_DATA: &str = "postBridgeData";

/// The legacy API key header (the document's `legacyApiKey` security scheme).
pub const API_KEY_HEADER: &str = bridge_contract::operations::LEGACY_API_KEY_HEADER;

/// Who is calling: the project and its enabled features.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    /// The project id, which records show as `userId`.
    pub project_id: String,
    /// Enabled features, e.g. [`POST_BRIDGE_DATA`].
    pub features: BTreeSet<String>,
}

impl Caller {
    pub fn new(project_id: impl Into<String>) -> Self {
        Self { project_id: project_id.into(), features: BTreeSet::new() }
    }

    pub fn with_feature(mut self, feature: impl Into<String>) -> Self {
        self.features.insert(feature.into());
        self
    }

    /// Whether the project may send `postBridgeData`.
    pub fn has_post_bridge_data(&self) -> bool {
        self.features.contains(POST_BRIDGE_DATA)
    }
}

/// Why a credential was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// Malformed or unverifiable: 400 `InvalidJwt`.
    Invalid(String),
    /// Missing or rejected: 401 `Unauthorized`.
    Rejected(String),
}

/// Verifies credentials. Implement it to plug in another token scheme or a key store.
pub trait Authenticator: Send + Sync + 'static {
    /// Verifies the token of `Authorization: Bearer <token>` (or `Authorization: <token>`).
    fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure>;

    /// Verifies a legacy API key (only operations whose security allows it ask). Rejects all by default.
    fn verify_api_key(&self, _key: &str) -> Result<Caller, AuthFailure> {
        Err(AuthFailure::Rejected("API keys are not accepted by this server".into()))
    }
}

impl<T: Authenticator + ?Sized> Authenticator for Arc<T> {
    fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        (**self).verify_bearer(token)
    }
    fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        (**self).verify_api_key(key)
    }
}

/// Finds and verifies the credential an operation requires.
pub fn authenticate(auth: &dyn Authenticator, security: Security, headers: &HeaderMap) -> Result<Caller, AuthFailure> {
    if security == Security::None {
        return Ok(Caller::default());
    }
    if let Some(value) = headers.get(http::header::AUTHORIZATION) {
        let value = value.to_str().map_err(|_| AuthFailure::Invalid("the Authorization header is not text".into()))?;
        match bearer_token(value) {
            Some("") => return Err(AuthFailure::Invalid("the bearer token is empty".into())),
            Some(token) => return auth.verify_bearer(token),
            None => {}
        }
    }
    if security == Security::BearerOrApiKey {
        if let Some(key) = headers.get(API_KEY_HEADER) {
            let key = key.to_str().map_err(|_| AuthFailure::Rejected("the API key is not text".into()))?;
            return auth.verify_api_key(key);
        }
        return Err(AuthFailure::Rejected(format!("a bearer token or an {API_KEY_HEADER} header is required")));
    }
    Err(AuthFailure::Rejected("a bearer token is required (Authorization: Bearer <JWT>)".into()))
}

/// The token an `Authorization` header value carries: `Bearer <token>` (any case), or the token as the whole
/// value with no scheme, as the production service's official SDK sends it (a JWT has no white space).
/// `None` for an empty value or another scheme (`Basic ...`): no bearer credential.
pub fn bearer_token(value: &str) -> Option<&str> {
    let value = value.trim();
    match value.split_once(char::is_whitespace) {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => Some(token.trim()),
        Some(_) => None,
        None if value.eq_ignore_ascii_case("bearer") => Some(""),
        None if value.is_empty() => None,
        None => Some(value),
    }
}

/// The claims of a project token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The project id.
    pub sub: String,
    /// Expiry, seconds since the Unix epoch (required).
    pub exp: u64,
    /// Issued at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<u64>,
    /// Enabled features, e.g. `["postBridgeData"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

/// Verifies bearer JWTs with the configured keys, and legacy API keys from a fixed map. Cloning it shares
/// nothing: each clone holds its own copy of the keys (for [`crate::router`] and [`crate::sandbox_router`]).
#[derive(Clone)]
pub struct JwtAuthenticator {
    keys: Vec<(Algorithm, DecodingKey)>,
    api_keys: std::collections::HashMap<String, Caller>,
    leeway_seconds: u64,
}

impl std::fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let algorithms: Vec<Algorithm> = self.keys.iter().map(|(a, _)| *a).collect();
        f.debug_struct("JwtAuthenticator")
            .field("algorithms", &algorithms)
            .field("api_keys", &self.api_keys.len())
            .finish()
    }
}

/// Makes jsonwebtoken use its pure-Rust crypto even when another crate in the build enables `aws_lc_rs`.
fn install_crypto_provider() {
    let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
}

impl JwtAuthenticator {
    /// An authenticator that accepts nothing until keys are added.
    pub fn new() -> Self {
        install_crypto_provider();
        Self { keys: Vec::new(), api_keys: Default::default(), leeway_seconds: 0 }
    }

    /// Accept HS256 tokens signed with `secret`.
    pub fn with_hs256(mut self, secret: &[u8]) -> Self {
        self.keys.push((Algorithm::HS256, DecodingKey::from_secret(secret)));
        self
    }

    /// Accept RS256 tokens verified by an RSA public key (PEM, PKCS#1 or SPKI).
    pub fn with_rs256_pem(mut self, public_key_pem: &[u8]) -> Result<Self, jsonwebtoken::errors::Error> {
        self.keys.push((Algorithm::RS256, DecodingKey::from_rsa_pem(public_key_pem)?));
        Ok(self)
    }

    /// Accept ES256 tokens verified by a P-256 public key (PEM, SPKI).
    pub fn with_es256_pem(mut self, public_key_pem: &[u8]) -> Result<Self, jsonwebtoken::errors::Error> {
        self.keys.push((Algorithm::ES256, DecodingKey::from_ec_pem(public_key_pem)?));
        Ok(self)
    }

    /// Accept a legacy API key for a project (event feed only).
    pub fn with_api_key(mut self, key: impl Into<String>, caller: Caller) -> Self {
        self.api_keys.insert(key.into(), caller);
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (default 0).
    pub fn with_leeway_seconds(mut self, seconds: u64) -> Self {
        self.leeway_seconds = seconds;
        self
    }
}

impl Default for JwtAuthenticator {
    fn default() -> Self {
        Self::new()
    }
}

impl Authenticator for JwtAuthenticator {
    fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| AuthFailure::Invalid(format!("malformed token: {e}")))?;
        let Some((alg, key)) = self.keys.iter().find(|(alg, _)| *alg == header.alg) else {
            return Err(AuthFailure::Invalid(format!("tokens signed with {:?} are not accepted", header.alg)));
        };
        let mut validation = Validation::new(*alg);
        validation.leeway = self.leeway_seconds;
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.validate_nbf = true;
        validation.validate_aud = false;
        match jsonwebtoken::decode::<Claims>(token, key, &validation) {
            Ok(data) => {
                let mut caller = Caller::new(data.claims.sub);
                caller.features.extend(data.claims.features);
                if caller.project_id.is_empty() {
                    return Err(AuthFailure::Rejected("the token names no project".into()));
                }
                Ok(caller)
            }
            Err(e) => Err(match e.kind() {
                ErrorKind::ExpiredSignature => AuthFailure::Rejected("the token has expired".into()),
                ErrorKind::ImmatureSignature => AuthFailure::Rejected("the token is not valid yet".into()),
                ErrorKind::InvalidSignature => AuthFailure::Invalid("the token's signature does not verify".into()),
                other => AuthFailure::Invalid(format!("invalid token: {other:?}")),
            }),
        }
    }

    fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        self.api_keys.get(key).cloned().ok_or_else(|| AuthFailure::Rejected("unknown API key".into()))
    }
}

/// Signs project tokens (for the sandbox's `token` command and for tests).
pub fn sign_token(
    claims: &Claims,
    algorithm: Algorithm,
    key: &EncodingKey,
) -> Result<String, jsonwebtoken::errors::Error> {
    install_crypto_provider();
    jsonwebtoken::encode(&Header::new(algorithm), claims, key)
}
