//! Retries: safe requests ride out resets, drops, 503s and 429s; state-changing ones are never repeated when
//! their outcome is unknown; the bounds hold; each retry is logged; every request carries the User-Agent; errors
//! name the operation.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use bridge_client::{Client, Credentials, Error, RetryPolicy, DEFAULT_USER_AGENT};
use bridge_contract::operations::{
    CommitQuoteError, GetBridgeError, GetDepositAddressRateLimitStatusError, SandboxAdvanceClockError,
};
use bridge_contract::SandboxAdvanceClockRequest;
use bridge_sandbox::rate_limit::RateLimit;
use serde_json::json;

use crate::live::harness::{client_via, field, quick_retries, quote, LogCapture, Proxy, Sandbox};

const BRIDGE: &str = "/bridge/history/bridge/";

fn unavailable() -> serde_json::Value {
    json!({ "_tag": "ServiceUnavailable", "message": "the store is busy" })
}

#[tokio::test]
async fn a_safe_read_rides_out_a_reset_a_drop_and_a_gateway_503() {
    let sandbox = Sandbox::start().await;
    let quote = quote(&sandbox).await;
    sandbox.client().commit_quote(&quote.quote_id).await.unwrap();
    let proxy = Proxy::start(sandbox.addr).await;
    let logs = LogCapture::start();

    proxy.inject("GET", BRIDGE, 1, crate::live::harness::Fault::Reset);
    proxy.inject("GET", BRIDGE, 1, crate::live::harness::Fault::Drop);
    proxy.inject(
        "GET",
        BRIDGE,
        1,
        crate::live::harness::Fault::Answer { status: 503, headers: vec![], body: String::new() },
    );
    let client = client_via(&proxy, &sandbox, quick_retries());
    let record = client.get_bridge(&quote.quote_id).await.expect("the fourth attempt gets through");
    assert_eq!(serde_json::to_value(&record).unwrap()["_id"], quote.quote_id.as_str());

    let seen = proxy.seen_at("GET", BRIDGE);
    let faults: Vec<_> = seen.iter().map(|s| s.fault.clone()).collect();
    assert_eq!(faults, [Some("reset".into()), Some("drop".into()), Some("answer 503".into()), None]);
    // 50, 100, 200 ms apart (no jitter): the backoff doubles.
    let gaps: Vec<Duration> = seen.windows(2).map(|w| w[1].at - w[0].at).collect();
    for (gap, expected) in gaps.iter().zip([50, 100, 200]) {
        assert!(*gap >= Duration::from_millis(expected), "{gaps:?}");
    }

    // Each retry is logged: operation, attempt, reason, delay.
    let retries = logs.events("attempt failed; retrying");
    assert_eq!(retries.len(), 3, "{retries:?}");
    let attempts: Vec<_> = retries.iter().map(|e| field(e, "attempt").unwrap().to_owned()).collect();
    assert_eq!(attempts, ["1", "2", "3"]);
    assert!(retries.iter().all(|e| field(e, "operation") == Some("get_bridge")));
    let delays: Vec<_> = retries.iter().map(|e| field(e, "delay_ms").unwrap().to_owned()).collect();
    assert_eq!(delays, ["50", "100", "200"]);
    assert!(field(&retries[2], "reason").unwrap().contains("503"), "{retries:?}");

    // With retries off, the same first fault is the caller's error.
    proxy.inject("GET", BRIDGE, 1, crate::live::harness::Fault::Reset);
    let once = client_via(&proxy, &sandbox, RetryPolicy::none());
    match once.get_bridge(&quote.quote_id).await {
        Err(Error::Communication(_)) => {}
        other => panic!("expected the reset to surface, got {other:?}"),
    }
}

