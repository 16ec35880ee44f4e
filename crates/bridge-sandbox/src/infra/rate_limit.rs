//! Per-project request rate limits (`serve --rate-limit N [--rate-limit-burst B]`), off by default.
//!
//! Each project has its own budget: `N` requests per second on average, up to `B` at once after a quiet spell. A
//! request over the budget is answered at once, 429 `TooManyRequests` with `retryAfter` (seconds until the
//! project's next request is served) and a `Retry-After` header; it takes nothing from the budget, and another
//! project at the same moment is served as if the first did not exist.
//!
//! The limit is checked by the server's admission step ([`bridge_server::Admission`]): after authentication, so
//! it knows the project from the verified token, and before decoding, so a flood of large bodies costs no
//! decoding. Operations without authentication are not limited.
//!
//! **One store, one instance** (SQLite): the budget is a generic cell rate algorithm from the `governor` crate
//! keyed by the project id, in memory ([`KeyedBudget`]).
//!
//! **A fleet on one PostgreSQL database** ([`SharedBudget`], issue 36): one budget per project for all instances,
//! a token bucket in the database (`rate_budgets`: `B` tokens, refilled at `N` a second). Each instance leases a
//! few tokens at a time ([`LEASE_FOR`] is how long a lease may be spent) and spends them in memory: the admission
//! itself is a map lookup, never a database round trip. A lease is renewed in the background when half of it is
//! spent; only a request that finds its instance's slice of the project empty (its first in a while, or a burst
//! beyond the slice) waits for a renewal, one round trip, and only if one is due ([`ReadyBudget`] does it, as
//! part of authentication: admission is synchronous). A project over its budget finds the bucket empty and is
//! refused from memory until the bucket has a token again (no round trip per refusal). The slice adapts to the
//! instance's share of the project's traffic (doubled when spent within its lease, halved when some of it ran
//! out unspent), at most a lease's worth of the rate and at most the burst.
//!
//! **Tolerance**: a token is spent within [`LEASE_FOR`] of leaving the bucket, and a token bucket gives out at most
//! `B + N·t` tokens in any `t` seconds, so in any window of `T` seconds the fleet admits at most
//! `B + N·(T + LEASE_FOR)` requests of a project, whatever the number of instances: at most the burst plus 1.25
//! seconds of the rate in any second. (Per instance, as before issue 36, it was `N` times that.) Leased tokens
//! that run out unspent are lost, so a project spread thin over many instances may be refused a little below its
//! rate; the slice's adaptation keeps that loss small. While the database cannot be reached, each instance falls
//! back to its own in-memory budget of the full limit (the per-instance behaviour), and logs it.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_server::{Admission, AuthFailure, Authenticator, Caller, Throttled};
use tokio::sync::Notify;

use crate::infra::clock::wall_ms;
use crate::infra::store::{LeaseAsk, PgStore, MICROS};
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
        ProjectRateLimiter { limit: self, budget: Budgets::Local(KeyedBudget::new(self)) }
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

/// How long leased tokens may be spent, counted from when the lease was asked (so from before the bucket gave
/// them): the `LEASE_FOR` of the tolerance.
pub const LEASE_FOR: Duration = Duration::from_millis(250);

/// How long a request whose project's slice is empty waits for a renewal before it is decided.
const READY_WAIT: Duration = Duration::from_millis(500);

/// After a failed renewal, how long the instance uses its own in-memory budget before asking the database again.
const FALLBACK_FOR: Duration = Duration::from_secs(1);

/// The budgets of every project seen: in this instance's memory, or shared through the database.
pub struct ProjectRateLimiter {
    limit: RateLimit,
    budget: Budgets,
}

enum Budgets {
    Local(KeyedBudget<String>),
    Shared(Arc<SharedBudget>),
}

impl RateLimit {
    /// The limiter of this limit shared by every instance of the PostgreSQL database `store` ([`SharedBudget`]).
    pub fn shared_limiter(self, store: PgStore) -> ProjectRateLimiter {
        ProjectRateLimiter { limit: self, budget: Budgets::Shared(Arc::new(SharedBudget::new(self, store))) }
    }
}

impl ProjectRateLimiter {
    /// Makes `project`'s budget ready to decide its next request from memory: with a shared budget whose slice
    /// here is empty, waits (at most [`READY_WAIT`]) for a renewal from the database. Nothing to do otherwise.
    pub async fn ready(&self, project: &str) {
        if let Budgets::Shared(shared) = &self.budget {
            shared.ready(project).await;
        }
    }
}

