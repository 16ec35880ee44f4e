//! The floor of `scripts/bench-proxy.sh`: a pass-through reverse proxy with no checks at all, built from the same
//! hyper server and hyper-util pooled client (keep-alive, `TCP_NODELAY`) as `bridge-conformance proxy`. What it
//! adds to a direct run is the price of a second hop on loopback; what `bridge-conformance proxy` adds beyond it
//! is the price of its checks.
//!
//! `cargo run --release -p bridge-conformance --example bare_proxy -- 127.0.0.1:18493 http://127.0.0.1:18490`

use std::sync::Arc;

use http::{Request, Response, Uri};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

type Upstream = Client<HttpConnector, Incoming>;

/// Forwards one request; an upstream that does not answer closes the client's connection (the service's error).
async fn forward(
    client: Arc<Upstream>,
    origin: Arc<str>,
    mut request: Request<Incoming>,
) -> Result<Response<Incoming>, hyper_util::client::legacy::Error> {
    let target = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let uri: Uri = format!("{origin}{target}").parse().expect("the upstream and a request target make a URI");
    *request.uri_mut() = uri;
    request.headers_mut().remove(http::header::HOST);
    client.request(request).await
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let listen: std::net::SocketAddr =
        args.next().unwrap_or_else(|| "127.0.0.1:18493".into()).parse().expect("a socket address to listen on");
    let origin: Arc<str> = args.next().unwrap_or_else(|| "http://127.0.0.1:18490".into()).into();
    assert!(listen.ip().is_loopback(), "the floor serves on loopback only");
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client = Arc::new(Client::builder(TokioExecutor::new()).build(connector));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    eprintln!("bare_proxy serving on http://{listen}, forwarding to {origin}");
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let (client, origin) = (client.clone(), origin.clone());
        let service = hyper::service::service_fn(move |request| forward(client.clone(), origin.clone(), request));
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
