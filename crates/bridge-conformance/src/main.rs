//! `bridge-conformance`: checks a deployment of the bridge service API against the contract (the default form,
//! or `run`), checks real traffic through a validating proxy (`proxy`), and replays a recording (`replay`).
//! `--help` explains each.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use bridge_conformance::proxy::replay::{replay, ReplayConfig};
use bridge_conformance::proxy::{Proxy, ProxyConfig};
use bridge_conformance::report::coverage::TrafficReport;
use bridge_conformance::{run, Fixtures, RateLimited, RunConfig};
use bridge_server::ErrorsMode;
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

/// mimalloc rather than the system allocator: checking an answer allocates each member of its JSON (a `Value`
/// for the schema, the typed decode), and glibc's malloc and free were a fifth of the proxy's instructions per
/// exchange (docs/performance.md, 1e). The binary's choice only: the library leaves it to whoever links it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Checks a deployment of the bridge service API against the contract (schema/openapi.yaml): every answer
/// validated against its documented schema, the decode-error catalogue, authentication, project isolation,
/// quote arithmetic, paging and cursors, and (against a sandbox) bridge lifecycles and signed webhook
/// deliveries.
///
/// Prints one line per check (`PASS area::name`, or `FAIL area::name: reason`), then `N passed, M failed`;
/// progress goes to stderr (RUST_LOG=debug for every request). Exit status: 0 when everything passed,
/// 1 when a check failed, 2 when the run could not start (bad arguments, deployment unreachable).
///
/// Against a staging deployment, with two dedicated test projects (the checks create quotes, bridges that
/// wait for a deposit, and deposit addresses in them):
///
///   export BRIDGE_CONFORMANCE_TOKEN=<JWT of test project A>
///   export BRIDGE_CONFORMANCE_OTHER_TOKEN=<JWT of test project B>
///   cargo run -p bridge-conformance --features https -- \
///       --base-url https://bridge.staging.example.com --junit conformance.xml
///
/// Add --expired-token (an expired JWT of your issuer) for the expired-token checks, --revoked-api-key (a revoked
/// API key) with --revoked-key-token (a JWT exchanged from it before) for the revocation checks, and --rate-limited
/// when the deployment limits each project's request rate (the `limits` checks: 429 TooManyRequests, run last).
/// The fixtures (chains, tokens, addresses, amounts) default to production ids that the sandbox also serves;
/// change them with the options below if your catalogue differs. Checks that need something not given
/// (--other-token, --sandbox-helpers, --expired-token, --revoked-api-key, --revoked-key-token, --rate-limited) are
/// not run, and the log says how many.
///
/// Everything at once against a throw-away local sandbox (the workspace tests run this in CI):
///
///   cargo run -p bridge-conformance -- --spawn-sandbox
///
/// Only some checks: --only isolation, --only quoteBridge, --only schema::getBridge (whole `::` segments of
/// check names), or a glob: --only 'decode::*::query*'.
///
/// More commands (each has its --help):
///
///   bridge-conformance proxy --upstream URL    a validating proxy: put it between a service and the
///                                              deployment; it checks every exchange and reports coverage
///   bridge-conformance replay FILE --base-url URL   sends a recording of the proxy again and compares
///   bridge-conformance receiver --url URL --spawn-sandbox   checks your webhook receiver: signed deliveries
///                                              as production sends them, and what it did with each
#[derive(Parser, Debug)]
#[command(name = "bridge-conformance", version, about, long_about, verbatim_doc_comment)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

// Parsed once per process: the size of the largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Runs the checks against a deployment (the same as without a command).
    Run(RunArgs),
    /// A validating reverse proxy in front of a deployment.
    Proxy(ProxyArgs),
    /// Sends a recording of the proxy (--record) again and reports how the answers differ.
    Replay(ReplayArgs),
    // The about and --help text are ReceiverArgs's.
    Receiver(ReceiverArgs),
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("target").required(true).args(["base_url", "spawn_sandbox"])))]
struct RunArgs {
    /// Base URL of the deployment (scheme, host, port, optional path prefix).
    #[arg(long, env = "BRIDGE_CONFORMANCE_BASE_URL", hide_env_values = true, requires = "token")]
    base_url: Option<String>,

