//! The integration tests of `bridge-conformance`, in one test binary (one link instead of one per file):
//!
//! * [`spawn_sandbox`]: `--spawn-sandbox` passes every check;
//! * [`broken_deployments`]: the runner against deliberately broken deployments, each caught by its check;
//! * [`cli`]: the binary's output, exit status, JUnit file and `--help`;
//! * [`proxy`]: the validating proxy in front of the sandbox and of a deliberately wrong server, its report in
//!   headless Chromium, record and replay;
//! * [`proxy_upstream`]: the proxy talks to its upstream only (`OPTIONS *`, `CONNECT`, absolute-form targets) and
//!   answers 504 when it is silent;
//! * [`receiver_check`]: `bridge-conformance receiver`: the exit status (musts only), the report's formats;
//! * [`recording_redaction`]: no credential the sandbox issues is written whole in a recording or a report, in
//!   any body type, header or target.
//!
//! Each test starts its own sandbox on a free loopback port. `cargo test -p bridge-conformance --test it cli::`
//! runs one module.

mod broken_deployments;
mod cli;
mod proxy;
mod proxy_upstream;
mod receiver_check;
mod recording_redaction;
mod spawn_sandbox;