impl Admission for ProjectRateLimiter {
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled> {
        let taken = match &self.budget {
            Budgets::Local(budget) => budget.take(&caller.project_id),
            Budgets::Shared(shared) => shared.take(&caller.project_id),
        };
        let Err(retry_after) = taken else {
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

/// An authenticator that, once a caller is verified, readies its project's budget ([`ProjectRateLimiter::ready`]):
/// the one await a shared budget may need, before the synchronous admission step decides.
#[derive(Clone)]
pub struct ReadyBudget<A> {
    pub inner: A,
    pub limiter: Option<Arc<ProjectRateLimiter>>,
}

impl<A: Authenticator> Authenticator for ReadyBudget<A> {
    async fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        let caller = self.inner.verify_bearer(token).await?;
        if let Some(limiter) = &self.limiter {
            limiter.ready(&caller.project_id).await;
        }
        Ok(caller)
    }

    async fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        let caller = self.inner.verify_api_key(key).await?;
        if let Some(limiter) = &self.limiter {
            limiter.ready(&caller.project_id).await;
        }
        Ok(caller)
    }
}

/// One project's budget at this instance: the tokens of its leases (oldest first, each spendable until its end),
/// the renewal in flight, and what the bucket said last.
struct Slice {
    leases: VecDeque<(u64, Instant)>,
    /// Tokens set aside for requests that [`SharedBudget::ready`] let through and that admission has not taken yet
    /// (at most the tokens held): requests that wait together for one renewal are each given a token, or wait for
    /// the next renewal, rather than all let through to find it spent.
    readied: u64,
    /// Requests waiting in [`SharedBudget::ready`] for a renewal: a renewal asks for at least this many tokens.
    waiting: u64,
    /// Tokens to ask for at the next renewal.
    size: u64,
    /// Set while a renewal is in flight: notified when it lands.
    renewing: Option<Arc<Notify>>,
    /// The bucket was empty at the last renewal: it has a token again at this time.
    empty_until: Option<Instant>,
    /// The last request seen (idle slices are forgotten).
    used: Instant,
}

impl Slice {
    fn new(now: Instant) -> Self {
        Self { leases: VecDeque::new(), readied: 0, waiting: 0, size: 1, renewing: None, empty_until: None, used: now }
    }

    /// Drops the leases that ran out; some unspent means the slice was too large: halved.
    fn expire(&mut self, now: Instant) {
        while let Some(&(left, ends)) = self.leases.front() {
            if ends > now {
                break;
            }
            self.leases.pop_front();
            if left > 0 {
                self.size = (self.size / 2).max(1);
            }
        }
        // Tokens set aside in a lease that ran out are gone: so is their reservation.
        self.readied = self.readied.min(self.tokens());
    }

    fn tokens(&self) -> u64 {
        self.leases.iter().map(|(left, _)| left).sum()
    }

    fn spend(&mut self) -> bool {
        for (left, _) in self.leases.iter_mut() {
            if *left > 0 {
                *left -= 1;
                return true;
            }
        }
        false
    }

    /// Whether a renewal may start now: none in flight, and the bucket not known to be empty.
    fn may_renew(&self, now: Instant) -> bool {
        self.renewing.is_none() && self.empty_until.is_none_or(|until| until <= now)
    }
}

/// A request waiting in [`SharedBudget::ready`], counted in its slice's `waiting` until it stops waiting (its wait
/// ends, or the request is dropped).
struct Waiting<'a> {
    budget: &'a SharedBudget,
    project: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(slice) = self.budget.lock().get_mut(self.project) {
            slice.waiting = slice.waiting.saturating_sub(1);
        }
    }
}

/// Each project's budget shared by every instance of one PostgreSQL database (the module docs): leases of tokens
/// from the project's bucket in `rate_budgets`, spent in memory.
pub struct SharedBudget {
    limit: RateLimit,
    store: PgStore,
    slices: Mutex<HashMap<String, Slice>>,
    /// Used instead while the database cannot be reached.
    fallback: KeyedBudget<String>,
    /// Until when the fallback is used (after a failed renewal).
    falling_back_until: Mutex<Option<Instant>>,
    checks: AtomicU64,
}

