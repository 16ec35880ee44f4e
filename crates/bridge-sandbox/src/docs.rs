//! `GET /openapi.json` (the contract's bundled OpenAPI document) and `GET /docs` (an API reference page rendered
//! from it by RapiDoc 9.3.8, vendored in `assets/vendor/rapidoc/`, so nothing is downloaded at build or run time).
//!
//! The page's "try it" server is the address the page was served from (the request's `Host`), whatever
//! `--listen` is; RapiDoc loads no fonts (`load-fonts="false"`, the system's fonts instead), so the page makes
//! no request outside the sandbox.

use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use maud::{html, DOCTYPE};

const RAPIDOC_JS: &str = include_str!("../assets/vendor/rapidoc/rapidoc-min.js");

/// The server the page offers: `http://<Host>` when the `Host` header is a plain host and port, else the
/// origin the page was loaded from (RapiDoc resolves a relative server against it).
fn server_url(headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let plain = !host.is_empty()
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    let https = headers.get("x-forwarded-proto").is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https"));
    match (plain, https) {
        (true, true) => format!("https://{host}"),
        (true, false) => format!("http://{host}"),
        (false, _) => "/".into(),
    }
}

/// The reference page, its server the address it was served from.
pub fn page(headers: &HeaderMap) -> String {
    let server = server_url(headers);
    let fonts = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Bridge service sandbox: API reference" }
                link rel="icon" href="data:,";
                script type="module" src="/docs/rapidoc-min.js" {}
            }
            body {
                rapi-doc spec-url="/openapi.json" render-style="read" show-header="false" allow-try="true"
                    schema-description-expanded="true" default-schema-tab="schema" load-fonts="false"
                    regular-font=(fonts) mono-font="ui-monospace, 'DejaVu Sans Mono', monospace"
                    server-url=(server) default-api-server=(server) {}
            }
        }
    }
    .into_string()
}

pub fn routes<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    axum::Router::new()
        .route(
            "/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], bridge_contract::OPENAPI_JSON) }),
        )
        .route("/docs", get(|headers: HeaderMap| async move { Html(page(&headers)) }))
        .route(
            "/docs/rapidoc-min.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], RAPIDOC_JS).into_response() }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_host(host: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static(host));
        h
    }

    #[test]
    fn the_server_is_the_address_the_page_was_served_from() {
        assert_eq!(server_url(&with_host("127.0.0.1:9123")), "http://127.0.0.1:9123");
        assert_eq!(server_url(&with_host("[::1]:8080")), "http://[::1]:8080");
        assert_eq!(server_url(&with_host("x\" onload=\"alert(1)")), "/");
        assert_eq!(server_url(&HeaderMap::new()), "/");
        let page = page(&with_host("127.0.0.1:9123"));
        assert!(page.contains(r#"server-url="http://127.0.0.1:9123""#), "{page}");
        assert!(page.contains(r#"load-fonts="false""#));
    }
}
