//! The receiver check's report (`bridge_contract::ReceiverCheckReport`, what `POST /sandbox/webhook-receiver-checks`
//! answers) in the formats `bridge-conformance receiver` writes: text (a line per check, and for each failed one
//! why it matters, what was sent and what came back), JUnit XML (one test case per check, named by what it checks;
//! every failed check a `<failure>`, `must` or `should`) and one self-contained HTML page in the style of the
//! proxy's report. JSON is the report itself.

use std::fmt::Write as _;
use std::time::Duration;

use bridge_contract::{
    ReceiverCheck, ReceiverCheckExchange, ReceiverCheckOutcome, ReceiverCheckReport, ReceiverCheckSeverity,
};
use quick_junit::{NonSuccessKind, Property, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use crate::report::html::{card, escape, STYLE};

fn passed(check: &ReceiverCheck) -> bool {
    check.outcome == ReceiverCheckOutcome::Passed
}

fn severity(check: &ReceiverCheck) -> &'static str {
    check.severity.as_str()
}

/// `N passed, M failed (K must, L should)`.
pub fn summary(report: &ReceiverCheckReport) -> String {
    let should = report.failed - report.must_failed;
    format!("{} passed, {} failed ({} must, {should} should)", report.passed, report.failed, report.must_failed)
}

/// What came back for a delivery: `500 in 3 ms: <body start>`, `no answer in 10005 ms: <why>`; on one line (the
/// body's white space collapsed) when `one_line`.
fn received(x: &ReceiverCheckExchange, one_line: bool) -> String {
    let r = &x.received;
    let latency = r.latency_ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default();
    match (r.status, &r.error) {
        (Some(status), _) => {
            let flag = r.stale_flag.as_deref().map(|f| format!(" (X-Webhook-Stale: {f})")).unwrap_or_default();
            let body = r.body_start.as_deref().map(|b| match one_line {
                true => b.split_whitespace().collect::<Vec<_>>().join(" "),
                false => b.to_owned(),
            });
            let body = body.filter(|b| !b.is_empty()).map(|b| format!(": {b}")).unwrap_or_default();
            format!("{status}{latency}{flag}{body}")
        }
        (None, Some(error)) => format!("no answer{latency}: {error}"),
        (None, None) => format!("no answer{latency}"),
    }
}

/// What was sent and what came back, as text lines (indented by `indent`).
fn exchange_lines(x: &ReceiverCheckExchange, indent: &str) -> String {
    let headers: Vec<String> = x.sent.headers.iter().map(|h| format!("{}: {}", h.name, h.value)).collect();
    format!(
        "{indent}sent: POST, eventId {}; {}\n{indent}      {}\n{indent}received: {}\n",
        x.sent.event_id,
        headers.join("; "),
        x.sent.body_start,
        received(x, true)
    )
}

/// The report as text: a heading, `PASS`/`FAIL` with the severity and what is checked for each check, under each
/// failed one what happened, why it matters and its deliveries, then the summary.
pub fn text(report: &ReceiverCheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Receiver check of {} (sender's timeout {} ms; {} checks in {} ms)\n",
        report.url,
        report.timeout_ms,
        report.checks.len(),
        report.duration_ms
    );
    for check in &report.checks {
        let verdict = if passed(check) { "PASS" } else { "FAIL" };
        let _ = writeln!(out, "{verdict} {:<6} {}", severity(check), check.title);
        if !passed(check) {
            let _ = writeln!(out, "       what: {}", check.detail);
            let _ = writeln!(out, "       why:  {}", check.reason);
            for x in &check.exchanges {
                out.push_str(&exchange_lines(x, "       "));
            }
        }
    }
    let _ = writeln!(out, "\n{}", summary(report));
    out
}

