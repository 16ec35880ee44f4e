//! `--spawn-sandbox` passes everything: the whole runner against the sandbox as `bridge-sandbox serve --clock
//! manual` runs it, with both projects, an expired token, a revoked API key and a token exchanged from it, and the
//! sandbox helpers, and the `limits` checks against a second sandbox with a per-project rate limit.

use bridge_conformance::{run, SpawnedSandbox};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_passes_every_check() {
    let sandbox = SpawnedSandbox::start().await.unwrap();
    let limited = SpawnedSandbox::start_rate_limited().await.unwrap();
    let mut out = Vec::new();
    let mut config = sandbox.run_config();
    config.rate_limited = Some(limited.rate_limited());
    // Generous for a loaded CI machine: a delivery that arrives ends the wait at once.
    config.webhook_wait = std::time::Duration::from_secs(20);
    let report = run(&config, &mut out).await.unwrap();
    sandbox.stop().await.unwrap();
    limited.stop().await.unwrap();
    let text = String::from_utf8(out).unwrap();
    let failures: Vec<String> = report.failures().map(|r| r.line()).collect();
    assert!(failures.is_empty(), "{} check(s) failed:\n{}", failures.len(), failures.join("\n"));
    for (area, passed, _) in report.per_area() {
        println!("{area}: {passed}");
    }
    // Every area ran, with every optional part enabled.
    let areas: Vec<String> = report.per_area().into_iter().map(|(a, _, _)| a).collect();
    assert_eq!(areas, ["auth", "schema", "decode", "behaviour", "isolation", "lifecycle", "webhook", "limits"]);
    for revoked in
        ["exchangeApiKey::revoked-api-key", "listUserEvents::revoked-api-key", "getBridge::revoked-key-token"]
    {
        assert!(report.get(&format!("auth::{revoked}")).is_some_and(|r| r.passed()), "auth::{revoked} ran and passed");
    }
    // One line per check, then the summary alone on the last line.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), report.results.len() + 1);
    assert!(lines[..lines.len() - 1].iter().all(|l| l.starts_with("PASS ")));
    assert_eq!(lines.last().copied(), Some(format!("{} passed, 0 failed", report.results.len()).as_str()));
}
