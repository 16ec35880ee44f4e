//! The error of every client call: a documented error answer decoded to the operation's error enum, an answer
//! the document does not describe (kept whole: status, headers, raw body), or a failure to send or receive.
//!
//! An error names the operation that failed ([`Error::operation`]; its `Display` starts with the `operationId`,
//! method and path) and why: the documented error's status, `_tag` and `message`, the undocumented status and
//! body, or the chain of causes of a communication failure. The operation is known from the error enum's type
//! ([`OperationError`], implemented by the generator for every `{Operation}Error`).
//!
//! Why not progenitor's `Error<E>` as is: progenitor decodes one error type per operation without looking at the
//! status, and when a body does not decode it keeps the bytes but drops the status
//! (`InvalidResponsePayload(Bytes, serde_json::Error)`). The generator therefore gives progenitor raw error bodies
//! and [`lift`] decodes them with [`ErrorResponse::from_response`] (status first, then body: the same decoder the
//! server's tests use), so a failed decode still reports the status and the exact bytes.

use std::fmt;

use bridge_contract::{ErrorResponse, Operation};
use bytes::Bytes;
use futures_util::StreamExt as _;
use progenitor_client::{ByteStream, ResponseValue};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;

/// What a client call can fail with; `E` is the operation's error enum
/// (`bridge_contract::operations::{Operation}Error`).
pub enum Error<E> {
    /// A documented error answer, decoded: `E` has one variant per documented status, each holding the body type
    /// of that status (for example a 422 of `quoteBridge` is
    /// `QuoteBridgeError::QuoteBridgeUnprocessable(QuoteBridgeUnprocessable::WithdrawLimitReached(..))`).
    /// [`ErrorResponse::status`] gives the status.
    Api(E),
    /// An answer the document does not describe: a status it does not list for the operation (a proxy's 502, a
    /// production 404 for a sandbox-only path), or a documented status whose body does not decode as documented
    /// (including a 200 whose body is not the documented success type). Status, headers and the raw body are
    /// kept.
    UnexpectedResponse(Box<UnexpectedResponse>),
    /// The request could not be sent or the answer not received (connection refused, timeout, TLS, a body cut
    /// short).
    Communication(reqwest::Error),
    /// The request could not be built: the token provider failed, or a header value is invalid.
    InvalidRequest(String),
}

/// The operation an error enum belongs to; implemented for every `bridge_contract::operations::{Operation}Error`
/// by `cargo xtask regen`.
pub trait OperationError: ErrorResponse {
    /// The operation (its `operationId`, method and path are [`Operation::ID`], [`Operation::METHOD`],
    /// [`Operation::PATH`]).
    type Operation: Operation;
}

/// An answer the document does not describe for the operation called.
#[derive(Debug, Clone)]
pub struct UnexpectedResponse {
    /// The HTTP status.
    pub status: StatusCode,
    /// The answer's headers (empty when the status was documented as a success but the body did not decode:
    /// progenitor does not keep them in that case).
    pub headers: HeaderMap,
    /// The body, byte for byte.
    pub body: Bytes,
    /// Why the body did not decode as the documented type of this status; `None` when the status itself is not
    /// documented for the operation.
    pub decode_error: Option<String>,
}

impl UnexpectedResponse {
    /// The body as text (lossy UTF-8).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl<E: ErrorResponse> Error<E> {
    /// The HTTP status of the answer, if there was one.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Api(e) => StatusCode::from_u16(e.status()).ok(),
            Error::UnexpectedResponse(u) => Some(u.status),
            Error::Communication(e) => e.status(),
            Error::InvalidRequest(_) => None,
        }
    }
}

impl<E: OperationError> Error<E> {
    /// The `operationId` of the operation that failed.
    pub fn operation(&self) -> &'static str {
        <E::Operation as Operation>::ID
    }
}

impl<E> Error<E> {
    /// The decoded documented error, if this is one.
    pub fn api(&self) -> Option<&E> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The decoded documented error, if this is one.
    pub fn into_api(self) -> Option<E> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The undocumented answer, if this is one.
    pub fn unexpected(&self) -> Option<&UnexpectedResponse> {
        match self {
            Error::UnexpectedResponse(u) => Some(u),
            _ => None,
        }
    }
}