/// JUnit XML: one test suite, one test case per check named by what it checks (`classname` its severity), every
/// failed check a `<failure>` whose message is what happened and whose text adds why it matters and its
/// deliveries.
pub fn junit(report: &ReceiverCheckReport) -> anyhow::Result<String> {
    let mut junit = JunitReport::new("bridge-conformance receiver");
    let duration = Duration::from_millis(report.duration_ms);
    junit.set_time(duration);
    let mut suite = TestSuite::new("receiver-check");
    suite.add_property(Property::new("url", report.url.as_str()));
    suite.add_property(Property::new("timeout-ms", report.timeout_ms.to_string()));
    suite.add_property(Property::new("started-at", report.started_at.to_string()));
    for check in &report.checks {
        let status = if passed(check) {
            TestCaseStatus::success()
        } else {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let mut description = format!("{}\nwhy: {}\n", check.detail, check.reason);
            for x in &check.exchanges {
                description.push_str(&exchange_lines(x, ""));
            }
            status.set_message(format!("{}: {}", severity(check), check.detail)).set_description(description);
            status.set_type(severity(check));
            status
        };
        let mut case = TestCase::new(check.title.as_str(), status);
        case.set_classname(format!("receiver.{}", severity(check)));
        suite.add_test_case(case);
    }
    suite.set_time(duration);
    junit.add_test_suite(suite);
    Ok(junit.to_string()?)
}

