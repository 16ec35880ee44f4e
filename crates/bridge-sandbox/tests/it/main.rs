//! The integration tests of `bridge-sandbox`, in one test binary (one link instead of one per file):
//!
//! * [`scenarios`]: quotes, commits, deposits and deposit addresses through a real sandbox over HTTP, restarts,
//!   isolation between projects, every answer validated against the schema;
//! * [`variants`]: every record state and event variant of the schema reached through the sandbox helpers;
//! * [`webhooks`]: signed deliveries to real receivers (verified in Rust and in JavaScript), retries, restarts,
//!   the feed under concurrent writes;
//! * [`pricing`]: the pricing model against its documentation (properties and examples), the catalogue and
//!   addresses;
//! * [`access`]: projects and keys an operator manages: API keys made, used at once and revoked, projects disabled,
//!   signing keys rotated, keys of earlier versions, two instances following a change, the commands, the audit list;
//! * [`beyond_spec`]: the production endpoints beyond the spec (cancel, cursor history, by hash, configs, a deposit
//!   address's own views, API keys);
//! * [`projects`]: projects isolated in time and ids: a clock per project, a project's reset, unique and
//!   seeded ids;
//! * [`fuzz_corpus`]: the fuzz targets' corpora replayed on the stable toolchain;
//! * [`operate`] (in process) and [`processes`] (the binary as a child process): probes, metrics, logs, timeouts,
//!   the connection cap under stalled connections, graceful shutdown of one of two instances;
//! * [`deployment`]: what a container runtime and a log collector rely on: the `probe` command (the image's
//!   health check), logs coloured only on a terminal;
//! * [`sdk`]: the production service's official TypeScript SDK against a fresh sandbox, and the production
//!   payload fixtures against the pinned SDK's types;
//! * [`clients`]: Python and TypeScript clients generated from the document the sandbox serves, by the
//!   mainstream generators, driven through a scenario against it.
//! * [`faults`]: fault profiles (`PUT /sandbox/faults`, `serve --faults`): each kind of request and delivery
//!   fault, only to its project, marked, the same for the same seed, followed by a second instance;
//! * [`rate_limits`] and [`egress`]: a sandbox shared by many projects: per-project rate limits (429
//!   `TooManyRequests`), and the webhook egress policy (refusals when a `webhookUrl` is given and at delivery);
//!   [`retention`]: what `serve --retain` deletes, and never deletes, in the store and over HTTP.
//! * [`receiver_check`]: the receiver check (`POST /sandbox/webhook-receiver-checks`): each check failing against a
//!   receiver built to break it, the events it sends, refusals before any connection, the egress policy.
//!
//! [`support`] starts a sandbox on a free loopback port, over SQLite or over a database of the throw-away
//! PostgreSQL server of [`pg`]; `support::both_stores!` runs a store-behaviour test on each (`name::sqlite`,
//! `name::postgres`), and it holds the steps the scenarios share (quote and commit, pay, advance the clock, read
//! the feed, wait); `support::inputs` (the requests and the configuration) is shared with the bench-fixtures
//! example. `cargo test -p bridge-sandbox --test it webhooks::` runs one module.

mod access;
mod beyond_spec;
mod bridge_versions;
mod clients;
mod counters;
mod dashboard;
mod deployment;
mod egress;
mod faults;
mod feed_store;
mod fuzz_corpus;
mod migrations;
mod operate;
mod pg;
mod pricing;
mod processes;
mod projects;
mod rate_limits;
mod receiver_check;
mod retention;
mod scenarios;
mod sdk;
mod support;
mod variants;
mod webhooks;
