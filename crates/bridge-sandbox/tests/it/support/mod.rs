//! Test support: a sandbox started on a free loopback port over a store (a data directory, or a database of a
//! throw-away PostgreSQL server: [`crate::pg`]), with the manual clock; [`both_stores!`] runs a test of store
//! behaviour against each backend; [`inputs`] holds what a sandbox is driven with (shared with the bench-fixtures
//! example), and the helpers below the steps the scenarios take (quote and commit, pay, advance the clock, read
//! the feed, wait for a condition, receive webhooks).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;

use bridge_client::{Client, Credentials};
use bridge_sandbox::access::Access;
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;
use tokio::sync::oneshot;

use crate::pg::PgServer;

mod inputs;
pub use inputs::*;

/// Where a test sandbox keeps its state; several sandboxes may run over one at once (PostgreSQL) or one after
/// the other (both).
pub struct TestStore {
    dir: tempfile::TempDir,
    database: Option<(Arc<PgServer>, String)>,
}

impl TestStore {
    pub fn sqlite() -> Self {
        Self { dir: tempfile::tempdir().unwrap(), database: None }
    }

    /// A fresh database on the test server; `None` (the reason printed) when PostgreSQL is missing outside CI.
    pub fn postgres() -> Option<Self> {
        Some(Self { dir: tempfile::tempdir().unwrap(), database: Some(crate::pg::database()?) })
    }

    /// A fresh database on `server` (a dedicated server the test may stop and start).
    pub fn postgres_on(server: Arc<PgServer>) -> Self {
        let url = server.create_database();
        Self { dir: tempfile::tempdir().unwrap(), database: Some((server, url)) }
    }

    /// The store itself, opened as the sandbox opens it (another "instance" each time).
    pub async fn open(&self) -> std::sync::Arc<dyn bridge_sandbox::store::Store> {
        match &self.database {
            Some((_, url)) => std::sync::Arc::new(bridge_sandbox::store::PgStore::connect(url).await.unwrap()),
            None => std::sync::Arc::new(bridge_sandbox::store::SqliteStore::open(self.dir.path()).unwrap()),
        }
    }

    /// The data directory (SQLite's database file and the keys).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether several sandboxes may run over this store at once (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.database.is_some()
    }

    /// The operator's side of this store, opened on its own (as the `bridge-sandbox` commands open it from another
    /// process), changes audited as made by `actor`.
    pub async fn admin(&self, actor: &str) -> bridge_sandbox::admin::Admin {
        let url = self.database.as_ref().map(|(_, url)| url.as_str());
        let store = bridge_sandbox::open_store(self.dir.path(), url).await.expect("the store opens");
        bridge_sandbox::admin::Admin::new(store, actor)
    }

    /// The `bridge-sandbox` command-line options that name this store.
    pub fn cli_args(&self) -> Vec<String> {
        match &self.database {
            Some((_, url)) => vec!["--database-url".into(), url.clone()],
            None => vec!["--data".into(), self.dir.path().display().to_string()],
        }
    }

    /// What a backup of the database holds (`pg_dump`), on PostgreSQL.
    pub fn dump(&self) -> Option<String> {
        self.database.as_ref().map(|(server, url)| server.dump(url))
    }

    /// The database URL, on PostgreSQL.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|(_, url)| url.as_str())
    }

    pub fn config(&self) -> SandboxConfig {
        SandboxConfig {
            database_url: self.database.as_ref().map(|(_, url)| url.clone()),
            ..local_config(self.dir.path())
        }
    }
}

/// Runs each named `async fn name(store: TestStore)` against SQLite (`name::sqlite`) and PostgreSQL
/// (`name::postgres`).
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sqlite() {
                    super::$name(crate::support::TestStore::sqlite()).await
                }

                #[tokio::test]
                async fn postgres() {
                    if let Some(store) = crate::support::TestStore::postgres() {
                        super::$name(store).await
                    }
                }
            }
        )*
    };
}
pub(crate) use both_stores;

pub struct Running {
    pub base_url: String,
    /// The instance's access control (its view of projects, keys and signing keys).
    pub access: Access,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    pub async fn start(data: &Path) -> Self {
        Self::with(local_config(data)).await
    }

    /// A sandbox over `data` with the catalogue file `catalogue` merged over the built-in one.
    pub async fn start_with_catalogue(data: &Path, catalogue: &Path) -> Self {
        Self::with(SandboxConfig { catalogue: Some(catalogue.to_owned()), ..local_config(data) }).await
    }

    /// A sandbox over `store`.
    pub async fn on(store: &TestStore) -> Self {
        Self::with(store.config()).await
    }

    /// A sandbox as `config` says (a rate limit, a webhook egress policy, ...).
    pub async fn with(config: SandboxConfig) -> Self {
        Self::with_options(config, bridge_sandbox::ServeOptions::default()).await
    }

    /// A sandbox over `store` served with `options` (timeouts, connection cap, shutdown grace).
    pub async fn on_with(store: &TestStore, options: bridge_sandbox::ServeOptions) -> Self {
        Self::with_options(store.config(), options).await
    }

