//! `GET /openapi.json` (the contract's bundled OpenAPI document) and `GET /docs` (an API reference page rendered
//! from it by RapiDoc 9.3.8, vendored in `assets/rapidoc/`, so nothing is downloaded at build or run time).

use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;

const RAPIDOC_JS: &str = include_str!("../assets/rapidoc/rapidoc-min.js");

const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Bridge service sandbox: API reference</title>
  <script type="module" src="/docs/rapidoc-min.js"></script>
</head>
<body>
  <rapi-doc spec-url="/openapi.json" render-style="read" show-header="false" allow-try="true"
            schema-description-expanded="true" default-schema-tab="schema"></rapi-doc>
</body>
</html>
"#;

pub fn routes<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    axum::Router::new()
        .route(
            "/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], bridge_contract::OPENAPI_JSON) }),
        )
        .route("/docs", get(|| async { Html(PAGE) }))
        .route(
            "/docs/rapidoc-min.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], RAPIDOC_JS).into_response() }),
        )
}
