//! The dashboard's pages (GET). Each reads through the API's operations as the signed-in project and renders
//! the answers; an operation's error is shown as the API would answer it.

use axum::extract::{Path, Query, State as Extract};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use bridge_contract::ErrorResponse;
use bridge_contract::*;
use bridge_server::{BridgeApi, Caller, SandboxApi};
use maud::{html, Markup};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::webhook_url;

use super::view::{self, cell, csrf, latest_date, pretty, text};
use super::{SignInFirst, Signed, State};
use crate::service::Sandbox;

/// Most events a page reads from the feed (the newest are shown first).
pub const FEED_LIMIT: usize = 2_000;
/// Most rows a list shows.
const ROWS: usize = 200;

/// An operation's error as the API answers it: status, `_tag`, message.
pub fn api_error<E: ErrorResponse>(e: &E) -> String {
    let body = serde_json::to_value(e).unwrap_or_default();
    let notice = format!("{} {}: {}", e.status(), text(&body, "_tag"), text(&body, "message"));
    // As the API's error answers: a credential a message quotes is written redacted.
    bridge_server::credential::redact(&notice).into_owned()
}

fn json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// `/dashboard`: the bridges of a signed-in session, or the sign-in page.
pub async fn index(signed: Result<Signed, SignInFirst>) -> Response {
    match signed {
        Ok(_) => Redirect::to("/dashboard/bridges").into_response(),
        Err(_) => view::sign_in(None).into_response(),
    }
}

/// The project's event feed, oldest first (at most [`FEED_LIMIT`] events).
pub async fn feed(sandbox: &Sandbox, caller: &Caller) -> Result<Vec<Value>, String> {
    let mut events = Vec::new();
    let mut page_token = None;
    loop {
        let query = ListUserEventsQuery {
            since_timestamp: 0.into(),
            page_token: page_token.take(),
            page_size: Some(100.into()),
        };
        let page = sandbox.list_user_events(caller.clone(), query).await.map_err(|e| api_error(&e))?;
        let page = page.into_value().map_err(|e| e.to_string())?;
        events.extend(page.items.iter().map(json));
        match page.next_page_token {
            Some(next) if !page.items.is_empty() && events.len() < FEED_LIMIT => page_token = Some(next),
            _ => return Ok(events),
        }
    }
}

/// The project's delivery attempts, newest first.
async fn attempts(sandbox: &Sandbox, caller: &Caller) -> Result<Vec<WebhookDeliveryAttempt>, String> {
    let query = SandboxListWebhookDeliveriesQuery { event_id: None };
    Ok(sandbox.sandbox_list_webhook_deliveries(caller.clone(), query).await.map_err(|e| api_error(&e))?.items)
}

fn problem(message: &str) -> Markup {
    html! { div.notice.bad role="alert" { (message) } }
}

#[derive(Deserialize)]
pub struct BridgesQuery {
    state: Option<String>,
}

