//! How dashboard pages look: the layout every page shares (landmarks, a skip link, the navigation, the notice
//! of the last action), the palette (checked for WCAG AA contrast in the tests below), the stylesheet, and small
//! helpers that render API values. Everything is written with `maud`, which escapes every value it inserts.

use bridge_contract::operations::SandboxSetFaults;
use bridge_contract::{BridgeRecord, BridgeState, BridgeSwapState, DepositAddressBridgeState, Operation, WebhookEvent};
use bridge_server::decode::shape::{NumberRules, Shape};
use bridge_server::shapes;
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;
use serde_json::Value;

use super::session::Notice;

/// The palette: CSS custom property name, colour.
pub const PALETTE: &[(&str, &str)] = &[
    ("bg", "#ffffff"),
    ("fg", "#1f2328"),
    ("muted", "#57606a"),
    ("line", "#8c959f"),
    ("panel", "#f6f8fa"),
    ("head-bg", "#1f2328"),
    ("head-fg", "#ffffff"),
    ("accent", "#0a58ca"),
    ("accent-fg", "#ffffff"),
    ("focus", "#bf5700"),
    ("ok-bg", "#dafbe1"),
    ("ok-fg", "#116329"),
    ("bad-bg", "#ffebe9"),
    ("bad-fg", "#a40e26"),
    ("warn-bg", "#fff8c5"),
    ("warn-fg", "#6f4a00"),
];

/// The colour pairs the stylesheet uses, foreground on background, with the contrast each needs: 4.5 for text,
/// 3 for the focus ring and control borders (WCAG 2.1 AA, 1.4.3 and 1.4.11). Checked by this module's tests.
#[cfg(test)]
pub const PAIRS: &[(&str, &str, f64)] = &[
    ("fg", "bg", 4.5),
    ("fg", "panel", 4.5),
    ("muted", "bg", 4.5),
    ("muted", "panel", 4.5),
    ("accent", "bg", 4.5),
    ("accent", "panel", 4.5),
    ("accent-fg", "accent", 4.5),
    ("head-fg", "head-bg", 4.5),
    ("ok-fg", "ok-bg", 4.5),
    ("bad-fg", "bad-bg", 4.5),
    ("warn-fg", "warn-bg", 4.5),
    ("focus", "bg", 3.0),
    ("focus", "panel", 3.0),
    ("line", "bg", 3.0),
];

const STYLE: &str = include_str!("../../assets/dashboard/dashboard.css");

/// The stylesheet: the palette as custom properties, then the rules.
pub fn stylesheet() -> String {
    let mut css = String::from(":root {\n");
    for (name, colour) in PALETTE {
        css.push_str(&format!("  --{name}: {colour};\n"));
    }
    css.push_str("}\n");
    css.push_str(STYLE);
    css
}

/// The pages in the navigation: path, label.
pub const NAV: &[(&str, &str)] = &[
    ("/dashboard/bridges", "Bridges"),
    ("/dashboard/addresses", "Deposit addresses"),
    ("/dashboard/events", "Events"),
    ("/dashboard/deliveries", "Webhook deliveries"),
    ("/dashboard/receiver-check", "Check a receiver"),
    ("/dashboard/clock", "Clock and project"),
];

/// One kind of a fault profile (`SandboxFaultProfile`) as the faults form shows it, read from the schema's decoder
/// tables (the body of `PUT /sandbox/faults`): its group (`requests`, `deliveries`), its name, and the bounds of its
/// duration (`ms`) when it has one. Named as `serve --faults` names it: `group.kind`.
pub struct FaultKind {
    pub group: &'static str,
    pub kind: &'static str,
    pub ms: Option<NumberRules>,
}

