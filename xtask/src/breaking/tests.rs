//! Fixture tests: one directory per rule under `xtask/tests/fixtures/breaking/`, holding `base.yaml` and
//! `head.yaml` (small documents; the comment at the top of `base.yaml` says what changes and the expected
//! classification) and `expected.txt`, the expected changes one per line as [`report::line`] prints them.
//! `UPDATE_EXPECT=1 cargo test -p xtask` rewrites the `expected.txt` files (review the diff before committing).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{compare, report, Audiences, Change, Rule, Side};
use crate::bundle;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/breaking")
}

fn load(path: &Path) -> Value {
    let doc = bundle::load(path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    bundle::to_json_value(&doc).unwrap()
}

fn fixture_lines(name: &str) -> Vec<String> {
    let dir = fixtures_dir().join(name);
    let cmp = compare(&load(&dir.join("base.yaml")), &load(&dir.join("head.yaml")));
    cmp.changes.iter().map(report::line).collect()
}

fn check_fixture(name: &str) {
    let got = fixture_lines(name);
    let expected_path = fixtures_dir().join(name).join("expected.txt");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let mut text = got.join("\n");
        text.push('\n');
        std::fs::write(&expected_path, text).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&expected_path).unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
    let expected: Vec<&str> = expected.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(got, expected, "fixture {name}: the comparison differs from expected.txt");
}

macro_rules! fixtures {
    ($($name:ident,)*) => {
        $(
            #[test]
            fn $name() {
                check_fixture(stringify!($name));
            }
        )*
        const FIXTURES: &[&str] = &[$(stringify!($name),)*];
    };
}

fixtures! {
    anchors_and_merge_keys_do_not_matter,
    callback_request_member_added_required,
    callbacks_added_or_removed,
    closed_object_member_added,
    default_changed,
    descriptions_and_deprecations,
    event_kind_added,
    interface_version_changed,
    media_types_added_or_removed,
    operation_added,
    operation_moved_or_renamed,
    operation_removed,
    request_constraint_changed,
    request_constraint_loosened,
    request_constraint_tightened,
    request_enum_value_added,
    request_enum_value_removed,
    request_member_added_optional,
    request_member_added_required,
    request_member_made_optional_or_nullable,
    request_member_made_required,
    request_member_removed,
    request_member_retyped,
    request_parameters_added_or_made_required,
    response_constraints,
    response_enum_value_added,
    response_member_added_or_made_required,
    response_member_removed_or_made_optional,
    response_member_retyped,
    response_nullability,
    security_added,
    security_removed,
    security_scheme_changed,
    shared_component_in_requests_and_responses,
    status_added,
    status_removed,
    unclassified_change,
    union_variant_removed_or_default_changed,
}

#[test]
fn every_fixture_directory_has_a_test() {
    let dirs: BTreeSet<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let tests: BTreeSet<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    assert_eq!(dirs, tests, "add the new fixture directory to `fixtures!` (or remove the stale test)");
}

#[test]
fn every_rule_has_a_fixture() {
    let mut seen = BTreeSet::new();
    for name in FIXTURES {
        let text = std::fs::read_to_string(fixtures_dir().join(name).join("expected.txt")).unwrap();
        for rule in Rule::ALL {
            if text.contains(&format!("[{}]", rule.id())) {
                seen.insert(*rule);
            }
        }
    }
    let missing: Vec<&str> = Rule::ALL.iter().filter(|r| !seen.contains(r)).map(|r| r.id()).collect();
    assert!(missing.is_empty(), "rules without a fixture: {missing:?}");
}

#[test]
fn every_rule_is_documented() {
    let mut ids = BTreeSet::new();
    for rule in Rule::ALL {
        assert!(!rule.meaning().is_empty(), "{rule:?} has no doc comment");
        assert!(ids.insert(rule.id()), "two rules are called {}", rule.id());
    }
}

