//! The request pipeline every generated route runs: authenticate, decode (path, body, query), call the
//! [`BridgeApi`](crate::BridgeApi) method, encode its answer. Nothing here knows an operation by name; the
//! generated route table passes the operation's type and a closure that calls its method.

use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::response::{IntoResponse, Response};
use bridge_contract::js::JsValue;
use bridge_contract::{Encoded, ErrorResponse, HttpApiDecodeError, Issue, IssueTag, Operation, PropertyKey, Security};
use http::{header, HeaderMap, StatusCode};
use serde::{de::DeserializeOwned, Serialize};

use crate::admission::{Admission, Verdict};
use crate::auth::{authenticate_dyn, AuthFailure, Authenticator, Caller, DynAuthenticator};
use crate::body::{self, UnauthenticatedBody, Unread};
use crate::decode::engine::{self, ErrorsMode};
use crate::decode::shape::OperationShapes;
use crate::decode::{self, parts};
use crate::respond::{internal, json_text, status};
pub use crate::respond::{json, ErrorTag};
use crate::shapes;

/// Server settings.
#[derive(Clone)]
pub struct ServerConfig {
    /// First failing property only (the reference framework's default), or all of them.
    pub errors: ErrorsMode,
    /// Largest request body accepted; larger ones get 413 `PayloadTooLarge`. Default 1 MiB.
    pub body_limit: usize,
    /// How the body of an operation without authentication (read before any credential is checked) is bounded:
    /// 413 `PayloadTooLarge` beyond its limit, 408 `RequestTimeout` beyond its deadline. Default 4 KiB, 2 s.
    pub unauthenticated_body: UnauthenticatedBody,
    /// Asked after authentication, before decoding, whether the request is served now (a rate limit); `None`
    /// (the default) serves every request. See [`crate::admission`].
    pub admission: Option<Arc<dyn Admission>>,
}

impl ServerConfig {
    /// These settings with `admission` asked about every authenticated request. Routers made from clones of one
    /// configuration share it (one budget per project for [`crate::router`] and [`crate::sandbox_router`]).
    pub fn with_admission(mut self, admission: impl Admission) -> Self {
        self.admission = Some(Arc::new(admission));
        self
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            errors: ErrorsMode::First,
            body_limit: 1024 * 1024,
            unauthenticated_body: UnauthenticatedBody::default(),
            admission: None,
        }
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("errors", &self.errors)
            .field("body_limit", &self.body_limit)
            .field("unauthenticated_body", &self.unauthenticated_body)
            .field("admission", &self.admission.as_ref().map(|_| "custom"))
            .finish()
    }
}

struct Inner<A> {
    api: A,
    auth: Box<dyn DynAuthenticator>,
    config: ServerConfig,
}

/// The router's state: the implementation, the authenticator and the settings.
pub struct AppState<A>(Arc<Inner<A>>);

impl<A> Clone for AppState<A> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<A> AppState<A> {
    pub(crate) fn new(api: A, auth: impl Authenticator, config: ServerConfig) -> Self {
        Self(Arc::new(Inner { api, auth: Box::new(auth), config }))
    }
}

/// An owned handle to the implementation, moved into the future of one call.
pub struct ApiHandle<A>(Arc<Inner<A>>);

impl<A> Deref for ApiHandle<A> {
    type Target = A;
    fn deref(&self) -> &A {
        &self.0.api
    }
}

/// The decoded request of one operation.
pub struct Input<O: Operation> {
    pub path: O::Path,
    pub query: O::Query,
    pub body: O::Body,
}

/// The 200 answer of an operation marked `x-encoded-answer` in the schema: the value, encoded by the server, or
/// JSON the implementation already holds (`Encoded<T>`, e.g. put together from stored events with the answer
/// type's generated `encode_with`), served as it is. Both convert with `.into()`.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    Value(T),
    Encoded(Encoded<T>),
}

impl<T: DeserializeOwned> Answer<T> {
    /// The value, decoded if it was given encoded (for a wrapper that changes what another implementation
    /// answers).
    pub fn into_value(self) -> Result<T, serde_json::Error> {
        match self {
            Self::Value(value) => Ok(value),
            Self::Encoded(json) => json.decode(),
        }
    }
}

