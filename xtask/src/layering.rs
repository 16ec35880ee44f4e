//! The module graph of every crate in the workspace (`cargo xtask check`; `cargo test -p xtask` runs it too).
//!
//! * No module imports one that imports it back. For every pair of sibling modules (the top-level modules of a
//!   crate; the modules of one folder, such as `pricing/` or `decode/`), if anything in one names the other,
//!   nothing in the other may name the first. A module and its own submodules are one unit here (a folder's
//!   `mod.rs` wires its files).
//! * A crate with a layer table ([`LAYERS`]) is layered: no module names a top-level module of a higher layer.
//!   Every top-level module of such a crate must be in the table; the crate root (`lib.rs`) is in none. Modules of
//!   one layer may name each other one way, unless the table sets them apart ([`Layered::apart`]): then neither
//!   names the other, and what they share belongs to a layer below.
//!
//! The module tree is read with syn from each crate root (`src/lib.rs`, `src/main.rs`), following `mod`
//! declarations (and `#[path]`). Leaving out `#[cfg(test)]` and `#[test]` items, every `crate::…` and `super::…`
//! path counts, in `use` trees (`super::{a, b}` names both) and in expressions, types and macro arguments alike;
//! comments and doc comments do not. A path through a `use` alias (`crate::store::X` where the root has
//! `pub use infra::store`) is followed to the module it names.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use anyhow::Context;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Attribute, Item, UseTree};

/// A layered crate: its top-level modules from the lowest layer up.
#[derive(Debug)]
pub struct Layered {
    /// The crate root, from the workspace root.
    pub root: &'static str,
    /// The top-level modules, layer by layer, lowest first.
    pub layers: &'static [&'static [&'static str]],
    /// Modules that stand apart: none of them names another (each a top-level module of the table).
    pub apart: &'static [&'static str],
}

/// The layered crates.
pub const LAYERS: &[Layered] = &[
    Layered {
        root: "crates/bridge-sandbox/src/lib.rs",
        layers: &[
            &["domain"],
            &["infra"],
            &["access", "pipeline"],
            &["operations"],
            &["service"],
            &["dashboard", "docs", "operate"],
            &["app"],
        ],
        apart: &[],
    },
    // The base (the contract and the checks of one exchange), the report formats, the two tools side by side
    // and never naming each other, and the one function that runs the runner through the proxy.
    Layered {
        root: "crates/bridge-conformance/src/lib.rs",
        layers: &[&["contract"], &["report"], &["runner", "proxy"], &["through_proxy"]],
        apart: &["runner", "proxy"],
    },
];

const UNLAYERED: Layered = Layered { root: "", layers: &[], apart: &[] };

/// The problems of every crate root of the workspace (`src/`, `crates/*/src/`, `xtask/src/`); none when the
/// module graph is as it should be.
pub fn problems(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut dirs = vec![root.join("src"), root.join("xtask/src")];
    for entry in std::fs::read_dir(root.join("crates"))? {
        dirs.push(entry?.path().join("src"));
    }
    dirs.sort();
    let mut problems = Vec::new();
    let mut roots = Vec::new();
    for file in dirs.iter().flat_map(|dir| [dir.join("lib.rs"), dir.join("main.rs")]).filter(|f| f.is_file()) {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let layered = LAYERS.iter().find(|l| l.root == rel).unwrap_or(&UNLAYERED);
        let graph = Graph::load(&file)?;
        problems.extend(graph.problems(layered).into_iter().map(|p| format!("{rel}: {p}")));
        roots.push(rel);
    }
    for layered in LAYERS.iter().filter(|l| !roots.contains(&l.root.to_owned())) {
        problems.push(format!("{}: a crate root of LAYERS that is not in the workspace", layered.root));
    }
    Ok(problems)
}

type ModPath = Vec<String>;

/// One crate's modules, what each names, and its `use` aliases.
struct Graph {
    modules: BTreeSet<ModPath>,
    /// (module, the path it names as written, made absolute).
    refs: Vec<(ModPath, ModPath)>,
    /// (module, name) -> the absolute path the name stands for.
    aliases: HashMap<(ModPath, String), ModPath>,
}

