//! The clocks. Each project has a clock of its own ([`ProjectClock`], kept in the store's `projects` table):
//! `--clock real`: wall-clock time plus every `POST /sandbox/clock/advance` of the project so far; `--clock
//! manual`: the project's time moves only when advanced. A project's clock starts at the sandbox's time when the
//! project is first seen, and `POST /sandbox/reset` sets it back to the sandbox's time.
//!
//! The sandbox's own clock ([`Clock`]) is where projects start: the wall clock (plus the offset earlier versions,
//! which had one clock for all, kept) under `--clock real`, or a fixed time under `--clock manual` (the wall clock
//! when the sandbox first started, or 2026-01-01 with `--seed`). Instances sharing one store share it: each sends
//! the store the latest time it answered ([`Clock::take_sync`]), the store keeps the highest, and each instance
//! adopts what the store holds ([`Clock::adopt`]).
//!
//! A project's clock is read from the store by every request that needs its time, so an advance acknowledged by
//! one instance is seen by the next request on any other. It never goes backwards (except by a reset): under
//! `--clock real` each instance also keeps the latest time it answered per project ([`Floors`]), and the
//! lifecycle pass stores the highest ([`crate::infra::store::ClockStore::keep_project_floors`]), so a wall clock that steps
//! back, or a restart on a machine whose clock is behind, does not move a project back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

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

/// A project's clock as the store keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectClock {
    /// Manual: the project's time. Real: the offset added to the wall clock.
    pub value: i64,
    /// Never answer a time before this.
    pub floor: i64,
    /// How many times the project was reset: floors kept in memory belong to one generation.
    pub generation: i64,
}

/// What the base of a project's time is under `mode`: 0 (manual: the value is the time) or the wall clock.
pub fn base_ms(mode: ClockMode) -> i64 {
    match mode {
        ClockMode::Manual => 0,
        ClockMode::Real => wall_ms(),
    }
}

impl ProjectClock {
    /// The project's time at `base` ([`base_ms`]), not before its stored floor.
    pub fn at(&self, base: i64) -> i64 {
        base.saturating_add(self.value).max(self.floor)
    }

    /// The largest value an advance by `ms` may start from at `base` (so that it ends at [`LATEST_MS`] at most;
    /// below every value when even a value of 0 would pass it); `None` when that does not fit an `i64`.
    pub fn advance_limit(base: i64, ms: i64) -> Option<i64> {
        LATEST_MS.checked_sub(base)?.checked_sub(ms)
    }
}

/// The latest time this instance answered for each project (of its current generation), kept in memory and
/// stored by the lifecycle pass: (generation, floor, changed since last stored).
#[derive(Default)]
pub struct Floors(Mutex<HashMap<String, (i64, i64, bool)>>);

impl Floors {
    /// The time to answer for `project` whose stored clock is `clock`, at `base`: never before what this instance
    /// answered for the same generation.
    pub fn answer(&self, project: &str, clock: &ProjectClock, base: i64) -> i64 {
        let now = clock.at(base);
        let mut floors = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match floors.get_mut(project) {
            Some((generation, floor, changed)) if *generation == clock.generation => {
                if now > *floor {
                    (*floor, *changed) = (now, true);
                }
                *floor
            }
            Some((generation, _, _)) if *generation > clock.generation => now,
            _ => {
                floors.insert(project.to_owned(), (clock.generation, now, true));
                now
            }
        }
    }

    /// Every (project, generation, floor) that changed since the last call, to store.
    pub fn take_changed(&self) -> Vec<(String, i64, i64)> {
        let mut floors = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for (project, (generation, floor, changed)) in floors.iter_mut() {
            if std::mem::take(changed) {
                out.push((project.clone(), *generation, *floor));
            }
        }
        out
    }
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

    /// The clock of a project first seen (or reset) now: the sandbox's time.
    pub fn project_start(&self) -> ProjectClock {
        let now = self.now_ms();
        ProjectClock { value: self.value.load(Ordering::SeqCst), floor: now, generation: 0 }
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
    fn a_project_clock_never_answers_before_what_was_answered_in_its_generation() {
        let floors = Floors::default();
        let clock = ProjectClock { value: 1_000, floor: 0, generation: 0 };
        assert_eq!(floors.answer("a", &clock, 500), 1_500);
        assert_eq!(floors.answer("a", &clock, 100), 1_500, "the wall clock stepped back: the floor holds");
        assert_eq!(floors.answer("b", &clock, 100), 1_100, "per project");
        let reset = ProjectClock { value: 0, floor: 0, generation: 1 };
        assert_eq!(floors.answer("a", &reset, 100), 100, "a reset starts a new generation");
        assert_eq!(floors.answer("a", &clock, 900), 1_900, "an older generation read late is not kept");
        assert_eq!(ProjectClock { value: 5, floor: 90, generation: 0 }.at(10), 90, "the stored floor holds");
        assert_eq!(ProjectClock::advance_limit(LATEST_MS, 1), Some(-1), "no value of the clock may advance");
        assert_eq!(ProjectClock::advance_limit(i64::MIN, 0), None, "overflow");
        assert_eq!(ProjectClock::advance_limit(0, i64::MAX), Some(LATEST_MS - i64::MAX));
    }

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
        // The store's rule (`ClockStore::sync_clock`): keep the first value, add every advance, keep the highest floor.
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
