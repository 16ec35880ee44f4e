//! # browser-test
//!
//! Test support for pages the workspace serves: Debian's headless Chromium (`apt-get install chromium
//! chromium-driver`; never a downloaded browser) started through `chromedriver` on 127.0.0.1 and driven over
//! WebDriver (the `fantoccini` client), with what a page test needs:
//!
//! * [`Browser::open`] loads a page and waits until it is complete;
//! * [`Browser::problems`] drains the browser log: console errors (`SEVERE` entries) and failed requests
//!   (`Failed to load resource`, `net::ERR_*`), and [`Browser::requests`] lists what the page loaded;
//! * [`Browser::screenshot`] saves a PNG of the whole page under [`artifacts_dir`]
//!   (`target/ci-artifacts/screenshots/`, or `$BROWSER_TEST_ARTIFACTS`), which CI keeps.
//!
//! Chromium runs with `--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
//! --disable-background-networking --disable-component-update --disable-sync` and a fresh `--user-data-dir`:
//! without the background-networking flags it tries connections outside this machine.
//!
//! When Chromium or chromedriver is missing, [`Browser::start`] returns `Ok(None)` after printing why (the test
//! skips), except in CI (`CI` set), where it fails: CI installs them (`.ci/run`).
//!
//! ```no_run
//! # async fn t() -> anyhow::Result<()> {
//! let Some(browser) = browser_test::Browser::start().await? else { return Ok(()) };
//! browser.open("http://127.0.0.1:8080/docs").await?;
//! let problems = browser.problems().await?;
//! assert!(problems.is_empty(), "{problems:?}");
//! browser.screenshot("docs").await?;
//! browser.close().await?;
//! # Ok(()) }
//! ```

pub use fantoccini;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use fantoccini::wd::WebDriverCompatibleCommand;
use serde_json::{json, Value};

/// The flags Chromium runs with (plus a fresh `--user-data-dir` and the window size).
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
];

/// Where screenshots go: `$BROWSER_TEST_ARTIFACTS`, or `target/ci-artifacts/screenshots/` of this workspace.
pub fn artifacts_dir() -> PathBuf {
    match std::env::var_os("BROWSER_TEST_ARTIFACTS") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
            target.join("ci-artifacts").join("screenshots")
        }
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Chromium and chromedriver: `$CHROMIUM` / `$CHROMEDRIVER`, or found on PATH.
fn binaries() -> Result<(PathBuf, PathBuf), String> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| ["chromium", "chromium-browser"].iter().find_map(|n| on_path(n)));
    let driver = std::env::var_os("CHROMEDRIVER").map(PathBuf::from).or_else(|| on_path("chromedriver"));
    match (chromium, driver) {
        (Some(c), Some(d)) => Ok((c, d)),
        (None, _) => {
            Err("Chromium is not installed (no chromium on PATH; `apt-get install chromium chromium-driver`)".into())
        }
        (_, None) => Err("chromedriver is not installed (`apt-get install chromium-driver`)".into()),
    }
}

/// A headless Chromium session; [`Browser::close`] ends it (dropping it kills chromedriver too).
pub struct Browser {
    client: fantoccini::Client,
    driver: tokio::process::Child,
    _profile: tempfile::TempDir,
}

/// `POST /session/{id}/se/log {"type": "browser"}`: the browser log entries since the last call (chromedriver).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({"type": "browser"}).to_string()))
    }
}

/// `POST /session/{id}/goog/cdp/execute`: a Chrome DevTools Protocol command (chromedriver).
#[derive(Debug)]
struct Cdp(Value);

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}

/// What went wrong while a page was shown.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Problems {
    /// Console errors (`SEVERE` log entries that are not failed requests).
    pub console_errors: Vec<String>,
    /// Requests that failed (`Failed to load resource`, `net::ERR_*`).
    pub failed_requests: Vec<String>,
}

impl Problems {
    pub fn is_empty(&self) -> bool {
        self.console_errors.is_empty() && self.failed_requests.is_empty()
    }
}