#[tokio::test]
async fn a_read_slower_than_the_timeout_is_retried() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let timeout = Duration::from_millis(300);
    proxy.inject("GET", "/webhook/public-key", 1, crate::live::harness::Fault::Delay(Duration::from_secs(2)));
    let client = crate::live::harness::client_with_timeout(&proxy, &sandbox, quick_retries(), timeout);
    client.get_webhook_public_key().await.expect("the second attempt is not delayed");
    assert_eq!(proxy.seen_at("GET", "/webhook/public-key").len(), 2);

    proxy.inject("GET", "/webhook/public-key", 1, crate::live::harness::Fault::Delay(Duration::from_secs(2)));
    let once = crate::live::harness::client_with_timeout(&proxy, &sandbox, RetryPolicy::none(), timeout);
    match once.get_webhook_public_key().await {
        Err(Error::Communication(e)) => assert!(e.is_timeout(), "{e}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());

    // The contract's body (`retryAfter` in seconds) on a quote.
    let too_many = json!({ "_tag": "TooManyRequests", "message": "slow down", "retryAfter": 0.6 });
    proxy.inject("POST", "/bridge/quote/user", 1, crate::live::harness::Fault::json(429, too_many));
    client.quote_bridge(&crate::live::harness::quote_request("10")).await.unwrap();
    let seen = proxy.seen_at("POST", "/bridge/quote/user");
    assert_eq!(seen.len(), 2);
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(600), "waited {:?}", seen[1].at - seen[0].at);

    // A `Retry-After` header (seconds) without a body, on a read.
    let headers = vec![("retry-after", "1".to_owned())];
    proxy.inject(
        "GET",
        "/webhook/public-key",
        1,
        crate::live::harness::Fault::Answer { status: 429, headers, body: String::new() },
    );
    client.get_webhook_public_key().await.unwrap();
    let seen = proxy.seen_at("GET", "/webhook/public-key");
    assert_eq!(seen.len(), 2);
    assert!(seen[1].at - seen[0].at >= Duration::from_secs(1), "waited {:?}", seen[1].at - seen[0].at);

    // Without retries the 429 is the answer.
    proxy.inject(
        "GET",
        "/webhook/public-key",
        1,
        crate::live::harness::Fault::Answer { status: 429, headers: vec![], body: String::new() },
    );
    let err = client.clone().with_retry(RetryPolicy::none()).get_webhook_public_key().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(429));
}

/// Against the sandbox's own per-project rate limit (`serve --rate-limit 0.2 --rate-limit-burst 1`: one request
/// every 5 s), no proxy: with retries off the second request is the 429 `TooManyRequests` with its `retryAfter`;
/// with the default policy the client waits that long, far longer than its own backoff would, and is served.
#[tokio::test]
async fn the_sandbox_rate_limit_is_waited_out() {
    let sandbox = Sandbox::start_rate_limited(RateLimit::new(0.2, NonZeroU32::new(1)).unwrap()).await;
    let once = sandbox.client();
    once.get_deposit_address_rate_limit_status().await.expect("the burst of one");
    let refusal = match once.get_deposit_address_rate_limit_status().await {
        Err(Error::Api(GetDepositAddressRateLimitStatusError::TooManyRequests(t))) => t,
        other => panic!("expected the sandbox's 429, got {other:?}"),
    };
    let wait = refusal.retry_after.as_f64();
    assert!(wait > 1.0 && wait <= 5.0, "retryAfter {wait}");

    let logs = LogCapture::start();
    // The default policy (4 attempts, 0.5 s doubling, 30 s in all).
    let retrying = Client::new(&sandbox.base_url, Credentials::bearer(sandbox.token())).unwrap();
    let started = Instant::now();
    retrying.get_deposit_address_rate_limit_status().await.expect("served once the wait is over");
    let retries = logs.events("attempt failed; retrying");
    assert!(!retries.is_empty(), "the first attempt was refused");
    assert!(field(&retries[0], "reason").unwrap().contains("429"), "{retries:?}");
    let delay: u64 = field(&retries[0], "delay_ms").unwrap().parse().unwrap();
    assert!(delay >= 2000, "the wait of the 429 ({delay} ms), not the 0.5-1 s backoff");
    assert!(started.elapsed() >= Duration::from_millis(delay));
}

#[tokio::test]
async fn a_wait_longer_than_the_bounds_is_left_to_the_caller_with_the_typed_error() {
    let sandbox = Sandbox::start().await;
    let quote = quote(&sandbox).await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());
    let commit = format!("/bridge/quote/commit/{}", quote.quote_id);

    let too_many = json!({ "_tag": "TooManyRequests", "message": "slow down", "retryAfter": 60 });
    proxy.inject("POST", &commit, 1, crate::live::harness::Fault::json(429, too_many));
    match client.commit_quote(&quote.quote_id).await {
        Err(Error::Api(CommitQuoteError::TooManyRequests(t))) => {
            assert_eq!(t.retry_after.as_f64(), 60.0)
        }
        other => panic!("expected the 429 with its retryAfter, got {other:?}"),
    }
    assert_eq!(proxy.seen_at("POST", &commit).len(), 1, "60 s is past the 30 s bound: not waited for");

    // A short one is waited for, even on a commit: a 429 means nothing was done.
    let too_many = json!({ "_tag": "TooManyRequests", "message": "slow down", "retryAfter": 0.2 });
    proxy.inject("POST", &commit, 1, crate::live::harness::Fault::json(429, too_many));
    assert_eq!(client.commit_quote(&quote.quote_id).await.unwrap().quote_id, quote.quote_id);
    assert_eq!(proxy.seen_at("POST", &commit).len(), 3);
}