/// `/dashboard/bridges`: the project's bridges, newest first, filtered by state as the API filters.
pub async fn bridges(signed: Signed, Extract(state): Extract<State>, Query(q): Query<BridgesQuery>) -> Markup {
    let filter: Option<HistoryStateFilter> =
        q.state.as_deref().filter(|s| !s.is_empty()).and_then(|s| serde_json::from_value(Value::from(s)).ok());
    let query = ListBridgeHistoryQuery {
        page: 1.into(),
        limit: 50.into(),
        sort_by: HistorySortBy::CreatedAt,
        sort_direction: SortDirection::Desc,
        state: filter,
    };
    let live = match state.sandbox.list_bridge_history(signed.caller.clone(), query).await {
        Err(e) => problem(&api_error(&e)),
        Ok(page) => html! {
            div.table-wrap {
                table {
                    caption { "Bridges" @if let Some(f) = filter { " in state " (f.as_str()) } ": " (page.total_items) ", newest first" }
                    thead { tr { th scope="col" { "Bridge" } th scope="col" { "State" } th scope="col" { "Route" }
                        th scope="col" { "Amount in" } th scope="col" { "Created" } } }
                    tbody {
                        @for item in &page.items {
                            @let b = json(&item.bridge);
                            @let id = text(&b, "_id");
                            tr {
                                td { a.mono href={ "/dashboard/bridges/" (id) } { (id) } br; span.muted { (text(&b, "_tag")) } }
                                td { (view::record_badge(&b)) }
                                td { (text(&b, "chainIn")) " → " (text(&b, "chainOut")) }
                                td.num { (cell(&b, "amountIn")) " " (text(&b, "token")) }
                                td { (text(&b, "createdAt")) }
                            }
                        }
                        @if page.items.is_empty() {
                            tr { td colspan="5" { "No bridge yet: quote and commit one through the API." } }
                        }
                    }
                }
            }
        },
    };
    let selected = filter.map(|f| f.as_str()).unwrap_or("");
    let controls = html! {
        form.panel method="get" action="/dashboard/bridges" {
            div.field {
                label for="state" { "State" }
                select id="state" name="state" {
                    option value="" selected[selected.is_empty()] { "All states" }
                    @for f in HistoryStateFilter::ALL {
                        option value=(f.as_str()) selected[selected == f.as_str()] { (f.as_str()) }
                    }
                }
            }
            button type="submit" { "Filter" }
        }
    };
    let live_url = format!("/dashboard/bridges?state={selected}");
    view::page(signed.frame("/dashboard/bridges"), "Bridges", controls, live, &live_url)
}

fn attempts_table(caption: &str, attempts: &[&WebhookDeliveryAttempt], csrf_token: &str) -> Markup {
    let mut resendable = std::collections::HashSet::new();
    html! {
        div.table-wrap {
            table {
                caption { (caption) }
                thead { tr {
                    th scope="col" { "At" } th scope="col" { "Event" } th scope="col" { "Attempt" }
                    th scope="col" { "Result" } th scope="col" { "HTTP status" } th scope="col" { "Latency" }
                    th scope="col" { "Response (start)" } th scope="col" { "Next retry" } th scope="col" { "Resend" }
                } }
                tbody {
                    @for a in attempts {
                        @let event = a.event.as_ref().map(json).unwrap_or_default();
                        tr {
                            td { (a.at.to_string()) }
                            td {
                                (text(&event, "_tag")) br;
                                span.mono.muted { (a.event_id) } br;
                                span.mono.muted { (a.url) }
                            }
                            td.num { (a.attempt) }
                            td {
                                @if a.delivered { span.badge.ok { "delivered" } }
                                @else { span.badge.bad { "failed" } }
                                @if let Some(fault) = a.fault { " " span.badge.warn { "fault: " (fault.as_str()) } }
                                @if let Some(e) = &a.error { br; span.muted { (e) } }
                            }
                            td.num { @if let Some(s) = a.status { (s) } @else { "—" } }
                            td.num { @if let Some(ms) = a.latency_ms { (ms) " ms" } @else { "—" } }
                            td { @if let Some(b) = &a.response_body_start { code { (b) } } @else { "—" } }
                            td { @if let Some(n) = &a.next_attempt_at { (n.to_string()) } @else { "—" } }
                            td {
                                // One button per event, on its latest attempt (attempts are newest first).
                                @if resendable.insert(a.event_id.clone()) {
                                    form method="post" action={ "/dashboard/deliveries/" (a.event_id) "/resend" } {
                                        (csrf(csrf_token))
                                        button.secondary type="submit" id={ "resend-" (a.event_id) }
                                            aria-label={ "Resend event " (a.event_id) } { "Resend" }
                                    }
                                }
                            }
                        }
                    }
                    @if attempts.is_empty() {
                        tr { td colspan="9" { "No delivery attempt yet." } }
                    }
                }
            }
        }
    }
}

