//! The accept loop: each connection is served by hyper's HTTP/1 connection (`hyper::server::conn::http1`, through
//! hyper-util's Tokio adapters), watched so that no client can hold the sandbox by holding connections open.
//!
//! * **Header-read timeout**: a connection must send a complete request head within it, counted from its accept
//!   (a new connection) or from the first byte of its next request (a kept-alive one).
//! * **Idle timeout**: a kept-alive connection that sends nothing for this long after its last answer is closed.
//!   Apart from the header-read timeout on purpose: hyper's own `header_read_timeout` also runs while a kept-alive
//!   connection waits for its next request (hyperium/hyper#3828), so it cannot give load balancers the long idle
//!   keep-alive they expect (a backend that closes first races their reuse of the connection) together with a
//!   short header timeout against stalled clients. Go's `ReadHeaderTimeout`/`IdleTimeout` and Envoy split them
//!   the same way.
//! * **A cap on open connections**, below the process's open-file limit. At the cap, a connection is accepted
//!   only when another can be closed for it: one with no request in progress that has had its chance, that is,
//!   has been waiting at least [`CHANCE`] (500 ms, or the header-read timeout when shorter) for its request head or
//!   its next request; of those, the one waiting longest is closed once the new connection is accepted. A
//!   connection that has not had its chance (one just accepted, still sending its first head) and a connection
//!   with a request in progress are never closed to make room; when every open connection is one of those, the
//!   loop stops accepting until one ends or has had its chance, and new connections wait in the kernel's queue,
//!   in the order they came. A request in progress ends by itself: bodies read before any credential is checked
//!   (the API-key exchange, the dashboard's sign-in) within a short deadline (2 s), any other within the
//!   body-read and request timeouts. So connections that send nothing useful can neither exhaust the file limit
//!   nor reset anyone else's connection: a new client waits at most for the next slot, never for a reset.
//! * **Graceful shutdown**: the loop stops accepting; connections with no request in progress close at once,
//!   the others after their answer (hyper's graceful shutdown of the connection), all within the grace period.
//!
//! Body-read and request timeouts are layers of the application (`super::requests`): they apply to requests, not
//! to connections. A watcher task sweeps the open connections every [`SWEEP`] and closes those past a deadline.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use crate::infra::telemetry;

/// How often the watcher looks at the open connections.
const SWEEP: Duration = Duration::from_millis(200);

/// How long a connection with no request in progress is left to send its request head before it may be closed to
/// make room for a new one (or the header-read timeout, when shorter): enough for any client that means to send
/// one (a head arrives with the connection's first packets, right behind the handshake), short enough that
/// stalled connections give their places up before a refused client's first SYN retry (1 s).
pub const CHANCE: Duration = Duration::from_millis(500);

/// The connection settings of [`serve`].
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    /// How long requests in flight may take to finish once shutdown began.
    pub shutdown_grace: Duration,
}

/// Why the sandbox closed a connection (the label of [`telemetry::HTTP_CONNECTIONS_CLOSED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseReason {
    HeaderTimeout,
    IdleTimeout,
    Evicted,
    Shutdown,
}

impl CloseReason {
    fn label(self) -> &'static str {
        match self {
            Self::HeaderTimeout => "header_timeout",
            Self::IdleTimeout => "idle_timeout",
            Self::Evicted => "evicted",
            Self::Shutdown => "shutdown",
        }
    }
}

/// What the watcher and the accept loop know of one connection. Times are milliseconds since the registry's
/// epoch.
struct Conn {
    accepted_ms: u64,
    /// Requests begun on this connection whose answer is not yet sent whole.
    busy: AtomicUsize,
    /// Requests begun on this connection.
    served: AtomicU64,
    /// When its last answer was sent whole.
    idle_since_ms: AtomicU64,
    /// When the first byte after that (or after the accept) arrived, plus one; 0: none yet.
    head_started_ms: AtomicU64,
    /// Set when the sandbox decided to close it.
    closing: AtomicBool,
    reason: Mutex<Option<CloseReason>>,
    close: Notify,
}

impl Conn {
    fn close(&self, reason: CloseReason) -> bool {
        if self.closing.swap(true, Ordering::AcqRel) {
            return false;
        }
        *self.reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        self.close.notify_one();
        true
    }

