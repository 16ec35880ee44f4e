//! # bridge-conformance
//!
//! Checks any deployment of the bridge service API against the contract (`schema/openapi.yaml`), from the
//! outside, over HTTP: a staging deployment, another team's implementation of `bridge_server::BridgeApi`, or
//! the sandbox. The binary `bridge-conformance` is the usual way in (`--help`); this library is what it runs,
//! and what tests use to run it against deliberately broken deployments.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use bridge_conformance::{run, RunConfig};
//!
//! let mut config = RunConfig::new("https://bridge.staging.example.com", "<JWT of a test project>");
//! config.other_token = Some("<JWT of a second test project>".into());
//! let report = run(&config, &mut std::io::stdout()).await?; // prints PASS/FAIL lines and `N passed, M failed`
//! assert_eq!(report.failed(), 0);
//! # Ok(()) }
//! ```
//!
//! What is checked, area by area ([`checks`]), and where it comes from:
//!
//! * **schema**: every answer of every check is validated against the document with the `jsonschema` crate:
//!   the status is documented for the operation, the content type is JSON, the body validates against the
//!   status's schema (OpenAPI `nullable` converted). One check per operation exercises it on its own.
//! * **decode**: the decode-error catalogue, generated from the server's decoder tables
//!   (`bridge_server::shapes`); the expected issues are computed by `bridge_server::decode::engine`, the
//!   workspace's executable model of `../shared/spec/decode-errors.md`.
//! * **auth**: every operation by its `security`, from `bridge_contract::every_operation!`.
//! * **behaviour**, **isolation** (`--other-token`), **lifecycle** and **webhook** deliveries
//!   (`--sandbox-helpers`): what a client relies on beyond shapes.
//! * **limits** (`--rate-limited`, or a second spawned sandbox with a low limit): a project over its request rate
//!   limit gets 429 `TooManyRequests` with `retryAfter` and `Retry-After`, another project does not, and the
//!   project is served again after the wait.
//!
//! The other direction, real traffic: [`proxy`] is a validating reverse proxy (`bridge-conformance proxy`) that
//! forwards a service's requests to a deployment and checks every exchange ([`exchange`]: routed by [`route`],
//! broken [`violation::Rule`]s located by JSON pointer), reports coverage per operation ([`coverage`], written as
//! JSON, JUnit XML and one HTML page by [`html`]), and records exchanges ([`record`]) that [`replay`] sends again,
//! ignoring the members the schema marks `x-volatile` ([`members`]); [`redact`] keeps credentials out of all of it.
//!
//! Checks run one at a time and each makes its own quotes, bridges and addresses (with names unique to the run),
//! so any subset runs alone and earlier runs do not interfere. Against a shared deployment, use dedicated test
//! projects: the checks create quotes, bridges awaiting a deposit and deposit addresses.

pub mod answer_json;
pub mod check;
pub mod checks;
pub mod config;
pub mod contract;
pub mod coverage;
pub mod exchange;
pub mod html;
pub mod http;
pub mod members;
pub mod proxy;
pub mod receiver;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod route;
pub mod runner;
#[cfg(feature = "spawn-sandbox")]
pub mod spawn;
pub mod violation;

pub use config::{Fixtures, RateLimited, RunConfig};
pub use report::{CheckResult, Report};
pub use runner::{run, select};
#[cfg(feature = "spawn-sandbox")]
pub use spawn::SpawnedSandbox;
