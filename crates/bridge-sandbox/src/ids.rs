//! Identifiers and made-up chain data, derived deterministically from per-data-directory counters so that a
//! sandbox replays the same ids for the same sequence of requests.

/// SplitMix64: a small, well-known mixing function (not for security).
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` lower-case hex digits from a seed.
pub fn hex_digits(seed: u64, n: usize) -> String {
    let mut out = String::with_capacity(n + 16);
    let mut state = seed;
    while out.len() < n {
        state = mix(state);
        out.push_str(&format!("{state:016x}"));
    }
    out.truncate(n);
    out
}

/// A quote (and bridge) id: 24 lower-case hex digits.
pub fn quote_id(counter: u64) -> String {
    hex_digits(counter ^ 0x5155_4f54_4500_0000, 24)
}

/// A transaction hash in the chain family's usual form.
pub fn tx_hash(seed: u64) -> String {
    format!("0x{}", hex_digits(seed ^ 0x7478_0000_0000_0000, 64))
}

/// An event id, from the event counter.
pub fn event_id(counter: u64) -> String {
    format!("evt_{}", hex_digits(counter ^ 0x4556_0000_0000_0000, 24))
}

/// The `_id` of a deposit into a deposit address, from its transaction seed.
pub fn deposit_id(seed: u64) -> String {
    format!("dep_{}", hex_digits(seed ^ 0xde90, 24))
}

/// The seed of the made-up sender of a deposit (when the request names none), from its transaction seed.
pub fn sender_seed(seed: u64) -> u64 {
    seed ^ 0x5e4d
}

/// An EVM-style made-up address, for chains the catalogue cannot derive one on.
pub fn evm_address(seed: u64) -> String {
    format!("0x{}", hex_digits(seed, 40))
}

/// The id and transaction hash of the refund of a rejected deposit, from the deposit's transaction seed.
pub fn refund(seed: u64) -> (String, String) {
    (format!("ref_{}", hex_digits(seed ^ 0x4ef, 24)), tx_hash(seed ^ 0x4ef))
}
