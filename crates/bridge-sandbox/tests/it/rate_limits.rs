//! Per-project rate limits (`serve --rate-limit N --rate-limit-burst B`) over real HTTP on 127.0.0.1: a project
//! over its budget is answered 429 `TooManyRequests` in production's shape with a `Retry-After` header, while
//! another project is served as if the first were not there; on one PostgreSQL database each instance keeps its
//! own budget (docs/operations.md says so). The limits are slow (one request every 5 s) so that a loaded machine cannot
//! refill a budget in the middle of a test.

use std::num::NonZeroU32;
use std::time::Duration;

use bridge_client::{Client, Error, RetryPolicy};
use bridge_contract::operations::GetDepositAddressRateLimitStatusError;
use bridge_contract::TooManyRequests;
use bridge_sandbox::rate_limit::RateLimit;
use bridge_sandbox::SandboxConfig;

use crate::support::{both_stores, Running, TestStore};

/// One request every 5 s per project, `burst` at once.
fn limited(store: &TestStore, burst: u32) -> SandboxConfig {
    SandboxConfig { rate_limit: RateLimit::new(0.2, NonZeroU32::new(burst)), ..store.config() }
}

fn client(sandbox: &Running, project: &str) -> Client {
    sandbox.client_of(project).with_retry(RetryPolicy::none())
}

/// Requests of `client` until one is refused (at most 50): how many were served first, and the refusal.
async fn until_refused(client: &Client) -> (usize, TooManyRequests) {
    for served in 0..50 {
        match client.get_deposit_address_rate_limit_status().await {
            Ok(_) => {}
            Err(Error::Api(GetDepositAddressRateLimitStatusError::TooManyRequests(refusal))) => {
                return (served, refusal)
            }
            Err(e) => panic!("after {served} requests: {e}"),
        }
    }
    panic!("50 requests were served: no rate limit")
}

/// A raw request of `project`: status, `Retry-After`, body.
async fn raw(sandbox: &Running, project: &str, path: &str) -> (u16, Option<String>, serde_json::Value) {
    let url = format!("{}{path}", sandbox.base_url);
    let response = reqwest::Client::new().get(url).bearer_auth(sandbox.token_of(project)).send().await.unwrap();
    let status = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    (status, retry_after, response.json().await.unwrap_or_default())
}

async fn a_project_over_its_limit_is_answered_429_and_no_other_is(store: TestStore) {
    let sandbox = Running::with(limited(&store, 3)).await;
    let (a, b) = (client(&sandbox, "project-a"), client(&sandbox, "project-b"));

    let (served, refusal) = until_refused(&a).await;
    assert!((3..=4).contains(&served), "the burst of 3 is served first ({served})");
    let wait = refusal.retry_after.as_f64();
    assert!(wait > 0.0 && wait <= 5.0, "retryAfter is the seconds to the next request: {wait}");
    assert!(refusal.message.contains("project-a"), "{}", refusal.message);

    // Production's shape, and the Retry-After header in whole seconds.
    let (status, retry_after, body) = raw(&sandbox, "project-a", "/bridge/history/user?page=1&limit=10").await;
    assert_eq!((status, body["_tag"].as_str()), (429, Some("TooManyRequests")), "{body}");
    assert!(body["retryAfter"].is_number() && body["message"].is_string(), "{body}");
    let header: u64 = retry_after.expect("a Retry-After header").parse().expect("whole seconds");
    assert!((1..=5).contains(&header) && header as f64 >= body["retryAfter"].as_f64().unwrap(), "{header} {body}");

    // Another project is served in full, with its own budget of 3, while project-a is at its limit...
    let (served_b, _) = until_refused(&b).await;
    assert!((3..=4).contains(&served_b), "project-b has a budget of its own ({served_b})");
    // ... and its requests took nothing from project-a's, nor did project-a's refusals from anyone's.
    assert!(matches!(a.get_deposit_address_rate_limit_status().await, Err(Error::Api(_))));
    // Operations without authentication are not limited.
    for _ in 0..5 {
        a.get_webhook_public_key().await.expect("the public key is not limited");
    }
    sandbox.stop().await;
}

/// A project flooding the sandbox from many connections at once does not take another's requests: every request
/// of the other project, sent meanwhile, is served.
async fn a_flood_of_one_project_does_not_limit_another(store: TestStore) {
    let sandbox = Running::with(limited(&store, 3)).await;
    let flooder = client(&sandbox, "flooder");
    let flood: Vec<_> = (0..8)
        .map(|_| {
            let flooder = flooder.clone();
            tokio::spawn(async move {
                let mut refused = 0;
                for _ in 0..25 {
                    if flooder.get_deposit_address_rate_limit_status().await.is_err() {
                        refused += 1;
                    }
                }
                refused
            })
        })
        .collect();
    let quiet = client(&sandbox, "quiet");
    for _ in 0..3 {
        quiet.get_deposit_address_rate_limit_status().await.expect("the quiet project is served");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut refused = 0;
    for task in flood {
        refused += task.await.unwrap();
    }
    assert!(refused >= 190, "the flooder was limited: {refused} of 200 refused");
    sandbox.stop().await;
}

both_stores!(a_project_over_its_limit_is_answered_429_and_no_other_is, a_flood_of_one_project_does_not_limit_another);

/// Two instances on one PostgreSQL database: each keeps its own budgets (the limit is per instance, as docs/operations.md
/// says), so a project at its limit on one instance is still served by the other, and another project by both.
#[tokio::test]
async fn two_instances_on_one_database_limit_each_project_per_instance() {
    let Some(store) = TestStore::postgres() else { return };
    let first = Running::with(limited(&store, 2)).await;
    let second = Running::with(limited(&store, 2)).await;
    let (served, _) = until_refused(&client(&first, "project-a")).await;
    assert!((2..=3).contains(&served), "{served}");
    client(&second, "project-a").get_deposit_address_rate_limit_status().await.expect("the other instance serves it");
    for sandbox in [&first, &second] {
        client(sandbox, "project-b").get_deposit_address_rate_limit_status().await.expect("another project is served");
    }
    first.stop().await;
    second.stop().await;
}

/// Without `--rate-limit` (the default) nothing is limited.
#[tokio::test]
async fn without_a_limit_nothing_is_refused() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let a = client(&sandbox, "project-a");
    for _ in 0..60 {
        a.get_deposit_address_rate_limit_status().await.expect("no limit by default");
    }
    sandbox.stop().await;
}
