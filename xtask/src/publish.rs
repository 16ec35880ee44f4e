//! The published form of the contract: `src/generated/openapi.json`, what servers serve at `GET /openapi.json`
//! and what other teams feed to their generators (openapi-python-client, datamodel-code-generator,
//! openapi-typescript, progenitor).
//!
//! `schema/openapi.yaml` states a few things in ways that are valid OpenAPI 3.0 but that mainstream generators
//! cannot read. The published form states exactly the same contract (the same JSON values are valid, and the
//! same are not) in constructs they do read. It is written here, mechanically, from the bundled source; nothing
//! is restated by hand, and `cargo xtask check` fails when the committed file is not what this module makes of
//! `schema/` today. The Rust generators keep reading the source form (`src/generated/openapi.source.json` is its
//! bundle), so the Rust types do not depend on this module.
//!
//! The restatements, each applied wherever the construct occurs:
//!
//! 1. **`allOf` over a discriminated union** (a bridge record is its common members, its family's members and
//!    one of its family's states): openapi-python-client drops such a component ("Cannot take allOf a
//!    non-object") with every operation that answers it. Published as a `oneOf` of complete objects, one per
//!    variant of the union, each the same `allOf` with the union replaced by that variant; the union's
//!    discriminator (property and tags) moves to the new `oneOf`, mapping each tag to its complete object
//!    (named `{Component}{Tag}`, `BridgeRecordBridgePendingConfirmation`). An object is valid against the
//!    `allOf` exactly when it is valid against the common parts and one variant, which is what the `oneOf` of
//!    the complete objects says (the variants exclude each other by their tags).
//! 2. **A discriminator whose property may be absent** (`x-discriminator-default`: production omits a
//!    single-token record's `_tag`): OpenAPI 3.0 has no way to say it (3.2's `defaultMapping` does), and
//!    generators take a discriminator's property as required: openapi-typescript declares it required,
//!    pydantic refuses a value without it. Published without the `discriminator` keyword, kept as
//!    `x-discriminator` beside `x-discriminator-default`; the `oneOf` tells the variants apart on its own
//!    (every variant but the default requires the tag, and each allows only its own), so the same values are
//!    valid. Generators read a plain union and try the variants.
//! 3. **A discriminator mapping to a union** (a `WebhookEvent` kind with several shapes, such as
//!    `BRIDGE_PENDING` for a single-token and a swap bridge): openapi-typescript accepts only object schemas as
//!    mapping targets. The target union, whose variants are all objects, is published with `type: object`,
//!    which it already implies.
//!
//! [`generator_problems`] checks the published form for each construct, so that a schema change that brings one
//! back in a shape this module does not restate fails `cargo xtask check` instead of reaching the generators.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use heck::ToUpperCamelCase;
use serde_json::Value as Json;
use serde_norway::{Mapping, Value};

use crate::bundle::{self, Yaml};
use crate::{breaking, git, Generated};

const SCHEMA_PREFIX: &str = "#/components/schemas/";
/// The published document, relative to the workspace root.
const PUBLISHED: &str = "src/generated/openapi.json";

/// The two bundles of the document, the published form (`src/generated/openapi.json`) and the source form
/// (`src/generated/openapi.source.json`); or what keeps the published form from being valid and readable.
pub fn generate(source: &Yaml) -> anyhow::Result<Generated> {
    let published = published(source)?;
    let json = bundle::to_json_value(&published)?;
    let mut problems: Vec<String> =
        crate::validate::problems(&json).into_iter().map(|p| format!("the published form: {p}")).collect();
    problems.extend(generator_problems(&json).into_iter().map(|p| format!("the published form, {p}")));
    if !problems.is_empty() {
        return Ok(Generated::InvalidSchema(problems));
    }
    Ok(Generated::Files(vec![
        (PathBuf::from(PUBLISHED), bundle::to_json_text(&published)?),
        (PathBuf::from("src/generated/openapi.source.json"), bundle::to_json_text(source)?),
    ]))
}

/// The published form of the bundled `source` document (the module documentation lists what changes).
pub fn published(source: &Yaml) -> anyhow::Result<Yaml> {
    let mut doc = source.clone();
    let schemas = doc
        .get_mut("components")
        .and_then(|c| c.get_mut("schemas"))
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| anyhow!("the document has no components.schemas"))?;
    *schemas = complete_objects_for_all_of_over_unions(schemas)?;
    set_aside_optional_discriminators(schemas)?;
    type_union_mapping_targets(schemas)?;
    Ok(doc)
}

