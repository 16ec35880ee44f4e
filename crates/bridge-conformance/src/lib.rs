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
//! What is checked, area by area ([`runner::checks`]), and where it comes from:
//!
//! * **schema**: every answer of every check is validated against the document with the `jsonschema` crate:
//!   the status is documented for the operation, the content type is JSON, the body validates against the
//!   status's schema (OpenAPI `nullable` converted). One check per operation exercises it on its own.
//! * **decode**: the decode-error catalogue, generated from the server's decoder tables
//!   (`bridge_server::shapes`); the expected issues are computed by `bridge_server::decode::engine`, the
//!   workspace's executable model of the reference framework's decoding rules (`docs/decode-errors.md`).
//! * **auth**: every operation by its `security`, from `bridge_contract::every_operation!`.
//! * **behaviour**, **isolation** (`--other-token`), **lifecycle** and **webhook** deliveries
//!   (`--sandbox-helpers`): what a client relies on beyond shapes.
//! * **limits** (`--rate-limited`, or a second spawned sandbox with a low limit): a project over its request rate
//!   limit gets 429 `TooManyRequests` with `retryAfter` and `Retry-After`, another project does not, and the
//!   project is served again after the wait.
//!
//! The other direction, real traffic: [`proxy`] is a validating reverse proxy (`bridge-conformance proxy`) that
//! forwards a service's requests to a deployment and checks every exchange ([`contract::exchange`]: routed by
//! [`contract::route`], broken [`contract::violation::Rule`]s located by JSON pointer), reports coverage per
//! operation ([`report::coverage`], written as JSON, JUnit XML and one HTML page by [`report::html`]), and records
//! exchanges ([`proxy::record`]) that [`proxy::replay`] sends again, ignoring the members the schema marks
//! `x-volatile` ([`contract::members`]); [`contract::redact`] keeps credentials out of all of it.
//!
//! The modules are layers, lowest first; a module imports only from its own layer or those below, and the runner
//! and the proxy never import each other (`cargo xtask check`, against the table in `xtask/src/layering.rs`):
//!
//! 1. [`contract`], the base: the contract and the checks of one exchange (route, decode, status and shape,
//!    typed), violations, redaction;
//! 2. [`report`]: the formats both tools write (result lines, JUnit XML, JSON, the HTML page);
//! 3. [`runner`] (checks, configuration, HTTP client, receiver, `--spawn-sandbox`) and [`proxy`] (forwarding,
//!    coverage, recording, replay), side by side;
//! 4. [`run_through_proxy`]: the runner with the proxy in front of the deployment (`--html`).
//!
//! Checks run one at a time and each makes its own quotes, bridges and addresses (with names unique to the run),
//! so any subset runs alone and earlier runs do not interfere. Against a shared deployment, use dedicated test
//! projects: the checks create quotes, bridges awaiting a deposit and deposit addresses.

pub mod contract;
pub mod proxy;
pub mod report;
pub mod runner;
mod through_proxy;

pub use report::{CheckResult, Report};
pub use runner::config::{Fixtures, RateLimited, RunConfig};
#[cfg(feature = "spawn-sandbox")]
pub use runner::spawn::SpawnedSandbox;
pub use runner::{run, select};
pub use through_proxy::run_through_proxy;
