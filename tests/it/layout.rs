//! The crate's lib has `test = false` (Cargo.toml: its unit-test binary would only recompile the generated types),
//! so a unit test under `src/` would silently never run. This fails instead, naming it.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_unit_tests_under_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 5, "no Rust files found under {}", src.display());
    let with_tests: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.contains("#[test]") || text.contains("#[cfg(test)]")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        with_tests.is_empty(),
        "unit tests under src/ never run (the lib has `test = false`); move them to tests/it/: {with_tests:?}"
    );
}
