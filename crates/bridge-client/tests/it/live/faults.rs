//! The client against a sandbox that faults the project's own requests on purpose (its fault profile,
//! `PUT /sandbox/faults`): a share answered 429 `TooManyRequests` (with `retryAfter` and `Retry-After`) and a share
//! 503 `ServiceUnavailable`, before anything of the request is read. With `serve --seed` the same requests are
//! faulted in every run, so the scenario below meets the same faults each time. With the default retry policy the
//! scenario (quote, commit, history, three rounds) completes, each fault ridden out by a logged retry; with
//! retries off it fails at the first fault.

use bridge_client::{Client, Credentials, Error};
use bridge_contract::{HistorySortBy, ListBridgeHistoryQuery, QuoteResponse, SandboxFaultProfile, SortDirection};
use serde_json::json;

use crate::live::harness::{field, quote_request, LogCapture, Sandbox};

/// `serve --seed` of these tests: which of the project's requests are faulted follows from it.
const SEED: u64 = 35;

/// A fifth of the requests answered 429 (`retryAfter` 0.2 s, `Retry-After: 1`), a fifth 503.
fn profile() -> SandboxFaultProfile {
    serde_json::from_value(json!({"requests": {
        "tooManyRequests": {"fraction": 0.2, "ms": 200},
        "unavailable": {"fraction": 0.2}
    }}))
    .unwrap()
}

/// What failed, as the caller sees it: the operation and its error.
fn failed<E: std::fmt::Debug>(operation: &str) -> impl FnOnce(Error<E>) -> String + '_ {
    move |e| format!("{operation}: {e:?}")
}

/// Three rounds of quote, commit and the first page of the history (which must show the bridge; `before`: the
/// bridges the project already has).
async fn scenario(client: &Client, before: usize) -> Result<(), String> {
    let history = ListBridgeHistoryQuery {
        page: 1u32.into(),
        limit: 10u32.into(),
        sort_by: HistorySortBy::CreatedAt,
        sort_direction: SortDirection::Desc,
        state: None,
    };
    for round in 0..3 {
        let quote = match client.quote_bridge(&quote_request("100")).await.map_err(failed("quote"))? {
            QuoteResponse::Bridge(quote) => quote,
            other => return Err(format!("a {} quote", other.tag())),
        };
        client.commit_quote(&quote.quote_id).await.map_err(failed("commit"))?;
        let page = client.list_bridge_history(&history).await.map_err(failed("history"))?;
        let listed = serde_json::to_value(&page).unwrap();
        if listed["items"].as_array().map_or(0, Vec::len) != before + round + 1 {
            return Err(format!("round {round}: the history lists {listed}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_scenario_rides_out_a_projects_429_and_503_faults() {
    let sandbox = Sandbox::start_seeded(SEED).await;
    sandbox.client().sandbox_set_faults(&profile()).await.expect("the sandbox helpers are never faulted");
    let logs = LogCapture::start();
    let client = Client::new(&sandbox.base_url, Credentials::bearer(sandbox.token())).unwrap();
    let started = std::time::Instant::now();
    scenario(&client, 0).await.expect("the default retry policy rides out the faults");
    let took = started.elapsed();

    let retries = logs.events("attempt failed; retrying");
    let reasons: Vec<&str> = retries.iter().filter_map(|e| field(e, "reason")).collect();
    let too_many = reasons.iter().filter(|r| r.contains("429")).count();
    let unavailable = reasons.iter().filter(|r| r.contains("503")).count();
    println!("{too_many} 429 and {unavailable} 503 ridden out in {took:?}: {reasons:?}");
    assert!(too_many >= 1 && unavailable >= 1, "the seed faults both kinds in this scenario: {reasons:?}");
    assert_eq!(too_many + unavailable, retries.len(), "every retry was a fault's: {reasons:?}");

    // The same scenario without retries stops at its first fault, a 429 or a 503 the caller gets as is.
    let once = sandbox.client();
    let error = scenario(&once, 3).await.expect_err("without retries a fault is the caller's error");
    assert!(error.contains("TooManyRequests") || error.contains("ServiceUnavailable"), "{error}");
}
