//! `--spawn-sandbox`: a `bridge-sandbox` started in-process through its library on a free loopback port, with a
//! temporary data directory and the manual clock, and the tokens the runner needs minted with its keys (and an API
//! key made, exchanged for a token and revoked, for the revocation checks). Tests
//! use [`SpawnedSandbox::start_with`] to serve a deliberately broken variant (a wrapped router, a wrapped
//! `BridgeApi`) the same way.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::rate_limit::RateLimit;
use bridge_sandbox::{Opened, SandboxConfig};
use bridge_server::ErrorsMode;
use tokio::sync::oneshot;

use crate::runner::config::{RateLimited, RunConfig};

/// The limit of [`SpawnedSandbox::start_rate_limited`]: one request per second per project, three at once.
pub const RATE_LIMIT: RateLimit = RateLimit::fixed(1, 3);

/// Where a spawned sandbox listens unless told: a free port of 127.0.0.1.
const LOOPBACK_ANY_PORT: std::net::SocketAddr =
    std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

/// The projects of the spawned sandbox's tokens.
pub const MAIN_PROJECT: &str = "conformance-main";
/// The second project has the `postBridgeData` feature, so both answers of that check are exercised.
pub const OTHER_PROJECT: &str = "conformance-other";

/// The HTTP application a test serves instead of the sandbox's own ([`SpawnedSandbox::start_with`]).
type AppOf<'a> = Box<dyn FnOnce(&Opened) -> axum::Router + 'a>;

