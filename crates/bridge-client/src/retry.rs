//! Retries: which failed attempts are tried again, for which operations, and when.
//!
//! # What is retried
//!
//! | failure of an attempt | safe operations | other operations |
//! |---|---|---|
//! | the connection could not be made (refused, DNS, TLS handshake): nothing was sent | retried | retried |
//! | 429 with a wait (`retryAfter` of the contract's `TooManyRequests`, or a `Retry-After` header) | retried, waiting at least that long | retried, waiting at least that long |
//! | 429 without a wait (such as `DepositAddressRateLimitExceeded`, a quota per period) | retried | not retried |
//! | 503 with the contract's `ServiceUnavailable` body ("nothing was changed") | retried | retried |
//! | a timeout, a reset or closed connection, a body cut short, 502/504 or another 503 (a gateway's) | retried | not retried: the request may have been carried out |
//! | any other answer | returned | returned |
//!
//! *Safe operations* are the GETs (reads, the event feed, the search, the public status, the public key) and the
//! operations the document marks `x-safe-to-retry: true` (the two quotes: a repeated quote only makes another
//! quote, which expires). Every other operation changes state and is never repeated when its outcome is
//! unknown; `commit_quote` resolves such a lost answer by reading the bridge instead ([`crate::commit`]).
//!
//! # When
//!
//! Attempt *n + 1* starts after a delay of `initial_delay · 2^(n−1)`, capped at `max_delay`, plus a random
//! jitter of up to the same again (so clients that failed together do not retry together), or after the
//! server's requested wait when that is longer. Retrying stops after `max_attempts` attempts, or when the next
//! attempt would start after `max_elapsed` from the first one; the last answer or error is then returned as is
//! (a 429 keeps its `retryAfter` for the caller). Each retry is logged with `tracing` at WARN (target
//! `bridge_client::retry`: operation, attempt, reason, delay).
//!
//! The jittered exponential sequence comes from the `backon` crate ([`backon::ExponentialBuilder`]).

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use backon::BackoffBuilder as _;
use bridge_contract::{ServiceUnavailable, TooManyRequests};
use bytes::Bytes;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{StatusCode, Version};

use crate::auth::Credentials;

/// How failed requests are retried (see the [module documentation](self) for which ones).
///
/// The default suits a service calling the bridge in production: 4 attempts, 500 ms doubling to at most 8 s
/// (plus jitter), at most 30 s from the first attempt to the start of the last. [`RetryPolicy::none`] turns
/// retries (and the commit's resolution of lost answers) off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_delay: Duration,
    max_delay: Duration,
    max_elapsed: Duration,
    jitter: bool,
}

impl Default for RetryPolicy {
    /// 4 attempts; delays of 0.5, 1 and 2 s (each plus up to as much again of jitter), doubling up to 8 s;
    /// no attempt starts later than 30 s after the first.
    ///
    /// Why: three retries ride out a restart, a failover or a dropped connection, which last seconds; a caller
    /// that waits on a request (a user's quote, a commit) should hear back within about half a minute rather than
    /// be held for minutes by a service that is down. A 429's `retryAfter` longer than what is left of the 30 s
    /// is not waited for: the 429 is returned, with its `retryAfter`, for the caller to schedule.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_elapsed: Duration::from_secs(30),
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// No retries: every request is sent once, and a commit whose answer is lost returns the error.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// Attempts in all, the first included (at least 1; 1 means no retries).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The delay before the first retry; each further one doubles it.
    pub fn with_initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// The longest delay (before jitter) the doubling reaches.
    pub fn with_max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// No attempt starts later than this after the first one.
    pub fn with_max_elapsed(mut self, elapsed: Duration) -> Self {
        self.max_elapsed = elapsed;
        self
    }

    /// Exact delays, without the random jitter (for tests and measurements; keep the jitter in production).
    pub fn without_jitter(mut self) -> Self {
        self.jitter = false;
        self
    }

    /// Attempts in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The delay before the first retry.
    pub fn initial_delay(&self) -> Duration {
        self.initial_delay
    }

    /// The longest delay before jitter.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The bound on the time from the first attempt to the start of the last.
    pub fn max_elapsed(&self) -> Duration {
        self.max_elapsed
    }

    /// Whether a failed request may be tried again at all.
    pub fn is_enabled(&self) -> bool {
        self.max_attempts > 1
    }

