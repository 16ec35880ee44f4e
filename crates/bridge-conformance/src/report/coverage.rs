//! What the proxy saw, per operation of the contract: requests, statuses seen against statuses documented,
//! violations grouped by rule and location with one example each (request and answer excerpts, credentials
//! redacted); the operations never exercised; the paths served by the upstream that the contract lacks.
//! [`Coverage`] collects while the proxy runs; [`Coverage::report`] is a [`TrafficReport`], written as JSON
//! (serde), JUnit XML ([`TrafficReport::junit`]) and HTML ([`crate::report::html`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};
use serde::{Deserialize, Serialize};

use crate::contract::contract;
use crate::contract::violation::Violation;

/// At most this many violation groups per operation, and paths the contract lacks, are kept.
const GROUP_LIMIT: usize = 100;
/// At most this many characters of each body in an example.
const EXAMPLE_BODY_LIMIT: usize = 2000;

/// An exchange as reports show it (credentials redacted, bodies cut).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Example {
    /// `POST /bridge/quote/user?x=1`, the headers, a blank line and the body.
    pub request: String,
    /// `200`, the headers, a blank line and the body.
    pub answer: String,
}

impl Example {
    /// An example from the parts of an exchange, credentials redacted ([`crate::contract::redact`]: the request line's
    /// target, every header, the bodies).
    pub fn new<'a>(
        request_line: &str,
        request_headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        request_body: &[u8],
        status: u16,
        answer_headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        answer_body: &[u8],
    ) -> Self {
        let text = |first: String, headers: Vec<(&'a str, &'a str)>, body: &[u8]| {
            let mut out = first;
            for (name, value) in &headers {
                out.push_str(&format!("\n{name}: {}", crate::contract::redact::header(name, value)));
            }
            out.push_str("\n\n");
            let value = |wanted: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(wanted)).map(|(_, v)| *v);
            let (content_type, encoding) = (value("content-type"), value("content-encoding"));
            out.push_str(&crate::contract::redact::shown_body(content_type, encoding, body, EXAMPLE_BODY_LIMIT));
            out
        };
        let request_line = match request_line.split_once(' ') {
            Some((method, target)) => format!("{method} {}", crate::contract::redact::target(target)),
            None => crate::contract::redact::text(request_line),
        };
        Self {
            request: text(request_line, request_headers.into_iter().collect(), request_body),
            answer: text(status.to_string(), answer_headers.into_iter().collect(), answer_body),
        }
    }
}

/// Violations of one rule at one location (array indices as `*`), with the first one's details.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ViolationGroup {
    pub rule: String,
    /// The location with array indices as `*` (`answer/items/*/amount`).
    pub at: String,
    pub count: u64,
    /// The first violation of the group.
    pub first: FirstViolation,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FirstViolation {
    pub at: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<String>,
    pub example: Example,
}

/// One operation of the contract.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OperationReport {
    pub operation: String,
    pub method: String,
    pub path: String,
    /// Tagged `sandbox`: only a sandbox serves it.
    pub sandbox_only: bool,
    pub requests: u64,
    /// Status → answers seen.
    pub statuses_seen: BTreeMap<String, u64>,
    pub statuses_documented: Vec<String>,
    pub violations: u64,
    pub groups: Vec<ViolationGroup>,
}

/// A method and path the contract lacks that the upstream served (answered other than 404 with an empty body).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnknownRoute {
    pub method: String,
    pub path: String,
    pub requests: u64,
    pub statuses_seen: BTreeMap<String, u64>,
}

/// The share of the contract's operations exercised.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CoverageFigure {
    pub exercised: usize,
    /// Operations counted: all but the sandbox helpers, unless the upstream is a sandbox (`--sandbox-helpers`).
    pub operations: usize,
    pub percent: f64,
}

/// Everything the proxy saw, as JSON (`GET /_conformance/report`), JUnit XML and HTML.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrafficReport {
    /// The upstream's base URL.
    pub upstream: String,
    /// When the report was made (RFC 3339).
    pub generated_at: String,
    pub duration_ms: u64,
    pub requests: u64,
    /// Requests the upstream did not answer (connection refused, reset: answered 502 by the proxy; not within
    /// `--upstream-timeout`: 504).
    pub upstream_errors: u64,
    pub violations: u64,
    pub coverage: CoverageFigure,
    /// Every operation of the contract, in the document's order.
    pub operations: Vec<OperationReport>,
    /// The `operationId`s of the counted operations that no request reached.
    pub never_exercised: Vec<String>,
    pub not_in_contract: Vec<UnknownRoute>,
}