    /// Bearer JWT of a test project of the deployment.
    #[arg(long, env = "BRIDGE_CONFORMANCE_TOKEN", hide_env_values = true)]
    token: Option<String>,

    /// Bearer JWT of a second test project: enables the isolation checks.
    #[arg(long, env = "BRIDGE_CONFORMANCE_OTHER_TOKEN", hide_env_values = true)]
    other_token: Option<String>,

    /// An expired bearer JWT of the deployment's issuer: enables the expired-token checks.
    #[arg(long, env = "BRIDGE_CONFORMANCE_EXPIRED_TOKEN", hide_env_values = true)]
    expired_token: Option<String>,

    /// An API key of the deployment that was revoked: enables the checks that the exchange
    /// (POST /authentication/auth/apiKey) and the event feed (x-api-key) refuse it with 401 Unauthorized.
    #[arg(long, env = "BRIDGE_CONFORMANCE_REVOKED_API_KEY", hide_env_values = true)]
    revoked_api_key: Option<String>,

    /// A bearer JWT exchanged from that key before it was revoked: enables the checks that every authenticated
    /// operation refuses it with 401 Unauthorized.
    #[arg(long, env = "BRIDGE_CONFORMANCE_REVOKED_KEY_TOKEN", hide_env_values = true)]
    revoked_key_token: Option<String>,

    /// The deployment serves the sandbox helper endpoints (a bridge-sandbox on this machine): enables the
    /// lifecycle and webhook-delivery checks (deliveries go to a receiver on 127.0.0.1).
    #[arg(long)]
    sandbox_helpers: bool,

    /// Start a sandbox on a free loopback port (temporary data directory, manual clock), mint its tokens, run
    /// every check against it (implies --sandbox-helpers), and stop it. The `limits` checks run against a second
    /// sandbox started with a per-project rate limit (1 request per second, 3 at once).
    #[arg(long, conflicts_with_all = ["base_url", "token", "other_token", "expired_token", "revoked_api_key", "revoked_key_token", "rate_limited"])]
    spawn_sandbox: bool,

    /// The deployment limits each project's request rate (429 TooManyRequests beyond it): run the `limits`
    /// checks against it, with --token (and --other-token). They spend the project's budget, so they run last.
    #[arg(long)]
    rate_limited: bool,

    /// Run only the checks whose name has PATTERN as whole `::` segments (`isolation`, `quoteBridge`,
    /// `schema::getBridge`), or matches it as a glob when it has `*`. Repeatable.
    #[arg(long, value_name = "PATTERN")]
    only: Vec<String>,

    /// Also write the results as JUnit XML to FILE (one test suite per area).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,

    /// Also write one self-contained HTML page to FILE: the checks, and what a validating proxy between the runner
    /// and the deployment saw (coverage per operation, statuses, violations with examples). With it, the run's
    /// requests go through that proxy (started on 127.0.0.1).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// How many failing properties the deployment's decode errors report: the first (the reference
    /// framework's default) or all.
    #[arg(long, value_enum, default_value = "first")]
    errors: Errors,

    /// Seconds the webhook checks wait for deliveries.
    #[arg(long, default_value_t = 5, value_name = "SECONDS")]
    webhook_wait: u64,

