//! The check registry and the run loop. Checks run one after another (several of them move the sandbox clock,
//! which every project shares); each check makes the quotes, bridges and addresses it needs, so any subset
//! (`--only`) runs on its own. A check fails when it returns an error, times out, or when any answer it
//! received does not match the document (see [`crate::http`]).

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context as _;
use rand::Rng as _;

use crate::config::RunConfig;
use crate::http::{Api, Credential, Sink};
use crate::report::{CheckResult, Report};

/// What a running check can use.
pub struct Ctx {
    pub config: RunConfig,
    /// The main project (`--token`).
    pub main: Api,
    /// The second project (`--other-token`), for the isolation checks.
    pub other: Option<Api>,
    /// No credentials.
    pub anonymous: Api,
    /// Random, per run: makes names (`addressNote`s) unique so that earlier runs against the same deployment
    /// do not interfere.
    pub run_id: String,
    seq: AtomicU64,
}

impl Ctx {
    fn new(config: &RunConfig, sink: Sink) -> anyhow::Result<Self> {
        let api = |c: Credential| Api::new(&config.base_url, c, config.request_timeout, sink.clone());
        let run_id = format!("{:08x}", rand::rng().random::<u32>());
        Ok(Self {
            main: api(Credential::Bearer(config.token.clone()))?,
            other: config.other_token.as_ref().map(|t| api(Credential::Bearer(t.clone()))).transpose()?,
            anonymous: api(Credential::None)?,
            config: config.clone(),
            run_id,
            seq: AtomicU64::new(0),
        })
    }

    /// A name unique to this run: `conformance-<run>-<what>-<n>`.
    pub fn unique(&self, what: &str) -> String {
        format!("conformance-{}-{what}-{}", self.run_id, self.seq.fetch_add(1, Ordering::Relaxed))
    }

    /// The second project's client (the isolation checks only run when there is one).
    pub fn other(&self) -> anyhow::Result<&Api> {
        self.other.as_ref().context("no --other-token")
    }
}

/// What a check needs beyond `--base-url` and `--token`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// `--sandbox-helpers`.
    pub helpers: bool,
    /// `--other-token`.
    pub other: bool,
    /// `--expired-token`.
    pub expired: bool,
}

impl Needs {
    pub const NOTHING: Needs = Needs { helpers: false, other: false, expired: false };
    pub const HELPERS: Needs = Needs { helpers: true, other: false, expired: false };
    pub const OTHER: Needs = Needs { helpers: false, other: true, expired: false };
    pub const OTHER_AND_HELPERS: Needs = Needs { helpers: true, other: true, expired: false };
    pub const EXPIRED: Needs = Needs { helpers: false, other: false, expired: true };

    fn met_by(&self, config: &RunConfig) -> Result<(), &'static str> {
        if self.helpers && !config.sandbox_helpers {
            return Err("--sandbox-helpers");
        }
        if self.other && config.other_token.is_none() {
            return Err("--other-token");
        }
        if self.expired && config.expired_token.is_none() {
            return Err("--expired-token");
        }
        Ok(())
    }
}

/// The future of one check.
pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;
type CheckFn = Box<dyn for<'a> Fn(&'a Ctx) -> CheckFuture<'a> + Send + Sync>;

/// One named check.
pub struct Check {
    /// `area::name`.
    pub name: String,
    pub needs: Needs,
    run: CheckFn,
}

impl Check {
    pub fn new(
        name: impl Into<String>,
        needs: Needs,
        run: impl for<'a> Fn(&'a Ctx) -> CheckFuture<'a> + Send + Sync + 'static,
    ) -> Self {
        Self { name: name.into(), needs, run: Box::new(run) }
    }
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check").field("name", &self.name).field("needs", &self.needs).finish()
    }
}

/// Every check the runner knows, in run order (areas: auth, schema, decode, behaviour, isolation, lifecycle,
/// webhook), before filtering.
pub fn all_checks(config: &RunConfig) -> Vec<Check> {
    let mut checks = Vec::new();
    checks.extend(crate::checks::auth::checks());
    checks.extend(crate::checks::schema::checks());
    checks.extend(crate::checks::decode::checks(config.errors));
    checks.extend(crate::checks::behaviour::checks());
    checks.extend(crate::checks::isolation::checks());
    checks.extend(crate::checks::lifecycle::checks());
    checks.extend(crate::checks::webhook::checks());
    checks
}

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
    let selected: Vec<Check> = all_checks(config)
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
        .call("getWebhookPublicKey", &[], &[], None)
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
        let outcome = tokio::time::timeout(config.check_timeout, (check.run)(&ctx)).await;
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

    #[test]
    fn names_are_unique_and_areas_known() {
        let mut config = RunConfig::new("http://127.0.0.1:1", "t");
        config.sandbox_helpers = true;
        config.other_token = Some("o".into());
        config.expired_token = Some("e".into());
        let checks = all_checks(&config);
        let mut names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        let total = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), total, "check names are unique");
        for name in names {
            let area = name.split("::").next().unwrap();
            assert!(
                ["auth", "schema", "decode", "behaviour", "isolation", "lifecycle", "webhook"].contains(&area),
                "{name}"
            );
        }
    }
}
