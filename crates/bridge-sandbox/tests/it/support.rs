//! Test support: a sandbox started on a free loopback port over a data directory, with the manual clock.

use std::path::Path;
use std::time::Duration;

use bridge_client::{Client, Credentials};
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::store::{SqliteStore, Store};
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;
use tokio::sync::oneshot;

pub struct Running {
    pub base_url: String,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    pub async fn start(data: &Path) -> Self {
        let config = SandboxConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data.to_owned(),
            clock: ClockMode::Manual,
            catalogue: None,
            errors: ErrorsMode::First,
        };
        let opened = bridge_sandbox::open(&config).expect("the sandbox opens");
        let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(bridge_sandbox::serve_on(opened, listener, ErrorsMode::First, async move {
            let _ = rx.await;
        }));
        Self { base_url, stop: Some(tx), task }
    }

    /// A sandbox whose manual clock starts at `start_ms` (instead of the wall clock): every date it writes, like
    /// every id and hash, is the same on every run.
    pub async fn start_at(data: &Path, start_ms: i64) -> Self {
        let store = SqliteStore::open(data).expect("the store opens");
        store.save_clock(start_ms, 0).await.expect("the clock is kept");
        drop(store);
        Self::start(data).await
    }

    pub fn client(&self, data: &Path, project: &str) -> Client {
        let token = bridge_sandbox::mint_token(data, project, false, Duration::from_secs(3600)).unwrap();
        Client::new(&self.base_url, Credentials::bearer(token)).unwrap()
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}
