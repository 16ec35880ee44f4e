//! `/dashboard/receiver-check`: "Check a receiver". The form takes a receiver's URL (and, optionally, a shorter
//! sender's timeout); posting it runs `POST /sandbox/webhook-receiver-checks` as the signed-in project and answers
//! the page with the report: a summary, every check with its severity and what happened, and each failed check
//! with why it matters and what was sent and came back (the report `bridge-conformance receiver` prints). The
//! check is synchronous and nothing is stored, so the report is the answer to the post, shown once (the page does
//! not poll); the form stays filled in to run it again.

use axum::extract::State as Extract;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bridge_contract::operations::SandboxCheckWebhookReceiverError;
use bridge_contract::{
    BadRequest, ErrorResponse as _, HttpApiDecodeError, ReceiverCheck, ReceiverCheckExchange, ReceiverCheckOutcome,
    ReceiverCheckReport, ReceiverCheckSeverity, SandboxReceiverCheckRequest,
};
use bridge_server::decode::shape::{BodyShape, Shape};
use bridge_server::decode::{self, ErrorsMode};
use bridge_server::serve::summary;
use bridge_server::SandboxApi;
use maud::{html, Markup};
use serde::Deserialize;
use serde_json::Value;

use crate::domain::webhook_url;
use crate::operations::receiver_check::BUDGET;
use crate::pipeline::delivery;

use super::guard::Action;
use super::pages::api_error;
use super::view::{self, csrf, Tone};
use super::{Signed, State};

const PATH: &str = "/dashboard/receiver-check";

#[derive(Deserialize)]
pub struct CheckForm {
    url: String,
    timeout_ms: Option<String>,
}

/// The request body's decoder table (generated from the schema): the form is decoded by it as the API decodes
/// the operation's JSON body, so its limits are the schema's and a value out of them gets the API's 400.
fn request_shape() -> &'static BodyShape {
    bridge_server::shapes::SANDBOX_CHECK_WEBHOOK_RECEIVER.body.as_ref().expect("the operation has a request body")
}

/// The schema's rules of the request member `name`.
fn member(name: &str) -> Option<&'static Shape> {
    match request_shape().shape {
        Shape::Struct(s) => s.fields.iter().find(|f| f.name == name).map(|f| &f.shape),
        _ => None,
    }
}

/// The schema's bounds of `timeoutMs` and largest `url`, as the form's input attributes.
struct Bounds {
    timeout_min: Option<f64>,
    timeout_max: Option<f64>,
    url_max: Option<u64>,
}

fn bounds() -> Bounds {
    let (timeout_min, timeout_max) = match member("timeoutMs") {
        Some(Shape::Number(rules)) => (rules.minimum, rules.maximum),
        _ => (None, None),
    };
    let url_max = match member("url") {
        Some(Shape::String(rules)) => rules.max_length,
        _ => None,
    };
    Bounds { timeout_min, timeout_max, url_max }
}

/// The form, filled in with what was last posted.
fn form(csrf_token: &str, url: &str, timeout_ms: &str) -> Markup {
    let bounds = bounds();
    html! {
        form.panel method="post" action=(PATH) {
            (csrf(csrf_token))
            div.field.wide {
                label for="receiver-url" { "Receiver URL" }
                input id="receiver-url" name="url" type="url" required value=(url) maxlength=[bounds.url_max]
                    placeholder="http://127.0.0.1:3000/webhooks/bridge" aria-describedby="receiver-help";
            }
            div.field {
                label for="timeout-ms" { "Sender's timeout (ms)" }
                input id="timeout-ms" name="timeout_ms" type="number" min=[bounds.timeout_min]
                    max=[bounds.timeout_max] step="1" value=(timeout_ms)
                    placeholder=(delivery::TIMEOUT.as_millis());
            }
            button type="submit" { "Check receiver" }
            p id="receiver-help" .help {
                "The sandbox sends the receiver signed deliveries as production would (every event kind; \
                 unsigned, signed with another key, changed after signing; a retry; out of order; a member and \
                 a kind it does not know; an hour-old ts) and reports what it did with each. It takes a few \
                 seconds, at most " (BUDGET.as_secs()) ". Nothing is stored. "
                code { "POST /sandbox/webhook-receiver-checks" }
            }
        }
    }
}

/// `GET /dashboard/receiver-check`: the form.
pub async fn page(signed: Signed) -> Markup {
    let intro = html! {
        p.muted { "No check run yet: give the URL your receiver listens on (the sandbox must reach it) and check it." }
    };
    view::still_page(signed.frame(PATH), "Check a receiver", form(&signed.csrf, "", ""), intro)
}

/// The form as the operation's request: `{"url", "timeoutMs"}` decoded by the API's own decoder. A timeout that
/// is not a number is passed on as the text it is, for the decoder to name.
fn request(posted: &CheckForm, timeout_text: &str) -> Result<SandboxReceiverCheckRequest, String> {
    let mut body = serde_json::Map::new();
    body.insert("url".into(), Value::from(posted.url.trim()));
    if !timeout_text.is_empty() {
        let timeout =
            timeout_text.parse::<serde_json::Number>().map_or_else(|_| Value::from(timeout_text), Value::from);
        body.insert("timeoutMs".into(), timeout);
    }
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    decode::body(request_shape(), Some(b"application/json"), &bytes, ErrorsMode::All).map_err(|issues| {
        let refused = BadRequest::from(HttpApiDecodeError::new(summary(&issues), issues));
        api_error(&SandboxCheckWebhookReceiverError::from(refused))
    })
}

