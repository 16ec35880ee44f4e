//! The sandbox clock. `--clock real`: wall-clock time plus every `POST /sandbox/clock/advance` so far;
//! `--clock manual`: time moves only when advanced. Either way the clock never goes backwards, and its position
//! is kept in the store so that a restart continues where it stopped. Instances sharing one store share one
//! clock: each sends the advances it took since it last synced ([`Clock::take_sync`]), the store adds them up and
//! keeps the highest time any instance answered, and each instance adopts what the store holds
//! ([`Clock::adopt`]). The lifecycle pass syncs, so instances agree within one tick (250 ms) and at once after an
//! advance on the instance that took it.

use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockMode {
    /// Time passes by itself (plus any advances).
    Real,
    /// Time moves only with `POST /sandbox/clock/advance`.
    Manual,
}

pub struct Clock {
    mode: ClockMode,
    /// Manual: the current time. Real: the offset added to the wall clock.
    value: AtomicI64,
    /// Never answer a time before this (monotonic across restarts).
    floor: AtomicI64,
    /// Advances taken since the last sync with the store.
    pending: AtomicI64,
}

/// What an instance sends the store to sync the shared clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSync {
    /// This instance's value (manual time, or real-time offset): the store keeps it if it holds none yet.
    pub value: i64,
    /// Advances taken here since the last sync: the store adds them to the value it holds.
    pub advanced_by: i64,
    /// The latest time this instance answered (0 before the first): the store keeps the highest.
    pub floor: i64,
}

/// The latest time the clock may be advanced to: 9999-01-01T00:00:00.000Z. Dates are written like JavaScript's
/// `toISOString()`, which switches to six-digit years (`+010000-...`, not an RFC 3339 `date-time`) after year 9999;
/// the year of headroom keeps every date derived from the clock (quote expiries, lifecycle times, delivery
/// retries) within four-digit years.
pub const LATEST_MS: i64 = 253_370_764_800_000;

pub fn wall_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

impl Clock {
    /// `stored`: the value kept by a previous run (manual time, or real-time offset), and the last time answered.
    pub fn new(mode: ClockMode, stored: Option<(i64, i64)>) -> Self {
        let (value, floor) = match (mode, stored) {
            (_, Some((value, floor))) => (value, floor),
            (ClockMode::Manual, None) => (wall_ms(), 0),
            (ClockMode::Real, None) => (0, 0),
        };
        Self { mode, value: AtomicI64::new(value), floor: AtomicI64::new(floor), pending: AtomicI64::new(0) }
    }

    pub fn mode(&self) -> ClockMode {
        self.mode
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        let now = match self.mode {
            ClockMode::Manual => self.value.load(Ordering::SeqCst),
            ClockMode::Real => wall_ms() + self.value.load(Ordering::SeqCst),
        };
        let floor = self.floor.fetch_max(now, Ordering::SeqCst);
        now.max(floor)
    }

    /// Moves the clock forward by `ms`; returns the new time.
    pub fn advance(&self, ms: i64) -> i64 {
        self.value.fetch_add(ms, Ordering::SeqCst);
        self.pending.fetch_add(ms, Ordering::SeqCst);
        self.now_ms()
    }

    /// Moves the clock forward by `ms` unless that would take it past [`LATEST_MS`] (or overflow); returns the
    /// new time, or `None` and leaves the clock as it was.
    pub fn try_advance(&self, ms: i64) -> Option<i64> {
        let base = match self.mode {
            ClockMode::Manual => 0,
            ClockMode::Real => wall_ms(),
        };
        self.value
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |value| {
                let moved = value.checked_add(ms)?;
                (base.checked_add(moved)? <= LATEST_MS).then_some(moved)
            })
            .ok()?;
        self.pending.fetch_add(ms, Ordering::SeqCst);
        Some(self.now_ms())
    }

    /// What to send the store, taking the advances not yet sent.
    pub fn take_sync(&self) -> ClockSync {
        ClockSync {
            value: self.value.load(Ordering::SeqCst),
            advanced_by: self.pending.swap(0, Ordering::SeqCst),
            floor: self.floor.load(Ordering::SeqCst),
        }
    }

    /// Adopts the store's (value, floor) after a sync; advances taken meanwhile stay on top (and pending).
    pub fn adopt(&self, value: i64, floor: i64) {
        let meanwhile = self.pending.load(Ordering::SeqCst);
        self.value.store(value.saturating_add(meanwhile), Ordering::SeqCst);
        self.floor.fetch_max(floor, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_stop_before_six_digit_years() {
        let clock = Clock::new(ClockMode::Manual, Some((1_700_000_000_000, 0)));
        assert_eq!(clock.try_advance(1_000), Some(1_700_000_001_000));
        assert_eq!(clock.try_advance(LATEST_MS), None, "past the latest time: refused");
        assert_eq!(clock.try_advance(i64::MAX), None, "overflow: refused");
        assert_eq!(clock.now_ms(), 1_700_000_001_000, "a refused advance leaves the clock as it was");
        assert_eq!(clock.try_advance(LATEST_MS - 1_700_000_001_000), Some(LATEST_MS), "up to the latest time exactly");
        assert_eq!(clock.try_advance(1), None);

        let real = Clock::new(ClockMode::Real, None);
        assert_eq!(real.take_sync().advanced_by, 0);
        assert_eq!(real.try_advance(LATEST_MS), None);
        assert!(real.try_advance(86_400_000).is_some());
    }

    #[test]
    fn two_clocks_syncing_through_a_store_add_up_their_advances() {
        // The store's rule (`Store::sync_clock`): keep the first value, add every advance, keep the highest floor.
        let mut stored: Option<(i64, i64)> = None;
        let mut sync = |clock: &Clock| {
            let s = clock.take_sync();
            let (value, floor) = stored.map_or((s.value, s.floor), |(v, f)| (v + s.advanced_by, f.max(s.floor)));
            stored = Some((value, floor));
            clock.adopt(value, floor);
        };
        let a = Clock::new(ClockMode::Manual, Some((1_000, 0)));
        let b = Clock::new(ClockMode::Manual, Some((1_000, 0)));
        sync(&a);
        sync(&b);
        a.try_advance(10).unwrap();
        b.try_advance(5).unwrap();
        sync(&a);
        sync(&b);
        sync(&a);
        assert_eq!((a.now_ms(), b.now_ms()), (1_015, 1_015), "both advances count, on both clocks");
    }
}