#[tokio::test]
async fn retries_stop_at_the_attempt_and_time_bounds() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let answer = || crate::live::harness::Fault::json(503, unavailable());

    proxy.inject("GET", BRIDGE, 100, answer());
    let client = client_via(&proxy, &sandbox, quick_retries().with_max_attempts(3));
    match client.get_bridge("nope").await {
        Err(Error::Api(GetBridgeError::ServiceUnavailable(e))) => {
            assert_eq!(e.message, "the store is busy")
        }
        other => panic!("expected the last 503, got {other:?}"),
    }
    assert_eq!(proxy.seen_at("GET", BRIDGE).len(), 3);

    // Delays of 200 and 400 ms fit in 1 s, the third (800 ms, at 1.4 s) does not: 3 attempts of the default 4.
    let policy =
        quick_retries().with_initial_delay(Duration::from_millis(200)).with_max_elapsed(Duration::from_secs(1));
    let bounded = client_via(&proxy, &sandbox, policy);
    bounded.get_bridge("nope").await.unwrap_err();
    assert_eq!(proxy.seen_at("GET", BRIDGE).len(), 6);
}

#[tokio::test]
async fn a_state_changing_request_is_not_repeated_when_its_outcome_is_unknown() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());
    let now =
        || async { sandbox.client().sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap().now };
    let before = now().await;

    // The clock advance reaches the sandbox, the answer is lost: repeating it would advance the clock twice.
    proxy.inject("POST", "/sandbox/clock/advance", 1, crate::live::harness::Fault::ForwardThenReset);
    let err = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 60_000 }).await.unwrap_err();
    assert!(matches!(err, Error::Communication(_)), "{err:?}");
    assert_eq!(proxy.seen_at("POST", "/sandbox/clock/advance").len(), 1);
    assert_eq!(now().await.millis() - before.millis(), 60_000, "advanced exactly once");

    // A gateway's 503 (no contract body): the outcome is unknown too.
    proxy.inject("POST", "/sandbox/clock/advance", 1, crate::live::harness::Fault::ForwardThenStatus(503));
    let err = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1_000 }).await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(proxy.seen_at("POST", "/sandbox/clock/advance").len(), 2);

    // The contract's 503 says nothing was changed: retried.
    proxy.inject("POST", "/sandbox/clock/advance", 1, crate::live::harness::Fault::json(503, unavailable()));
    client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1_000 }).await.unwrap();
    assert_eq!(proxy.seen_at("POST", "/sandbox/clock/advance").len(), 4);
    assert_eq!(now().await.millis() - before.millis(), 62_000);
}

#[tokio::test]
async fn every_request_names_the_client_and_errors_name_the_operation() {
    let sandbox = Sandbox::start().await;
    let quote = quote(&sandbox).await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());

    proxy.inject("GET", BRIDGE, 1, crate::live::harness::Fault::Reset);
    client.commit_quote(&quote.quote_id).await.unwrap();
    client.get_bridge(&quote.quote_id).await.unwrap();
    client.events_since(0).next_page().await;
    client.get_webhook_public_key().await.unwrap();
    let named = client.clone().with_user_agent("payments/2.3").unwrap();
    named.get_webhook_public_key().await.unwrap();

    let agents: Vec<_> = proxy.seen().into_iter().map(|s| s.user_agent.unwrap_or_default()).collect();
    assert_eq!(agents.len(), 6, "{agents:?}");
    assert!(DEFAULT_USER_AGENT.starts_with("bridge-client/"));
    assert_eq!(DEFAULT_USER_AGENT, concat!("bridge-client/", env!("CARGO_PKG_VERSION")));
    assert!(agents[..5].iter().all(|a| a == DEFAULT_USER_AGENT), "{agents:?}");
    assert_eq!(agents[5], format!("payments/2.3 {DEFAULT_USER_AGENT}"));

    // The operation, the status, the server's typed error.
    let err = client.get_bridge("no-such-bridge").await.unwrap_err();
    assert_eq!(err.operation(), "getBridge");
    assert!(matches!(err.api(), Some(GetBridgeError::InvalidRequest(_))), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("getBridge (GET /bridge/history/bridge/{bridgeId}) failed: HTTP 422 InvalidRequest: "),
        "{text}"
    );

    let err = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: u64::MAX }).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Api(SandboxAdvanceClockError::BadRequest(_))
                | Error::Api(SandboxAdvanceClockError::InvalidRequest(_))
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("sandboxAdvanceClock (POST /sandbox/clock/advance) failed: HTTP 4"), "{err}");

    // A communication failure says why, down to the cause.
    proxy.inject("POST", "/sandbox/clock/advance", 1, crate::live::harness::Fault::Reset);
    let err = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 0 }).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("sandboxAdvanceClock (POST /sandbox/clock/advance) failed: communication error: "),
        "{text}"
    );
    assert!(text.matches(": ").count() >= 3, "the causes are listed: {text}");
}

trait NextPage {
    async fn next_page(self);
}

impl<S: futures_util::Stream + Unpin> NextPage for S {
    async fn next_page(mut self) {
        use futures_util::StreamExt as _;
        let _ = self.next().await;
    }
}
