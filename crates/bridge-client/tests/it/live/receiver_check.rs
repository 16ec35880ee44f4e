//! The receiver check (`POST /sandbox/webhook-receiver-checks`) against our own example receiver
//! (`examples/webhook_receiver.rs`, built on this crate's `Webhook` extractor), served on 127.0.0.1 as its `main`
//! serves it: it passes every check, `extraMember` included (the extractor's `Event` ignores members this build
//! does not know, as production may add them; it refused them with a 400 until the lead's fix after issue 35).

use std::time::Duration;

use bridge_client::{Client, Credentials, RetryPolicy};
use bridge_contract::{ReceiverCheckName, ReceiverCheckOutcome, ReceiverCheckSeverity, SandboxReceiverCheckRequest};

use crate::live::harness::Sandbox;

#[path = "../../../examples/webhook_receiver.rs"]
#[allow(dead_code)] // its `main`
mod example;

#[tokio::test]
async fn the_example_receiver_passes_every_check_of_the_receiver_check() {
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
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!((report.must_failed, report.failed), (0, 0));
    assert!(report.checks.iter().any(|c| c.name == ReceiverCheckName::ExtraMember), "the check ran");
    assert!(report
        .checks
        .iter()
        .all(|c| c.severity == ReceiverCheckSeverity::Must || c.severity == ReceiverCheckSeverity::Should));
}