#[derive(Default)]
struct OpStats {
    requests: u64,
    statuses: BTreeMap<u16, u64>,
    violations: u64,
    groups: Vec<ViolationGroup>,
}

#[derive(Default)]
struct State {
    requests: u64,
    upstream_errors: u64,
    violations: u64,
    ops: HashMap<&'static str, OpStats>,
    routes: BTreeMap<(String, String), UnknownRoute>,
    routes_dropped: u64,
}

/// Collects what the proxy sees (cheap to call from many connections at once).
pub struct Coverage {
    upstream: String,
    sandbox_helpers: bool,
    started: std::time::Instant,
    state: Mutex<State>,
}

/// `answer/items/3/amount` → `answer/items/*/amount`.
fn normalise(at: &str) -> String {
    at.split('/')
        .map(|s| if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) { "*" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

impl Coverage {
    /// `sandbox_helpers`: count the sandbox helpers in the coverage (the upstream is a sandbox).
    pub fn new(upstream: &str, sandbox_helpers: bool) -> Self {
        Self {
            upstream: crate::contract::redact::text(upstream),
            sandbox_helpers,
            started: std::time::Instant::now(),
            state: Mutex::new(State::default()),
        }
    }

    /// Records one exchange: its operation (`None`: no operation of the contract, `request_line` is
    /// `METHOD /path`), status and violations; `example` is made only when a new group of violations needs one.
    pub fn observe(
        &self,
        operation: Option<&'static str>,
        request_line: &str,
        status: u16,
        violations: &[Violation],
        example: impl FnOnce() -> Example,
    ) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.requests += 1;
        state.violations += violations.len() as u64;
        let Some(op) = operation else {
            if status == 404 && violations.is_empty() {
                return;
            }
            let (method, path) = request_line.split_once(' ').unwrap_or((request_line, ""));
            let key = (path.to_owned(), method.to_owned());
            let full = state.routes.len() >= GROUP_LIMIT;
            match state.routes.get_mut(&key) {
                Some(route) => {
                    route.requests += 1;
                    *route.statuses_seen.entry(status.to_string()).or_default() += 1;
                }
                None if full => state.routes_dropped += 1,
                None => {
                    let mut statuses_seen = BTreeMap::new();
                    statuses_seen.insert(status.to_string(), 1);
                    let route = UnknownRoute { method: key.1.clone(), path: key.0.clone(), requests: 1, statuses_seen };
                    state.routes.insert(key, route);
                }
            }
            return;
        };
        let stats = state.ops.entry(op).or_default();
        stats.requests += 1;
        *stats.statuses.entry(status).or_default() += 1;
        stats.violations += violations.len() as u64;
        let mut example = Some(example);
        let mut made: Option<Example> = None;
        for v in violations {
            let at = normalise(&v.at);
            let rule = v.rule.name();
            if let Some(group) = stats.groups.iter_mut().find(|g| g.rule == rule && g.at == at) {
                group.count += 1;
                continue;
            }
            if stats.groups.len() >= GROUP_LIMIT {
                continue;
            }
            if made.is_none() {
                made = example.take().map(|f| f());
            }
            stats.groups.push(ViolationGroup {
                rule: rule.to_owned(),
                at,
                count: 1,
                first: FirstViolation {
                    at: v.at.clone(),
                    message: v.message.clone(),
                    value: v.value.clone(),
                    example: made.clone().unwrap_or_default(),
                },
            });
        }
    }

    /// Records a request the upstream did not answer.
    pub fn upstream_error(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.requests += 1;
        state.upstream_errors += 1;
    }

    /// Exchanges seen so far.
    pub fn requests(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).requests
    }

    /// The report of everything seen so far.
    pub fn report(&self) -> TrafficReport {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut operations = Vec::new();
        let mut never = Vec::new();
        let (mut counted, mut exercised) = (0, 0);
        for op in contract().operations() {
            let empty = OpStats::default();
            let stats = state.ops.get(op.id).unwrap_or(&empty);
            let counts = self.sandbox_helpers || !op.sandbox_only;
            if counts {
                counted += 1;
                if stats.requests > 0 {
                    exercised += 1;
                } else {
                    never.push(op.id.to_owned());
                }
            }
            operations.push(OperationReport {
                operation: op.id.to_owned(),
                method: op.method.to_owned(),
                path: op.path.to_owned(),
                sandbox_only: op.sandbox_only,
                requests: stats.requests,
                statuses_seen: stats.statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
                statuses_documented: contract().documented_statuses(op),
                violations: stats.violations,
                groups: stats.groups.clone(),
            });
        }
        let percent = if counted == 0 { 100.0 } else { (exercised as f64 * 1000.0 / counted as f64).round() / 10.0 };
        TrafficReport {
            upstream: self.upstream.clone(),
            generated_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            duration_ms: self.started.elapsed().as_millis() as u64,
            requests: state.requests,
            upstream_errors: state.upstream_errors,
            violations: state.violations,
            coverage: CoverageFigure { exercised, operations: counted, percent },
            operations,
            never_exercised: never,
            not_in_contract: state.routes.values().cloned().collect(),
        }
    }
}