impl Graph {
    fn load(root: &Path) -> anyhow::Result<Graph> {
        let mut graph = Graph { modules: BTreeSet::new(), refs: Vec::new(), aliases: HashMap::new() };
        let mut uses = Vec::new();
        let dir = root.parent().context("a crate root is in a folder")?;
        graph.load_file(root, dir, &[], &mut uses)?;
        for (module, tree) in uses {
            let mut found = Vec::new();
            use_names(&tree, Vec::new(), &mut found);
            for (name, path) in found {
                let Some(target) = graph.absolute(&module, &path) else { continue };
                // A name can stand for a module and a function at once (`access::admin`, `app::admin`):
                // paths of the module graph mean the module.
                let key = (module.clone(), name);
                if !graph.aliases.get(&key).is_some_and(|old| graph.modules.contains(old)) {
                    graph.aliases.insert(key, target);
                }
            }
        }
        Ok(graph)
    }

    /// Reads the file of module `module`; its `mod x;` files are found in `dir`.
    fn load_file(
        &mut self,
        file: &Path,
        dir: &Path,
        module: &[String],
        uses: &mut Vec<(ModPath, UseTree)>,
    ) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let parsed = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
        self.load_items(parsed.items, file.parent().unwrap_or(dir), dir, module, uses)
    }

    fn load_items(
        &mut self,
        items: Vec<Item>,
        file_dir: &Path,
        dir: &Path,
        module: &[String],
        uses: &mut Vec<(ModPath, UseTree)>,
    ) -> anyhow::Result<()> {
        self.modules.insert(module.to_vec());
        for item in items {
            if is_test(&item) {
                continue;
            }
            let Item::Mod(declared) = item else {
                let mut found = Vec::new();
                scan(item.to_token_stream(), module, &mut found);
                self.refs.extend(found.into_iter().map(|path| (module.to_vec(), path)));
                if let Item::Use(used) = item {
                    uses.push((module.to_vec(), used.tree));
                }
                continue;
            };
            let name = declared.ident.to_string();
            let child = [module, std::slice::from_ref(&name)].concat();
            if let Some((_, inline)) = declared.content {
                self.load_items(inline, file_dir, &dir.join(&name), &child, uses)?;
                continue;
            }
            let file = match path_attribute(&declared.attrs) {
                Some(path) => file_dir.join(path),
                None if dir.join(format!("{name}.rs")).is_file() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            let is_mod_rs = path_attribute(&declared.attrs).is_some() || file.ends_with("mod.rs");
            let child_dir = if is_mod_rs { file.parent().unwrap_or(dir).to_path_buf() } else { dir.join(&name) };
            self.load_file(&file, &child_dir, &child, uses)?;
        }
        Ok(())
    }

    /// The absolute path a `use` path written in `module` stands for; `None` for another crate's.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<ModPath> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some([module, rest].concat()),
            "super" => {
                let mut base = parent(module);
                let mut rest = rest;
                while let Some(("super", more)) = rest.split_first().map(|(s, more)| (s.as_str(), more)) {
                    base = parent(&base);
                    rest = more;
                }
                Some([&base[..], rest].concat())
            }
            _ => {
                let absolute = [module, path].concat();
                self.modules.contains(&absolute[..=module.len()]).then_some(absolute)
            }
        }
    }

    /// `path` with every `use` alias on the way replaced by what it stands for.
    fn resolve(&self, path: &[String]) -> ModPath {
        let mut path = path.to_vec();
        'follow: for _ in 0..16 {
            for at in 0..path.len() {
                if let Some(target) = self.aliases.get(&(path[..at].to_vec(), path[at].clone())) {
                    if target[..] != path[..=at] {
                        path = [&target[..], &path[at + 1..]].concat();
                        continue 'follow;
                    }
                }
            }
            break;
        }
        path
    }

    /// Sibling cycles, then names of a higher layer and between modules set apart (none without a table).
    fn problems(&self, layered: &Layered) -> Vec<String> {
        let layers = layered.layers;
        // (parent, a) -> b -> an example: something in `parent::a` names `parent::b`.
        let mut edges = BTreeMap::<(ModPath, String), BTreeMap<String, String>>::new();
        let mut upward = BTreeSet::new();
        let mut across = BTreeSet::new();
        let layer = |top: &str| layers.iter().position(|names| names.contains(&top));
        for (module, written) in &self.refs {
            let named = self.resolve(written);
            let common = module.iter().zip(&named).take_while(|(a, b)| a == b).count();
            if common < module.len() && common < named.len() && self.modules.contains(&named[..=common]) {
                let sibling = named[common].clone();
                let example = named[common..].join("::");
                let (parent, from) = (module[..common].to_vec(), module[common].clone());
                edges.entry((parent, from)).or_default().entry(sibling).or_insert(example);
            }
            if let (Some(from), Some(to)) = (module.first(), named.first()) {
                if let (Some(low), Some(high)) = (layer(from), layer(to)) {
                    if high > low {
                        upward.insert(format!(
                            "{} (layer {}) names {} (layer {})",
                            module.join("::"),
                            low + 1,
                            named.join("::"),
                            high + 1
                        ));
                    }
                }
                if from != to && layered.apart.contains(&from.as_str()) && layered.apart.contains(&to.as_str()) {
                    across.insert(format!("{} names {}", module.join("::"), named.join("::")));
                }
            }
        }
        let mut problems = Vec::new();
        for ((parent, a), targets) in &edges {
            for (b, a_names) in targets {
                let Some(b_names) = edges.get(&(parent.clone(), b.clone())).and_then(|back| back.get(a)) else {
                    continue;
                };
                if a < b {
                    let prefix: String = parent.iter().map(|p| format!("{p}::")).collect();
                    problems.push(format!(
                        "{prefix}{a} <-> {prefix}{b}: modules that import each other \
                         ({a} names {a_names}, {b} names {b_names})"
                    ));
                }
            }
        }
        if !layers.is_empty() {
            let tops = self.modules.iter().filter(|m| m.len() == 1);
            for top in tops.filter(|m| layer(&m[0]).is_none()) {
                problems.push(format!("module {} is in no layer of xtask/src/layering.rs's LAYERS", top[0]));
            }
        }
        for name in layered.apart.iter().filter(|name| layer(name).is_none()) {
            problems.push(format!("module {name} is set apart but in no layer of xtask/src/layering.rs's LAYERS"));
        }
        problems.extend(upward.into_iter().map(|p| format!("{p}: an import from a higher layer")));
        problems.extend(across.into_iter().map(|p| format!("{p}: modules set apart name each other")));
        problems
    }
}