    /// A token bridgeable from --chain-in to --chain-out.
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().token)]
    fixture_token: String,
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().chain_in)]
    chain_in: String,
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().chain_out)]
    chain_out: String,
    /// Amount of the quotes (inside the deposit limits).
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().amount)]
    amount: String,
    /// An address on --chain-in.
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().depositor)]
    depositor: String,
    /// An address on --chain-out (also the destination of deposit addresses).
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().recipient)]
    recipient: String,
    /// Token swapped on --chain-in in the bridge-swap checks.
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().swap_token_in)]
    swap_token_in: String,
    /// Token received on --chain-out in the bridge-swap checks.
    #[arg(long, help_heading = "Fixtures", default_value_t = Fixtures::default().swap_token_out)]
    swap_token_out: String,
    /// Deposit chains of the deposit addresses (one chain family). Repeatable.
    #[arg(long = "deposit-chain", help_heading = "Fixtures", default_values_t = Fixtures::default().deposit_chains)]
    deposit_chains: Vec<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Errors {
    First,
    All,
}

impl Errors {
    fn mode(self) -> ErrorsMode {
        match self {
            Errors::First => ErrorsMode::First,
            Errors::All => ErrorsMode::All,
        }
    }
}

impl RunArgs {
    fn config(&self, base_url: &str, token: &str) -> RunConfig {
        let mut config = RunConfig::new(base_url, token);
        config.other_token = self.other_token.clone();
        config.expired_token = self.expired_token.clone();
        config.revoked_api_key = self.revoked_api_key.clone();
        config.revoked_key_token = self.revoked_key_token.clone();
        config.sandbox_helpers = self.sandbox_helpers;
        config.only = self.only.clone();
        config.errors = self.errors.mode();
        config.webhook_wait = Duration::from_secs(self.webhook_wait);
        let f = &mut config.fixtures;
        f.token = self.fixture_token.clone();
        f.chain_in = self.chain_in.clone();
        f.chain_out = self.chain_out.clone();
        f.amount = self.amount.clone();
        f.depositor = self.depositor.clone();
        f.recipient = self.recipient.clone();
        f.swap_token_in = self.swap_token_in.clone();
        f.swap_token_out = self.swap_token_out.clone();
        f.deposit_chains = self.deposit_chains.clone();
        config
    }
}

/// A validating reverse proxy: forwards every request to --upstream unchanged (streamed, headers kept) and
/// checks each exchange against the contract with its own decoder, schema and generated types. Violations are
/// logged (stderr), listed in the `x-contract-violations` answer header, and counted per operation.
///
/// Put it between a service (or its integration tests) and the deployment, and point the service at it:
///
///   cargo run -p bridge-conformance -- proxy --upstream http://127.0.0.1:8080 --listen 127.0.0.1:8088 \
///       --html report.html --junit report.xml --max-violations 0 --fail-under 80
///   BRIDGE_URL=http://127.0.0.1:8088 ./run-my-integration-tests
///   kill -INT <proxy pid>      # or --requests N; the reports are written and the gates decide the exit status
///
/// Against production (HTTPS), build with the `https` feature:
///   cargo run -p bridge-conformance --features https -- proxy --upstream https://api.example.com
///
/// GET /_conformance/report on the proxy answers the report so far (JSON; ?format=html, ?format=junit).
/// Requests go to --upstream only: the path and query of each request are sent there (the host an absolute-form
/// request names is ignored); OPTIONS * and CONNECT answer 400 ProxyError. Credentials are redacted, by header
/// and by form (sbx_ keys, session ids, CSRF tokens, JWTs), in the logs, the reports and --record.
/// Exit status: 0, or 1 when a gate (--fail-under, --max-violations) fails, 2 when it could not start.
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
struct ProxyArgs {
    /// Base URL of the deployment to forward to (scheme, host, port, optional path prefix).
    #[arg(long, env = "BRIDGE_CONFORMANCE_UPSTREAM", value_name = "URL")]
    upstream: String,

    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8088", value_name = "ADDR")]
    listen: std::net::SocketAddr,

    /// Answer 502 (`ContractViolations`, listing them) instead of forwarding a non-conforming answer.
    #[arg(long)]
    strict: bool,

    /// How many failing properties the deployment's decode errors report.
    #[arg(long, value_enum, default_value = "first")]
    errors: Errors,

