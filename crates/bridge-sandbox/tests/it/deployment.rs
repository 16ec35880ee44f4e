//! The binary as a container runtime or a log collector runs it (deploy/, docs/operations.md "Deploying"): the
//! `probe` command the image's health check runs, and logs without colour codes unless written to a terminal.
//! Loopback only. The image itself is built and run by `scripts/image-test.sh` (a CI step: it needs root and
//! buildah).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::Running;

const BINARY: &str = env!("CARGO_BIN_EXE_bridge-sandbox");

/// `bridge-sandbox probe URL`, with a proxy in the environment that must not be used: a port of 127.0.0.1 where
/// nothing answers HTTP.
async fn probe(url: String, extra: &[&str]) -> Output {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(BINARY)
            .arg("probe")
            .arg(&url)
            .args(&extra)
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .env("http_proxy", "http://127.0.0.1:9")
            .env("ALL_PROXY", "http://127.0.0.1:9")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `probe` exits 0 when its URL answers 2xx (printing the answer), 1 otherwise (an answer of another status, no
/// answer within `--timeout`, nothing listening), saying why on stderr. It goes straight to the URL: the proxy
/// variables a container may carry are not used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_exits_0_only_when_its_url_answers_2xx() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(&dir.path().join("data")).await;

    let live = probe(format!("{}/livez", sandbox.base_url), &[]).await;
    assert_eq!(live.status.code(), Some(0), "{}{}", text(&live.stdout), text(&live.stderr));
    assert!(text(&live.stdout).contains(r#"{"status":"ok"}"#), "{}", text(&live.stdout));

    // Ready once the first lifecycle and delivery passes have run.
    let started = Instant::now();
    let ready = loop {
        let ready = probe(format!("{}/readyz", sandbox.base_url), &[]).await;
        if ready.status.success() || started.elapsed() > Duration::from_secs(60) {
            break ready;
        }
        assert_eq!(ready.status.code(), Some(1), "not ready yet is 1: {}", text(&ready.stderr));
        assert!(text(&ready.stderr).contains("503"), "{}", text(&ready.stderr));
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ready.status.code(), Some(0), "ready within 60 s: {}", text(&ready.stderr));

    let missing = probe(format!("{}/no-such-probe", sandbox.base_url), &[]).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("404"), "{}", text(&missing.stderr));

    // Accepted by the kernel, never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/readyz", silent.local_addr().unwrap());
    let waited = probe(silent_url.clone(), &["--timeout", "500ms"]).await;
    assert_eq!(waited.status.code(), Some(1));
    assert!(text(&waited.stderr).contains(&silent_url), "{}", text(&waited.stderr));

    let base_url = sandbox.base_url.clone();
    sandbox.stop().await;
    let gone = probe(format!("{base_url}/livez"), &[]).await;
    assert_eq!(gone.status.code(), Some(1), "{}", text(&gone.stderr));
}

/// What `serve` writes before it exits 1 on a port that is taken (its first lines: the open-file limit, the
/// store's migrations, its keys), its standard output and error going to `to`.
fn log_of_a_start(to: LogTo, no_color: Option<&str>, data: &Path) -> Vec<u8> {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let serve =
        [BINARY, "serve", "--listen", &taken.local_addr().unwrap().to_string(), "--data", data.to_str().unwrap()];
    let mut command = match to {
        // util-linux's `script` runs the command on a new pseudo-terminal and copies what it writes to its own
        // standard output.
        LogTo::Terminal => {
            let line = serve.iter().map(|arg| format!("'{}'", arg.replace('\'', r"'\''"))).collect::<Vec<_>>();
            let mut script = Command::new("script");
            script.args(["--quiet", "--return", "--command", &line.join(" "), "/dev/null"]);
            script
        }
        LogTo::File | LogTo::Pipe => {
            let mut command = Command::new(serve[0]);
            command.args(&serve[1..]);
            command
        }
    };
    command
        .env("RUST_LOG", "info")
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null());
    if let Some(value) = no_color {
        command.env("NO_COLOR", value);
    }
    let log = match to {
        LogTo::File => {
            let path = data.with_extension("log");
            let file = std::fs::File::create(&path).unwrap();
            let status = command.stdout(file.try_clone().unwrap()).stderr(file).status().unwrap();
            assert_eq!(status.code(), Some(1), "the port is taken");
            std::fs::read(&path).unwrap()
        }
        LogTo::Pipe | LogTo::Terminal => {
            let output = command.output().expect("the binary (and util-linux's script) run");
            assert_eq!(output.status.code(), Some(1), "the port is taken: {}", text(&output.stderr));
            [output.stdout, output.stderr].concat()
        }
    };
    assert!(text(&log).contains("open-file limit"), "the start is logged: {}", text(&log));
    log
}

#[derive(Clone, Copy, Debug)]
enum LogTo {
    File,
    Pipe,
    Terminal,
}

/// Issue 36, item 6: log lines carry ANSI colour codes only on a terminal, and not even there when `NO_COLOR` is
/// set to anything but the empty string (https://no-color.org). `serve > file` and a log collector's pipe get plain
/// text (before: the human format always coloured, so files held `ESC[2m` and `ESC[32m` sequences).
#[test]
fn logs_are_coloured_only_on_a_terminal_and_never_with_no_color() {
    const ESC: u8 = 0x1b;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (LogTo::File, None, false),
        (LogTo::Pipe, None, false),
        (LogTo::File, Some(""), false),
        (LogTo::Terminal, None, true),
        (LogTo::Terminal, Some(""), true),
        (LogTo::Terminal, Some("1"), false),
        (LogTo::Terminal, Some("false"), false),
    ];
    for (n, (to, no_color, coloured)) in cases.into_iter().enumerate() {
        let log = log_of_a_start(to, no_color, &dir.path().join(format!("data-{n}")));
        assert_eq!(log.contains(&ESC), coloured, "{to:?}, NO_COLOR {no_color:?}: {:?}", text(&log));
    }
}