/// `cargo xtask breaking --published`: compares the published document committed at `base` with the one
/// committed at `head`, or with the working tree's as `cargo xtask regen` writes it now when `head` is `None`.
pub fn compare_published(
    root: &Path,
    base: &git::Commit,
    head: Option<&git::Commit>,
) -> anyhow::Result<breaking::Comparison> {
    let at = |commit: &git::Commit| -> anyhow::Result<Json> {
        let text = git::file_at(root, commit, PUBLISHED)?
            .ok_or_else(|| anyhow!("{} has no {PUBLISHED}", commit.describe()))?;
        serde_json::from_str(&text).with_context(|| format!("{PUBLISHED} at {}", commit.describe()))
    };
    let base_doc = at(base)?;
    let head_doc = match head {
        Some(commit) => at(commit)?,
        None => bundle::to_json_value(&published(&bundle::load(&root.join("schema/openapi.yaml"))?)?)?,
    };
    Ok(breaking::compare(&base_doc, &head_doc))
}

/// Restatement 1: every component that is an `allOf` with one discriminated union among its members becomes a
/// `oneOf` of new components, one per variant, inserted right after it.
fn complete_objects_for_all_of_over_unions(schemas: &Mapping) -> anyhow::Result<Mapping> {
    let mut out = Mapping::new();
    for (name, schema) in schemas {
        let name = name.as_str().ok_or_else(|| anyhow!("a component name is not a string"))?;
        let members = schema.get("allOf").and_then(Value::as_sequence).map(Vec::as_slice).unwrap_or_default();
        let unions: Vec<usize> =
            (0..members.len()).filter(|&i| resolve(schemas, &members[i]).get("oneOf").is_some()).collect();
        let [at] = unions[..] else {
            if unions.len() > 1 {
                bail!("components.schemas.{name}: an `allOf` over {} unions cannot be restated", unions.len());
            }
            out.insert(name.into(), schema.clone());
            continue;
        };
        let at_name = format!("components.schemas.{name}");
        let union = resolve(schemas, &members[at]);
        let discriminator = union.get("discriminator").ok_or_else(|| {
            anyhow!("{at_name}: `allOf` over a union without a discriminator: generators cannot read it, nor can it be restated")
        })?;
        let property = discriminator
            .get("propertyName")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("{at_name}: the union's discriminator has no propertyName"))?;
        let mapping = discriminator
            .get("mapping")
            .and_then(Value::as_mapping)
            .ok_or_else(|| anyhow!("{at_name}: the union's discriminator has no mapping"))?;
        let head_keys = schema.as_mapping().map(|m| m.keys().filter_map(Value::as_str).collect::<Vec<_>>());
        if let Some(other) = head_keys.unwrap_or_default().into_iter().find(|k| !is_head_key(k)) {
            bail!("{at_name}: `{other}` beside an `allOf` over a union cannot be restated");
        }

        let mut variants = Vec::new();
        let mut leaf_mapping = Mapping::new();
        let mut leaves = Vec::new();
        for (tag, target) in mapping {
            let (tag, target) = (
                tag.as_str().ok_or_else(|| anyhow!("{at_name}: a mapping key is not a string"))?,
                target.as_str().ok_or_else(|| anyhow!("{at_name}: a mapping target is not a string"))?,
            );
            if mapping.values().filter(|t| t.as_str() == Some(target)).count() > 1 {
                bail!("{at_name}: the union maps several tags to {target}; its complete objects would overlap");
            }
            let leaf = format!("{name}{}", tag.to_upper_camel_case());
            if schemas.contains_key(leaf.as_str()) || out.contains_key(leaf.as_str()) {
                bail!("{at_name}: the complete object for `{property}` {tag:?} would be named {leaf}, which exists");
            }
            let variant = target.strip_prefix(SCHEMA_PREFIX).unwrap_or(target);
            let mut parts = members.to_vec();
            parts[at] = reference(target);
            let mut schema = Mapping::new();
            schema.insert(
                "description".into(),
                format!("A `{name}` whose `{property}` is `{tag}`: its members with those of `{variant}`.").into(),
            );
            schema.insert("allOf".into(), Value::Sequence(parts));
            let leaf_ref = format!("{SCHEMA_PREFIX}{leaf}");
            variants.push(reference(&leaf_ref));
            leaf_mapping.insert(tag.into(), leaf_ref.into());
            leaves.push((leaf, schema));
        }

        let mut head = Mapping::new();
        for (key, value) in schema.as_mapping().into_iter().flatten() {
            if key.as_str() != Some("allOf") {
                head.insert(key.clone(), value.clone());
                continue;
            }
            head.insert("oneOf".into(), Value::Sequence(std::mem::take(&mut variants)));
            let mut restated = Mapping::new();
            restated.insert("propertyName".into(), property.into());
            restated.insert("mapping".into(), Value::Mapping(std::mem::take(&mut leaf_mapping)));
            head.insert("discriminator".into(), Value::Mapping(restated));
            if let Some(default) = union.get("x-discriminator-default") {
                head.insert("x-discriminator-default".into(), default.clone());
            }
        }
        out.insert(name.into(), Value::Mapping(head));
        for (leaf, schema) in leaves {
            out.insert(leaf.into(), Value::Mapping(schema));
        }
    }
    Ok(out)
}

