//! House rules that keep every generator honest (listed at the top of `schema/openapi.yaml`):
//!
//! * every operation has a unique `operationId` and at most one success (2xx) body schema;
//! * no untagged unions: a `oneOf` is either discriminated (a `discriminator` whose `mapping` names exactly its
//!   `$ref` variants, each variant declaring the tag property as a single-value enum equal to its key, required
//!   unless it is the union's `x-discriminator-default`), an `x-json-kind-union` whose variants have different
//!   JSON kinds, or an `x-presence-discriminator` union of closed objects told apart by a required member that no
//!   other variant allows (production's BRIDGE_CANCELLED has no tag); `anyOf` and `not` are not used;
//! * objects and multi-value enums are named components (inline only as `allOf` members of a component);
//! * every `$ref` resolves; `x-alias-of` names an existing operation; `x-safe-to-retry` is `true` and only on
//!   operations other than GETs (a GET is safe to retry by definition); `x-built-from` names existing components;
//! * `x-beyond-spec` (a production endpoint the spec does not have) is `true` or absent, never on a sandbox helper,
//!   and an alias carries its target's; path parameters are declared in the order the path names them (the server
//!   routes them by position);
//! * `x-volatile` (a member the service makes when it answers: ids, hashes, cursors, times) and `x-secret` (a
//!   member holding a secret) are `true` or absent;
//! * every operation documents 503 [`SERVICE_UNAVAILABLE`] (or a response whose schema is a union with its
//!   schema), the answer `bridge_server::router` gives for any operation whose implementation fails;
//! * every authenticated operation documents 429 [`TOO_MANY_REQUESTS`] (or a response whose schema is a union with
//!   its schema), the answer `bridge_server::router` gives when its admission step (a rate limit) refuses the
//!   caller's project;
//! * every operation without authentication that has a request body documents 408 [`REQUEST_TIMEOUT`], the answer
//!   `bridge_server::router` gives when such a body (read before any credential is checked) is not received whole
//!   within its short deadline.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::bundle::Yaml;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The response every operation documents as its 503 (or a response whose schema is a union that has its schema).
pub const SERVICE_UNAVAILABLE: &str = "#/components/responses/ServiceUnavailable";
const SERVICE_UNAVAILABLE_SCHEMA: &str = "#/components/schemas/ServiceUnavailable";
/// The response every authenticated operation documents as its 429 (or a response whose schema is a union that has
/// its schema).
pub const TOO_MANY_REQUESTS: &str = "#/components/responses/TooManyRequests";
const TOO_MANY_REQUESTS_SCHEMA: &str = "#/components/schemas/TooManyRequests";
/// The response every operation without authentication that has a request body documents as its 408.
pub const REQUEST_TIMEOUT: &str = "#/components/responses/RequestTimeout";

pub fn problems(doc: &Value, _ordered: &Yaml) -> Vec<String> {
    let mut lint = Lint { doc, problems: Vec::new() };
    lint.operations();
    if let Some(schemas) = doc.pointer("/components/schemas").and_then(Value::as_object) {
        for (name, schema) in schemas {
            lint.schema(schema, &format!("components.schemas.{name}"), Place::Component);
        }
    }
    lint.problems
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Component,
    AllOfMember,
    Inline,
}

struct Lint<'a> {
    doc: &'a Value,
    problems: Vec<String>,
}

