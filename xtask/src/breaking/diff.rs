//! The comparison itself: walks both documents operation by operation (following `$ref`s into components,
//! each compared once), records a finding per change at its place, then works out who uses each place and so
//! which audiences each change breaks. One method per rule family: operations, security, parameters and
//! headers, bodies and media types, responses and status codes, callbacks, schemas.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde_json::Value;

use super::model::{Audiences, CallbackRef, Change, Comparison, Effect, Group, OpRef, Rule, Side, Use};

pub(super) fn compare(base: &Value, head: &Value) -> Comparison {
    let mut diff = Diff {
        base,
        head,
        ops: Vec::new(),
        op_values: Vec::new(),
        findings: BTreeSet::new(),
        pending: Vec::new(),
        queued: BTreeSet::new(),
    };
    diff.document();
    while let Some(pointer) = diff.pending.pop() {
        diff.component(&pointer);
    }
    diff.into_comparison()
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Operation(usize, Side),
    Component(String),
    Document,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    place: Place,
    path: String,
    rule: Rule,
    subject: String,
    detail: String,
}

/// Where a comparison is: the place findings belong to, the subject they name, and the JSON pointers of the
/// compared values in the base and head documents.
#[derive(Clone, Debug)]
struct At {
    place: Place,
    subject: String,
    base: String,
    head: String,
}

impl At {
    fn child(&self, key: &str) -> At {
        At {
            place: self.place.clone(),
            subject: self.subject.clone(),
            base: pointer_child(&self.base, key),
            head: pointer_child(&self.head, key),
        }
    }

    fn named(&self, subject: String) -> At {
        At { subject, ..self.clone() }
    }

    fn member(&self, key: &str, name: &str) -> At {
        self.child(key).child(name).named(format!("{}.{name}", self.subject))
    }
}

fn pointer_child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn resolve<'v>(doc: &'v Value, reference: &str) -> Option<&'v Value> {
    reference.strip_prefix('#').and_then(|p| doc.pointer(p))
}

fn reference(value: &Value) -> Option<&str> {
    value.get("$ref").and_then(Value::as_str)
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map(text).unwrap_or_else(|| "none".to_owned())
}

static EMPTY: LazyLock<serde_json::Map<String, Value>> = LazyLock::new(serde_json::Map::new);

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Keywords that document and never change which messages are valid (`x-built-from` is a code-generation hint;
/// `x-volatile` and `x-secret` tell tools which members differ between runs and which hold secrets).
const ANNOTATIONS: [&str; 11] = [
    "description",
    "summary",
    "title",
    "example",
    "examples",
    "externalDocs",
    "tags",
    "x-alias-of",
    "x-built-from",
    "x-volatile",
    "x-secret",
];

/// Schema keywords the rules below compare; any other keyword that changes is [`Rule::Unclassified`].
const SCHEMA_KEYWORDS: [&str; 30] = [
    "$ref",
    "type",
    "format",
    "nullable",
    "deprecated",
    "enum",
    "default",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "allOf",
    "discriminator",
    "x-discriminator-default",
    "x-json-kind-union",
    "x-trim",
];

/// One operation of a document: where it is and its values.
struct OpValues<'a> {
    op: &'a Value,
    /// The path item (for path-level parameters).
    item: &'a Value,
    pointer: String,
}

struct Diff<'a> {
    base: &'a Value,
    head: &'a Value,
    ops: Vec<OpRef>,
    /// For each entry of `ops`: its values in the base and head documents.
    op_values: Vec<(Option<OpValues<'a>>, Option<OpValues<'a>>)>,
    findings: BTreeSet<Finding>,
    pending: Vec<String>,
    queued: BTreeSet<String>,
}

impl<'a> Diff<'a> {
    fn emit(&mut self, rule: Rule, at: &At, path: &str, detail: impl Into<String>) {
        self.emit_subject(rule, at, at.subject.clone(), path, detail);
    }

    fn emit_subject(&mut self, rule: Rule, at: &At, subject: String, path: &str, detail: impl Into<String>) {
        self.findings.insert(Finding {
            place: at.place.clone(),
            path: path.to_owned(),
            rule,
            subject,
            detail: detail.into(),
        });
    }

    /// A component both documents refer to at the same place: compared once, after the operations.
    fn enqueue(&mut self, pointer: &str) {
        if self.queued.insert(pointer.to_owned()) {
            self.pending.push(pointer.to_owned());
        }
    }

    // -------------------------------------------------------------------------------- operations

    fn document(&mut self) {
        let base_ops = operations(self.base);
        let head_ops = operations(self.head);
        let mut head_matched = vec![false; head_ops.len()];
        let mut pairs = Vec::new();
        for (bi, (b_path, b_method, b_op, _)) in base_ops.iter().enumerate() {
            let same_place = head_ops
                .iter()
                .position(|(h_path, h_method, _, _)| h_method == b_method && normalize(h_path) == normalize(b_path));
            let b_id = b_op.get("operationId").and_then(Value::as_str);
            let same_id = || {
                head_ops.iter().enumerate().position(|(hi, (_, _, h_op, _))| {
                    !head_matched[hi] && b_id.is_some() && h_op.get("operationId").and_then(Value::as_str) == b_id
                })
            };
            match same_place.filter(|&hi| !head_matched[hi]).or_else(same_id) {
                Some(hi) => {
                    head_matched[hi] = true;
                    pairs.push((Some(bi), Some(hi)));
                }
                None => pairs.push((Some(bi), None)),
            }
        }
        for (hi, matched) in head_matched.iter().enumerate() {
            if !matched {
                pairs.push((None, Some(hi)));
            }
        }
        for (bi, hi) in pairs {
            let b = bi.map(|i| &base_ops[i]);
            let h = hi.map(|i| &head_ops[i]);
            let (path, method, op, _) = h.or(b).expect("one side exists");
            let op_ref = OpRef {
                path: path.clone(),
                method: method.to_string(),
                operation_id: op.get("operationId").and_then(Value::as_str).unwrap_or("(no operationId)").to_owned(),
                callback: None,
            };
            let values = |o: Option<&(String, &'static str, &'a Value, &'a Value)>| {
                o.map(|(p, m, op, item)| OpValues { op, item, pointer: pointer_child(&pointer_child("#/paths", p), m) })
            };
            let index = self.ops.len();
            self.ops.push(op_ref);
            self.op_values.push((values(b), values(h)));
            self.operation_pair(index);
        }
        self.interface_version();
    }

