//! `cargo fuzz run webhook_verifier` (see fuzz/README.md); the body is `bridge_fuzz::harness::webhook`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = bridge_fuzz::harness::webhook(data);
});