fn events_table(caption: &str, events: &[&Value]) -> Markup {
    html! {
        div.table-wrap {
            table {
                caption { (caption) }
                thead { tr { th scope="col" { "Kind" } th scope="col" { "Time" } th scope="col" { "Record id" }
                    th scope="col" { "Event" } } }
                tbody {
                    @for e in events {
                        tr {
                            td { (view::event_badge(e)) }
                            td { (latest_date(e)) }
                            td.mono { (text(e, "_id")) }
                            td { details { summary { "JSON" } pre { (pretty(e)) } } }
                        }
                    }
                    @if events.is_empty() { tr { td colspan="4" { "No event yet." } } }
                }
            }
        }
    }
}

/// `/dashboard/bridges/{id}`: one bridge, its timeline, the events it emitted and their deliveries.
pub async fn bridge(signed: Signed, Extract(state): Extract<State>, Path(id): Path<String>) -> Response {
    let path = GetBridgePath { bridge_id: id.clone() };
    let record = match state.sandbox.get_bridge(signed.caller.clone(), path).await {
        Ok(answer) => answer.into_value().map(|r| json(&r)).map_err(|e| e.to_string()),
        Err(e) => Err(api_error(&e)),
    };
    let title = format!("Bridge {id}");
    let live_url = format!("/dashboard/bridges/{id}");
    let record = match record {
        Ok(record) => record,
        Err(e) => {
            let page = view::page(signed.frame("/dashboard/bridges"), &title, html! {}, problem(&e), &live_url);
            return (StatusCode::NOT_FOUND, page).into_response();
        }
    };
    let events = feed(&state.sandbox, &signed.caller).await;
    let attempts = attempts(&state.sandbox, &signed.caller).await;
    let live = html! {
        dl.facts {
            dt { "State" } dd { (view::record_badge(&record)) }
            dt { "Kind" } dd { (text(&record, "_tag")) }
            dt { "Route" } dd { (text(&record, "chainIn")) " → " (text(&record, "chainOut")) }
            dt { "Amount" } dd { (cell(&record, "amountIn")) " in, " (cell(&record, "amountOut")) " out" }
            dt { "Depositor" } dd.mono { (text(&record, "depositor")) }
            dt { "Recipient" } dd.mono { (text(&record, "recipient")) }
        }
        h2 { "Timeline" }
        ol.timeline {
            @for (what, when) in view::dates(&record) {
                li { strong { (what) } " " (when) }
            }
        }
        h2 { "Events it emitted" }
        @match &events {
            Err(e) => (problem(e)),
            Ok(events) => {
                @let mine: Vec<&Value> = events.iter().filter(|e| text(e, "_id") == id).collect();
                (events_table("Oldest first", &mine))
            }
        }
        h2 { "Webhook deliveries" }
        @match &attempts {
            Err(e) => (problem(e)),
            Ok(attempts) => {
                @let mine: Vec<&WebhookDeliveryAttempt> = attempts.iter()
                    .filter(|a| a.event.as_ref().map(json).is_some_and(|e| text(&e, "_id") == id)).collect();
                (attempts_table("Attempts of this bridge's events, newest first", &mine, &signed.csrf))
            }
        }
    };
    let controls = html! {
        form.panel method="post" action={ "/dashboard/bridges/" (id) "/deposit" } {
            h2 { "Simulate the deposit" }
            (csrf(&signed.csrf))
            div.field {
                label for="outcome" { "Outcome" }
                select id="outcome" name="outcome" {
                    @for o in SandboxBridgeOutcome::ALL { option value=(o.as_str()) { (o.as_str()) } }
                }
            }
            button type="submit" { "Simulate deposit" }
            p.help { "POST /sandbox/bridges/{bridgeId}/deposit: a PENDING bridge moves on as the project's clock advances." }
        }
    };
    view::page(signed.frame("/dashboard/bridges"), &title, controls, live, &live_url).into_response()
}

