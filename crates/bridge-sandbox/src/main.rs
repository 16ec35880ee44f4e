//! `bridge-sandbox`: the whole bridge service, locally. `bridge-sandbox --help` explains the commands.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use bridge_contract::SandboxFaultProfile;
use bridge_sandbox::admin::{self, Admin};
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::egress::{EgressMode, WebhookEgress};
use bridge_sandbox::rate_limit::RateLimit;
use bridge_sandbox::store::access::time;
use bridge_sandbox::{Retention, SandboxConfig, ServeOptions, SignInBudget};
use bridge_server::ErrorsMode;
use clap::{Args, Parser, Subcommand, ValueEnum};
use ipnet::IpNet;

/// A local, stateful bridge service for integration work: exact to the contract, kept in one SQLite file (or a
/// PostgreSQL database shared by several instances).
///
/// Quick start:
///   bridge-sandbox serve                      # serves http://127.0.0.1:8080 (API reference at /docs)
///   bridge-sandbox token --project my-app     # prints a bearer token that sandbox accepts
///   bridge-sandbox api-key --project my-app   # prints an API key (exchanged for a token at /authentication/auth/apiKey)
///
/// Running a shared sandbox (every command works on the sandbox's --data directory or --database-url, also while it
/// serves; every instance follows a change within a second, without a restart):
///   bridge-sandbox api-key list --project my-app      # ids, names, created, last use
///   bridge-sandbox api-key revoke key_0123abcd...     # refused at once, and so are the tokens exchanged from it
///   bridge-sandbox project list                       # projects, their keys, last activity
///   bridge-sandbox project disable my-app             # every token and key of it refused (401); data kept
///   bridge-sandbox signing-key rotate                 # new tokens use a new key; older tokens stay valid
///   bridge-sandbox audit                              # who changed which project or key, and when
#[derive(Parser)]
#[command(name = "bridge-sandbox", version, about, long_about, verbatim_doc_comment)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which sandbox a command works on: its data directory, or its PostgreSQL database.
#[derive(Args, Clone)]
struct StoreArgs {
    /// Data directory of the sandbox (the one `serve --data` uses).
    #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
    data: PathBuf,
    /// The PostgreSQL database of the sandbox (instead of --data).
    #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
    database_url: Option<String>,
}