/// The report as one self-contained HTML page (no script, no external asset), in the proxy report's style: the
/// summary, every check with its severity and outcome, and each failed one with why it matters and what was sent
/// and came back.
pub fn html(report: &ReceiverCheckReport) -> String {
    let mut out = String::with_capacity(32 * 1024);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Receiver check: {}</title><link rel="icon" href="data:,"><style>{STYLE}</style></head><body>"#,
        escape(&report.url)
    );
    let _ = write!(
        out,
        r#"<header><h1>Webhook receiver check</h1><p class="meta">Receiver <code>{}</code> · started {} · sender's timeout {} ms · {} checks in {:.1} s</p><ul class="cards" aria-label="Summary">"#,
        escape(&report.url),
        escape(&report.started_at.to_string()),
        report.timeout_ms,
        report.checks.len(),
        report.duration_ms as f64 / 1000.0
    );
    card(&mut out, if report.failed == 0 { "ok" } else { "neutral" }, &report.passed.to_string(), "checks passed");
    card(
        &mut out,
        if report.must_failed == 0 { "ok" } else { "bad" },
        &report.must_failed.to_string(),
        "must checks failed",
    );
    let should = report.failed - report.must_failed;
    card(&mut out, if should == 0 { "ok" } else { "bad" }, &should.to_string(), "should checks failed");
    out.push_str("</ul></header><main>");
    out.push_str(r#"<section aria-labelledby="checks"><h2 id="checks">Checks</h2><table><caption>Every check, in order: a must check failed means lost or forged events in production; a should check failed means trouble when production does what it may do</caption><thead><tr><th scope="col">Outcome</th><th scope="col">Severity</th><th scope="col">What is checked</th><th scope="col">What happened</th></tr></thead><tbody>"#);
    for check in &report.checks {
        let outcome = if passed(check) {
            r#"<span class="state ok">passed</span>"#.to_owned()
        } else {
            format!(r##"<a class="state bad" href="#check-{}">failed</a>"##, anchor(check))
        };
        let _ = write!(
            out,
            r#"<tr><td>{outcome}</td><td><span class="chip">{}</span></td><th scope="row">{}</th><td>{}</td></tr>"#,
            severity(check),
            escape(&check.title),
            escape(&check.detail)
        );
    }
    out.push_str("</tbody></table></section>");
    out.push_str(r#"<section aria-labelledby="failed"><h2 id="failed">Failed checks</h2>"#);
    let failed: Vec<&ReceiverCheck> = report.checks.iter().filter(|c| !passed(c)).collect();
    if failed.is_empty() {
        out.push_str("<p>None: the receiver did what production needs of it in every check.</p>");
    }
    for check in failed {
        let _ = write!(
            out,
            r#"<details id="check-{}" open><summary><span class="rule">{} failed</span> {}</summary><div><p>{}</p><p><strong>Why it matters:</strong> {}</p>"#,
            anchor(check),
            severity(check),
            escape(&check.title),
            escape(&check.detail),
            escape(&check.reason)
        );
        for (i, x) in check.exchanges.iter().enumerate() {
            let headers: Vec<String> = x.sent.headers.iter().map(|h| format!("{}: {}", h.name, h.value)).collect();
            let sent = format!("POST (eventId {})\n{}\n\n{}", x.sent.event_id, headers.join("\n"), x.sent.body_start);
            let _ = write!(
                out,
                r#"<h4>Delivery {} of {}</h4><div class="example"><div><h4>Sent</h4><pre>{}</pre></div><div><h4>Received</h4><pre>{}</pre></div></div>"#,
                i + 1,
                check.exchanges.len(),
                escape(&sent),
                escape(&received(x, false))
            );
        }
        out.push_str("</div></details>");
    }
    out.push_str("</section></main>");
    let _ = write!(
        out,
        "<footer>bridge-conformance {} · <code>POST /sandbox/webhook-receiver-checks</code> · {}</footer></body></html>",
        env!("CARGO_PKG_VERSION"),
        escape(&summary(report))
    );
    out
}

/// An id for a check's section: its name, and its event kind.
fn anchor(check: &ReceiverCheck) -> String {
    match &check.event_kind {
        Some(kind) => format!("{}-{}", check.name, kind),
        None => check.name.to_string(),
    }
}

/// Whether the report fails its gate: a `must` check failed.
pub fn must_failed(report: &ReceiverCheckReport) -> bool {
    report.checks.iter().any(|c| !passed(c) && c.severity == ReceiverCheckSeverity::Must)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::{
        DateString, ReceiverCheckHeader, ReceiverCheckName, ReceiverCheckReceived, ReceiverCheckSent,
    };

    fn check(name: ReceiverCheckName, severity: ReceiverCheckSeverity, outcome: ReceiverCheckOutcome) -> ReceiverCheck {
        ReceiverCheck {
            name,
            event_kind: None,
            title: format!("checks <{name}>"),
            severity,
            outcome,
            reason: "because".into(),
            detail: "answered 500".into(),
            exchanges: vec![ReceiverCheckExchange {
                sent: ReceiverCheckSent {
                    event_id: "e1".into(),
                    body_start: r#"{"event":{}}"#.into(),
                    headers: vec![ReceiverCheckHeader {
                        name: "content-type".into(),
                        value: "application/json".into(),
                    }],
                },
                received: ReceiverCheckReceived {
                    status: Some(500),
                    latency_ms: Some(3),
                    body_start: Some("<boom>".into()),
                    stale_flag: None,
                    error: None,
                },
            }],
        }
    }

    fn report() -> ReceiverCheckReport {
        let checks = vec![
            check(ReceiverCheckName::OtherKey, ReceiverCheckSeverity::Must, ReceiverCheckOutcome::Passed),
            check(ReceiverCheckName::Duplicate, ReceiverCheckSeverity::Should, ReceiverCheckOutcome::Failed),
            check(ReceiverCheckName::Timeout, ReceiverCheckSeverity::Must, ReceiverCheckOutcome::Failed),
        ];
        ReceiverCheckReport {
            url: "http://127.0.0.1:9/hooks".into(),
            started_at: DateString::from_millis(1_767_225_600_000).unwrap(),
            duration_ms: 812,
            timeout_ms: 10_000,
            passed: 1,
            failed: 2,
            must_failed: 1,
            checks,
        }
    }

    #[test]
    fn junit_has_a_test_case_per_check_and_a_failure_per_failed_check_whatever_its_severity() {
        let xml = junit(&report()).unwrap();
        assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
        assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
        assert!(xml.contains(r#"name="checks &lt;duplicate&gt;" classname="receiver.should""#), "{xml}");
        assert!(xml.contains(r#"message="must: answered 500""#), "{xml}");
    }

    #[test]
    fn text_and_html_show_each_failure_with_what_was_sent_and_what_came_back() {
        let text = text(&report());
        assert!(text.contains("PASS must   checks <otherKey>"), "{text}");
        assert!(text.contains("FAIL should checks <duplicate>"), "{text}");
        assert!(text.contains("received: 500 in 3 ms: <boom>"), "{text}");
        assert!(text.trim_end().ends_with("1 passed, 2 failed (1 must, 1 should)"), "{text}");
        let page = html(&report());
        for external in ["<script", "src=", "@import", "url(", "https://"] {
            assert!(!page.contains(external), "{external} in the page");
        }
        assert!(page.contains("&lt;boom&gt;") && !page.contains("<boom>"), "escaped");
        assert_eq!(page.matches("<details ").count(), 2);
        assert!(must_failed(&report()));
    }
}
