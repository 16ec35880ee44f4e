//! The module graph of `src/`: no module imports one that imports it back. Every pair of sibling modules (the
//! top-level modules of the crate; the files and folders of one folder, such as `pricing/` or `store/sqlite/`) is
//! checked: if anything in one names the other (`crate::a::...`, `super::a`, `super::{a, ...}` outside comments
//! and tests), nothing in the other may name the first. A module and its own submodules (`mod.rs` and the files
//! beside it) are one unit here: a folder's `mod.rs` wires its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`, as (module path, text without comments and test modules).
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let mut module = prefix.to_vec();
        if path.is_dir() {
            module.push(name);
            modules(&path, &module, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            if !matches!(name.as_str(), "mod" | "lib" | "main") {
                module.push(name);
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let code: String =
                code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            out.push((module, code));
        }
    }
}

/// The module paths `code` (of the module at `module`, whose parent is `module[..len-1]`) names.
fn names(module: &[String], code: &str) -> BTreeSet<Vec<String>> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut found = BTreeSet::new();
    for (marker, base) in [("crate::", Vec::new()), ("super::", module[..module.len().saturating_sub(1)].to_vec())] {
        for (at, _) in code.match_indices(marker) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[at + marker.len()..];
            let mut path = base.clone();
            let mut rest = rest;
            loop {
                let part = ident(rest);
                if part.is_empty() {
                    break;
                }
                path.push(part.clone());
                rest = &rest[part.len()..];
                match rest.strip_prefix("::") {
                    Some(more) => rest = more,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                for item in group.split('}').next().unwrap_or_default().split(',') {
                    let part = ident(item.trim());
                    if !part.is_empty() {
                        found.insert([path.clone(), vec![part]].concat());
                    }
                }
            }
            found.insert(path);
        }
    }
    found
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    modules(&src, &[], &mut files);
    // (parent, a, b): something in `parent::a` names `parent::b`.
    let mut edges = BTreeMap::<(Vec<String>, String), BTreeSet<String>>::new();
    for (module, code) in &files {
        for named in names(module, code) {
            let common = module.iter().zip(&named).take_while(|(a, b)| a == b).count();
            if common < module.len() && common < named.len() {
                let parent = module[..common].to_vec();
                edges.entry((parent, module[common].clone())).or_default().insert(named[common].clone());
            }
        }
    }
    let mut cycles = Vec::new();
    for ((parent, a), targets) in &edges {
        for b in targets {
            if a < b && edges.get(&(parent.clone(), b.clone())).is_some_and(|back| back.contains(a)) {
                cycles.push(format!("{}{a} <-> {b}", parent.iter().map(|p| format!("{p}::")).collect::<String>()));
            }
        }
    }
    assert!(edges.len() > 20, "the scan found too few modules: {edges:?}");
    assert!(cycles.is_empty(), "modules that import each other: {cycles:#?}");
}
