//! The type generator: the contract's Rust types (`src/generated/types.rs`), their proptest strategies
//! (`src/generated/arbitrary.rs`) and their constructors and conversions (`src/generated/domain.rs`), from the
//! bundled document.
//!
//! The document is read once into a [`model::Model`]; emitters, one per concern, turn the model into tokens
//! (`quote!`), and each file is formatted once (`codegen::rust_file`, prettyplease):
//!
//! * [`definitions`]: structs, enums, unions and aliases, their constants, accessors and conversions;
//! * [`serde_impls`]: `#[serde]` attributes (for the derived `Serialize` and schemars) and the unions' `Serialize`;
//! * [`decode`]: every type's decoding table and places, and its `Deserialize` through the one table-driven
//!   decoder (`src/codec/`);
//! * [`schemars_impls`]: `schemars` attributes and the unions' `JsonSchema`;
//! * [`strategies`]: the `Arbitrary` impls;
//! * [`domain`]: constructors, `x-built-from` conversions, parameter bounds, encoded answers.
//!
//! Mapping (see docs/contributing.md, "Why our own type generator"):
//! * object component → struct with one field per property, in declaration order; optional → `Option` skipped
//!   when `None`; required-but-nullable → `Option` that must be present; `additionalProperties: false` →
//!   `deny_unknown_fields`; `allOf` members → `#[serde(flatten)]` fields (a union member is named after its
//!   discriminator, e.g. `state`; a `...Common` member is `common`);
//! * a single-value enum property (a tag such as `_tag: [bridge]`) → a one-variant enum `{Struct}{Property}`;
//! * string enum component → enum with `as_str()`;
//! * discriminated `oneOf` → enum with one newtype variant per tag value, decoded by reading the object once
//!   (`codec::Buffered`: strings borrowed), finding the tag wherever it is, naming it in errors (never
//!   `untagged`) and reading the variant from what was read; `x-discriminator-default` is used when the tag is
//!   absent; `x-presence-discriminator` unions are the same, told apart by the member present;
//! * a struct with `allOf` members → `Serialize` derived with `flatten`; decoding reads the object once and splits
//!   its members between the parts (own members, structs, then unions);
//! * decoding of every type: no derived `Deserialize`; each type gives the one table-driven decoder (`src/codec/`)
//!   its table and places ([`decode`]), with serde's derive's messages;
//! * `x-json-kind-union` → enum chosen by JSON kind;
//! * `DecimalString`, `DecimalNumber`, `DateString` and every other `type: number` → the hand-written scalars
//!   in `src/scalars/` (a JSON number is a JavaScript number: integers print without `.0`).
//! * operation parameters → `{OperationId}Query` / `{OperationId}Path` structs.

mod decode;
mod definitions;
mod domain;
mod model;
mod schemars_impls;
mod serde_impls;
mod strategies;

use std::path::PathBuf;

use crate::bundle::Yaml;
use crate::codegen::{rust_file, HEADER};

#[cfg(test)]
pub use model::MAX_MEMBERS;
pub use serde_impls::serialize_each_variant;

pub fn generate(doc: &Yaml, fingerprint: &str) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let model = model::Model::read(doc)?;
    let types = rust_file(
        &format!(
            "{HEADER}\n// schema-fingerprint: {fingerprint}\n//! The contract's types, one per schema component, in the \
             document's order.\n\n"
        ),
        definitions::types_file(&model),
    )?;
    let arbitrary = rust_file(
        &format!(
            "{HEADER}\n//! proptest strategies that produce schema-valid values of every generated type (feature \
             `proptest`).\n\n"
        ),
        strategies::arbitrary_file(&model),
    )?;
    let domain = rust_file(
        &format!(
            "{HEADER}\n//! Constructors, conversions and bounds of the contract's types (`xtask/src/rust_types/domain.rs`). \
             Members\n//! are copied with `.clone()` whatever their type, as the generator does not know which types \
             are `Copy`.\n\n"
        ),
        domain::domain_file(doc, &model)?,
    )?;
    Ok(vec![
        (PathBuf::from("src/generated/types.rs"), types),
        (PathBuf::from("src/generated/arbitrary.rs"), arbitrary),
        (PathBuf::from("src/generated/domain.rs"), domain),
    ])
}