/// The classification table of the module docs and docs/contributing.md: narrowing breaks the sender, widening the
/// receiver, changing and removing both, neutral nobody.
#[test]
fn effects_break_the_sender_or_the_receiver() {
    use super::Effect::*;
    let table = [
        (Narrows, Side::Request, Audiences::CLIENTS),
        (Narrows, Side::Response, Audiences::SERVERS),
        (Widens, Side::Request, Audiences::SERVERS),
        (Widens, Side::Response, Audiences::CLIENTS),
        (Changes, Side::Request, Audiences::BOTH),
        (Removes, Side::Response, Audiences::BOTH),
        (Neutral, Side::Request, Audiences::NONE),
        (Neutral, Side::Response, Audiences::NONE),
    ];
    for (effect, side, expected) in table {
        assert_eq!(effect.breaks(side), expected, "{effect:?} on {side:?}");
    }
}

fn real_schema() -> Value {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/openapi.yaml"))
}

#[test]
fn the_real_schema_compared_with_itself_has_no_changes() {
    let doc = real_schema();
    let cmp = compare(&doc, &doc);
    assert!(cmp.changes.is_empty(), "{:#?}", cmp.changes);
}

/// A new event kind in the real schema: the feed answers it and four callbacks deliver it, so it breaks clients,
/// and the change is reported once, in `WebhookEvent`, with each of those uses.
#[test]
fn a_new_event_kind_in_the_real_schema_breaks_clients_once_with_every_use() {
    let base = real_schema();
    let mut head = base.clone();
    let union = head.pointer_mut("/components/schemas/WebhookEvent").expect("the schema has WebhookEvent");
    union["oneOf"].as_array_mut().unwrap().push(json!({"$ref": "#/components/schemas/TeleportEvent"}));
    union["discriminator"]["mapping"]["TELEPORT"] = json!("#/components/schemas/TeleportEvent");
    head["components"]["schemas"]["TeleportEvent"] = json!({
        "type": "object", "additionalProperties": false, "required": ["_tag"],
        "properties": {"_tag": {"type": "string", "enum": ["TELEPORT"]}}
    });
    let cmp = compare(&base, &head);
    assert_eq!(cmp.changes.len(), 1, "{:#?}", cmp.changes);
    let change = &cmp.changes[0];
    assert_eq!(
        (change.rule, change.subject.as_str(), change.breaks),
        (Rule::UnionVariantAdded, "WebhookEvent.TELEPORT", Audiences::CLIENTS)
    );
    assert!(change.uses.iter().all(|u| u.side == Side::Response), "{:#?}", change.uses);
    let users: BTreeSet<String> = change.uses.iter().map(|u| u.operation.label()).collect();
    assert!(users.contains("listUserEvents"), "{users:?}");
    assert!(
        users.contains("quoteBridge/webhookEvent") && users.contains("createDepositAddresses/webhookEvent"),
        "{users:?}"
    );
}

/// Removing a member of a component the real schema shares between requests and responses breaks both.
#[test]
fn a_member_removed_from_a_shared_component_of_the_real_schema_breaks_both() {
    let base = real_schema();
    let mut head = base.clone();
    let props =
        head.pointer_mut("/components/schemas/PostBridgeExtended/properties").and_then(Value::as_object_mut).unwrap();
    props.remove("vaultId").expect("PostBridgeExtended has vaultId");
    let cmp = compare(&base, &head);
    let removed: Vec<&Change> = cmp.changes.iter().filter(|c| c.rule == Rule::MemberRemoved).collect();
    assert_eq!(removed.len(), 1, "{:#?}", cmp.changes);
    assert_eq!(removed[0].subject, "PostBridgeExtended.vaultId");
    assert_eq!(removed[0].breaks, Audiences::BOTH);
    let sides: BTreeSet<Side> = removed[0].uses.iter().map(|u| u.side).collect();
    assert_eq!(
        sides,
        [Side::Request, Side::Response].into(),
        "PostBridgeData is sent in quote requests and answered in records"
    );
}

/// docs/contributing.md shows the rules table exactly as `cargo xtask breaking --rules` prints it.
#[test]
fn contributing_has_the_rules_table() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/contributing.md")).unwrap();
    let table = report::rules_table();
    assert!(
        doc.contains(&table),
        "docs/contributing.md (\"API evolution\") must contain the rules table; replace it with the output of `cargo xtask breaking --rules`"
    );
}
