//! What the client applies to every request: [`Settings`] (credentials, `User-Agent`, retry policy, wait policy),
//! progenitor's inner type of the generated client. `crate::hooks` applies them.

use reqwest::header::HeaderValue;

use crate::auth::Credentials;
use crate::retry::RetryPolicy;
use crate::wait_policy::WaitPolicy;

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
