//! # bridge-sandbox
//!
//! A stateful local implementation of the whole bridge service, exact to the contract: quotes, commits, bridge
//! lifecycles, smart deposit addresses, the event feed, and sandbox helpers that drive them. Everything lives in
//! one SQLite file in the data directory, or in a PostgreSQL database that several instances share, and survives
//! restarts. Run it with
//! `cargo run -p bridge-sandbox -- serve` (see `--help`).
//!
//! The folders are its layers, lowest first; a module imports only from its own layer or the ones below
//! (`cargo xtask check` checks it against the table in `xtask/src/layering.rs`, and that no module imports one
//! that imports it back):
//!
//! 1. `domain`: what the sandbox models, without input or output: the catalogue (chains, tokens, prices,
//!    limits, fee settings), the pricing model, the bridge records and the lifecycle's state machine, ids and
//!    made-up chain data.
//! 2. `infra`: what it runs on: the store (the async `Store` trait over SQLite or PostgreSQL), the clocks, the
//!    counters ids come from, the webhook egress policy, the webhook key, rate limits, fault profiles, the
//!    metrics' names, and the `Core` that gathers them.
//! 3. [`access`]: who may call: the authenticator (each instance's view of projects, API keys and signing keys),
//!    API keys, JWT signing keys and their rotation, and what an operator changes from the command line. Beside
//!    it, `pipeline`: the event pipeline's jobs, the lifecycle pass (due bridges step on, their events and
//!    outbox rows committed with them) and the [`delivery`] of the outbox as signed webhooks.
//! 4. `operations`: the contract's operations over the domain, one module per area (quotes, bridges, projects,
//!    addresses, deposits, routing, the feed, webhooks, the bridge configuration); nothing of HTTP.
//! 5. `service`: [`Sandbox`], the adapter from the generated `BridgeApi` and `SandboxApi` traits to the
//!    operations.
//! 6. What is served beside the API: `dashboard` (`/dashboard`, a web page of one project over the same
//!    service), `docs` (`/openapi.json`, `/docs`) and [`operate`] (probes, `/metrics`, request ids and logs,
//!    timeouts and the connection cap, the workers and graceful shutdown).
//! 7. [`app`](mod@app): opening the store and serving the whole application.
//!
//! Public are the modules the binary, the tests, the benchmarks and `bridge-conformance --spawn-sandbox` use,
//! re-exported here under their short names; the rest is internal to the crate.

pub mod access;
pub mod app;
pub(crate) mod dashboard;
pub(crate) mod docs;
pub(crate) mod domain;
pub(crate) mod infra;
pub mod operate;
pub(crate) mod operations;
pub(crate) mod pipeline;
pub(crate) mod service;

pub use access::{admin, api_keys, signing};
pub use app::{
    admin, app, mint_api_key, mint_api_key_for_database, mint_token, mint_token_for_database, open, open_store, serve,
    serve_on, serve_on_with, serve_with, shutdown_signal, Opened, SandboxConfig, SEEDED_START_MS,
};
pub use dashboard::sign_in::Budget as SignInBudget;
pub use domain::{catalogue, pricing};
pub use infra::{clock, counters, egress, faults, rate_limit, store, telemetry};
pub use operate::ServeOptions;
pub use pipeline::delivery;
pub use pipeline::retention::{self, Retention};
pub use service::Sandbox;
