//! Fault profiles as a model: which fault (if any) a project's request or delivery attempt gets, from its
//! profile (`SandboxFaultProfile`, the contract's type) and one draw, and where the draws come from.
//!
//! Each request and each delivery attempt draws one number, uniform in `[0, 1)`, and the kinds of its group take
//! consecutive shares of that interval in the schema's order (`tooManyRequests`, `unavailable`, `delay`;
//! `duplicate`, `holdBack`, `delay`), each as wide as its `fraction`: so the fractions of a group add up to at
//! most 1 ([`check`]), and a request or attempt gets at most one fault. The draws are a ChaCha8 stream keyed by
//! the sandbox's fault key and the project ([`FaultKey`]), one stream for requests and one for deliveries, read at
//! the project's counter: with `serve --seed N` the key is `N`'s, so the `n`-th request of a project gets the same
//! draw in every fresh sandbox started with that seed.

use std::time::Duration;

use bridge_contract::{
    SandboxDeliveryFault, SandboxDeliveryFaults, SandboxFaultProfile, SandboxRequestFault, SandboxRequestFaults,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// The fault a request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFault {
    /// 429 `TooManyRequests` with this `retryAfter`.
    TooManyRequests { retry_after: Duration },
    /// 503 `ServiceUnavailable`.
    Unavailable,
    /// Served after this wait.
    Delay(Duration),
}

impl RequestFault {
    /// Its kind, as the `x-sandbox-fault` header names it.
    pub fn kind(self) -> SandboxRequestFault {
        match self {
            Self::TooManyRequests { .. } => SandboxRequestFault::TooManyRequests,
            Self::Unavailable => SandboxRequestFault::Unavailable,
            Self::Delay(_) => SandboxRequestFault::Delay,
        }
    }
}

/// The fault a delivery attempt gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryFault {
    /// Sent again at once once the receiver acknowledged it.
    Duplicate,
    /// Not sent now: held back this long (real time) while later deliveries go first.
    HoldBack(Duration),
    /// Sent after this wait.
    Delay(Duration),
}

impl DeliveryFault {
    /// Its kind, as the attempt list marks it.
    pub fn kind(self) -> SandboxDeliveryFault {
        match self {
            Self::Duplicate => SandboxDeliveryFault::Duplicate,
            Self::HoldBack(_) => SandboxDeliveryFault::HoldBack,
            Self::Delay(_) => SandboxDeliveryFault::Delay,
        }
    }
}

