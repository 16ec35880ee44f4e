//! `cargo test -p xtask` (and so `cargo test --workspace`) checks what `cargo xtask check` checks: the schema is
//! valid and linted and every generated file is what the generators make of it now. A generator changed without
//! `cargo xtask regen` fails here. The check only reads (`codegen::check_file_contents`); nothing in a test run
//! writes to the workspace. [`generators`] runs each generator on small fixture documents.

mod generators;

use std::path::Path;

use crate::codegen;

#[test]
fn generated_files_are_current() {
    let problems = crate::check_generated(&crate::workspace_root()).expect("the check runs");
    assert!(
        problems.is_empty(),
        "`cargo xtask check` finds {} problem(s); run `cargo xtask regen` and commit the result:\n  - {}",
        problems.len(),
        problems.join("\n  - ")
    );
}

#[test]
fn the_check_reports_stale_and_missing_files_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let stale = Path::new("src/generated/types.rs");
    std::fs::create_dir_all(root.path().join("src/generated")).unwrap();
    std::fs::write(root.path().join(stale), "// old\n").unwrap();

    let problem = codegen::check_file_contents(root.path(), stale, "// new\n").expect("a stale file is a problem");
    assert_eq!(problem, "src/generated/types.rs is stale: run `cargo xtask regen` and commit the result");
    assert_eq!(std::fs::read_to_string(root.path().join(stale)).unwrap(), "// old\n", "the check wrote the file");

    let missing = Path::new("src/generated/operations.rs");
    let problem = codegen::check_file_contents(root.path(), missing, "// new\n").expect("a missing file is a problem");
    assert_eq!(problem, "src/generated/operations.rs is missing: run `cargo xtask regen` and commit the result");
    assert!(!root.path().join(missing).exists(), "the check created the file");

    // Line endings do not count (a checkout with `core.autocrlf`).
    std::fs::write(root.path().join(stale), "// new\r\n").unwrap();
    assert_eq!(codegen::check_file_contents(root.path(), stale, "// new\n"), None);

    // What regen does: writes, after which the check passes.
    codegen::ensure_file_contents(root.path(), missing, "// new\n").unwrap();
    assert_eq!(codegen::check_file_contents(root.path(), missing, "// new\n"), None);
}