/// `/dashboard/addresses`: deposit addresses with their deposits and refunds.
pub async fn addresses(signed: Signed, Extract(state): Extract<State>) -> Markup {
    let query = SearchDepositAddressesQuery {
        address_note: None,
        deposit_chain: None,
        destination_chain: None,
        destination_address: None,
        page_token: None,
        page_size: Some(50.into()),
    };
    let found = state.sandbox.search_deposit_addresses(signed.caller.clone(), query).await;
    let items = match &found {
        Ok(page) => page.items.clone(),
        Err(_) => vec![],
    };
    let mut sections = Vec::new();
    for item in &items {
        let history = state
            .sandbox
            .get_deposit_address_history(
                signed.caller.clone(),
                GetDepositAddressHistoryPath {
                    deposit_address: item.deposit_address.clone(),
                    deposit_chain: item.deposit_chain.clone(),
                },
                GetDepositAddressHistoryQuery { from: None, to: None },
            )
            .await
            .map_err(|e| api_error(&e));
        let refunds = state
            .sandbox
            .get_deposit_address_completed_refunds(
                signed.caller.clone(),
                GetDepositAddressCompletedRefundsPath {
                    deposit_address: item.deposit_address.clone(),
                    deposit_chain: item.deposit_chain.clone(),
                },
            )
            .await
            .map_err(|e| api_error(&e));
        sections.push(html! {
            section.panel aria-labelledby={ "a-" (item.deposit_chain) "-" (item.deposit_address) } {
                h2 id={ "a-" (item.deposit_chain) "-" (item.deposit_address) } {
                    (item.deposit_chain) " " span.mono { (item.deposit_address) }
                }
                dl.facts {
                    dt { "Destination" } dd { (item.destination_chain) " " span.mono { (item.destination_address.clone().unwrap_or_default()) } }
                    @if let Some(note) = &item.address_note { dt { "Note" } dd { (note) } }
                    @if let Some(url) = &item.webhook_url { dt { "Webhook" } dd.mono { (webhook_url::redacted(url)) } }
                }
                @match &history {
                    Err(e) => (problem(e)),
                    Ok(h) => {
                        div.table-wrap { table {
                            caption { "Deposits, and the bridges they started" }
                            thead { tr { th scope="col" { "Deposit" } th scope="col" { "Result" } th scope="col" { "Amount" }
                                th scope="col" { "Bridge" } th scope="col" { "Created" } } }
                            tbody {
                                @for entry in &h.bridges {
                                    @let d = json(entry);
                                    @let bridge = d.get("history").cloned().unwrap_or_default();
                                    tr {
                                        td.mono { (text(&d, "_id")) }
                                        td {
                                            @if text(&d, "_tag") == "accepted" { span.badge.ok { "accepted" } }
                                            @else { span.badge.bad { (text(&d, "_tag")) } br; span.muted { (cell(&d, "reason")) } }
                                        }
                                        td.num { (cell(&d, "amount")) " " (text(&d, "tokenSymbol")) }
                                        td {
                                            @if bridge.is_object() {
                                                a.mono href={ "/dashboard/bridges/" (text(&bridge, "_id")) } { (text(&bridge, "_id")) }
                                                " " (view::record_badge(&bridge))
                                            } @else { "—" }
                                        }
                                        td { (text(&d, "createdAt")) }
                                    }
                                }
                                @if h.bridges.is_empty() { tr { td colspan="5" { "No deposit yet." } } }
                            }
                        } }
                    }
                }
                @match &refunds {
                    Err(e) => (problem(e)),
                    Ok(r) => {
                        @if r.items.is_empty() { p.muted { "No completed refund." } }
                        @else {
                            details { summary { (r.items.len()) " completed refunds" } pre { (pretty(&json(&r.items))) } }
                        }
                    }
                }
            }
        });
    }
    let live = html! {
        @if let Err(e) = &found { (problem(&api_error(e))) }
        @if items.is_empty() && found.is_ok() { p { "No deposit address yet: create one with POST /deposit-address/v2 (the API)." } }
        @for s in &sections { (s) }
    };
    let controls = html! {
        @if !items.is_empty() {
            form.panel method="post" action="/dashboard/addresses/deposit" {
                h2 { "Simulate a deposit into an address" }
                (csrf(&signed.csrf))
                div.field {
                    label for="address" { "Address" }
                    select id="address" name="address" {
                        @for item in &items {
                            option value={ (item.deposit_chain) ":" (item.deposit_address) } {
                                (item.deposit_chain) " " (item.deposit_address)
                            }
                        }
                    }
                }
                div.field { label for="token" { "Token" } input id="token" name="token" value="USDC" required; }
                div.field { label for="amount" { "Amount" } input id="amount" name="amount" value="100" inputmode="decimal" required; }
                div.field {
                    label for="address-outcome" { "Outcome" }
                    select id="address-outcome" name="outcome" {
                        @for o in SandboxDepositOutcome::ALL { option value=(o.as_str()) { (o.as_str()) } }
                    }
                }
                button type="submit" { "Simulate deposit" }
            }
        }
    };
    view::page(signed.frame("/dashboard/addresses"), "Deposit addresses", controls, live, "/dashboard/addresses")
}

