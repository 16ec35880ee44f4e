//! Checks that the committed generated code matches `schema/`; it generates nothing.
//!
//! Generated code is committed (see docs/contributing.md, "Why generated code is committed"), so that crates depending on this one build
//! without any code generator. This script only compares the fingerprint of `schema/` with the one recorded in
//! `src/generated/types.rs` and stops the build, saying what to run, when they differ. It reruns only when
//! `schema/` or the generated file changes.

include!("build_support/schema_hash.rs");

fn main() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let schema_dir = root.join("schema");
    let generated = root.join("src/generated/types.rs");
    println!("cargo:rerun-if-changed=schema");
    println!("cargo:rerun-if-changed=src/generated/types.rs");
    let expected = schema_fingerprint(&schema_dir).expect("schema/ is readable");
    let text = std::fs::read_to_string(&generated).unwrap_or_default();
    let recorded = text.lines().find_map(|line| line.strip_prefix("// schema-fingerprint: ")).unwrap_or("none");
    if recorded.trim() != expected {
        eprintln!(
            "\nerror: the generated code in src/generated/ is stale: schema/ changed since it was generated \
             (fingerprint {expected}, generated from {recorded}).\n       Run `cargo xtask regen` and commit the result.\n"
        );
        std::process::exit(1);
    }
}
