//! What the document says about each location of a JSON value: the schemas that describe it, followed through
//! `$ref`, `allOf` and the unions (the variant a discriminator, a present member or the JSON kind names; every
//! variant when the union does not say), and the components on the way (`DecimalString`, `DateString`, ...).
//!
//! Used to name the rule a schema error breaks ([`crate::contract`]) and to find the members marked
//! `x-volatile: true` (ids and times the service makes when it answers: [`volatile_pointers`], used by replay).

use serde_json::Value;

/// The schemas at one location of a value.
#[derive(Debug, Default)]
pub struct Location<'d> {
    pub schemas: Vec<&'d Value>,
    /// The components referenced on the way (`DecimalString`).
    pub components: Vec<&'d str>,
}

impl<'d> Location<'d> {
    /// Some schema here is the component `name` (or refers to it).
    pub fn is(&self, name: &str) -> bool {
        self.components.contains(&name)
    }

    /// Marked `x-volatile: true` (on the member or on a component it refers to).
    pub fn volatile(&self) -> bool {
        self.schemas.iter().any(|s| s.get("x-volatile").and_then(Value::as_bool) == Some(true))
    }

    /// The discriminator property names of the unions here (`_tag`), and the members of presence unions.
    pub fn union_tags(&self) -> Vec<&str> {
        let mut tags = Vec::new();
        for s in &self.schemas {
            if let Some(p) = s.pointer("/discriminator/propertyName").and_then(Value::as_str) {
                tags.push(p);
            }
            if let Some(members) = s.get("x-presence-discriminator").and_then(Value::as_object) {
                tags.extend(members.keys().map(String::as_str));
            }
        }
        tags
    }

    /// The schemas of member `name` of an object here.
    fn member(&self, name: &str) -> Vec<&'d Value> {
        self.schemas.iter().filter_map(|s| s.get("properties").and_then(|p| p.get(name))).collect()
    }

    /// The schemas of the items of an array here.
    fn items(&self) -> Vec<&'d Value> {
        self.schemas.iter().filter_map(|s| s.get("items")).collect()
    }
}

const MAX_DEPTH: usize = 64;

fn resolve<'d>(doc: &'d Value, reference: &'d str) -> Option<(&'d str, &'d Value)> {
    let pointer = reference.strip_prefix('#')?;
    Some((pointer.rsplit('/').next()?, doc.pointer(pointer)?))
}

/// Adds `schema` and what it stands for at a location holding `value` to `at`.
fn expand<'d>(doc: &'d Value, schema: &'d Value, value: &Value, at: &mut Location<'d>, depth: usize) {
    if depth > MAX_DEPTH || at.schemas.iter().any(|s| std::ptr::eq(*s, schema)) {
        return;
    }
    at.schemas.push(schema);
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if let Some((name, target)) = resolve(doc, reference) {
            at.components.push(name);
            expand(doc, target, value, at, depth + 1);
        }
    }
    for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        expand(doc, part, value, at, depth + 1);
    }
    let variants = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array);
    let Some(variants) = variants else { return };
    let chosen: Option<&str> = if let Some(d) = schema.get("discriminator") {
        let property = d["propertyName"].as_str().unwrap_or_default();
        let tag = value.get(property).and_then(Value::as_str).or_else(|| {
            value.get(property).is_none().then(|| schema.get("x-discriminator-default").and_then(Value::as_str))?
        });
        tag.and_then(|t| d["mapping"].get(t)).and_then(Value::as_str)
    } else if let Some(presence) = schema.get("x-presence-discriminator").and_then(Value::as_object) {
        let present: Vec<&Value> =
            presence.iter().filter(|(m, _)| value.get(m.as_str()).is_some()).map(|(_, r)| r).collect();
        (present.len() == 1).then(|| present[0].as_str()).flatten()
    } else {
        None
    };
    match chosen
        .and_then(|reference| variants.iter().find(|v| v.get("$ref").and_then(Value::as_str) == Some(reference)))
    {
        Some(variant) => expand(doc, variant, value, at, depth + 1),
        None => {
            for variant in variants {
                expand(doc, variant, value, at, depth + 1);
            }
        }
    }
}

