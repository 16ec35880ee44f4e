//! A [`TokenProvider`] that exchanges an API key for a JWT (`POST /authentication/auth/apiKey`, a production
//! endpoint beyond the spec) and renews it before it expires, as the official SDK does. The token's lifetime is
//! read from its `exp` claim (the payload is read, not verified: the server that issued it verifies it).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use bridge_client::{ApiKeyTokenProvider, Client, Credentials};
//! let base = "http://127.0.0.1:8080";
//! let provider = ApiKeyTokenProvider::new(base, "sbx_...")?;
//! let client = Client::new(base, Credentials::token_provider(provider))?;
//! # Ok(()) }
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use bridge_contract::ApiKeyExchangeRequest;

use crate::auth::{Credentials, TokenError, TokenFuture, TokenProvider};
use crate::client::{BuildError, Client};

/// How long before its `exp` a token is renewed.
pub const RENEW_BEFORE_EXPIRY: Duration = Duration::from_secs(60);

/// Exchanges an API key for a JWT, and again shortly before that JWT expires.
pub struct ApiKeyTokenProvider {
    exchange: Client,
    api_key: String,
    current: tokio::sync::Mutex<Option<(String, u64)>>,
}

impl ApiKeyTokenProvider {
    /// A provider that exchanges `api_key` at the service at `base_url`.
    pub fn new(base_url: &str, api_key: impl Into<String>) -> Result<Self, BuildError> {
        Ok(Self::with_client(Client::new(base_url, Credentials::none())?, api_key))
    }

    /// A provider that exchanges `api_key` through `client` (which needs no credential for the exchange).
    pub fn with_client(client: Client, api_key: impl Into<String>) -> Self {
        Self { exchange: client, api_key: api_key.into(), current: tokio::sync::Mutex::new(None) }
    }

    async fn fresh_token(&self) -> Result<String, TokenError> {
        let mut current = self.current.lock().await;
        let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
        if let Some((token, exp)) = current.as_ref() {
            if now + RENEW_BEFORE_EXPIRY.as_secs() < *exp {
                return Ok(token.clone());
            }
        }
        let answer = self
            .exchange
            .exchange_api_key(&ApiKeyExchangeRequest { api_key: self.api_key.clone() })
            .await
            .map_err(|e| format!("exchanging the API key: {e}"))?;
        // A token without a readable `exp` is used for this request only.
        let exp = expiry(&answer.jwt).unwrap_or(0);
        *current = Some((answer.jwt.clone(), exp));
        Ok(answer.jwt)
    }
}

impl TokenProvider for ApiKeyTokenProvider {
    fn token(&self) -> TokenFuture<'_> {
        Box::pin(self.fresh_token())
    }
}

/// The `exp` claim of a JWT (seconds since the Unix epoch), read without verification.
pub fn expiry(jwt: &str) -> Option<u64> {
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes).ok()?.get("exp")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_reads_the_claim() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"sub":"p","exp":1700000000}"#);
        assert_eq!(expiry(&format!("h.{payload}.s")), Some(1_700_000_000));
        assert_eq!(expiry("not a jwt"), None);
        let no_exp = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"sub":"p"}"#);
        assert_eq!(expiry(&format!("h.{no_exp}.s")), None);
    }
}
