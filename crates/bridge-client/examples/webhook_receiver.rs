//! Run with
//!
//! ```not_rust
//! cargo run -p bridge-sandbox -- serve                                  # terminal 1
//! BRIDGE_TOKEN=$(cargo run -q -p bridge-sandbox -- token --project my-app) \
//!     cargo run -p bridge-client --features axum --example webhook_receiver   # terminal 2
//! ```
//!
//! A webhook receiver on axum: every delivery to `http://127.0.0.1:3000/webhooks/bridge` is checked (signature
//! against the sandbox's public key, age, duplicates) and printed. With `BRIDGE_TOKEN` set it asks the sandbox
//! for a `WEBHOOK_TEST` delivery to itself once it listens; quotes made with
//! `"webhookUrl": "http://127.0.0.1:3000/webhooks/bridge"` are delivered here too. `BRIDGE_BASE_URL` (default
//! `http://127.0.0.1:8080`) and `RECEIVER_LISTEN` (default `127.0.0.1:3000`) change the addresses.

use axum::routing::post;
use axum::Router;
use bridge_client::receiver::{InMemoryDeduplicator, Webhook, WebhookReceiver};
use bridge_client::{Client, Credentials, Event};
use bridge_contract::SandboxWebhookTestRequest;

async fn on_delivery(webhook: Webhook) -> axum::http::StatusCode {
    let delivery = &webhook.delivery;
    match &delivery.event {
        Event::Known(event) => {
            println!("{} {} (ts {})", delivery.event_id, event.tag(), delivery.ts)
        }
        Event::Unknown { tag, raw } => println!("{} {tag}, a kind newer than this build: {raw}", delivery.event_id),
    }
    // Store or act on the event first; then acknowledge it (the deduplicator remembers its id).
    webhook.ack().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base_url = std::env::var("BRIDGE_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".to_owned());
    let listen = std::env::var("RECEIVER_LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());

    // The public key needs no credential; it is fetched on the first delivery and cached.
    let receiver = WebhookReceiver::new(Client::new(&base_url, Credentials::none())?)
        .with_deduplicator(InMemoryDeduplicator::new(10_000));
    let app = Router::new().route("/webhooks/bridge", post(on_delivery)).with_state(receiver);

    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let url = format!("http://{}/webhooks/bridge", listener.local_addr()?);
    println!("receiving webhooks on {url}");

    if let Ok(token) = std::env::var("BRIDGE_TOKEN") {
        let client = Client::new(&base_url, Credentials::bearer(token))?;
        tokio::spawn(async move {
            let request =
                SandboxWebhookTestRequest { webhook_url: url, message: Some("hello from the example".into()) };
            match client.sandbox_send_webhook_test(&request).await {
                Ok(sent) => println!("asked the sandbox for a test delivery: {sent:?}"),
                Err(e) => eprintln!("{e}"),
            }
        });
    }
    axum::serve(listener, app).await?;
    Ok(())
}
