//! Which operation of the contract a request is: its method and path matched against the document's path
//! templates (from [`crate::contract`]), as the generated server routes them: a `{parameter}` is one non-empty
//! segment (percent-decoded), static segments match exactly, and a template with more static segments wins.

use std::sync::OnceLock;

use crate::contract::{contract, OpInfo};

/// A request routed to an operation, with its path parameters by the document's names.
#[derive(Debug, Clone)]
pub struct Routed {
    pub op: &'static OpInfo,
    pub path_params: Vec<(String, String)>,
}

enum Segment {
    Static(&'static str),
    Param(&'static str),
}

struct Template {
    op: &'static OpInfo,
    segments: Vec<Segment>,
    statics: usize,
}

fn templates() -> &'static [Template] {
    static TEMPLATES: OnceLock<Vec<Template>> = OnceLock::new();
    TEMPLATES.get_or_init(|| {
        let mut all: Vec<Template> = contract()
            .operations()
            .iter()
            .map(|op| {
                let segments: Vec<Segment> = op
                    .path
                    .trim_start_matches('/')
                    .split('/')
                    .map(|s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                        Some(name) => Segment::Param(name),
                        None => Segment::Static(s),
                    })
                    .collect();
                let statics = segments.iter().filter(|s| matches!(s, Segment::Static(_))).count();
                Template { op, segments, statics }
            })
            .collect();
        all.sort_by_key(|t| std::cmp::Reverse(t.statics));
        all
    })
}

/// The operation of `method` (upper case) and `path` (without the query), or `None` when the contract has none:
/// such a request is answered 404 with an empty body by a conforming deployment.
pub fn route(method: &str, path: &str) -> Option<Routed> {
    let segments: Vec<&str> = path.strip_prefix('/')?.split('/').collect();
    'templates: for t in templates() {
        if t.op.method != method || t.segments.len() != segments.len() {
            continue;
        }
        let mut params = Vec::new();
        for (want, got) in t.segments.iter().zip(&segments) {
            match want {
                Segment::Static(s) if s == got => {}
                Segment::Static(_) => continue 'templates,
                Segment::Param(name) => {
                    if got.is_empty() {
                        continue 'templates;
                    }
                    let value = percent_encoding::percent_decode_str(got).decode_utf8_lossy().into_owned();
                    params.push(((*name).to_owned(), value));
                }
            }
        }
        return Some(Routed { op: t.op, path_params: params });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_route_to_their_operation() {
        let r = route("POST", "/bridge/quote/user").unwrap();
        assert_eq!(r.op.id, "quoteBridge");
        let r = route("GET", "/bridge/history/bridge/abc%20d").unwrap();
        assert_eq!(r.op.id, "getBridge");
        assert_eq!(r.path_params, vec![("bridgeId".to_owned(), "abc d".to_owned())]);
        let r = route("GET", "/sda/deposit-addresses/0xabc/ETHEREUM/public-status").unwrap();
        assert_eq!(r.op.id, "getDepositAddressPublicStatus");
        assert_eq!(r.path_params[1], ("depositChain".to_owned(), "ETHEREUM".to_owned()));
        // Static segments beat parameters: the search is not a deposit address.
        assert_eq!(route("GET", "/sda/deposit-addresses/search").unwrap().op.id, "searchDepositAddresses");
        assert!(route("GET", "/sda/deposit-addresses//ETHEREUM/public-status").is_none(), "empty segment");
        assert!(route("GET", "/bridge/quote/user").is_none(), "wrong method");
        assert!(route("POST", "/bridge/quote/user/").is_none(), "trailing slash");
        assert!(route("GET", "/nowhere").is_none());
        assert!(route("GET", "").is_none());
    }
}
