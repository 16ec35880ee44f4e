//! `/dashboard`: a web dashboard of one project, served by the sandbox itself. Server-rendered HTML (`maud`,
//! which escapes every value) and htmx 2.0.11 (vendored in `assets/vendor/htmx/`, served from here; nothing is
//! downloaded at build or run time) that refreshes the data part of each page every two seconds.
//!
//! The interface to the rest of the sandbox is [`routes`]: the [`Sandbox`] and the API's authenticator. Every
//! page and action calls the sandbox's [`bridge_server::BridgeApi`] and [`bridge_server::SandboxApi`] methods
//! with the signed-in project's [`Caller`], exactly as the HTTP API does, so the project boundary is the API's
//! and there is nothing the dashboard can do that the API cannot.
//!
//! * Sign-in ([`session`]): a project token or an API key, verified by the API's own authenticator on every
//!   request; the session is a record in the store (served by every instance of a database, nothing usable in
//!   it without the cookie), its id in an `HttpOnly; SameSite=Strict; Path=/dashboard` cookie.
//!   The sandbox speaks plain HTTP, so the cookie is not `Secure`; behind an HTTPS proxy that sets
//!   `X-Forwarded-Proto: https` it is. Sign-ins are budgeted per client address and per project, their form is
//!   read within a few KiB and a short deadline ([`sign_in`]), and one project's sessions never end another's.
//! * Cross-site requests ([`guard`]): every state-changing request is a POST carrying the session's CSRF token
//!   (a hidden field), and is refused when the browser says it is cross-site (`Sec-Fetch-Site`) or its `Origin`
//!   is not this host.
//! * Rate limit: with `serve --rate-limit`, each action counts as one request of its project against the API's own
//!   budget (pages, which only read, do not), and is refused like the API refuses (429, nothing changed).
//! * Pages ([`pages`]) and actions ([`actions`]); "Check a receiver" ([`receiver_check`]: a form whose post answers
//!   the receiver check's report); the look ([`view`]).

pub mod actions;
pub mod guard;
pub mod pages;
pub mod receiver_check;
pub mod session;
pub mod sign_in;
pub mod view;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use bridge_server::{Admission, Authenticator, Caller};

use crate::infra::store::StoreError;
use crate::service::Sandbox;
use session::{Credential, Notice, Sessions};

const HTMX_JS: &str = include_str!("../../assets/vendor/htmx/htmx.min.js");

/// How a credential is verified: the API's authenticator, its future boxed.
type Verify = Arc<dyn Fn(Credential) -> Pin<Box<dyn Future<Output = Option<Caller>> + Send>> + Send + Sync>;

/// What the dashboard's handlers share.
pub struct Dashboard {
    pub sandbox: Sandbox,
    verify: Verify,
    /// The API's admission (the per-project rate limit), asked about every action.
    admission: Option<Arc<dyn Admission>>,
    pub sessions: Sessions,
    /// The sign-in budgets, and how the sign-in form is read.
    pub sign_in: sign_in::Gate,
}

pub type State = Arc<Dashboard>;

impl Dashboard {
    /// The caller a credential stands for, as the API's authenticator says (`None`: rejected, or the
    /// authenticator could not decide).
    pub async fn verify(&self, credential: &Credential) -> Option<Caller> {
        (self.verify)(credential.clone()).await
    }

    /// Whether an action of `caller` is served now (the API's admission, when it has one).
    pub fn admit(&self, caller: &Caller) -> Result<(), bridge_server::Throttled> {
        self.admission.as_ref().map_or(Ok(()), |a| a.admit(caller, "dashboard"))
    }
}

/// The dashboard's routes, all under `/dashboard`: over `sandbox`, signing in with what `auth` accepts within
/// `sign_in`'s limits, each action admitted by `admission` (the API's rate limit: an action counts as one request
/// of its project).
pub fn routes<S: Clone + Send + Sync + 'static>(
    sandbox: Sandbox,
    auth: impl Authenticator + Clone,
    admission: Option<Arc<dyn Admission>>,
    sign_in: sign_in::Limits,
) -> axum::Router<S> {
    let verify: Verify = Arc::new(move |credential| {
        let auth = auth.clone();
        Box::pin(async move {
            match credential {
                Credential::Token(token) => auth.verify_bearer(&token).await.ok(),
                Credential::ApiKey(key) => auth.verify_api_key(&key).await.ok(),
            }
        })
    });
    let sign_in = sign_in::Gate::new(sign_in);
    let sessions = Sessions::new(sandbox.core().store.clone());
    let state = Arc::new(Dashboard { sandbox, verify, admission, sessions, sign_in });
    axum::Router::new()
        .route("/dashboard", get(pages::index))
        .route("/dashboard/", get(|| async { Redirect::to("/dashboard") }))
        .route("/dashboard/sign-in", post(actions::sign_in))
        .route("/dashboard/sign-out", post(actions::sign_out))
        .route("/dashboard/assets/htmx.min.js", get(|| async { asset("text/javascript", HTMX_JS.to_owned()) }))
        .route("/dashboard/assets/dashboard.css", get(|| async { asset("text/css", view::stylesheet()) }))
        .route("/dashboard/bridges", get(pages::bridges))
        .route("/dashboard/bridges/{id}", get(pages::bridge))
        .route("/dashboard/bridges/{id}/deposit", post(actions::deposit_bridge))
        .route("/dashboard/addresses", get(pages::addresses))
        .route("/dashboard/addresses/deposit", post(actions::deposit_address))
        .route("/dashboard/events", get(pages::events))
        .route("/dashboard/deliveries", get(pages::deliveries))
        .route("/dashboard/deliveries/recover", post(actions::recover))
        .route("/dashboard/deliveries/{event}/resend", post(actions::resend))
        .route("/dashboard/webhook-test", post(actions::webhook_test))
        .route("/dashboard/receiver-check", get(receiver_check::page).post(receiver_check::check))
        .route("/dashboard/clock", get(pages::clock))
        .route("/dashboard/clock/advance", post(actions::advance_clock))
        .route("/dashboard/reset", post(actions::reset))
        .route("/dashboard/faults", post(actions::set_faults))
        .route("/dashboard/faults/clear", post(actions::clear_faults))
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(state)
}

