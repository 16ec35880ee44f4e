//! What a run needs: where the deployment is, the credentials, which checks, and the fixtures (the chain and
//! token ids, addresses and amounts that the deployment's catalogue supports).

use std::time::Duration;

use bridge_server::ErrorsMode;

/// One run of the runner.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The deployment's base URL (scheme, host, port, optional path prefix), e.g. `https://bridge.staging.example.com`.
    pub base_url: String,
    /// A project token (bearer JWT) the deployment accepts.
    pub token: String,
    /// A token of a second project: enables the isolation checks.
    pub other_token: Option<String>,
    /// A token of the deployment's issuer that has expired (the expired-token checks need the issuer's key, so
    /// the runner cannot make one for a remote deployment). `--spawn-sandbox` makes one.
    pub expired_token: Option<String>,
    /// An API key of the deployment that was revoked: the exchange and the event feed (`x-api-key`) must refuse it
    /// (401 `Unauthorized`). `--spawn-sandbox` makes and revokes one.
    pub revoked_api_key: Option<String>,
    /// A token exchanged from that key before it was revoked: every authenticated operation must refuse it (401).
    pub revoked_key_token: Option<String>,
    /// The deployment serves the `sandbox`-tagged helper endpoints (a `bridge-sandbox`): enables the lifecycle
    /// and webhook-delivery checks.
    pub sandbox_helpers: bool,
    /// Run only the checks matching one of these patterns (empty: all). See [`crate::runner::matches`].
    pub only: Vec<String>,
    /// How many decode issues the deployment reports: the first failing property (the reference framework's
    /// default) or all of them.
    pub errors: ErrorsMode,
    /// The catalogue entries the checks use.
    pub fixtures: Fixtures,
    /// How long (real time) the webhook checks wait for deliveries.
    pub webhook_wait: Duration,
    /// Timeout of one HTTP request.
    pub request_timeout: Duration,
    /// Timeout of one check.
    pub check_timeout: Duration,
    /// A deployment that limits each project's request rate: enables the `limits` checks, which run against it
    /// alone (last, and with its own tokens), so that no other check meets the limit.
    pub rate_limited: Option<RateLimited>,
}

/// Where the `limits` checks send their requests: a deployment that answers 429 `TooManyRequests` to a project
/// over its request rate limit (`--rate-limited`: the deployment under test itself; `--spawn-sandbox`: a second
/// sandbox started with a low limit).
#[derive(Debug, Clone)]
pub struct RateLimited {
    pub base_url: String,
    /// A project token the checks exhaust the budget of.
    pub token: String,
    /// A second project's token: enables the check that one project's limit does not limit another.
    pub other_token: Option<String>,
}

impl RunConfig {
    /// A configuration with the default fixtures and settings.
    pub fn new(base_url: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            token: token.into(),
            other_token: None,
            expired_token: None,
            revoked_api_key: None,
            revoked_key_token: None,
            sandbox_helpers: false,
            only: Vec::new(),
            errors: ErrorsMode::First,
            fixtures: Fixtures::default(),
            webhook_wait: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            check_timeout: Duration::from_secs(180),
            rate_limited: None,
        }
    }
}

/// Catalogue entries the checks build their requests from. The defaults are ids the production service and the
/// sandbox both use (`docs/production.md`, "Chains and tokens").
#[derive(Debug, Clone)]
pub struct Fixtures {
    /// A token bridgeable from `chain_in` to `chain_out`.
    pub token: String,
    pub chain_in: String,
    pub chain_out: String,
    /// An amount of `token` that a quote accepts (inside the deposit limits).
    pub amount: String,
    /// A valid address on `chain_in`.
    pub depositor: String,
    /// A valid address on `chain_out`; also the destination of deposit addresses.
    pub recipient: String,
    /// A token on `chain_in` that is swapped into `swap_token_out` on `chain_out`, and the amount to quote.
    pub swap_token_in: String,
    pub swap_token_out: String,
    pub swap_amount: String,
    /// A small amount of `chain_out`'s native token for a gas-boost quote (`amountNative`).
    pub gas_boost: String,
    /// Deposit chains of deposit addresses (one family), destination `chain_out`.
    pub deposit_chains: Vec<String>,
    /// Token and amount of a deposit into a deposit address that is bridged (sandbox helpers).
    pub deposit_token: String,
    pub deposit_amount: String,
}

impl Default for Fixtures {
    fn default() -> Self {
        Self {
            token: "USDC".into(),
            chain_in: "ETHEREUM".into(),
            chain_out: "BASE".into(),
            amount: "100".into(),
            depositor: "0x1111111111111111111111111111111111111111".into(),
            recipient: "0x2222222222222222222222222222222222222222".into(),
            swap_token_in: "ETH".into(),
            swap_token_out: "USDC".into(),
            swap_amount: "0.5".into(),
            gas_boost: "0.001".into(),
            deposit_chains: vec!["ETHEREUM".into(), "ARBITRUM".into()],
            deposit_token: "USDC".into(),
            deposit_amount: "25".into(),
        }
    }
}