fn parent(module: &[String]) -> ModPath {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// `#[cfg(test)]` and `#[test]` items are not part of the module graph.
fn is_test(item: &Item) -> bool {
    let attrs: &[Attribute] = match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    };
    attrs.iter().any(|attr| {
        attr.path().is_ident("test")
            || (attr.path().is_ident("cfg")
                && attr.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "test"))
    })
}

fn path_attribute(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find(|attr| attr.path().is_ident("path")).and_then(|attr| match &attr.meta {
        syn::Meta::NameValue(syn::MetaNameValue { value: syn::Expr::Lit(lit), .. }) => match &lit.lit {
            syn::Lit::Str(path) => Some(path.value()),
            _ => None,
        },
        _ => None,
    })
}

/// The names a `use` tree brings in, each with the path it stands for (as written).
fn use_names(tree: &UseTree, prefix: ModPath, out: &mut Vec<(String, ModPath)>) {
    let mut bring = |ident: &syn::Ident, name: &syn::Ident| {
        let path = if ident == "self" { prefix.clone() } else { [&prefix[..], &[ident.to_string()]].concat() };
        let name = if name == "self" { prefix.last().cloned().unwrap_or_default() } else { name.to_string() };
        out.push((name, path));
    };
    match tree {
        UseTree::Path(path) => use_names(&path.tree, [&prefix[..], &[path.ident.to_string()]].concat(), out),
        UseTree::Name(name) => bring(&name.ident, &name.ident),
        UseTree::Rename(rename) => bring(&rename.ident, &rename.rename),
        UseTree::Glob(_) => {}
        UseTree::Group(group) => group.items.iter().for_each(|tree| use_names(tree, prefix.clone(), out)),
    }
}

