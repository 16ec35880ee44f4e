//! The validating proxy talks to its upstream only, and never waits on it forever. Over real HTTP on 127.0.0.1,
//! with a raw TCP client (request targets no HTTP client library sends) and a local listener as the upstream
//! that records every connection and request head it gets:
//!
//! * `OPTIONS *` and `CONNECT` (with the caller's `Authorization` and `x-api-key`) answer 400 `ProxyError`, and
//!   the upstream gets nothing; an absolute-form request naming another host goes to the upstream, path and query
//!   only, with the upstream as `Host`. That nothing else is contacted is checked without contacting anything
//!   else: what the upstream listener received, and the connector's refusal of any other target before it
//!   connects (`proxy::upstream`'s unit tests);
//! * an upstream that accepts and never answers gets the client a 504 `ProxyError` after `--upstream-timeout`; one
//!   that starts a streamed answer and falls silent has the answer cut, so the client is not held either.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_conformance::proxy::{Proxy, ProxyConfig};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What an upstream listener does with each connection.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Reads the request head, answers 200 `{}` and closes.
    Answer,
    /// Reads the request head and never writes anything.
    Silent,
    /// Reads the request head, sends the head of a chunked answer and one chunk, then nothing.
    SilentMidAnswer,
}

/// A listener on 127.0.0.1 standing for the upstream: the request heads it received, one per connection.
struct FakeUpstream {
    url: String,
    heads: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeUpstream {
    async fn start(behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { return };
                let seen = seen.clone();
                tokio::spawn(async move {
                    let head = read_head(&mut stream).await;
                    seen.lock().unwrap().push(head);
                    match behaviour {
                        Behaviour::Answer => {
                            let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
                            let _ = stream.write_all(answer.as_bytes()).await;
                        }
                        Behaviour::Silent => std::future::pending::<()>().await,
                        Behaviour::SilentMidAnswer => {
                            let start = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n1\r\n[\r\n";
                            let _ = stream.write_all(start.as_bytes()).await;
                            std::future::pending::<()>().await
                        }
                    }
                });
            }
        });
        Self { url, heads, task }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Bytes up to the end of a request head (or of the stream).
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Sends `request` as written to `addr` and reads the answer until the connection closes: status and body.
async fn raw(addr: SocketAddr, request: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .expect("the proxy answers and closes")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {answer}"));
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

const KEY: &str = "sbx_q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83";
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.dGhlIHNpZ25hdHVyZQ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asterisk_and_authority_form_requests_are_refused_and_only_the_upstream_is_reached() {
    let upstream = FakeUpstream::start(Behaviour::Answer).await;
    let proxy = Proxy::start(ProxyConfig::new(&upstream.url)).await.unwrap();
    let credentials = format!("Authorization: Bearer {JWT}\r\nx-api-key: {KEY}\r\nConnection: close\r\n");

    for request in [
        format!("OPTIONS * HTTP/1.1\r\nHost: {}\r\n{credentials}\r\n", proxy.addr),
        format!("CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n{credentials}\r\n"),
    ] {
        let (status, body) = raw(proxy.addr, &request).await;
        let line = request.lines().next().unwrap();
        assert_eq!(status, 400, "{line}: {body}");
        assert_eq!(body["_tag"], "ProxyError", "{line}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| m.contains("not forwarded")), "{line}: {body}");
    }
    assert_eq!(upstream.heads(), Vec::<String>::new(), "the upstream got nothing of the refused requests");

    // An absolute-form request naming another host: its path and query go to the upstream, nothing else.
    let request = format!(
        "GET http://elsewhere.example:8443/bridge/history/user?page=1 HTTP/1.1\r\nHost: elsewhere.example:8443\r\n{credentials}\r\n"
    );
    let (status, _) = raw(proxy.addr, &request).await;
    assert_eq!(status, 200);
    let heads = upstream.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    let upstream_host = upstream.url.trim_start_matches("http://");
    assert!(heads[0].starts_with("GET /bridge/history/user?page=1 HTTP/1.1\r\n"), "{}", heads[0]);
    assert!(heads[0].to_ascii_lowercase().contains(&format!("host: {upstream_host}\r\n")), "{}", heads[0]);
    assert!(!heads[0].contains("elsewhere"), "{}", heads[0]);
    proxy.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_upstream_is_answered_504_and_a_silent_stream_is_cut() {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let config = |url: &str| {
        let mut config = ProxyConfig::new(url);
        config.upstream_timeout = Duration::from_secs(1);
        config
    };

    let silent = FakeUpstream::start(Behaviour::Silent).await;
    let proxy = Proxy::start(config(&silent.url)).await.unwrap();
    let answer = http.get(format!("{}/bridge/history/user?page=1", proxy.url)).bearer_auth(JWT).send().await;
    let answer = answer.expect("the proxy answers before the client gives up");
    assert_eq!(answer.status(), 504);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["_tag"], "ProxyError", "{body}");
    assert!(body["message"].as_str().is_some_and(|m| m.contains("within 1s (--upstream-timeout)")), "{body}");
    assert_eq!(silent.heads().len(), 1, "the request reached the upstream");
    let report = proxy.stop().await.unwrap();
    assert_eq!(report.upstream_errors, 1);

    let stalling = FakeUpstream::start(Behaviour::SilentMidAnswer).await;
    let proxy = Proxy::start(config(&stalling.url)).await.unwrap();
    let answer = http.get(format!("{}/bridge/history/user?page=1", proxy.url)).bearer_auth(JWT).send().await.unwrap();
    assert_eq!(answer.status(), 200, "a streamed answer's head passes");
    let cut = answer.bytes().await.expect_err("the silent answer is cut");
    assert!(!cut.is_timeout(), "cut by the proxy, not by the client's own timeout: {cut:?}");
    proxy.stop().await.unwrap();
}
