//! Quote, commit and follow a bridge against the sandbox, then replay its events from the event feed and check
//! that the webhook key can be fetched.
//!
//! ```sh
//! cargo run -p bridge-sandbox -- serve              # in one terminal (prints a token: bridge-sandbox token)
//! BRIDGE_TOKEN=<jwt> cargo run -p bridge-client --example quickstart
//! ```
//!
//! `BRIDGE_BASE_URL` defaults to `http://127.0.0.1:8080`. The deposit and the clock are driven through the
//! sandbox-only operations (`sandbox_deposit_bridge`, `sandbox_advance_clock`); against production the example
//! stops after the commit.

use std::error::Error as StdError;

use bridge_client::{BridgeRecordExt as _, Client, Credentials, Event};
use bridge_contract::{
    BridgeSwapQuoteRequest, DecimalNumber, ListUserEventsQuery, QuoteMode, SandboxAdvanceClockRequest,
    SandboxBridgeDepositRequest,
};
use futures_util::TryStreamExt as _;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn StdError>> {
    let base_url = std::env::var("BRIDGE_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".to_owned());
    let token = std::env::var("BRIDGE_TOKEN").map_err(|_| "set BRIDGE_TOKEN to a JWT (bridge-sandbox token)")?;
    let client = Client::new(&base_url, Credentials::bearer(token))?;

    // The key that verifies webhook deliveries (public, no credential sent).
    let _verifier = client.webhook_verifier().await?;
    println!("webhook key fetched from {base_url}/webhook/public-key");

    // A single-token bridge is a bridge-swap quote with the same token on both sides (what production
    // recommends; `POST /bridge/quote/user` is deprecated there). The answer's shared members need no `match`.
    let quote = client
        .quote_bridge_swap(&BridgeSwapQuoteRequest {
            chain_in: "ETHEREUM".into(),
            chain_out: "BASE".into(),
            amount: "250".parse()?,
            amount_native: None,
            mode: QuoteMode::Pay,
            is_sda: None,
            token_in: "USDC".into(),
            token_out: "USDC".into(),
            depositor: "0x1111111111111111111111111111111111111111".into(),
            recipient: "0x2222222222222222222222222222222222222222".into(),
            post_bridge_data: None,
            webhook_url: None,
            refund_address: None,
        })
        .await?;
    println!(
        "{} quote {}: pay {} USDC on ETHEREUM, receive {} on BASE (fee {}), expires {}",
        quote.tag(),
        quote.quote_id(),
        quote.pay_amount(),
        quote.receive_amount(),
        quote.fees().fee,
        quote.expires_at()
    );
    let started_ms = quote.expires_at().millis() - 3_600_000; // well before the quote was made

    let bridge_id = client.commit_quote(quote.quote_id()).await?.quote_id;
    println!("committed: bridge {bridge_id}");

    // Sandbox only: pay the deposit, then move the clock until the bridge is done.
    let record = client
        .sandbox_deposit_bridge(&bridge_id, &SandboxBridgeDepositRequest { tx_hash: None, outcome: None })
        .await?;
    println!("deposit sent: {}", record.state_tag());
    for _ in 0..20 {
        let record = client.get_bridge(&bridge_id).await?;
        println!("  {}", record.state_tag());
        if record.is_final() {
            break;
        }
        let clock = client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 60_000 }).await?;
        println!("  sandbox clock: {}", clock.now);
    }

    // Replay what the service emitted, page by page.
    let query = ListUserEventsQuery {
        since_timestamp: DecimalNumber::try_from(started_ms as f64)?,
        page_token: None,
        page_size: Some(DecimalNumber::from(50u32)),
    };
    let mut pages = client.event_pages(query);
    while let Some(page) = pages.try_next().await? {
        for event in &page.items {
            match event {
                Event::Known(e) => println!("event {}", e.tag()),
                Event::Unknown { tag, .. } => println!("event {tag} (newer than this client)"),
            }
        }
        if let Some(cursor) = &page.next_page_token {
            println!("  (checkpoint: {cursor})");
        }
    }
    Ok(())
}
