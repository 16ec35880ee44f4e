//! The sandbox clock. `--clock real`: wall-clock time plus every `POST /sandbox/clock/advance` so far;
//! `--clock manual`: time moves only when advanced. Either way the clock never goes backwards, and its position
//! is kept in the store so that a restart continues where it stopped.

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
}

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
        Self { mode, value: AtomicI64::new(value), floor: AtomicI64::new(floor) }
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
        self.now_ms()
    }

    /// What to keep in the store: (value, last time answered).
    pub fn snapshot(&self) -> (i64, i64) {
        (self.value.load(Ordering::SeqCst), self.floor.load(Ordering::SeqCst))
    }
}