/// Picks the kind whose share of `[0, 1)` holds `draw`, the kinds taking consecutive shares in order.
fn pick<T>(draw: f64, kinds: impl IntoIterator<Item = Option<(f64, T)>>) -> Option<T> {
    let mut edge = 0.0;
    for (fraction, fault) in kinds.into_iter().flatten() {
        edge += fraction;
        if draw < edge {
            return Some(fault);
        }
    }
    None
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The fault of a request that drew `draw` (in `[0, 1)`), if any.
pub fn request_fault(faults: &SandboxRequestFaults, draw: f64) -> Option<RequestFault> {
    pick(
        draw,
        [
            faults
                .too_many_requests
                .as_ref()
                .map(|f| (f.fraction.as_f64(), RequestFault::TooManyRequests { retry_after: millis(f.ms) })),
            faults.unavailable.as_ref().map(|f| (f.fraction.as_f64(), RequestFault::Unavailable)),
            faults.delay.as_ref().map(|f| (f.fraction.as_f64(), RequestFault::Delay(millis(f.ms)))),
        ],
    )
}

/// The fault of a delivery attempt that drew `draw` (in `[0, 1)`), if any.
pub fn delivery_fault(faults: &SandboxDeliveryFaults, draw: f64) -> Option<DeliveryFault> {
    pick(
        draw,
        [
            faults.duplicate.as_ref().map(|f| (f.fraction.as_f64(), DeliveryFault::Duplicate)),
            faults.hold_back.as_ref().map(|f| (f.fraction.as_f64(), DeliveryFault::HoldBack(millis(f.ms)))),
            faults.delay.as_ref().map(|f| (f.fraction.as_f64(), DeliveryFault::Delay(millis(f.ms)))),
        ],
    )
}

/// The profile without any fault (`{}`): the default when `serve --faults` is not given.
pub fn none() -> SandboxFaultProfile {
    SandboxFaultProfile { requests: None, deliveries: None }
}

/// The request faults of a profile that has at least one with a fraction above 0.
pub fn requests_on(profile: &SandboxFaultProfile) -> Option<&SandboxRequestFaults> {
    let faults = profile.requests.as_ref()?;
    let fractions = [
        faults.too_many_requests.as_ref().map(|f| f.fraction),
        faults.unavailable.as_ref().map(|f| f.fraction),
        faults.delay.as_ref().map(|f| f.fraction),
    ];
    fractions.into_iter().flatten().any(|f| f.as_f64() > 0.0).then_some(faults)
}

/// The delivery faults of a profile that has at least one with a fraction above 0.
pub fn deliveries_on(profile: &SandboxFaultProfile) -> Option<&SandboxDeliveryFaults> {
    let faults = profile.deliveries.as_ref()?;
    let fractions = [
        faults.duplicate.as_ref().map(|f| f.fraction),
        faults.hold_back.as_ref().map(|f| f.fraction),
        faults.delay.as_ref().map(|f| f.fraction),
    ];
    fractions.into_iter().flatten().any(|f| f.as_f64() > 0.0).then_some(faults)
}

/// What the schema cannot say of a profile: the fractions of each group add up to at most 1. `Err` says which
/// group does not, and by how much.
pub fn check(profile: &SandboxFaultProfile) -> Result<(), String> {
    let sum = |fractions: &[Option<f64>]| fractions.iter().flatten().sum::<f64>();
    let requests = profile.requests.as_ref().map_or(0.0, |f| {
        sum(&[
            f.too_many_requests.as_ref().map(|k| k.fraction.as_f64()),
            f.unavailable.as_ref().map(|k| k.fraction.as_f64()),
            f.delay.as_ref().map(|k| k.fraction.as_f64()),
        ])
    });
    let deliveries = profile.deliveries.as_ref().map_or(0.0, |f| {
        sum(&[
            f.duplicate.as_ref().map(|k| k.fraction.as_f64()),
            f.hold_back.as_ref().map(|k| k.fraction.as_f64()),
            f.delay.as_ref().map(|k| k.fraction.as_f64()),
        ])
    });
    for (group, total) in [("requests", requests), ("deliveries", deliveries)] {
        if total > 1.0 {
            return Err(format!(
                "the fractions of {group} add up to {total}: at most 1 (each request or delivery attempt gets at \
                 most one fault)"
            ));
        }
    }
    Ok(())
}

/// Which draws: a project's requests, or its delivery attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Requests = 0,
    Deliveries = 1,
}

/// The key of every project's draws: from `serve --seed` (the same draws in every sandbox started with that
/// seed) or from the operating system at start.
#[derive(Clone)]
pub struct FaultKey([u8; 32]);

