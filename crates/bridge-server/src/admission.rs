//! Admission: whether an authenticated request is served now. It runs after authentication and before any
//! decoding, so a refused request costs no decoding and is refused whatever its body, and it knows the project
//! ([`Caller`]) without reading a credential again.
//!
//! An implementation plugs one in with [`ServerConfig::with_admission`](crate::ServerConfig::with_admission)
//! (the sandbox's per-project rate limit is one: `bridge-sandbox serve --rate-limit`). A refusal is answered
//! 429 `TooManyRequests{message, retryAfter}`, `retryAfter` in seconds (a JSON number, to the millisecond), with
//! a `Retry-After` header in whole seconds, rounded up (what `bridge-client`'s retry waits for). Operations
//! without `security` (the public key, the configs, ...) name no project and are never asked about.
//!
//! Like every error answer of the server, the 429 carries its `_tag` as a [`crate::ErrorTag`] response extension,
//! so a layer counting answers by kind tells `TooManyRequests` (the rate limit) from
//! `DepositAddressRateLimitExceeded` (an address quota).
//!
//! An admission may decide more than "now or 429" ([`Admission::decide`], a [`Decision`]): serve the request
//! after a delay, or answer 503 `ServiceUnavailable` (nothing was changed, as for any 503 of the contract), and add
//! headers to the answer whatever it is. The sandbox's fault profiles are one (`PUT /sandbox/faults`: a project's
//! own requests answered 429, 503 or late on purpose, each such answer marked with a header). Every operation
//! with `security` documents 429 and 503, so each decision is an answer the operation documents.

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};

use crate::auth::Caller;

/// Decides, for each authenticated request, whether it is served now.
pub trait Admission: Send + Sync + 'static {
    /// `Ok(())` serves the request; `Err` answers it 429 without decoding it. `operation` is the operationId.
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled>;

    /// What the server does with the request: what the pipeline asks. The default is [`Admission::admit`]'s
    /// answer (served now, or 429); an implementation that also delays requests, answers 503 or marks answers
    /// overrides it. Like `admit`, it runs after authentication and before anything of the request is read.
    fn decide(&self, caller: &Caller, operation: &'static str) -> Decision {
        self.admit(caller, operation).into()
    }
}

/// What admission decided about one request ([`Admission::decide`]), and headers for its answer.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    pub verdict: Verdict,
    /// Added to the answer, whatever it is (served, served late, or refused): e.g. a header naming why it was
    /// refused or delayed.
    pub headers: HeaderMap,
}

/// Whether and when a request is served.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Served now.
    #[default]
    Serve,
    /// Served once this much time has passed (then decoded and served as usual; the wait counts toward any
    /// timeout around the router).
    ServeAfter(Duration),
    /// Answered 429 `TooManyRequests` with `retryAfter` and `Retry-After`, without decoding it.
    TooManyRequests(Throttled),
    /// Answered 503 `ServiceUnavailable` with this message, without decoding it: nothing was changed, so the
    /// client may send it again.
    Unavailable(String),
}

impl Decision {
    /// Served now, with no header added.
    pub fn serve() -> Self {
        Self::default()
    }

    /// `verdict`, with no header added.
    pub fn new(verdict: Verdict) -> Self {
        Self { verdict, headers: HeaderMap::new() }
    }

    /// This decision with `name: value` added to its answer.
    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }
}

impl From<Result<(), Throttled>> for Decision {
    /// `Ok`: served now; `Err`: 429.
    fn from(admitted: Result<(), Throttled>) -> Self {
        match admitted {
            Ok(()) => Self::serve(),
            Err(throttled) => Self::new(Verdict::TooManyRequests(throttled)),
        }
    }
}

/// A request refused because its project is over its rate limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttled {
    /// The 429's `message`.
    pub message: String,
    /// How long until a request of the project would be served.
    pub retry_after: Duration,
}

impl Throttled {
    /// `retryAfter`: seconds to the millisecond, rounded up, so that waiting that long is enough (at least 1 ms).
    pub fn retry_after_seconds(&self) -> f64 {
        let millis = self.retry_after.as_nanos().div_ceil(1_000_000).max(1);
        millis as f64 / 1000.0
    }

    /// The `Retry-After` header: whole seconds, rounded up (at least 1).
    pub fn retry_after_header(&self) -> u64 {
        let whole = self.retry_after.as_secs();
        let rounded = if self.retry_after.subsec_nanos() > 0 { whole + 1 } else { whole };
        rounded.max(1)
    }
}

impl IntoResponse for Throttled {
    /// 429 `TooManyRequests` with its `Retry-After` header.
    fn into_response(self) -> Response {
        let header_value = HeaderValue::from(self.retry_after_header());
        let retry_after = bridge_contract::DecimalNumber::try_from(self.retry_after_seconds()).unwrap_or_default();
        let body = bridge_contract::TooManyRequests { tag: Default::default(), message: self.message, retry_after };
        let mut response = crate::respond::json(StatusCode::TOO_MANY_REQUESTS, &body);
        response.headers_mut().insert(header::RETRY_AFTER, header_value);
        response
    }
}

/// 503 `ServiceUnavailable` with `message` (an admission's [`Verdict::Unavailable`]).
pub(crate) fn unavailable(message: String) -> Response {
    let body = bridge_contract::ServiceUnavailable::new(message);
    crate::respond::json(StatusCode::SERVICE_UNAVAILABLE, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttled(retry_after: Duration) -> Throttled {
        Throttled { message: "slow down".into(), retry_after }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(throttled(Duration::from_millis(250)).retry_after_seconds(), 0.25);
        assert_eq!(throttled(Duration::from_micros(250_001)).retry_after_seconds(), 0.251);
        assert_eq!(throttled(Duration::ZERO).retry_after_seconds(), 0.001);
        assert_eq!(throttled(Duration::from_millis(250)).retry_after_header(), 1);
        assert_eq!(throttled(Duration::from_secs(2)).retry_after_header(), 2);
        assert_eq!(throttled(Duration::from_millis(2001)).retry_after_header(), 3);
        assert_eq!(throttled(Duration::ZERO).retry_after_header(), 1);
    }
}