/// `/dashboard/events`: the event feed, newest first.
pub async fn events(signed: Signed, Extract(state): Extract<State>) -> Markup {
    let live = match feed(&state.sandbox, &signed.caller).await {
        Err(e) => problem(&e),
        Ok(events) => {
            let newest: Vec<&Value> = events.iter().rev().take(ROWS).collect();
            events_table(&format!("{} events, newest first (at most {ROWS} shown)", events.len()), &newest)
        }
    };
    view::page(signed.frame("/dashboard/events"), "Events", html! {}, live, "/dashboard/events")
}

/// `/dashboard/deliveries`: every delivery attempt, with resend, recover and a test webhook.
pub async fn deliveries(signed: Signed, Extract(state): Extract<State>) -> Markup {
    let now = state.sandbox.sandbox_get_clock(signed.caller.clone()).await.map(|c| c.now);
    let since = now
        .as_ref()
        .ok()
        .and_then(|n| DateString::from_millis(n.millis() - 3_600_000))
        .map(|d| d.to_string())
        .unwrap_or_default();
    let live = match attempts(&state.sandbox, &signed.caller).await {
        Err(e) => problem(&e),
        Ok(attempts) => {
            let all: Vec<&WebhookDeliveryAttempt> = attempts.iter().take(ROWS).collect();
            attempts_table(&format!("{} attempts, newest first", attempts.len()), &all, &signed.csrf)
        }
    };
    let controls = html! {
        div.forms {
            form method="post" action="/dashboard/webhook-test" {
                h2 { "Send a test webhook" }
                (csrf(&signed.csrf))
                div.field { label for="url" { "Receiver URL" } input id="url" name="url" type="url" required placeholder="http://127.0.0.1:9000/hook"; }
                div.field { label for="message" { "Message" } input id="message" name="message" value="test"; }
                button type="submit" { "Send test webhook" }
            }
            form method="post" action="/dashboard/deliveries/recover" {
                h2 { "Recover failed deliveries" }
                (csrf(&signed.csrf))
                div.field {
                    label for="since" { "Failed since (project clock)" }
                    input id="since" name="since" value=(since) required aria-describedby="since-help";
                }
                button type="submit" { "Recover" }
                p id="since-help" .help { "Every delivery not delivered whose latest attempt is at or after this time is tried again now." }
            }
        }
    };
    view::page(signed.frame("/dashboard/deliveries"), "Webhook deliveries", controls, live, "/dashboard/deliveries")
}

/// The project's fault profile as a table: each kind on (named as `serve --faults` names it), its share and
/// duration, and where the profile comes from.
fn faults_table(faults: &SandboxFaults) -> Markup {
    let profile = json(&faults.profile);
    let source = match faults.source {
        SandboxFaultSource::Project => "the project's own (PUT /sandbox/faults)",
        SandboxFaultSource::Default => "the sandbox's default (serve --faults)",
    };
    let on: Vec<_> = view::fault_kinds()
        .into_iter()
        .filter_map(|k| Some((format!("{}.{}", k.group, k.kind), profile.get(k.group)?.get(k.kind)?.clone())))
        .collect();
    html! {
        div.table-wrap {
            table id="faults" {
                caption { "Faults injected into this project's traffic: " (source) }
                thead { tr { th scope="col" { "Fault" } th scope="col" { "Share" } th scope="col" { "Duration" } } }
                tbody {
                    @for (name, fault) in &on {
                        tr {
                            td { code { (name) } }
                            td.num { (cell(fault, "fraction")) }
                            td.num { @if fault.get("ms").is_some() { (cell(fault, "ms")) " ms" } @else { "—" } }
                        }
                    }
                    @if on.is_empty() { tr { td colspan="3" { "None: every request and webhook is served as usual." } } }
                }
            }
        }
    }
}

