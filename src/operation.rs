//! What every operation of the API is. `cargo xtask regen` implements [`Operation`] for one unit struct per
//! `operationId` in [`crate::operations`], with its typed parameters, body, success and error answers; the server
//! and the client are written against this trait rather than against paths and field lists.

use serde::{de::DeserializeOwned, Serialize};

/// One operation of the OpenAPI document.
pub trait Operation {
    /// The `operationId`.
    const ID: &'static str;
    /// The HTTP method, upper case.
    const METHOD: &'static str;
    /// The path template, with `{name}` parameters.
    const PATH: &'static str;
    /// Who may call it.
    const SECURITY: Security;
    /// Marked `deprecated: true`.
    const DEPRECATED: bool;
    /// The operation this one is an alias of (`x-alias-of`): same behaviour under another path.
    const ALIAS_OF: Option<&'static str>;
    /// Path parameters (`()` when there are none).
    type Path: Serialize + DeserializeOwned + Send + 'static;
    /// Query parameters (`()` when there are none).
    type Query: Serialize + DeserializeOwned + Send + 'static;
    /// Request body (`()` when there is none).
    type Body: Serialize + DeserializeOwned + Send + 'static;
    /// The 200 answer.
    type Response: Serialize + DeserializeOwned + Send + 'static;
    /// Every documented error answer.
    type Error: ErrorResponse + Send + 'static;
}

/// Who may call an operation (the document's `security`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// No credential (`security: []`).
    None,
    /// `Authorization: Bearer <JWT>`.
    Bearer,
    /// A bearer JWT or the legacy API key.
    BearerOrApiKey,
}

/// The documented error answers of one operation: each variant knows its status and encodes to its body.
pub trait ErrorResponse: Sized + Serialize {
    /// The HTTP status of this answer.
    fn status(&self) -> u16;
    /// The statuses this operation documents for errors.
    const STATUSES: &'static [u16];
    /// Decodes an error answer: `None` when `status` is not documented for this operation.
    fn from_response(status: u16, body: &[u8]) -> Option<Result<Self, serde_json::Error>>;
    /// Decodes an error answer already read into a `serde_json::Value` (which keeps the last value of a member
    /// repeated in an object): `None` when `status` is not documented for this operation. The generated impls
    /// read the `Value` in place; this default writes it out and reads it back with [`Self::from_response`].
    fn from_value(status: u16, value: &serde_json::Value) -> Option<Result<Self, serde_json::Error>> {
        match serde_json::to_vec(value) {
            Ok(body) => Self::from_response(status, &body),
            Err(e) => Some(Err(e)),
        }
    }
}

/// A failure that means "the service could not answer, and nothing was changed": a store or a dependency of an
/// implementation failed. Every operation documents 503 `ServiceUnavailable` for it, and every operation's error
/// enum converts from any `T: IntoServiceUnavailable` (generated), so an implementation propagates such a failure
/// with `?` instead of mapping it at each call.
///
/// ```
/// use bridge_contract::operations::GetBridgeError;
/// use bridge_contract::{IntoServiceUnavailable, ServiceUnavailable};
///
/// struct StoreDown(&'static str);
/// impl IntoServiceUnavailable for StoreDown {
///     fn into_service_unavailable(self) -> ServiceUnavailable {
///         ServiceUnavailable::new(format!("the store failed: {}", self.0))
///     }
/// }
/// fn read() -> Result<(), StoreDown> { Err(StoreDown("disk full")) }
/// fn get_bridge() -> Result<(), GetBridgeError> { Ok(read()?) }
/// assert!(matches!(get_bridge(), Err(GetBridgeError::ServiceUnavailable(e)) if e.message.ends_with("disk full")));
/// ```
pub trait IntoServiceUnavailable {
    /// The 503 answer (its `message` says what failed).
    fn into_service_unavailable(self) -> crate::types::ServiceUnavailable;
}
