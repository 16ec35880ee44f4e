//! Decodes one benchmark fixture N times, typed or as a `serde_json::Value`, for instruction counts that do not
//! depend on timing: `scripts/profile-decode.sh` runs it under callgrind, collecting only inside [`decode_n`], and
//! divides by N (docs/performance.md, "Where the time goes").
//!
//! ```sh
//! cargo build --release --example decode_profile
//! target/release/examples/decode_profile quote-response typed 1000
//! ```

use std::hint::black_box;

use bridge_contract::{BridgeRecord, HistoryPage, QuoteResponse, UserEventsPage};
use serde::de::DeserializeOwned;

const BRIDGE_RECORD: &[u8] = include_bytes!("../benches/fixtures/bridge-record.json");
const QUOTE_RESPONSE: &[u8] = include_bytes!("../benches/fixtures/quote-response.json");
const EVENTS_PAGE: &[u8] = include_bytes!("../benches/fixtures/events-page-50.json");
const HISTORY_PAGE: &[u8] = include_bytes!("../benches/fixtures/history-page-50.json");

/// Decodes `bytes` as `T` `n` times (the one function callgrind collects in: `--toggle-collect=*decode_n*`).
#[inline(never)]
fn decode_n<T: DeserializeOwned>(bytes: &[u8], n: usize) {
    for _ in 0..n {
        black_box(serde_json::from_slice::<T>(black_box(bytes)).expect("the fixture decodes"));
    }
}

fn run<T: DeserializeOwned>(bytes: &[u8], kind: &str, n: usize) {
    match kind {
        "typed" => decode_n::<T>(bytes, n),
        "value" => decode_n::<serde_json::Value>(bytes, n),
        other => panic!("decode kind {other:?}: typed or value"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: decode_profile <bridge-record|quote-response|events-page-50|history-page-50> <typed|value> <N>";
    let [_, fixture, kind, n] = args.as_slice() else { panic!("{usage}") };
    let n: usize = n.parse().expect(usage);
    match fixture.as_str() {
        "bridge-record" => run::<BridgeRecord>(BRIDGE_RECORD, kind, n),
        "quote-response" => run::<QuoteResponse>(QUOTE_RESPONSE, kind, n),
        "events-page-50" => run::<UserEventsPage>(EVENTS_PAGE, kind, n),
        "history-page-50" => run::<HistoryPage>(HISTORY_PAGE, kind, n),
        other => panic!("fixture {other:?}; {usage}"),
    }
}