    fn operation_pair(&mut self, index: usize) {
        let (b, h) = &self.op_values[index];
        let (b, h) = (
            b.as_ref().map(|v| (v.op, v.item, v.pointer.clone())),
            h.as_ref().map(|v| (v.op, v.item, v.pointer.clone())),
        );
        let op_ref = self.ops[index].clone();
        let request = if op_ref.callback.is_some() { Side::Response } else { Side::Request };
        let subject = op_ref.label();
        match (b, h) {
            (None, Some((_, _, hp))) => {
                let at = At { place: Place::Operation(index, request), subject, base: hp.clone(), head: hp.clone() };
                if op_ref.callback.is_some() {
                    self.emit(Rule::CallbackAdded, &at, &hp, "callback operation added");
                } else {
                    self.emit(
                        Rule::OperationAdded,
                        &at,
                        &hp,
                        format!("operation {} {} added", op_ref.method.to_uppercase(), op_ref.path),
                    );
                }
            }
            (Some((_, _, bp)), None) => {
                let at = At { place: Place::Operation(index, request), subject, base: bp.clone(), head: bp.clone() };
                if op_ref.callback.is_some() {
                    self.emit(Rule::CallbackRemoved, &at, &bp, "callback operation removed");
                } else {
                    self.emit(
                        Rule::OperationRemoved,
                        &at,
                        &bp,
                        format!("operation {} {} removed", op_ref.method.to_uppercase(), op_ref.path),
                    );
                }
            }
            (Some((b_op, b_item, bp)), Some((h_op, h_item, hp))) => {
                let at = At { place: Place::Operation(index, request), subject, base: bp.clone(), head: hp.clone() };
                self.operation(b_op, b_item, h_op, h_item, &at, index);
            }
            (None, None) => {}
        }
    }

    fn operation(&mut self, b: &'a Value, b_item: &'a Value, h: &'a Value, h_item: &'a Value, at: &At, index: usize) {
        let callback = self.ops[index].callback.is_some();
        let Place::Operation(_, request) = at.place else { unreachable!("operations are compared at their own place") };
        let response_at = At { place: Place::Operation(index, request.flip()), ..at.clone() };
        // `POST /a/{id}`; a renamed path parameter alone is not a move (the parameters report it).
        let place = |pointer: &str| {
            let segments: Vec<String> = pointer.trim_start_matches("#/paths/").split('/').map(unescape).collect();
            match segments.as_slice() {
                [path, method] => format!("{} {path}", method.to_uppercase()),
                _ => pointer.to_owned(),
            }
        };
        let (from, to) = (place(&at.base), place(&at.head));
        if !callback && normalize(&from) != normalize(&to) {
            self.emit(Rule::OperationMoved, at, &at.head, format!("moved from {from} to {to}"));
        }
        let (b_id, h_id) = (b.get("operationId"), h.get("operationId"));
        if !callback && b_id != h_id {
            self.emit(
                Rule::OperationRenamed,
                at,
                &pointer_child(&at.head, "operationId"),
                format!("operationId {} → {}", shown(b_id), shown(h_id)),
            );
        }
        self.annotations(b, h, at);
        let known = ["operationId", "parameters", "requestBody", "responses", "callbacks", "security", "deprecated"];
        self.unknown_keywords(b, h, at, &known);
        if !callback {
            self.security(b, h, at);
        }
        self.parameters(b_item, b, h_item, h, at);
        self.request_body(b.get("requestBody"), h.get("requestBody"), &at.child("requestBody"));
        self.responses(b.get("responses"), h.get("responses"), &response_at.child("responses"));
        if !callback {
            self.callbacks(b.get("callbacks"), h.get("callbacks"), at, index);
        }
    }

    /// Reworded descriptions (and the other annotations), and deprecation.
    fn annotations(&mut self, b: &Value, h: &Value, at: &At) {
        let changed: Vec<&str> = ANNOTATIONS.iter().copied().filter(|k| b.get(k) != h.get(k)).collect();
        if !changed.is_empty() {
            self.emit(Rule::DescriptionChanged, at, &at.head, format!("{} changed", changed.join(", ")));
        }
        let deprecated = |v: &Value| v.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
        match (deprecated(b), deprecated(h)) {
            (false, true) => self.emit(Rule::Deprecated, at, &at.head, "deprecated"),
            (true, false) => self.emit(Rule::Deprecated, at, &at.head, "no longer deprecated"),
            _ => {}
        }
    }

