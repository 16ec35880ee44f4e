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

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};

use crate::auth::Caller;

/// Decides, for each authenticated request, whether it is served now.
pub trait Admission: Send + Sync + 'static {
    /// `Ok(())` serves the request; `Err` answers it 429 without decoding it. `operation` is the operationId.
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled>;
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