impl<'a> Lint<'a> {
    fn operations(&mut self) {
        let mut ids = BTreeSet::new();
        let mut aliases = Vec::new();
        let Some(paths) = self.doc.get("paths").and_then(Value::as_object) else {
            self.problems.push("the document has no paths".into());
            return;
        };
        for (path, item) in paths {
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let at = format!("{} {path}", method.to_uppercase());
                match op.get("operationId").and_then(Value::as_str) {
                    Some(id) => {
                        if !ids.insert(id.to_owned()) {
                            self.problems.push(format!("{at}: operationId `{id}` is used twice"));
                        }
                    }
                    None => self.problems.push(format!("{at}: operation without operationId")),
                }
                if let Some(target) = op.get("x-alias-of").and_then(Value::as_str) {
                    aliases.push((at.clone(), target.to_owned()));
                }
                match op.get("x-safe-to-retry") {
                    None => {}
                    Some(Value::Bool(true)) if method != "get" => {}
                    Some(Value::Bool(true)) => self
                        .problems
                        .push(format!("{at}: x-safe-to-retry on a GET (GETs are safe to retry by definition)")),
                    Some(other) => {
                        self.problems.push(format!("{at}: x-safe-to-retry must be `true` (or absent), not {other}"))
                    }
                }
                self.beyond_spec_marker(&at, op);
                self.path_parameters(&at, path, op);
                let responses = op.get("responses").and_then(Value::as_object);
                let successes = responses
                    .into_iter()
                    .flatten()
                    .filter(|(status, r)| status.starts_with('2') && self.resolve(r).get("content").is_some())
                    .count();
                if successes > 1 {
                    self.problems.push(format!("{at}: more than one success schema ({successes})"));
                }
                let answers = |status: &str, response: &str, schema: &str| {
                    responses.and_then(|r| r.get(status)).is_some_and(|r| self.answers(r, response, schema))
                };
                let unavailable = answers("503", SERVICE_UNAVAILABLE, SERVICE_UNAVAILABLE_SCHEMA);
                let throttled = !self.authenticated(op) || answers("429", TOO_MANY_REQUESTS, TOO_MANY_REQUESTS_SCHEMA);
                let unauthenticated_body = !self.authenticated(op) && op.get("requestBody").is_some();
                let timely = responses.and_then(|r| r.get("408")).and_then(|r| r.get("$ref")).and_then(Value::as_str)
                    == Some(REQUEST_TIMEOUT);
                if unauthenticated_body && !timely {
                    self.problems.push(format!(
                        "{at}: 408 must be `$ref: '{REQUEST_TIMEOUT}'` (the server answers it for an operation without \
                         authentication whose body does not arrive within its short deadline)"
                    ));
                }
                if !unavailable {
                    self.problems.push(format!(
                        "{at}: 503 must be `$ref: '{SERVICE_UNAVAILABLE}'` or a response whose schema is a union with `{SERVICE_UNAVAILABLE_SCHEMA}` \
                         (the server answers it for any operation)"
                    ));
                }
                if !throttled {
                    self.problems.push(format!(
                        "{at}: 429 must be `$ref: '{TOO_MANY_REQUESTS}'` or a response whose schema is a union with `{TOO_MANY_REQUESTS_SCHEMA}` \
                         (the server answers it for any authenticated operation whose project is over its rate limit)"
                    ));
                }
                for (status, response) in responses.into_iter().flatten() {
                    let response = self.resolve(response);
                    if let Some(content) = response.get("content").and_then(Value::as_object) {
                        if content.len() > 1 {
                            self.problems.push(format!("{at} {status}: more than one content type"));
                        }
                        for (ct, media) in content {
                            if let Some(schema) = media.get("schema") {
                                self.schema(schema, &format!("{at} {status} {ct}"), Place::Inline);
                            }
                        }
                    }
                }
                if let Some(body) = op.pointer("/requestBody/content").and_then(Value::as_object) {
                    for (ct, media) in body {
                        if let Some(schema) = media.get("schema") {
                            self.schema(schema, &format!("{at} request {ct}"), Place::Inline);
                        }
                    }
                }
                for param in op.get("parameters").and_then(Value::as_array).into_iter().flatten() {
                    let param = self.resolve(param);
                    if let Some(schema) = param.get("schema") {
                        let name = param.get("name").and_then(Value::as_str).unwrap_or("?");
                        self.schema(schema, &format!("{at} parameter {name}"), Place::Inline);
                    }
                }
            }
        }
        for (at, target) in aliases {
            if !ids.contains(&target) {
                self.problems.push(format!("{at}: x-alias-of names unknown operation `{target}`"));
            } else if self.beyond_spec(&at) != self.operation_by_id(&target).is_some_and(is_beyond_spec) {
                self.problems.push(format!("{at}: an alias has the `x-beyond-spec` marker of `{target}`"));
            }
        }
    }

    /// `x-beyond-spec` (a production endpoint the spec does not have) is `true` or absent, and never on a sandbox
    /// helper (those are the sandbox's own, not production's).
    fn beyond_spec_marker(&mut self, at: &str, op: &Value) {
        match op.get("x-beyond-spec") {
            None => {}
            Some(Value::Bool(true)) => {
                let tags = op.get("tags").and_then(Value::as_array).into_iter().flatten();
                if tags.filter_map(Value::as_str).any(|t| t == "sandbox") {
                    self.problems.push(format!("{at}: x-beyond-spec on a sandbox helper"));
                }
            }
            Some(other) => self.problems.push(format!("{at}: x-beyond-spec must be `true` (or absent), not {other}")),
        }
    }

    /// The path parameters are declared in the order the path names them, each once: the server routes them by
    /// position and decodes them under these names.
    fn path_parameters(&mut self, at: &str, path: &str, op: &Value) {
        let in_path: Vec<&str> =
            path.split('/').filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}')).collect();
        let declared: Vec<&str> = op
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| self.resolve(p))
            .filter(|p| p.get("in").and_then(Value::as_str) == Some("path"))
            .filter_map(|p| p.get("name").and_then(Value::as_str))
            .collect();
        if in_path != declared {
            self.problems.push(format!(
                "{at}: path parameters {declared:?} must be declared in the order the path names them: {in_path:?}"
            ));
        }
    }

    /// Whether the operation at `at` (`METHOD /path`) is marked `x-beyond-spec`.
    fn beyond_spec(&self, at: &str) -> bool {
        let (method, path) = at.split_once(' ').unwrap_or_default();
        self.doc
            .pointer("/paths")
            .and_then(|p| p.get(path))
            .and_then(|item| item.get(method.to_lowercase()))
            .is_some_and(is_beyond_spec)
    }

    fn operation_by_id(&self, id: &str) -> Option<&Value> {
        let paths = self.doc.get("paths")?.as_object()?;
        paths
            .values()
            .flat_map(|item| METHODS.iter().filter_map(move |m| item.get(*m)))
            .find(|op| op.get("operationId").and_then(Value::as_str) == Some(id))
    }

    /// Follows a `$ref` to a response or parameter component.
    fn resolve<'v>(&self, value: &'v Value) -> &'v Value
    where
        'a: 'v,
    {
        match value.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => self.doc.pointer(pointer).unwrap_or(value),
            None => value,
        }
    }

    /// Whether a response is the shared response component `shared`, or one whose schema is a union that has
    /// `schema` among its variants (the body the server sends itself, a 503 `ServiceUnavailable` or a 429
    /// `TooManyRequests`, decodes into it either way).
    fn answers(&self, response: &Value, shared: &str, schema: &str) -> bool {
        if response.get("$ref").and_then(Value::as_str) == Some(shared) {
            return true;
        }
        let union = self.resolve(response).pointer("/content/application~1json/schema").map(|s| self.resolve(s));
        union
            .and_then(|s| s.get("oneOf"))
            .and_then(Value::as_array)
            .is_some_and(|variants| variants.iter().any(|v| v.get("$ref").and_then(Value::as_str) == Some(schema)))
    }

    /// Whether an operation requires a credential: its own `security`, else the document's, is not empty.
    fn authenticated(&self, op: &Value) -> bool {
        let security = op.get("security").or_else(|| self.doc.get("security"));
        security.and_then(Value::as_array).is_some_and(|requirements| !requirements.is_empty())
    }

    fn deref(&self, reference: &str) -> Option<&'a Value> {
        let doc: &'a Value = self.doc;
        reference.strip_prefix('#').and_then(|pointer| doc.pointer(pointer))
    }

    fn schema(&mut self, schema: &Value, at: &str, place: Place) {
        let Some(obj) = schema.as_object() else {
            self.problems.push(format!("{at}: a schema must be an object"));
            return;
        };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            if self.deref(reference).is_none() {
                self.problems.push(format!("{at}: `$ref` {reference} does not resolve"));
            }
            return;
        }
        for marker in ["x-volatile", "x-secret"] {
            if obj.get(marker).is_some_and(|v| v != &Value::Bool(true)) {
                self.problems.push(format!("{at}: {marker} must be `true` (or absent)"));
            }
        }
        for banned in ["anyOf", "not"] {
            if obj.contains_key(banned) {
                self.problems.push(format!("{at}: `{banned}` is not used in this schema (untagged)"));
            }
        }
        if let Some(lists) = obj.get("x-built-from") {
            self.built_from(lists, at, place);
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            if values.len() > 1 && place != Place::Component {
                self.problems.push(format!("{at}: inline enum with several values; make it a named component"));
            }
        }
        let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
        if is_object && obj.contains_key("properties") && place == Place::Inline {
            self.problems.push(format!("{at}: inline object; make it a named component"));
        }
        if let Some(variants) = obj.get("oneOf").and_then(Value::as_array) {
            if place != Place::Component {
                self.problems.push(format!("{at}: inline union; make it a named component"));
            }
            self.union(obj, variants, at);
        }
        if let Some(members) = obj.get("allOf").and_then(Value::as_array) {
            let nullable_wrapper = members.len() == 1 && members[0].get("$ref").is_some();
            if !nullable_wrapper && place != Place::Component {
                self.problems.push(format!("{at}: `allOf` composition is only used at the top of a component"));
            }
            for (i, member) in members.iter().enumerate() {
                self.schema(member, &format!("{at}.allOf[{i}]"), Place::AllOfMember);
            }
        }
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                self.schema(prop, &format!("{at}.{name}"), Place::Inline);
            }
        }
        if let Some(items) = obj.get("items") {
            self.schema(items, &format!("{at}[]"), Place::Inline);
        }
        if let Some(extra) = obj.get("additionalProperties").filter(|v| v.is_object()) {
            self.schema(extra, &format!("{at}{{}}"), Place::Inline);
        }
    }

    /// `x-built-from` (a code-generation hint) is on a component and lists lists of existing component names.
    fn built_from(&mut self, lists: &Value, at: &str, place: Place) {
        let names: Option<Vec<&str>> = lists
            .as_array()
            .and_then(|lists| lists.iter().map(Value::as_array).collect::<Option<Vec<_>>>())
            .and_then(|lists| lists.into_iter().flatten().map(Value::as_str).collect());
        match names {
            _ if place != Place::Component => self.problems.push(format!("{at}: x-built-from is for components")),
            None => self.problems.push(format!("{at}: x-built-from must be a list of lists of component names")),
            Some(names) => {
                for name in names {
                    if self.doc.pointer(&format!("/components/schemas/{name}")).is_none() {
                        self.problems.push(format!("{at}: x-built-from names unknown component `{name}`"));
                    }
                }
            }
        }
    }

    fn union(&mut self, obj: &serde_json::Map<String, Value>, variants: &[Value], at: &str) {
        if obj.get("x-json-kind-union").and_then(Value::as_bool) == Some(true) {
            let mut kinds = BTreeSet::new();
            for variant in variants {
                let kind = match variant.get("$ref").and_then(Value::as_str) {
                    Some(r) => self.deref(r).and_then(|s| s.get("type")).and_then(Value::as_str).unwrap_or("?"),
                    None => variant.get("type").and_then(Value::as_str).unwrap_or("?"),
                };
                let kind = if kind == "integer" { "number" } else { kind };
                if !kinds.insert(kind.to_owned()) {
                    self.problems.push(format!("{at}: two variants of a kind union are both `{kind}`"));
                }
            }
            return;
        }
        if let Some(presence) = obj.get("x-presence-discriminator") {
            self.presence_union(presence, variants, at);
            return;
        }
        let Some(discriminator) = obj.get("discriminator") else {
            self.problems.push(format!("{at}: `oneOf` without `discriminator` is an untagged union"));
            return;
        };
        let Some(property) = discriminator.get("propertyName").and_then(Value::as_str) else {
            self.problems.push(format!("{at}: discriminator without propertyName"));
            return;
        };
        let mapping = discriminator.get("mapping").and_then(Value::as_object).cloned().unwrap_or_default();
        let default = obj.get("x-discriminator-default").and_then(Value::as_str);
        let refs: Vec<&str> = variants.iter().filter_map(|v| v.get("$ref").and_then(Value::as_str)).collect();
        if refs.len() != variants.len() {
            self.problems.push(format!("{at}: every variant of a discriminated union is a `$ref`"));
        }
        if mapping.len() != refs.len() || !mapping.values().all(|v| v.as_str().is_some_and(|v| refs.contains(&v))) {
            self.problems.push(format!("{at}: discriminator mapping must name exactly the `oneOf` variants"));
        }
        for (tag, target) in &mapping {
            let Some(variant) = target.as_str().and_then(|t| self.deref(t)) else {
                continue;
            };
            self.variant_declares_tag(at, tag, property, variant, default);
        }
    }

    /// A union told apart by which member is present (`x-presence-discriminator`: member name → variant). It is
    /// exact only when every variant is a closed object (`additionalProperties: false`) that requires its own
    /// member and does not allow any other variant's: then exactly one of the members is present in every valid
    /// value, and it names the variant.
    fn presence_union(&mut self, presence: &Value, variants: &[Value], at: &str) {
        let Some(mapping) = presence.as_object() else {
            self.problems.push(format!("{at}: x-presence-discriminator must map member names to variants"));
            return;
        };
        let refs: Vec<&str> = variants.iter().filter_map(|v| v.get("$ref").and_then(Value::as_str)).collect();
        if refs.len() != variants.len()
            || mapping.len() != refs.len()
            || !mapping.values().all(|v| v.as_str().is_some_and(|v| refs.contains(&v)))
        {
            self.problems
                .push(format!("{at}: x-presence-discriminator must name exactly the `oneOf` variants, each a `$ref`"));
            return;
        }
        for (member, target) in mapping {
            let Some(variant) = target.as_str().and_then(|t| self.deref(t)) else {
                continue;
            };
            if variant.get("additionalProperties").and_then(Value::as_bool) != Some(false) {
                self.problems.push(format!(
                    "{at}: variant {target} of a presence union must be closed (`additionalProperties: false`)"
                ));
            }
            let required = variant.get("required").and_then(Value::as_array);
            if !required.is_some_and(|r| r.iter().any(|m| m.as_str() == Some(member.as_str()))) {
                self.problems.push(format!("{at}: variant {target} must require its discriminating member `{member}`"));
            }
            for (other_member, other) in mapping {
                let Some(other_variant) = other.as_str().and_then(|t| self.deref(t)) else {
                    continue;
                };
                if other_member != member
                    && collect_properties(self.doc, other_variant).iter().any(|(name, _)| name == member)
                {
                    self.problems.push(format!("{at}: `{member}` tells {target} apart, so {other} must not allow it"));
                }
            }
        }
    }

    /// A variant declares the union's tag as `[tag]`; a variant that is itself a union (events: `_tag`, then
    /// `type`) passes the rule on to each of its own variants.
    fn variant_declares_tag(&mut self, at: &str, tag: &str, property: &str, variant: &'a Value, default: Option<&str>) {
        if let Some(inner) = variant.get("oneOf").and_then(Value::as_array) {
            for member in inner {
                if let Some(target) = member.get("$ref").and_then(Value::as_str).and_then(|r| self.deref(r)) {
                    self.variant_declares_tag(at, tag, property, target, default);
                }
            }
            return;
        }
        {
            let props = collect_properties(self.doc, variant);
            let declared = props
                .iter()
                .find(|(name, _)| name == property)
                .and_then(|(_, s)| s.get("enum"))
                .and_then(Value::as_array);
            if declared.map(|v| v.as_slice()) != Some(&[Value::String(tag.to_owned())][..]) {
                self.problems
                    .push(format!("{at}: variant `{tag}` must declare `{property}` as the single-value enum [{tag}]"));
            }
            let required = collect_required(self.doc, variant);
            if !required.contains(property) && default != Some(tag) {
                self.problems.push(format!("{at}: variant `{tag}` must require `{property}`"));
            }
        }
    }
}

