//! Authentication, which runs before any decoding.
//!
//! An [`Authenticator`] turns a credential into a [`Caller`]: the project (`userId`) and its enabled features. Its
//! methods are `async`, so an implementation may consult a store when it does not know a credential yet (a key
//! made a moment ago by another process); one that knows everything in memory answers at once.
//! [`JwtAuthenticator`] verifies bearer JWTs (HS256, RS256, ES256; `exp` is required and checked; `alg: none`
//! and any algorithm not configured are refused; several keys, chosen by the token's `kid` header) and optionally
//! legacy API keys. Answers, for every authenticated operation (production's, docs/production.md):
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
//! | the authenticator could not decide (its store failed) | 503 `ServiceUnavailable` |

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::HeaderMap;
use jsonwebtoken::{errors::ErrorKind, Algorithm, DecodingKey, EncodingKey, Header, TokenData, Validation};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

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
    /// Missing or rejected (unknown, expired, revoked, of a disabled project): 401 `Unauthorized`.
    Rejected(String),
    /// The authenticator could not decide (the store it consults failed): 503 `ServiceUnavailable`, which every
    /// operation documents; the request can be retried.
    Unavailable(String),
}

/// Verifies credentials. Implement it to plug in another token scheme or a key store. The methods are `async`
/// (write `async fn` in your `impl`): an implementation that keeps what it knows in memory answers at once, and
/// one that meets a credential it does not know yet may read its store before answering.
pub trait Authenticator: Send + Sync + 'static {
    /// Verifies the token of `Authorization: Bearer <token>` (or `Authorization: <token>`).
    fn verify_bearer(&self, token: &str) -> impl Future<Output = Result<Caller, AuthFailure>> + Send;

    /// Verifies a legacy API key (only operations whose security allows it ask). Rejects all by default.
    fn verify_api_key(&self, _key: &str) -> impl Future<Output = Result<Caller, AuthFailure>> + Send {
        std::future::ready(Err(AuthFailure::Rejected("API keys are not accepted by this server".into())))
    }
}

impl<T: Authenticator> Authenticator for Arc<T> {
    fn verify_bearer(&self, token: &str) -> impl Future<Output = Result<Caller, AuthFailure>> + Send {
        (**self).verify_bearer(token)
    }
    fn verify_api_key(&self, key: &str) -> impl Future<Output = Result<Caller, AuthFailure>> + Send {
        (**self).verify_api_key(key)
    }
}

type Verdict<'a> = Pin<Box<dyn Future<Output = Result<Caller, AuthFailure>> + Send + 'a>>;

/// [`Authenticator`] behind a pointer (the router keeps one of any type): the same methods, their futures boxed.
pub(crate) trait DynAuthenticator: Send + Sync + 'static {
    fn verify_bearer_boxed<'a>(&'a self, token: &'a str) -> Verdict<'a>;
    fn verify_api_key_boxed<'a>(&'a self, key: &'a str) -> Verdict<'a>;
}

impl<T: Authenticator> DynAuthenticator for T {
    fn verify_bearer_boxed<'a>(&'a self, token: &'a str) -> Verdict<'a> {
        Box::pin(self.verify_bearer(token))
    }
    fn verify_api_key_boxed<'a>(&'a self, key: &'a str) -> Verdict<'a> {
        Box::pin(self.verify_api_key(key))
    }
}

/// The credential a request presents for an operation's `security`.
enum Presented<'a> {
    /// The operation needs none.
    Nothing,
    Bearer(&'a str),
    ApiKey(&'a str),
}

/// Finds the credential an operation requires in the headers (without verifying it).
fn presented(security: Security, headers: &HeaderMap) -> Result<Presented<'_>, AuthFailure> {
    if security == Security::None {
        return Ok(Presented::Nothing);
    }
    if let Some(value) = headers.get(http::header::AUTHORIZATION) {
        let value = value.to_str().map_err(|_| AuthFailure::Invalid("the Authorization header is not text".into()))?;
        match bearer_token(value) {
            Some("") => return Err(AuthFailure::Invalid("the bearer token is empty".into())),
            Some(token) => return Ok(Presented::Bearer(token)),
            None => {}
        }
    }
    if security == Security::BearerOrApiKey {
        if let Some(key) = headers.get(API_KEY_HEADER) {
            let key = key.to_str().map_err(|_| AuthFailure::Rejected("the API key is not text".into()))?;
            return Ok(Presented::ApiKey(key));
        }
        return Err(AuthFailure::Rejected(format!("a bearer token or an {API_KEY_HEADER} header is required")));
    }
    Err(AuthFailure::Rejected("a bearer token is required (Authorization: Bearer <JWT>)".into()))
}

/// Finds and verifies the credential an operation requires.
pub async fn authenticate<A: Authenticator>(
    auth: &A,
    security: Security,
    headers: &HeaderMap,
) -> Result<Caller, AuthFailure> {
    authenticate_dyn(auth, security, headers).await
}