    fn idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0
    }

    /// What this connection, with no request in progress, waits for, and since when: its request head (from its
    /// accept, or from the first byte of a head on a kept-alive connection), or its next request (from its last
    /// answer).
    fn waiting(&self) -> (Waiting, u64) {
        let started = self.head_started_ms.load(Ordering::Acquire);
        if self.served.load(Ordering::Acquire) == 0 {
            (Waiting::Head, self.accepted_ms)
        } else if started != 0 {
            (Waiting::Head, started - 1)
        } else {
            (Waiting::NextRequest, self.idle_since_ms.load(Ordering::Acquire))
        }
    }

    /// Past which moment (and why) this connection, with no request in progress, is closed.
    fn deadline(&self, limits: &ConnectionLimits) -> (u64, CloseReason) {
        match self.waiting() {
            (Waiting::Head, since) => {
                (since + limits.header_read_timeout.as_millis() as u64, CloseReason::HeaderTimeout)
            }
            (Waiting::NextRequest, since) => (since + limits.idle_timeout.as_millis() as u64, CloseReason::IdleTimeout),
        }
    }
}

/// What a connection with no request in progress waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Head,
    NextRequest,
}

impl ConnectionLimits {
    /// How long a connection is left to send a request before it may be closed to make room ([`CHANCE`], or the
    /// header-read timeout when shorter), in milliseconds.
    fn chance_ms(&self) -> u64 {
        CHANCE.min(self.header_read_timeout).as_millis() as u64
    }
}

/// The open connections, in accept order.
struct Registry {
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<BTreeMap<u64, Arc<Conn>>>,
    /// Notified when a connection goes away.
    gone: Notify,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn open(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let now = self.now_ms();
        let conn = Arc::new(Conn {
            accepted_ms: now,
            busy: AtomicUsize::new(0),
            served: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(now),
            head_started_ms: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            reason: Mutex::new(None),
            close: Notify::new(),
        });
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut open = self.open();
        open.insert(id, conn.clone());
        metrics::gauge!(telemetry::HTTP_CONNECTIONS).set(open.len() as f64);
        (id, conn)
    }

    fn remove(&self, id: u64) {
        let mut open = self.open();
        open.remove(&id);
        metrics::gauge!(telemetry::HTTP_CONNECTIONS).set(open.len() as f64);
        drop(open);
        self.gone.notify_waiters();
    }

    /// Whether a connection accepted at `now` can be kept under the cap: there is room, or a connection to close for
    /// it ([`victim`]).
    fn has_room_at(&self, limits: &ConnectionLimits, now: u64) -> bool {
        let open = self.open();
        let staying = open.values().filter(|c| !c.closing.load(Ordering::Acquire)).count();
        staying < limits.max_connections || victim(&open, limits, now).is_some()
    }

    /// Once a connection was accepted: closes [`victim`]s until at most the cap stay open (none when there was
    /// room; when there is none to close, the cap is exceeded by this one until one ends).
    fn make_room_at(&self, limits: &ConnectionLimits, now: u64) {
        let open = self.open();
        let mut staying = open.values().filter(|c| !c.closing.load(Ordering::Acquire)).count();
        while staying > limits.max_connections {
            let Some(victim) = victim(&open, limits, now) else { return };
            victim.close(CloseReason::Evicted);
            staying -= 1;
        }
    }

    /// Closes every connection past its deadline.
    fn sweep(&self, limits: &ConnectionLimits) {
        let now = self.now_ms();
        for conn in self.open().values() {
            if conn.idle() && !conn.closing.load(Ordering::Acquire) {
                let (deadline, reason) = conn.deadline(limits);
                if now >= deadline {
                    conn.close(reason);
                }
            }
        }
    }

    fn close_all(&self, only_idle: bool) {
        for conn in self.open().values() {
            if !only_idle || conn.idle() {
                conn.close(CloseReason::Shutdown);
            }
        }
    }
}