impl<T> From<T> for Answer<T> {
    fn from(value: T) -> Self {
        Self::Value(value)
    }
}

impl<T> From<Encoded<T>> for Answer<T> {
    fn from(json: Encoded<T>) -> Self {
        Self::Encoded(json)
    }
}

/// The operation a route of this crate served, in the extensions of its answer (whatever the answer), for the
/// layers around the router: metrics by operation, logs. A bounded set of values: the schema's operationIds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationId(pub &'static str);

/// Serves one operation. `R` is the operation's answer type in the trait: `O::Response`, or [`Answer`] of it for
/// an operation marked `x-encoded-answer`.
///
/// The answer carries [`OperationId`] (and [`ErrorTag`] when it is an error) in its extensions. The current
/// tracing span gets the fields `operation` (the operationId) and, once authenticated, `project`, if it declares
/// them (e.g. `tracing::info_span!("request", operation = tracing::field::Empty, project = tracing::field::Empty)`
/// made by the application's trace layer), so that every log line of the request names them.
pub async fn handle<O, A, F, Fut, R>(state: AppState<A>, request: Request, call: F) -> Response
where
    O: Operation,
    F: FnOnce(ApiHandle<A>, Caller, Input<O>) -> Fut,
    Fut: Future<Output = Result<R, O::Error>>,
    R: Into<Answer<O::Response>>,
{
    tracing::Span::current().record("operation", O::ID);
    let mut headers = HeaderMap::new();
    let mut response = match prepare::<O, A>(&state, request, &mut headers).await {
        Ok((caller, input)) => match call(ApiHandle(state.0.clone()), caller, input).await {
            Ok(answer) => match answer.into() {
                Answer::Value(value) => json(StatusCode::OK, &value),
                Answer::Encoded(text) => json_text(StatusCode::OK, text.into_string()),
            },
            Err(error) => json(status(error.status()), &error),
        },
        Err(response) => response,
    };
    response.headers_mut().extend(headers);
    response.extensions_mut().insert(OperationId(O::ID));
    response
}

/// Serves a deprecated alias (`x-alias-of`) with the method of the operation it aliases: the alias's request is
/// decoded with the alias's own schemas, then converted (member for member, through JSON) to the target's types;
/// the answer goes the other way, so members only the target has (`chainMetadata`) are dropped.
pub async fn handle_alias<Alias, Target, A, F, Fut, R>(state: AppState<A>, request: Request, call: F) -> Response
where
    Alias: Operation,
    Target: Operation,
    F: FnOnce(ApiHandle<A>, Caller, Input<Target>) -> Fut,
    Fut: Future<Output = Result<R, Target::Error>>,
    R: Into<Answer<Target::Response>>,
{
    tracing::Span::current().record("operation", Alias::ID);
    let mut headers = HeaderMap::new();
    let mut response = match prepare::<Alias, A>(&state, request, &mut headers).await {
        Ok((caller, input)) => match alias_input::<Alias, Target>(&input) {
            Ok(input) => alias_response::<Alias, Target>(call(ApiHandle(state.0.clone()), caller, input).await),
            Err(e) => internal(&format!("alias {} → {}: {e}", Alias::ID, Target::ID)),
        },
        Err(response) => response,
    };
    response.headers_mut().extend(headers);
    response.extensions_mut().insert(OperationId(Alias::ID));
    response
}

/// The alias's decoded request as the target's input (through JSON).
fn alias_input<Alias: Operation, Target: Operation>(input: &Input<Alias>) -> Result<Input<Target>, serde_json::Error> {
    Ok(Input { path: convert(&input.path)?, query: convert(&input.query)?, body: convert(&input.body)? })
}

/// The target's answer or error, encoded as the alias's.
fn alias_response<Alias: Operation, Target: Operation>(
    outcome: Result<impl Into<Answer<Target::Response>>, Target::Error>,
) -> Response {
    match outcome {
        Ok(answer) => match alias_answer::<Target, Alias>(answer.into()) {
            Ok(answer) => json(StatusCode::OK, &answer),
            Err(e) => internal(&format!("alias {} answer: {e}", Alias::ID)),
        },
        Err(error) => {
            let body = serde_json::to_vec(&error).unwrap_or_default();
            match Alias::Error::from_response(error.status(), &body) {
                Some(Ok(error)) => json(status(error.status()), &error),
                _ => internal(&format!("alias {} error {}", Alias::ID, error.status())),
            }
        }
    }
}

