//! The generators tested the way typify and progenitor test theirs: small fixture documents
//! (`xtask/tests/fixtures/generators/*.yaml`), one per rule of the type mapping and a couple of operation
//! documents, each turned into Rust by the generator and compared with an insta snapshot of the whole output
//! (`xtask/tests/fixtures/generators/snapshots/`). The real schema's output is compiled by every build; these
//! pin what each rule produces on its own, so a generator change shows up rule by rule in review.
//!
//! After changing a generator: `INSTA_UPDATE=always cargo test -p xtask generators`, then read the snapshot diff.

use std::path::{Path, PathBuf};

use crate::bundle::{self, Yaml};
use crate::{lint, validate};

/// What `cargo xtask check` accepts: a fixture that breaks a house rule would test a document the generators
/// never see.
fn fixture(name: &str) -> Yaml {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generators").join(format!("{name}.yaml"));
    let doc = bundle::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let json = bundle::to_json_value(&doc).unwrap();
    let mut problems = validate::problems(&json);
    problems.extend(lint::problems(&json, &doc));
    assert!(problems.is_empty(), "fixture {name} is not a valid schema:\n  - {}", problems.join("\n  - "));
    doc
}

/// The generated files one after another, each under its path.
fn render(files: Vec<(PathBuf, String)>) -> String {
    files.into_iter().map(|(path, contents)| format!("// ===== {} =====\n{contents}", path.display())).collect()
}

fn assert_output(generator: &str, fixture: &str, output: String) {
    insta::with_settings!({
        snapshot_path => "../../tests/fixtures/generators/snapshots",
        prepend_module_to_snapshot => false,
        input_file => format!("xtask/tests/fixtures/generators/{fixture}.yaml"),
        omit_expression => true,
    }, {
        insta::assert_snapshot!(format!("{generator}__{fixture}"), output);
    });
}

/// One test per fixture of the type generator (`rust_types.rs`: `types.rs` and `arbitrary.rs`).
macro_rules! type_fixtures {
    ($($name:ident,)*) => {
        mod types {
            pub const FIXTURES: &[&str] = &[$(stringify!($name)),*];
            $(
                #[test]
                fn $name() {
                    let doc = super::fixture(stringify!($name));
                    let files = crate::rust_types::generate(&doc, "fixture").expect("the types generate");
                    super::assert_output("types", stringify!($name), super::render(files));
                }
            )*
        }
    };
}

type_fixtures! {
    object_component,
    optional_and_nullable,
    closed_object,
    all_of_flatten,
    flatten_part_order,
    tag_enum,
    string_enum,
    discriminated_union,
    json_kind_union,
    presence_union,
    shared_member_accessors,
    scalars,
    operation_parameters,
    x_built_from,
}

/// One test per operation fixture for the operations generator (`operations.rs`) and one for the server
/// generator (`server.rs`: the decoder's tables and the `BridgeApi` trait with its routes).
macro_rules! operation_fixtures {
    ($($name:ident,)*) => {
        mod operations {
            pub const FIXTURES: &[&str] = &[$(stringify!($name)),*];
            $(
                #[test]
                fn $name() {
                    let doc = super::fixture(stringify!($name));
                    let files = crate::operations::generate(&doc).expect("the operations generate");
                    super::assert_output("operations", stringify!($name), super::render(files));
                }
            )*
        }
        mod server {
            $(
                #[test]
                fn $name() {
                    let doc = super::fixture(stringify!($name));
                    let files = crate::server::generate(&doc).expect("the server code generates");
                    super::assert_output("server", stringify!($name), super::render(files));
                }
            )*
        }
    };
}

operation_fixtures! {
    operations_requests,
    operations_aliases,
    x_encoded_answer,
}