    fn unknown_keywords(&mut self, b: &Value, h: &Value, at: &At, known: &[&str]) {
        let keys: BTreeSet<&String> = b.as_object().into_iter().chain(h.as_object()).flat_map(|m| m.keys()).collect();
        for key in keys {
            if known.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()) || b.get(key) == h.get(key) {
                continue;
            }
            self.emit(
                Rule::Unclassified,
                at,
                &pointer_child(&at.head, key),
                format!(
                    "`{key}` changed ({} → {}); the guard has no rule for it",
                    shown(b.get(key)),
                    shown(h.get(key))
                ),
            );
        }
    }

    fn interface_version(&mut self) {
        let (b, h) = (self.base.pointer("/info/version"), self.head.pointer("/info/version"));
        if b != h {
            let at = At {
                place: Place::Document,
                subject: "info.version".into(),
                base: "#/info/version".into(),
                head: "#/info/version".into(),
            };
            self.emit(
                Rule::InterfaceVersionChanged,
                &at,
                "#/info/version",
                format!("interface version {} → {}", shown(b), shown(h)),
            );
        }
    }

    // -------------------------------------------------------------------------------- security

    /// The credentials an operation accepts: alternatives, each a set of scheme names (empty: no credential).
    fn security(&mut self, b: &Value, h: &Value, at: &At) {
        let b_alts = alternatives(self.base, b);
        let h_alts = alternatives(self.head, h);
        let path = pointer_child(&at.head, "security");
        for alt in &h_alts {
            // Widened when a base alternative does not already accept every request this one accepts.
            if !b_alts.iter().any(|old| old.is_subset(alt)) {
                self.emit(Rule::SecurityAdded, at, &path, format!("accepts {}", describe_alternative(alt)));
            }
        }
        for alt in &b_alts {
            if !h_alts.iter().any(|new| new.is_subset(alt)) {
                let detail = if alt.is_empty() {
                    "requires a credential (it accepted requests without one)".to_owned()
                } else {
                    format!("no longer accepts {}", describe_alternative(alt))
                };
                self.emit(Rule::SecurityRemoved, at, &path, detail);
            }
        }
        let used = |alts: &[BTreeSet<String>]| alts.iter().flatten().cloned().collect::<BTreeSet<String>>();
        for scheme in used(&b_alts).intersection(&used(&h_alts)) {
            let name = scheme.split('[').next().unwrap_or(scheme);
            self.enqueue(&pointer_child("#/components/securitySchemes", name));
        }
    }

    fn security_scheme(&mut self, b: &Value, h: &Value, at: &At) {
        self.annotations(b, h, at);
        for key in ["type", "scheme", "bearerFormat", "in", "name", "flows", "openIdConnectUrl"] {
            let (bv, hv) = (b.get(key), h.get(key));
            let same = match (key, bv, hv) {
                ("name", Some(Value::String(x)), Some(Value::String(y))) => x.eq_ignore_ascii_case(y),
                ("scheme", Some(Value::String(x)), Some(Value::String(y))) => x.eq_ignore_ascii_case(y),
                _ => bv == hv,
            };
            if !same {
                self.emit(
                    Rule::SecuritySchemeChanged,
                    at,
                    &pointer_child(&at.head, key),
                    format!("{key} {} → {}", shown(bv), shown(hv)),
                );
            }
        }
    }

    // -------------------------------------------------------------------------------- parameters and headers

    fn parameters(&mut self, b_item: &'a Value, b_op: &'a Value, h_item: &'a Value, h_op: &'a Value, at: &At) {
        let b_params = parameters(self.base, b_item, b_op, &at.base);
        let h_params = parameters(self.head, h_item, h_op, &at.head);
        let op = at.subject.clone();
        for (key, hp) in &h_params {
            let member = at.named(format!("{op}.{}", hp.name));
            match b_params.get(key) {
                None => {
                    let required = hp.value.get("required").and_then(Value::as_bool).unwrap_or(false);
                    let (rule, how) = if required {
                        (Rule::MemberAddedRequired, "required")
                    } else {
                        (Rule::MemberAddedOptional, "optional")
                    };
                    self.emit(rule, &member, &hp.pointer, format!("{how} {} parameter added", key.0));
                }
                Some(bp) => {
                    if let (Some(x), Some(y)) = (&bp.reference, &hp.reference) {
                        if x == y {
                            self.enqueue(x);
                            continue;
                        }
                    }
                    let member = At { base: bp.pointer.clone(), head: hp.pointer.clone(), ..member };
                    self.parameter(bp.value, hp.value, &member);
                }
            }
        }
        for (key, bp) in &b_params {
            if !h_params.contains_key(key) {
                self.emit(
                    Rule::MemberRemoved,
                    &at.named(format!("{op}.{}", bp.name)),
                    &bp.pointer,
                    format!("{} parameter removed", key.0),
                );
            }
        }
    }

    /// A parameter, or a response header: requiredness, then its schema (or content).
    fn parameter(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        let required = |v: &Value| v.get("required").and_then(Value::as_bool).unwrap_or(false);
        match (required(b), required(h)) {
            (false, true) => self.emit(Rule::MemberMadeRequired, at, &at.head, "made required"),
            (true, false) => self.emit(Rule::MemberMadeOptional, at, &at.head, "made optional"),
            _ => {}
        }
        self.annotations(b, h, at);
        self.unknown_keywords(b, h, at, &["name", "in", "required", "deprecated", "schema", "content"]);
        match (b.get("schema"), h.get("schema")) {
            (Some(bs), Some(hs)) => self.schema(bs, hs, &at.child("schema")),
            (None, None) => {}
            _ => self.emit(Rule::TypeChanged, at, &at.head, "schema replaced by content (or the reverse)"),
        }
        self.content(b.get("content"), h.get("content"), &at.child("content"));
    }

    fn headers(&mut self, b: Option<&'a Value>, h: Option<&'a Value>, at: &At) {
        let collect = |doc: &'a Value,
                       v: Option<&'a Value>,
                       pointer: &str|
         -> BTreeMap<String, (String, &'a Value, Option<String>)> {
            let mut out = BTreeMap::new();
            for (name, header) in v.and_then(Value::as_object).into_iter().flatten() {
                let target = reference(header).map(str::to_owned);
                let value = target.as_deref().and_then(|r| resolve(doc, r)).unwrap_or(header);
                out.insert(name.to_ascii_lowercase(), (pointer_child(pointer, name), value, target));
            }
            out
        };
        let b_headers = collect(self.base, b, &at.base);
        let h_headers = collect(self.head, h, &at.head);
        for (name, (hp, hv, href)) in &h_headers {
            let member = at.named(format!("{}.{name}", at.subject));
            match b_headers.get(name) {
                None => {
                    let required = hv.get("required").and_then(Value::as_bool).unwrap_or(false);
                    let (rule, how) = if required {
                        (Rule::MemberAddedRequired, "required")
                    } else {
                        (Rule::MemberAddedOptional, "optional")
                    };
                    self.emit(rule, &member, hp, format!("{how} header added"));
                }
                Some((bp, bv, bref)) => {
                    if let (Some(x), Some(y)) = (bref, href) {
                        if x == y {
                            self.enqueue(x);
                            continue;
                        }
                    }
                    self.parameter(bv, hv, &At { base: bp.clone(), head: hp.clone(), ..member });
                }
            }
        }
        for (name, (bp, _, _)) in &b_headers {
            if !h_headers.contains_key(name) {
                self.emit(Rule::MemberRemoved, &at.named(format!("{}.{name}", at.subject)), bp, "header removed");
            }
        }
    }

    // -------------------------------------------------------------------------------- bodies and media types

    fn request_body(&mut self, b: Option<&'a Value>, h: Option<&'a Value>, at: &At) {
        let at = &at.named(format!("{}.requestBody", at.subject));
        let (b, h) = match (b, h) {
            (None, None) => return,
            (None, Some(h)) => {
                let h = reference(h).and_then(|r| resolve(self.head, r)).unwrap_or(h);
                let required = h.get("required").and_then(Value::as_bool).unwrap_or(false);
                let (rule, how) = if required {
                    (Rule::MemberAddedRequired, "required")
                } else {
                    (Rule::MemberAddedOptional, "optional")
                };
                return self.emit(rule, at, &at.head, format!("{how} request body added"));
            }
            (Some(_), None) => return self.emit(Rule::MemberRemoved, at, &at.base, "request body removed"),
            (Some(b), Some(h)) => (b, h),
        };
        if let (Some(x), Some(y)) = (reference(b), reference(h)) {
            if x == y {
                return self.enqueue(x);
            }
        }
        let b = reference(b).and_then(|r| resolve(self.base, r)).unwrap_or(b);
        let h = reference(h).and_then(|r| resolve(self.head, r)).unwrap_or(h);
        self.body(b, h, at);
    }

    fn body(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        let required = |v: &Value| v.get("required").and_then(Value::as_bool).unwrap_or(false);
        match (required(b), required(h)) {
            (false, true) => self.emit(
                Rule::MemberMadeRequired,
                at,
                &pointer_child(&at.head, "required"),
                "request body made required",
            ),
            (true, false) => self.emit(
                Rule::MemberMadeOptional,
                at,
                &pointer_child(&at.head, "required"),
                "request body made optional",
            ),
            _ => {}
        }
        self.annotations(b, h, at);
        self.unknown_keywords(b, h, at, &["required", "content"]);
        self.content(b.get("content"), h.get("content"), &at.child("content"));
    }

    fn content(&mut self, b: Option<&'a Value>, h: Option<&'a Value>, at: &At) {
        let b_map = b.and_then(Value::as_object).unwrap_or(&EMPTY);
        let h_map = h.and_then(Value::as_object).unwrap_or(&EMPTY);
        for (media, hm) in h_map {
            match b_map.get(media) {
                None => self.emit(
                    Rule::MediaTypeAdded,
                    at,
                    &pointer_child(&at.head, media),
                    format!("content type {media} added"),
                ),
                Some(bm) => {
                    let at = at.child(media);
                    self.annotations(bm, hm, &at);
                    self.unknown_keywords(bm, hm, &at, &["schema"]);
                    match (bm.get("schema"), hm.get("schema")) {
                        (Some(bs), Some(hs)) => self.schema(bs, hs, &at.child("schema")),
                        (None, None) => {}
                        (None, Some(_)) => self.emit(Rule::ConstraintTightened, &at, &at.head, "schema added"),
                        (Some(_), None) => self.emit(Rule::ConstraintLoosened, &at, &at.head, "schema removed"),
                    }
                }
            }
        }
        for media in b_map.keys() {
            if !h_map.contains_key(media) {
                self.emit(
                    Rule::MediaTypeRemoved,
                    at,
                    &pointer_child(&at.base, media),
                    format!("content type {media} removed"),
                );
            }
        }
    }

    // -------------------------------------------------------------------------------- responses and status codes

    fn responses(&mut self, b: Option<&'a Value>, h: Option<&'a Value>, at: &At) {
        let b_map = b.and_then(Value::as_object).unwrap_or(&EMPTY);
        let h_map = h.and_then(Value::as_object).unwrap_or(&EMPTY);
        for (status, hr) in h_map {
            let at = at.child(status).named(format!("{}.{status}", at.subject));
            match b_map.get(status) {
                None => self.emit(Rule::StatusAdded, &at, &at.head, format!("status {status} added")),
                Some(br) => {
                    if let (Some(x), Some(y)) = (reference(br), reference(hr)) {
                        if x == y {
                            self.enqueue(x);
                            continue;
                        }
                    }
                    let br = reference(br).and_then(|r| resolve(self.base, r)).unwrap_or(br);
                    let hr = reference(hr).and_then(|r| resolve(self.head, r)).unwrap_or(hr);
                    self.response(br, hr, &at);
                }
            }
        }
        for status in b_map.keys() {
            if !h_map.contains_key(status) {
                let at = at.child(status).named(format!("{}.{status}", at.subject));
                self.emit(Rule::StatusRemoved, &at, &at.base, format!("status {status} removed"));
            }
        }
    }

    fn response(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        self.annotations(b, h, at);
        self.unknown_keywords(b, h, at, &["headers", "content", "links"]);
        self.headers(b.get("headers"), h.get("headers"), &at.child("headers"));
        self.content(b.get("content"), h.get("content"), &at.child("content"));
    }

    // -------------------------------------------------------------------------------- callbacks

    fn callbacks(&mut self, b: Option<&'a Value>, h: Option<&'a Value>, at: &At, parent: usize) {
        let collect = |doc: &'a Value, callbacks: Option<&'a Value>, pointer: &str| {
            let mut out: BTreeMap<(String, String, &'static str), OpValues<'a>> = BTreeMap::new();
            for (name, callback) in callbacks.and_then(Value::as_object).into_iter().flatten() {
                let callback = reference(callback).and_then(|r| resolve(doc, r)).unwrap_or(callback);
                for (expression, item) in callback.as_object().into_iter().flatten() {
                    for method in METHODS {
                        if let Some(op) = item.get(method) {
                            let pointer = pointer_child(
                                &pointer_child(&pointer_child(&pointer_child(pointer, "callbacks"), name), expression),
                                method,
                            );
                            out.insert((name.clone(), expression.clone(), method), OpValues { op, item, pointer });
                        }
                    }
                }
            }
            out
        };
        let mut b_ops = collect(self.base, b, &at.base);
        let mut h_ops = collect(self.head, h, &at.head);
        let keys: BTreeSet<(String, String, &'static str)> = b_ops.keys().chain(h_ops.keys()).cloned().collect();
        for key in keys {
            let parent_ref = self.ops[parent].clone();
            let op_ref = OpRef {
                callback: Some(CallbackRef {
                    name: key.0.clone(),
                    expression: key.1.clone(),
                    method: key.2.to_owned(),
                }),
                ..parent_ref
            };
            let index = self.ops.len();
            self.ops.push(op_ref);
            self.op_values.push((b_ops.remove(&key), h_ops.remove(&key)));
            self.operation_pair(index);
        }
    }

    // -------------------------------------------------------------------------------- components

    fn component(&mut self, pointer: &str) {
        let (Some(b), Some(h)) = (resolve(self.base, pointer), resolve(self.head, pointer)) else {
            return;
        };
        let segments: Vec<String> = pointer.trim_start_matches("#/").split('/').map(unescape).collect();
        let [_, kind, name] = segments.as_slice() else {
            return;
        };
        let subject = if kind == "schemas" { name.clone() } else { format!("{kind}.{name}") };
        let at = At {
            place: Place::Component(pointer.to_owned()),
            subject,
            base: pointer.to_owned(),
            head: pointer.to_owned(),
        };
        match kind.as_str() {
            "schemas" => self.schema(b, h, &at),
            "responses" => self.response(b, h, &at),
            "parameters" | "headers" => self.parameter(b, h, &at),
            "requestBodies" => self.body(b, h, &at),
            "securitySchemes" => self.security_scheme(b, h, &at),
            _ => {}
        }
    }

    // -------------------------------------------------------------------------------- schemas

    fn schema(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        // A nullable reference is written `{nullable: true, allOf: [{$ref}]}`: compare what it wraps.
        let (b_wrapped, b_core, b_ptr) = unwrap_nullable(b, &at.base);
        let (h_wrapped, h_core, h_ptr) = unwrap_nullable(h, &at.head);
        let nullable = |v: &Value| v.get("nullable").and_then(Value::as_bool).unwrap_or(false);
        if b_wrapped || h_wrapped {
            self.annotations(b, h, at);
        }
        let outer = at;
        let at = &At { base: b_ptr, head: h_ptr, ..at.clone() };
        match (reference(b_core), reference(h_core)) {
            (Some(x), Some(y)) if x == y => {
                self.nullability(nullable(b), nullable(h), outer);
                return self.enqueue(x);
            }
            (Some(x), Some(y)) => {
                self.nullability(nullable(b), nullable(h), outer);
                return self.emit(
                    Rule::TypeChanged,
                    at,
                    &at.head,
                    format!("refers to {} instead of {}", ref_name(y), ref_name(x)),
                );
            }
            _ => {}
        }
        let b_res = reference(b_core).and_then(|r| resolve(self.base, r)).unwrap_or(b_core);
        let h_res = reference(h_core).and_then(|r| resolve(self.head, r)).unwrap_or(h_core);
        self.nullability(nullable(b) || nullable(b_res), nullable(h) || nullable(h_res), outer);
        let (b, h) = (b_res, h_res);
        if !b_wrapped && !h_wrapped {
            self.annotations(b, h, at);
        }
        self.unknown_keywords(b, h, at, &SCHEMA_KEYWORDS);

        let (b_kind, h_kind) = (kind(b), kind(h));
        if b_kind != h_kind {
            match (b_kind, h_kind) {
                (Some("integer"), Some("number")) => {
                    self.emit(Rule::ConstraintLoosened, at, &at.head, "type integer → number")
                }
                (Some("number"), Some("integer")) => {
                    self.emit(Rule::ConstraintTightened, at, &at.head, "type number → integer")
                }
                _ => {
                    let show = |k: Option<&str>| k.unwrap_or("any").to_owned();
                    return self.emit(
                        Rule::TypeChanged,
                        at,
                        &at.head,
                        format!("type {} → {}", show(b_kind), show(h_kind)),
                    );
                }
            }
        }
        if b.get("format") != h.get("format") {
            return self.emit(
                Rule::TypeChanged,
                at,
                &at.head,
                format!("format {} → {}", shown(b.get("format")), shown(h.get("format"))),
            );
        }
        self.enum_values(b, h, at);
        self.constraints(b, h, at);
        if b.get("default") != h.get("default") {
            self.emit(
                Rule::DefaultChanged,
                at,
                &pointer_child(&at.head, "default"),
                format!("default {} → {}", shown(b.get("default")), shown(h.get("default"))),
            );
        }
        if b.get("oneOf").is_some() || h.get("oneOf").is_some() {
            self.union(b, h, at);
        }
        if b.get("allOf").is_some() || h.get("allOf").is_some() {
            self.all_of(b, h, at);
        }
        if h_kind == Some("object") {
            self.object(b, h, at);
        }
        if let (Some(bi), Some(hi)) = (b.get("items"), h.get("items")) {
            self.schema(bi, hi, &at.child("items").named(format!("{}[]", at.subject)));
        }
    }

    fn nullability(&mut self, b: bool, h: bool, at: &At) {
        match (b, h) {
            (false, true) => self.emit(Rule::MadeNullable, at, &at.head, "made nullable"),
            (true, false) => self.emit(Rule::MadeNonNullable, at, &at.head, "no longer nullable"),
            _ => {}
        }
    }

    fn enum_values(&mut self, b: &Value, h: &Value, at: &At) {
        let (Some(b_values), Some(h_values)) =
            (b.get("enum").and_then(Value::as_array), h.get("enum").and_then(Value::as_array))
        else {
            match (b.get("enum"), h.get("enum")) {
                (None, Some(_)) => self.emit(
                    Rule::ConstraintTightened,
                    at,
                    &pointer_child(&at.head, "enum"),
                    "restricted to enum values",
                ),
                (Some(_), None) => {
                    self.emit(Rule::ConstraintLoosened, at, &at.head, "no longer restricted to enum values")
                }
                _ => {}
            }
            return;
        };
        for value in h_values.iter().filter(|v| !b_values.contains(v)) {
            let subject = format!("{}.{}", at.subject, text(value));
            self.emit_subject(
                Rule::EnumValueAdded,
                at,
                subject,
                &pointer_child(&at.head, "enum"),
                format!("enum value {} added", value),
            );
        }
        for value in b_values.iter().filter(|v| !h_values.contains(v)) {
            let subject = format!("{}.{}", at.subject, text(value));
            self.emit_subject(
                Rule::EnumValueRemoved,
                at,
                subject,
                &pointer_child(&at.base, "enum"),
                format!("enum value {} removed", value),
            );
        }
    }

    /// Lengths, bounds, item counts, pattern, multipleOf, uniqueItems, `x-trim`.
    fn constraints(&mut self, b: &Value, h: &Value, at: &At) {
        let number = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
        for (key, lower) in [
            ("minLength", true),
            ("minimum", true),
            ("minItems", true),
            ("minProperties", true),
            ("maxLength", false),
            ("maximum", false),
            ("maxItems", false),
            ("maxProperties", false),
        ] {
            let (bv, hv) = (number(b, key), number(h, key));
            let tighter = match (bv, hv) {
                (Some(x), Some(y)) if x == y => continue,
                (None, None) => continue,
                (Some(x), Some(y)) => (y > x) == lower,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            let detail = format!("{key} {} → {}", shown(b.get(key)), shown(h.get(key)));
            let rule = if tighter { Rule::ConstraintTightened } else { Rule::ConstraintLoosened };
            self.emit(rule, at, &pointer_child(&at.head, key), detail);
        }
        for key in ["exclusiveMinimum", "exclusiveMaximum", "uniqueItems", "x-trim"] {
            let flag = |v: &Value| v.get(key).and_then(Value::as_bool).unwrap_or(false);
            if flag(b) == flag(h) {
                continue;
            }
            // `x-trim` accepts more input (surrounding white space is removed before checking); the others less.
            let tighter = flag(h) != (key == "x-trim");
            let rule = if tighter { Rule::ConstraintTightened } else { Rule::ConstraintLoosened };
            self.emit(rule, at, &pointer_child(&at.head, key), format!("{key} {} → {}", flag(b), flag(h)));
        }
        match (b.get("pattern"), h.get("pattern")) {
            (None, Some(p)) => self.emit(
                Rule::ConstraintTightened,
                at,
                &pointer_child(&at.head, "pattern"),
                format!("pattern {p} added"),
            ),
            (Some(p), None) => self.emit(Rule::ConstraintLoosened, at, &at.head, format!("pattern {p} removed")),
            (Some(x), Some(y)) if x != y => self.emit(
                Rule::ConstraintChanged,
                at,
                &pointer_child(&at.head, "pattern"),
                format!("pattern {x} → {y}"),
            ),
            _ => {}
        }
        match (number(b, "multipleOf"), number(h, "multipleOf")) {
            (x, y) if x == y => {}
            (None, Some(_)) => {
                self.emit(Rule::ConstraintTightened, at, &pointer_child(&at.head, "multipleOf"), "multipleOf added")
            }
            (Some(_), None) => self.emit(Rule::ConstraintLoosened, at, &at.head, "multipleOf removed"),
            (Some(x), Some(y)) => {
                let rule = if (y / x).fract() == 0.0 {
                    Rule::ConstraintTightened
                } else if (x / y).fract() == 0.0 {
                    Rule::ConstraintLoosened
                } else {
                    Rule::ConstraintChanged
                };
                self.emit(rule, at, &pointer_child(&at.head, "multipleOf"), format!("multipleOf {x} → {y}"));
            }
            (None, None) => {}
        }
    }

    /// Discriminated unions (variants by discriminator value) and kind unions (variants by JSON kind).
    fn union(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        let discriminator =
            |v: &Value| v.pointer("/discriminator/propertyName").and_then(Value::as_str).map(str::to_owned);
        let (b_tag, h_tag) = (discriminator(b), discriminator(h));
        if b_tag != h_tag || b.get("oneOf").is_some() != h.get("oneOf").is_some() {
            return self.emit(
                Rule::TypeChanged,
                at,
                &at.head,
                format!("union told apart by {} → {}", tag_name(&b_tag), tag_name(&h_tag)),
            );
        }
        let b_variants = variants(self.base, b, &at.base);
        let h_variants = variants(self.head, h, &at.head);
        for (key, (hp, hv)) in &h_variants {
            match b_variants.get(key) {
                None => {
                    let subject = format!("{}.{key}", at.subject);
                    self.emit_subject(Rule::UnionVariantAdded, at, subject, hp, format!("variant {key} added"));
                }
                Some((bp, bv)) => {
                    let at = At { base: bp.clone(), head: hp.clone(), ..at.named(format!("{}.{key}", at.subject)) };
                    self.schema(bv, hv, &at);
                }
            }
        }
        for (key, (bp, _)) in &b_variants {
            if !h_variants.contains_key(key) {
                let subject = format!("{}.{key}", at.subject);
                self.emit_subject(Rule::UnionVariantRemoved, at, subject, bp, format!("variant {key} removed"));
            }
        }
        let default = |v: &Value| v.get("x-discriminator-default").cloned();
        match (default(b), default(h)) {
            (x, y) if x == y => {}
            (None, Some(d)) => {
                self.emit(Rule::ConstraintLoosened, at, &at.head, format!("the tag may be omitted (default {d})"))
            }
            (Some(d), None) => {
                self.emit(Rule::ConstraintTightened, at, &at.head, format!("the tag is required (was default {d})"))
            }
            (Some(x), Some(y)) => {
                self.emit(Rule::ConstraintChanged, at, &at.head, format!("default variant {x} → {y}"))
            }
            (None, None) => {}
        }
    }

    /// `allOf` compositions: referenced parts matched by name, inline parts by position.
    fn all_of(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        let parts = |v: &'a Value| -> (BTreeMap<&'a str, usize>, Vec<(usize, &'a Value)>) {
            let mut refs = BTreeMap::new();
            let mut inline = Vec::new();
            for (i, part) in v.get("allOf").and_then(Value::as_array).into_iter().flatten().enumerate() {
                match reference(part) {
                    Some(r) => {
                        refs.insert(r, i);
                    }
                    None => inline.push((i, part)),
                }
            }
            (refs, inline)
        };
        let (b_refs, b_inline) = parts(b);
        let (h_refs, h_inline) = parts(h);
        for (r, i) in &h_refs {
            if b_refs.contains_key(r) {
                self.enqueue(r);
            } else {
                let path = pointer_child(&pointer_child(&at.head, "allOf"), &i.to_string());
                self.emit(Rule::TypeChanged, at, &path, format!("now also made of {}", ref_name(r)));
            }
        }
        for (r, i) in &b_refs {
            if !h_refs.contains_key(r) {
                let path = pointer_child(&pointer_child(&at.base, "allOf"), &i.to_string());
                self.emit(Rule::TypeChanged, at, &path, format!("no longer made of {}", ref_name(r)));
            }
        }
        for ((bi, bv), (hi, hv)) in b_inline.iter().zip(h_inline.iter()) {
            let at = At {
                base: pointer_child(&pointer_child(&at.base, "allOf"), &bi.to_string()),
                head: pointer_child(&pointer_child(&at.head, "allOf"), &hi.to_string()),
                ..at.clone()
            };
            self.schema(bv, hv, &at);
        }
        if b_inline.len() != h_inline.len() {
            self.emit(
                Rule::TypeChanged,
                at,
                &at.head,
                format!("{} inline allOf parts → {}", b_inline.len(), h_inline.len()),
            );
        }
    }

    /// Members of an object: added (required, optional, or into a closed object), removed, made required or
    /// optional, and each member's schema; closing or opening the object; the schema of map values.
    fn object(&mut self, b: &'a Value, h: &'a Value, at: &At) {
        let closed = |v: &Value| v.get("additionalProperties") == Some(&Value::Bool(false));
        let (b_closed, h_closed) = (closed(b), closed(h));
        match (b_closed, h_closed) {
            (false, true) => self.emit(
                Rule::ConstraintTightened,
                at,
                &pointer_child(&at.head, "additionalProperties"),
                "closed (additionalProperties: false)",
            ),
            (true, false) => {
                self.emit(Rule::ConstraintLoosened, at, &at.head, "no longer closed (unknown members allowed)")
            }
            _ => {}
        }
        match (
            b.get("additionalProperties").filter(|v| v.is_object()),
            h.get("additionalProperties").filter(|v| v.is_object()),
        ) {
            (Some(bx), Some(hx)) => {
                self.schema(bx, hx, &at.child("additionalProperties").named(format!("{}{{}}", at.subject)))
            }
            (None, Some(_)) if !h_closed && !b_closed => self.emit(
                Rule::ConstraintTightened,
                at,
                &pointer_child(&at.head, "additionalProperties"),
                "map values constrained",
            ),
            (Some(_), None) if !h_closed && !b_closed => {
                self.emit(Rule::ConstraintLoosened, at, &at.head, "map values no longer constrained")
            }
            _ => {}
        }
        let b_props = b.get("properties").and_then(Value::as_object).unwrap_or(&EMPTY);
        let h_props = h.get("properties").and_then(Value::as_object).unwrap_or(&EMPTY);
        let required = |v: &Value| -> BTreeSet<String> {
            v.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let (b_req, h_req) = (required(b), required(h));
        for (name, hs) in h_props {
            let member = at.member("properties", name);
            match b_props.get(name) {
                None => {
                    let is_required = h_req.contains(name);
                    if is_required {
                        self.emit(Rule::MemberAddedRequired, &member, &member.head, "required member added");
                    }
                    if b_closed {
                        self.emit(
                            Rule::MemberAddedClosed,
                            &member,
                            &member.head,
                            "member added to a closed object, whose receivers refuse unknown members",
                        );
                    }
                    if !is_required && !b_closed {
                        self.emit(Rule::MemberAddedOptional, &member, &member.head, "optional member added");
                    }
                }
                Some(bs) => {
                    match (b_req.contains(name), h_req.contains(name)) {
                        (false, true) => self.emit(Rule::MemberMadeRequired, &member, &member.head, "made required"),
                        (true, false) => self.emit(Rule::MemberMadeOptional, &member, &member.head, "made optional"),
                        _ => {}
                    }
                    self.schema(bs, hs, &member);
                }
            }
        }
        for name in b_props.keys().filter(|n| !h_props.contains_key(*n)) {
            let member = at.member("properties", name);
            self.emit(Rule::MemberRemoved, &member, &member.base, "member removed");
        }
    }

    // -------------------------------------------------------------------------------- results

    fn into_comparison(self) -> Comparison {
        let base_usage = usage(self.base, self.op_values.iter().map(|v| v.0.as_ref()), &self.ops);
        let head_usage = usage(self.head, self.op_values.iter().map(|v| v.1.as_ref()), &self.ops);
        let mut changes = Vec::new();
        for f in self.findings {
            let uses: BTreeSet<(usize, Side)> = match &f.place {
                Place::Operation(i, side) => [(*i, *side)].into(),
                Place::Component(pointer) => {
                    let (b, h) = (base_usage.get(pointer), head_usage.get(pointer));
                    let both: BTreeSet<(usize, Side)> = match (b, h) {
                        (Some(b), Some(h)) => b.intersection(h).copied().collect(),
                        _ => BTreeSet::new(),
                    };
                    if both.is_empty() {
                        b.into_iter().chain(h).flatten().copied().collect()
                    } else {
                        both
                    }
                }
                Place::Document => BTreeSet::new(),
            };
            let effect = f.rule.effect();
            let breaks = if uses.is_empty() && effect != Effect::Neutral {
                // Nothing uses it that we can see: count it against both, never let it through.
                Audiences::BOTH
            } else {
                uses.iter().fold(Audiences::NONE, |acc, (_, side)| acc.union(effect.breaks(*side)))
            };
            let group = match &f.place {
                Place::Operation(i, _) => Group::Operation(self.ops[*i].clone()),
                Place::Component(pointer) => {
                    Group::Component { pointer: pointer.clone(), name: component_name(pointer) }
                }
                Place::Document => Group::Document,
            };
            let mut uses: Vec<Use> =
                uses.into_iter().map(|(i, side)| Use { operation: self.ops[i].clone(), side }).collect();
            uses.sort();
            uses.dedup();
            changes.push(Change {
                rule: f.rule,
                breaks,
                subject: f.subject,
                detail: f.detail,
                path: f.path,
                group,
                uses,
            });
        }
        changes.sort_by(|a, b| {
            (&a.group, &a.path, a.rule, &a.subject, &a.detail).cmp(&(&b.group, &b.path, b.rule, &b.subject, &b.detail))
        });
        Comparison { changes }
    }
}

/// The operations of a document: (path, method, operation, path item).
fn operations(doc: &Value) -> Vec<(String, &'static str, &Value, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((path.clone(), method, op, item));
            }
        }
    }
    out
}

