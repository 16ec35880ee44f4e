//! Loads `schema/openapi.yaml` into one document: YAML anchors resolved, merge keys (`<<`) expanded in place
//! (merged members take the position of the `<<` key, so declaration order reads as written), and the
//! `x-fragments` section that only holds anchors removed.

use std::path::Path;

use anyhow::{bail, Context};
use serde_norway::{Mapping, Value};

pub type Yaml = Value;

pub fn load(path: &Path) -> anyhow::Result<Yaml> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut doc: Yaml = serde_norway::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    expand_merges(&mut doc)?;
    match &mut doc {
        Value::Mapping(m) => {
            m.remove("x-fragments");
        }
        _ => bail!("{} is not a mapping", path.display()),
    }
    Ok(doc)
}

fn expand_merges(value: &mut Yaml) -> anyhow::Result<()> {
    match value {
        Value::Mapping(map) => {
            for (_, child) in map.iter_mut() {
                expand_merges(child)?;
            }
            if map.contains_key("<<") {
                let own: Vec<Value> = map.keys().filter(|k| k.as_str() != Some("<<")).cloned().collect();
                let mut out = Mapping::new();
                for (key, val) in std::mem::take(map) {
                    if key.as_str() != Some("<<") {
                        out.insert(key, val);
                        continue;
                    }
                    let sources = match val {
                        Value::Sequence(seq) => seq,
                        other => vec![other],
                    };
                    for source in sources {
                        let Value::Mapping(source) = source else { bail!("a merge key (`<<`) must refer to mappings") };
                        for (k, v) in source {
                            if !own.contains(&k) && !out.contains_key(&k) {
                                out.insert(k, v);
                            }
                        }
                    }
                }
                *map = out;
            }
        }
        Value::Sequence(seq) => {
            for item in seq {
                expand_merges(item)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The document as a `serde_json::Value` (member order not kept; for validation).
pub fn to_json_value(doc: &Yaml) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::to_value(doc)?)
}

/// The document as pretty JSON text in declaration order, as published by servers (`GET /openapi.json`).
pub fn to_json_text(doc: &Yaml) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(doc)?;
    text.push('\n');
    Ok(text)
}
