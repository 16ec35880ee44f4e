//! Identifiers and made-up chain data: unique by default, reproducible on request.
//!
//! Every id and made-up value comes from a durable counter value `n` of the store (unique across restarts,
//! resets and instances on one database: [`crate::infra::counters`]) put through the sandbox's [`Ids`] key. The
//! key is made at a data directory's first start from the operating system's entropy and kept with the data
//! (`keys/ids.key`, or in the PostgreSQL database, shared by every instance: [`crate::infra::secrets`]), so two
//! data directories never hand out the same id, address or hash, and the instances of one database agree; with
//! `serve --seed N` it is derived from `N`, so a fresh sandbox answers the same ids for the same requests
//! (snapshot tests).
//!
//! Ids have production's shape, 24 lower-case hex digits laid out like a MongoDB ObjectId: 4 bytes of creation
//! time (seconds, on the project's clock) and 8 bytes that are a keyed permutation of the counter (the Blowfish
//! block cipher, a 64-bit block, keyed from the [`Ids`] key for each counter: [`Ids::object_id`]). A permutation
//! never maps two counter values to one block, so ids are unique within a key by construction; and without the
//! key the 8 bytes say nothing of the counter, so a project's ids do not show how many ids other projects were
//! given in between (the counters are global). Quote (and bridge) ids and event ids are made so. Deposit and
//! refund ids, which come with a made-up transaction, are 4 bytes of time and 8 bytes of that transaction's seed
//! (a ChaCha8 stream of the key at the counter value). Feed page tokens are the feed position put through one
//! more permutation ([`Ids::page_token`]): the feed's positions are global too.

use blowfish::cipher::{Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use blowfish::Blowfish;
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

/// The key of every id, page token and made-up value of a sandbox, with the permutations keyed from it.
#[derive(Clone)]
pub struct Ids {
    key: [u8; 32],
    /// The permutation of each counter's values (by `Counter as usize`), of which ids are made.
    counters: [Permutation; COUNTERS],
    /// The permutation of feed positions, of which page tokens are made.
    feed: Permutation,
}

/// The first 8 hex digits of every page token handed out: `00000001`, told apart from the plain positions
/// (`00000000…`) that earlier versions handed out.
pub const PAGE_TOKEN_PREFIX: u32 = 1;

/// How many [`Counter`]s there are.
const COUNTERS: usize = 5;

/// A keyed permutation of 64-bit values (a block cipher with a 64-bit block: unique outputs by construction).
#[derive(Clone)]
struct Permutation(Blowfish);

impl Permutation {
    /// Keyed by 56 bytes (Blowfish's longest key) of a ChaCha8 stream of the sandbox's key.
    fn keyed(key: &[u8; 32], stream: u64) -> Self {
        let mut rng = ChaCha8Rng::from_seed(*key);
        rng.set_stream(stream);
        let mut subkey = [0u8; 56];
        rng.fill_bytes(&mut subkey);
        Self(Blowfish::new_from_slice(&subkey).expect("56 bytes is a Blowfish key"))
    }

    fn apply(&self, value: u64) -> u64 {
        let mut block = Block::<Blowfish>::from(value.to_be_bytes());
        self.0.encrypt_block(&mut block);
        u64::from_be_bytes(block.into())
    }

    fn invert(&self, value: u64) -> u64 {
        let mut block = Block::<Blowfish>::from(value.to_be_bytes());
        self.0.decrypt_block(&mut block);
        u64::from_be_bytes(block.into())
    }
}

/// The ChaCha streams of the permutations' keys (the made-up values use streams `0..2 * COUNTERS`).
const PERMUTATION_STREAMS: u64 = 1 << 32;
const FEED_STREAM: u64 = PERMUTATION_STREAMS + COUNTERS as u64;

impl std::fmt::Debug for Ids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ids { .. }")
    }
}

/// Words (of 4 bytes) of a ChaCha stream per value.
const WORDS_PER_VALUE: u128 = 4;

impl Ids {
    /// The ids of `key` (a data directory's or database's, [`crate::infra::secrets::Keys`]).
    pub fn from_key(key: [u8; 32]) -> Self {
        let all = [Counter::Quote, Counter::Event, Counter::Tx, Counter::Address, Counter::RoutingAddress];
        let counters = all.map(|kind| Permutation::keyed(&key, PERMUTATION_STREAMS + kind as u64));
        Self { key, counters, feed: Permutation::keyed(&key, FEED_STREAM) }
    }

    /// A new key from the operating system's entropy.
    pub fn new_key() -> [u8; 32] {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        key
    }