    /// The upstream is a sandbox: count its helper operations (/sandbox/*) in the coverage.
    #[arg(long)]
    sandbox_helpers: bool,

    /// Record every exchange to FILE (JSON lines; credentials redacted) for `bridge-conformance replay`.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// At exit, write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// At exit, write the report as JUnit XML to FILE (a test case per operation).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,

    /// At exit, write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// Stop after N exchanges (otherwise on SIGINT or SIGTERM).
    #[arg(long, value_name = "N")]
    requests: Option<u64>,

    /// Exit 1 when less than PCT percent of the operations were exercised.
    #[arg(long, value_name = "PCT")]
    fail_under: Option<f64>,

    /// Exit 1 when more than N violations were seen.
    #[arg(long, value_name = "N")]
    max_violations: Option<u64>,

    /// The largest body (request or answer) the proxy keeps to check, in bytes. Larger answers are streamed and
    /// checked after they passed (not in the header).
    #[arg(long, default_value_t = 4 << 20, value_name = "BYTES")]
    body_limit: usize,

    /// How long the upstream may take to answer (e.g. 30s, 500ms): the head of its answer, and the whole answer
    /// when the proxy reads it whole. Beyond it the client gets 504 ProxyError; a streamed answer whose upstream
    /// sends nothing for this long is cut.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    upstream_timeout: Duration,
}

/// Sends a recording made by `proxy --record FILE` again, in order, and compares each answer with the recorded
/// one: status, content type and JSON body, member by member. Members the contract marks `x-volatile` (ids,
/// hashes, cursors, dates) are not compared: the values the replay gets for them replace the recorded ones in
/// later requests (a new quote id is the one its commit then uses).
///
///   cargo run -p bridge-conformance -- replay recording.jsonl --base-url http://127.0.0.1:8080 --token $TOKEN
///
/// Prints `PASS #n operation request` or `FAIL #n ...: differences`, then `N passed, M failed`. Exit status: 0
/// when every answer matched, 1 when one differed, 2 when it could not run.
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
struct ReplayArgs {
    /// The recording (JSON lines).
    file: PathBuf,

    /// Base URL of the deployment to send the requests to.
    #[arg(long, env = "BRIDGE_CONFORMANCE_BASE_URL", hide_env_values = true, value_name = "URL")]
    base_url: String,

    /// Bearer JWT used where the recording has a (redacted) Authorization header.
    #[arg(long, env = "BRIDGE_CONFORMANCE_TOKEN", hide_env_values = true)]
    token: Option<String>,

    /// API key used where the recording has a redacted API key (header or request member).
    #[arg(long, env = "BRIDGE_CONFORMANCE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,

    /// Also write the differences as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Checks a webhook receiver: a sandbox sends it deliveries as production does and reports what it did.
///
/// The sandbox sends a battery of signed deliveries (every event kind; one unsigned, one signed with another key,
/// one changed after signing; a retry; a bridge's events out of order; an event with a member, and one of a kind,
/// the receiver does not know; an envelope an hour old) and reports what the receiver did with each, as `must` and
/// `should` checks, each with why it matters and, when it failed, what was sent and what came back.
///
///   bridge-conformance receiver --url http://127.0.0.1:3000/webhooks/bridge \
///       --sandbox http://127.0.0.1:8080 --token "$(bridge-sandbox token --project my-app)"
///
///   # in CI: a throw-away sandbox on 127.0.0.1:8080, JUnit XML for the CI's test view
///   bridge-conformance receiver --url http://127.0.0.1:3000/webhooks/bridge --spawn-sandbox --junit receiver.xml
///
/// The receiver verifies signatures with the key of the sandbox that sends (its GET /webhook/public-key): with
/// --spawn-sandbox that sandbox listens on --sandbox-listen (127.0.0.1:8080 by default, the address of
/// `bridge-sandbox serve`), so point your receiver there, as in development. The sandbox must reach the receiver
/// (its webhook egress policy applies: a refused URL is refused before anything is sent).
///
/// Prints the report on stdout (--format text, json, junit or html); --json, --junit and --html also write it to
/// files. Exit status: 0 when every must check passed (failed should checks are reported, not gated on), 1 when a
/// must check failed, 2 when the check could not run (the sandbox unreachable, the URL refused: the reason is
/// printed).
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
#[command(group(ArgGroup::new("sender").required(true).args(["sandbox", "spawn_sandbox"])))]
struct ReceiverArgs {
    /// The receiver's URL (http://...): where a quote's webhookUrl would lead.
    #[arg(long, value_name = "URL")]
    url: String,

