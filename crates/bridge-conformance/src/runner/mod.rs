//! The runner: checks a deployment with requests of its own. Its parts: [`check`] (what a check is), [`checks`]
//! (the registry, one module per area), [`config`], [`http`] (raw requests, every answer checked against the
//! document), [`receiver`] (webhook deliveries), `spawn` (`--spawn-sandbox`); here, the run loop. Beside it,
//! [`receiver_check`] drives the sandbox's receiver check (`bridge-conformance receiver`).
//!
//! The run loop selects checks from the registry ([`checks::all`]) and runs them. Checks run one after another
//! (several of them move the sandbox clock, which every project shares); each check makes the quotes, bridges and
//! addresses it needs, so any subset (`--only`) runs on its own. A check fails when it returns an error, times out,
//! or when any answer it received does not match the document (see [`http`]).

pub mod check;
pub mod checks;
pub mod config;
pub mod http;
pub mod receiver;
pub mod receiver_check;
#[cfg(feature = "spawn-sandbox")]
pub mod spawn;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context as _;
use bridge_contract::AnyOperation;

use crate::report::{CheckResult, Report};
use check::{Check, Ctx};
use config::RunConfig;
use http::Sink;

/// Whether a check name matches an `--only` pattern: with `*` a glob over the whole name (`decode::quote*`),
/// otherwise whole `::`-separated segments of the name, in a row (`isolation`, `quoteBridge`,
/// `decode::quoteBridge`, `schema::quoteBridge` but not `schema::quoteBridgeSwap`).
pub fn matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        let wanted: Vec<&str> = pattern.split("::").collect();
        let segments: Vec<&str> = name.split("::").collect();
        return segments.windows(wanted.len()).any(|w| w == wanted.as_slice());
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

/// The checks a configuration runs: those whose needs are met and that match `--only`.
pub fn select(config: &RunConfig) -> Vec<Check> {
    let mut not_run: Vec<(&'static str, usize)> = Vec::new();
    let selected: Vec<Check> = checks::all(config)
        .into_iter()
        .filter(|c| config.only.is_empty() || config.only.iter().any(|p| matches(p, &c.name)))
        .filter(|c| match c.needs.met_by(config) {
            Ok(()) => true,
            Err(flag) => {
                match not_run.iter_mut().find(|(f, _)| *f == flag) {
                    Some((_, n)) => *n += 1,
                    None => not_run.push((flag, 1)),
                }
                false
            }
        })
        .collect();
    for (flag, n) in not_run {
        tracing::info!("{n} check(s) not run: they need {flag}");
    }
    selected
}

/// Runs the selected checks against the deployment, writing one line per check to `out` as it finishes and
/// the summary line at the end. Errors only when nothing can run (no check selected, deployment unreachable).
pub async fn run(config: &RunConfig, out: &mut (dyn Write + Send)) -> anyhow::Result<Report> {
    let started = Instant::now();
    let sink: Sink = Arc::new(Mutex::new(Vec::new()));
    let ctx = Ctx::new(config, sink.clone())?;
    let checks = select(config);
    anyhow::ensure!(
        !checks.is_empty(),
        "no check to run (--only {:?} matched none of those whose needs are met)",
        config.only
    );
    // Reachability first, so that a wrong URL is one clear error rather than hundreds of failures.
    ctx.anonymous
        .call(AnyOperation::GetWebhookPublicKey, &[], &[], None)
        .await
        .with_context(|| format!("cannot reach the deployment at {}", config.base_url))?;
    sink.lock().unwrap().clear();
    tracing::info!(base_url = %config.base_url, run = %ctx.run_id, "running {} checks", checks.len());

    let mut results = Vec::with_capacity(checks.len());
    let mut area = String::new();
    for check in &checks {
        let this_area = check.name.split("::").next().unwrap_or_default();
        if this_area != area {
            area = this_area.to_owned();
            let n = checks.iter().filter(|c| c.name.split("::").next() == Some(this_area)).count();
            tracing::info!("{area}: {n} check(s)");
        }
        tracing::debug!(check = %check.name, "running");
        let start = Instant::now();
        let outcome = tokio::time::timeout(config.check_timeout, check.run(&ctx)).await;
        let mut failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("{e:#}")),
            Err(_) => Some(format!("timed out after {:?}", config.check_timeout)),
        };
        let problems: Vec<String> = std::mem::take(&mut *sink.lock().unwrap());
        if !problems.is_empty() {
            let schema = format!("answer does not match the document: {}", problems.join("; "));
            failure = Some(match failure {
                None => schema,
                Some(f) => format!("{f}; {schema}"),
            });
        }
        // A failure may quote an answer: its credentials are written redacted (stdout, the log, JUnit).
        let failure = failure.map(|f| crate::contract::redact::text(&f));
        let result = CheckResult { name: check.name.clone(), failure, duration: start.elapsed() };
        if let Some(reason) = &result.failure {
            tracing::warn!(check = %result.name, "failed: {reason}");
        }
        writeln!(out, "{}", result.line())?;
        out.flush()?;
        results.push(result);
    }
    let report = Report { results, duration: started.elapsed() };
    for (area, passed, failed) in report.per_area() {
        tracing::info!("{area}: {passed} passed, {failed} failed");
    }
    writeln!(out, "{}", report.summary())?;
    out.flush()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_patterns() {
        assert!(matches("auth", "auth::quoteBridge::no-credential"));
        assert!(matches("quoteBridge", "auth::quoteBridge::no-credential"));
        assert!(matches("schema::quoteBridge", "schema::quoteBridge"));
        assert!(!matches("schema::quoteBridge", "schema::quoteBridgeSwap"));
        assert!(matches("decode::quoteBridge::body.mode", "decode::quoteBridge::body.mode::not-a-literal"));
        assert!(!matches("auth::quote", "auth::quoteBridge::no-credential"));
        assert!(matches("decode::quote*", "decode::quoteBridge::body.mode::not-a-literal"));
        assert!(!matches("decode::quote*", "auth::quoteBridge::no-credential"));
        assert!(matches("*::no-credential", "auth::quoteBridge::no-credential"));
        assert!(matches("*Bridge*tag*", "decode::quoteBridge::body.postBridgeData._tag::unknown"));
        assert!(!matches("auth::*x", "auth::a"));
        assert!(matches("*", "anything"));
    }
}
