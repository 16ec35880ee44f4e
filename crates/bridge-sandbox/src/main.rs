//! `bridge-sandbox`: the whole bridge service, locally. `bridge-sandbox --help` explains the commands.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::egress::{EgressMode, WebhookEgress};
use bridge_sandbox::rate_limit::RateLimit;
use bridge_sandbox::{SandboxConfig, ServeOptions};
use bridge_server::ErrorsMode;
use clap::{Parser, Subcommand, ValueEnum};
use ipnet::IpNet;

/// A local, stateful bridge service for integration work: exact to the contract, kept in one SQLite file (or a
/// PostgreSQL database shared by several instances).
///
/// Quick start:
///   bridge-sandbox serve                      # serves http://127.0.0.1:8080 (API reference at /docs)
///   bridge-sandbox token --project my-app     # prints a bearer token that sandbox accepts
///   bridge-sandbox api-key --project my-app   # prints an API key (exchanged for a token at /authentication/auth/apiKey)
#[derive(Parser)]
#[command(name = "bridge-sandbox", version, about, long_about, verbatim_doc_comment)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the whole API (and /openapi.json, /docs) until Ctrl-C or SIGTERM.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080", env = "BRIDGE_SANDBOX_LISTEN")]
        listen: SocketAddr,
        /// Data directory: the database (sandbox.db) and the signing keys (keys/), made on first start.
        #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
        data: PathBuf,
        /// Keep everything in this PostgreSQL database instead of the data directory
        /// (`postgres://user:password@host:port/database`). Several instances may share one database, behind any
        /// HTTP load balancer: they share the signing keys, the clock, the counters, the lifecycle and the
        /// webhook deliveries.
        #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
        database_url: Option<String>,
        /// Each project has a clock of its own, starting at the sandbox's time when the project is first seen.
        /// `real`: a project's time passes by itself (plus its POST /sandbox/clock/advance); `manual`: only its
        /// advances move it.
        #[arg(long, value_enum, default_value = "real")]
        clock: ClockMode,
        /// Make ids reproducible: a fresh sandbox started with the same seed answers the same ids (and, its manual
        /// clock starting at 2026-01-01T00:00:00Z, the same dates) for the same requests, for snapshot tests.
        /// Needs `--clock manual`. Without it ids are unique across data directories, restarts and instances.
        #[arg(long)]
        seed: Option<u64>,
        /// A TOML file with catalogue overrides (chains, tokens, prices, fees), merged over the built-in defaults.
        #[arg(long)]
        catalogue: Option<PathBuf>,
        /// Decode errors report the first failing property (like the production service) or all of them.
        #[arg(long, value_enum, default_value = "first")]
        errors: Errors,
        #[command(flatten)]
        operations: Operations,
        /// Where webhooks may be delivered. `public`: public addresses only (no private, loopback, link-local,
        /// CGNAT, multicast, documentation, benchmarking, reserved, unspecified or broadcast address, IPv4 or IPv6,
        /// nor a name that resolves only to such addresses): for a sandbox shared by several teams. `any`: local
        /// receivers work too. In both, link-local addresses (169.254.0.0/16, fe80::/10: cloud metadata) are
        /// refused unless allowed. Checked when a webhookUrl is given (422) and at each delivery.
        #[arg(long, value_enum, default_value = "any", help_heading = "Shared sandbox")]
        webhook_egress: EgressMode,
        /// An exception to the webhook egress policy: deliveries may go to this network (CIDR, e.g. 10.1.0.0/16,
        /// or one address). Repeatable.
        #[arg(long, value_name = "CIDR", value_parser = parse_network, help_heading = "Shared sandbox")]
        webhook_allow: Vec<IpNet>,
        /// Limit each project to N requests per second (authenticated operations; per instance; fractions allowed,
        /// 0.5 is one request every 2 s). Requests over the limit are answered 429 TooManyRequests with retryAfter
        /// and a Retry-After header; other projects are not affected. Off by default.
        #[arg(long, value_name = "N", value_parser = parse_rate, help_heading = "Shared sandbox")]
        rate_limit: Option<f64>,
        /// How many requests a project may send at once after a quiet spell (default: N of --rate-limit, rounded
        /// up).
        #[arg(long, value_name = "B", requires = "rate_limit", help_heading = "Shared sandbox")]
        rate_limit_burst: Option<NonZeroU32>,
    },
    /// Print a bearer token (JWT) for a project, signed with the data directory's key.
    Token {
        /// The project id (becomes `userId` in records).
        #[arg(long)]
        project: String,
        /// Enable post-bridge actions (`postBridgeData`) for the project.
        #[arg(long)]
        post_bridge: bool,
        /// Data directory of the sandbox that should accept the token.
        #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
        data: PathBuf,
        /// The PostgreSQL database of the sandbox that should accept the token (instead of `--data`).
        #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
        database_url: Option<String>,
        /// Hours until the token expires.
        #[arg(long, default_value_t = 24)]
        ttl_hours: u64,
    },
    /// Print an API key for a project: `POST /authentication/auth/apiKey` exchanges it for a bearer token, and the
    /// event feed accepts it as `x-api-key`. It does not expire; it is valid for the sandbox of this data directory
    /// (or of this PostgreSQL database).
    ApiKey {
        /// The project id (becomes `userId` in records).
        #[arg(long)]
        project: String,
        /// Data directory of the sandbox that should accept the key.
        #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
        data: PathBuf,
        /// The PostgreSQL database of the sandbox that should accept the key (instead of `--data`).
        #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
        database_url: Option<String>,
    },
}

