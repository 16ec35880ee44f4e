//! What the contract's decoder makes of a request, as the server decodes it (`bridge_server::decode::engine` after
//! `bridge_server::decode::parts`): the issues a malformed request must get. The runner's `decode` checks expect
//! them; the proxy compares a deployment's decode errors with them ([`super::exchange`]).

use bridge_contract::js::JsValue;
use bridge_contract::Issue;
use bridge_server::decode::{engine, parts, ErrorsMode};

use super::OpInfo;

/// What the server's decoder answers for this request: path parameters, then the body by content type (an
/// empty optional body is `{}`), then the query; the first part that fails gives the issues.
pub fn simulate(
    op: &OpInfo,
    path: &[(String, String)],
    body: Option<&(Option<String>, Vec<u8>)>,
    query: &str,
    mode: ErrorsMode,
) -> Result<(), Vec<Issue>> {
    let body = body.map(|(c, b)| (c.as_deref(), b.as_slice()));
    simulate_parts(op, path, body, query, mode).map_err(|(_, issues)| issues)
}

/// The part of a request that the decoder refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Path,
    Body,
    Query,
}

impl Part {
    /// `path`, `body`, `query`.
    pub fn name(self) -> &'static str {
        match self {
            Part::Path => "path",
            Part::Body => "body",
            Part::Query => "query",
        }
    }
}

/// [`simulate`], saying which part failed; the body is its content type and bytes.
pub fn simulate_parts(
    op: &OpInfo,
    path: &[(String, String)],
    body: Option<(Option<&str>, &[u8])>,
    query: &str,
    mode: ErrorsMode,
) -> Result<(), (Part, Vec<Issue>)> {
    let shapes = op.shapes;
    if let Some(s) = shapes.path {
        engine::decode_struct(s, &parts::path_params(path.iter().map(|(k, v)| (k.as_str(), v.as_str()))), mode)
            .map_err(|issues| (Part::Path, issues))?;
    }
    if let Some(b) = &shapes.body {
        let (content_type, bytes) = body.unwrap_or((None, &[]));
        let value = if bytes.is_empty() && !b.required {
            JsValue::Object(Vec::new())
        } else {
            parts::body(content_type.map(str::as_bytes), bytes).map_err(|issue| (Part::Body, vec![issue]))?
        };
        engine::decode(&b.shape, &value, mode).map_err(|issues| (Part::Body, issues))?;
    }
    if let Some(s) = shapes.query {
        engine::decode_struct(s, &parts::form(query.as_bytes()), mode).map_err(|issues| (Part::Query, issues))?;
    }
    Ok(())
}
