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

use crate::runner::check::{Check, Needs};
use crate::runner::config::RunConfig;

/// Every check the runner knows, in run order (areas: auth, schema, decode, behaviour, isolation, lifecycle,
/// webhook, limits), before filtering.
pub fn all(config: &RunConfig) -> Vec<Check> {
    let mut checks = auth::checks();
    checks.extend(schema::checks());
    checks.extend(decode::checks(config.errors));
    checks.extend(named());
    checks
}

/// The checks written one by one (behaviour, isolation, lifecycle, webhook, limits), in run order: name, what each
/// needs beyond `--base-url` and `--token`, and the function that runs it. The other areas make theirs from the
/// contract (one per operation, per security case, per decode case).
fn named() -> Vec<Check> {
    use Needs as N;
    let limited_two_projects = Needs { other: true, ..Needs::RATE_LIMITED };
    vec![
        // behaviour
        Check::of("behaviour::quote-pay-mode-adds-up", N::NOTHING, behaviour::quote_pay_mode),
        Check::of("behaviour::quote-receive-mode-adds-up", N::NOTHING, behaviour::quote_receive_mode),
        Check::of("behaviour::quote-gas-boost-adds-up", N::NOTHING, behaviour::quote_gas_boost),
        Check::of("behaviour::swap-quote-adds-up", N::NOTHING, behaviour::swap_quote),
        Check::of("behaviour::swap-quote-variants", N::NOTHING, behaviour::swap_quote_variants),
        Check::of("behaviour::commit-makes-the-record", N::NOTHING, behaviour::commit_makes_the_record),
        Check::of("behaviour::commit-once", N::NOTHING, behaviour::commit_once),
        Check::of("behaviour::cancel-pending-once", N::NOTHING, behaviour::cancel_pending_once),
        Check::of("behaviour::unknown-ids", N::NOTHING, behaviour::unknown_ids),
        Check::of("behaviour::history-paging", N::NOTHING, behaviour::history_paging),
        Check::of("behaviour::history-sort", N::NOTHING, behaviour::history_sort),
        Check::of("behaviour::history-filter", N::NOTHING, behaviour::history_filter),
        Check::of("behaviour::search-cursor", N::NOTHING, behaviour::search_cursor),
        Check::of("behaviour::event-feed-cursor", N::NOTHING, behaviour::event_feed_cursor),
        Check::of("behaviour::address-reuse-policy", N::NOTHING, behaviour::address_reuse_policy),
        Check::of("behaviour::deprecated-aliases", N::NOTHING, behaviour::deprecated_aliases),
        Check::of("behaviour::public-status-of-a-new-address", N::NOTHING, behaviour::public_status_of_a_new_address),
        Check::of(
            "behaviour::post-bridge-data-needs-the-feature",
            N::NOTHING,
            behaviour::post_bridge_data_needs_the_feature,
        ),
        Check::of("behaviour::payload-too-large", N::NOTHING, behaviour::payload_too_large),
        Check::of("behaviour::unknown-path-and-wrong-method", N::NOTHING, behaviour::unknown_path_and_wrong_method),
        // isolation
        Check::of("isolation::commit-foreign-quote", N::OTHER, isolation::commit_foreign_quote),
        Check::of("isolation::get-foreign-bridge", N::OTHER, isolation::get_foreign_bridge),
        Check::of("isolation::history", N::OTHER, isolation::history),
        Check::of("isolation::event-feed", N::OTHER, isolation::event_feed),
        Check::of("isolation::search", N::OTHER, isolation::search),
        Check::of("isolation::public-status", N::OTHER, isolation::public_status),
        Check::of("isolation::address-reuse", N::OTHER, isolation::address_reuse),
        Check::of(
            "isolation::sandbox-deposit-into-foreign-bridge",
            N::OTHER_AND_HELPERS,
            isolation::deposit_foreign_bridge,
        ),
        Check::of(
            "isolation::sandbox-deposit-into-foreign-address",
            N::OTHER_AND_HELPERS,
            isolation::deposit_foreign_address,
        ),
        // Production endpoints beyond the spec.
        Check::of("isolation::cancel-foreign-bridge", N::OTHER, isolation::cancel_foreign_bridge),
        Check::of("isolation::cursor-history", N::OTHER, isolation::cursor_history),
        Check::of("isolation::foreign-address-views", N::OTHER, isolation::foreign_address_views),
        Check::of(
            "isolation::foreign-bridge-by-deposit-hash",
            N::OTHER_AND_HELPERS,
            isolation::foreign_bridge_by_deposit_hash,
        ),
        // A clock and a reset per project.
        Check::of("isolation::sandbox-foreign-clock-advance", N::OTHER_AND_HELPERS, isolation::foreign_clock_advance),
        Check::of("isolation::sandbox-foreign-reset", N::OTHER_AND_HELPERS, isolation::foreign_reset),
        // lifecycle
        Check::of("lifecycle::clock-advances", N::HELPERS, lifecycle::clock_advances),
        Check::of("lifecycle::bridge-to-executed", N::HELPERS, lifecycle::bridge_to_executed),
        Check::of("lifecycle::bridge-events", N::HELPERS, lifecycle::bridge_events),
        Check::of("lifecycle::deposit-twice-refused", N::HELPERS, lifecycle::deposit_twice_refused),
        Check::of(
            "lifecycle::expired-quote-cancels-the-bridge",
            N::HELPERS,
            lifecycle::expired_quote_cancels_the_bridge,
        ),
        Check::of("lifecycle::deposit-address-bridged", N::HELPERS, lifecycle::deposit_address_bridged),
        Check::of("lifecycle::deposit-address-over-max", N::HELPERS, lifecycle::deposit_address_over_max),
        Check::of("lifecycle::deposit-address-under-min", N::HELPERS, lifecycle::deposit_address_under_min),
        Check::of(
            "lifecycle::deposit-address-unsupported-token",
            N::HELPERS,
            lifecycle::deposit_address_unsupported_token,
        ),
        Check::of("lifecycle::routing-deposit-address", N::HELPERS, lifecycle::routing_deposit_address),
        // webhook
        Check::of("webhook::public-key", N::NOTHING, webhook::public_key),
        Check::of("webhook::test-event-delivered", N::HELPERS, webhook::test_event_delivered),
        Check::of("webhook::bridge-events-delivered", N::HELPERS, webhook::bridge_events_delivered),
        Check::of("webhook::deposit-address-events-delivered", N::HELPERS, webhook::deposit_address_events_delivered),
        Check::of("webhook::failed-delivery-retried", N::HELPERS, webhook::failed_delivery_retried),
        Check::of("webhook::resend-delivers-again", N::HELPERS, webhook::resend_delivers_again),
        Check::of("webhook::recover-failed-deliveries", N::HELPERS, webhook::recover_failed_deliveries),
        // limits
        Check::of("limits::too-many-requests", N::RATE_LIMITED, limits::too_many_requests),
        Check::of("limits::refused-before-decoding", N::RATE_LIMITED, limits::refused_before_decoding),
        Check::of("limits::other-project-unaffected", limited_two_projects, limits::other_project_unaffected),
        Check::of("limits::served-after-retry-after", N::RATE_LIMITED, limits::served_after_retry_after),
    ]
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
        let limited = crate::runner::config::RateLimited {
            base_url: "http://127.0.0.1:2".into(),
            token: "l".into(),
            other_token: None,
        };
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
