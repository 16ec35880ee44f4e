//! The sandbox as a running service: opening its store (SQLite in a data directory, or PostgreSQL), the HTTP
//! application (the contract's routes, the sandbox helpers, `/openapi.json`, `/docs`, `/dashboard`, inside the
//! request layers), serving it with its workers until shutdown, and the operator's blocking helpers (`token`,
//! `api-key`). The one place where the layers below are put together.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge_server::{ErrorsMode, ServerConfig};

use crate::access::{self, admin, signing};
use crate::dashboard;
use crate::docs;
use crate::domain::{catalogue, faults as fault_model, ids};
use crate::infra::{clock, core, egress, faults, rate_limit, secrets, store, telemetry};
use crate::operate::{self, ServeOptions};
use crate::pipeline::delivery;
use crate::service::Sandbox;

/// Everything `serve` needs.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub listen: SocketAddr,
    /// The data directory: the SQLite database and the signing keys (unused with `database_url`).
    pub data_dir: PathBuf,
    /// A PostgreSQL database (`postgres://...`) to keep everything in instead of the data directory; several
    /// instances may share one.
    pub database_url: Option<String>,
    pub clock: clock::ClockMode,
    /// `--seed`: ids from this seed instead of fresh entropy, and a fresh sandbox's manual clock at
    /// [`SEEDED_START_MS`], so that a fresh sandbox answers the same ids (and dates) for the same requests. Only
    /// with [`clock::ClockMode::Manual`].
    pub seed: Option<u64>,
    pub catalogue: Option<PathBuf>,
    pub errors: ErrorsMode,
    /// Where webhook deliveries may connect (`--webhook-egress`, `--webhook-allow`).
    pub webhook_egress: egress::WebhookEgress,
    /// Each project's request rate limit (`--rate-limit`, `--rate-limit-burst`); `None`: no limit.
    pub rate_limit: Option<rate_limit::RateLimit>,
    /// The fault profile of every project without its own (`--faults`); `None`: no fault unless a project sets
    /// its own (`PUT /sandbox/faults`).
    pub faults: Option<bridge_contract::SandboxFaultProfile>,
}

/// Where a fresh sandbox's manual clock starts under `--seed`: 2026-01-01T00:00:00.000Z.
pub const SEEDED_START_MS: i64 = 1_767_225_600_000;

/// The sandbox over its store: store, keys, catalogue and clock, ready to serve.
pub struct Opened {
    pub sandbox: Sandbox,
    pub keys: secrets::Keys,
    /// Each project's request rate limit, which [`app`] enforces.
    pub rate_limit: Option<rate_limit::RateLimit>,
    /// Who may call (the authenticator of [`app`]); also `sandbox.access()`.
    pub access: access::Access,
    /// The PostgreSQL database, when the store is one: the rate limit's budgets are shared through it.
    database: Option<store::PgStore>,
}

/// The store of a data directory or a PostgreSQL database and, on PostgreSQL, the database itself (where the
/// webhook key and the JWT secret of earlier versions are kept).
async fn connect(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
) -> anyhow::Result<(Arc<dyn store::Store>, Option<store::PgStore>)> {
    match database_url {
        None => Ok((Arc::new(store::SqliteStore::open(data_dir)?), None)),
        Some(url) => {
            let store = store::PgStore::connect(url).await?;
            Ok((Arc::new(store.clone()), Some(store)))
        }
    }
}

/// Makes the first JWT signing key of a store that has none, from the secret of an earlier version if there is one.
async fn first_signing_key(
    store: &dyn store::Store,
    data_dir: &std::path::Path,
    database: Option<&store::PgStore>,
) -> anyhow::Result<()> {
    let legacy = match database {
        None => secrets::legacy_jwt_secret(data_dir)?,
        Some(database) => secrets::legacy_jwt_secret_shared(database).await?,
    };
    signing::ensure_initial(store, legacy, clock::wall_ms()).await
}

/// The store of a data directory (or of the PostgreSQL database at `database_url`), with its signing keys.
pub async fn open_store(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
) -> anyhow::Result<Arc<dyn store::Store>> {
    let (store, database) = connect(data_dir, database_url).await?;
    first_signing_key(&*store, data_dir, database.as_ref()).await?;
    Ok(store)
}

/// The operator's side of a data directory (or of the PostgreSQL database at `database_url`): projects, keys,
/// signing keys and the audit list, changes audited as made by [`admin::operator`].
pub async fn admin(data_dir: &std::path::Path, database_url: Option<&str>) -> anyhow::Result<admin::Admin> {
    Ok(admin::Admin::new(open_store(data_dir, database_url).await?, admin::operator()))
}

