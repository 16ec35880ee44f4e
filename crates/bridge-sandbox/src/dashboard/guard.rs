//! Protection against cross-site requests: every state-changing request is a POST that
//!
//! 1. the browser does not call cross-site: `Sec-Fetch-Site`, when sent, is `same-origin` (or `none`: typed by
//!    the user), and `Origin`, when sent, is this host (`http://` or `https://` and the `Host` header);
//! 2. carries the session's CSRF token in its form (`csrf`), compared in constant time.
//!
//! (The cookie's `SameSite=Strict` already keeps it off cross-site requests in current browsers; these checks do
//! not rely on it.) A refused request answers 403 and changes nothing. An action over the project's rate limit
//! (the API's, `serve --rate-limit`) answers 429 and changes nothing.

use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::session::same_secret;
use super::{view, Signed, State};

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    CrossSite,
    ForeignOrigin,
    MissingToken,
    WrongToken,
    BadForm(String),
}

impl Refusal {
    fn reason(&self) -> String {
        match self {
            Self::CrossSite => "The browser marked this request as cross-site.".into(),
            Self::ForeignOrigin => "The request came from a page of another origin.".into(),
            Self::MissingToken => "The form carried no CSRF token.".into(),
            Self::WrongToken => "The form's CSRF token is not this session's (reload the page).".into(),
            Self::BadForm(e) => {
                format!("The form could not be read: {}.", bridge_server::credential::redact(e))
            }
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let status = if matches!(self, Self::BadForm(_)) { StatusCode::BAD_REQUEST } else { StatusCode::FORBIDDEN };
        (status, view::refused(&self.reason())).into_response()
    }
}

/// Check 1: the request comes from a page of this origin, as far as the browser says.
pub fn same_origin(headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(site) = headers.get("sec-fetch-site") {
        if !matches!(site.as_bytes(), b"same-origin" | b"none") {
            return Err(Refusal::CrossSite);
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).ok_or(Refusal::ForeignOrigin)?;
        let origin = origin.to_str().map_err(|_| Refusal::ForeignOrigin)?;
        let ours = [format!("http://{host}"), format!("https://{host}")];
        if !ours.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Err(Refusal::ForeignOrigin);
        }
    }
    Ok(())
}

/// Check 2: the form's token is the session's.
pub fn token_matches(form_token: Option<&str>, session_token: &str) -> Result<(), Refusal> {
    match form_token {
        None | Some("") => Err(Refusal::MissingToken),
        Some(t) if same_secret(t, session_token) => Ok(()),
        Some(_) => Err(Refusal::WrongToken),
    }
}

#[derive(Deserialize)]
struct Token {
    csrf: Option<String>,
}

/// A checked state-changing request of a signed-in session: the session and the form `T`.
pub struct Action<T> {
    pub signed: Signed,
    pub form: T,
}

/// What stops an [`Action`]: no session (sign in first), or a refusal.
pub enum Stopped {
    SignIn(super::SignInFirst),
    Refused(Refusal),
    /// Over the project's rate limit (the API's).
    Throttled(bridge_server::Throttled),
}

impl IntoResponse for Stopped {
    fn into_response(self) -> Response {
        match self {
            Self::SignIn(s) => s.into_response(),
            Self::Refused(r) => r.into_response(),
            Self::Throttled(t) => {
                let page = view::refused(&format!("429 TooManyRequests: {}.", t.message));
                throttled(&t, page)
            }
        }
    }
}

/// `page`, answered 429 with the `Retry-After` of `refusal`.
pub fn throttled(refusal: &bridge_server::Throttled, page: maud::Markup) -> Response {
    let retry = refusal.retry_after_header().to_string();
    (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, retry)], page).into_response()
}

/// A form body as `T` (`application/x-www-form-urlencoded`).
pub fn parse_form<T: DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    serde_urlencoded::from_bytes(body).map_err(|e| Refusal::BadForm(e.to_string()))
}

/// The largest form accepted.
const MAX_FORM: usize = 64 * 1024;

impl<T: DeserializeOwned + Send> FromRequest<State> for Action<T> {
    type Rejection = Stopped;

    async fn from_request(req: Request, state: &State) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        same_origin(&parts.headers).map_err(Stopped::Refused)?;
        let signed = <Signed as axum::extract::FromRequestParts<State>>::from_request_parts(&mut parts, state)
            .await
            .map_err(Stopped::SignIn)?;
        let body = axum::body::to_bytes(body, MAX_FORM)
            .await
            .map_err(|e| Stopped::Refused(Refusal::BadForm(e.to_string())))?;
        let token: Token = parse_form(&body).map_err(Stopped::Refused)?;
        token_matches(token.csrf.as_deref(), &signed.csrf).map_err(Stopped::Refused)?;
        state.admit(&signed.caller).map_err(Stopped::Throttled)?;
        let form = parse_form(&body).map_err(Stopped::Refused)?;
        Ok(Action { signed, form })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_requests_from_this_origin_pass() {
        assert_eq!(same_origin(&headers(&[("host", "127.0.0.1:8080")])), Ok(()));
        assert_eq!(
            same_origin(&headers(&[
                ("host", "127.0.0.1:8080"),
                ("origin", "http://127.0.0.1:8080"),
                ("sec-fetch-site", "same-origin")
            ])),
            Ok(())
        );
        assert_eq!(
            same_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example")])),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            same_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8081")])),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(same_origin(&headers(&[("host", "h"), ("origin", "null")])), Err(Refusal::ForeignOrigin));
        assert_eq!(same_origin(&headers(&[("host", "h"), ("sec-fetch-site", "cross-site")])), Err(Refusal::CrossSite));
        assert_eq!(same_origin(&headers(&[("host", "h"), ("sec-fetch-site", "same-site")])), Err(Refusal::CrossSite));
    }

    #[test]
    fn the_token_must_be_the_sessions() {
        assert_eq!(token_matches(Some("abc"), "abc"), Ok(()));
        assert_eq!(token_matches(None, "abc"), Err(Refusal::MissingToken));
        assert_eq!(token_matches(Some(""), "abc"), Err(Refusal::MissingToken));
        assert_eq!(token_matches(Some("abd"), "abc"), Err(Refusal::WrongToken));
    }
}
