//! The report as one self-contained HTML page: no script, no external asset (styles inline), readable without
//! colour (every state is also written), headings and table headers for screen readers. The proxy serves it at
//! `GET /_conformance/report?format=html` and writes it at exit (`--html FILE`); the runner's `--html FILE`
//! writes the same page with a section of its checks.

use std::fmt::Write as _;

use crate::contract::violation::Rule;
use crate::report::coverage::{OperationReport, TrafficReport};
use crate::report::Report;

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's styles (also the receiver check's page, [`crate::report::receiver`]).
pub(crate) const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --ok: #116329; --ok-bg: #dafbe1;
  --bad: #a40e26; --bad-bg: #ffebe9; --warn: #7d4e00; --warn-bg: #fff8c5; --chip: #eaeef2; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: #f6f8fa; }
header, main, footer { max-width: 1180px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 28px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 8px; }
p.meta { color: var(--muted); margin: 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
ul.cards { list-style: none; display: flex; flex-wrap: wrap; gap: 12px; padding: 0; margin: 20px 0 0; }
.cards li { background: #fff; border: 1px solid var(--line); border-left-width: 6px; border-radius: 8px;
  padding: 12px 16px; min-width: 200px; }
.cards li.ok { border-left-color: var(--ok); } .cards li.bad { border-left-color: var(--bad); }
.cards li.neutral { border-left-color: var(--muted); }
.figure { display: block; font-size: 26px; font-weight: 700; }
.label { color: var(--muted); font-size: 13px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 4px 20px 16px;
  margin-top: 20px; }
section h2 { border: 0; margin-top: 16px; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding-bottom: 6px; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td code, li code { overflow-wrap: anywhere; }
.chip { display: inline-block; border-radius: 10px; padding: 0 8px; margin: 1px 2px; font-size: 12px;
  background: var(--chip); color: var(--muted); white-space: nowrap; }
.chip.seen { background: var(--ok-bg); color: var(--ok); font-weight: 600; }
.chip.undocumented { background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.state { font-weight: 600; } .state.ok { color: var(--ok); } .state.bad { color: var(--bad); }
.state.none { color: var(--warn); }
details { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; background: #fff; }
summary { cursor: pointer; padding: 8px 12px; overflow-wrap: anywhere; }
summary .rule { font-weight: 700; color: var(--bad); }
details > div { padding: 0 12px 12px; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; margin: 4px 0 10px; }
.example { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
@media (max-width: 800px) { .example { grid-template-columns: 1fr; } }
footer { color: var(--muted); font-size: 13px; padding: 24px; }
a { color: #0550ae; }
"#;

/// A summary card: a figure and what it counts; `class` is `ok`, `bad` or `neutral`.
pub(crate) fn card(out: &mut String, class: &str, figure: &str, label: &str) {
    let _ = write!(
        out,
        r#"<li class="{class}"><span class="figure">{}</span><span class="label">{}</span></li>"#,
        escape(figure),
        escape(label)
    );
}

fn statuses(op: &OperationReport) -> String {
    let mut out = String::new();
    for s in &op.statuses_documented {
        match op.statuses_seen.get(s) {
            Some(n) => {
                let _ = write!(
                    out,
                    r#"<span class="chip seen" title="documented, seen {n} time(s)">{} ×{n}</span>"#,
                    escape(s)
                );
            }
            None => {
                let _ = write!(out, r#"<span class="chip" title="documented, not seen">{}</span>"#, escape(s));
            }
        }
    }
    for (s, n) in &op.statuses_seen {
        if !op.statuses_documented.contains(s) {
            let _ = write!(
                out,
                r#"<span class="chip undocumented" title="seen {n} time(s), not documented">{} ×{n} undocumented</span>"#,
                escape(s)
            );
        }
    }
    out
}

/// The report page: what the proxy saw (`traffic`) and, for the runner's run, its checks (`checks`).
pub fn page(traffic: &TrafficReport, checks: Option<&Report>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("Contract conformance: {}", traffic.upstream);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{}</title><link rel="icon" href="data:,"><style>{STYLE}</style></head><body>"#,
        escape(&title)
    );
    header(&mut out, traffic, checks);
    if let Some(report) = checks {
        checks_section(&mut out, report);
    }
    operations_section(&mut out, traffic);
    violations_section(&mut out, traffic);
    never_exercised_section(&mut out, traffic);
    not_in_contract_section(&mut out, traffic);
    rules_section(&mut out);
    out.push_str("</main>");
    let _ = write!(
        out,
        "<footer>bridge-conformance {} · contract <code>schema/openapi.yaml</code></footer></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// The heading, when and what was seen, and the summary cards.
fn header(out: &mut String, traffic: &TrafficReport, checks: Option<&Report>) {
    let seen = format!(
        "{} · {} request(s) in {:.1} s",
        traffic.generated_at,
        traffic.requests,
        traffic.duration_ms as f64 / 1000.0
    );
    let _ = write!(
        out,
        r#"<header><h1>Contract conformance report</h1><p class="meta">Upstream <code>{}</code> · {}</p>"#,
        escape(&traffic.upstream),
        escape(&seen)
    );
    out.push_str(r#"<ul class="cards" aria-label="Summary">"#);
    let c = &traffic.coverage;
    let full = c.exercised == c.operations;
    card(
        out,
        if full { "ok" } else { "bad" },
        &format!("{}%", c.percent),
        &format!("operations exercised ({} of {})", c.exercised, c.operations),
    );
    card(
        out,
        if traffic.violations == 0 { "ok" } else { "bad" },
        &traffic.violations.to_string(),
        "contract violations",
    );
    let (seen, documented) = traffic.statuses_covered();
    card(out, "neutral", &format!("{seen} / {documented}"), "documented statuses seen (exercised operations)");
    card(
        out,
        if traffic.not_in_contract.is_empty() { "ok" } else { "bad" },
        &traffic.not_in_contract.len().to_string(),
        "paths served that the contract lacks",
    );
    if traffic.upstream_errors > 0 {
        card(out, "bad", &traffic.upstream_errors.to_string(), "requests the upstream did not answer");
    }
    if let Some(report) = checks {
        card(
            out,
            if report.failed() == 0 { "ok" } else { "bad" },
            &format!("{} / {}", report.passed(), report.results.len()),
            "runner checks passed",
        );
    }
    out.push_str("</ul></header><main>");
}

fn never_exercised_section(out: &mut String, traffic: &TrafficReport) {
    out.push_str(r#"<section aria-labelledby="never"><h2 id="never">Operations never exercised</h2>"#);
    if traffic.never_exercised.is_empty() {
        out.push_str("<p>None: every counted operation was called at least once.</p>");
    } else {
        out.push_str("<ul>");
        for id in &traffic.never_exercised {
            let op = traffic.operations.iter().find(|o| &o.operation == id);
            let line = op.map(|o| format!("{} {}", o.method, o.path)).unwrap_or_default();
            let _ = write!(out, "<li><code>{}</code> <code>{}</code></li>", escape(id), escape(&line));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
}

fn not_in_contract_section(out: &mut String, traffic: &TrafficReport) {
    out.push_str(r#"<section aria-labelledby="lacks"><h2 id="lacks">Paths served that the contract lacks</h2>"#);
    if traffic.not_in_contract.is_empty() {
        out.push_str(
            "<p>None: every request that is no operation of the contract was answered 404 with an empty body.</p>",
        );
    } else {
        out.push_str(r#"<table><caption>Requests that are no operation of the contract but were answered</caption><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Requests</th><th scope="col">Statuses</th></tr></thead><tbody>"#);
        for r in &traffic.not_in_contract {
            let statuses: Vec<String> = r.statuses_seen.iter().map(|(s, n)| format!("{s} ×{n}")).collect();
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td><code>{}</code></td><td class="num">{}</td><td>{}</td></tr>"#,
                escape(&r.method),
                escape(&r.path),
                r.requests,
                escape(&statuses.join(", "))
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</section>");
}

fn rules_section(out: &mut String) {
    out.push_str(r#"<section aria-labelledby="rules"><h2 id="rules">Rules checked</h2><table><caption>Every exchange is checked against these rules of the contract</caption><thead><tr><th scope="col">Rule</th><th scope="col">What it checks</th></tr></thead><tbody>"#);
    for (rule, what) in Rule::ALL {
        let _ = write!(out, "<tr><td><code>{}</code></td><td>{}</td></tr>", rule.name(), escape(what));
    }
    out.push_str("</tbody></table></section>");
}

fn checks_section(out: &mut String, report: &Report) {
    out.push_str(r#"<section aria-labelledby="checks"><h2 id="checks">Runner checks</h2><table><caption>Checks per area</caption><thead><tr><th scope="col">Area</th><th scope="col">Passed</th><th scope="col">Failed</th></tr></thead><tbody>"#);
    for (area, passed, failed) in report.per_area() {
        let state = if failed == 0 {
            r#"<span class="state ok">all passed</span>"#
        } else {
            r#"<span class="state bad">failures</span>"#
        };
        let _ = write!(
            out,
            r#"<tr><td>{} {state}</td><td class="num">{passed}</td><td class="num">{failed}</td></tr>"#,
            escape(&area)
        );
    }
    out.push_str("</tbody></table>");
    let failures: Vec<_> = report.failures().collect();
    if !failures.is_empty() {
        out.push_str("<h3>Failed checks</h3>");
        for f in failures {
            let _ = write!(
                out,
                r#"<details><summary><span class="rule">FAIL</span> <code>{}</code></summary><div><pre>{}</pre></div></details>"#,
                escape(&f.name),
                escape(f.failure.as_deref().unwrap_or_default())
            );
        }
    }
    out.push_str("</section>");
}

fn operations_section(out: &mut String, traffic: &TrafficReport) {
    out.push_str(r#"<section aria-labelledby="operations"><h2 id="operations">Operations</h2><table><caption>Per operation of the contract: requests, statuses seen against statuses documented (documented and seen, documented only, or seen but undocumented), and violations</caption><thead><tr><th scope="col">Operation</th><th scope="col">Method and path</th><th scope="col">Requests</th><th scope="col">Statuses</th><th scope="col">Violations</th></tr></thead><tbody>"#);
    for op in &traffic.operations {
        let state = if op.requests == 0 {
            r#"<span class="state none">never exercised</span>"#.to_owned()
        } else if op.violations == 0 {
            r#"<span class="state ok">0</span>"#.to_owned()
        } else {
            format!(r##"<a class="state bad" href="#op-{}">{}</a>"##, escape(&op.operation), op.violations)
        };
        let helper = if op.sandbox_only { r#" <span class="chip">sandbox helper</span>"# } else { "" };
        let _ = write!(
            out,
            r#"<tr><th scope="row"><code>{}</code>{helper}</th><td><code>{} {}</code></td><td class="num">{}</td><td>{}</td><td class="num">{state}</td></tr>"#,
            escape(&op.operation),
            escape(&op.method),
            escape(&op.path),
            op.requests,
            statuses(op)
        );
    }
    out.push_str("</tbody></table></section>");
}

fn violations_section(out: &mut String, traffic: &TrafficReport) {
    out.push_str(r#"<section aria-labelledby="violations"><h2 id="violations">Violations</h2>"#);
    let with: Vec<&OperationReport> = traffic.operations.iter().filter(|o| !o.groups.is_empty()).collect();
    if with.is_empty() {
        out.push_str("<p>None: every exchange conformed to the contract.</p>");
    }
    for op in with {
        let _ = write!(
            out,
            r#"<h3 id="op-{}"><code>{}</code> · {} violation(s)</h3>"#,
            escape(&op.operation),
            escape(&op.operation),
            op.violations
        );
        for g in &op.groups {
            let value = g
                .first
                .value
                .as_deref()
                .map(|v| format!("<p>Offending value: <code>{}</code></p>", escape(v)))
                .unwrap_or_default();
            let _ = write!(
                out,
                r#"<details><summary><span class="rule">{}</span> at <code>{}</code> ×{}: {}</summary><div><p>First seen at <code>{}</code>: {}</p>{value}<div class="example"><div><h4>Request</h4><pre>{}</pre></div><div><h4>Answer</h4><pre>{}</pre></div></div></div></details>"#,
                escape(&g.rule),
                escape(&g.at),
                g.count,
                escape(&crate::contract::violation::bounded(&g.first.message, 160)),
                escape(&g.first.at),
                escape(&g.first.message),
                escape(&g.first.example.request),
                escape(&g.first.example.answer)
            );
        }
    }
    out.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::violation::Violation;
    use crate::report::coverage::{Coverage, Example};

    #[test]
    fn the_page_is_self_contained_and_escaped() {
        let c = Coverage::new("http://127.0.0.1:1/<x>", true);
        let v = Violation::new("quoteBridge", Rule::ClosedObject, "answer/extra", "unexpected <member>");
        c.observe(Some("quoteBridge"), "POST /bridge/quote/user", 200, &[v], || {
            Example::new(
                "POST /bridge/quote/user",
                [("authorization", "Bearer secret")],
                b"{}",
                200,
                [],
                b"{\"extra\":1}",
            )
        });
        let html = page(&c.report(), None);
        assert!(html.starts_with("<!doctype html><html lang=\"en\">"));
        for external in ["<script", "src=", "@import", "url(", "http://", "https://"] {
            assert!(!html.replace("http://127.0.0.1:1/&lt;x&gt;", "").contains(external), "{external} in the page");
        }
        assert_eq!(html.matches("<link").count(), 1, "only the empty inline icon");
        assert!(html.contains("&lt;member&gt;") && !html.contains("<member>"));
        assert!(html.contains("closed-object") && html.contains("answer/extra"));
        assert!(!html.contains("secret"), "credentials are redacted");
        assert!(html.contains("never exercised"));
    }
}