    /// The schedule of one call, started now.
    pub(crate) fn start(&self) -> Schedule {
        let mut builder = backon::ExponentialBuilder::new()
            .with_min_delay(self.initial_delay)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .with_max_times(self.max_attempts.saturating_sub(1) as usize);
        if self.jitter {
            builder = builder.with_jitter();
        }
        Schedule { policy: *self, started: Instant::now(), attempt: 1, backoff: builder.build() }
    }
}

/// The retries of one call: which attempt this is, and the delay before the next.
pub(crate) struct Schedule {
    policy: RetryPolicy,
    started: Instant,
    attempt: u32,
    backoff: backon::ExponentialBackoff,
}

impl Schedule {
    /// The attempt under way (1 for the first).
    pub(crate) fn attempt(&self) -> u32 {
        self.attempt
    }

    /// After the current attempt failed: the delay before the next one (at least `wait`, what the server asked
    /// for), or `None` when the policy's bounds are reached.
    pub(crate) fn next_delay(&mut self, wait: Option<Duration>) -> Option<Duration> {
        if self.attempt >= self.policy.max_attempts {
            return None;
        }
        let backoff = self.backoff.next()?;
        let delay = wait.map_or(backoff, |wait| wait.max(backoff));
        if self.started.elapsed() + delay > self.policy.max_elapsed {
            return None;
        }
        self.attempt += 1;
        Some(delay)
    }
}

/// Why an attempt is tried again (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The connection could not be made; nothing was sent.
    NotConnected,
    /// The request timed out.
    TimedOut,
    /// The connection broke before the whole answer arrived.
    ConnectionLost,
    /// 429.
    TooManyRequests,
    /// 503 with the contract's `ServiceUnavailable` body.
    ServiceUnavailable,
    /// 502, 503 or 504 from something in between.
    Gateway(StatusCode),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NotConnected => f.write_str("the connection could not be made"),
            Reason::TimedOut => f.write_str("timed out"),
            Reason::ConnectionLost => f.write_str("the connection broke before the answer arrived"),
            Reason::TooManyRequests => f.write_str("429 too many requests"),
            Reason::ServiceUnavailable => f.write_str("503 ServiceUnavailable (nothing was changed)"),
            Reason::Gateway(status) => write!(f, "{status} from a gateway"),
        }
    }
}

/// One attempt's answer, read whole (so a body cut short is a failure of the attempt, retried like the others).
pub(crate) struct Answer {
    status: StatusCode,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    async fn read(response: reqwest::Response) -> reqwest::Result<Self> {
        let (status, version, headers) = (response.status(), response.version(), response.headers().clone());
        let body = response.bytes().await?;
        Ok(Self { status, version, headers, body })
    }

    fn into_response(self) -> reqwest::Response {
        let mut response = http::Response::new(self.body);
        *response.status_mut() = self.status;
        *response.version_mut() = self.version;
        *response.headers_mut() = self.headers;
        reqwest::Response::from(response)
    }

    /// The wait the server asked for: the contract's `retryAfter` (seconds) or a `Retry-After` header (seconds
    /// or an HTTP date), the longer if both.
    fn requested_wait(&self) -> Option<Duration> {
        let body = serde_json::from_slice::<TooManyRequests>(&self.body)
            .ok()
            .and_then(|t| Duration::try_from_secs_f64(t.retry_after.as_f64()).ok());
        let header = self.headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
        body.into_iter().chain(header).max()
    }
}

/// A `Retry-After` value: delay-seconds, or an HTTP date (a date in the past is no wait).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Whether a failed attempt is tried again, and why; `None`: return it.
fn verdict(outcome: &reqwest::Result<Answer>, safe: bool) -> Option<(Reason, Option<Duration>)> {
    match outcome {
        Err(e) if e.is_connect() => Some((Reason::NotConnected, None)),
        Err(e) if e.is_builder() || e.is_redirect() || e.is_decode() => None,
        Err(e) if e.is_timeout() => safe.then_some((Reason::TimedOut, None)),
        Err(_) => safe.then_some((Reason::ConnectionLost, None)),
        Ok(answer) => match answer.status {
            StatusCode::TOO_MANY_REQUESTS => {
                let wait = answer.requested_wait();
                (wait.is_some() || safe).then_some((Reason::TooManyRequests, wait))
            }
            StatusCode::SERVICE_UNAVAILABLE if serde_json::from_slice::<ServiceUnavailable>(&answer.body).is_ok() => {
                Some((Reason::ServiceUnavailable, answer.requested_wait()))
            }
            status @ (StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT) => {
                safe.then_some((Reason::Gateway(status), answer.requested_wait()))
            }
            _ => None,
        },
    }
}