fn convert<T: Serialize, U: DeserializeOwned>(value: &T) -> Result<U, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(value)?)
}

/// The target's answer as the alias's answer type (through JSON).
fn alias_answer<Target: Operation, Alias: Operation>(
    answer: Answer<Target::Response>,
) -> Result<Alias::Response, serde_json::Error> {
    match answer {
        Answer::Value(value) => convert(&value),
        Answer::Encoded(text) => serde_json::from_str(text.as_str()),
    }
}

/// Whether a path has an empty segment (`/sda/deposit-addresses//ETHEREUM/public-status`): such a path matches
/// no route (404, empty body), as production answers, so no handler ever sees an empty path parameter.
pub fn has_empty_segment(path: &str) -> bool {
    path.strip_prefix('/').unwrap_or(path).split('/').any(str::is_empty) && path != "/"
}

/// Routing's last word (an empty path segment matches no route), then authentication, then admission (the
/// configured [`Admission`]'s [`Decision`](crate::admission::Decision) for an authenticated request: served now,
/// served after a wait, or answered 429 or 503; its headers go into `answer_headers`, for the answer whatever it
/// is), then decoding: path parameters, body, query.
async fn prepare<O: Operation, A>(
    state: &AppState<A>,
    request: Request,
    answer_headers: &mut HeaderMap,
) -> Result<(Caller, Input<O>), Response> {
    let inner = &state.0;
    let (mut head, body) = request.into_parts();
    if has_empty_segment(head.uri.path()) {
        return Err(StatusCode::NOT_FOUND.into_response());
    }
    let caller = authenticate_dyn(&*inner.auth, O::SECURITY, &head.headers).await.map_err(auth_failure)?;
    if !caller.project_id.is_empty() {
        tracing::Span::current().record("project", caller.project_id.as_str());
    }
    if let (Some(admission), false) = (&inner.config.admission, O::SECURITY == Security::None) {
        let decision = admission.decide(&caller, O::ID);
        *answer_headers = decision.headers;
        match decision.verdict {
            Verdict::Serve => {}
            Verdict::ServeAfter(wait) => tokio::time::sleep(wait).await,
            Verdict::TooManyRequests(throttled) => return Err(throttled.into_response()),
            Verdict::Unavailable(message) => return Err(crate::admission::unavailable(message)),
        }
    }
    let Some(shapes) = shapes::by_operation_id(O::ID) else {
        return Err(internal(&format!("no decoder tables for {}", O::ID)));
    };
    let mode = inner.config.errors;

    let path_value = match RawPathParams::from_request_parts(&mut head, &()).await {
        Ok(params) => parts::path_params(shapes.path_names.iter().copied().zip(params.iter().map(|(_, value)| value))),
        Err(rejection) => {
            return Err(decode_error(vec![whole_part_issue(format!(
                "Unable to read the path parameters: {rejection}"
            ))]))
        }
    };
    let path: O::Path = decode_part(shapes, shapes.path.map(|s| (s, &path_value)), mode).map_err(decode_error)?;

    let body: O::Body = match &shapes.body {
        None => typed(serde_json::Value::Null).map_err(decode_error)?,
        Some(body_shape) => {
            let bytes = match O::SECURITY {
                Security::None => inner.config.unauthenticated_body.read(&head.headers, body).await,
                _ => body::read(&head.headers, body, inner.config.body_limit).await,
            }
            .map_err(unread_body)?;
            let content_type = head.headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes());
            decode::body(body_shape, content_type, &bytes, mode).map_err(decode_error)?
        }
    };

    let query_value = parts::form(head.uri.query().unwrap_or_default().as_bytes());
    let query: O::Query = decode_part(shapes, shapes.query.map(|s| (s, &query_value)), mode).map_err(decode_error)?;
    Ok((caller, Input { path, query, body }))
}

