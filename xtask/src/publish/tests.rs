//! The published form, rule by rule on small fixtures (`xtask/tests/fixtures/publish/`, insta snapshots of the
//! published JSON), and on the real schema: the source form has every construct the generators stumbled on, the
//! published form none, and progenitor still reads it.

use std::path::Path;

use serde_json::Value;

use super::{generator_problems, published};
use crate::bundle::{self, Yaml};
use crate::{lint, validate};

const FIXTURES: &[&str] = &["all_of_over_union", "optional_tag", "union_mapping_target"];

fn fixtures_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/publish")
}

/// A fixture that `cargo xtask check` accepts as a source document.
fn fixture(name: &str) -> Yaml {
    let path = fixtures_dir().join(format!("{name}.yaml"));
    let doc = bundle::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let json = bundle::to_json_value(&doc).unwrap();
    let mut problems = validate::problems(&json);
    problems.extend(lint::problems(&json, &doc));
    assert!(problems.is_empty(), "fixture {name} is not a valid schema:\n  - {}", problems.join("\n  - "));
    doc
}

fn real_schema() -> Yaml {
    bundle::load(&crate::workspace_root().join("schema/openapi.yaml")).unwrap()
}

#[test]
fn each_restatement_on_its_fixture() {
    for name in FIXTURES {
        let source = fixture(name);
        let source_problems = generator_problems(&bundle::to_json_value(&source).unwrap());
        assert!(!source_problems.is_empty(), "{name}: the fixture shows no construct generators stumble on");
        let out = published(&source).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let json = bundle::to_json_value(&out).unwrap();
        assert_eq!(generator_problems(&json), Vec::<String>::new(), "{name}: the published form");
        assert_eq!(validate::problems(&json), Vec::<String>::new(), "{name}: the published form is OpenAPI 3.0");
        insta::with_settings!({
            snapshot_path => "../../tests/fixtures/publish/snapshots",
            prepend_module_to_snapshot => false,
            input_file => format!("xtask/tests/fixtures/publish/{name}.yaml"),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("publish__{name}"), bundle::to_json_text(&out).unwrap());
        });
    }
}

#[test]
fn every_fixture_is_tested() {
    let mut found: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".yaml")).map(str::to_owned))
        .collect();
    found.sort();
    assert_eq!(found, FIXTURES);
}

/// What the generators reported on the document published before this module (openapi-python-client dropped the
/// three record families, openapi-typescript warned about four mappings, pydantic refused records without a
/// tag) is each found in the source form; the published form has none of it.
#[test]
fn the_real_schema_is_published_without_the_constructs_generators_cannot_read() {
    let source = real_schema();
    let before = generator_problems(&bundle::to_json_value(&source).unwrap());
    insta::with_settings!({
        snapshot_path => "../../tests/fixtures/publish/snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("publish__source_form_problems", before.join("\n"));
    });
    let after = bundle::to_json_value(&published(&source).unwrap()).unwrap();
    assert_eq!(generator_problems(&after), Vec::<String>::new());
}

/// progenitor reads the published form as it reads the source form: with the document transformed as the client
/// generator transforms it (one error type per operation, `xtask/src/client.rs`), it generates a whole client and
/// its types (typify's, nothing replaced) from each.
#[test]
fn progenitor_generates_a_client_from_the_published_form() {
    let source = real_schema();
    for (form, doc) in [("source", source.clone()), ("published", published(&source).unwrap())] {
        let json = crate::client::progenitor_document(&bundle::to_json_value(&doc).unwrap()).unwrap();
        let spec: openapiv3::OpenAPI = serde_json::from_value(json).unwrap();
        let mut generator = progenitor::Generator::new(&progenitor::GenerationSettings::new());
        let tokens = generator.generate_tokens(&spec).unwrap_or_else(|e| panic!("the {form} form: {e}"));
        assert!(tokens.to_string().contains("BridgeRecord"), "the {form} form's client has the record type");
    }
}

#[test]
fn constructs_it_cannot_restate_are_refused() {
    let mut doc = fixture("all_of_over_union");
    // The union without its discriminator: which member makes which complete object is unknown.
    let state = doc["components"]["schemas"]["RecordState"].as_mapping_mut().unwrap();
    state.remove("discriminator");
    let err = published(&doc).unwrap_err().to_string();
    assert!(err.contains("components.schemas.Record: `allOf` over a union without a discriminator"), "{err}");

    // A complete object's name taken by a component already.
    let mut doc = fixture("all_of_over_union");
    let taken: Yaml = serde_norway::from_str("{type: object}").unwrap();
    doc["components"]["schemas"].as_mapping_mut().unwrap().insert("RecordDone".into(), taken);
    let err = published(&doc).unwrap_err().to_string();
    assert!(err.contains("would be named RecordDone, which exists"), "{err}");

    // A default variant the `oneOf` could not tell apart: another variant that does not require the tag.
    let mut doc = fixture("optional_tag");
    let square = doc["components"]["schemas"]["Square"]["required"].as_sequence_mut().unwrap();
    square.retain(|p| p.as_str() != Some("kind"));
    let err = published(&doc).unwrap_err().to_string();
    assert!(err.contains("does not require `kind`"), "{err}");
}

/// The checks see through `$ref`s and into operations: an `allOf` over a union in a response body is found.
#[test]
fn generator_problems_are_found_anywhere_in_the_document() {
    let doc: Value = serde_json::json!({
        "paths": {"/r": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {
            "allOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/U"}]
        }}}}}}}},
        "components": {"schemas": {
            "A": {"type": "object"},
            "U": {"oneOf": [{"$ref": "#/components/schemas/A"}]}
        }}
    });
    let problems = generator_problems(&doc);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("paths./r.get.responses.200.content.application/json.schema"), "{problems:?}");
}
