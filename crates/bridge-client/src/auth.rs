//! Credentials: a bearer JWT (fixed, or from a [`TokenProvider`] asked before every request, for rotating
//! tokens) and the legacy API key.
//!
//! Which credential a request carries follows the operation's `security` in the document
//! ([`bridge_contract::Security`]):
//!
//! | operation | sent |
//! |---|---|
//! | `GET /webhook/public-key` (`security: []`) | nothing |
//! | `GET /webhook/user-events-cursor` (bearer or legacy key) | `Authorization: Bearer <jwt>` when a bearer credential is set, else `x-api-key: <key>` |
//! | every other operation (bearer) | `Authorization: Bearer <jwt>` |
//!
//! The credentials are applied by progenitor's request hook (`ClientHooks::pre`, in `transport.rs`), and again
//! before each retry.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bridge_contract::Security;
use reqwest::header::{HeaderValue, AUTHORIZATION};

/// The header of the legacy API key (`components.securitySchemes.legacyApiKey`).
pub const API_KEY_HEADER: &str = bridge_contract::operations::LEGACY_API_KEY_HEADER;

/// The error type a [`TokenProvider`] returns.
pub type TokenError = Box<dyn std::error::Error + Send + Sync>;

/// The future a [`TokenProvider`] returns.
pub type TokenFuture<'a> = Pin<Box<dyn Future<Output = Result<String, TokenError>> + Send + 'a>>;

/// Supplies the bearer JWT; asked before every request that needs one, so an implementation that refreshes
/// its token (and caches it until shortly before expiry) keeps a long-lived client working.
///
/// Closures work too: `|| async { Ok::<_, TokenError>(fetch_token().await?) }`.
pub trait TokenProvider: Send + Sync {
    /// The JWT to send now (without the `Bearer ` prefix).
    fn token(&self) -> TokenFuture<'_>;
}

impl<F, Fut> TokenProvider for F
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<String, TokenError>> + Send + 'static,
{
    fn token(&self) -> TokenFuture<'_> {
        Box::pin(self())
    }
}

/// A token that never changes.
#[derive(Clone)]
struct StaticToken(String);

impl TokenProvider for StaticToken {
    fn token(&self) -> TokenFuture<'_> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}

/// What the client authenticates with. `Credentials::default()` sends nothing (enough for the public key).
#[derive(Clone, Default)]
pub struct Credentials {
    bearer: Option<Arc<dyn TokenProvider>>,
    api_key: Option<String>,
}

impl Credentials {
    /// No credential.
    pub fn none() -> Self {
        Self::default()
    }

    /// A fixed bearer JWT.
    pub fn bearer(token: impl Into<String>) -> Self {
        Self::default().with_bearer(token)
    }

    /// A bearer JWT asked from `provider` before each request.
    pub fn token_provider(provider: impl TokenProvider + 'static) -> Self {
        Self::default().with_token_provider(provider)
    }

    /// The legacy API key only (accepted by the event feed alone; other operations answer 401).
    pub fn api_key(key: impl Into<String>) -> Self {
        Self::default().with_api_key(key)
    }

    /// Adds (or replaces) a fixed bearer JWT.
    pub fn with_bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(Arc::new(StaticToken(token.into())));
        self
    }

    /// Adds (or replaces) a token provider.
    pub fn with_token_provider(mut self, provider: impl TokenProvider + 'static) -> Self {
        self.bearer = Some(Arc::new(provider));
        self
    }

    /// Adds (or replaces) the legacy API key, used on the event feed when no bearer credential is set.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets the headers the operation progenitor names `operation` calls for on `request`.
    pub(crate) async fn apply_for(&self, request: &mut reqwest::Request, operation: &str) -> Result<(), String> {
        // Every operation of the document is in the table; an unknown name would be a generator bug, and
        // sending the bearer token is the safe default for it.
        let security = crate::operations::security(operation).unwrap_or(Security::Bearer);
        self.apply(request, security).await
    }

    /// Sets the headers `security` calls for on `request`.
    pub(crate) async fn apply(&self, request: &mut reqwest::Request, security: Security) -> Result<(), String> {
        let headers = request.headers_mut();
        match (security, &self.bearer, &self.api_key) {
            (Security::None, _, _) => {}
            (Security::Bearer | Security::BearerOrApiKey, Some(provider), _) => {
                let token = provider.token().await.map_err(|e| format!("the token provider failed: {e}"))?;
                let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| "the bearer token is not a valid header value".to_owned())?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
            }
            (Security::BearerOrApiKey, None, Some(key)) => {
                let mut value =
                    HeaderValue::from_str(key).map_err(|_| "the API key is not a valid header value".to_owned())?;
                value.set_sensitive(true);
                headers.insert(API_KEY_HEADER, value);
            }
            // No usable credential: send the request as is and let the service answer 401.
            (Security::Bearer | Security::BearerOrApiKey, None, _) => {}
        }
        Ok(())
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}
