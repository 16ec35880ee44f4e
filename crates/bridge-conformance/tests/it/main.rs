//! The integration tests of `bridge-conformance`, in one test binary (one link instead of one per file):
//!
//! * [`spawn_sandbox`]: `--spawn-sandbox` passes every check;
//! * [`broken_deployments`]: the runner against deliberately broken deployments, each caught by its check;
//! * [`cli`]: the binary's output, exit status, JUnit file and `--help`.
//!
//! Each test starts its own sandbox on a free loopback port. `cargo test -p bridge-conformance --test it cli::`
//! runs one module.

mod broken_deployments;
mod cli;
mod spawn_sandbox;
