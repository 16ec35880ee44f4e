//! Test support: a sandbox started on a free loopback port over a store (a data directory, or a database of a
//! throw-away PostgreSQL server: [`crate::pg`]), with the manual clock; [`both_stores!`] runs a test of store
//! behaviour against each backend.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bridge_client::{Client, Credentials};
use bridge_sandbox::access::Access;
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::store::{SqliteStore, Store};
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;
use tokio::sync::oneshot;

use crate::pg::PgServer;

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

    /// The store itself, opened as the sandbox opens it (another "instance" each time).
    pub async fn open(&self) -> std::sync::Arc<dyn bridge_sandbox::store::Store> {
        match &self.database {
            Some((_, url)) => std::sync::Arc::new(bridge_sandbox::store::PgStore::connect(url).await.unwrap()),
            None => std::sync::Arc::new(bridge_sandbox::store::SqliteStore::open(self.dir.path()).unwrap()),
        }
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

    /// The data directory (unused on PostgreSQL but for the webhook key of `Running::on`).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The database URL, on PostgreSQL.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|(_, url)| url.as_str())
    }

    pub fn config(&self) -> SandboxConfig {
        SandboxConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: self.dir.path().to_owned(),
            database_url: self.database.as_ref().map(|(_, url)| url.clone()),
            clock: ClockMode::Manual,
            catalogue: None,
            errors: ErrorsMode::First,
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
        let config = SandboxConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.to_owned(),
            database_url: None,
            clock: ClockMode::Manual,
            catalogue: None,
            errors: ErrorsMode::First,
        };
        Self::with(config).await
    }

    /// A sandbox over `data` with the catalogue file `catalogue` merged over the built-in one.
    pub async fn start_with_catalogue(data: &Path, catalogue: &Path) -> Self {
        let config = SandboxConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.to_owned(),
            database_url: None,
            clock: ClockMode::Manual,
            catalogue: Some(catalogue.to_owned()),
            errors: ErrorsMode::First,
        };
        Self::with(config).await
    }

    /// A sandbox over `store`.
    pub async fn on(store: &TestStore) -> Self {
        Self::with(store.config()).await
    }

    async fn with(config: SandboxConfig) -> Self {
        let opened = bridge_sandbox::open(&config).await.expect("the sandbox opens");
        let access = opened.access.clone();
        let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(bridge_sandbox::serve_on(opened, listener, ErrorsMode::First, async move {
            let _ = rx.await;
        }));
        Self { base_url, access, stop: Some(tx), task }
    }

    /// A sandbox whose manual clock starts at `start_ms` (instead of the wall clock): every date it writes, like
    /// every id and hash, is the same on every run.
    pub async fn start_at(data: &Path, start_ms: i64) -> Self {
        let store = SqliteStore::open(data).expect("the store opens");
        let sync = bridge_sandbox::clock::ClockSync { value: start_ms, advanced_by: 0, floor: 0 };
        store.sync_clock(sync).await.expect("the clock is kept");
        drop(store);
        Self::start(data).await
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
        Credentials::bearer(self.access.session_token(project, false).unwrap())
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}
