//! `proxy --record` and the proxy's report keep no credential whole. Through the proxy to a spawned sandbox over
//! real HTTP on 127.0.0.1, a client sends an API key the way clients do and the way they should not: form-encoded
//! and as `text/plain` to the key exchange (the second refused, its decode error quoting the key), in a multipart
//! body, in a query string, in an ordinary header, percent-encoded in a path; and it signs in to the dashboard
//! with it (the session id comes back in `Set-Cookie`, the CSRF token in the pages, and goes out again in a form).
//! Every credential issued on the way (the key, the JWT of the exchange, the session id, the CSRF token) is then
//! searched for in the recording file and in the report (JSON and HTML): none is there whole, also once
//! percent-decoded; each is there redacted, as its first characters and `…[redacted]`. The proxy's own log (the
//! binary, at `debug`: every exchange's target, every violation) holds none either.

use bridge_conformance::proxy::{Proxy, ProxyConfig};
use bridge_conformance::runner::spawn::MAIN_PROJECT;
use bridge_conformance::SpawnedSandbox;
use serde_json::Value;

/// An exchange through the proxy: status, headers, body text.
async fn send(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, String) {
    let answer = request.send().await.unwrap();
    let (status, headers) = (answer.status().as_u16(), answer.headers().clone());
    (status, headers, answer.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_and_the_report_hold_no_credential_whole() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let admin = bridge_sandbox::admin(sandbox.data_dir(), None).await.unwrap();
    let key = admin.create_api_key(MAIN_PROJECT, "recorded").await.unwrap().text;
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("recording.jsonl");
    let mut config = ProxyConfig::new(&sandbox.base_url);
    config.record = Some(recording.clone());
    let proxy = Proxy::start(config).await.unwrap();
    let base = proxy.url.clone();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let exchange = format!("{base}/authentication/auth/apiKey");

    // The key exchange, form-encoded (the sandbox follows its store within a second: until it knows the key).
    let started = std::time::Instant::now();
    let jwt = loop {
        let form = format!("apiKey={key}");
        let request = http.post(&exchange).header("content-type", "application/x-www-form-urlencoded").body(form);
        let (status, _, body) = send(request).await;
        if status == 200 {
            break serde_json::from_str::<Value>(&body).unwrap()["jwt"].as_str().unwrap().to_owned();
        }
        assert!(started.elapsed().as_secs() < 30, "the key is not accepted: {status} {body}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // As text: refused, and the decode error does not quote it back.
    let (status, _, body) = send(http.post(&exchange).header("content-type", "text/plain").body(key.clone())).await;
    assert_eq!(status, 400, "{body}");
    assert!(!body.contains(&key), "{body}");
    // In a multipart body.
    let multipart = format!("--b\r\nContent-Disposition: form-data; name=\"apiKey\"\r\n\r\n{key}\r\n--b--\r\n");
    let request = http.post(&exchange).header("content-type", "multipart/form-data; boundary=b").body(multipart);
    assert_eq!(send(request).await.0, 400);
    // In a query, an ordinary header, and percent-encoded in a path.
    let history = format!("{base}/bridge/history/user?page=1&limit=5&sortBy=createdAt&sortDirection=desc&apiKey={key}");
    let (status, _, _) = send(http.get(history).bearer_auth(&jwt).header("x-debug-key", key.as_str())).await;
    assert_eq!(status, 200);
    let encoded = key.replacen('_', "%5F", 1);
    send(http.get(format!("{base}/bridge/history/bridge/{encoded}")).bearer_auth(&jwt)).await;

    // The dashboard: sign in with the key, read a page (its forms carry the CSRF token), sign out with it.
    let form = |pairs: &[(&str, &str)]| form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    let form_type = ("content-type", "application/x-www-form-urlencoded");
    let sign_in = http
        .post(format!("{base}/dashboard/sign-in"))
        .header(form_type.0, form_type.1)
        .body(form(&[("credential", &key)]));
    let (status, headers, _) = send(sign_in).await;
    assert_eq!(status, 303);
    let cookie = headers["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let session = cookie.split_once('=').unwrap().1.to_owned();
    let (_, _, page) = send(http.get(format!("{base}/dashboard/clock")).header("cookie", &cookie)).await;
    let at = page.find(r#"name="csrf" value=""#).expect("a form with a token") + r#"name="csrf" value=""#.len();
    let csrf = page[at..at + page[at..].find('"').unwrap()].to_owned();
    let sign_out = http
        .post(format!("{base}/dashboard/sign-out"))
        .header("cookie", &cookie)
        .header(form_type.0, form_type.1)
        .body(form(&[("csrf", &csrf)]));
    assert_eq!(send(sign_out).await.0, 303);

    let report_json = send(http.get(format!("{base}/_conformance/report"))).await.2;
    let report_html = send(http.get(format!("{base}/_conformance/report?format=html"))).await.2;
    let report = proxy.stop().await.unwrap();
    assert!(report.violations > 0, "the dashboard's paths are no operation: their examples are in the report");
    sandbox.stop().await.unwrap();

    let recorded = std::fs::read_to_string(&recording).unwrap();
    let lines = bridge_conformance::proxy::record::read(&recording).unwrap();
    assert!(lines.len() >= 8, "{} exchanges recorded", lines.len());
    let decoded = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
    let secrets = [("the API key", &key), ("the JWT", &jwt), ("the session id", &session), ("the CSRF token", &csrf)];
    for (what, secret) in secrets {
        assert!(bridge_server::credential::is_credential(secret), "{what} has a credential form: {secret}");
        for (name, text) in
            [("the recording", &recorded), ("the JSON report", &report_json), ("the HTML report", &report_html)]
        {
            assert!(!text.contains(secret.as_str()), "{what} is in {name}: {text}");
            assert!(!decoded(text).contains(secret.as_str()), "{what} is in {name}, percent-encoded: {text}");
        }
    }
    // (The session id travels in `Set-Cookie` and `Cookie` only, credential headers recorded as `[redacted]`.)
    for (what, secret) in [("the API key", &key), ("the CSRF token", &csrf)] {
        let shown = format!("{}…[redacted]", &secret[..8]);
        assert!(decoded(&recorded).contains(&shown), "{what} is recorded as {shown}: {recorded}");
    }
    let exchanged = lines.iter().find(|l| l.answer.status == Some(200)).expect("the exchange that answered the JWT");
    assert_eq!(exchanged.request.body.as_deref(), Some(format!("apiKey={}…[redacted]", &key[..8]).as_str()));
    assert_eq!(exchanged.answer.body.as_deref(), Some(r#"{"jwt":"[redacted]"}"#), "x-secret members as before");
}

/// The `bridge-conformance proxy` binary at `debug` in front of a spawned sandbox: the key in a target's path and
/// query (logged with each exchange) and in a path the contract lacks (a `route` violation, logged `WARN` with its
/// message) is logged redacted, never whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxys_log_holds_no_credential_whole() {
    use std::io::BufRead as _;
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let admin = bridge_sandbox::admin(sandbox.data_dir(), None).await.unwrap();
    let key = admin.create_api_key(MAIN_PROJECT, "logged").await.unwrap().text;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bridge-conformance"))
        .args(["proxy", "--upstream", &sandbox.base_url, "--listen", "127.0.0.1:0", "--requests", "2"])
        .env("RUST_LOG", "debug")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let log = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("bridge-conformance proxy: ") {
                let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_owned());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the proxy prints its address");
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let history = format!("{url}/bridge/history/bridge/{key}?apiKey={key}");
    send(http.get(history).bearer_auth(&sandbox.token)).await;
    let (status, _, _) = send(http.get(format!("{url}/dashboard/bridges/{key}"))).await;
    assert_eq!(status, 303, "the dashboard sends a visitor without a session to sign in: a route violation");
    let exited = tokio::task::spawn_blocking(move || child.wait().unwrap()).await.unwrap();
    let log = log.join().unwrap();
    sandbox.stop().await.unwrap();
    assert_eq!(exited.code(), Some(0), "{log}");
    assert!(!log.contains(&key), "the key is in the proxy's log: {log}");
    assert!(log.contains("contract violation"), "the route violation is logged: {log}");
    assert!(log.contains(&format!("/dashboard/bridges/{}…[redacted]", &key[..8])), "{log}");
}
