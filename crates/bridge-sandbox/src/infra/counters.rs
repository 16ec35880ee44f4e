//! [`Counters`]: the values ids and made-up chain data come from, taken from blocks the store reserves.
//!
//! Each counter's values are reserved from the store [`BLOCK`] at a time (one durable write per block instead of
//! one per value: a quote costs one durable write, its own, not two) and handed out in order from memory. Values
//! are unique across restarts and across instances sharing a database (each reservation is atomic), but not
//! gapless: the rest of a block is skipped when the process stops, and two requests that both find a block used
//! up reserve one each, the later installed block's first values being skipped. Nothing relies on them being
//! gapless or on ids being in time order (the event feed is ordered by feed position, not by event id).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::infra::store::{Counter, Store, StoreResult};

/// Values reserved per store write.
pub const BLOCK: u64 = 100;

/// The blocks in hand: for each counter, the next value to hand out and the end of its block (exclusive).
#[derive(Default)]
pub struct Counters {
    blocks: Mutex<HashMap<Counter, (u64, u64)>>,
}

impl Counters {
    /// The next value of `counter`, reserving a block from `store` when the one in hand is used up.
    pub async fn next(&self, counter: Counter, store: &dyn Store) -> StoreResult<u64> {
        if let Some(value) = self.take(counter) {
            return Ok(value);
        }
        let last = store.reserve_counter(counter, BLOCK).await?;
        let first = last + 1 - BLOCK;
        let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        let block = blocks.entry(counter).or_insert((0, 0));
        // Another request may have installed a block meanwhile: keep the one with more values left.
        if BLOCK - 1 > block.1.saturating_sub(block.0) {
            *block = (first + 1, last + 1);
        }
        Ok(first)
    }

    fn take(&self, counter: Counter) -> Option<u64> {
        let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        let (next, end) = blocks.get_mut(&counter)?;
        if *next >= *end {
            return None;
        }
        *next += 1;
        Some(*next - 1)
    }
}