/// Every kind of `SandboxFaultProfile`, in the schema's order.
pub fn fault_kinds() -> Vec<FaultKind> {
    let body = shapes::by_operation_id(SandboxSetFaults::ID).and_then(|shapes| shapes.body.as_ref());
    let Some(Shape::Struct(profile)) = body.map(|body| body.shape) else { return Vec::new() };
    let mut kinds = Vec::new();
    for group in profile.fields {
        let Shape::Struct(group_shape) = group.shape else { continue };
        for kind in group_shape.fields {
            let Shape::Struct(fault) = kind.shape else { continue };
            let ms = fault.fields.iter().find(|f| f.name == "ms").and_then(|f| match f.shape {
                Shape::Number(rules) => Some(rules),
                _ => None,
            });
            kinds.push(FaultKind { group: group.name, kind: kind.name, ms });
        }
    }
    kinds
}

/// What a signed-in page needs from the session for its frame.
pub struct Frame<'a> {
    pub project: &'a str,
    pub csrf: &'a str,
    pub notice: Option<Notice>,
    /// The navigation entry of this page.
    pub current: &'a str,
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            // htmx's own indicator styles would be an inline style, which the page's policy refuses.
            meta name="htmx-config" content=r#"{"includeIndicatorStyles":false,"historyCacheSize":0}"#;
            title { (title) " · Bridge sandbox dashboard" }
            link rel="icon" href="data:,";
            link rel="stylesheet" href="/dashboard/assets/dashboard.css";
            script src="/dashboard/assets/htmx.min.js" defer {}
        }
    }
}

/// A page of a signed-in project: `live` is the part that updates by itself (polled every two seconds and
/// swapped in place), `controls` the forms beside it (never replaced while someone types).
pub fn page(frame: Frame<'_>, title: &str, controls: Markup, live: Markup, live_url: &str) -> Markup {
    let content = html! {
        (controls)
        div id="live" hx-get=(live_url) hx-trigger="every 2s" hx-select="#live" hx-swap="outerHTML" {
            (live)
        }
    };
    layout(frame, title, content)
}

/// A page of a signed-in project that does not update by itself: `controls`, then `content` (the answer of an
/// action shown once, such as a receiver check's report).
pub fn still_page(frame: Frame<'_>, title: &str, controls: Markup, content: Markup) -> Markup {
    layout(frame, title, html! { (controls) div id="content" { (content) } })
}

/// What every signed-in page shares: the skip link, the navigation, the notice of the last action, the footer.
fn layout(frame: Frame<'_>, title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    p.brand { "Bridge sandbox" }
                    nav aria-label="Dashboard" {
                        ul {
                            @for (path, label) in NAV {
                                li {
                                    @if *path == frame.current {
                                        a href=(path) aria-current="page" { (label) }
                                    } @else {
                                        a href=(path) { (label) }
                                    }
                                }
                            }
                        }
                    }
                    form.signout method="post" action="/dashboard/sign-out" {
                        input type="hidden" name="csrf" value=(frame.csrf);
                        span.project { "Project " strong { (frame.project) } }
                        button type="submit" { "Sign out" }
                    }
                }
                main id="main" tabindex="-1" {
                    h1 { (title) }
                    @if let Some(notice) = &frame.notice {
                        div.notice.ok[notice.ok].bad[!notice.ok] role="status" { (notice.text) }
                    }
                    (content)
                }
                footer { p { "Everything here goes through the sandbox's API, as the signed-in project. "
                    a href="/docs" { "API reference" } } }
            }
        }
    }
}

/// The sign-in page (and where every page sends a browser without a live session).
pub fn sign_in(error: Option<&str>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head("Sign in"))
            body {
                header.top { p.brand { "Bridge sandbox" } }
                main id="main" {
                    h1 { "Sign in to the dashboard" }
                    @if let Some(error) = error {
                        div.notice.bad role="alert" { (error) }
                    }
                    form.panel method="post" action="/dashboard/sign-in" {
                        label for="credential" { "Project token or API key" }
                        textarea id="credential" name="credential" rows="4" required
                            autocomplete="off" spellcheck="false"
                            aria-describedby="credential-help" {}
                        p id="credential-help" .help {
                            "Paste what "
                            code { "bridge-sandbox token --project my-app" }
                            " or "
                            code { "bridge-sandbox api-key --project my-app" }
                            " printed. The dashboard shows only that project, as the API would."
                        }
                        button type="submit" { "Sign in" }
                    }
                }
            }
        }
    }
}

