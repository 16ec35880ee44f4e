//! Per-project request rate limits (`serve --rate-limit N [--rate-limit-burst B]`), off by default.
//!
//! Each project has its own budget, a generic cell rate algorithm from the `governor` crate keyed by the project
//! id (a concurrent map, so projects never wait on each other): `N` requests per second on average, up to `B`
//! at once after a quiet spell. A request over the budget is answered at once, 429 `TooManyRequests` with
//! `retryAfter` (seconds until the project's next request is served) and a `Retry-After` header; it takes
//! nothing from the budget, and another project at the same moment is served as if the first did not exist.
//!
//! The limit is checked by the server's admission step ([`bridge_server::Admission`]): after authentication, so
//! it knows the project from the verified token, and before decoding, so a flood of large bodies costs no
//! decoding. Operations without authentication are not limited. The budget lives in each instance's memory: with
//! several instances on one database each has its own, so the limit a project meets is `N` per instance
//! (docs/operations.md, "Rate limits", says so).

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bridge_server::{Admission, Caller, Throttled};
use governor::clock::Clock as _;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How many checks between two sweeps of the projects whose budget is full again (they need no memory).
const SWEEP_EVERY: u64 = 4096;

/// A per-project limit: `per_second` requests per second on average (fractions allowed: 0.5 is one request
/// every 2 s), `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    per_second: f64,
    burst: NonZeroU32,
}

impl RateLimit {
    /// `per_second` requests per second with a burst of `burst` (by default as many as one second allows, at least
    /// one). `None` unless `per_second` is a positive number of at most a billion.
    pub fn new(per_second: f64, burst: Option<NonZeroU32>) -> Option<Self> {
        if !(per_second > 0.0 && per_second <= 1e9) {
            return None;
        }
        let one_second = NonZeroU32::new(per_second.ceil() as u32).unwrap_or(NonZeroU32::MIN);
        Some(Self { per_second, burst: burst.unwrap_or(one_second) })
    }

    /// `count` per minute on average, all `count` at once after a quiet minute (`count` at least 1).
    pub fn per_minute(count: u32) -> Self {
        let burst = NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN);
        Self { per_second: f64::from(burst.get()) / 60.0, burst }
    }

    /// `per_second` whole requests per second, `burst` at once (both at least 1).
    pub const fn fixed(per_second: u32, burst: u32) -> Self {
        let burst = match NonZeroU32::new(burst) {
            Some(burst) => burst,
            None => NonZeroU32::MIN,
        };
        let per_second = if per_second == 0 { 1.0 } else { per_second as f64 };
        Self { per_second, burst }
    }

    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    pub fn burst(&self) -> NonZeroU32 {
        self.burst
    }

    /// The limiter of this limit, to plug into the server (`ServerConfig::with_admission`).
    pub fn limiter(self) -> ProjectRateLimiter {
        ProjectRateLimiter { limit: self, budget: KeyedBudget::new(self) }
    }
}

/// One budget of a [`RateLimit`] per key (a project, a client's address), in this instance's memory: a key's
/// budget is full again after a quiet spell, and then takes no memory (swept every [`SWEEP_EVERY`] checks).
pub struct KeyedBudget<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    checks: AtomicU64,
}

impl<K: Hash + Eq + Clone> KeyedBudget<K> {
    pub fn new(limit: RateLimit) -> Self {
        let period = Duration::from_secs_f64(1.0 / limit.per_second).max(Duration::from_nanos(1));
        let quota = Quota::with_period(period).unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX));
        Self { limiter: RateLimiter::keyed(quota.allow_burst(limit.burst)), checks: AtomicU64::new(0) }
    }

    /// Takes one from `key`'s budget, or says how long until `key` has one again (a refusal takes nothing).
    pub fn take(&self, key: &K) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(key).map_err(|not_until| not_until.wait_time_from(self.limiter.clock().now()))
    }
}

/// The budgets of every project seen, in this instance.
pub struct ProjectRateLimiter {
    limit: RateLimit,
    budget: KeyedBudget<String>,
}

impl Admission for ProjectRateLimiter {
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled> {
        let Err(retry_after) = self.budget.take(&caller.project_id) else {
            return Ok(());
        };
        tracing::debug!(project = %caller.project_id, operation, retry_after_ms = retry_after.as_millis() as u64, "rate limited");
        let (per_second, burst) = (self.limit.per_second, self.limit.burst);
        let mut throttled = Throttled { message: String::new(), retry_after };
        throttled.message = format!(
            "project {} is over its rate limit ({per_second} requests per second, burst {burst}); retry after {} s",
            caller.project_id,
            throttled.retry_after_seconds()
        );
        Err(throttled)
    }
}