/// `/a/{id}` and `/a/{bridgeId}` are the same path.
fn normalize(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

struct Param<'a> {
    /// As written (the key of a header parameter is lower-case).
    name: String,
    value: &'a Value,
    pointer: String,
    reference: Option<String>,
}

/// Path-level and operation-level parameters by (location, name); header names are case-insensitive.
fn parameters<'a>(
    doc: &'a Value,
    item: &'a Value,
    op: &'a Value,
    op_pointer: &str,
) -> BTreeMap<(String, String), Param<'a>> {
    let item_pointer = op_pointer.rsplit_once('/').map(|(p, _)| p.to_owned()).unwrap_or_default();
    let mut out = BTreeMap::new();
    for (owner, pointer) in [(item, item_pointer), (op, op_pointer.to_owned())] {
        for (i, param) in owner.get("parameters").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let target = reference(param).map(str::to_owned);
            let value = target.as_deref().and_then(|r| resolve(doc, r)).unwrap_or(param);
            let location = value.get("in").and_then(Value::as_str).unwrap_or("?").to_owned();
            let name = value.get("name").and_then(Value::as_str).unwrap_or("?").to_owned();
            let key = if location == "header" { name.to_ascii_lowercase() } else { name.clone() };
            let pointer = match &target {
                Some(r) => r.clone(),
                None => pointer_child(&pointer_child(&pointer, "parameters"), &i.to_string()),
            };
            out.insert((location, key), Param { name, value, pointer, reference: target });
        }
    }
    out
}

