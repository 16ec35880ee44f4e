//! `cargo fuzz run request_decoder` (see fuzz/README.md); the body is `bridge_fuzz::harness::request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = bridge_fuzz::harness::request(data);
});
