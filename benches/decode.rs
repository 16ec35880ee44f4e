//! Decoding the contract's answers into the typed values, and encoding them again, against the baseline of doing the
//! same with a `serde_json::Value` (what a client that does not use the types would do at least). Each group has the
//! two measurements side by side; `scripts/bench-report.py` prints the ratio `typed / value`.
//!
//! The fixtures are real answers of the sandbox (`benches/fixtures/README.md` says how they were made): a bridge
//! record in state `EXECUTED`, a quote response of the `bridge` family, a page of 50 events of every kind as the
//! event feed serves it, and a history page of 50 records of every family and every state the sandbox reaches.
//!
//! * `decode-*`: `serde_json::from_slice::<T>` against `serde_json::from_slice::<Value>` of the same bytes;
//! * `encode-*`: `serde_json::to_vec(&typed)` against `serde_json::to_vec(&value)`, where both were decoded from
//!   those bytes (the two outputs have the same members; the `Value`'s are in alphabetical order).
//!
//! Run: `cargo bench -p bridge-contract --bench decode` (add `-- --quick` for a short run).

use std::hint::black_box;

use bridge_contract::{BridgeRecord, HistoryPage, QuoteResponse, UserEventsPage};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::de::DeserializeOwned;
use serde::Serialize;

const BRIDGE_RECORD: &[u8] = include_bytes!("fixtures/bridge-record.json");
const QUOTE_RESPONSE: &[u8] = include_bytes!("fixtures/quote-response.json");
const EVENTS_PAGE: &[u8] = include_bytes!("fixtures/events-page-50.json");
const HISTORY_PAGE: &[u8] = include_bytes!("fixtures/history-page-50.json");

fn pair<T: DeserializeOwned + Serialize>(c: &mut Criterion, name: &str, bytes: &'static [u8]) {
    // The fixture must decode (a bench of an error path would be meaningless).
    let typed = serde_json::from_slice::<T>(bytes)
        .unwrap_or_else(|e| panic!("{name}: the fixture does not decode: {e}"));
    let value = serde_json::from_slice::<serde_json::Value>(bytes).expect("the fixture is JSON");
    let mut group = c.benchmark_group(format!("decode-{name}"));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("typed", |b| {
        b.iter(|| serde_json::from_slice::<T>(black_box(bytes)).unwrap())
    });
    group.bench_function("value", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(bytes)).unwrap())
    });
    group.finish();
    let mut group = c.benchmark_group(format!("encode-{name}"));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("typed", |b| {
        b.iter(|| serde_json::to_vec(black_box(&typed)).unwrap())
    });
    group.bench_function("value", |b| {
        b.iter(|| serde_json::to_vec(black_box(&value)).unwrap())
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    pair::<BridgeRecord>(c, "bridge-record", BRIDGE_RECORD);
    pair::<QuoteResponse>(c, "quote-response", QUOTE_RESPONSE);
    pair::<UserEventsPage>(c, "events-page-50", EVENTS_PAGE);
    pair::<HistoryPage>(c, "history-page-50", HISTORY_PAGE);
}

criterion_group!(benches, decode);
criterion_main!(benches);