/// The security alternatives of an operation (its own, or the document's); `[]` and `[{}]` accept requests
/// without credentials.
fn alternatives(doc: &Value, op: &Value) -> Vec<BTreeSet<String>> {
    let Some(requirements) = op.get("security").or_else(|| doc.get("security")).and_then(Value::as_array) else {
        return vec![BTreeSet::new()];
    };
    if requirements.is_empty() {
        return vec![BTreeSet::new()];
    }
    requirements
        .iter()
        .map(|r| {
            r.as_object()
                .into_iter()
                .flatten()
                .map(|(name, scopes)| {
                    let scopes: Vec<String> = scopes.as_array().into_iter().flatten().map(text).collect();
                    if scopes.is_empty() {
                        name.clone()
                    } else {
                        format!("{name}[{}]", scopes.join(","))
                    }
                })
                .collect()
        })
        .collect()
}

fn describe_alternative(alt: &BTreeSet<String>) -> String {
    if alt.is_empty() {
        "requests without a credential".to_owned()
    } else {
        alt.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" + ")
    }
}

/// `{nullable: true, allOf: [X]}` (the only way OpenAPI 3.0 makes a reference nullable) → (true, X, pointer).
fn unwrap_nullable<'v>(schema: &'v Value, pointer: &str) -> (bool, &'v Value, String) {
    if let Some([single]) = schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        let only_wrapper = schema
            .as_object()
            .is_some_and(|m| m.keys().all(|k| k == "allOf" || k == "nullable" || ANNOTATIONS.contains(&k.as_str())));
        if only_wrapper {
            return (true, single, pointer_child(&pointer_child(pointer, "allOf"), "0"));
        }
    }
    (false, schema, pointer.to_owned())
}

