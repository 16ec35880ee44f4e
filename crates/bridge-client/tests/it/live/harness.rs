//! What every test here runs against, on 127.0.0.1 and started and stopped by the test: the sandbox (through
//! its library: `bridge_sandbox::open` and `serve_on`, a temporary data directory, the manual clock) and a
//! fault-injecting HTTP proxy in front of it (or of any other server, such as a webhook receiver).
//!
//! The proxy reads each request, takes the first rule that matches its method and path (each rule applies a
//! given number of times), and forwards it or breaks it: drops or resets the connection before or after
//! forwarding, answers something else (a 429 with `retryAfter`, a 503), delays it, or rewrites the JSON answer.
//! Every request is logged with the fault applied. One request per connection (`Connection: close`).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_client::{Client, Credentials, RetryPolicy};
use bridge_contract::{BridgeQuote, BridgeQuoteRequest, QuoteMode, QuoteResponse, SandboxAdvanceClockRequest};
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::rate_limit::RateLimit;
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The project of [`Sandbox::client`].
pub const PROJECT: &str = "client-tests";

/// A sandbox on a free loopback port; stopped when dropped.
pub struct Sandbox {
    pub base_url: String,
    pub addr: SocketAddr,
    data: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
}

impl Sandbox {
    pub async fn start() -> Self {
        Self::start_with(None, None).await
    }

    /// A sandbox that limits each project's requests (`serve --rate-limit`).
    pub async fn start_rate_limited(limit: RateLimit) -> Self {
        Self::start_with(Some(limit), None).await
    }

    /// A sandbox started with `serve --seed seed`: the same ids and, for a project with a fault profile, the same
    /// requests faulted in every run.
    pub async fn start_seeded(seed: u64) -> Self {
        Self::start_with(None, Some(seed)).await
    }