/// Every `crate::…` and `super::…` path in `tokens` (of module `module`), made absolute; a group
/// (`crate::{a, b::c}`) gives each of its paths.
fn scan(tokens: TokenStream, module: &[String], out: &mut Vec<ModPath>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut at = 0;
    while at < tokens.len() {
        match &tokens[at] {
            TokenTree::Group(group) => scan(group.stream(), module, out),
            TokenTree::Ident(ident) if (ident == "crate" || ident == "super") && colons(&tokens, at + 1) => {
                let base = if ident == "crate" { Vec::new() } else { parent(module) };
                at = path_tree(&tokens, at + 3, base, out);
                continue;
            }
            _ => {}
        }
        at += 1;
    }
}

/// Reads the path (or group of paths) at `tokens[at..]` after `prefix::`; returns the index after it.
fn path_tree(tokens: &[TokenTree], mut at: usize, mut prefix: ModPath, out: &mut Vec<ModPath>) -> usize {
    loop {
        match tokens.get(at) {
            Some(TokenTree::Ident(ident)) if ident == "super" => {
                prefix.pop();
            }
            Some(TokenTree::Ident(ident)) if ident == "self" => {}
            Some(TokenTree::Ident(ident)) => prefix.push(ident.to_string()),
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                for piece in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                    path_tree(piece, 0, prefix.clone(), out);
                }
                return at + 1;
            }
            _ => break,
        }
        at += 1;
        if !colons(tokens, at) {
            break;
        }
        at += 2;
    }
    out.push(prefix);
    at
}