/// The JSON kind a schema describes, `union` for `oneOf`, `None` when it allows any.
fn kind(schema: &Value) -> Option<&str> {
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        return Some(t);
    }
    if schema.get("oneOf").is_some() {
        return Some("union");
    }
    if ["properties", "additionalProperties", "required", "allOf"].iter().any(|k| schema.get(k).is_some()) {
        return Some("object");
    }
    if schema.get("items").is_some() {
        return Some("array");
    }
    None
}

fn tag_name(tag: &Option<String>) -> String {
    match tag {
        Some(t) => format!("`{t}`"),
        None => "JSON kind".to_owned(),
    }
}

/// The variants of a union by key: discriminator value, or JSON kind for a kind union. Values are
/// (pointer, variant schema as written: usually a `$ref`).
fn variants<'v>(doc: &'v Value, union: &'v Value, pointer: &str) -> BTreeMap<String, (String, &'v Value)> {
    let mut out = BTreeMap::new();
    let members = union.get("oneOf").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if let Some(mapping) = union.pointer("/discriminator/mapping").and_then(Value::as_object) {
        let mapping_pointer = pointer_child(&pointer_child(pointer, "discriminator"), "mapping");
        for (key, target) in mapping {
            let target = target.as_str().unwrap_or_default();
            let schema = members.iter().find(|m| reference(m) == Some(target));
            if let Some(schema) = schema {
                out.insert(key.clone(), (pointer_child(&mapping_pointer, key), schema));
            }
        }
        return out;
    }
    for (i, member) in members.iter().enumerate() {
        let resolved = reference(member).and_then(|r| resolve(doc, r)).unwrap_or(member);
        let key = match kind(resolved) {
            Some("integer") => "number".to_owned(),
            Some(k) => k.to_owned(),
            None => format!("#{i}"),
        };
        out.insert(key, (pointer_child(&pointer_child(pointer, "oneOf"), &i.to_string()), member));
    }
    out
}

