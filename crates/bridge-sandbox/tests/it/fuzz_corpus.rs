//! Replays the fuzz corpora (`fuzz/corpus/*`, with the `regression-*` inputs that once failed, and any crash
//! input lying in `fuzz/artifacts/*`) through the fuzz targets' bodies on the stable toolchain, so every input
//! the fuzzers ever kept stays a regression test in `cargo test --workspace`. The targets themselves run with `cargo fuzz` (see `fuzz/README.md`).
//!
//! It lives in this crate only because the sandbox depends on all three crates the targets exercise
//! (bridge-contract, bridge-server, bridge-client).

#[path = "../../../../fuzz/src/harness.rs"]
mod harness;

use std::path::PathBuf;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut out = Vec::new();
    for dir in [root.join("corpus").join(target), root.join("artifacts").join(target)] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

fn replay(target: &str, f: impl Fn(&[u8])) -> usize {
    let inputs = inputs(target);
    for (path, bytes) in &inputs {
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(bytes))) {
            let message =
                panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            panic!("{target}: {} panics: {}", path.display(), message.unwrap_or_default());
        }
    }
    inputs.len()
}

#[test]
fn request_decoder_corpus() {
    let n = replay("request_decoder", harness::request);
    assert!(n >= 26, "the seed corpus is there ({n} inputs)");
}

#[test]
fn event_decoder_corpus() {
    let n = replay("event_decoder", harness::event);
    assert!(n >= 60, "the seed corpus is there ({n} inputs)");
}

#[test]
fn webhook_verifier_corpus() {
    let inputs = inputs("webhook_verifier");
    let verified = inputs.iter().filter(|(_, bytes)| harness::webhook(bytes)).count();
    // The seeds signed by Node verify (plain and upper-case, padded signatures); tampered ones do not.
    assert!(verified >= 8, "{verified} of {} webhook inputs verified", inputs.len());
    for (path, bytes) in &inputs {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("signed-") {
            assert!(harness::webhook(bytes), "{name} verifies");
        }
        if name.starts_with("tampered-") {
            assert!(!harness::webhook(bytes), "{name} does not verify");
        }
    }
}