fn colons(tokens: &[TokenTree], at: usize) -> bool {
    let colon = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    colon(tokens.get(at)) && colon(tokens.get(at + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (path, text) into a fresh folder and checks the crate rooted at its `lib.rs`.
    fn check(files: &[(&str, &str)], layers: &'static [&'static [&'static str]]) -> Vec<String> {
        check_apart(files, layers, &[])
    }

    /// [`check`] with modules set apart.
    fn check_apart(
        files: &[(&str, &str)],
        layers: &'static [&'static [&'static str]],
        apart: &'static [&'static str],
    ) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Graph::load(&dir.path().join("lib.rs")).unwrap().problems(&Layered { root: "lib.rs", layers, apart })
    }

    #[test]
    fn the_workspace_has_no_module_cycle_and_no_upward_import() {
        let root = crate::workspace_root();
        let problems = problems(&root).expect("the check runs");
        assert!(problems.is_empty(), "the module graph:\n  - {}", problems.join("\n  - "));
        // The scan sees the real tree: the layered crates and many modules.
        let sandbox = Graph::load(&root.join("crates/bridge-sandbox/src/lib.rs")).unwrap();
        assert!(sandbox.modules.len() > 50, "{:?}", sandbox.modules);
        assert!(sandbox.refs.len() > 200, "{} paths", sandbox.refs.len());
        let conformance = Graph::load(&root.join("crates/bridge-conformance/src/lib.rs")).unwrap();
        assert!(conformance.modules.len() > 25, "{:?}", conformance.modules);
        let names = |from: &str, to: &str| {
            conformance.refs.iter().any(|(m, p)| m[0] == from && p.first().is_some_and(|p| p == to))
        };
        assert!(names("runner", "contract") && names("proxy", "contract") && names("through_proxy", "runner"));
    }

    #[test]
    fn a_sibling_cycle_fails() {
        let problems = check(
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                ("a.rs", "use crate::b::Thing;\npub fn f() {}\n"),
                ("b.rs", "pub struct Thing;\npub fn g() { crate::a::f() }\n"),
            ],
            &[],
        );
        assert_eq!(problems, ["a <-> b: modules that import each other (a names b::Thing, b names a::f)"]);
    }

    #[test]
    fn a_cycle_through_a_super_group_fails_and_through_a_re_export() {
        let problems = check(
            &[
                ("lib.rs", "mod p;\n"),
                ("p/mod.rs", "mod a;\nmod b;\nmod c;\npub use c::Reexported;\n"),
                ("p/a.rs", "use super::{b, c::{self}};\n"),
                ("p/b.rs", "fn f() -> super::a::X { todo!() }\n"),
                ("p/c.rs", "pub struct Reexported;\nfn g() { let _ = crate::p::a::Y; }\n"),
            ],
            &[],
        );
        assert_eq!(
            problems,
            [
                "p::a <-> p::b: modules that import each other (a names b, b names a::X)",
                "p::a <-> p::c: modules that import each other (a names c, c names a::Y)",
            ]
        );
        // A name re-exported by the parent is followed to the module it comes from.
        let problems = check(
            &[
                ("lib.rs", "mod p;\n"),
                ("p/mod.rs", "mod a;\nmod c;\npub use c::Reexported;\n"),
                ("p/a.rs", "use super::Reexported;\npub struct X;\n"),
                ("p/c.rs", "pub struct Reexported;\nfn g(_: super::a::X) {}\n"),
            ],
            &[],
        );
        assert_eq!(problems, ["p::a <-> p::c: modules that import each other (a names c::Reexported, c names a::X)"]);
    }

    #[test]
    fn an_import_from_a_higher_layer_fails_also_through_a_root_re_export() {
        let layers: &[&[&str]] = &[&["low"], &["high"]];
        let files = [
            ("lib.rs", "mod high;\nmod low;\npub use high::store;\n"),
            ("high/mod.rs", "pub mod store;\nuse crate::low::Base;\n"),
            ("high/store.rs", "pub struct Store;\n"),
            ("low.rs", "pub struct Base;\n"),
        ];
        assert_eq!(check(&files, layers), Vec::<String>::new());
        let mut upward = files;
        upward[3].1 = "pub struct Base;\npub fn f(_: &crate::store::Store) {}\n";
        assert_eq!(
            check(&upward, layers),
            [
                "high <-> low: modules that import each other (high names low::Base, low names high::store::Store)",
                "low (layer 1) names high::store::Store (layer 2): an import from a higher layer",
            ]
        );
        // A top-level module outside the table is a problem of its own.
        let mut unlisted = files.to_vec();
        unlisted[0].1 = "mod high;\nmod low;\nmod other;\n";
        unlisted.push(("other.rs", ""));
        assert_eq!(check(&unlisted, layers), ["module other is in no layer of xtask/src/layering.rs's LAYERS"]);
    }

    #[test]
    fn modules_set_apart_never_name_each_other_either_way() {
        let layers: &[&[&str]] = &[&["base"], &["one", "two"], &["top"]];
        let files = [
            ("lib.rs", "mod base;\nmod one;\nmod two;\nmod top;\n"),
            ("base.rs", "pub struct Base;\n"),
            ("one.rs", "pub fn f(_: crate::base::Base) {}\n"),
            ("two/mod.rs", "mod inner;\n"),
            ("two/inner.rs", "pub fn g(_: crate::base::Base) {}\n"),
            ("top.rs", "pub fn h() { crate::one::f(crate::base::Base); }\nuse crate::two::inner as _;\n"),
        ];
        assert_eq!(check_apart(&files, layers, &["one", "two"]), Vec::<String>::new());
        // One way is allowed in a layer, but not between modules set apart (from a submodule too).
        let mut one_way = files;
        one_way[4].1 = "pub fn g(_: crate::base::Base) { crate::one::f(crate::base::Base) }\n";
        assert_eq!(check(&one_way, layers), Vec::<String>::new());
        assert_eq!(
            check_apart(&one_way, layers, &["one", "two"]),
            ["two::inner names one::f: modules set apart name each other"]
        );
        // A module set apart must be in the table.
        assert_eq!(
            check_apart(&files, layers, &["one", "three"]),
            ["module three is set apart but in no layer of xtask/src/layering.rs's LAYERS"]
        );
    }

    #[test]
    fn comments_tests_strings_and_children_are_not_imports() {
        let problems = check(
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                (
                    "a.rs",
                    "//! See [`crate::b`].\n\
                     /// Uses `crate::b::X`.\n\
                     pub fn f() -> &'static str { \"crate::b::X\" } // crate::b::X\n\
                     pub(crate) mod inner { pub(super) fn g() { super::f(); } }\n\
                     #[cfg(test)]\nmod tests { use crate::b::X; }\n\
                     #[test]\nfn t() { crate::b::h(); }\n",
                ),
                ("b.rs", "pub struct X;\npub fn h() { crate::a::f(); }\n"),
            ],
            &[],
        );
        assert_eq!(problems, Vec::<String>::new());
    }
}
