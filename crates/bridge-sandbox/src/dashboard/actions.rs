//! The dashboard's actions (POST), each one operation of the API called as the signed-in project, through an
//! [`Action`] (session, cross-site checks, CSRF token). Each answers `303 See Other` back to its page, where a
//! notice says what the API answered (Post/Redirect/Get: a reload never repeats an action).

use std::collections::HashMap;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Path, Request, State as Extract};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use bridge_contract::*;
use bridge_server::SandboxApi;
use serde::Deserialize;
use serde_json::Value;

use bridge_server::body::Unread;

use super::guard::{parse_form, same_origin, throttled, Action};
use super::pages::api_error;
use super::session::{self, Credential, Notice};
use super::{session_cookie, session_id, store_failed, view, State};

#[derive(Deserialize)]
pub struct Empty {}

#[derive(Deserialize)]
pub struct SignInForm {
    credential: String,
}

/// How a pasted credential is read: a JWT (three dot-separated parts, the first starting `ey`) is a project
/// token; anything else is tried as an API key.
pub fn credential_of(pasted: &str) -> Credential {
    let pasted = pasted.trim();
    if pasted.starts_with("ey") && pasted.split('.').count() == 3 {
        Credential::Token(pasted.to_owned())
    } else {
        Credential::ApiKey(pasted.to_owned())
    }
}

/// `POST /dashboard/sign-in`: from this origin; within the budget of the client's address; its form read within
/// a few KiB and a short deadline; a credential the API accepts; within the budget of its project; a session
/// of that project (docs/operations.md, "Threats").
pub async fn sign_in(Extract(state): Extract<State>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    if let Err(refusal) = same_origin(headers) {
        return refusal.into_response();
    }
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    if let Err(over) = state.sign_in.admit_address(peer, headers) {
        return throttled(&over, view::sign_in(Some(&format!("{}.", over.message))));
    }
    let bounds = state.sign_in.limits.body;
    let body = match bounds.read(headers, body).await {
        Ok(body) => body,
        Err(unread) => return unread_form(unread),
    };
    let form: SignInForm = match parse_form(&body) {
        Ok(form) => form,
        Err(refusal) => return refusal.into_response(),
    };
    let credential = credential_of(&form.credential);
    let Some(caller) = state.verify(&credential).await else {
        // Written redacted, as every log line (the binary's log writer redacts too): enough to tell which key.
        let pasted = bridge_server::credential::redact(form.credential.trim());
        tracing::info!(credential = %pasted, "dashboard sign-in refused");
        let page = view::sign_in(Some(
            "This token or API key is not accepted (expired, malformed, or made by another sandbox).",
        ));
        return (StatusCode::UNAUTHORIZED, page).into_response();
    };
    if let Err(over) = state.sign_in.admit_project(&caller.project_id) {
        return throttled(&over, view::sign_in(Some(&format!("{}.", over.message))));
    }
    // A session that was signed in before is replaced, not kept beside the new one.
    if let Some(old) = session_id(headers) {
        if let Err(e) = state.sessions.end(&old).await {
            return store_failed(e);
        }
    }
    let id = match state.sessions.start(&caller.project_id, &credential).await {
        Err(e) => return store_failed(e),
        Ok(Ok(id)) => id,
        Ok(Err(full)) => {
            let seconds = full.retry_after.as_secs().max(1);
            let page = view::sign_in(Some(&format!(
                "The dashboard keeps as many sessions as it can ({}); try again in {seconds} s, when one ends.",
                session::MAX_SESSIONS
            )));
            return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, seconds.to_string())], page)
                .into_response();
        }
    };
    let mut response = Redirect::to("/dashboard/bridges").into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(headers, Some(&id)));
    response
}

