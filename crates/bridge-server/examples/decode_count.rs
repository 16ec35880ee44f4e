//! Decodes a quote request body N times with one decoder and nothing else, so that instruction counts under
//! callgrind compare the decoders (`scripts/profile-decoder.sh` runs it at two N and takes the difference):
//!
//! `cargo run --release -p bridge-server --example decode_count -- DECODER INPUT MODE N`
//!
//! * DECODER: `decoder` (what the server runs on a JSON body, `decode::body`: the one-pass path, the engine's
//!   walker only for issues), `engine` (`decode::body_by_engine`: bytes → `JsValue` → shape walk → normalised JSON
//!   → the type), or `serde` (`serde_json::from_slice`, the baseline: none of the framework's rules);
//! * INPUT: `valid` or `invalid` (the bodies of `benches/decode_request.rs`);
//! * MODE: `first` or `all` (how many issues are reported).

use std::hint::black_box;

use bridge_contract::BridgeQuoteRequest;
use bridge_server::decode::{self, ErrorsMode};
use bridge_server::shapes;

#[path = "../benches/support/quote_bodies.rs"]
mod quote_bodies;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [decoder, input, mode, n] = args.as_slice() else {
        eprintln!("usage: decode_count decoder|engine|serde valid|invalid first|all N");
        std::process::exit(2);
    };
    let bytes = match input.as_str() {
        "valid" => quote_bodies::VALID,
        "invalid" => quote_bodies::INVALID,
        other => panic!("INPUT is valid or invalid, not {other}"),
    };
    let mode = match mode.as_str() {
        "first" => ErrorsMode::First,
        "all" => ErrorsMode::All,
        other => panic!("MODE is first or all, not {other}"),
    };
    let n: u64 = n.parse().expect("N is a count");
    let shape = shapes::by_operation_id("quoteBridge").and_then(|s| s.body.as_ref()).expect("quoteBridge's body");
    let json = Some(&b"application/json"[..]);
    let mut accepted = 0u64;
    for _ in 0..n {
        let ok = match decoder.as_str() {
            "decoder" => decode::body::<BridgeQuoteRequest>(shape, json, black_box(bytes), mode).is_ok(),
            "engine" => decode::body_by_engine::<BridgeQuoteRequest>(shape, json, black_box(bytes), mode).is_ok(),
            "serde" => serde_json::from_slice::<BridgeQuoteRequest>(black_box(bytes)).is_ok(),
            other => panic!("DECODER is decoder, engine or serde, not {other}"),
        };
        accepted += u64::from(ok);
    }
    println!("{accepted} of {n} accepted");
}