impl StoreArgs {
    async fn admin(&self) -> anyhow::Result<Admin> {
        bridge_sandbox::admin(&self.data, self.database_url.as_deref()).await
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the whole API (and /openapi.json, /docs) until Ctrl-C or SIGTERM.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080", env = "BRIDGE_SANDBOX_LISTEN")]
        listen: SocketAddr,
        /// Data directory: the database (sandbox.db) and the webhook key (keys/), made on first start.
        #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
        data: PathBuf,
        /// Keep everything in this PostgreSQL database instead of the data directory
        /// (`postgres://user:password@host:port/database`). Several instances may share one database, behind any
        /// HTTP load balancer: they share the signing keys, the projects and API keys, the clock, the counters, the
        /// lifecycle and the webhook deliveries.
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
        /// Faults injected on purpose into the traffic of every project that has no profile of its own, to test
        /// clients and receivers against a service that is sometimes slow or refuses (off by default). A project
        /// sets its own with PUT /sandbox/faults (`{}`: none) or on the dashboard. Comma-separated
        /// KIND=FRACTION[:DURATION], FRACTION from 0 to 1 (the fractions of one group add up to at most 1):
        ///   requests.tooManyRequests=F:D  answered 429 TooManyRequests, retryAfter D (1ms to 60s)
        ///   requests.unavailable=F        answered 503 ServiceUnavailable
        ///   requests.delay=F:D            answered after waiting D (1ms to 10s)
        ///   deliveries.duplicate=F        a webhook the receiver acknowledged is sent again
        ///   deliveries.holdBack=F:D       a webhook is held back D (100ms to 60s) while later ones go first
        ///   deliveries.delay=F:D          a webhook waits D (1ms to 30s) before it is sent
        /// Requests are the API operations that need a credential, except /sandbox/* (never faulted); faulted
        /// answers carry `x-sandbox-fault: KIND`, faulted delivery attempts are marked in
        /// GET /sandbox/webhook-deliveries, /metrics counts both. With --seed the faulted requests are the same in
        /// every run. Example: --faults 'requests.tooManyRequests=0.1:1s,requests.unavailable=0.05'
        #[arg(long, value_name = "PROFILE", value_parser = parse_faults, help_heading = "Faults", verbatim_doc_comment)]
        faults: Option<Box<SandboxFaultProfile>>,
    },
    /// Print a bearer token (JWT) for a project, signed with the sandbox's current signing key. A project seen for
    /// the first time is created. The token is refused once the project is disabled.
    Token {
        /// The project id (becomes `userId` in records).
        #[arg(long)]
        project: String,
        /// Enable post-bridge actions (`postBridgeData`) for the project.
        #[arg(long)]
        post_bridge: bool,
        /// Hours until the token expires.
        #[arg(long, default_value_t = 24)]
        ttl_hours: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print a new API key for a project (or list or revoke keys): `POST /authentication/auth/apiKey` exchanges it
    /// for a bearer token, and the event feed accepts it as `x-api-key`. The key is shown once, here: the sandbox
    /// keeps only its hash. It does not expire; revoke it with `api-key revoke`. A project seen for the first
    /// time is created.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    ApiKey {
        #[command(subcommand)]
        command: Option<ApiKeyCommand>,
        /// The project id (becomes `userId` in records).
        #[arg(long, required = true)]
        project: Option<String>,
        /// A name to tell the key from the project's others (`ci`, `alice's laptop`).
        #[arg(long, default_value = "unnamed")]
        name: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List projects, disable a project (every token and key of it refused) or enable it again.
    Project {
        #[command(subcommand)]
        command: ProjectCommand,
    },
    /// Rotate the JWT signing key (new tokens use a new key; tokens of the old one stay valid until they expire),
    /// or list the keys.
    SigningKey {
        #[command(subcommand)]
        command: SigningKeyCommand,
    },
    /// List the changes made to projects and keys: when, by whom ($USER of the command, or `sandbox` for what an
    /// instance did by itself), and what changed. Oldest first.
    Audit {
        /// Only the entries of this project.
        #[arg(long)]
        project: Option<String>,
        /// How many of the latest entries.
        #[arg(long, default_value_t = 50)]
        limit: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Ask a sandbox's probe: exit 0 when it answers 2xx, else 1 (the container image's health check: no curl).
    ///
    /// Prints the answer; otherwise says on stderr what the probe answered, or why it did not. Straight to the URL:
    /// no proxy, no redirect.
    ///   bridge-sandbox probe                               # readiness of the sandbox on port 8080
    ///   bridge-sandbox probe http://127.0.0.1:8080/livez   # liveness
    #[command(verbatim_doc_comment)]
    Probe {
        /// The probe (`/readyz`: ready to serve, the load balancer's check; `/livez`: the process serves).
        #[arg(default_value = "http://127.0.0.1:8080/readyz")]
        url: url::Url,
        /// Give up after this long (exit 1).
        #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
        timeout: Duration,
    },
}

#[derive(Subcommand)]
enum ApiKeyCommand {
    /// List API keys: id, project, name, when made, last use (written by the instances every few seconds), state.
    List {
        /// Only the keys of this project (default: every project's).
        #[arg(long)]
        project: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke an API key: every instance refuses it, and the tokens exchanged from it, within a second.
    Revoke {
        /// The key's id (`key_…`, from `api-key list`) or the key itself (`sbx_…`).
        key_or_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum ProjectCommand {
    /// List projects: state, when first seen, last activity, and their API keys.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Disable a project: its tokens and API keys are refused (401 Unauthorized) on every instance within a
    /// second. Its data is kept; `project enable` restores access.
    Disable {
        /// The project id.
        project: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Enable a disabled project again: its tokens and keys that are still valid are accepted.
    Enable {
        /// The project id.
        project: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum SigningKeyCommand {
    /// Make a new JWT signing key: new tokens use it (the `kid` in their header names it). The key it replaces
    /// keeps verifying its tokens until the last of them expires (at least an hour, for tokens the API-key exchange
    /// signed), then retires. Running instances pick it up within a second.
    Rotate {
        /// Retire the replaced keys at once (their secret leaked): every token they signed is refused.
        #[arg(long)]
        retire_now: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List the signing keys: which one signs new tokens, until when the others verify theirs.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Running the sandbox as a service for others (docs/operations.md). Durations like `10s`, `500ms`, `2m`, `30d`.
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
    /// The body of a request read before any credential is checked (POST /authentication/auth/apiKey, the
    /// dashboard's sign-in; at most 4 KiB) must arrive whole within this, else it is answered 408 and its
    /// connection closed.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    unauthenticated_body_timeout: Duration,
    /// A kept-alive connection with no request for this long is closed (keep it above your load balancer's idle
    /// timeout).
    #[arg(long, default_value = "75s", value_parser = humantime::parse_duration)]
    idle_timeout: Duration,
    /// A request not answered within this is answered 503 ServiceUnavailable.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    request_timeout: Duration,
    /// The most open client connections [default: the open-file limit (raised to its hard limit at start) less
    /// 256]. At the cap a new connection replaces the one with no request in progress that has waited longest (at
    /// least 500 ms) for a request; a connection that has not had that chance is never closed for another.
    #[arg(long)]
    max_connections: Option<usize>,
    /// Dashboard sign-ins served per client address and minute (all at once after a quiet minute); beyond, 429
    /// with Retry-After.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    sign_ins_per_address: u32,
    /// Dashboard sign-ins served per project and minute (all at once after a quiet minute); beyond, 429 with
    /// Retry-After.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    sign_ins_per_project: u32,
    /// A load balancer or proxy (a network like 10.1.0.0/16, or one address; repeat the flag for several) whose
    /// X-Forwarded-For names the client of the requests it forwards (for the sign-in budget per address).
    #[arg(long, value_parser = parse_network)]
    trusted_proxy: Vec<IpNet>,
    /// On SIGTERM or Ctrl-C, how long requests and webhook attempts in flight may take to finish; what is left is
    /// cut (webhook attempts are handed back to other instances).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,
    /// How long to keep what the sandbox stores: `forever` (nothing is deleted), or a duration (`30d`, `12h`, `90m`,
    /// `2s`; at least a second). Quotes, ended bridges (EXECUTED, CANCELLED, FAILED, refunded) and their deposits,
    /// events and webhook delivery attempts older than it are deleted in the background, in small batches; age is
    /// wall-clock time since the row was last written (the database's clock), not a project's clock. Bridges under
    /// way, events whose webhook delivery is still pending, deposit addresses, projects and keys are kept. For a
    /// shared sandbox, e.g. `--retain 30d` (docs/operations.md, "Retention").
    #[arg(long, value_name = "DURATION", default_value = "forever", value_parser = Retention::parse)]
    retain: Retention,
}

impl Operations {
    fn options(&self) -> ServeOptions {
        ServeOptions {
            header_read_timeout: self.header_read_timeout,
            body_read_timeout: self.body_read_timeout,
            unauthenticated_body_timeout: self.unauthenticated_body_timeout,
            idle_timeout: self.idle_timeout,
            request_timeout: self.request_timeout,
            max_connections: self.max_connections,
            shutdown_grace: self.shutdown_grace,
            sign_ins: SignInBudget {
                per_address: RateLimit::per_minute(self.sign_ins_per_address),
                per_project: RateLimit::per_minute(self.sign_ins_per_project),
            },
            trusted_proxies: self.trusted_proxy.clone(),
            retention: self.retain,
        }
    }

    fn init_logs(&self) {
        let filter =
            || tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,tower_http=info".into());
        // Every line goes through the credential recogniser: no log line writes an API key, a JWT, a session id
        // or a CSRF token whole, whatever logged it (a request path, an error, a dependency's message).
        let out = || bridge_server::credential::Redacting(std::io::stdout());
        // Colours only on a terminal, and not even there with NO_COLOR set (https://no-color.org), as clap decides
        // for --help: `serve > file`, a pipe or a container's log collector get plain text.
        let ansi = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
        let logs = tracing_subscriber::fmt().with_writer(out).with_ansi(ansi).with_env_filter(filter());
        match self.log_format {
            LogFormat::Human => logs.init(),
            LogFormat::Json => logs.json().flatten_event(true).with_current_span(true).with_span_list(false).init(),
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

/// A fault profile (`--faults`), checked as `PUT /sandbox/faults` checks one (boxed: the profile is large).
fn parse_faults(text: &str) -> Result<Box<SandboxFaultProfile>, String> {
    bridge_sandbox::faults::profile_from_flag(text).map(Box::new)
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
            faults,
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
                faults: faults.map(|profile| *profile),
            };
            bridge_sandbox::serve_with(config, operations.options(), bridge_sandbox::shutdown_signal()).await
        }
        Command::Token { project, post_bridge, ttl_hours, store } => {
            let ttl = Duration::from_secs(ttl_hours.saturating_mul(3600));
            println!("{}", store.admin().await?.mint_token(&project, post_bridge, ttl).await?);
            Ok(())
        }
        Command::ApiKey { command: None, project, name, store } => {
            let project = project.unwrap_or_default();
            let key = store.admin().await?.create_api_key(&project, &name).await?;
            eprintln!(
                "API key {} \"{}\" of project {project}: shown once, here; the sandbox keeps only its hash.",
                key.record.id, key.record.name
            );
            println!("{}", key.text);
            Ok(())
        }
        Command::ApiKey { command: Some(ApiKeyCommand::List { project, store }), .. } => {
            print!("{}", admin::render_keys(&store.admin().await?.api_keys(project.as_deref()).await?));
            Ok(())
        }
        Command::ApiKey { command: Some(ApiKeyCommand::Revoke { key_or_id, store }), .. } => {
            let revoked = store.admin().await?.revoke_api_key(&key_or_id).await?;
            let key = &revoked.key;
            let at = key.revoked_ms.map(time).unwrap_or_default();
            match revoked.already {
                true => println!("API key {} \"{}\" of project {} was revoked already ({at})", key.id, key.name, key.project),
                false => println!(
                    "API key {} \"{}\" of project {} revoked ({at}): every instance refuses it, and the tokens exchanged from it, within a second",
                    key.id, key.name, key.project
                ),
            }
            Ok(())
        }
        Command::Project { command: ProjectCommand::List { store } } => {
            print!("{}", admin::render_projects(&store.admin().await?.projects().await?));
            Ok(())
        }
        Command::Project { command: ProjectCommand::Disable { project, store } } => {
            let change = store.admin().await?.set_disabled(&project, true).await?;
            let new = if change.created { " (a new project)" } else { "" };
            match change.changed {
                true => println!("project {project}{new} disabled: every instance refuses its tokens and keys within a second; its data is kept"),
                false => println!("project {project} was disabled already"),
            }
            Ok(())
        }
        Command::Project { command: ProjectCommand::Enable { project, store } } => {
            let change = store.admin().await?.set_disabled(&project, false).await?;
            match (change.changed, change.created) {
                (true, _) => {
                    println!("project {project} enabled: its tokens and keys are accepted again within a second")
                }
                (false, true) => println!("project {project} created, enabled"),
                (false, false) => println!("project {project} was enabled already"),
            }
            Ok(())
        }
        Command::SigningKey { command: SigningKeyCommand::Rotate { retire_now, store } } => {
            let admin = store.admin().await?;
            let new = admin.rotate_signing_key(retire_now).await?;
            println!("signing key {} made: new tokens use it; every instance picks it up within a second", new.kid);
            print!("{}", admin::render_signing_keys(&admin.signing_keys().await?, bridge_sandbox::clock::wall_ms()));
            Ok(())
        }
        Command::SigningKey { command: SigningKeyCommand::List { store } } => {
            let keys = store.admin().await?.signing_keys().await?;
            print!("{}", admin::render_signing_keys(&keys, bridge_sandbox::clock::wall_ms()));
            Ok(())
        }
        Command::Audit { project, limit, store } => {
            print!("{}", admin::render_audit(&store.admin().await?.audit(project.as_deref(), limit).await?));
            Ok(())
        }
        Command::Probe { url, timeout } => probe(url, timeout).await,
    }
}

/// `probe`: one GET of `url` within `timeout`; an answer other than 2xx is an error (exit 1).
async fn probe(url: url::Url, timeout: Duration) -> anyhow::Result<()> {
    let client =
        reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none()).timeout(timeout).build()?;
    let answer = client.get(url.clone()).send().await.with_context(|| format!("no answer from {url}"))?;
    let status = answer.status();
    let body = answer.text().await.with_context(|| format!("{url} answered {status}, then no whole body"))?;
    anyhow::ensure!(status.is_success(), "{url} answered {status}: {body}");
    println!("{status} {body}");
    Ok(())
}