/// The location `pointer` (a JSON pointer, `""` for the root) of `value`, described by `schema` at the root.
/// `None` when the value has no such location.
pub fn location<'d>(doc: &'d Value, schema: &'d Value, value: &Value, pointer: &str) -> Option<Location<'d>> {
    let mut at = Location::default();
    expand(doc, schema, value, &mut at, 0);
    let mut current = value;
    let segments: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer.strip_prefix('/')?.split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect()
    };
    for segment in segments {
        let (child_schemas, child) = match current {
            Value::Object(map) => (at.member(&segment), map.get(&segment)),
            Value::Array(items) => (at.items(), segment.parse::<usize>().ok().and_then(|i| items.get(i))),
            _ => return None,
        };
        // A location the value does not have (a missing member) is still described by the schemas.
        let child_value = child.unwrap_or(&Value::Null);
        let mut next = Location::default();
        for s in child_schemas {
            expand(doc, s, child_value, &mut next, 0);
        }
        at = next;
        match child {
            Some(c) => current = c,
            None => return Some(at),
        }
    }
    Some(at)
}

/// The JSON pointers of the members of `value` that its schema marks `x-volatile: true` (outermost only).
pub fn volatile_pointers(doc: &Value, schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Location::default();
    expand(doc, schema, value, &mut at, 0);
    collect_volatile(doc, &at, value, String::new(), &mut out);
    out
}

fn collect_volatile(doc: &Value, at: &Location<'_>, value: &Value, pointer: String, out: &mut Vec<String>) {
    if at.volatile() {
        out.push(pointer);
        return;
    }
    let children: Vec<(String, Vec<&Value>, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (escape(k), at.member(k), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), at.items(), v)).collect(),
        _ => return,
    };
    for (segment, schemas, child) in children {
        let mut next = Location::default();
        for s in schemas {
            expand(doc, s, child, &mut next, 0);
        }
        collect_volatile(doc, &next, child, format!("{pointer}/{segment}"), out);
    }
}

/// A JSON pointer segment (`~` and `/` escaped).
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Dec": {"type": "string", "format": "decimal-string"},
            "When": {"type": "string", "x-volatile": true},
            "U": {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}],
                  "discriminator": {"propertyName": "_tag",
                    "mapping": {"a": "#/components/schemas/A", "b": "#/components/schemas/B"}}},
            "A": {"type": "object", "properties": {"_tag": {"enum": ["a"]}, "id": {"type": "string", "x-volatile": true},
                  "amount": {"$ref": "#/components/schemas/Dec"}}},
            "B": {"type": "object", "properties": {"_tag": {"enum": ["b"]}, "at": {"$ref": "#/components/schemas/When"},
                  "items": {"type": "array", "items": {"$ref": "#/components/schemas/U"}}}}
        }}})
    }

    #[test]
    fn locations_follow_refs_and_unions() {
        let doc = doc();
        let schema = json!({"$ref": "#/components/schemas/U"});
        let value = json!({"_tag": "b", "at": "now", "items": [{"_tag": "a", "id": "x", "amount": "1"}]});
        let at = location(&doc, &schema, &value, "/items/0/amount").unwrap();
        assert!(at.is("Dec"));
        let at = location(&doc, &schema, &value, "/items/0").unwrap();
        assert!(at.is("A") && !at.is("B"), "the tag chooses the variant: {:?}", at.components);
        assert_eq!(at.union_tags(), vec!["_tag"]);
        let at = location(&doc, &schema, &value, "/missing").unwrap();
        assert!(at.schemas.is_empty());
        assert!(location(&doc, &schema, &value, "/at/deeper").is_none());
    }

    #[test]
    fn volatile_members_are_found_through_components() {
        let doc = doc();
        let schema = json!({"$ref": "#/components/schemas/U"});
        let value = json!({"_tag": "b", "at": "now", "items": [{"_tag": "a", "id": "x", "amount": "1"}]});
        assert_eq!(volatile_pointers(&doc, &schema, &value), vec!["/at".to_owned(), "/items/0/id".to_owned()]);
    }
}
