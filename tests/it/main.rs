//! The integration tests of `bridge-contract`, in one test binary (one link instead of one per file):
//!
//! * [`roundtrip`]: every generated type, property-tested against its component in the document;
//! * [`schema_agreement`]: the JSON Schema schemars derives from each type agrees with its component;
//! * [`published`]: the published document (served at `GET /openapi.json`) accepts and refuses what the source
//!   form does;
//! * [`production_payloads`]: payloads shaped as the production service sends them decode and encode back;
//! * [`scalars`]: the hand-written scalars, decode and encode tables (insta snapshots) and properties;
//! * [`formats`]: the types decode from other serde deserializers than serde_json's (serde's value deserializers, CBOR);
//! * [`layout`]: no unit test hides under `src/` (the lib has `test = false`, see Cargo.toml).
//!
//! `cargo test -p bridge-contract --test it scalars::` runs one module.

mod encoded;
mod formats;
mod layout;
mod production_payloads;
mod published;
mod roundtrip;
mod scalars;
mod schema_agreement;
mod support;
mod unions;
