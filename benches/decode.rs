//! Decoding the contract's answers into the typed values, against the baseline of parsing the same bytes into a
//! `serde_json::Value` (what a client that does not use the types would do at least). Each group has the two
//! measurements side by side; `scripts/bench-report.py` prints the ratio `typed / value`.
//!
//! The fixtures are real answers of the sandbox (`benches/fixtures/README.md` says how they were made):
//! a bridge record in state `EXECUTED`, a quote response of the `bridge` family, and a page of 50 events of nine
//! kinds as the event feed serves it.
//!
//! Run: `cargo bench -p bridge-contract --bench decode` (add `-- --quick` for a short run).

use std::hint::black_box;

use bridge_contract::{BridgeRecord, QuoteResponse, UserEventsPage};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::de::DeserializeOwned;

const BRIDGE_RECORD: &[u8] = include_bytes!("fixtures/bridge-record.json");
const QUOTE_RESPONSE: &[u8] = include_bytes!("fixtures/quote-response.json");
const EVENTS_PAGE: &[u8] = include_bytes!("fixtures/events-page-50.json");

fn pair<T: DeserializeOwned>(c: &mut Criterion, name: &str, bytes: &'static [u8]) {
    // The fixture must decode (a bench of an error path would be meaningless).
    serde_json::from_slice::<T>(bytes).unwrap_or_else(|e| panic!("{name}: the fixture does not decode: {e}"));
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("typed", |b| b.iter(|| serde_json::from_slice::<T>(black_box(bytes)).unwrap()));
    group.bench_function("value", |b| b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(bytes)).unwrap()));
    group.finish();
}

fn decode(c: &mut Criterion) {
    pair::<BridgeRecord>(c, "decode-bridge-record", BRIDGE_RECORD);
    pair::<QuoteResponse>(c, "decode-quote-response", QUOTE_RESPONSE);
    pair::<UserEventsPage>(c, "decode-events-page-50", EVENTS_PAGE);
}

criterion_group!(benches, decode);
criterion_main!(benches);