impl TrafficReport {
    /// JUnit XML: suite `operations`, one test case per operation (a failure listing its violation groups; skipped
    /// when never exercised), and suite `not-in-contract`, one failing test case per path the contract lacks.
    pub fn junit(&self) -> anyhow::Result<String> {
        let mut report = JunitReport::new("bridge-conformance-proxy");
        report.set_time(Duration::from_millis(self.duration_ms));
        let mut suite = TestSuite::new("operations");
        suite.add_property(quick_junit::Property::new("upstream", self.upstream.as_str()));
        for op in &self.operations {
            let status = if op.requests == 0 {
                let mut s = TestCaseStatus::skipped();
                s.set_message("never exercised");
                s
            } else if op.violations == 0 {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!("{} violation(s) in {} request(s)", op.violations, op.requests));
                let lines: Vec<String> = op
                    .groups
                    .iter()
                    .map(|g| format!("{} x{} at {}: {}", g.rule, g.count, g.first.at, g.first.message))
                    .collect();
                s.set_description(lines.join("\n"));
                s
            };
            let mut case = TestCase::new(format!("{} {} ({})", op.method, op.path, op.operation), status);
            case.set_classname("operations");
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
        let mut routes = TestSuite::new("not-in-contract");
        for r in &self.not_in_contract {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!("served {} time(s) but no operation of the contract", r.requests));
            let mut case = TestCase::new(format!("{} {}", r.method, r.path), s);
            case.set_classname("not-in-contract");
            routes.add_test_case(case);
        }
        report.add_test_suite(routes);
        Ok(report.to_string()?)
    }

    /// Status coverage of the exercised operations: (documented statuses seen, documented statuses).
    pub fn statuses_covered(&self) -> (usize, usize) {
        let (mut seen, mut documented) = (0, 0);
        for op in self.operations.iter().filter(|o| o.requests > 0) {
            documented += op.statuses_documented.len();
            seen += op.statuses_documented.iter().filter(|s| op.statuses_seen.contains_key(*s)).count();
        }
        (seen, documented)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::violation::Rule;

    #[test]
    fn exchanges_are_grouped_per_operation_and_rule() {
        let c = Coverage::new("http://127.0.0.1:1", false);
        let v = |at: &str| Violation::new("quoteBridge", Rule::DecimalString, at, "not a decimal");
        let example =
            || Example::new("POST /bridge/quote/user", [("authorization", "Bearer x")], b"{}", 200, [], b"{}");
        c.observe(Some("quoteBridge"), "POST /bridge/quote/user", 200, &[v("answer/items/0/a")], example);
        c.observe(Some("quoteBridge"), "POST /bridge/quote/user", 200, &[v("answer/items/7/a")], example);
        c.observe(Some("quoteBridge"), "POST /bridge/quote/user", 422, &[], example);
        c.observe(None, "GET /secret", 200, &[Violation::new("GET /secret", Rule::Route, "request", "m")], example);
        c.observe(None, "GET /nowhere", 404, &[], example);
        let r = c.report();
        assert_eq!((r.requests, r.violations), (5, 3));
        let quote = r.operations.iter().find(|o| o.operation == "quoteBridge").unwrap();
        assert_eq!(quote.requests, 3);
        assert_eq!(quote.statuses_seen.get("422"), Some(&1));
        assert_eq!(quote.groups.len(), 1);
        assert_eq!((quote.groups[0].at.as_str(), quote.groups[0].count), ("answer/items/*/a", 2));
        assert!(quote.groups[0].first.example.request.contains("authorization: [redacted]"));
        assert_eq!(r.not_in_contract.len(), 1);
        assert_eq!(r.coverage.exercised, 1);
        assert!(!r.never_exercised.contains(&"quoteBridge".to_owned()));
        assert!(!r.never_exercised.iter().any(|o| o.starts_with("sandbox")), "helpers are not counted");
        let xml = r.junit().unwrap();
        assert!(xml.contains("<skipped"), "{xml}");
        assert!(xml.contains(r#"message="2 violation(s) in 3 request(s)""#), "{xml}");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<TrafficReport>(&json).unwrap(), r);
    }
}