impl Browser {
    /// Starts chromedriver on a free port of 127.0.0.1 and a headless Chromium session. `Ok(None)` when they are
    /// not installed (the reason printed), except in CI, where that is an error.
    pub async fn start() -> anyhow::Result<Option<Self>> {
        let (chromium, driver) = match binaries() {
            Ok(found) => found,
            Err(reason) => {
                if std::env::var_os("CI").is_some() {
                    anyhow::bail!("{reason}: CI must run the browser tests");
                }
                eprintln!("skipping a browser test: {reason}");
                return Ok(None);
            }
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut driver = tokio::process::Command::new(&driver)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", driver.display()))?;
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            if let Some(status) = driver.try_wait()? {
                anyhow::bail!("chromedriver exited at once ({status})");
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not listen on 127.0.0.1:{port} within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = tempfile::Builder::new().prefix("browser-test-").tempdir()?;
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push("--window-size=1280,1000".into());
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("goog:chromeOptions".into(), json!({"binary": chromium, "args": args}));
        capabilities.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .context("starting a Chromium session through chromedriver")?;
        Ok(Some(Self { client, driver, _profile: profile }))
    }

    /// The WebDriver client, for anything else (clicks, element queries).
    pub fn client(&self) -> &fantoccini::Client {
        &self.client
    }

    /// Loads `url` and waits (at most 30 s) until the document is complete.
    pub async fn open(&self, url: &str) -> anyhow::Result<()> {
        self.client.goto(url).await.with_context(|| format!("opening {url}"))?;
        let started = Instant::now();
        loop {
            let state = self.client.execute("return document.readyState", vec![]).await?;
            if state == "complete" {
                return Ok(());
            }
            anyhow::ensure!(started.elapsed() < Duration::from_secs(30), "{url} did not finish loading within 30 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs `script` (a function body; `return` gives its value) in the page.
    pub async fn eval(&self, script: &str) -> anyhow::Result<Value> {
        Ok(self.client.execute(script, vec![]).await?)
    }

    /// The console errors and failed requests logged since the last call.
    pub async fn problems(&self) -> anyhow::Result<Problems> {
        let entries = self.client.issue_cmd(BrowserLog).await.context("reading the browser log")?;
        let mut problems = Problems::default();
        for entry in entries.as_array().into_iter().flatten() {
            if entry["level"] != "SEVERE" {
                continue;
            }
            let message = entry["message"].as_str().unwrap_or_default().to_owned();
            if message.contains("Failed to load resource") || message.contains("net::ERR_") {
                problems.failed_requests.push(message);
            } else {
                problems.console_errors.push(message);
            }
        }
        Ok(problems)
    }

    /// The URLs the page loaded besides the document itself (the Resource Timing entries).
    pub async fn requests(&self) -> anyhow::Result<Vec<String>> {
        let names = self.eval("return performance.getEntriesByType('resource').map(e => e.name)").await?;
        Ok(names.as_array().into_iter().flatten().filter_map(|n| n.as_str().map(str::to_owned)).collect())
    }

    /// Saves a PNG of the whole page (beyond the window) as `<artifacts_dir>/<name>.png` and returns its path.
    pub async fn screenshot(&self, name: &str) -> anyhow::Result<PathBuf> {
        let size =
            self.eval("return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]").await?;
        let (width, height) = (size[0].as_f64().unwrap_or(1280.0), size[1].as_f64().unwrap_or(1000.0));
        let shot = self
            .client
            .issue_cmd(Cdp(json!({"cmd": "Page.captureScreenshot", "params": {
                "format": "png", "captureBeyondViewport": true,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            }})))
            .await
            .context("taking a screenshot")?;
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap_or_default())?;
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        println!("screenshot: {}", path.display());
        Ok(path)
    }

    /// Ends the session and stops chromedriver.
    pub async fn close(mut self) -> anyhow::Result<()> {
        let closed = self.client.clone().close().await;
        let _ = self.driver.kill().await;
        closed.context("closing the browser session")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The support itself: a page with a console error and a missing image is reported as such, a clean page
    /// is not, and the screenshot is a PNG.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn problems_are_reported_and_screenshots_saved() {
        let Some(browser) = Browser::start().await.unwrap() else { return };
        let app = axum::Router::new()
            .route("/clean", axum::routing::get(|| async { axum::response::Html("<!doctype html><title>ok</title><link rel=\"icon\" href=\"data:,\"><p>ok</p>") }))
            .route(
                "/broken",
                axum::routing::get(|| async {
                    axum::response::Html(
                        "<!doctype html><title>b</title><img src=\"/missing.png\" alt=\"\"><script>console.error('boom')</script>",
                    )
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(listener, app).await });

        browser.open(&format!("{base}/clean")).await.unwrap();
        assert_eq!(browser.problems().await.unwrap(), Problems::default());
        assert!(browser.requests().await.unwrap().is_empty());
        let png = std::fs::read(browser.screenshot("browser-test-clean").await.unwrap()).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");

        browser.open(&format!("{base}/broken")).await.unwrap();
        let problems = browser.problems().await.unwrap();
        assert!(problems.console_errors.iter().any(|e| e.contains("boom")), "{problems:?}");
        assert!(
            problems.failed_requests.iter().any(|e| e.contains("missing.png") || e.contains("404")),
            "{problems:?}"
        );
        assert!(browser.requests().await.unwrap().iter().any(|r| r.ends_with("/missing.png")));
        browser.close().await.unwrap();
        server.abort();
    }
}