/// Running the sandbox as a service for others (docs/operations.md). Durations like `10s`, `500ms`, `2m`.
#[derive(clap::Args)]
#[command(next_help_heading = "Running as a service")]
struct Operations {
    /// Log lines as human-readable text, or one JSON object a line (with the request id, operation, project,
    /// status and latency of each request's lines). The level is set by RUST_LOG (default `info`).
    #[arg(long, value_enum, default_value = "human", env = "BRIDGE_SANDBOX_LOG_FORMAT")]
    log_format: LogFormat,
    /// A connection must send a complete request head within this (from its accept, or from the first byte of its
    /// next request), else it is closed.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    header_read_timeout: Duration,
    /// A request body must arrive whole within this, else the request is answered 503 ServiceUnavailable.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    body_read_timeout: Duration,
    /// A kept-alive connection with no request for this long is closed (keep it above your load balancer's idle
    /// timeout).
    #[arg(long, default_value = "75s", value_parser = humantime::parse_duration)]
    idle_timeout: Duration,
    /// A request not answered within this is answered 503 ServiceUnavailable.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    request_timeout: Duration,
    /// The most open client connections [default: the open-file limit (raised to its hard limit at start) less
    /// 256]. At the cap a new connection replaces the oldest one with no request in progress.
    #[arg(long)]
    max_connections: Option<usize>,
    /// On SIGTERM or Ctrl-C, how long requests and webhook attempts in flight may take to finish; what is left is
    /// cut (webhook attempts are handed back to other instances).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,
}

impl Operations {
    fn options(&self) -> ServeOptions {
        ServeOptions {
            header_read_timeout: self.header_read_timeout,
            body_read_timeout: self.body_read_timeout,
            idle_timeout: self.idle_timeout,
            request_timeout: self.request_timeout,
            max_connections: self.max_connections,
            shutdown_grace: self.shutdown_grace,
        }
    }

    fn init_logs(&self) {
        let filter =
            || tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,tower_http=info".into());
        match self.log_format {
            LogFormat::Human => tracing_subscriber::fmt().with_env_filter(filter()).init(),
            LogFormat::Json => tracing_subscriber::fmt()
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .with_env_filter(filter())
                .init(),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

/// A network (`10.1.0.0/16`) or one address (`10.1.2.3`, `::1`).
fn parse_network(text: &str) -> Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{text:?} is neither a network in CIDR notation (10.1.0.0/16) nor an IP address"))
}

/// A rate: a positive number of requests per second, at most a billion.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if RateLimit::new(rate, None).is_some() => Ok(rate),
        _ => Err(format!("{text:?} is not a number of requests per second above 0 (and at most 1e9)")),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Errors {
    First,
    All,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            listen,
            data,
            database_url,
            clock,
            seed,
            catalogue,
            errors,
            operations,
            webhook_egress,
            webhook_allow,
            rate_limit,
            rate_limit_burst,
        } => {
            operations.init_logs();
            let open_files = bridge_sandbox::operate::raise_open_files_limit();
            tracing::info!(open_files, "open-file limit");
            let errors = match errors {
                Errors::First => ErrorsMode::First,
                Errors::All => ErrorsMode::All,
            };
            let config = SandboxConfig {
                listen,
                data_dir: data,
                database_url,
                clock,
                seed,
                catalogue,
                errors,
                webhook_egress: WebhookEgress::new(webhook_egress).allowing(webhook_allow),
                rate_limit: rate_limit.and_then(|n| RateLimit::new(n, rate_limit_burst)),
            };
            bridge_sandbox::serve_with(config, operations.options(), bridge_sandbox::shutdown_signal()).await
        }
        Command::Token { project, post_bridge, data, database_url, ttl_hours } => {
            let ttl = Duration::from_secs(ttl_hours * 3600);
            let token = match database_url {
                Some(url) => bridge_sandbox::mint_token_for_database(&url, &project, post_bridge, ttl).await?,
                None => bridge_sandbox::mint_token(&data, &project, post_bridge, ttl)?,
            };
            println!("{token}");
            Ok(())
        }
        Command::ApiKey { project, data, database_url } => {
            anyhow::ensure!(!project.is_empty(), "the project id must not be empty");
            let key = match database_url {
                Some(url) => bridge_sandbox::mint_api_key_for_database(&url, &project).await?,
                None => bridge_sandbox::mint_api_key(&data, &project)?,
            };
            println!("{key}");
            Ok(())
        }
    }
}
