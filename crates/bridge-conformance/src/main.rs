//! `bridge-conformance`: checks a deployment of the bridge service API against the contract. `--help` explains.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bridge_conformance::{run, Fixtures, RunConfig, SpawnedSandbox};
use bridge_server::ErrorsMode;
use clap::{ArgGroup, Parser, ValueEnum};

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
/// Add --expired-token (an expired JWT of your issuer) for the expired-token checks, and --revoked-api-key (a
/// revoked API key) with --revoked-key-token (a JWT exchanged from it before) for the revocation checks. The fixtures (chains,
/// tokens, addresses, amounts) default to production ids that the sandbox also serves; change them with the
/// options below if your catalogue differs. Checks that need something not given (--other-token,
/// --sandbox-helpers, --expired-token, --revoked-api-key, --revoked-key-token) are not run, and the log says how
/// many.
///
/// Everything at once against a throw-away local sandbox (the workspace tests run this in CI):
///
///   cargo run -p bridge-conformance -- --spawn-sandbox
///
/// Only some checks: --only isolation, --only quoteBridge, --only schema::getBridge (whole `::` segments of
/// check names), or a glob: --only 'decode::*::query*'.
#[derive(Parser, Debug)]
#[command(name = "bridge-conformance", version, about, long_about, verbatim_doc_comment)]
#[command(group(ArgGroup::new("target").required(true).args(["base_url", "spawn_sandbox"])))]
struct Cli {
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
    /// every check against it (implies --sandbox-helpers), and stop it.
    #[arg(long, conflicts_with_all = ["base_url", "token", "other_token", "expired_token", "revoked_api_key", "revoked_key_token"])]
    spawn_sandbox: bool,

    /// Run only the checks whose name has PATTERN as whole `::` segments (`isolation`, `quoteBridge`,
    /// `schema::getBridge`), or matches it as a glob when it has `*`. Repeatable.
    #[arg(long, value_name = "PATTERN")]
    only: Vec<String>,

    /// Also write the results as JUnit XML to FILE (one test suite per area).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,

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

impl Cli {
    fn config(&self, base_url: &str, token: &str) -> RunConfig {
        let mut config = RunConfig::new(base_url, token);
        config.other_token = self.other_token.clone();
        config.expired_token = self.expired_token.clone();
        config.revoked_api_key = self.revoked_api_key.clone();
        config.revoked_key_token = self.revoked_key_token.clone();
        config.sandbox_helpers = self.sandbox_helpers;
        config.only = self.only.clone();
        config.errors = match self.errors {
            Errors::First => ErrorsMode::First,
            Errors::All => ErrorsMode::All,
        };
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

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,bridge_conformance=info".into()),
        )
        .init();
    match go(&cli).await {
        Ok(report) if report.failed() == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("bridge-conformance: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn go(cli: &Cli) -> anyhow::Result<bridge_conformance::Report> {
    let mut stdout = std::io::stdout();
    let (report, target) = if cli.spawn_sandbox {
        let sandbox = SpawnedSandbox::start().await?;
        let mut config = cli.config(&sandbox.base_url, &sandbox.token);
        let spawned = sandbox.run_config();
        config.other_token = spawned.other_token;
        config.expired_token = spawned.expired_token;
        config.revoked_api_key = spawned.revoked_api_key;
        config.revoked_key_token = spawned.revoked_key_token;
        config.sandbox_helpers = true;
        let report = run(&config, &mut stdout).await;
        sandbox.stop().await?;
        (report?, config.base_url)
    } else {
        let base_url = cli.base_url.clone().unwrap_or_default();
        let token = cli
            .token
            .clone()
            .ok_or_else(|| anyhow::anyhow!("--token (or BRIDGE_CONFORMANCE_TOKEN) is required with --base-url"))?;
        if base_url.starts_with("https://") && !cfg!(feature = "https") {
            anyhow::bail!("{base_url} is HTTPS: build with the `https` feature (cargo run -p bridge-conformance --features https -- ...)");
        }
        let config = cli.config(&base_url, &token);
        (run(&config, &mut stdout).await?, base_url)
    };
    stdout.flush()?;
    if let Some(path) = &cli.junit {
        std::fs::write(path, report.junit(&target)?).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        tracing::info!(path = %path.display(), "JUnit XML written");
    }
    Ok(report)
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