fn is_head_key(key: &str) -> bool {
    key == "allOf" || key == "description" || key.starts_with("x-")
}

/// Restatement 2: a union whose discriminator property may be absent (`x-discriminator-default`) loses its
/// `discriminator` keyword (kept as `x-discriminator`), once it is checked that its `oneOf` tells the variants
/// apart without it: every variant but the default requires the property.
fn set_aside_optional_discriminators(schemas: &mut Mapping) -> anyhow::Result<()> {
    let mut set_aside = Vec::new();
    for (name, schema) in schemas.iter() {
        let Some(default) = schema.get("x-discriminator-default").and_then(Value::as_str) else { continue };
        let at = format!("components.schemas.{}", name.as_str().unwrap_or_default());
        let discriminator =
            schema.get("discriminator").ok_or_else(|| anyhow!("{at}: a default without a discriminator"))?;
        let property = discriminator.get("propertyName").and_then(Value::as_str).unwrap_or_default();
        let mapping = discriminator.get("mapping").and_then(Value::as_mapping).cloned().unwrap_or_default();
        for (tag, target) in &mapping {
            let target = target.as_str().unwrap_or_default();
            if tag.as_str() != Some(default) && !requires(schemas, &reference(target), property) {
                bail!("{at}: variant {target} does not require `{property}`, so the `oneOf` alone would not tell it from the default");
            }
        }
        set_aside.push(name.clone());
    }
    for name in set_aside {
        let schema = schemas.get_mut(&name).and_then(Value::as_mapping_mut).expect("listed above");
        let renamed: Mapping = std::mem::take(schema)
            .into_iter()
            .map(|(k, v)| if k.as_str() == Some("discriminator") { ("x-discriminator".into(), v) } else { (k, v) })
            .collect();
        *schema = renamed;
    }
    Ok(())
}

/// Restatement 3: a component that a discriminator maps a tag to, and that is itself a `oneOf` of objects, gets
/// `type: object` (after its description).
fn type_union_mapping_targets(schemas: &mut Mapping) -> anyhow::Result<()> {
    let mut targets = Vec::new();
    for schema in schemas.values() {
        let Some(mapping) = schema.get("discriminator").and_then(|d| d.get("mapping")).and_then(Value::as_mapping)
        else {
            continue;
        };
        for target in mapping.values().filter_map(Value::as_str) {
            let name = target.strip_prefix(SCHEMA_PREFIX).unwrap_or(target).to_owned();
            let schema = schemas.get(name.as_str()).ok_or_else(|| anyhow!("unresolved mapping target {target}"))?;
            if schema.get("oneOf").is_none() || schema.get("type").is_some() || targets.contains(&name) {
                continue;
            }
            let variants = schema.get("oneOf").and_then(Value::as_sequence).cloned().unwrap_or_default();
            if let Some(other) = variants.iter().find(|v| !is_object(schemas, v)) {
                bail!("components.schemas.{name}: a mapping target whose variant {other:?} is not an object");
            }
            targets.push(name);
        }
    }
    for name in targets {
        let schema = schemas.get_mut(name.as_str()).and_then(Value::as_mapping_mut).expect("listed above");
        let mut typed = Mapping::new();
        let has_description = schema.contains_key("description");
        if !has_description {
            typed.insert("type".into(), "object".into());
        }
        for (k, v) in std::mem::take(schema) {
            let after = k.as_str() == Some("description");
            typed.insert(k, v);
            if after {
                typed.insert("type".into(), "object".into());
            }
        }
        *schema = typed;
    }
    Ok(())
}

fn reference(target: &str) -> Value {
    let mut m = Mapping::new();
    m.insert("$ref".into(), target.into());
    Value::Mapping(m)
}