/// The connection to close for a new one at `now`: of the connections with no request in progress that have had
/// their chance (waiting for a request head or their next request for at least [`ConnectionLimits::chance_ms`]),
/// the one waiting longest (the first accepted, of equals). `None`: every open connection is in a request, or has
/// not had its chance yet.
fn victim<'a>(open: &'a BTreeMap<u64, Arc<Conn>>, limits: &ConnectionLimits, now: u64) -> Option<&'a Arc<Conn>> {
    open.values()
        .filter(|c| !c.closing.load(Ordering::Acquire) && c.idle())
        .map(|c| (c, c.waiting().1))
        .filter(|(_, since)| now.saturating_sub(*since) >= limits.chance_ms())
        .min_by_key(|(_, since)| *since)
        .map(|(c, _)| c)
}

/// A request in progress on a connection: the connection is busy while this lives (until the answer's body is
/// sent whole, or the request is dropped).
struct Busy {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Busy {
    fn begin(conn: &Arc<Conn>, registry: &Arc<Registry>) -> Self {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        conn.served.fetch_add(1, Ordering::AcqRel);
        Self { conn: conn.clone(), registry: registry.clone() }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn.head_started_ms.store(0, Ordering::Release);
        self.conn.idle_since_ms.store(self.registry.now_ms(), Ordering::Release);
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request's [`Busy`] until it is sent whole.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The socket, noting when the first byte of a request head arrives on an idle connection.
struct Watched {
    io: TcpStream,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl AsyncRead for Watched {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before && this.conn.idle() && this.conn.head_started_ms.load(Ordering::Acquire) == 0 {
            this.conn.head_started_ms.store(this.registry.now_ms() + 1, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then shuts down gracefully within the grace period.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let registry = Arc::new(Registry {
        epoch: Instant::now(),
        next_id: AtomicU64::new(0),
        open: Mutex::new(BTreeMap::new()),
        gone: Notify::new(),
    });
    metrics::gauge!(telemetry::HTTP_CONNECTION_LIMIT).set(limits.max_connections as f64);
    let (stop, stopping) = watch::channel(false);
    let watcher = tokio::spawn({
        let registry = registry.clone();
        async move {
            let mut tick = tokio::time::interval(SWEEP);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                registry.sweep(&limits);
            }
        }
    });
    let mut shutdown = std::pin::pin!(shutdown);
    'accepting: loop {
        // Room for the next connection first: a full house of busy connections, or of connections that have not
        // had their chance, waits for one to end or to have had it.
        while !registry.has_room_at(&limits, registry.now_ms()) {
            tokio::select! {
                _ = registry.gone.notified() => {}
                _ = tokio::time::sleep(SWEEP) => {}
                _ = &mut shutdown => break 'accepting,
            }
        }
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break 'accepting,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors or memory for a moment (the cap keeps a reserve, so rarely): wait, go on.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (id, conn) = registry.add();
        registry.make_room_at(&limits, registry.now_ms());
        tokio::spawn(connection(stream, peer, id, conn, registry.clone(), app.clone(), stopping.clone()));
    }
    // No new connection is even queued by the kernel from here on.
    drop(listener);
    finish(registry, stop, watcher, limits.shutdown_grace).await
}

/// Once the listener is closed: closes idle connections at once and the others after their answer, waiting at
/// most `grace`; what is left then is closed.
async fn finish(
    registry: Arc<Registry>,
    stop: watch::Sender<bool>,
    watcher: tokio::task::JoinHandle<()>,
    grace: Duration,
) {
    let _ = stop.send(true);
    registry.close_all(true);
    let drained = async {
        loop {
            let gone = registry.gone.notified();
            if registry.open().is_empty() {
                return;
            }
            tokio::select! {
                _ = gone => {}
                // Connections that became idle after answering their last request are closed on the next round.
                _ = tokio::time::sleep(SWEEP) => registry.close_all(true),
            }
        }
    };
    if tokio::time::timeout(grace, drained).await.is_err() {
        let left = registry.open().len();
        tracing::warn!(
            connections = left,
            ?grace,
            "requests still in flight after the shutdown grace period; closing them"
        );
        registry.close_all(false);
    }
    watcher.abort();
}

/// Serves one connection until it ends, the sandbox closes it, or shutdown asks it to finish its request.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    app: axum::Router,
    mut stopping: watch::Receiver<bool>,
) {
    let service = {
        let (conn, registry) = (conn.clone(), registry.clone());
        hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            let busy = Busy::begin(&conn, &registry);
            let app = app.clone();
            // The client's address, as axum's `ConnectInfo` (the dashboard's sign-in budget per address).
            request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            async move {
                let response = app.oneshot(request.map(Body::new)).await.unwrap_or_else(|never| match never {});
                Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, _busy: busy })))
            }
        })
    };
    let io = TokioIo::new(Watched { io: stream, conn: conn.clone(), registry: registry.clone() });
    let served = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    let mut served = std::pin::pin!(served);
    let mut finishing = *stopping.borrow();
    if finishing {
        served.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            result = served.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                break;
            }
            _ = conn.close.notified() => {
                let reason = conn.reason.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or(CloseReason::Shutdown);
                metrics::counter!(telemetry::HTTP_CONNECTIONS_CLOSED, "reason" => reason.label()).increment(1);
                tracing::debug!(reason = reason.label(), "closing a connection");
                break;
            }
            _ = stopping.changed(), if !finishing => {
                finishing = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
    registry.remove(id);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry {
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(BTreeMap::new()),
            gone: Notify::new(),
        }
    }

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
        max_connections: 2,
        shutdown_grace: Duration::from_secs(1),
    };

    #[test]
    fn at_the_cap_a_connection_that_has_had_its_chance_and_waited_longest_makes_room() {
        let registry = Arc::new(registry());
        let (_, first) = registry.add();
        let (_, second) = registry.add();
        let _busy = Busy::begin(&first, &registry);
        let t = second.accepted_ms;
        // At the cap: `second` has not had its chance (500 ms) yet, and `first` is in a request.
        let chance = LIMITS.chance_ms();
        assert_eq!(chance, 500);
        assert!(!registry.has_room_at(&LIMITS, t + chance - 1));
        assert!(registry.has_room_at(&LIMITS, t + chance));
        // A third is accepted: `second` is closed for it, never the one with a request in progress.
        let (_, third) = registry.add();
        registry.make_room_at(&LIMITS, third.accepted_ms + chance);
        assert!(!first.closing.load(Ordering::Acquire), "a connection with a request in progress stays");
        assert!(second.closing.load(Ordering::Acquire));
        assert!(!third.closing.load(Ordering::Acquire), "one closed is enough");
        // Once the third is in a request too, no room: nobody is closed, and nothing accepted.
        let _also_busy = Busy::begin(&third, &registry);
        assert!(!registry.has_room_at(&LIMITS, t + 60_000));
    }

    #[test]
    fn a_connection_that_has_not_had_its_chance_is_never_closed_to_make_room() {
        let registry = Arc::new(registry());
        let (_, first) = registry.add();
        let _busy = Busy::begin(&first, &registry);
        let (_, second) = registry.add();
        // Accepted over the cap (as when the victim began a request in between): the new one is not closed for
        // being over, nor is the one in a request; the cap is exceeded by one until one ends.
        let (_, third) = registry.add();
        registry.make_room_at(&LIMITS, third.accepted_ms + LIMITS.chance_ms() - 1);
        assert!([&first, &second, &third].iter().all(|c| !c.closing.load(Ordering::Acquire)));
        // Of two that have had their chance, the one waiting longest goes: a kept-alive connection idle since its
        // answer at 5 s waits less long than one stalled in its head since its accept.
        drop(Busy::begin(&second, &registry));
        second.idle_since_ms.store(third.accepted_ms + 5_000, Ordering::Release);
        registry.make_room_at(&LIMITS, third.accepted_ms + 7_000);
        assert!(third.closing.load(Ordering::Acquire) && !second.closing.load(Ordering::Acquire));
    }

    #[test]
    fn deadlines_count_from_the_accept_then_from_the_last_answer_then_from_the_next_head() {
        let registry = Arc::new(registry());
        let (_, conn) = registry.add();
        assert_eq!(conn.deadline(&LIMITS), (conn.accepted_ms + 10_000, CloseReason::HeaderTimeout));
        drop(Busy::begin(&conn, &registry));
        let idle = conn.idle_since_ms.load(Ordering::Acquire);
        assert_eq!(conn.deadline(&LIMITS), (idle + 60_000, CloseReason::IdleTimeout));
        conn.head_started_ms.store(idle + 5_000 + 1, Ordering::Release);
        assert_eq!(conn.deadline(&LIMITS), (idle + 15_000, CloseReason::HeaderTimeout));
    }
}
