//! The commit whose answer is lost: resolved from the bridge, committed again only when it did not happen, and
//! never twice.

use bridge_client::{BridgeRecordExt as _, Error, RetryPolicy};
use bridge_contract::operations::CommitQuoteError;
use bridge_contract::{BridgeRecord, StatePendingState};
use serde_json::json;

use crate::live::harness::{client_via, quick_retries, quote, Fault, Proxy, Sandbox};

const BRIDGE: &str = "/bridge/history/bridge/";

/// The bridge exists once, PENDING, and the quote cannot be committed again.
async fn committed_once(sandbox: &Sandbox, quote_id: &str) {
    let direct = sandbox.client();
    let record: BridgeRecord = direct.get_bridge(quote_id).await.expect("the bridge exists");
    assert_eq!(record.state_tag(), StatePendingState::Pending.as_str());
    let again = direct.commit_quote(quote_id).await.unwrap_err();
    assert!(matches!(again, Error::Api(CommitQuoteError::InvalidRequest(_))), "{again:?}");
}

#[tokio::test]
async fn a_commit_whose_answer_is_lost_returns_what_a_first_commit_would() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());

    // What a commit answers when nothing goes wrong.
    let plain = quote(&sandbox).await;
    let expected = sandbox.client().commit_quote(&plain.quote_id).await.unwrap();
    assert_eq!(expected.quote_id, plain.quote_id);

    for fault in
        [Fault::ForwardThenDrop, Fault::ForwardThenReset, Fault::ForwardThenStatus(502), Fault::ForwardThenStatus(503)]
    {
        let quote = quote(&sandbox).await;
        let commit = format!("/bridge/quote/commit/{}", quote.quote_id);
        proxy.inject("POST", &commit, 1, fault.clone());
        let committed = client.commit_quote(&quote.quote_id).await.expect("resolved from the bridge");
        assert_eq!(serde_json::to_value(&committed).unwrap(), json!({ "quoteId": quote.quote_id }));
        assert_eq!(
            serde_json::to_value(&committed).unwrap().as_object().unwrap().keys().collect::<Vec<_>>(),
            serde_json::to_value(&expected).unwrap().as_object().unwrap().keys().collect::<Vec<_>>()
        );
        // One commit (never repeated: the bridge was there) and one read of the bridge.
        assert_eq!(proxy.seen_at("POST", &commit).len(), 1);
        assert_eq!(proxy.seen_at("GET", &format!("{BRIDGE}{}", quote.quote_id)).len(), 1);
        committed_once(&sandbox, &quote.quote_id).await;
    }

    // With retries off the lost answer is the caller's problem.
    let quote = quote(&sandbox).await;
    proxy.inject("POST", &format!("/bridge/quote/commit/{}", quote.quote_id), 1, Fault::ForwardThenReset);
    let once = client_via(&proxy, &sandbox, RetryPolicy::none());
    let err = once.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(matches!(err, Error::Communication(_)), "{err:?}");
    committed_once(&sandbox, &quote.quote_id).await;
}

#[tokio::test]
async fn a_commit_that_times_out_is_committed_once() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let timeout = std::time::Duration::from_millis(300);
    let late = || Fault::Delay(std::time::Duration::from_millis(1500));
    // The commit reaches the service 1.5 s late, long after the client gave up on it: the client finds no
    // bridge yet and commits again; whichever commit lands first wins, and the caller gets one answer.
    let quote = quote(&sandbox).await;
    let commit = format!("/bridge/quote/commit/{}", quote.quote_id);
    proxy.inject("POST", &commit, 1, late());
    let client = crate::live::harness::client_with_timeout(&proxy, &sandbox, quick_retries(), timeout);
    assert_eq!(client.commit_quote(&quote.quote_id).await.unwrap().quote_id, quote.quote_id);
    assert_eq!(proxy.seen_at("POST", &commit).len(), 2);
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await; // the late commit lands (and is refused)
    committed_once(&sandbox, &quote.quote_id).await;

    // Without retries: the timeout.
    let quote = crate::live::harness::quote(&sandbox).await;
    proxy.inject("POST", &format!("/bridge/quote/commit/{}", quote.quote_id), 1, late());
    let once = crate::live::harness::client_with_timeout(&proxy, &sandbox, RetryPolicy::none(), timeout);
    let err = once.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(matches!(&err, Error::Communication(e) if e.is_timeout()), "{err:?}");
}

