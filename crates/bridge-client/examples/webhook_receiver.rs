//! Run with
//!
//! ```not_rust
//! cargo run -p bridge-sandbox -- serve                                  # terminal 1
//! export BRIDGE_TOKEN=$(cargo run -q -p bridge-sandbox -- token --project my-app)
//! cargo run -p bridge-client --features axum --example webhook_receiver   # terminal 2
//! cargo run -p bridge-conformance -- receiver --url http://127.0.0.1:3000/webhooks/bridge \
//!     --sandbox http://127.0.0.1:8080 --token "$BRIDGE_TOKEN"             # terminal 3: check it
//! ```
//!
//! A webhook receiver on axum, as small as a real one: each delivery to `http://127.0.0.1:3000/webhooks/bridge`
//! goes through `bridge-client`'s [`Webhook`] extractor, which verifies its signature against the sandbox's public
//! key (fetched once, again when it rotates), refuses an envelope whose `ts` is more than 5 minutes off (a
//! replay), and acknowledges a duplicate of an event already handled without calling the handler (the
//! [`InMemoryDeduplicator`], by `eventId`). The handler acts on the kinds it cares about, ignores the others (also
//! kinds newer than this build), and answers 204 once done: any 2xx acknowledges a delivery, anything else has it
//! delivered again. A real receiver stores the event, and marks its `eventId` handled, in one transaction of its
//! own database instead of printing it.
//!
//! With `BRIDGE_TOKEN` set it asks the sandbox for a `WEBHOOK_TEST` delivery to itself once it listens; quotes made
//! with `"webhookUrl": "http://127.0.0.1:3000/webhooks/bridge"` are delivered here too. `BRIDGE_BASE_URL` (default
//! `http://127.0.0.1:8080`) and `RECEIVER_LISTEN` (default `127.0.0.1:3000`) change the addresses.

use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use bridge_client::receiver::{InMemoryDeduplicator, Webhook, WebhookReceiver};
use bridge_client::{Client, Credentials, Event};
use bridge_contract::{SandboxWebhookTestRequest, WebhookEvent};

/// Where deliveries are received.
pub const PATH: &str = "/webhooks/bridge";

/// The receiver's routes: deliveries to [`PATH`], checked by `receiver`.
pub fn app(receiver: WebhookReceiver) -> Router {
    Router::new().route(PATH, post(on_delivery)).with_state(receiver)
}

/// A receiver of the service at `base_url` that remembers the last 100,000 events it handled.
pub fn receiver(base_url: &str) -> Result<WebhookReceiver, bridge_client::BuildError> {
    // The public key needs no credential.
    let client = Client::new(base_url, Credentials::none())?;
    Ok(WebhookReceiver::new(client).with_deduplicator(InMemoryDeduplicator::new(100_000)))
}

async fn on_delivery(webhook: Webhook) -> StatusCode {
    let delivery = &webhook.delivery;
    match &delivery.event {
        Event::Known(WebhookEvent::BridgeExecuted(executed)) => println!(
            "{}: bridge {} executed, {} {} to {}",
            delivery.event_id,
            executed.id(),
            executed.amount_out(),
            executed.chain_out(),
            executed.recipient()
        ),
        Event::Known(event) => println!("{}: {}", delivery.event_id, event.tag()),
        // A kind newer than this build: acknowledged and ignored, or it would be delivered again and again.
        Event::Unknown { tag, .. } => {
            println!("{}: {tag}, a kind this build does not know; ignored", delivery.event_id)
        }
    }
    // Handled: remember its eventId (a delivery of it again is acknowledged without reaching this handler).
    webhook.ack().await;
    StatusCode::NO_CONTENT
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base_url = std::env::var("BRIDGE_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".to_owned());
    let listen = std::env::var("RECEIVER_LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());

    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let url = format!("http://{}{PATH}", listener.local_addr()?);
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
    axum::serve(listener, app(receiver(&base_url)?)).await?;
    Ok(())
}
