//! The check registry: every check, one module per area ([`all`] lists them in run order), and the steps the
//! areas share ([`steps`]).
//!
//! Areas, in run order:
//! * [`auth`]: every operation by its `security`;
//! * [`schema`]: every operation exercised, every answer validated against its documented status;
//! * [`decode`]: the decode-error catalogue, generated from the decoder tables;
//! * [`behaviour`]: amounts and fees, commit, history paging/sort/filter, cursors, reuse policy;
//! * [`isolation`]: nothing of one project is visible to another (`--other-token`);
//! * [`lifecycle`]: bridges and deposit addresses through their states, and the events they emit
//!   (`--sandbox-helpers`);
//! * [`webhook`]: the served public key, and signed deliveries to a receiver the runner starts
//!   (`--sandbox-helpers`);
//! * [`limits`]: 429 `TooManyRequests` of a project over its rate limit (`--rate-limited`), last and against the
//!   rate-limited deployment only.

pub mod auth;
pub mod behaviour;
pub mod decode;
pub mod isolation;
pub mod lifecycle;
pub mod limits;
pub mod schema;
pub mod steps;
pub mod webhook;

use crate::check::Check;
use crate::config::RunConfig;

/// Every check the runner knows, in run order (areas: auth, schema, decode, behaviour, isolation, lifecycle,
/// webhook, limits), before filtering.
pub fn all(config: &RunConfig) -> Vec<Check> {
    let mut checks = Vec::new();
    checks.extend(auth::checks());
    checks.extend(schema::checks());
    checks.extend(decode::checks(config.errors));
    checks.extend(behaviour::checks());
    checks.extend(isolation::checks());
    checks.extend(lifecycle::checks());
    checks.extend(webhook::checks());
    checks.extend(limits::checks());
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_areas_known() {
        let mut config = RunConfig::new("http://127.0.0.1:1", "t");
        config.sandbox_helpers = true;
        config.other_token = Some("o".into());
        config.expired_token = Some("e".into());
        let limited =
            crate::config::RateLimited { base_url: "http://127.0.0.1:2".into(), token: "l".into(), other_token: None };
        config.rate_limited = Some(limited);
        config.revoked_api_key = Some("k".into());
        config.revoked_key_token = Some("t".into());
        let checks = all(&config);
        let mut names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        let total = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), total, "check names are unique");
        for name in names {
            let area = name.split("::").next().unwrap();
            assert!(
                ["auth", "schema", "decode", "behaviour", "isolation", "lifecycle", "webhook", "limits"]
                    .contains(&area),
                "{name}"
            );
        }
    }
}
