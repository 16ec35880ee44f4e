//! The HTTP baseline of `scripts/bench-http.sh`: a bare axum server (same axum, hyper and tokio as the sandbox,
//! no authentication, no decoding, no store) that answers every request, any method and path, with fixed bytes:
//! the quote response fixture, `application/json`.
//!
//! `cargo run --release -p bridge-sandbox --example bare_http -- 127.0.0.1:18081`

use axum::http::header;
use axum::response::IntoResponse;

const BODY: &[u8] = include_bytes!("../../../benches/fixtures/quote-response.json");

async fn fixed() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], BODY)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listen = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18081".into());
    let listen: std::net::SocketAddr = listen.parse().expect("a socket address, such as 127.0.0.1:18081");
    assert!(listen.ip().is_loopback(), "the baseline serves on loopback only");
    let app = axum::Router::new().fallback(fixed);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    eprintln!("bare_http serving on http://{listen}");
    axum::serve(listener, app).await
}
