//! Running the sandbox as a service for others (docs/operations.md): probes, metrics, request logs, connection
//! limits, graceful shutdown. None of it is part of the contract: the probes and `/metrics` are not in the
//! OpenAPI document and need no credential.
//!
//! * [`ServeOptions`]: every setting of this module in one place (the `serve` flags);
//! * [`connections`]: the accept loop: header-read and idle timeouts, the cap on open connections, graceful close;
//! * [`requests`]: the layers every request goes through: request id, log span, metrics, request and body-read
//!   timeouts;
//! * [`health`]: `GET /livez` and `GET /readyz` (per-check JSON, Kubernetes' conventions);
//! * [`metrics`]: `GET /metrics` (Prometheus text, from [`crate::infra::telemetry`]'s recorder);
//! * [`workers`]: the lifecycle ticker, the webhook courier and the retention purge, their heartbeats, and how they
//!   stop (leases handed back).

pub mod connections;
pub mod health;
pub mod metrics;
pub mod requests;
pub mod workers;

use std::time::Duration;

/// Open files kept apart from client connections: the store (PostgreSQL pool or SQLite files), webhook
/// deliveries in flight (at most 64), logs, the runtime's own.
pub const RESERVED_FILES: u64 = 256;

/// The settings of a serving sandbox that are about running it, not about what it serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// A connection must send a complete request head within this (from its accept, or from the first byte of its
    /// next request on a kept-alive connection), else it is closed.
    pub header_read_timeout: Duration,
    /// A request body must arrive whole within this, else the request is answered 503 `ServiceUnavailable`.
    pub body_read_timeout: Duration,
    /// The body of a request read before any credential is checked (the API-key exchange, the dashboard's sign-in)
    /// must arrive whole within this, else it is answered 408 and its connection closed.
    pub unauthenticated_body_timeout: Duration,
    /// A kept-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// A request not answered within this is answered 503 `ServiceUnavailable`.
    pub request_timeout: Duration,
    /// The most open client connections; `None`: the open-file limit less [`RESERVED_FILES`] (an explicit value is
    /// lowered to that too).
    pub max_connections: Option<usize>,
    /// On shutdown, how long requests and webhook attempts in flight may take to finish.
    pub shutdown_grace: Duration,
    /// The dashboard's sign-ins served per client address and per project.
    pub sign_ins: crate::dashboard::sign_in::Budget,
    /// The proxies (load balancers) whose `X-Forwarded-For` names the client of a request they forward.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long quotes, ended bridges, events and delivery attempts are kept (`--retain`).
    pub retention: crate::pipeline::retention::Retention,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(15),
            unauthenticated_body_timeout: bridge_server::UnauthenticatedBody::default().timeout,
            idle_timeout: Duration::from_secs(75),
            request_timeout: Duration::from_secs(30),
            max_connections: None,
            shutdown_grace: Duration::from_secs(10),
            sign_ins: Default::default(),
            trusted_proxies: Vec::new(),
            retention: Default::default(),
        }
    }
}

impl ServeOptions {
    /// How a body read before any credential is checked is bounded.
    pub fn unauthenticated_body(&self) -> bridge_server::UnauthenticatedBody {
        bridge_server::UnauthenticatedBody {
            timeout: self.unauthenticated_body_timeout,
            ..bridge_server::UnauthenticatedBody::default()
        }
    }

    /// What bounds the dashboard's sign-in.
    pub fn sign_in_limits(&self) -> crate::dashboard::sign_in::Limits {
        crate::dashboard::sign_in::Limits {
            budget: self.sign_ins,
            trusted_proxies: self.trusted_proxies.clone(),
            body: self.unauthenticated_body(),
        }
    }

    /// The connection settings, with the cap resolved against the process's open-file limit.
    pub fn connection_limits(&self) -> connections::ConnectionLimits {
        let files = open_files_limit();
        let room = files.saturating_sub(RESERVED_FILES).max(16) as usize;
        let max_connections = match self.max_connections {
            Some(asked) if asked > room => {
                tracing::warn!(asked, room, open_files = files, "--max-connections lowered below the open-file limit");
                room
            }
            Some(asked) => asked.max(1),
            None => room,
        };
        connections::ConnectionLimits {
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            max_connections,
            shutdown_grace: self.shutdown_grace,
        }
    }
}

/// The process's soft limit of open files (1,024 when it cannot be read).
pub fn open_files_limit() -> u64 {
    rlimit::getrlimit(rlimit::Resource::NOFILE).map(|(soft, _)| soft).unwrap_or(1024)
}

/// Raises the soft limit of open files to the hard limit, where the system allows; returns the soft limit now.
/// Called once at start by the binary (a library user's process keeps its own limits).
pub fn raise_open_files_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "could not raise the open-file limit");
            open_files_limit()
        }
    }
}