impl SharedBudget {
    pub fn new(limit: RateLimit, store: PgStore) -> Self {
        Self {
            limit,
            store,
            slices: Mutex::new(HashMap::new()),
            fallback: KeyedBudget::new(limit),
            falling_back_until: Mutex::new(None),
            checks: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slice>> {
        self.slices.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn falling_back(&self, now: Instant) -> bool {
        let mut until = self.falling_back_until.lock().unwrap_or_else(|p| p.into_inner());
        match *until {
            Some(end) if end > now => true,
            Some(_) => {
                *until = None;
                false
            }
            None => false,
        }
    }

    /// The most tokens one lease asks for: a lease's worth of the rate, at most the burst, at least one.
    fn largest_slice(&self) -> u64 {
        let lease = (self.limit.per_second * LEASE_FOR.as_secs_f64()).ceil() as u64;
        lease.clamp(1, u64::from(self.limit.burst.get()))
    }

    /// The time one token takes to refill.
    fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.limit.per_second).max(Duration::from_millis(1))
    }

    /// Takes one token of `project` from this instance's slice, or says how long until the project is served
    /// again. Starts a renewal when the slice is half spent (or empty).
    pub fn take(self: &Arc<Self>, project: &str) -> Result<(), Duration> {
        let now = Instant::now();
        if self.falling_back(now) {
            return self.fallback.take(&project.to_owned());
        }
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.sweep(now);
        }
        let mut slices = self.lock();
        let slice = slices.entry(project.to_owned()).or_insert_with(|| Slice::new(now));
        slice.used = now;
        slice.expire(now);
        let served = slice.spend();
        // This request's token, if `ready` set one aside for it, is taken (or gone with its lease).
        slice.readied = slice.readied.saturating_sub(1);
        let left = slice.tokens();
        if left * 2 <= slice.size && slice.may_renew(now) {
            if served && !slice.leases.is_empty() {
                // Spent within its lease: the next slice is larger.
                slice.size = (slice.size * 2).min(self.largest_slice());
            }
            self.renew(project, slice);
        }
        if served {
            return Ok(());
        }
        let wait = match slice.empty_until {
            Some(until) if until > now => until - now,
            _ => self.period(),
        };
        Err(wait)
    }

    /// Waits (at most [`READY_WAIT`]) until `project`'s slice here has a token for this request, set aside for its
    /// admission, or the bucket is known empty. Requests that arrive together at an empty slice wait for one
    /// renewal that asks for a token each; any left without one waits for the next.
    pub async fn ready(self: &Arc<Self>, project: &str) {
        let deadline = tokio::time::Instant::now() + READY_WAIT;
        loop {
            let now = Instant::now();
            if self.falling_back(now) {
                return;
            }
            let landed = {
                let mut slices = self.lock();
                let slice = slices.entry(project.to_owned()).or_insert_with(|| Slice::new(now));
                slice.expire(now);
                if slice.tokens() > slice.readied {
                    slice.readied += 1;
                    return;
                }
                slice.waiting += 1;
                if slice.may_renew(now) {
                    self.renew(project, slice);
                }
                match &slice.renewing {
                    Some(notify) => notify.clone().notified_owned(),
                    None => {
                        slice.waiting -= 1;
                        return; // the bucket is empty: refused from memory
                    }
                }
            };
            let waited = Waiting { budget: self, project };
            let timed_out = tokio::time::timeout_at(deadline, landed).await.is_err();
            drop(waited);
            if timed_out {
                return;
            }
        }
    }

    /// Starts a renewal of `project`'s slice (none is in flight): a lease of `slice.size` tokens from the bucket.
    fn renew(self: &Arc<Self>, project: &str, slice: &mut Slice) {
        let notify = Arc::new(Notify::new());
        slice.renewing = Some(notify.clone());
        let (this, project, want) = (self.clone(), project.to_owned(), slice.size.max(slice.waiting));
        tokio::spawn(async move {
            let asked = Instant::now();
            let ask = LeaseAsk {
                want: want.min(u64::from(this.limit.burst.get())) as i64,
                burst_micros: i64::from(this.limit.burst.get()) * MICROS,
                micros_per_ms: ((this.limit.per_second * 1000.0).round() as i64).max(1),
                now_ms: wall_ms(),
            };
            let leased = this.store.lease_rate_tokens(&project, ask).await;
            {
                let mut slices = this.lock();
                let slice = slices.entry(project.clone()).or_insert_with(|| Slice::new(asked));
                slice.renewing = None;
                match leased {
                    Ok(lease) => {
                        if lease.granted > 0 {
                            slice.leases.push_back((lease.granted as u64, asked + LEASE_FOR));
                        }
                        slice.empty_until = (lease.granted < ask.want).then(|| {
                            let missing = (MICROS - lease.micros_left).max(0);
                            asked + Duration::from_millis((missing / ask.micros_per_ms + 1) as u64)
                        });
                    }
                    Err(error) => {
                        tracing::warn!(%error, project, "the shared rate budget could not be leased; this instance \
                            limits on its own for a second");
                        *this.falling_back_until.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(Instant::now() + FALLBACK_FOR);
                    }
                }
            }
            notify.notify_waiters();
        });
    }

    /// Forgets the slices with nothing leased, nothing in flight and no request for a while.
    fn sweep(&self, now: Instant) {
        self.lock().retain(|_, s| {
            s.expire(now);
            !s.leases.is_empty()
                || s.renewing.is_some()
                || s.waiting > 0
                || now.duration_since(s.used) < Duration::from_secs(60)
        });
    }
}