/// Sends `request` for `operation` (progenitor's snake-case `operationId`) with the retries of `policy`.
/// Before each retry the credentials are applied again (a token provider is asked anew).
pub(crate) async fn execute(
    http: &reqwest::Client,
    policy: &RetryPolicy,
    credentials: &Credentials,
    request: reqwest::Request,
    operation: &'static str,
) -> reqwest::Result<reqwest::Response> {
    if !policy.is_enabled() {
        return http.execute(request).await;
    }
    let safe = crate::operations::safe_to_retry(operation).unwrap_or(false);
    let mut schedule = policy.start();
    let mut request = request;
    loop {
        // A body that cannot be cloned (a stream) is sent once; the generated client only sends JSON bytes.
        let Some(attempt) = request.try_clone() else {
            return http.execute(request).await;
        };
        let outcome = match http.execute(attempt).await {
            Ok(response) => Answer::read(response).await,
            Err(e) => Err(e),
        };
        let Some((reason, wait)) = verdict(&outcome, safe) else {
            return outcome.map(Answer::into_response);
        };
        let failed = schedule.attempt();
        let Some(delay) = schedule.next_delay(wait) else {
            tracing::warn!(operation, attempts = failed, %reason, "giving up: the retry policy's bounds are reached");
            return outcome.map(Answer::into_response);
        };
        tracing::warn!(
            operation,
            attempt = failed,
            %reason,
            delay_ms = delay.as_millis() as u64,
            "attempt failed; retrying"
        );
        tokio::time::sleep(delay).await;
        if let Err(why) = credentials.apply_for(&mut request, operation).await {
            tracing::warn!(operation, error = %why, "cannot retry: the credentials could not be applied again");
            return outcome.map(Answer::into_response);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 1.5 "), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
        let wait = parse_retry_after(&later).unwrap();
        assert!(wait > Duration::from_secs(115) && wait <= Duration::from_secs(120), "{wait:?}");
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn the_schedule_doubles_and_stops_at_the_attempt_bound() {
        let policy = RetryPolicy::default().without_jitter().with_max_elapsed(Duration::from_secs(3600));
        let mut schedule = policy.start();
        let delays: Vec<_> = std::iter::from_fn(|| schedule.next_delay(None)).collect();
        assert_eq!(delays, [Duration::from_millis(500), Duration::from_secs(1), Duration::from_secs(2)]);
        assert_eq!(schedule.attempt(), 4);
    }

    #[test]
    fn the_schedule_caps_the_delay_and_honours_a_longer_wait() {
        let policy = RetryPolicy::default()
            .without_jitter()
            .with_max_attempts(6)
            .with_max_delay(Duration::from_secs(1))
            .with_max_elapsed(Duration::from_secs(3600));
        let mut schedule = policy.start();
        assert_eq!(schedule.next_delay(Some(Duration::from_secs(5))), Some(Duration::from_secs(5)));
        assert_eq!(schedule.next_delay(Some(Duration::from_millis(1))), Some(Duration::from_secs(1)));
        assert_eq!(schedule.next_delay(None), Some(Duration::from_secs(1)));
    }

    #[test]
    fn the_schedule_stops_before_the_elapsed_bound() {
        let policy = RetryPolicy::default().with_max_elapsed(Duration::from_secs(10));
        let mut schedule = policy.start();
        // A requested wait past the bound is not waited for.
        assert_eq!(schedule.next_delay(Some(Duration::from_secs(11))), None);
        assert_eq!(RetryPolicy::none().start().next_delay(None), None);
    }

    #[test]
    fn jitter_adds_at_most_the_delay_again() {
        for _ in 0..100 {
            let mut schedule = RetryPolicy::default().start();
            let first = schedule.next_delay(None).unwrap();
            assert!(first >= Duration::from_millis(500) && first < Duration::from_secs(1), "{first:?}");
        }
    }
}