/// A page that refuses an action (403, 400): nothing was changed.
pub fn refused(reason: &str) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head("Refused"))
            body {
                main id="main" {
                    h1 { "Refused" }
                    div.notice.bad role="alert" { (reason) " Nothing was changed." }
                    p { a href="/dashboard" { "Back to the dashboard" } }
                }
            }
        }
    }
}

/// The hidden CSRF field of a form.
pub fn csrf(token: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(token); }
}

/// A string member of a JSON object, or "".
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A member as shown in a cell: strings as they are, numbers and booleans written, null and absent as "—".
pub fn cell(v: &Value, key: &str) -> String {
    match v.get(key) {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The members of a record or event that are dates (`…At`, `…Date`), oldest first: its timeline.
pub fn dates(v: &Value) -> Vec<(String, String)> {
    let mut dates: Vec<(i64, String, String)> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.ends_with("At") || k.ends_with("Date"))
        .filter_map(|(k, d)| {
            let s = d.as_str()?;
            let ms = s.parse::<bridge_contract::DateString>().ok()?.millis();
            Some((ms, k.clone(), s.to_owned()))
        })
        .collect();
    dates.sort();
    dates.into_iter().map(|(_, k, s)| (k, s)).collect()
}

/// The latest date of a record or event ("its time"), or "".
pub fn latest_date(v: &Value) -> String {
    dates(v).pop().map(|(_, s)| s).unwrap_or_default()
}

/// JSON, pretty, for a `<pre>`.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// How a badge is coloured: how the record or event it names ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Paid out, or refunded.
    Ended,
    /// Failed, cancelled or rejected.
    Refused,
    /// Still on its way, or news along the way.
    Moving,
}

impl Tone {
    fn class(self) -> &'static str {
        match self {
            Tone::Ended => "badge ok",
            Tone::Refused => "badge bad",
            Tone::Moving => "badge warn",
        }
    }
}

/// The tone of a record's state: an exhaustive match over the schema's state unions, so a state added to the
/// schema is a compile error here until it is given one.
pub fn record_tone(record: &BridgeRecord) -> Tone {
    match record {
        BridgeRecord::Bridge(r) => match r.state {
            BridgeState::Executed(_) => Tone::Ended,
            BridgeState::Cancelled(_) | BridgeState::Failed(_) => Tone::Refused,
            BridgeState::Pending(_)
            | BridgeState::PendingConfirmation(_)
            | BridgeState::DepositAccepted(_)
            | BridgeState::Accepted(_) => Tone::Moving,
        },
        BridgeRecord::BridgeSwap(r) => match r.state {
            BridgeSwapState::Executed(_)
            | BridgeSwapState::SwapFailedRefunded(_)
            | BridgeSwapState::DepositReceivedAfterGracePeriodRefunded(_) => Tone::Ended,
            BridgeSwapState::Cancelled(_) | BridgeSwapState::SwapFailed(_) => Tone::Refused,
            BridgeSwapState::Pending(_)
            | BridgeSwapState::PendingConfirmation(_)
            | BridgeSwapState::DepositAccepted(_)
            | BridgeSwapState::Accepted(_)
            | BridgeSwapState::DepositReceivedAfterGracePeriod(_) => Tone::Moving,
        },
        BridgeRecord::DepositAddressBridge(r) => match r.state {
            DepositAddressBridgeState::Executed(_) => Tone::Ended,
            DepositAddressBridgeState::Failed(_) => Tone::Refused,
            DepositAddressBridgeState::Pending(_)
            | DepositAddressBridgeState::PendingConfirmation(_)
            | DepositAddressBridgeState::DepositAccepted(_)
            | DepositAddressBridgeState::Accepted(_) => Tone::Moving,
        },
    }
}