/// [`authenticate`] with the router's authenticator (any [`Authenticator`] is one).
pub(crate) async fn authenticate_dyn(
    auth: &dyn DynAuthenticator,
    security: Security,
    headers: &HeaderMap,
) -> Result<Caller, AuthFailure> {
    match presented(security, headers)? {
        Presented::Nothing => Ok(Caller::default()),
        Presented::Bearer(token) => auth.verify_bearer_boxed(token).await,
        Presented::ApiKey(key) => auth.verify_api_key_boxed(key).await,
    }
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

impl Claims {
    /// The caller these claims name: the project (`sub`, which must not be empty) and its features.
    pub fn into_caller(self) -> Result<Caller, AuthFailure> {
        if self.sub.is_empty() {
            return Err(AuthFailure::Rejected("the token names no project".into()));
        }
        let mut caller = Caller::new(self.sub);
        caller.features.extend(self.features);
        Ok(caller)
    }
}

/// A verification key: its algorithm, the key, and the `kid` (key id) of the tokens it verifies.
#[derive(Clone)]
struct Key {
    /// `Some`: tokens whose header names this `kid`. `None`: tokens without a `kid`, and tokens whose `kid` no
    /// key of this authenticator has (how keys were chosen before key ids).
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

/// Verifies bearer JWTs with the configured keys, and legacy API keys from a fixed map. A token is verified by the
/// key its `kid` header names, or, when it names none or one this authenticator does not have, by the keys added
/// without a key id (each of its algorithm in turn). Cloning it shares nothing: each clone holds its own copy of
/// the keys (for [`crate::router`] and [`crate::sandbox_router`]).
#[derive(Clone)]
pub struct JwtAuthenticator {
    keys: Vec<Key>,
    api_keys: std::collections::HashMap<String, Caller>,
    leeway_seconds: u64,
}

impl std::fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<(Algorithm, Option<&str>)> = self.keys.iter().map(|k| (k.alg, k.kid.as_deref())).collect();
        f.debug_struct("JwtAuthenticator").field("keys", &keys).field("api_keys", &self.api_keys.len()).finish()
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

    fn with_key(mut self, kid: Option<String>, alg: Algorithm, key: DecodingKey) -> Self {
        self.keys.push(Key { kid, alg, key });
        self
    }

    /// Accept HS256 tokens signed with `secret`.
    pub fn with_hs256(self, secret: &[u8]) -> Self {
        self.with_key(None, Algorithm::HS256, DecodingKey::from_secret(secret))
    }

    /// Accept HS256 tokens whose header names `kid`, signed with `secret` (one of several keys: rotation).
    pub fn with_hs256_kid(self, kid: impl Into<String>, secret: &[u8]) -> Self {
        self.with_key(Some(kid.into()), Algorithm::HS256, DecodingKey::from_secret(secret))
    }

    /// Accept RS256 tokens verified by an RSA public key (PEM, PKCS#1 or SPKI).
    pub fn with_rs256_pem(self, public_key_pem: &[u8]) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(self.with_key(None, Algorithm::RS256, DecodingKey::from_rsa_pem(public_key_pem)?))
    }

    /// Accept ES256 tokens verified by a P-256 public key (PEM, SPKI).
    pub fn with_es256_pem(self, public_key_pem: &[u8]) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(self.with_key(None, Algorithm::ES256, DecodingKey::from_ec_pem(public_key_pem)?))
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

    /// Verifies `token` (signature, algorithm, `exp` and `sub` required, `exp` and `nbf` checked) and decodes
    /// its header and claims into `C`: for an authenticator built on this one that reads claims a [`Caller`] does
    /// not carry (a `#[serde(flatten)]` [`Claims`] and its own members). Failures are those of the module's table.
    pub fn verify<C: DeserializeOwned>(&self, token: &str) -> Result<TokenData<C>, AuthFailure> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| AuthFailure::Invalid(format!("malformed token: {e}")))?;
        let named = header.kid.as_deref().filter(|kid| self.keys.iter().any(|k| k.kid.as_deref() == Some(kid)));
        let mut candidates = self.keys.iter().filter(|k| k.kid.as_deref() == named && k.alg == header.alg).peekable();
        if candidates.peek().is_none() {
            return Err(AuthFailure::Invalid(match (&header.kid, named) {
                (Some(kid), None) if self.keys.iter().all(|k| k.kid.is_some()) => {
                    format!("no key `{kid}` verifies tokens here")
                }
                (None, _) if self.keys.iter().all(|k| k.kid.is_some()) => "the token names no key (`kid`)".into(),
                _ => format!("tokens signed with {:?} are not accepted", header.alg),
            }));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway_seconds;
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.validate_nbf = true;
        validation.validate_aud = false;
        let mut failure = AuthFailure::Invalid("the token's signature does not verify".into());
        for key in candidates {
            match jsonwebtoken::decode::<C>(token, &key.key, &validation) {
                Ok(data) => return Ok(data),
                Err(e) => {
                    failure = match e.kind() {
                        ErrorKind::ExpiredSignature => AuthFailure::Rejected("the token has expired".into()),
                        ErrorKind::ImmatureSignature => AuthFailure::Rejected("the token is not valid yet".into()),
                        ErrorKind::InvalidSignature => {
                            AuthFailure::Invalid("the token's signature does not verify".into())
                        }
                        other => AuthFailure::Invalid(format!("invalid token: {other:?}")),
                    };
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        break;
                    }
                }
            }
        }
        Err(failure)
    }
}

impl Default for JwtAuthenticator {
    fn default() -> Self {
        Self::new()
    }
}

impl Authenticator for JwtAuthenticator {
    async fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        self.verify::<Claims>(token)?.claims.into_caller()
    }

    async fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        self.api_keys.get(key).cloned().ok_or_else(|| AuthFailure::Rejected("unknown API key".into()))
    }
}

/// Signs project tokens (for the sandbox's `token` command and for tests).
pub fn sign_token(
    claims: &Claims,
    algorithm: Algorithm,
    key: &EncodingKey,
) -> Result<String, jsonwebtoken::errors::Error> {
    sign_claims(claims, &Header::new(algorithm), key)
}

/// Signs any claims under `header` (its `alg`, and a `kid` naming the key: [`JwtAuthenticator::with_hs256_kid`]).
pub fn sign_claims<C: Serialize>(
    claims: &C,
    header: &Header,
    key: &EncodingKey,
) -> Result<String, jsonwebtoken::errors::Error> {
    install_crypto_provider();
    jsonwebtoken::encode(header, claims, key)
}