#[tokio::test]
async fn a_commit_lost_before_it_reached_the_service_is_made_again() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());

    for fault in [Fault::Reset, Fault::Drop] {
        let quote = quote(&sandbox).await;
        let commit = format!("/bridge/quote/commit/{}", quote.quote_id);
        proxy.inject("POST", &commit, 1, fault);
        assert_eq!(client.commit_quote(&quote.quote_id).await.unwrap().quote_id, quote.quote_id);
        // The read found no bridge, so the commit was made again.
        let commits: Vec<_> = proxy.seen_at("POST", &commit).into_iter().map(|s| s.fault).collect();
        assert_eq!(commits.len(), 2, "{commits:?}");
        assert_eq!(commits[1], None);
        assert_eq!(proxy.seen_at("GET", &format!("{BRIDGE}{}", quote.quote_id)).len(), 1);
        committed_once(&sandbox, &quote.quote_id).await;
    }
}

#[tokio::test]
async fn already_committed_after_a_lost_answer_is_success_and_otherwise_an_error() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());

    // The lost commit was still in flight when the bridge was read (here: the read answers 422, production's
    // answer for an unknown bridge id), so the client commits again and hears 422 "already committed": it reads
    // the bridge again and succeeds.
    let quote = quote(&sandbox).await;
    let commit = format!("/bridge/quote/commit/{}", quote.quote_id);
    let bridge = format!("{BRIDGE}{}", quote.quote_id);
    proxy.inject("POST", &commit, 1, Fault::ForwardThenDrop);
    let not_yet = json!({ "_tag": "InvalidRequest", "message": format!("no bridge {}", quote.quote_id) });
    proxy.inject("GET", &bridge, 1, Fault::json(422, not_yet));
    assert_eq!(client.commit_quote(&quote.quote_id).await.unwrap().quote_id, quote.quote_id);
    assert_eq!(proxy.seen_at("POST", &commit).len(), 2);
    assert_eq!(proxy.seen_at("GET", &bridge).len(), 2);
    committed_once(&sandbox, &quote.quote_id).await;

    // Without a lost answer, committing twice stays the caller's error, and nothing is read.
    let err = client.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(matches!(err, Error::Api(CommitQuoteError::InvalidRequest(_))), "{err:?}");
    assert_eq!(proxy.seen_at("POST", &commit).len(), 3);
    assert_eq!(proxy.seen_at("GET", &bridge).len(), 2);
}

#[tokio::test]
async fn a_commit_whose_bridge_cannot_be_read_keeps_its_error() {
    let sandbox = Sandbox::start().await;
    let proxy = Proxy::start(sandbox.addr).await;
    let client = client_via(&proxy, &sandbox, quick_retries());
    let quote = quote(&sandbox).await;
    let commit = format!("/bridge/quote/commit/{}", quote.quote_id);
    proxy.inject("POST", &commit, 1, Fault::ForwardThenReset);
    // Every read of the bridge fails, through all its retries: the outcome is unknown.
    proxy.inject("GET", BRIDGE, 4, Fault::Reset);
    let err = client.commit_quote(&quote.quote_id).await.unwrap_err();
    assert!(matches!(err, Error::Communication(_)), "{err:?}");
    assert_eq!(err.operation(), "commitQuote");
    assert_eq!(proxy.seen_at("POST", &commit).len(), 1, "not committed blindly");
    assert_eq!(proxy.seen_at("GET", BRIDGE).len(), 4);
    // It had reached the service: reading the bridge later tells.
    committed_once(&sandbox, &quote.quote_id).await;
}
