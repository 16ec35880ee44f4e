//! What a check is: a named async function of the run's context ([`Ctx`]: the clients of the deployment,
//! the configuration, names unique to the run), with what it needs beyond `--base-url` and `--token`
//! ([`Needs`]). The areas in [`crate::runner::checks`] make them; [`crate::runner`] selects and runs them.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use rand::Rng as _;

use crate::runner::config::RunConfig;
use crate::runner::http::{Api, Credential, Sink};

/// What a running check can use.
pub struct Ctx {
    pub config: RunConfig,
    /// The main project (`--token`).
    pub main: Api,
    /// The second project (`--other-token`), for the isolation checks.
    pub other: Option<Api>,
    /// No credentials.
    pub anonymous: Api,
    /// The rate-limited deployment's main project and second project (`limits` checks only).
    pub limited: Option<(Api, Option<Api>)>,
    /// Random, per run: makes names (`addressNote`s) unique so that earlier runs against the same deployment
    /// do not interfere.
    pub run_id: String,
    seq: AtomicU64,
}

impl Ctx {
    pub(crate) fn new(config: &RunConfig, sink: Sink) -> anyhow::Result<Self> {
        let api = |c: Credential| Api::new(&config.base_url, c, config.request_timeout, sink.clone());
        let run_id = format!("{:08x}", rand::rng().random::<u32>());
        Ok(Self {
            main: api(Credential::Bearer(config.token.clone()))?,
            other: config.other_token.as_ref().map(|t| api(Credential::Bearer(t.clone()))).transpose()?,
            anonymous: api(Credential::None)?,
            limited: match &config.rate_limited {
                None => None,
                Some(limited) => {
                    let api = |token: &String| {
                        let credential = Credential::Bearer(token.clone());
                        Api::new(&limited.base_url, credential, config.request_timeout, sink.clone())
                    };
                    Some((api(&limited.token)?, limited.other_token.as_ref().map(api).transpose()?))
                }
            },
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

    /// The rate-limited deployment's clients: its main project, and its second project if there is one.
    pub fn limited(&self) -> anyhow::Result<(&Api, Option<&Api>)> {
        let (main, other) = self.limited.as_ref().context("no rate-limited deployment (--rate-limited)")?;
        Ok((main, other.as_ref()))
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
    /// `--rate-limited` (or `--spawn-sandbox`).
    pub rate_limited: bool,
    /// `--revoked-api-key`.
    pub revoked_key: bool,
    /// `--revoked-key-token`.
    pub revoked_token: bool,
}

impl Needs {
    pub const NOTHING: Needs = Needs {
        helpers: false,
        other: false,
        expired: false,
        rate_limited: false,
        revoked_key: false,
        revoked_token: false,
    };
    pub const HELPERS: Needs = Needs { helpers: true, ..Self::NOTHING };
    pub const OTHER: Needs = Needs { other: true, ..Self::NOTHING };
    pub const OTHER_AND_HELPERS: Needs = Needs { helpers: true, other: true, ..Self::NOTHING };
    pub const EXPIRED: Needs = Needs { expired: true, ..Self::NOTHING };
    pub const RATE_LIMITED: Needs = Needs { rate_limited: true, ..Self::NOTHING };

    pub(crate) fn met_by(&self, config: &RunConfig) -> Result<(), &'static str> {
        if self.helpers && !config.sandbox_helpers {
            return Err("--sandbox-helpers");
        }
        if self.other && config.other_token.is_none() {
            return Err("--other-token");
        }
        if self.expired && config.expired_token.is_none() {
            return Err("--expired-token");
        }
        if self.rate_limited && config.rate_limited.is_none() {
            return Err("--rate-limited");
        }
        if self.revoked_key && config.revoked_api_key.is_none() {
            return Err("--revoked-api-key");
        }
        if self.revoked_token && config.revoked_key_token.is_none() {
            return Err("--revoked-key-token");
        }
        Ok(())
    }
}

/// The future of one check.
pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;
type CheckFn = Box<dyn for<'a> Fn(&'a Ctx) -> CheckFuture<'a> + Send + Sync>;

/// The body of a check: an `async fn(&Ctx) -> anyhow::Result<()>` whose future is `Send` ([`Check::of`]).
pub trait CheckBody<'a>: Send + Sync + 'static {
    type Future: Future<Output = anyhow::Result<()>> + Send + 'a;
    fn call(&self, ctx: &'a Ctx) -> Self::Future;
}

impl<'a, F, Fut> CheckBody<'a> for F
where
    F: Fn(&'a Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'a,
{
    type Future = Fut;
    fn call(&self, ctx: &'a Ctx) -> Fut {
        self(ctx)
    }
}

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

    /// A check that runs `body` (an `async fn(&Ctx) -> anyhow::Result<()>`).
    pub fn of(name: impl Into<String>, needs: Needs, body: impl for<'a> CheckBody<'a>) -> Self {
        Self::new(name, needs, move |ctx| Box::pin(body.call(ctx)))
    }

    /// Runs the check.
    pub fn run<'a>(&self, ctx: &'a Ctx) -> CheckFuture<'a> {
        (self.run)(ctx)
    }
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check").field("name", &self.name).field("needs", &self.needs).finish()
    }
}