/// A sign-in form that was not read: too large (413) or too slow (408), the connection closed after the answer
/// (what is left of the form is not read).
fn unread_form(unread: Unread) -> Response {
    let (status, text) = match unread {
        Unread::TooLarge { limit } => {
            (StatusCode::PAYLOAD_TOO_LARGE, format!("The form is larger than the {limit} bytes a sign-in may send."))
        }
        Unread::TooSlow { timeout } => (
            StatusCode::REQUEST_TIMEOUT,
            format!("The form did not arrive whole within {} ms; send it again.", timeout.as_millis()),
        ),
        Unread::Failed(e) => (StatusCode::BAD_REQUEST, format!("The form could not be read: {e}.")),
    };
    (status, [(header::CONNECTION, "close")], view::sign_in(Some(&text))).into_response()
}

/// `POST /dashboard/sign-out`: the session is deleted here, and the cookie in the browser.
pub async fn sign_out(Extract(state): Extract<State>, headers: HeaderMap, action: Action<Empty>) -> Response {
    if let Err(e) = state.sessions.end(&action.signed.id).await {
        return store_failed(e);
    }
    let mut response = Redirect::to("/dashboard").into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie(&headers, None));
    response
}

/// Leaves the notice for the session's next page and goes there (the action is done: a notice the store could
/// not keep is logged, and the page shows none).
async fn back(state: &State, id: &str, to: &str, notice: Result<String, String>) -> Response {
    let notice = match notice {
        Ok(text) => Notice { ok: true, text },
        Err(text) => Notice { ok: false, text },
    };
    if let Err(e) = state.sessions.notify(id, notice).await {
        tracing::warn!(error = %e, "dashboard: the action's notice could not be kept");
    }
    Redirect::to(to).into_response()
}

/// A form value as one of the schema's enum values.
fn enum_value<T: serde::de::DeserializeOwned>(value: &str) -> Result<T, String> {
    serde_json::from_value(Value::from(value)).map_err(|_| format!("unknown value {value:?}"))
}

#[derive(Deserialize)]
pub struct BridgeDepositForm {
    outcome: String,
}

/// `POST /dashboard/bridges/{id}/deposit`: `POST /sandbox/bridges/{id}/deposit`.
pub async fn deposit_bridge(
    Extract(state): Extract<State>,
    Path(id): Path<String>,
    action: Action<BridgeDepositForm>,
) -> Response {
    let to = format!("/dashboard/bridges/{}", encode(&id));
    let outcome = match enum_value::<SandboxBridgeOutcome>(&action.form.outcome) {
        Ok(o) => o,
        Err(e) => return back(&state, &action.signed.id, &to, Err(e)).await,
    };
    let body = SandboxBridgeDepositRequest { tx_hash: None, outcome: Some(outcome) };
    let path = SandboxDepositBridgePath { bridge_id: id };
    let done = state.sandbox.sandbox_deposit_bridge(action.signed.caller.clone(), path, body).await;
    let notice = done
        .map(|r| {
            let r = serde_json::to_value(&r).unwrap_or_default();
            format!("Deposit seen ({outcome}): the bridge is {}.", view::text(&r, "state"))
        })
        .map_err(|e| api_error(&e));
    back(&state, &action.signed.id, &to, notice).await
}

#[derive(Deserialize)]
pub struct AddressDepositForm {
    address: String,
    token: String,
    amount: String,
    outcome: String,
}