/// `POST /dashboard/receiver-check`: runs the check and answers the page with its report (or the API's refusal).
pub async fn check(Extract(state): Extract<State>, action: Action<CheckForm>) -> Response {
    let Action { signed, form: posted } = action;
    let timeout_text = posted.timeout_ms.as_deref().map(str::trim).unwrap_or_default().to_owned();
    // Filled in again as given, but a password (which the check refuses) is never shown.
    let shown = form(&signed.csrf, &webhook_url::redacted(posted.url.trim()), &timeout_text);
    let answer = |status: StatusCode, content: Markup| {
        (status, view::still_page(signed.frame(PATH), "Check a receiver", shown.clone(), content)).into_response()
    };
    let request = match request(&posted, &timeout_text) {
        Ok(request) => request,
        Err(message) => return answer(StatusCode::BAD_REQUEST, problem(&message)),
    };
    match state.sandbox.sandbox_check_webhook_receiver(signed.caller.clone(), request).await {
        Ok(report) => answer(StatusCode::OK, report_view(&report)),
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY);
            answer(status, problem(&api_error(&e)))
        }
    }
}

fn problem(message: &str) -> Markup {
    html! { div.notice.bad role="alert" { (message) } }
}

fn passed(check: &ReceiverCheck) -> bool {
    check.outcome == ReceiverCheckOutcome::Passed
}

/// What came back for a delivery, on one line.
fn received(x: &ReceiverCheckExchange) -> String {
    let r = &x.received;
    let latency = r.latency_ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default();
    match (r.status, &r.error) {
        (Some(status), _) => {
            let flag = r.stale_flag.as_deref().map(|f| format!(" (X-Webhook-Stale: {f})")).unwrap_or_default();
            let body = r.body_start.as_deref().filter(|b| !b.trim().is_empty()).map(|b| format!("\n\n{b}"));
            format!("{status}{latency}{flag}{}", body.unwrap_or_default())
        }
        (None, Some(error)) => format!("no answer{latency}: {error}"),
        (None, None) => format!("no answer{latency}"),
    }
}

/// The report: the summary, the table of every check, and each failed check's deliveries.
fn report_view(report: &ReceiverCheckReport) -> Markup {
    let should_failed = report.failed - report.must_failed;
    let failed = report.checks.iter().any(|c| !passed(c));
    let tone = |bad: bool| if bad { Tone::Refused } else { Tone::Ended };
    html! {
        section aria-labelledby="report-heading" {
            h2 id="report-heading" { "Report" }
            p {
                "Receiver " code { (report.url) } " · started " (report.started_at.to_string())
                " · sender's timeout " (report.timeout_ms) " ms · " (report.checks.len()) " checks in "
                (report.duration_ms) " ms"
            }
            p.summary role="status" {
                (view::badge(&format!("{} passed", report.passed), Tone::Ended)) " "
                (view::badge(&format!("{} must failed", report.must_failed), tone(report.must_failed > 0))) " "
                (view::badge(&format!("{should_failed} should failed"), tone(should_failed > 0)))
                @if report.must_failed == 0 {
                    " The receiver meets every must." } @else { " A must failed: production would lose events or accept forged ones." }
            }
            div.table-wrap { table.checks {
                caption { "Every check, in order" }
                thead { tr { th scope="col" { "Outcome" } th scope="col" { "Severity" } th scope="col" { "What is checked" }
                    th scope="col" { "What happened" } } }
                tbody {
                    @for (i, check) in report.checks.iter().enumerate() {
                        tr.failed[!passed(check)] {
                            td {
                                @if passed(check) { (view::badge("passed", Tone::Ended)) }
                                @else { (view::badge("failed", Tone::Refused)) }
                            }
                            td { (severity_badge(check.severity)) }
                            th scope="row" {
                                @if passed(check) { (check.title) }
                                @else { a href={ "#" (anchor(i)) } { (check.title) } }
                            }
                            td { (check.detail) }
                        }
                    }
                }
            } }
            h2 { "Failed checks" }
            @if !failed { p { "None: the receiver did what production needs of it in every check." } }
            @for (i, check) in report.checks.iter().enumerate().filter(|(_, c)| !passed(c)) {
                details.panel open id=(anchor(i)) {
                    summary { (severity_badge(check.severity)) " " strong { (check.title) } }
                    p { (check.detail) }
                    p { strong { "Why it matters: " } (check.reason) }
                    @for (n, x) in check.exchanges.iter().enumerate() {
                        h3 { "Delivery " (n + 1) " of " (check.exchanges.len()) }
                        div.exchange {
                            div {
                                h4 { "Sent" }
                                pre {
                                    "POST (eventId " (x.sent.event_id) ")\n"
                                    @for h in &x.sent.headers { (h.name) ": " (h.value) "\n" }
                                    "\n" (x.sent.body_start)
                                }
                            }
                            div { h4 { "Received" } pre { (received(x)) } }
                        }
                    }
                }
            }
        }
    }
}

/// The id of the `i`th check's account among the failed checks (linked from its row).
fn anchor(i: usize) -> String {
    format!("check-{}", i + 1)
}

/// A check's severity, uncoloured (the outcome has the colour).
fn severity_badge(severity: ReceiverCheckSeverity) -> Markup {
    html! { span.badge.plain { (severity.as_str()) } }
}