impl<E: OperationError + fmt::Debug> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {}) failed: ", E::Operation::ID, E::Operation::METHOD, E::Operation::PATH)?;
        match self {
            Error::Api(e) => {
                write!(f, "HTTP {}", e.status())?;
                // Every documented error body has a `_tag`, and most a `message`: show them, else the body.
                let body = serde_json::to_value(e).unwrap_or_default();
                match (body.get("_tag").and_then(|t| t.as_str()), body.get("message").and_then(|m| m.as_str())) {
                    (Some(tag), Some(message)) => write!(f, " {tag}: {message}"),
                    (Some(tag), None) => write!(f, " {tag}: {body}"),
                    _ => write!(f, ": {body}"),
                }
            }
            Error::UnexpectedResponse(u) => {
                write!(f, "undocumented answer: HTTP {}", u.status)?;
                if let Some(why) = &u.decode_error {
                    write!(f, " (body does not decode: {why})")?;
                }
                let text = u.body_text();
                let shown: String = text.chars().take(300).collect();
                write!(f, ": {shown}")?;
                if shown.len() < text.len() {
                    f.write_str("…")?;
                }
                Ok(())
            }
            Error::Communication(e) => {
                // reqwest's own text names the URL; the reason (reset, refused, timed out) is in its causes.
                write!(f, "communication error: {e}")?;
                let mut cause = std::error::Error::source(e);
                while let Some(c) = cause {
                    write!(f, ": {c}")?;
                    cause = c.source();
                }
                Ok(())
            }
            Error::InvalidRequest(s) => write!(f, "invalid request: {s}"),
        }
    }
}

impl<E: fmt::Debug> fmt::Debug for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(e) => f.debug_tuple("Api").field(e).finish(),
            Error::UnexpectedResponse(u) => f
                .debug_struct("UnexpectedResponse")
                .field("status", &u.status)
                .field("decode_error", &u.decode_error)
                .field("body", &u.body_text())
                .finish(),
            Error::Communication(e) => f.debug_tuple("Communication").field(e).finish(),
            Error::InvalidRequest(s) => f.debug_tuple("InvalidRequest").field(s).finish(),
        }
    }
}

impl<E: OperationError + fmt::Debug> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Communication(e) => Some(e),
            _ => None,
        }
    }
}

/// Turns the result of one of progenitor's methods (error bodies left raw by the generator) into the client's.
pub(crate) async fn lift<T, E: ErrorResponse>(
    result: Result<ResponseValue<T>, progenitor_client::Error<ByteStream>>,
) -> Result<T, Error<E>> {
    use progenitor_client::Error as P;
    match result {
        Ok(value) => Ok(value.into_inner()),
        Err(P::ErrorResponse(value)) => {
            let status = value.status();
            let headers = value.headers().clone();
            let body = collect(value.into_inner()).await.map_err(Error::Communication)?;
            match E::from_response(status.as_u16(), &body) {
                Some(Ok(e)) => Err(Error::Api(e)),
                Some(Err(why)) => Err(unexpected(status, headers, body, Some(why.to_string()))),
                None => Err(unexpected(status, headers, body, None)),
            }
        }
        Err(P::UnexpectedResponse(response)) => {
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(Error::Communication)?;
            Err(unexpected(status, headers, body, None))
        }
        // The generator documents exactly one success status (200) per operation and leaves every error body
        // raw, so a body that fails to decode here is a 200's.
        Err(P::InvalidResponsePayload(body, why)) => {
            Err(unexpected(StatusCode::OK, HeaderMap::new(), body, Some(why.to_string())))
        }
        Err(P::CommunicationError(e) | P::ResponseBodyError(e) | P::InvalidUpgrade(e)) => Err(Error::Communication(e)),
        Err(P::InvalidRequest(s) | P::Custom(s)) => Err(Error::InvalidRequest(s)),
    }
}

fn unexpected<E>(status: StatusCode, headers: HeaderMap, body: Bytes, decode_error: Option<String>) -> Error<E> {
    Error::UnexpectedResponse(Box::new(UnexpectedResponse { status, headers, body, decode_error }))
}

async fn collect(stream: ByteStream) -> Result<Bytes, reqwest::Error> {
    let mut stream = stream.into_inner();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk?);
    }
    Ok(Bytes::from(out))
}