    async fn start_with(rate_limit: Option<RateLimit>, seed: Option<u64>) -> Self {
        let data = tempfile::Builder::new().prefix("bridge-client-tests-").tempdir().unwrap();
        let config = SandboxConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.path().to_owned(),
            database_url: None,
            clock: ClockMode::Manual,
            seed,
            catalogue: None,
            errors: ErrorsMode::First,
            webhook_egress: Default::default(),
            rate_limit,
            faults: None,
        };
        let opened = bridge_sandbox::open(&config).await.expect("the sandbox opens");
        let listener = TcpListener::bind(config.listen).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(bridge_sandbox::serve_on(opened, listener, ErrorsMode::First, async move {
            let _ = stopped.await;
        }));
        Self { base_url: format!("http://{addr}"), addr, data, stop: Some(stop) }
    }

    /// A bearer token of [`PROJECT`].
    pub fn token(&self) -> String {
        bridge_sandbox::mint_token(self.data.path(), PROJECT, false, Duration::from_secs(3600)).unwrap()
    }

    /// A client straight to the sandbox, without retries (to set up and check scenarios).
    pub fn client(&self) -> Client {
        Client::new(&self.base_url, Credentials::bearer(self.token())).unwrap().with_retry(RetryPolicy::none())
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A client through `proxy` with `retry` and a 5-second timeout.
pub fn client_via(proxy: &Proxy, sandbox: &Sandbox, retry: RetryPolicy) -> Client {
    client_with_timeout(proxy, sandbox, retry, Duration::from_secs(5))
}

/// A client through `proxy` with `retry` and `timeout` per attempt.
pub fn client_with_timeout(proxy: &Proxy, sandbox: &Sandbox, retry: RetryPolicy, timeout: Duration) -> Client {
    let http = Client::reqwest_builder().unwrap().timeout(timeout).build().unwrap();
    Client::with_reqwest(&proxy.base_url, http, Credentials::bearer(sandbox.token())).with_retry(retry)
}

/// Retries as by default, but 4 attempts 50 ms apart (doubling), without jitter.
pub fn quick_retries() -> RetryPolicy {
    RetryPolicy::default().with_initial_delay(Duration::from_millis(50)).without_jitter()
}

pub fn quote_request(amount: &str) -> BridgeQuoteRequest {
    BridgeQuoteRequest {
        token: "USDC".into(),
        chain_in: "ETHEREUM".into(),
        chain_out: "BASE".into(),
        amount: amount.parse().unwrap(),
        amount_native: None,
        mode: QuoteMode::Pay,
        is_sda: None,
        depositor: "0x1111111111111111111111111111111111111111".into(),
        recipient: "0x2222222222222222222222222222222222222222".into(),
        post_bridge_data: None,
        webhook_url: None,
    }
}

/// A fresh quote, made straight at the sandbox.
pub async fn quote(sandbox: &Sandbox) -> BridgeQuote {
    match sandbox.client().quote_bridge(&quote_request("100")).await.unwrap() {
        QuoteResponse::Bridge(quote) => quote,
        other => panic!("POST /bridge/quote/user answered a {} quote", other.tag()),
    }
}

/// Moves the sandbox clock forward.
pub async fn advance(sandbox: &Sandbox, ms: u64) {
    sandbox.client().sandbox_advance_clock(&SandboxAdvanceClockRequest { ms }).await.unwrap();
}

/// Polls `check` every 50 ms until it returns `Some`, for at most 15 s.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the proxy does with a request.
#[derive(Clone)]
pub enum Fault {
    /// Close the connection without forwarding or answering.
    Drop,
    /// Reset the connection (RST) without forwarding.
    Reset,
    /// Forward, then close the connection without passing the answer on.
    ForwardThenDrop,
    /// Forward, then reset the connection.
    ForwardThenReset,
    /// Forward, then answer this status with an empty body instead (a gateway's 5xx).
    ForwardThenStatus(u16),
    /// Answer this instead of forwarding.
    Answer { status: u16, headers: Vec<(&'static str, String)>, body: String },
    /// Wait, then forward.
    Delay(Duration),
    /// Forward, and change the JSON answer.
    Rewrite(Arc<dyn Fn(&mut serde_json::Value) + Send + Sync>),
}

impl Fault {
    /// A JSON answer.
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Fault::Answer { status, headers: vec![], body: body.to_string() }
    }

    pub fn rewrite(f: impl Fn(&mut serde_json::Value) + Send + Sync + 'static) -> Self {
        Fault::Rewrite(Arc::new(f))
    }

    fn name(&self) -> String {
        match self {
            Fault::Drop => "drop".into(),
            Fault::Reset => "reset".into(),
            Fault::ForwardThenDrop => "forward+drop".into(),
            Fault::ForwardThenReset => "forward+reset".into(),
            Fault::ForwardThenStatus(s) => format!("forward+{s}"),
            Fault::Answer { status, .. } => format!("answer {status}"),
            Fault::Delay(d) => format!("delay {d:?}"),
            Fault::Rewrite(_) => "rewrite".into(),
        }
    }
}

struct Rule {
    method: &'static str,
    path_prefix: String,
    times: usize,
    fault: Fault,
}

/// One request the proxy saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub method: String,
    /// Path and query.
    pub target: String,
    pub user_agent: Option<String>,
    /// The fault applied, or `None` when it was forwarded as is.
    pub fault: Option<String>,
}

impl Seen {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

#[derive(Default)]
struct ProxyState {
    rules: Vec<Rule>,
    seen: Vec<Seen>,
}

/// The fault-injecting proxy; stops accepting when dropped.
pub struct Proxy {
    pub base_url: String,
    state: Arc<Mutex<ProxyState>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// A proxy on a free loopback port in front of `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(ProxyState::default()));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(connection(socket, upstream, shared.clone()));
            }
        });
        Self { base_url, state, task }
    }

    /// Applies `fault` to the next `times` requests whose method is `method` and whose path starts with
    /// `path_prefix` (rules apply in the order added).
    pub fn inject(&self, method: &'static str, path_prefix: &str, times: usize, fault: Fault) {
        self.state.lock().unwrap().rules.push(Rule { method, path_prefix: path_prefix.to_owned(), times, fault });
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The requests so far with this method and a path starting with `prefix`.
    pub fn seen_at(&self, method: &str, prefix: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.method == method && s.path().starts_with(prefix)).collect()
    }
}

