//! `bridge-conformance receiver`: the other half of the contract. The runner checks a deployment; this checks a
//! team's webhook receiver, by asking a sandbox to run its receiver check against it
//! (`POST /sandbox/webhook-receiver-checks`: the battery of deliveries, signed with the sandbox's key, and the report
//! of what the receiver did with each). The sandbox is given (`--sandbox URL --token JWT`) or started here
//! (`--spawn-sandbox`); the formats of the report are [`crate::report::receiver`]'s.

use std::time::Duration;

use anyhow::Context as _;
use bridge_client::{Client, Credentials, RetryPolicy};
use bridge_contract::{ReceiverCheckReport, SandboxReceiverCheckRequest};

/// How long the request may take: a check answers within 25 seconds (the sandbox's bound), and some.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What to check, and where.
#[derive(Debug, Clone)]
pub struct ReceiverCheckConfig {
    /// The sandbox's base URL.
    pub sandbox: String,
    /// A bearer JWT of a project of that sandbox.
    pub token: String,
    /// The receiver's URL.
    pub url: String,
    /// The sender's timeout to hold the receiver to (the sandbox's delivery timeout when `None`).
    pub timeout_ms: Option<u64>,
}

/// Runs the receiver check; `Err` when it could not run (the sandbox unreachable, the URL refused: the sandbox's
/// answer says why).
pub async fn check_receiver(config: &ReceiverCheckConfig) -> anyhow::Result<ReceiverCheckReport> {
    let http = Client::reqwest_builder()
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .timeout(REQUEST_TIMEOUT)
        .build()
        .context("building the HTTP client")?;
    // Not retried: a check sends its deliveries again when repeated.
    let client = Client::with_reqwest(&config.sandbox, http, Credentials::bearer(config.token.clone()))
        .with_retry(RetryPolicy::none());
    let request = SandboxReceiverCheckRequest { url: config.url.clone(), timeout_ms: config.timeout_ms };
    tracing::info!(url = %config.url, sandbox = %config.sandbox, "running the receiver check");
    client
        .sandbox_check_webhook_receiver(&request)
        .await
        .map_err(|e| anyhow::anyhow!("the sandbox at {} did not run the receiver check: {e}", config.sandbox))
}