/// `POST /dashboard/addresses/deposit`: `POST /sandbox/deposit-addresses/{address}/{chain}/deposits`.
pub async fn deposit_address(Extract(state): Extract<State>, action: Action<AddressDepositForm>) -> Response {
    let to = "/dashboard/addresses";
    let f = &action.form;
    let parsed = (|| {
        let (chain, address) = f.address.split_once(':').ok_or("choose an address")?;
        let outcome = enum_value::<SandboxDepositOutcome>(&f.outcome)?;
        let amount =
            f.amount.trim().parse::<DecimalString>().map_err(|_| format!("{:?} is not an amount", f.amount))?;
        Ok::<_, String>((chain.to_owned(), address.to_owned(), outcome, amount))
    })();
    let (chain, address, outcome, amount) = match parsed {
        Ok(p) => p,
        Err(e) => return back(&state, &action.signed.id, to, Err(e)).await,
    };
    let path = SandboxDepositIntoAddressPath { deposit_address: address, deposit_chain: chain };
    let body =
        SandboxAddressDepositRequest { token: f.token.trim().to_owned(), amount, sender: None, outcome: Some(outcome) };
    let done = state.sandbox.sandbox_deposit_into_address(action.signed.caller.clone(), path, body).await;
    let notice = done.map(|_| format!("Deposit into the address simulated ({outcome}).")).map_err(|e| api_error(&e));
    back(&state, &action.signed.id, to, notice).await
}

/// `POST /dashboard/deliveries/{event}/resend`: `POST /sandbox/webhook-deliveries/{eventId}/resend`.
pub async fn resend(Extract(state): Extract<State>, Path(event): Path<String>, action: Action<Empty>) -> Response {
    let path = SandboxResendWebhookDeliveryPath { event_id: event.clone() };
    let done = state.sandbox.sandbox_resend_webhook_delivery(action.signed.caller.clone(), path).await;
    let notice = done
        .map(|r| {
            format!("Event {event}: {} delivery made due now; the next attempt follows within seconds.", r.deliveries)
        })
        .map_err(|e| api_error(&e));
    back(&state, &action.signed.id, "/dashboard/deliveries", notice).await
}

#[derive(Deserialize)]
pub struct RecoverForm {
    since: String,
}

/// `POST /dashboard/deliveries/recover`: `POST /sandbox/webhook-deliveries/recover`.
pub async fn recover(Extract(state): Extract<State>, action: Action<RecoverForm>) -> Response {
    let to = "/dashboard/deliveries";
    let since = match action.form.since.trim().parse::<DateString>() {
        Ok(since) => since,
        Err(_) => {
            return back(&state, &action.signed.id, to, Err(format!("{:?} is not a date", action.form.since))).await
        }
    };
    let done = state
        .sandbox
        .sandbox_recover_webhook_deliveries(action.signed.caller.clone(), SandboxWebhookRecoverRequest { since })
        .await;
    let notice = done.map(|r| format!("{} failed deliveries made due now.", r.deliveries)).map_err(|e| api_error(&e));
    back(&state, &action.signed.id, to, notice).await
}

#[derive(Deserialize)]
pub struct WebhookTestForm {
    url: String,
    message: Option<String>,
}

/// `POST /dashboard/webhook-test`: `POST /sandbox/webhook-test`.
pub async fn webhook_test(Extract(state): Extract<State>, action: Action<WebhookTestForm>) -> Response {
    let f = &action.form;
    let body = SandboxWebhookTestRequest {
        webhook_url: f.url.trim().to_owned(),
        message: f.message.clone().filter(|m| !m.is_empty()),
    };
    let done = state.sandbox.sandbox_send_webhook_test(action.signed.caller.clone(), body).await;
    let notice = done
        .map(|r| format!("Test event {} emitted; its delivery is listed below.", r.event_id))
        .map_err(|e| api_error(&e));
    back(&state, &action.signed.id, "/dashboard/deliveries", notice).await
}

#[derive(Deserialize)]
pub struct AdvanceForm {
    seconds: String,
}

/// `POST /dashboard/clock/advance`: `POST /sandbox/clock/advance`.
pub async fn advance_clock(Extract(state): Extract<State>, action: Action<AdvanceForm>) -> Response {
    let to = "/dashboard/clock";
    let ms = match action.form.seconds.trim().parse::<u64>().ok().and_then(|s| s.checked_mul(1000)) {
        Some(ms) => ms,
        None => {
            return back(
                &state,
                &action.signed.id,
                to,
                Err(format!("{:?} is not a number of seconds", action.form.seconds)),
            )
            .await
        }
    };
    let done =
        state.sandbox.sandbox_advance_clock(action.signed.caller.clone(), SandboxAdvanceClockRequest { ms }).await;
    let notice = done.map(|c| format!("The project's clock is now {}.", c.now)).map_err(|e| api_error(&e));
    back(&state, &action.signed.id, to, notice).await
}