impl FaultKey {
    /// The key of `serve --seed seed` (apart from the ids' key of the same seed).
    pub fn seeded(seed: u64) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"bridge-sandbox fault draws");
        hash.update(seed.to_le_bytes());
        Self(hash.finalize().into())
    }

    /// A key from the operating system's random generator.
    pub fn random() -> Self {
        let mut key = [0; 32];
        rand::rng().fill_bytes(&mut key);
        Self(key)
    }

    /// Draw `n` (0 for the first) of `project`'s `stream`, uniform in `[0, 1)`: a 53-bit fraction of the
    /// project's ChaCha8 stream at word `2n` (random access: nothing is kept between draws).
    pub fn draw(&self, project: &str, stream: Stream, n: u64) -> f64 {
        let mut hash = Sha256::new();
        hash.update(self.0);
        hash.update(project.as_bytes());
        let mut rng = ChaCha8Rng::from_seed(hash.finalize().into());
        rng.set_stream(stream as u64);
        rng.set_word_pos(u128::from(n) * 2);
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use bridge_contract::{
        DecimalNumber, SandboxFaultFraction, SandboxHoldBackFault, SandboxRequestDelayFault,
        SandboxTooManyRequestsFault,
    };

    use super::*;

    fn fraction(f: f64) -> DecimalNumber {
        DecimalNumber::try_from(f).unwrap()
    }

    fn requests(too_many: f64, unavailable: f64, delay: f64) -> SandboxRequestFaults {
        SandboxRequestFaults {
            too_many_requests: Some(SandboxTooManyRequestsFault { fraction: fraction(too_many), ms: 1500 }),
            unavailable: Some(SandboxFaultFraction { fraction: fraction(unavailable) }),
            delay: Some(SandboxRequestDelayFault { fraction: fraction(delay), ms: 250 }),
        }
    }

    #[test]
    fn the_kinds_take_consecutive_shares_in_the_schemas_order() {
        let faults = requests(0.25, 0.25, 0.25);
        let at = |draw| request_fault(&faults, draw);
        assert_eq!(at(0.0), Some(RequestFault::TooManyRequests { retry_after: Duration::from_millis(1500) }));
        assert_eq!(at(0.2499), Some(RequestFault::TooManyRequests { retry_after: Duration::from_millis(1500) }));
        assert_eq!(at(0.25), Some(RequestFault::Unavailable));
        assert_eq!(at(0.5), Some(RequestFault::Delay(Duration::from_millis(250))));
        assert_eq!(at(0.75), None);
        assert_eq!(at(0.9999), None);
        let none = SandboxRequestFaults { too_many_requests: None, unavailable: None, delay: None };
        assert_eq!(request_fault(&none, 0.0), None);
        let deliveries = SandboxDeliveryFaults {
            duplicate: None,
            hold_back: Some(SandboxHoldBackFault { fraction: fraction(1.0), ms: 100 }),
            delay: None,
        };
        assert_eq!(delivery_fault(&deliveries, 0.99), Some(DeliveryFault::HoldBack(Duration::from_millis(100))));
    }

    #[test]
    fn a_group_adds_up_to_at_most_one_and_zero_fractions_are_off() {
        let profile = |r| SandboxFaultProfile { requests: Some(r), deliveries: None };
        assert!(check(&profile(requests(0.5, 0.5, 0.0))).is_ok());
        let over = check(&profile(requests(0.5, 0.5, 0.01))).unwrap_err();
        assert!(over.contains("requests add up to 1.01"), "{over}");
        assert!(requests_on(&profile(requests(0.0, 0.0, 0.0))).is_none(), "all zero: off");
        assert!(requests_on(&profile(requests(0.0, 0.1, 0.0))).is_some());
        assert!(requests_on(&SandboxFaultProfile { requests: None, deliveries: None }).is_none());
    }

    #[test]
    fn draws_are_a_function_of_the_key_the_project_the_stream_and_the_index() {
        let (a, b) = (FaultKey::seeded(7), FaultKey::seeded(7));
        let draws = |key: &FaultKey, project, stream| (0..64).map(|n| key.draw(project, stream, n)).collect::<Vec<_>>();
        let first = draws(&a, "project-a", Stream::Requests);
        assert_eq!(first, draws(&b, "project-a", Stream::Requests), "the same seed draws the same");
        assert!(first.iter().all(|d| (0.0..1.0).contains(d)));
        assert_ne!(first, draws(&a, "project-b", Stream::Requests), "another project draws its own");
        assert_ne!(first, draws(&a, "project-a", Stream::Deliveries), "deliveries draw their own");
        assert_ne!(first, draws(&FaultKey::seeded(8), "project-a", Stream::Requests), "another seed");
        assert_ne!(first, draws(&FaultKey::random(), "project-a", Stream::Requests));
        // What `tests/it/faults.rs` relies on to hold back exactly the first of two deliveries (holdBack 0.5):
        // with seed 5, project `hold-back` draws below 0.5 first and above it second.
        let five = FaultKey::seeded(5);
        assert!(five.draw("hold-back", Stream::Deliveries, 0) < 0.5);
        assert!(five.draw("hold-back", Stream::Deliveries, 1) >= 0.5);
        // Roughly uniform: a quarter of 4,000 draws below 0.25, within a wide margin.
        let below = (0..4000).filter(|n| a.draw("project-a", Stream::Requests, *n) < 0.25).count();
        assert!((800..1200).contains(&below), "{below}");
    }
}
