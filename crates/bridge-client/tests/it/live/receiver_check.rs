//! The receiver check (`POST /sandbox/webhook-receiver-checks`) against our own example receiver
//! (`examples/webhook_receiver.rs`, built on this crate's `Webhook` extractor), served on 127.0.0.1 as its `main`
//! serves it: it passes every `must` check. It fails one `should` check, `extraMember`: the extractor decodes a
//! known event kind into the contract's closed types, so an event carrying a member this build does not know is
//! refused (400) instead of acknowledged, the tolerance production's additions need. That is known and documented
//! (docs/integrating.md, "Check your webhook receiver"; the operation's description in the schema): reading known
//! kinds leniently needs a lenient decoder generated beside the strict one. This test pins it, so that the day the
//! extractor tolerates new members it says so.

use std::collections::BTreeSet;
use std::time::Duration;

use bridge_client::{Client, Credentials, RetryPolicy};
use bridge_contract::{ReceiverCheckName, ReceiverCheckOutcome, ReceiverCheckSeverity, SandboxReceiverCheckRequest};

use crate::live::harness::Sandbox;

#[path = "../../../examples/webhook_receiver.rs"]
#[allow(dead_code)] // its `main`
mod example;

#[tokio::test]
async fn the_example_receiver_passes_every_must_of_the_receiver_check() {
    let sandbox = Sandbox::start().await;
    let app = example::app(example::receiver(&sandbox.base_url).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{}", listener.local_addr().unwrap(), example::PATH);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let http = Client::reqwest_builder().unwrap().timeout(Duration::from_secs(60)).build().unwrap();
    let client = Client::with_reqwest(&sandbox.base_url, http, Credentials::bearer(sandbox.token()))
        .with_retry(RetryPolicy::none());
    let report =
        client.sandbox_check_webhook_receiver(&SandboxReceiverCheckRequest { url, timeout_ms: None }).await.unwrap();
    println!(
        "example receiver: {} passed, {} failed ({} must) in {} ms",
        report.passed, report.failed, report.must_failed, report.duration_ms
    );
    let failed: Vec<_> = report.checks.iter().filter(|c| c.outcome == ReceiverCheckOutcome::Failed).collect();
    let musts: Vec<_> = failed.iter().filter(|c| c.severity == ReceiverCheckSeverity::Must).collect();
    assert!(musts.is_empty(), "{musts:#?}");
    assert_eq!(report.must_failed, 0);
    let names: BTreeSet<ReceiverCheckName> = failed.iter().map(|c| c.name).collect();
    assert_eq!(names, BTreeSet::from([ReceiverCheckName::ExtraMember]), "{failed:#?}");
    let extra = failed[0];
    assert_eq!(extra.exchanges[0].received.status, Some(400), "{extra:#?}");
}