/// The faults form: a share (0 to 1, empty for off) of each kind, and its duration within the schema's bounds,
/// as the profile has them now.
fn faults_form(faults: &SandboxFaults, csrf_token: &str) -> Markup {
    let profile = json(&faults.profile);
    html! {
        form.panel.faults method="post" action="/dashboard/faults" {
            h2 { "Faults (this project only)" }
            (csrf(csrf_token))
            @for k in view::fault_kinds() {
                @let fault = profile.get(k.group).and_then(|g| g.get(k.kind));
                @let name = format!("{}.{}", k.group, k.kind);
                @let id = format!("fault-{}-{}", k.group, k.kind);
                fieldset.fault {
                    legend { code { (name) } }
                    div.field {
                        label for=(id) { "Share (0–1)" }
                        input id=(id) name=(name) type="number" min="0" max="1" step="any"
                            value=(fault.map(|f| cell(f, "fraction")).unwrap_or_default());
                    }
                    @if let Some(rules) = k.ms {
                        div.field {
                            label for={ (id) "-ms" } { "Duration (ms)" }
                            input id={ (id) "-ms" } name={ (name) ".ms" } type="number" step="1"
                                min=[rules.minimum] max=[rules.maximum]
                                value=(fault.and_then(|f| f.get("ms")).and_then(Value::as_u64).map(|ms| ms.to_string()).unwrap_or_default());
                        }
                    }
                }
            }
            div.submit { button type="submit" { "Set faults" } }
            p.help { "PUT /sandbox/faults: only this project's API requests and webhooks; /sandbox/* and this page are never faulted. tooManyRequests answers 429, unavailable 503, delay serves late; duplicate sends a webhook twice, holdBack sends it after later ones, delay sends it late. Empty shares turn every fault off for this project." }
        }
        form.panel method="post" action="/dashboard/faults/clear" {
            (csrf(csrf_token))
            button.secondary type="submit" { "Use the sandbox's default" }
            p.help { "DELETE /sandbox/faults: forget this project's own faults." }
        }
    }
}

/// `/dashboard/clock`: the project's clock, advancing it, and resetting the project; its fault profile.
pub async fn clock(signed: Signed, Extract(state): Extract<State>) -> Markup {
    let faults = state.sandbox.sandbox_get_faults(signed.caller.clone()).await;
    let live = match state.sandbox.sandbox_get_clock(signed.caller.clone()).await {
        Err(e) => problem(&api_error(&e)),
        Ok(c) => html! {
            p { "The project's clock: " } p.clock id="clock-now" { (c.now.to_string()) }
            @match &faults { Ok(f) => (faults_table(f)), Err(e) => (problem(&api_error(e))) }
        },
    };
    let controls = html! {
        div.forms {
            form method="post" action="/dashboard/clock/advance" {
                h2 { "Advance the clock" }
                (csrf(&signed.csrf))
                div.field {
                    label for="seconds" { "Seconds" }
                    input id="seconds" name="seconds" type="number" min="0" step="1" value="60" required;
                }
                button type="submit" { "Advance clock" }
                p.help { "Only this project's clock moves; its bridges and retries move with it." }
            }
            form method="post" action="/dashboard/reset" {
                h2 { "Reset the project" }
                (csrf(&signed.csrf))
                div.field {
                    label { input type="checkbox" name="confirm" value="yes" required; " Delete every quote, bridge, address, event and delivery of this project" }
                }
                button type="submit" { "Reset project" }
            }
        }
        @if let Ok(f) = &faults { (faults_form(f, &signed.csrf)) }
    };
    view::page(signed.frame("/dashboard/clock"), "Clock and project", controls, live, "/dashboard/clock")
}