    /// Base URL of the sandbox that sends the deliveries.
    #[arg(long, env = "BRIDGE_CONFORMANCE_SANDBOX", value_name = "URL", requires = "token")]
    sandbox: Option<String>,

    /// Bearer JWT of a project of that sandbox (`bridge-sandbox token --project ID`).
    #[arg(long, env = "BRIDGE_CONFORMANCE_TOKEN", hide_env_values = true)]
    token: Option<String>,

    /// Start a sandbox for the check (temporary data directory, manual clock) on --sandbox-listen, and stop it
    /// afterwards.
    #[arg(long, conflicts_with = "sandbox")]
    spawn_sandbox: bool,

    /// Where the spawned sandbox listens: where the receiver fetches the webhook key.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    sandbox_listen: std::net::SocketAddr,

    /// The sender's timeout the receiver is held to, in milliseconds (within the bounds of the schema's
    /// `SandboxReceiverCheckRequest.timeoutMs`; the sandbox answers 400 naming them otherwise). Without it, the
    /// sandbox's own delivery timeout; set it shorter to see a slow receiver fail quickly.
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: ReceiverFormat,

    /// Also write the report as JSON (as the sandbox answered it) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Also write the report as JUnit XML to FILE (one test case per check; every failed check a failure).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ReceiverFormat {
    Text,
    Json,
    Junit,
    Html,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // Every log line goes through the credential recogniser: none writes an API key, a JWT, a session id or a
    // CSRF token whole (`bridge_server::credential`).
    tracing_subscriber::fmt()
        .with_writer(|| bridge_server::credential::Redacting(std::io::stderr()))
        // Colours only on a terminal, and not even there with NO_COLOR set (https://no-color.org), as for --help.
        .with_ansi(anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,bridge_conformance=info".into()),
        )
        .init();
    let outcome = match &cli.command {
        None => go(&cli.run).await,
        Some(Command::Run(args)) => go(args).await,
        Some(Command::Proxy(args)) => proxy(args).await,
        Some(Command::Replay(args)) => replay_command(args).await,
        Some(Command::Receiver(args)) => receiver_command(args).await,
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("bridge-conformance: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn write_file(path: &Path, contents: &str, what: &str) -> anyhow::Result<()> {
    std::fs::write(path, contents).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    tracing::info!(path = %path.display(), "{what} written");
    Ok(())
}

/// The runner; `Ok(true)` when every check passed.
async fn go(cli: &RunArgs) -> anyhow::Result<bool> {
    let mut stdout = std::io::stdout();
    let run_one = |config: RunConfig, html: bool| async move {
        let mut stdout = std::io::stdout();
        if html {
            let (report, traffic) = bridge_conformance::run_through_proxy(&config, &mut stdout).await?;
            anyhow::Ok((report, Some(traffic)))
        } else {
            anyhow::Ok((run(&config, &mut stdout).await?, None))
        }
    };
    let (report, traffic, target) = if cli.spawn_sandbox {
        #[cfg(not(feature = "spawn-sandbox"))]
        anyhow::bail!("--spawn-sandbox: this runner was built without the `spawn-sandbox` feature (a default one)");
        #[cfg(feature = "spawn-sandbox")]
        {
            use bridge_conformance::SpawnedSandbox;
            let sandbox = SpawnedSandbox::start().await?;
            let limited = SpawnedSandbox::start_rate_limited().await?;
            let mut config = cli.config(&sandbox.base_url, &sandbox.token);
            let spawned = sandbox.run_config();
            config.other_token = spawned.other_token;
            config.expired_token = spawned.expired_token;
            config.revoked_api_key = spawned.revoked_api_key;
            config.revoked_key_token = spawned.revoked_key_token;
            config.sandbox_helpers = true;
            config.rate_limited = Some(limited.rate_limited());
            let outcome = run_one(config.clone(), cli.html.is_some()).await;
            sandbox.stop().await?;
            limited.stop().await?;
            let (report, traffic) = outcome?;
            (report, traffic, config.base_url)
        }
    } else {
        let base_url = cli.base_url.clone().unwrap_or_default();
        let token = cli
            .token
            .clone()
            .ok_or_else(|| anyhow::anyhow!("--token (or BRIDGE_CONFORMANCE_TOKEN) is required with --base-url"))?;
        if base_url.starts_with("https://") && !cfg!(feature = "https") {
            anyhow::bail!("{base_url} is HTTPS: build with the `https` feature (cargo run -p bridge-conformance --features https -- ...)");
        }
        let mut config = cli.config(&base_url, &token);
        if cli.rate_limited {
            let other_token = cli.other_token.clone();
            config.rate_limited = Some(RateLimited { base_url: base_url.clone(), token, other_token });
        }
        let (report, traffic) = run_one(config, cli.html.is_some()).await?;
        (report, traffic, base_url)
    };
    stdout.flush()?;
    if let Some(path) = &cli.junit {
        write_file(path, &report.junit(&target)?, "JUnit XML")?;
    }
    if let (Some(path), Some(traffic)) = (&cli.html, &traffic) {
        write_file(path, &bridge_conformance::report::html::page(traffic, Some(&report)), "HTML report")?;
    }
    Ok(report.failed() == 0)
}

/// The proxy until a signal or --requests; `Ok(true)` when the gates pass.
async fn proxy(args: &ProxyArgs) -> anyhow::Result<bool> {
    let mut config = ProxyConfig::new(&args.upstream);
    config.listen = args.listen;
    config.strict = args.strict;
    config.errors = args.errors.mode();
    config.sandbox_helpers = args.sandbox_helpers;
    config.record = args.record.clone();
    config.body_limit = args.body_limit;
    config.upstream_timeout = args.upstream_timeout;
    let proxy = Proxy::start(config).await?;
    eprintln!(
        "bridge-conformance proxy: {} → {} (report: {}/_conformance/report)",
        proxy.url, args.upstream, proxy.url
    );
    let enough = async {
        match args.requests {
            None => std::future::pending::<()>().await,
            Some(n) => {
                while proxy.requests() < n {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    };
    tokio::select! {
        _ = shutdown_signal() => {},
        _ = enough => tracing::info!("{} exchanges seen: stopping", args.requests.unwrap_or_default()),
    }
    let report = proxy.stop().await?;
    if let Some(path) = &args.json {
        write_file(path, &serde_json::to_string_pretty(&report)?, "JSON report")?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &report.junit()?, "JUnit XML")?;
    }
    if let Some(path) = &args.html {
        write_file(path, &bridge_conformance::report::html::page(&report, None), "HTML report")?;
    }
    println!("{}", summary(&report));
    let failed = gates(&report, args.fail_under, args.max_violations);
    for reason in &failed {
        eprintln!("bridge-conformance proxy: {reason}");
    }
    Ok(failed.is_empty())
}

/// `120 requests, 3 violations, 85.7% of the operations exercised (24 of 28), 1 path the contract lacks`.
fn summary(report: &TrafficReport) -> String {
    format!(
        "{} requests, {} violations, {}% of the operations exercised ({} of {}), {} path(s) the contract lacks",
        report.requests,
        report.violations,
        report.coverage.percent,
        report.coverage.exercised,
        report.coverage.operations,
        report.not_in_contract.len()
    )
}

/// The gates that fail, each as a sentence.
fn gates(report: &TrafficReport, fail_under: Option<f64>, max_violations: Option<u64>) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(pct) = fail_under {
        if report.coverage.percent < pct {
            failed.push(format!(
                "--fail-under {pct}: only {}% of the operations were exercised (never: {})",
                report.coverage.percent,
                report.never_exercised.join(", ")
            ));
        }
    }
    if let Some(max) = max_violations {
        if report.violations > max {
            failed.push(format!("--max-violations {max}: {} violations", report.violations));
        }
    }
    failed
}

/// Replays a recording; `Ok(true)` when every answer matched.
async fn replay_command(args: &ReplayArgs) -> anyhow::Result<bool> {
    let recorded = bridge_conformance::proxy::record::read(&args.file)?;
    let mut config = ReplayConfig::new(&args.base_url);
    config.token = args.token.clone();
    config.api_key = args.api_key.clone();
    let mut stdout = std::io::stdout();
    let report = replay(&recorded, &config, &mut stdout).await?;
    stdout.flush()?;
    if let Some(path) = &args.json {
        write_file(path, &serde_json::to_string_pretty(&report)?, "replay report")?;
    }
    Ok(report.failed() == 0)
}

/// The receiver check; `Ok(true)` when no must check failed.
async fn receiver_command(args: &ReceiverArgs) -> anyhow::Result<bool> {
    use bridge_conformance::report::receiver;
    use bridge_conformance::runner::receiver_check::{check_receiver, ReceiverCheckConfig};
    let config = |sandbox: &str, token: &str| ReceiverCheckConfig {
        sandbox: sandbox.to_owned(),
        token: token.to_owned(),
        url: args.url.clone(),
        timeout_ms: args.timeout_ms,
    };
    let report = if args.spawn_sandbox {
        #[cfg(not(feature = "spawn-sandbox"))]
        anyhow::bail!("--spawn-sandbox: this runner was built without the `spawn-sandbox` feature (a default one)");
        #[cfg(feature = "spawn-sandbox")]
        {
            let sandbox = bridge_conformance::SpawnedSandbox::start_on(args.sandbox_listen).await.map_err(|e| {
                anyhow::anyhow!("{e:#}; give another --sandbox-listen, or a running sandbox with --sandbox and --token")
            })?;
            eprintln!("bridge-conformance receiver: a sandbox on {} sends the deliveries", sandbox.base_url);
            let report = check_receiver(&config(&sandbox.base_url, &sandbox.token)).await;
            sandbox.stop().await?;
            report?
        }
    } else {
        let sandbox = args.sandbox.as_deref().unwrap_or_default();
        let token = args.token.as_deref().ok_or_else(|| anyhow::anyhow!("--token is required with --sandbox"))?;
        check_receiver(&config(sandbox, token)).await?
    };
    let json = serde_json::to_string_pretty(&report)?;
    let printed = match args.format {
        ReceiverFormat::Text => receiver::text(&report),
        ReceiverFormat::Json => format!("{json}\n"),
        ReceiverFormat::Junit => receiver::junit(&report)?,
        ReceiverFormat::Html => receiver::html(&report),
    };
    let mut stdout = std::io::stdout();
    stdout.write_all(printed.as_bytes())?;
    stdout.flush()?;
    if let Some(path) = &args.json {
        write_file(path, &json, "JSON report")?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &receiver::junit(&report)?, "JUnit XML")?;
    }
    if let Some(path) = &args.html {
        write_file(path, &receiver::html(&report), "HTML report")?;
    }
    Ok(!receiver::must_failed(&report))
}

/// Ctrl-C, or SIGTERM on Unix (the proxy stops and writes its reports).
async fn shutdown_signal() {
    #[cfg(unix)]
    if let Ok(mut terminate) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