fn asset(content_type: &'static str, body: String) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Every dashboard answer: scripts and styles from this origin only, never framed, never cached.
async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The session id in the request's cookie, if any.
pub fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == session::COOKIE)
        .map(|c| c.value().to_owned())
}

/// The `Set-Cookie` of a session (`id`), or of its removal (`None`).
pub fn session_cookie(headers: &HeaderMap, id: Option<&str>) -> HeaderValue {
    let https = headers.get("x-forwarded-proto").is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https"));
    let mut c = cookie::Cookie::build((session::COOKIE, id.unwrap_or("").to_owned()))
        .path("/dashboard")
        .http_only(true)
        .same_site(cookie::SameSite::Strict)
        .secure(https);
    if id.is_none() {
        c = c.max_age(cookie::time::Duration::ZERO);
    }
    HeaderValue::from_str(&c.build().to_string()).expect("a cookie of base64url characters is a header value")
}

/// A signed-in request: its session and the caller its credential stands for now.
pub struct Signed {
    pub id: String,
    pub caller: Caller,
    pub csrf: String,
    pub notice: Option<Notice>,
}

impl Signed {
    pub fn frame<'a>(&'a self, current: &'a str) -> view::Frame<'a> {
        view::Frame { project: &self.caller.project_id, csrf: &self.csrf, notice: self.notice.clone(), current }
    }
}

/// A request without a live session: sent to the sign-in page (htmx polls are told to load it whole), or, when
/// the store could not say, answered 503.
pub enum SignInFirst {
    Page { htmx: bool, forget: bool },
    StoreFailed,
}

/// A dashboard request the store failed: 503 and a page saying so (the failure is logged).
pub fn store_failed(error: StoreError) -> Response {
    tracing::error!(error = %error, "dashboard: the store failed");
    let page = view::refused("The sandbox store did not answer; try again in a moment.");
    (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "1")], page).into_response()
}

impl IntoResponse for SignInFirst {
    fn into_response(self) -> Response {
        let (htmx, forget) = match self {
            Self::Page { htmx, forget } => (htmx, forget),
            Self::StoreFailed => {
                let page = view::refused("The sandbox store did not answer; try again in a moment.");
                return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "1")], page).into_response();
            }
        };
        let mut response = if htmx {
            (StatusCode::OK, [("hx-redirect", "/dashboard")]).into_response()
        } else {
            Redirect::to("/dashboard").into_response()
        };
        if forget {
            response.headers_mut().insert(header::SET_COOKIE, session_cookie(&HeaderMap::new(), None));
        }
        response
    }
}

impl FromRequestParts<State> for Signed {
    type Rejection = SignInFirst;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Self, Self::Rejection> {
        let htmx = parts.headers.contains_key("hx-request");
        let failed = |error: StoreError| {
            tracing::error!(error = %error, "dashboard: the session store failed");
            SignInFirst::StoreFailed
        };
        let id = session_id(&parts.headers).ok_or(SignInFirst::Page { htmx, forget: false })?;
        let session = state.sessions.get(&id).await.map_err(failed)?.ok_or(SignInFirst::Page { htmx, forget: true })?;
        let verified = state.verify(&session.credential).await;
        let Some(caller) = verified.filter(|caller| caller.project_id == session.project) else {
            // Expired or no longer accepted: the session ends with it, on every instance.
            state.sessions.end(&id).await.map_err(failed)?;
            return Err(SignInFirst::Page { htmx, forget: true });
        };
        // A poll does not use up the notice of the last action.
        let notice = if htmx { None } else { state.sessions.take_notice(&id).await.map_err(failed)? };
        Ok(Signed { id, caller, csrf: session.csrf, notice })
    }
}
