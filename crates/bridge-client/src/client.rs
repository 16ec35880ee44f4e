//! [`Client`]: building it (base URL, credentials, TLS, timeouts, policies, user agent) and what it holds. Its
//! operations are in `methods.rs` (generated, one per operation), [`crate::commit`], [`crate::wait`] and
//! [`crate::pagers`].

use std::time::Duration;

use bridge_contract::operations::GetWebhookPublicKeyError;

use crate::auth::Credentials;
use crate::error::{Error, UnexpectedResponse};
use crate::raw;
use crate::retry::RetryPolicy;
use crate::transport::{Settings, DEFAULT_USER_AGENT};
use crate::wait_policy::WaitPolicy;
use crate::webhook;

/// The request and connect timeout of [`Client::new`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// A client of the bridge service. Cheap to clone (the connection pool is shared).
#[derive(Clone, Debug)]
pub struct Client {
    pub(crate) raw: raw::Client,
}

/// Why a [`Client`] could not be built.
#[derive(Debug)]
pub struct BuildError(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot build the HTTP client: {}", self.0)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl Client {
    /// A client of the service at `base_url` (scheme, host, port and path prefix, such as
    /// `https://bridge.example.com` or `http://127.0.0.1:8080`), with [`DEFAULT_TIMEOUT`].
    pub fn new(base_url: &str, credentials: Credentials) -> Result<Self, BuildError> {
        let http = Self::reqwest_builder()?.build().map_err(|e| BuildError(Box::new(e)))?;
        Ok(Self::with_reqwest(base_url, http, credentials))
    }

    /// A `reqwest::ClientBuilder` set up as [`Client::new`] sets it up (TLS, timeouts), to adjust and pass to
    /// [`Client::with_reqwest`].
    pub fn reqwest_builder() -> Result<reqwest::ClientBuilder, BuildError> {
        let builder = reqwest::Client::builder().connect_timeout(DEFAULT_TIMEOUT).timeout(DEFAULT_TIMEOUT);
        #[cfg(feature = "rustls")]
        let builder = builder.tls_backend_preconfigured(tls_config()?);
        Ok(builder)
    }

    /// A client that sends its requests with `http`.
    pub fn with_reqwest(base_url: &str, http: reqwest::Client, credentials: Credentials) -> Self {
        Self { raw: raw::Client::new_with_client(base_url.trim_end_matches('/'), http, Settings::new(credentials)) }
    }

    /// This client with `policy` for retries ([`RetryPolicy::default`] unless set; [`RetryPolicy::none`] turns
    /// retries off).
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.raw.inner.retry = policy;
        self
    }

    /// This client with `policy` for [`Client::wait_for_bridge`] and [`Client::bridge_states`].
    pub fn with_wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.raw.inner.wait = policy;
        self
    }

    /// This client sending `User-Agent: <product> bridge-client/<version>`, `product` naming your service (for
    /// example `payments/2.3`). Fails when `product` cannot be a header value.
    pub fn with_user_agent(mut self, product: &str) -> Result<Self, BuildError> {
        let value = reqwest::header::HeaderValue::from_str(&format!("{} {DEFAULT_USER_AGENT}", product.trim()))
            .map_err(|e| BuildError(Box::new(e)))?;
        self.raw.inner.user_agent = value;
        Ok(self)
    }

    /// The settings applied to every request (credentials, retry and wait policies, user agent).
    pub fn settings(&self) -> &Settings {
        &self.raw.inner
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.raw.baseurl
    }

    /// progenitor's client underneath (same credentials and connection pool).
    pub fn raw(&self) -> &raw::Client {
        &self.raw
    }

    /// Fetches `GET /webhook/public-key` and makes the verifier of webhook deliveries from it. A 200 whose key
    /// cannot be read is an [`Error::UnexpectedResponse`] naming why.
    pub async fn webhook_verifier(&self) -> Result<webhook::WebhookVerifier, Error<GetWebhookPublicKeyError>> {
        let served = self.get_webhook_public_key().await?;
        webhook::WebhookVerifier::from_served_key(&served).map_err(|e| {
            Error::UnexpectedResponse(Box::new(UnexpectedResponse {
                status: reqwest::StatusCode::OK,
                headers: Default::default(),
                body: serde_json::to_vec(&served).unwrap_or_default().into(),
                decode_error: Some(e.to_string()),
            }))
        })
    }
}

#[cfg(feature = "rustls")]
fn tls_config() -> Result<rustls::ClientConfig, BuildError> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BuildError(Box::new(e)))?
        .with_platform_verifier()
        .map_err(|e| BuildError(Box::new(e)))?
        .with_no_client_auth();
    Ok(config)
}