/// The decoder's tables hold a struct's members (and flattened parts) as bits of a `u64`: a struct with more is
/// refused by the generator, naming it, rather than generated with tables that would lose members.
#[test]
fn a_struct_of_more_members_than_the_tables_hold_is_refused() {
    let document = |members: usize| {
        let properties: String = (0..members).map(|i| format!("        m{i}: {{type: string}}\n")).collect();
        let text = format!(
            "openapi: 3.0.3\ninfo: {{title: wide, version: '1'}}\npaths: {{}}\ncomponents:\n  schemas:\n    Wide:\n      \
             type: object\n      properties:\n{properties}"
        );
        serde_norway::from_str::<Yaml>(&text).unwrap()
    };
    let limit = crate::rust_types::MAX_MEMBERS;
    assert!(crate::rust_types::generate(&document(limit), "fixture").is_ok());
    let err = crate::rust_types::generate(&document(limit + 1), "fixture").unwrap_err();
    assert!(format!("{err:#}").contains("Wide: 65 members"), "{err:#}");
}

/// Every fixture file has a test (a fixture nobody runs would pin nothing).
#[test]
fn every_fixture_is_tested() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generators");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".yaml")).map(str::to_owned))
        .collect();
    found.sort();
    let mut tested: Vec<&str> = types::FIXTURES.iter().chain(operations::FIXTURES).copied().collect();
    tested.sort();
    assert_eq!(found, tested, "fixtures in {} and the tests here differ", dir.display());
}

/// The domain rules on fixture documents (`x_built_from.yaml`, `x_encoded_answer.yaml`), through the whole
/// pipeline: bundled, validated and linted like the real schema, then generated; `domain.rs` read with its white
/// space folded.
mod domain {
    fn domain_of(fixture: &str) -> String {
        let doc = super::fixture(fixture);
        let files = crate::rust_types::generate(&doc, "fixture").unwrap();
        files
            .into_iter()
            .find(|(p, _)| p.ends_with("domain.rs"))
            .unwrap()
            .1
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn x_built_from_constructors_and_nested_unions() {
        let text = domain_of("x_built_from");
        // complete sources: a conversion; members by name, optional ones absent, tags the event's own
        assert!(text.contains("impl From<(&Record, &Settled)> for SettledCardEvent"), "{text}");
        assert!(text.contains("tx_hash: settled.tx_hash.clone()") && text.contains("extra: None"), "{text}");
        assert!(text.contains("note: record.note.clone()"), "{text}");
        // a required member no source has: a constructor that takes it
        assert!(text.contains("pub fn from_record(record: &Record, opened_at: impl Into<String>) -> Self"), "{text}");
        // a tagged object: new(required members)
        assert!(text.contains("impl Settled { /// A `Settled` with its tags set and its optional members absent. pub fn new(tx_hash: impl Into<String>) -> Self"), "{text}");
        // the leaves of a union variant convert into the outer union
        assert!(text.contains("impl From<SettledCardEvent> for Event { fn from(v: SettledCardEvent) -> Self { Self::Settled(SettledEvent::from(v)) } }"), "{text}");
        assert!(!text.contains("impl From<OpenedEvent> for Event"), "a direct variant converts already: {text}");
    }

    #[test]
    fn x_encoded_answer_puts_the_answer_together_from_encoded_lists() {
        let text = domain_of("x_encoded_answer");
        assert!(
            text.contains("pub fn encode_with( items: &crate::Encoded<Vec<Event>>, next: &Option<String>, total: &Option<i64>, ) -> Result<crate::Encoded<Self>, serde_json::Error>"),
            "{text}"
        );
        // the list copied, a required nullable member always written, an optional one only when present
        assert!(text.contains(r#"write_member(&mut out, &mut first, "items", items.as_str());"#), "{text}");
        assert!(
            text.contains(r#"write_member( &mut out, &mut first, "next", &serde_json::to_string(next)?, );"#),
            "{text}"
        );
        assert!(text.contains(r#"if total.is_some() {"#), "{text}");
        assert!(!text.contains("impl Event {"), "only the marked operation's answer: {text}");
    }
}