pub async fn open(config: &SandboxConfig) -> anyhow::Result<Opened> {
    anyhow::ensure!(
        config.seed.is_none() || config.clock == clock::ClockMode::Manual,
        "--seed needs --clock manual: with time passing by itself, the same requests would not get the same ids"
    );
    let (store, database) = connect(&config.data_dir, config.database_url.as_deref()).await?;
    first_signing_key(&*store, &config.data_dir, database.as_ref()).await?;
    let keys = match &database {
        None => secrets::Keys::load_or_create(&config.data_dir)?,
        Some(database) => secrets::Keys::shared(database).await?,
    };
    let access = access::Access::open(store.clone()).await?;
    let mut catalogue = catalogue::Catalogue::builtin();
    if let Some(path) = &config.catalogue {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        catalogue = catalogue.with_overrides(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    // The sandbox's clock continues from the store's (a restart, or other instances on the database) before it
    // answers a time; a new store keeps this one's.
    let (clock, ids) = match config.seed {
        Some(seed) => (clock::Clock::new(config.clock, Some((SEEDED_START_MS, 0))), ids::Ids::seeded(seed)),
        None => (clock::Clock::new(config.clock, None), ids::Ids::from_key(keys.ids)),
    };
    let (value, floor) = store.sync_clock(clock.take_sync()).await?;
    clock.adopt(value, floor);
    let fault_key = config.seed.map_or_else(fault_model::FaultKey::random, fault_model::FaultKey::seeded);
    let default_faults = config.faults.clone().unwrap_or_else(fault_model::none);
    let faults = faults::Faults::open(store.clone(), default_faults, fault_key).await?;
    let core = core::Core::new(store, catalogue, clock, ids, keys.webhook.clone())
        .with_webhook_egress(config.webhook_egress.clone())
        .with_faults(faults);
    let sandbox = Sandbox::new(core, keys.webhook.served_public_key(), access.clone());
    Ok(Opened { sandbox, keys, rate_limit: config.rate_limit, access, database })
}

/// The contract's routes and the sandbox helpers (a panicking handler answers 503, see [`bridge_server::router`]
/// and [`bridge_server::sandbox_router`]; with a rate limit, one budget per project for both), `/openapi.json`,
/// `/docs`, and `/dashboard` (with the API's own authenticator); bodies read before any credential is checked
/// bounded as `options` say. The projects' fault profiles apply to the contract's routes only
/// ([`faults::ApiAdmission`]): never to the sandbox helpers (so a project can always turn faults off), the
/// dashboard, the documents, the probes or `/metrics`.
fn api_routes(opened: &Opened, errors: ErrorsMode, options: &ServeOptions) -> axum::Router {
    // With a rate limit: one budget per project, in memory (SQLite) or shared by the instances of the database
    // (PostgreSQL), readied as part of authentication ([`rate_limit::ReadyBudget`]) and decided at admission.
    let limiter = opened.rate_limit.map(|limit| {
        Arc::new(match &opened.database {
            Some(database) => limit.shared_limiter(database.clone()),
            None => limit.limiter(),
        })
    });
    let auth = rate_limit::ReadyBudget { inner: opened.access.clone(), limiter: limiter.clone() };
    let rate_limit = limiter.map(|limiter| limiter as Arc<dyn bridge_server::Admission>);
    let helpers = ServerConfig {
        errors,
        unauthenticated_body: options.unauthenticated_body(),
        admission: rate_limit.clone(),
        ..ServerConfig::default()
    };
    let faults = opened.sandbox.core().faults.clone();
    let api = helpers.clone().with_admission(faults::ApiAdmission { rate_limit: rate_limit.clone(), faults });
    bridge_server::router(opened.sandbox.clone(), auth.clone(), api)
        .merge(bridge_server::sandbox_router(opened.sandbox.clone(), auth.clone(), helpers))
        .merge(docs::routes())
        .merge(dashboard::routes(opened.sandbox.clone(), auth, rate_limit, options.sign_in_limits()))
}

/// The whole HTTP application: the contract's routes and the sandbox helpers, `/openapi.json`, `/docs`, inside the
/// request layers ([`operate::requests`]: request ids, logs, metrics, the default timeouts). `serve` adds the
/// probes and `/metrics`.
pub fn app(opened: &Opened, errors: ErrorsMode) -> axum::Router {
    let options = ServeOptions::default();
    operate::requests::layered(api_routes(opened, errors, &options), &options)
}

/// Serves until SIGINT/SIGTERM (or `shutdown` resolves), then stops gracefully, with the default
/// [`ServeOptions`].
pub async fn serve(
    config: SandboxConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with(config, ServeOptions::default(), shutdown).await
}

/// [`serve`] with these [`ServeOptions`].
pub async fn serve_with(
    config: SandboxConfig,
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let opened = open(&config).await?;
    let listener =
        tokio::net::TcpListener::bind(config.listen).await.with_context(|| format!("binding {}", config.listen))?;
    serve_on_with(opened, listener, config.errors, &options, shutdown).await
}

/// Serves on an already bound listener (tests bind port 0 and read the address first), with the default
/// [`ServeOptions`].
pub async fn serve_on(
    opened: Opened,
    listener: tokio::net::TcpListener,
    errors: ErrorsMode,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_on_with(opened, listener, errors, &ServeOptions::default(), shutdown).await
}

/// [`serve_on`] with these [`ServeOptions`]. When `shutdown` resolves: `/readyz` turns 503, no connection is
/// accepted any more, requests and webhook attempts in flight get `options.shutdown_grace` to finish, and this
/// instance's leases are handed back ([`operate::workers`]).
pub async fn serve_on_with(
    opened: Opened,
    listener: tokio::net::TcpListener,
    errors: ErrorsMode,
    options: &ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let sandbox = opened.sandbox.clone();
    let address = listener.local_addr()?;
    let limits = options.connection_limits();
    telemetry::recorder();
    metrics::gauge!(telemetry::OPEN_FILES_LIMIT).set(operate::open_files_limit() as f64);
    tracing::info!(%address, clock = ?sandbox.clock().mode(), max_connections = limits.max_connections,
        "bridge sandbox serving; API reference at http://{address}/docs");
    tracing::info!(egress = ?sandbox.core().egress, rate_limit = ?opened.rate_limit, retention = %options.retention,
        "webhook egress, rate limit and retention");
    let health = std::sync::Arc::new(operate::health::Health::new());
    // The lifecycle and the webhook deliveries run on their own, beside the server.
    let deliverer = delivery::Deliverer::new(sandbox.shared_core(), opened.keys.webhook.clone()).await?;
    let workers = operate::workers::Workers::start(sandbox.clone(), deliverer, health.clone(), options.retention);
    let probes = operate::health::Probes { sandbox: sandbox.clone(), health: health.clone() };
    let router = api_routes(&opened, errors, options)
        .merge(operate::health::routes(probes))
        .merge(operate::metrics::routes(sandbox.clone(), options.retention));
    let app = operate::requests::layered(router, options);
    let (stopping, stopped) = tokio::sync::oneshot::channel::<tokio::time::Instant>();
    let grace = options.shutdown_grace;
    let signalled = {
        let health = health.clone();
        async move {
            shutdown.await;
            tracing::info!(
                ?grace,
                "shutting down: no new connections; requests and webhook attempts in flight may finish"
            );
            health.shutting_down();
            let _ = stopping.send(tokio::time::Instant::now() + grace);
        }
    };
    let server = tokio::spawn(operate::connections::serve(listener, app, limits, signalled));
    // The workers stop once shutdown begins, with the same deadline as the requests in flight.
    let deadline = match stopped.await {
        Ok(deadline) => deadline,
        Err(_) => tokio::time::Instant::now() + grace,
    };
    workers.stop(deadline).await;
    let served = server.await.context("serving");
    if let Err(e) = opened.access.flush().await {
        tracing::warn!(error = %e, "writing the keys' last use failed");
    }
    served?;
    tracing::info!("bridge sandbox stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}

/// Runs `work` on a runtime and a thread of its own, so that the blocking helpers below work in async code too.
fn blocking<T: Send + 'static>(
    work: impl std::future::Future<Output = anyhow::Result<T>> + Send + 'static,
) -> anyhow::Result<T> {
    std::thread::spawn(move || tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(work))
        .join()
        .map_err(|_| anyhow::anyhow!("the store task panicked"))?
}

/// A project token that a sandbox over `data_dir` accepts (`bridge-sandbox token`; blocking: it opens the store).
pub fn mint_token(
    data_dir: &std::path::Path,
    project: &str,
    post_bridge_data: bool,
    ttl: Duration,
) -> anyhow::Result<String> {
    let (data_dir, project) = (data_dir.to_owned(), project.to_owned());
    blocking(async move { admin(&data_dir, None).await?.mint_token(&project, post_bridge_data, ttl).await })
}

/// A project token that every sandbox on the PostgreSQL database at `database_url` accepts.
pub async fn mint_token_for_database(
    database_url: &str,
    project: &str,
    post_bridge_data: bool,
    ttl: Duration,
) -> anyhow::Result<String> {
    admin(std::path::Path::new(""), Some(database_url)).await?.mint_token(project, post_bridge_data, ttl).await
}

/// A new API key of `project` that a sandbox over `data_dir` accepts (`bridge-sandbox api-key`; blocking: it
/// opens the store).
pub fn mint_api_key(data_dir: &std::path::Path, project: &str) -> anyhow::Result<String> {
    let (data_dir, project) = (data_dir.to_owned(), project.to_owned());
    blocking(async move { Ok(admin(&data_dir, None).await?.create_api_key(&project, "unnamed").await?.text) })
}

/// A new API key of `project` that every sandbox on the PostgreSQL database at `database_url` accepts.
pub async fn mint_api_key_for_database(database_url: &str, project: &str) -> anyhow::Result<String> {
    Ok(admin(std::path::Path::new(""), Some(database_url)).await?.create_api_key(project, "unnamed").await?.text)
}