    /// The key of `serve --seed seed`: the same ids for the same requests on a fresh sandbox.
    pub fn seeded(seed: u64) -> Self {
        let mut key = [0u8; 32];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut key);
        Self::from_key(key)
    }

    /// The stream of `kind` at value `at` (random access: ChaCha's stream and word position).
    fn stream(&self, kind: Counter, at: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.key);
        rng.set_stream(kind as u64 * 2);
        rng.set_word_pos(u128::from(at) * WORDS_PER_VALUE);
        rng
    }

    /// The made-up seed of value `n` of `kind` (transaction hashes, addresses, blocks, deposit ids).
    pub fn seed(&self, kind: Counter, n: u64) -> u64 {
        self.stream(kind, n).next_u64()
    }

    /// The ObjectId-like id of value `n` of `kind`, made at `at_ms`: 4 bytes of time, then `n` through the
    /// kind's permutation.
    pub fn object_id(&self, kind: Counter, n: u64, at_ms: i64) -> String {
        format!("{:08x}{:016x}", seconds(at_ms), self.counters[kind as usize].apply(n))
    }

    /// The page token of a feed position (`0..=i64::MAX`): [`PAGE_TOKEN_PREFIX`], then the position through the
    /// feed's permutation as 16 hex digits (the schema's `^[0-9a-f]{24}$`).
    pub fn page_token(&self, position: i64) -> String {
        format!("{PAGE_TOKEN_PREFIX:08x}{:016x}", self.feed.apply(position.max(0) as u64))
    }

    /// The feed position a token of 24 hex digits names (`None` for anything else). Every such token names one:
    /// one with [`PAGE_TOKEN_PREFIX`] the position [`Ids::page_token`] put through the permutation; one with 8
    /// zero digits the plain position that earlier versions of the sandbox handed out (so a traversal goes on across the
    /// upgrade; a plain position only ever says where a page starts); any other, or a value above `i64::MAX`
    /// (which no event can have), the last position, after which nothing follows.
    pub fn page_position(&self, token: &str) -> Option<i64> {
        if token.len() != 24 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let value = u128::from_str_radix(token, 16).ok()?;
        let (prefix, low) = ((value >> 64) as u32, value as u64);
        let position = match prefix {
            PAGE_TOKEN_PREFIX => self.feed.invert(low),
            0 => low,
            _ => return Some(i64::MAX),
        };
        Some(i64::try_from(position).unwrap_or(i64::MAX))
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
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn random() -> Ids {
        Ids::from_key(Ids::new_key())
    }

    #[test]
    fn ids_have_production_shape_and_never_repeat_within_a_key() {
        let ids = random();
        let mut seen = HashSet::new();
        // Across the 3-byte and 4-byte boundaries too, and at the top of the range.
        let edges = [(1u64 << 24) - 1_000..(1 << 24) + 1_000, (1 << 32) - 1_000..(1 << 32) + 1_000];
        for n in (0..50_000u64).chain(edges.into_iter().flatten()).chain(u64::MAX - 1_000..=u64::MAX) {
            let id = ids.object_id(Counter::Quote, n, 1_767_225_600_000);
            assert_eq!(id.len(), 24);
            assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
            assert!(id.starts_with(&format!("{:08x}", 1_767_225_600u32)), "time first: {id}");
            assert!(seen.insert(id), "repeated at {n}");
        }
    }

    #[test]
    fn keys_differ_unless_seeded_alike() {
        let (a, b) = (random(), random());
        assert_ne!(a.object_id(Counter::Event, 1, 0), b.object_id(Counter::Event, 1, 0), "two keys, two ids");
        assert_ne!(a.seed(Counter::Tx, 1), b.seed(Counter::Tx, 1));
        assert_ne!(a.page_token(1), b.page_token(1));
        let (s, t) = (Ids::seeded(7), Ids::seeded(7));
        assert_eq!(s.object_id(Counter::Event, 1, 0), t.object_id(Counter::Event, 1, 0), "same seed, same ids");
        assert_eq!(s.seed(Counter::Tx, 5), t.seed(Counter::Tx, 5));
        assert_eq!(s.page_token(5), t.page_token(5));
        assert_ne!(s.object_id(Counter::Event, 1, 0), Ids::seeded(8).object_id(Counter::Event, 1, 0));
        assert_ne!(s.object_id(Counter::Event, 1, 0), s.object_id(Counter::Quote, 1, 0), "kinds apart");
    }

    proptest! {
        /// Two counter values, two ids (the permutation is one to one), and the 8 bytes are not the counter's.
        #[test]
        fn distinct_values_give_distinct_ids(seed in any::<u64>(), n in any::<u64>(), m in any::<u64>()) {
            let ids = Ids::seeded(seed);
            prop_assume!(n != m);
            prop_assert_ne!(ids.object_id(Counter::Event, n, 0), ids.object_id(Counter::Event, m, 0));
            prop_assert_eq!(ids.counters[Counter::Event as usize].invert(ids.counters[Counter::Event as usize].apply(n)), n);
        }

        /// Every position round-trips through its token, which has the schema's pattern.
        #[test]
        fn every_position_round_trips_through_its_token(seed in any::<u64>(), p in 0..=i64::MAX) {
            let ids = Ids::seeded(seed);
            let token = ids.page_token(p);
            prop_assert!(token.len() == 24 && token.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            prop_assert_eq!(ids.page_position(&token), Some(p));
        }

        /// Every token of the pattern names a position: a plain one (earlier versions' tokens) itself, one with an
        /// unknown prefix the last.
        #[test]
        fn every_token_of_the_pattern_is_a_position(seed in any::<u64>(), v in any::<u128>()) {
            let ids = Ids::seeded(seed);
            let value = v >> 32;
            let token = format!("{value:024x}");
            let position = ids.page_position(&token).expect("a position");
            prop_assert!(position >= 0);
            match (value >> 64) as u32 {
                0 => prop_assert_eq!(position, i64::try_from(value).unwrap_or(i64::MAX)),
                PAGE_TOKEN_PREFIX => {}
                _ => prop_assert_eq!(position, i64::MAX),
            }
            prop_assert_eq!(ids.page_position(&token.to_uppercase()), Some(position), "hex of either case");
        }
    }
}
