//! Generates the client crate's code (owned by the client work; empty until it lands).

use std::path::PathBuf;

use crate::bundle::Yaml;

pub fn generate(_doc: &Yaml, _json: &serde_json::Value) -> anyhow::Result<Vec<(PathBuf, String)>> {
    Ok(Vec::new())
}
