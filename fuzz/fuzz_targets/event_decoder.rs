//! `cargo fuzz run event_decoder` (see fuzz/README.md); the body is `bridge_fuzz::harness::event`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = bridge_fuzz::harness::event(data);
});