fn ref_name(reference: &str) -> String {
    unescape(reference.rsplit('/').next().unwrap_or(reference))
}

fn component_name(pointer: &str) -> String {
    let segments: Vec<String> = pointer.trim_start_matches("#/").split('/').map(unescape).collect();
    match segments.as_slice() {
        [_, kind, name] if kind == "schemas" => name.clone(),
        [_, kind, name] => format!("{kind}.{name}"),
        _ => pointer.to_owned(),
    }
}

/// For every component: the (operation, side) pairs that reach it through `$ref`s in `doc`.
fn usage<'v, 'a: 'v>(
    doc: &Value,
    op_values: impl Iterator<Item = Option<&'v OpValues<'a>>>,
    ops: &[OpRef],
) -> BTreeMap<String, BTreeSet<(usize, Side)>> {
    let mut out: BTreeMap<String, BTreeSet<(usize, Side)>> = BTreeMap::new();
    for (index, (values, op_ref)) in op_values.zip(ops).enumerate() {
        let Some(values) = values else { continue };
        let request = if op_ref.callback.is_some() { Side::Response } else { Side::Request };
        let mut roots: Vec<(&Value, Side)> = vec![];
        for owner in [values.item, values.op] {
            if let Some(p) = owner.get("parameters") {
                roots.push((p, request));
            }
        }
        if let Some(body) = values.op.get("requestBody") {
            roots.push((body, request));
        }
        if let Some(responses) = values.op.get("responses") {
            roots.push((responses, request.flip()));
        }
        for (root, side) in roots {
            reach(doc, root, index, side, &mut out);
        }
        if op_ref.callback.is_none() {
            for scheme in alternatives(doc, values.op).iter().flatten() {
                let name = scheme.split('[').next().unwrap_or(scheme);
                out.entry(pointer_child("#/components/securitySchemes", name)).or_default().insert((index, request));
            }
        }
    }
    out
}

fn reach(doc: &Value, value: &Value, index: usize, side: Side, out: &mut BTreeMap<String, BTreeSet<(usize, Side)>>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                if out.entry(r.to_owned()).or_default().insert((index, side)) {
                    if let Some(target) = resolve(doc, r) {
                        reach(doc, target, index, side, out);
                    }
                }
            }
            for (key, child) in map {
                if key != "$ref" {
                    reach(doc, child, index, side, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                reach(doc, item, index, side, out);
            }
        }
        _ => {}
    }
}
