//! Identifiers and made-up chain data: unique by default, reproducible on request.
//!
//! Every id and made-up value comes from a durable counter value `n` of the store (unique across restarts,
//! resets and instances on one database: [`crate::infra::counters`]) put through a ChaCha8 stream keyed by the
//! sandbox's [`Ids`] key. The key is drawn from the operating system's entropy at every start, so two data
//! directories, two instances or two runs never hand out the same id, address or hash; with `serve --seed N` it
//! is derived from `N`, so a fresh sandbox answers the same ids for the same requests (snapshot tests).
//!
//! Ids have production's shape, 24 lower-case hex digits laid out like a MongoDB ObjectId: 4 bytes of creation
//! time (seconds, on the project's clock), 5 random bytes (of the key and the counter's high bits) and the
//! counter's low 3 bytes. Within one key the (random, counter) pair never repeats; across keys the random part
//! differs. Quote (and bridge) ids and event ids are made so. Deposit and refund ids, which come with a made-up
//! transaction, are 4 bytes of time and 8 bytes of that transaction's seed.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The named counters that ids and made-up chain data are derived from (this module), so that a sandbox replays
/// the same ids for the same sequence of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    Quote,
    Event,
    /// Seeds of made-up transactions (hashes, block numbers) and of deposit ids.
    Tx,
    /// Seeds of deposit addresses.
    Address,
    /// Seeds of routing deposit addresses.
    RoutingAddress,
}

impl Counter {
    /// The counter's name in the store.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Quote => "quote",
            Counter::Event => "event",
            Counter::Tx => "tx",
            Counter::Address => "address",
            Counter::RoutingAddress => "routing-address",
        }
    }
}

/// The key of every id and made-up value of a sandbox.
#[derive(Clone)]
pub struct Ids {
    key: [u8; 32],
}

impl std::fmt::Debug for Ids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ids { .. }")
    }
}

/// Words (of 4 bytes) of a ChaCha stream per value.
const WORDS_PER_VALUE: u128 = 4;

impl Ids {
    /// A key from the operating system's entropy: ids unique across data directories, restarts and instances.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        Self { key }
    }

    /// The key of `serve --seed seed`: the same ids for the same requests on a fresh sandbox.
    pub fn seeded(seed: u64) -> Self {
        let mut key = [0u8; 32];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut key);
        Self { key }
    }

    /// The stream of `kind` at value `at` (random access: ChaCha's stream and word position).
    fn stream(&self, kind: Counter, ids: bool, at: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.key);
        rng.set_stream(kind as u64 * 2 + u64::from(ids));
        rng.set_word_pos(u128::from(at) * WORDS_PER_VALUE);
        rng
    }

    /// The made-up seed of value `n` of `kind` (transaction hashes, addresses, blocks, deposit ids).
    pub fn seed(&self, kind: Counter, n: u64) -> u64 {
        self.stream(kind, false, n).next_u64()
    }

    /// The ObjectId-like id of value `n` of `kind`, made at `at_ms`.
    pub fn object_id(&self, kind: Counter, n: u64, at_ms: i64) -> String {
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&seconds(at_ms).to_be_bytes());
        self.stream(kind, true, n >> 24).fill_bytes(&mut bytes[4..9]);
        bytes[9..].copy_from_slice(&(n as u32).to_be_bytes()[1..]);
        hex::encode(bytes)
    }
}

/// Seconds since the Unix epoch as an ObjectId's 4 bytes (the clock stays within them until 2106).
fn seconds(at_ms: i64) -> u32 {
    at_ms.div_euclid(1000).clamp(0, i64::from(u32::MAX)) as u32
}

/// An ObjectId-like id made at `at_ms` from a made-up seed: 4 bytes of time, the seed's 8 bytes.
pub fn seeded_id(seed: u64, at_ms: i64) -> String {
    format!("{:08x}{seed:016x}", seconds(at_ms))
}

/// `n` lower-case hex digits from a seed (rand's ChaCha8 seeded from it).
pub fn hex_digits(seed: u64, n: usize) -> String {
    let mut bytes = vec![0u8; n.div_ceil(2)];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
    let mut out = hex::encode(bytes);
    out.truncate(n);
    out
}

/// A transaction hash in the chain family's usual form.
pub fn tx_hash(seed: u64) -> String {
    format!("0x{}", hex_digits(seed ^ 0x7478_0000_0000_0000, 64))
}

/// The block of a made-up transaction, from its seed.
pub fn block(seed: u64) -> i64 {
    1_000_000 + (seed % 1_000_000_000) as i64
}

/// The `_id` of a deposit into a deposit address, from its transaction seed, made at `at_ms`.
pub fn deposit_id(seed: u64, at_ms: i64) -> String {
    seeded_id(seed ^ 0xde90, at_ms)
}

/// The seed of the made-up sender of a deposit (when the request names none), from its transaction seed.
pub fn sender_seed(seed: u64) -> u64 {
    seed ^ 0x5e4d
}

/// An EVM-style made-up address, for chains the catalogue cannot derive one on.
pub fn evm_address(seed: u64) -> String {
    format!("0x{}", hex_digits(seed, 40))
}

/// The id and transaction hash of the refund of a rejected deposit, from the deposit's transaction seed, made at
/// `at_ms`.
pub fn refund(seed: u64, at_ms: i64) -> (String, String) {
    (seeded_id(seed ^ 0x4ef, at_ms), tx_hash(seed ^ 0x4ef))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_have_production_shape_and_never_repeat_within_a_key() {
        let ids = Ids::random();
        let mut seen = HashSet::new();
        // Across the counter's 3-byte wrap too: the high bits move the random part.
        for n in (0..3_000u64).chain((1 << 24) - 1_000..(1 << 24) + 1_000) {
            let id = ids.object_id(Counter::Quote, n, 1_767_225_600_000);
            assert_eq!(id.len(), 24);
            assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
            assert!(id.starts_with(&format!("{:08x}", 1_767_225_600u32)), "time first: {id}");
            assert!(seen.insert(id), "repeated at {n}");
        }
    }

    #[test]
    fn keys_differ_unless_seeded_alike() {
        let (a, b) = (Ids::random(), Ids::random());
        assert_ne!(a.object_id(Counter::Event, 1, 0), b.object_id(Counter::Event, 1, 0), "two starts, two ids");
        assert_ne!(a.seed(Counter::Tx, 1), b.seed(Counter::Tx, 1));
        let (s, t) = (Ids::seeded(7), Ids::seeded(7));
        assert_eq!(s.object_id(Counter::Event, 1, 0), t.object_id(Counter::Event, 1, 0), "same seed, same ids");
        assert_eq!(s.seed(Counter::Tx, 5), t.seed(Counter::Tx, 5));
        assert_ne!(s.object_id(Counter::Event, 1, 0), Ids::seeded(8).object_id(Counter::Event, 1, 0));
        assert_ne!(s.object_id(Counter::Event, 1, 0), s.object_id(Counter::Quote, 1, 0), "kinds apart");
    }
}