/// A running sandbox; [`SpawnedSandbox::stop`] stops it (dropping it stops it too, without waiting).
pub struct SpawnedSandbox {
    pub base_url: String,
    /// Bearer token of [`MAIN_PROJECT`].
    pub token: String,
    /// Bearer token of [`OTHER_PROJECT`].
    pub other_token: String,
    /// A token of [`MAIN_PROJECT`] signed with the sandbox's key that expired an hour ago.
    pub expired_token: String,
    /// An API key of [`MAIN_PROJECT`] that was revoked (after it was exchanged for `revoked_key_token`).
    pub revoked_api_key: String,
    /// A token exchanged from `revoked_api_key` before it was revoked.
    pub revoked_key_token: String,
    data: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl SpawnedSandbox {
    /// The sandbox exactly as `bridge-sandbox serve --clock manual` runs it (`bridge_sandbox::serve_on`).
    pub async fn start() -> anyhow::Result<Self> {
        Self::launch(None, None, LOOPBACK_ANY_PORT).await
    }

    /// As [`SpawnedSandbox::start`], listening on `listen` (`bridge-conformance receiver --spawn-sandbox
    /// --sandbox-listen`: a receiver under check fetches the webhook key from an address it was told).
    pub async fn start_on(listen: std::net::SocketAddr) -> anyhow::Result<Self> {
        Self::launch(None, None, listen).await
    }

    /// A sandbox whose HTTP application is `app(&opened)` instead of `bridge_sandbox::app`: wrap the router in
    /// a middleware, or serve a `BridgeApi` that wraps `opened.sandbox`. The lifecycle ticker and the webhook
    /// courier run as in `serve_on`.
    pub async fn start_with(app: impl FnOnce(&Opened) -> axum::Router) -> anyhow::Result<Self> {
        Self::launch(Some(Box::new(app)), None, LOOPBACK_ANY_PORT).await
    }

    /// A sandbox that limits each project's requests to [`RATE_LIMIT`] (`serve --rate-limit 1
    /// --rate-limit-burst 3`), for the `limits` checks; the other checks run against one without a limit.
    pub async fn start_rate_limited() -> anyhow::Result<Self> {
        Self::launch(None, Some(RATE_LIMIT), LOOPBACK_ANY_PORT).await
    }

    /// As [`SpawnedSandbox::start_rate_limited`], serving `app(&opened)` (whose `opened.rate_limit` is set).
    pub async fn start_rate_limited_with(app: impl FnOnce(&Opened) -> axum::Router) -> anyhow::Result<Self> {
        Self::launch(Some(Box::new(app)), Some(RATE_LIMIT), LOOPBACK_ANY_PORT).await
    }

    async fn launch(
        app: Option<AppOf<'_>>,
        rate_limit: Option<RateLimit>,
        listen: std::net::SocketAddr,
    ) -> anyhow::Result<Self> {
        let data = tempfile::Builder::new()
            .prefix("bridge-conformance-")
            .tempdir()
            .context("making a temporary data directory")?;
        let config = SandboxConfig {
            listen,
            data_dir: data.path().to_owned(),
            database_url: None,
            clock: ClockMode::Manual,
            seed: None,
            catalogue: None,
            errors: ErrorsMode::First,
            webhook_egress: Default::default(),
            rate_limit,
            faults: None,
        };
        let opened = bridge_sandbox::open(&config).await.context("opening the sandbox")?;
        let access = opened.access.clone();
        let listener =
            tokio::net::TcpListener::bind(config.listen).await.with_context(|| format!("binding {}", config.listen))?;
        let base_url = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        let task = match app {
            None => tokio::spawn(bridge_sandbox::serve_on(opened, listener, ErrorsMode::First, shutdown)),
            Some(app) => {
                let router = app(&opened);
                let sandbox = opened.sandbox.clone();
                let deliverer =
                    bridge_sandbox::delivery::Deliverer::new(sandbox.shared_core(), opened.keys.webhook.clone())
                        .await?;
                tokio::spawn(async move {
                    // As `serve_on`: the lifecycle ticker and the webhook courier run beside the server.
                    let ticker = tokio::spawn(async move {
                        loop {
                            tokio::time::sleep(Duration::from_millis(250)).await;
                            let _ = sandbox.tick().await;
                        }
                    });
                    let courier = tokio::spawn(async move {
                        loop {
                            match deliverer.run_once().await {
                                Ok(0) | Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                                Ok(_) => tokio::task::yield_now().await,
                            }
                        }
                    });
                    let result = axum::serve(listener, router).with_graceful_shutdown(shutdown).await;
                    ticker.abort();
                    courier.abort();
                    result.context("serving")
                })
            }
        };
        let admin = bridge_sandbox::admin(data.path(), None).await?;
        let day = Duration::from_secs(24 * 3600);
        let token = admin.mint_token(MAIN_PROJECT, false, day).await?;
        let other_token = admin.mint_token(OTHER_PROJECT, true, day).await?;
        let expired_token = expired(&admin, MAIN_PROJECT).await?;
        let (revoked_api_key, revoked_key_token) = revoked(&admin, &access).await?;
        tracing::info!(%base_url, data = %data.path().display(), "sandbox started (manual clock)");
        Ok(Self {
            base_url,
            token,
            other_token,
            expired_token,
            revoked_api_key,
            revoked_key_token,
            data,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// A run configuration for this sandbox: both tokens, the expired token, the sandbox helpers.
    pub fn run_config(&self) -> RunConfig {
        let mut config = RunConfig::new(&self.base_url, &self.token);
        config.other_token = Some(self.other_token.clone());
        config.expired_token = Some(self.expired_token.clone());
        config.revoked_api_key = Some(self.revoked_api_key.clone());
        config.revoked_key_token = Some(self.revoked_key_token.clone());
        config.sandbox_helpers = true;
        config
    }

    /// The `limits` checks' target: this sandbox, with both projects' tokens.
    pub fn rate_limited(&self) -> RateLimited {
        RateLimited {
            base_url: self.base_url.clone(),
            token: self.token.clone(),
            other_token: Some(self.other_token.clone()),
        }
    }

    /// The data directory (removed when this value is dropped).
    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }

    /// Stops serving and waits for the server to finish.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.context("the sandbox task")??;
        }
        tracing::info!("sandbox stopped");
        Ok(())
    }
}

impl Drop for SpawnedSandbox {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A token of `project` signed with the sandbox's current key that expired an hour ago.
async fn expired(admin: &bridge_sandbox::admin::Admin, project: &str) -> anyhow::Result<String> {
    let keys = admin.signing_keys().await?;
    let key = bridge_sandbox::signing::current(&keys).context("the sandbox has no signing key")?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as i64;
    let claims = bridge_sandbox::signing::TokenClaims::new(project, false, now - 7_200_000, Duration::from_secs(3600));
    Ok(bridge_sandbox::signing::sign(key, &claims)?)
}

/// An API key of [`MAIN_PROJECT`] and a token exchanged from it, then the key revoked (as an operator does with
/// `bridge-sandbox api-key revoke`), once the sandbox refuses it (its view follows the store within a second).
async fn revoked(
    admin: &bridge_sandbox::admin::Admin,
    access: &bridge_sandbox::access::Access,
) -> anyhow::Result<(String, String)> {
    let key = admin.create_api_key(MAIN_PROJECT, "conformance: revoked").await?;
    let token = access.exchange(&key.text).await.map_err(|e| anyhow::anyhow!("exchanging the key: {e:?}"))?;
    admin.revoke_api_key(&key.record.id).await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while access.verify_key(&key.text).await.is_ok() {
        anyhow::ensure!(std::time::Instant::now() < deadline, "the sandbox still accepts the revoked key after 30 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok((key.text, token))
}