/// `schema` with `$ref`s to components followed.
fn resolve<'a>(schemas: &'a Mapping, mut schema: &'a Value) -> &'a Value {
    for _ in 0..64 {
        let Some(target) = schema.get("$ref").and_then(Value::as_str) else { break };
        match schemas.get(target.strip_prefix(SCHEMA_PREFIX).unwrap_or(target)) {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

/// Whether every value valid against `schema` has `property`.
fn requires(schemas: &Mapping, schema: &Value, property: &str) -> bool {
    let schema = resolve(schemas, schema);
    let listed = schema
        .get("required")
        .and_then(Value::as_sequence)
        .is_some_and(|r| r.iter().any(|p| p.as_str() == Some(property)));
    let seq = |key: &str| schema.get(key).and_then(Value::as_sequence).cloned().unwrap_or_default();
    listed
        || seq("allOf").iter().any(|m| requires(schemas, m, property))
        || (schema.get("oneOf").is_some() && seq("oneOf").iter().all(|m| requires(schemas, m, property)))
}

/// Whether `schema` only admits objects (`type: object`, or an `allOf` or `oneOf` of such).
fn is_object(schemas: &Mapping, schema: &Value) -> bool {
    let schema = resolve(schemas, schema);
    let seq = |key: &str| schema.get(key).and_then(Value::as_sequence);
    schema.get("type").and_then(Value::as_str) == Some("object")
        || seq("allOf").is_some_and(|m| m.iter().any(|m| is_object(schemas, m)))
        || seq("oneOf").is_some_and(|m| !m.is_empty() && m.iter().all(|m| is_object(schemas, m)))
}

/// What keeps a generator from reading `doc` (the published form, as JSON) completely: one line per place,
/// naming the generator and the construct. Empty for the published form of the real schema; the source form
/// has each of them (`publish/tests.rs`).
pub fn generator_problems(doc: &Json) -> Vec<String> {
    let Some(schemas) = doc.pointer("/components/schemas").and_then(Json::as_object) else {
        return vec!["the document has no components.schemas".to_owned()];
    };
    let checks = Checks { schemas };
    let mut places = Vec::new();
    collect_schemas(doc, String::new(), &mut places);
    let mut problems = Vec::new();
    for (at, schema) in places {
        if let Some(members) = schema.get("allOf").and_then(Json::as_array).filter(|m| m.len() > 1) {
            for member in members.iter().filter(|m| !checks.is_object(m)) {
                let name = member.get("$ref").and_then(Json::as_str).unwrap_or("an inline schema");
                problems.push(format!(
                    "{at}: `allOf` member {name} is not an object; openapi-python-client \
                     drops the schema (\"Cannot take allOf a non-object\")"
                ));
            }
        }
        let Some(discriminator) = schema.get("discriminator") else { continue };
        let property = discriminator.get("propertyName").and_then(Json::as_str).unwrap_or_default();
        for (tag, target) in discriminator.get("mapping").and_then(Json::as_object).into_iter().flatten() {
            let target = serde_json::json!({ "$ref": target });
            let name = target["$ref"].as_str().unwrap_or_default();
            if !checks.is_object(&target) {
                problems.push(format!(
                    "{at}: discriminator mapping {tag} → {name} is neither an object schema \
                     nor an `allOf`; openapi-typescript warns and ignores the mapping"
                ));
            }
            if !checks.requires(&target, property) {
                problems.push(format!(
                    "{at}: discriminator property `{property}` is not required by {name}; \
                     generators take it as required (openapi-typescript types it so, pydantic refuses a value \
                     without it)"
                ));
            }
        }
    }
    problems
}

/// The document's components, for [`generator_problems`].
struct Checks<'a> {
    schemas: &'a serde_json::Map<String, Json>,
}

impl<'a> Checks<'a> {
    fn resolve<'s>(&self, mut schema: &'s Json) -> &'s Json
    where
        'a: 's,
    {
        while let Some(target) = schema.get("$ref").and_then(Json::as_str) {
            match self.schemas.get(target.strip_prefix(SCHEMA_PREFIX).unwrap_or(target)) {
                Some(next) => schema = next,
                None => break,
            }
        }
        schema
    }

    /// What generators take for an object schema: `type: object`, or an `allOf`.
    fn is_object(&self, schema: &Json) -> bool {
        let schema = self.resolve(schema);
        schema.get("type").and_then(Json::as_str) == Some("object") || schema.get("allOf").is_some()
    }

    fn requires(&self, schema: &Json, property: &str) -> bool {
        let schema = self.resolve(schema);
        let seq = |key: &str| schema.get(key).and_then(Json::as_array);
        seq("required").is_some_and(|r| r.iter().any(|p| p.as_str() == Some(property)))
            || seq("allOf").is_some_and(|m| m.iter().any(|m| self.requires(m, property)))
            || seq("oneOf").is_some_and(|m| m.iter().all(|m| self.requires(m, property)))
    }
}

/// Every schema object of the document that has an `allOf` or a `discriminator`, with where it is (components,
/// and the schemas of parameters, bodies, responses and callbacks), nested ones included.
fn collect_schemas<'a>(value: &'a Json, at: String, out: &mut Vec<(String, &'a Json)>) {
    match value {
        Json::Object(map) => {
            if map.contains_key("allOf") || map.contains_key("discriminator") {
                out.push((at.clone(), value));
            }
            for (key, child) in map {
                collect_schemas(child, if at.is_empty() { key.clone() } else { format!("{at}.{key}") }, out);
            }
        }
        Json::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect_schemas(child, format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