    async fn with_options(config: SandboxConfig, options: bridge_sandbox::ServeOptions) -> Self {
        let opened = bridge_sandbox::open(&config).await.expect("the sandbox opens");
        let access = opened.access.clone();
        let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            bridge_sandbox::serve_on_with(opened, listener, ErrorsMode::First, &options, async move {
                let _ = rx.await;
            })
            .await
        });
        Self { base_url, access, stop: Some(tx), task }
    }

    /// A sandbox started like `serve --clock manual --seed seed` over `data`: on a fresh data directory every id,
    /// hash and date it writes is the same on every run (its manual clock starts at
    /// [`bridge_sandbox::SEEDED_START_MS`]).
    pub async fn start_seeded(data: &Path, seed: u64) -> Self {
        Self::with(SandboxConfig { seed: Some(seed), ..local_config(data) }).await
    }

    pub fn client(&self, data: &Path, project: &str) -> Client {
        let token = bridge_sandbox::mint_token(data, project, false, Duration::from_secs(3600)).unwrap();
        Client::new(&self.base_url, Credentials::bearer(token)).unwrap()
    }

    /// A client of `project` with a token this sandbox's keys sign.
    pub fn client_of(&self, project: &str) -> Client {
        Client::new(&self.base_url, self.credentials_of(project)).unwrap()
    }

    /// A bearer token of `project` that this sandbox's keys sign.
    pub fn credentials_of(&self, project: &str) -> Credentials {
        Credentials::bearer(self.token_of(project))
    }

    /// The JWT of [`Running::credentials_of`].
    pub fn token_of(&self, project: &str) -> String {
        self.access.session_token(project, false).unwrap()
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

/// Runs the install script `script` (of `scripts/`) once per test process, after checking that each of `tools`
/// answers `--version`; `Err` says why the tests that need them cannot run here.
pub fn install_once(cell: &'static OnceLock<Result<(), String>>, tools: &[&str], script: &Path) -> Result<(), String> {
    cell.get_or_init(|| {
        for tool in tools {
            Command::new(tool).arg("--version").output().map_err(|e| format!("{tool} is not available ({e})"))?;
        }
        let out = Command::new("bash").arg(script).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("{} failed: {}", script.display(), String::from_utf8_lossy(&out.stderr)));
        }
        Ok(())
    })
    .clone()
}

/// Whether a test that needs tools outside Rust runs: it does when they are `installed`; outside CI it is skipped
/// with the reason printed; in CI (`CI` set) it must run, and fails.
pub fn ready_or_skip(test: &str, installed: Result<(), String>) -> bool {
    match installed {
        Ok(()) => true,
        Err(why) if std::env::var_os("CI").is_some() => panic!("{test} must run in CI: {why}"),
        Err(why) => {
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

// The steps the scenarios take, through the client; each unwraps, so a test fails at the step that fails.

/// The single-token quote of `POST /bridge/quote/user` (its answer type is production's three-variant union; the
/// sandbox answers the spec's `bridge` variant).
pub fn single_token(quote: bridge_contract::QuoteResponse) -> bridge_contract::BridgeQuote {
    match quote {
        bridge_contract::QuoteResponse::Bridge(q) => q,
        other => panic!("POST /bridge/quote/user answered a {} quote", other.tag()),
    }
}

/// The state of a record of any family, as its tag (`"PENDING"`, `"EXECUTED"`, ...).
pub fn state_of(record: &bridge_contract::BridgeRecord) -> &'static str {
    use bridge_contract::BridgeRecord;
    match record {
        BridgeRecord::Bridge(b) => b.state.tag(),
        BridgeRecord::BridgeSwap(b) => b.state.tag(),
        BridgeRecord::DepositAddressBridge(b) => b.state.tag(),
    }
}

/// Moves the client's project's sandbox clock `ms` ahead.
pub async fn advance(client: &Client, ms: u64) {
    client.sandbox_advance_clock(&bridge_contract::SandboxAdvanceClockRequest { ms }).await.unwrap();
}

/// Commits `quote`; its id.
pub async fn commit(client: &Client, quote: bridge_contract::QuoteResponse) -> String {
    client.commit_quote(quote.quote_id()).await.unwrap();
    quote.quote_id().to_owned()
}

/// A committed (PENDING) bridge of [`quote_request`]; its id.
#[allow(deprecated)] // `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote.
pub async fn committed(client: &Client) -> String {
    commit(client, client.quote_bridge(&quote_request()).await.unwrap()).await
}

/// Pays the committed bridge `id` (`POST /sandbox/bridges/{id}/deposit`) with the sandbox's `outcome`.
pub async fn pay(client: &Client, id: &str, outcome: Option<bridge_contract::SandboxBridgeOutcome>) {
    client.sandbox_deposit_bridge(id, &bridge_deposit(outcome)).await.unwrap();
}

/// The `_tag` of each event on the first page (50 events) of the client's feed, oldest first.
pub async fn event_tags(client: &Client) -> Vec<String> {
    let page = client.list_user_events(&feed_query(None, 50)).await.unwrap();
    page.items.iter().map(|e| e.tag().to_owned()).collect()
}

/// Sends a webhook test event with `message` to `url`; the event's id.
pub async fn send_test_event(client: &Client, url: &str, message: &str) -> String {
    let request =
        bridge_contract::SandboxWebhookTestRequest { webhook_url: url.to_owned(), message: Some(message.to_owned()) };
    client.sandbox_send_webhook_test(&request).await.unwrap().event_id
}

/// Polls `check` until it holds, every 100 ms for 30 s at the most (generous: the machine is shared); panics
/// naming `what` otherwise.
pub async fn eventually<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    for _ in 0..300 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within 30 s: {what}");
}

/// [`eventually`] for a condition that needs no request.
pub async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    eventually(what, || std::future::ready(done())).await
}

/// Serves `app` (a webhook receiver of a test) on a free port of 127.0.0.1 until the test process ends; its address.
pub async fn serve_locally(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}
