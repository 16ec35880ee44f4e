// Shared by `build.rs` and `xtask` (included with `include!`/`#[path]`): the fingerprint of `schema/` that
// generated files record, so that a build can tell when they are stale. FNV-1a 64 over every file's relative
// path and bytes, files in name order; not cryptographic, only a change detector.

/// Fingerprint of every file under `schema_dir`, as 16 lower-case hex digits.
pub fn schema_fingerprint(schema_dir: &std::path::Path) -> std::io::Result<String> {
    let mut files = Vec::new();
    let mut stack = vec![schema_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for file in &files {
        let rel = file.strip_prefix(schema_dir).unwrap_or(file);
        feed(rel.to_string_lossy().replace('\\', "/").as_bytes());
        feed(&[0]);
        // Line endings are normalised so that a checkout with CRLF does not look stale.
        let text = std::fs::read(file)?;
        let normalised: Vec<u8> = text.into_iter().filter(|b| *b != b'\r').collect();
        feed(&normalised);
        feed(&[0]);
    }
    Ok(format!("{hash:016x}"))
}