#[derive(Deserialize)]
pub struct ResetForm {
    confirm: Option<String>,
}

/// `POST /dashboard/reset`: `POST /sandbox/reset`, once confirmed.
pub async fn reset(Extract(state): Extract<State>, action: Action<ResetForm>) -> Response {
    let to = "/dashboard/clock";
    if action.form.confirm.as_deref() != Some("yes") {
        return back(&state, &action.signed.id, to, Err("Tick the box to confirm the reset.".into())).await;
    }
    let done = state.sandbox.sandbox_reset_project(action.signed.caller.clone()).await;
    let notice = done
        .map(|r| {
            format!("The project was reset: {} bridges and {} events deleted.", r.deleted.bridges, r.deleted.events)
        })
        .map_err(|e| api_error(&e));
    back(&state, &action.signed.id, to, notice).await
}

/// `POST /dashboard/faults`: `PUT /sandbox/faults` with the form's shares (an empty share: that kind off) and
/// durations, decoded as the API decodes the body.
pub async fn set_faults(Extract(state): Extract<State>, action: Action<HashMap<String, String>>) -> Response {
    let to = "/dashboard/clock";
    let profile = match faults_of(&action.form) {
        Ok(profile) => profile,
        Err(e) => return back(&state, &action.signed.id, to, Err(e)).await,
    };
    let done = state.sandbox.sandbox_set_faults(action.signed.caller.clone(), profile).await;
    let notice = done
        .map(|f| match (f.profile.requests.is_some(), f.profile.deliveries.is_some()) {
            (false, false) => "No fault for this project now, whatever the sandbox's default.".to_owned(),
            _ => "Faults set: this project's requests and webhooks get them from now on.".to_owned(),
        })
        .map_err(|e| api_error(&e));
    back(&state, &action.signed.id, to, notice).await
}

/// The profile a faults form says: each kind with a share, with its duration when it has one.
fn faults_of(form: &HashMap<String, String>) -> Result<SandboxFaultProfile, String> {
    let mut profile = serde_json::Map::new();
    for k in view::fault_kinds() {
        let name = format!("{}.{}", k.group, k.kind);
        let Some(share) = form.get(&name).map(|v| v.trim()).filter(|v| !v.is_empty()) else { continue };
        let fraction: f64 = share.parse().map_err(|_| format!("{name}: {share:?} is not a share from 0 to 1"))?;
        let mut fault = serde_json::json!({ "fraction": fraction });
        if k.ms.is_some() {
            let ms = form.get(&format!("{name}.ms")).map(|v| v.trim()).unwrap_or_default();
            let ms: u64 = ms.parse().map_err(|_| format!("{name}: {ms:?} is not a number of milliseconds"))?;
            fault["ms"] = ms.into();
        }
        let group = profile.entry(k.group.to_owned()).or_insert_with(|| serde_json::json!({}));
        group[k.kind] = fault;
    }
    crate::infra::faults::decode_profile(&Value::Object(profile))
}

/// `POST /dashboard/faults/clear`: `DELETE /sandbox/faults`.
pub async fn clear_faults(Extract(state): Extract<State>, action: Action<Empty>) -> Response {
    let done = state.sandbox.sandbox_clear_faults(action.signed.caller.clone()).await;
    let notice =
        done.map(|_| "This project follows the sandbox's default faults again.".to_owned()).map_err(|e| api_error(&e));
    back(&state, &action.signed.id, "/dashboard/clock", notice).await
}

/// A path segment, percent-encoded (an id goes back into a `Location`).
fn encode(segment: &str) -> String {
    form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}