/// The tone of an event's kind, exhaustive over the schema's event kinds like [`record_tone`].
pub fn event_tone(event: &WebhookEvent) -> Tone {
    match event {
        WebhookEvent::BridgeExecuted(_) | WebhookEvent::BridgeRefunded(_) => Tone::Ended,
        WebhookEvent::BridgeCancelled(_)
        | WebhookEvent::DepositAddressBridgeRejected(_)
        | WebhookEvent::RoutingDepositAddressBridgeRejected(_) => Tone::Refused,
        WebhookEvent::BridgePending(_)
        | WebhookEvent::BridgeAccepted(_)
        | WebhookEvent::DepositAddressCreated(_)
        | WebhookEvent::DepositAddressDepositDetected(_)
        | WebhookEvent::DepositAddressDepositConfirming(_)
        | WebhookEvent::DepositAddressBridgeDelayed(_)
        | WebhookEvent::RoutingDepositAddressCreated(_)
        | WebhookEvent::RoutingDepositAddressBridgeDelayed(_)
        | WebhookEvent::SdaRefundCompleted(_)
        | WebhookEvent::WebhookTest(_) => Tone::Moving,
    }
}

/// A badge: `label` (escaped) in the colour of `tone`.
pub fn badge(label: &str, tone: Tone) -> Markup {
    html! { span class=(tone.class()) { (label) } }
}

/// A record (as the page shows it, JSON) as a badge of its state; a value that is not a record is shown uncoloured.
pub fn record_badge(record: &Value) -> Markup {
    let tone = BridgeRecord::deserialize(record).map(|r| record_tone(&r)).unwrap_or(Tone::Moving);
    badge(record.get("state").and_then(Value::as_str).unwrap_or_default(), tone)
}

/// An event (JSON) as a badge of its kind (`_tag`).
pub fn event_badge(event: &Value) -> Markup {
    let tone = WebhookEvent::deserialize(event).map(|e| event_tone(&e)).unwrap_or(Tone::Moving);
    badge(event.get("_tag").and_then(Value::as_str).unwrap_or_default(), tone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(c: u8) -> f64 {
        let c = c as f64 / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    }

    /// WCAG 2.1 relative luminance of `#rrggbb`.
    fn luminance(hex: &str) -> f64 {
        let h = hex.trim_start_matches('#');
        let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap();
        0.2126 * channel(byte(0)) + 0.7152 * channel(byte(2)) + 0.0722 * channel(byte(4))
    }

    fn contrast(a: &str, b: &str) -> f64 {
        let (la, lb) = (luminance(a), luminance(b));
        (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
    }

    fn colour(name: &str) -> &'static str {
        PALETTE.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no colour {name}")).1
    }

    #[test]
    fn the_contrast_formula_matches_known_values() {
        assert!((contrast("#000000", "#ffffff") - 21.0).abs() < 1e-9);
        assert!((contrast("#777777", "#ffffff") - 4.48).abs() < 0.01);
    }

    #[test]
    fn every_colour_pair_the_stylesheet_uses_meets_wcag_aa() {
        for (fg, bg, needed) in PAIRS {
            let ratio = contrast(colour(fg), colour(bg));
            assert!(ratio >= *needed, "{fg} on {bg}: {ratio:.2} < {needed}");
        }
    }

    #[test]
    fn the_stylesheet_uses_only_colours_of_the_palette() {
        let css = stylesheet();
        for line in STYLE.lines() {
            assert!(!line.contains('#') || line.trim_start().starts_with("/*"), "a colour outside the palette: {line}");
        }
        for (name, _) in PALETTE {
            assert!(css.contains(&format!("var(--{name})")), "--{name} is unused");
        }
    }

    #[test]
    fn values_are_escaped() {
        let markup = badge("<script>alert(1)</script>", Tone::Moving).into_string();
        assert!(!markup.contains("<script>"), "{markup}");
        assert!(markup.contains("&lt;script&gt;"));
    }

    #[test]
    fn dates_are_sorted_by_time() {
        let v = serde_json::json!({"createdAt": "2026-01-01T00:00:02.000Z", "executedAt": "2026-01-01T00:00:09.000Z",
            "commitmentDate": "2026-01-01T00:00:01.000Z", "state": "EXECUTED", "badAt": "soon"});
        let keys: Vec<_> = dates(&v).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["commitmentDate", "createdAt", "executedAt"]);
        assert_eq!(latest_date(&v), "2026-01-01T00:00:09.000Z");
    }
}