struct Request {
    method: String,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    /// The request as sent upstream: `Connection: close`, so that the answer ends with the connection.
    fn to_upstream(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        for (name, value) in &self.headers {
            if name.eq_ignore_ascii_case("connection") || name.eq_ignore_ascii_case("keep-alive") {
                continue;
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"connection: close\r\n\r\n");
        out.extend_from_slice(&self.body);
        out
    }
}

/// Reads one request (head and `Content-Length` body); `None` when the client closed the connection.
async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Request::new(&mut headers);
        if let httparse::Status::Complete(head_len) = parsed.parse(&buf).ok()? {
            let request_headers: Vec<(String, Vec<u8>)> =
                parsed.headers.iter().map(|h| (h.name.to_owned(), h.value.to_vec())).collect();
            let method = parsed.method?.to_owned();
            let target = parsed.path?.to_owned();
            let length: usize = request_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| std::str::from_utf8(v).ok()?.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < head_len + length {
                let n = socket.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[head_len..head_len + length].to_vec();
            return Some(Request { method, target, headers: request_headers, body });
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Sends `request` to `upstream` and reads the whole answer (until the upstream closes).
async fn forward(upstream: SocketAddr, request: &Request) -> Option<Vec<u8>> {
    let mut socket = TcpStream::connect(upstream).await.ok()?;
    socket.write_all(&request.to_upstream()).await.ok()?;
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.ok()?;
    Some(answer)
}

fn reason(status: u16) -> &'static str {
    axum::http::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("Unknown")
}

fn response(status: u16, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if !body.is_empty() {
        out.push_str("content-type: application/json\r\n");
    }
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// The answer with its JSON body changed by `f` (and `Content-Length` set anew).
fn rewrite(answer: &[u8], f: &(dyn Fn(&mut serde_json::Value) + Send + Sync)) -> Vec<u8> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(head_len)) = parsed.parse(answer) else {
        return answer.to_vec();
    };
    let status = parsed.code.unwrap_or(502);
    let Ok(mut body) = serde_json::from_slice::<serde_json::Value>(&answer[head_len..]) else {
        return answer.to_vec();
    };
    f(&mut body);
    response(status, &[], body.to_string().as_bytes())
}

/// Sends RST instead of FIN when the socket is dropped.
fn reset(socket: TcpStream) {
    #[allow(deprecated)] // SO_LINGER 0 closes at once (with RST); it does not block.
    let _ = socket.set_linger(Some(Duration::ZERO));
    drop(socket);
}

async fn connection(mut socket: TcpStream, upstream: SocketAddr, state: Arc<Mutex<ProxyState>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let fault = {
        let mut state = state.lock().unwrap();
        let rule = state
            .rules
            .iter_mut()
            .find(|r| r.times > 0 && r.method == request.method && request.target.starts_with(&r.path_prefix));
        let fault = rule.map(|r| {
            r.times -= 1;
            r.fault.clone()
        });
        state.seen.push(Seen {
            at: Instant::now(),
            method: request.method.clone(),
            target: request.target.clone(),
            user_agent: request.header("user-agent"),
            fault: fault.as_ref().map(Fault::name),
        });
        fault
    };
    let answer = match fault {
        Some(Fault::Drop) => return,
        Some(Fault::Reset) => return reset(socket),
        Some(Fault::Answer { status, headers, body }) => response(status, &headers, body.as_bytes()),
        Some(Fault::Delay(delay)) => {
            tokio::time::sleep(delay).await;
            forward(upstream, &request).await.unwrap_or_else(|| response(502, &[], b""))
        }
        Some(Fault::ForwardThenDrop) => {
            let _ = forward(upstream, &request).await;
            return;
        }
        Some(Fault::ForwardThenReset) => {
            let _ = forward(upstream, &request).await;
            return reset(socket);
        }
        Some(Fault::ForwardThenStatus(status)) => {
            let _ = forward(upstream, &request).await;
            response(status, &[], b"")
        }
        Some(Fault::Rewrite(f)) => match forward(upstream, &request).await {
            Some(answer) => rewrite(&answer, &*f),
            None => response(502, &[], b""),
        },
        None => forward(upstream, &request).await.unwrap_or_else(|| response(502, &[], b"")),
    };
    let _ = socket.write_all(&answer).await;
    let _ = socket.shutdown().await;
}

/// The fields of one recorded event, `message` included.
pub type Fields = Vec<(String, String)>;
type Events = Arc<Mutex<Vec<Fields>>>;

/// Records the `tracing` events of the client (target `bridge_client...`) while it lives.
pub struct LogCapture {
    events: Events,
    _guard: tracing::subscriber::DefaultGuard,
}

impl LogCapture {
    pub fn start() -> Self {
        use tracing_subscriber::layer::SubscriberExt as _;
        let events = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Recorder(events.clone()));
        Self { events, _guard: tracing::subscriber::set_default(subscriber) }
    }

    /// The fields (`message` included) of each event recorded so far whose message is `message`.
    pub fn events(&self, message: &str) -> Vec<Fields> {
        let events = self.events.lock().unwrap();
        events.iter().filter(|e| e.iter().any(|(k, v)| k == "message" && v == message)).cloned().collect()
    }
}

/// The value of field `name` of a recorded event.
pub fn field<'a>(event: &'a [(String, String)], name: &str) -> Option<&'a str> {
    event.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

struct Recorder(Events);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if !event.metadata().target().starts_with("bridge_client") {
            return;
        }
        struct Fields(Vec<(String, String)>);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push((field.name().to_owned(), format!("{value:?}")));
            }
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.push((field.name().to_owned(), value.to_owned()));
            }
        }
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
}
