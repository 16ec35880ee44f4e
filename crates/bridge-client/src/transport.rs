//! What the client sends with every request, and how: [`Settings`] (credentials, `User-Agent`, retry policy,
//! wait policy) and progenitor's request hooks (`ClientHooks`) that apply them to the generated client.
//!
//! * `pre`, before the first attempt: the `User-Agent` and the credentials the operation's `security` calls for;
//! * `exec`: sends the request with the retries of the [`RetryPolicy`] ([`crate::retry`]).

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::header::{HeaderValue, USER_AGENT};

use crate::auth::Credentials;
use crate::retry::RetryPolicy;
use crate::wait::WaitPolicy;

/// The `User-Agent` of every request: this crate's name and version.
pub const DEFAULT_USER_AGENT: &str = concat!("bridge-client/", env!("CARGO_PKG_VERSION"));

/// Everything a [`crate::Client`] applies to its requests besides the URL and the HTTP client: credentials,
/// `User-Agent`, retry policy, wait policy. Set through the client ([`crate::Client::with_retry`],
/// [`crate::Client::with_wait_policy`], [`crate::Client::with_user_agent`]).
#[derive(Clone, Debug)]
pub struct Settings {
    pub(crate) credentials: Credentials,
    pub(crate) retry: RetryPolicy,
    pub(crate) wait: WaitPolicy,
    pub(crate) user_agent: HeaderValue,
}

impl Settings {
    /// `credentials` with the default retry and wait policies and [`DEFAULT_USER_AGENT`].
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials,
            retry: RetryPolicy::default(),
            wait: WaitPolicy::default(),
            user_agent: HeaderValue::from_static(DEFAULT_USER_AGENT),
        }
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The retry policy.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The wait policy.
    pub fn wait(&self) -> &WaitPolicy {
        &self.wait
    }

    /// The `User-Agent` sent.
    pub fn user_agent(&self) -> &str {
        self.user_agent.to_str().unwrap_or(DEFAULT_USER_AGENT)
    }
}

impl ClientHooks<Settings> for crate::raw::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> Result<(), progenitor_client::Error<E>> {
        let settings = self.inner();
        request.headers_mut().insert(USER_AGENT, settings.user_agent.clone());
        settings.credentials.apply_for(request, info.operation_id).await.map_err(progenitor_client::Error::Custom)
    }

    async fn exec(&self, request: reqwest::Request, info: &OperationInfo) -> reqwest::Result<reqwest::Response> {
        let settings = self.inner();
        crate::retry::execute(self.client(), &settings.retry, &settings.credentials, request, info.operation_id).await
    }
}