/// Properties of a schema, following `allOf` members and `$ref`s.
pub fn collect_properties(doc: &Value, schema: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let schema = follow(doc, schema);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.extend(props.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for member in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        out.extend(collect_properties(doc, member));
    }
    out
}

fn collect_required(doc: &Value, schema: &Value) -> BTreeSet<String> {
    let schema = follow(doc, schema);
    let mut out: BTreeSet<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    for member in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        out.extend(collect_required(doc, member));
    }
    out
}

fn follow<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).unwrap_or(schema),
        None => schema,
    }
}

fn is_beyond_spec(op: &Value) -> bool {
    op.get("x-beyond-spec").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    /// A document with one operation whose `security` and 429 are `security` and `too_many`.
    fn document(security: Option<Value>, too_many: Option<Value>) -> Value {
        let mut op = json!({
            "operationId": "readThing",
            "responses": {"503": {"$ref": super::SERVICE_UNAVAILABLE}},
        });
        if let Some(security) = security {
            op["security"] = security;
        }
        if let Some(response) = too_many {
            op["responses"]["429"] = response;
        }
        json!({
            "security": [{"bearerAuth": []}],
            "paths": {"/thing": {"get": op}},
            "components": {
                "responses": {
                    "ServiceUnavailable": {"description": "down"},
                    "TooManyRequests": {"description": "slow down"},
                },
                "schemas": {
                    "ServiceUnavailable": {"type": "object"},
                    "TooManyRequests": {"type": "object"},
                    "Other": {"type": "object"},
                    "Either": {
                        "oneOf": [{"$ref": "#/components/schemas/Other"}, {"$ref": super::TOO_MANY_REQUESTS_SCHEMA}],
                    },
                },
            },
        })
    }

    fn about_429(doc: &Value) -> Vec<String> {
        super::problems(doc, &crate::bundle::Yaml::Null).into_iter().filter(|p| p.contains("429")).collect()
    }

    #[test]
    fn every_authenticated_operation_documents_429() {
        let missing = about_429(&document(None, None));
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].starts_with("GET /thing: 429 must be"), "{missing:?}");
        assert!(about_429(&document(None, Some(json!({"$ref": super::TOO_MANY_REQUESTS})))).is_empty());
        let union = json!({"description": "either", "content": {"application/json": {"schema":
            {"$ref": "#/components/schemas/Either"}}}});
        assert!(about_429(&document(None, Some(union))).is_empty(), "a union with TooManyRequests");
        let other = json!({"description": "other", "content": {"application/json": {"schema":
            {"$ref": "#/components/schemas/Other"}}}});
        assert_eq!(about_429(&document(None, Some(other))).len(), 1, "another 429 is not enough");
        assert!(about_429(&document(Some(json!([])), None)).is_empty(), "no security: not limited");
    }

    #[test]
    fn every_operation_without_authentication_that_has_a_body_documents_408() {
        let about_408 = |doc: &Value| -> Vec<String> {
            super::problems(doc, &crate::bundle::Yaml::Null).into_iter().filter(|p| p.contains("408")).collect()
        };
        let mut doc = document(Some(json!([])), None);
        assert!(about_408(&doc).is_empty(), "no body: nothing to time out");
        doc["paths"]["/thing"]["get"]["requestBody"] = json!({"content": {}});
        let missing = about_408(&doc);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].starts_with("GET /thing: 408 must be"), "{missing:?}");
        doc["paths"]["/thing"]["get"]["responses"]["408"] = json!({"$ref": super::REQUEST_TIMEOUT});
        assert!(about_408(&doc).is_empty());
        let mut authenticated = document(None, Some(json!({"$ref": super::TOO_MANY_REQUESTS})));
        authenticated["paths"]["/thing"]["get"]["requestBody"] = json!({"content": {}});
        assert!(about_408(&authenticated).is_empty(), "an authenticated body is read after the credential");
    }

    #[test]
    fn volatile_and_secret_markers_are_true_or_absent() {
        let doc = |marker: serde_json::Value| {
            json!({"paths": {}, "components": {"schemas": {"Thing": {"type": "object", "properties": {
                "id": {"type": "string", "x-volatile": marker.clone()},
                "key": {"type": "string", "x-secret": marker}
            }}}}})
        };
        let problems = super::problems(&doc(json!(true)), &crate::bundle::Yaml::Null);
        assert!(problems.iter().all(|p| !p.contains("x-volatile") && !p.contains("x-secret")), "{problems:?}");
        let problems = super::problems(&doc(json!("yes")), &crate::bundle::Yaml::Null);
        assert!(problems.iter().any(|p| p.contains("x-volatile must be `true`")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("x-secret must be `true`")), "{problems:?}");
    }
}
