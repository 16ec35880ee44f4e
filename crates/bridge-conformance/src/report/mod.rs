//! What both tools report, in the formats both write: the runner's results ([`results`]: a line per check, the
//! summary, JUnit XML), what the proxy saw ([`coverage`]: per operation, as JSON and JUnit XML) and the one HTML
//! page of either or both ([`html`]); and the sandbox's receiver check as `bridge-conformance receiver` writes it
//! ([`receiver`]: text, JUnit XML, an HTML page in the same style). Below the runner and the proxy, above the
//! contract.

pub mod coverage;
pub mod html;
pub mod receiver;
pub mod results;

pub use results::{CheckResult, Report};