fn decode_part<T: DeserializeOwned>(
    _ops: &OperationShapes,
    part: Option<(&'static crate::decode::shape::StructShape, &JsValue)>,
    mode: ErrorsMode,
) -> Result<T, Vec<Issue>> {
    match part {
        None => typed(serde_json::Value::Null),
        Some((shape, value)) => typed(engine::decode_struct(shape, value, mode)?),
    }
}

/// The decoded JSON into the operation's Rust type (see [`decode::typed`]).
fn typed<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Vec<Issue>> {
    decode::typed(value)
}

fn whole_part_issue(mut message: String) -> Issue {
    crate::credential::redact_in_place(&mut message);
    Issue { tag: IssueTag::Transformation, path: Vec::new(), message }
}

/// 400 `HttpApiDecodeError` with a readable summary of the issues as its `message`.
pub fn decode_error(issues: Vec<Issue>) -> Response {
    let message = summary(&issues);
    json(StatusCode::BAD_REQUEST, &HttpApiDecodeError { tag: Default::default(), message, issues })
}

/// One line per issue: `["postBridgeData"]["_tag"]: Expected "extended" | ..., actual "foo"`.
pub fn summary(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|issue| {
            let path: String = issue
                .path
                .iter()
                .map(|key| match key {
                    PropertyKey::String(s) => {
                        format!("[{}]", serde_json::to_string(s).unwrap_or_default())
                    }
                    PropertyKey::Number(n) => format!("[{n}]"),
                    PropertyKey::SymbolKey(k) => format!("[Symbol({})]", k.key),
                })
                .collect();
            if path.is_empty() {
                issue.message.clone()
            } else {
                format!("{path}: {}", issue.message)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn auth_failure(failure: AuthFailure) -> Response {
    match failure {
        AuthFailure::Invalid(message) => {
            json(StatusCode::BAD_REQUEST, &bridge_contract::InvalidJwt { tag: Default::default(), message })
        }
        AuthFailure::Rejected(message) => {
            json(StatusCode::UNAUTHORIZED, &bridge_contract::Unauthorized { tag: Default::default(), message })
        }
        AuthFailure::Unavailable(message) => {
            tracing::error!(%message, "authentication could not decide");
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                &bridge_contract::ServiceUnavailable { tag: Default::default(), message },
            )
        }
    }
}

/// A body that could not be read whole: over the limit (413 `PayloadTooLarge`), not received within the short
/// deadline of an operation without authentication (408 `RequestTimeout`), or cut short (its client went away,
/// or a body-read timeout of the application's layers fired): 503 `ServiceUnavailable`. Nothing was done. A
/// refused body is left unread, so the connection is closed after the answer (`Connection: close`).
fn unread_body(unread: Unread) -> Response {
    let mut response = match unread {
        Unread::TooLarge { limit } => payload_too_large(limit),
        Unread::TooSlow { timeout } => {
            let message = format!("the request body did not arrive whole within {} ms", timeout.as_millis());
            json(StatusCode::REQUEST_TIMEOUT, &bridge_contract::RequestTimeout { tag: Default::default(), message })
        }
        Unread::Failed(error) => {
            let message = format!("the request body could not be read: {error}");
            let body = bridge_contract::ServiceUnavailable { tag: Default::default(), message };
            return json(StatusCode::SERVICE_UNAVAILABLE, &body);
        }
    };
    response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
}

fn payload_too_large(limit: usize) -> Response {
    let message = format!("the request body is larger than {limit} bytes");
    json(StatusCode::PAYLOAD_TOO_LARGE, &bridge_contract::PayloadTooLarge { tag: Default::default(), message })
}

/// Unknown path or wrong method: 404 with an empty body, as the reference framework answers.
pub async fn not_found() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

/// The answer when a [`crate::BridgeApi`] method panics: logged, then 503 `ServiceUnavailable`.
pub fn panicked(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %what, "a request handler panicked");
    let body = bridge_contract::ServiceUnavailable {
        tag: Default::default(),
        message: "the service failed to answer this request".into(),
    };
    json(StatusCode::SERVICE_UNAVAILABLE, &body)
}
