//! Writes the benchmark fixtures (`benches/fixtures/*.json`) from real answers of a sandbox: it starts one on a
//! free loopback port (temporary data directory, manual clock), drives it through the client (quotes of every
//! family, commits, deposits with every outcome, expiries, deposit addresses and routing deposit addresses with
//! accepted, rejected and delayed deposits, a webhook test), and saves four answers byte for byte as served:
//!
//! * `bridge-record.json`: `GET /bridge/history/bridge/{id}` of a `bridge` record in state `EXECUTED`;
//! * `quote-response.json`: `POST /bridge/quote/user` (ETHEREUM → BASE, 100 USDC, `pay`, with a `webhookUrl`);
//! * `events-page-50.json`: `GET /webhook/user-events-cursor?sinceTimestamp=0&pageSize=50`;
//! * `history-page-50.json`: `GET /bridge/history/user?page=1&limit=50&sortBy=createdAt&sortDirection=desc`.
//!
//! Everything is deterministic except ids and hashes (random) and the clock's starting point (the wall clock).
//! Run with `cargo run -p bridge-sandbox --example bench_fixtures` (add `-- --out DIR` to write elsewhere, `--help`).

// `POST /bridge/quote/user` is deprecated in production; the fixture is its answer.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{ensure, Context};
use bridge_client::{Client, Credentials};
use bridge_contract::*;
use bridge_server::ErrorsMode;
use clap::Parser;

// The inputs the integration tests drive their sandboxes with (configuration, requests): one file, so that the
// fixtures are answers to the requests the tests make. The example uses only some of them.
#[allow(dead_code)]
#[path = "../tests/it/support/inputs.rs"]
mod inputs;
use inputs::{address_deposit, address_request, bridge_deposit, routing_request, ten_usd_or_more, EVM_A, EVM_B};

/// Writes the benchmark fixtures from a throw-away sandbox (see the example's documentation).
#[derive(Parser)]
struct Args {
    /// Directory the four fixtures are written to.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benches/fixtures"))]
    out: PathBuf,
}

const PROJECT: &str = "bench";
/// Nothing listens there: deliveries fail and are retried, which does not change any answer.
const WEBHOOK_URL: &str = "http://127.0.0.1:9/hooks/bridge";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "bench_fixtures=info,warn".into()),
        )
        .init();
    let args = Args::parse();
    let data = tempfile::tempdir()?;
    let config = inputs::local_config(data.path());
    let opened = bridge_sandbox::open(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bridge_sandbox::serve_on(opened, listener, ErrorsMode::First, async move {
        let _ = stopped.await;
    }));
    let token = bridge_sandbox::mint_token(data.path(), PROJECT, false, Duration::from_secs(3600))?;
    let client = Client::new(&base, Credentials::bearer(token.clone()))?;
    let raw = Raw { http: reqwest::Client::new(), base, token };
    tracing::info!(base = %raw.base, "sandbox started");

    let fixtures = drive(&client, &raw).await?;
    std::fs::create_dir_all(&args.out)?;
    for (name, bytes) in &fixtures {
        let path = args.out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(path = %path.display(), bytes = bytes.len(), "written");
    }
    let _ = stop.send(());
    server.await??;
    Ok(())
}

/// Raw HTTP to the sandbox, for the answers saved byte for byte.
struct Raw {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Raw {
    async fn send(&self, request: reqwest::RequestBuilder) -> anyhow::Result<Vec<u8>> {
        let response = request.bearer_auth(&self.token).send().await?;
        let status = response.status();
        let bytes = response.bytes().await?.to_vec();
        ensure!(status.is_success(), "{status}: {}", String::from_utf8_lossy(&bytes));
        Ok(bytes)
    }

    async fn get(&self, path_and_query: &str) -> anyhow::Result<Vec<u8>> {
        self.send(self.http.get(format!("{}{path_and_query}", self.base))).await
    }

    async fn post(&self, path: &str, body: &str) -> anyhow::Result<Vec<u8>> {
        self.send(
            self.http
                .post(format!("{}{path}", self.base))
                .header("content-type", "application/json")
                .body(body.to_owned()),
        )
        .await
    }
}

/// `amount` `token` from `chain_in` to `chain_out`, `pay` mode.
fn bridge_request(chain_in: &str, chain_out: &str, token: &str, amount: &str) -> BridgeQuoteRequest {
    BridgeQuoteRequest {
        token: token.into(),
        chain_in: chain_in.into(),
        chain_out: chain_out.into(),
        ..inputs::bridge_request(amount)
    }
}

async fn advance(client: &Client, ms: u64) -> anyhow::Result<()> {
    client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms }).await?;
    Ok(())
}

/// Every family and state the sandbox's lifecycle reaches (`FAILED` and the grace-period states it never makes).
const REACHABLE: [(&str, &str); 18] = [
    ("bridge", "PENDING"),
    ("bridge", "PENDING_CONFIRMATION"),
    ("bridge", "DEPOSIT_ACCEPTED"),
    ("bridge", "ACCEPTED"),
    ("bridge", "EXECUTED"),
    ("bridge", "CANCELLED"),
    ("bridgeSwap", "PENDING"),
    ("bridgeSwap", "PENDING_CONFIRMATION"),
    ("bridgeSwap", "DEPOSIT_ACCEPTED"),
    ("bridgeSwap", "ACCEPTED"),
    ("bridgeSwap", "EXECUTED"),
    ("bridgeSwap", "CANCELLED"),
    ("bridgeSwap", "SWAP_FAILED"),
    ("bridgeSwap", "SWAP_FAILED_REFUNDED"),
    ("depositAddressBridge", "PENDING_CONFIRMATION"),
    ("depositAddressBridge", "DEPOSIT_ACCEPTED"),
    ("depositAddressBridge", "ACCEPTED"),
    ("depositAddressBridge", "EXECUTED"),
];

async fn commit_bridge(
    client: &Client,
    chain_in: &str,
    chain_out: &str,
    token: &str,
    amount: &str,
) -> anyhow::Result<String> {
    let quote = client.quote_bridge(&bridge_request(chain_in, chain_out, token, amount)).await?;
    client.commit_quote(quote.quote_id()).await?;
    Ok(quote.quote_id().to_owned())
}

/// An ETH → USDC swap from ETHEREUM, committed.
async fn commit_swap(client: &Client, chain_out: &str, amount: &str) -> anyhow::Result<String> {
    let request = BridgeSwapQuoteRequest { chain_out: chain_out.into(), ..inputs::swap_request(amount) };
    let quote = client.quote_bridge_swap(&request).await?;
    client.commit_quote(quote.quote_id()).await?;
    Ok(quote.quote_id().to_owned())
}

/// A deposit into a deposit address that starts a bridge; the bridge's id.
async fn address_bridge(
    client: &Client,
    address: &str,
    chain: &str,
    token: &str,
    amount: &str,
) -> anyhow::Result<String> {
    let deposit = client.sandbox_deposit_into_address(address, chain, &address_deposit(token, amount, None)).await?;
    deposit.bridge_id.context("the deposit is bridged")
}

/// How an in-flight record is paid.
enum Pay {
    /// A committed bridge, paid with `POST /sandbox/bridges/{id}/deposit`.
    Bridge(String, Option<SandboxBridgeOutcome>),
    /// A deposit address (ARBITRUM, USDT): paid with a deposit like the one that made the bridge named second,
    /// whose estimated duration it shares.
    Address(String, String),
}

struct InFlight {
    pay: Pay,
    age_ms: u64,
}

impl InFlight {
    async fn new(client: &Client, pay: Pay, fraction: f64) -> anyhow::Result<Self> {
        let id = match &pay {
            Pay::Bridge(id, _) | Pay::Address(_, id) => id,
        };
        let record = client.get_bridge(id).await?;
        let duration = record.common().estimated_duration.context("records have an estimated duration")?.as_f64();
        Ok(Self { pay, age_ms: (duration * fraction) as u64 })
    }

    async fn pay(&self, client: &Client) -> anyhow::Result<()> {
        match &self.pay {
            Pay::Bridge(id, outcome) => {
                client.sandbox_deposit_bridge(id, &bridge_deposit(*outcome)).await?;
            }
            Pay::Address(address, _) => {
                address_bridge(client, address, "ARBITRUM", "USDT", "33").await?;
            }
        }
        Ok(())
    }
}

fn state_of(record: &BridgeRecord) -> (&'static str, &'static str) {
    match record {
        BridgeRecord::Bridge(b) => ("bridge", b.state.tag()),
        BridgeRecord::BridgeSwap(b) => ("bridgeSwap", b.state.tag()),
        BridgeRecord::DepositAddressBridge(b) => ("depositAddressBridge", b.state.tag()),
    }
}

/// The scenario; returns the fixtures' file names and bytes.
async fn drive(client: &Client, raw: &Raw) -> anyhow::Result<Vec<(&'static str, Vec<u8>)>> {
    // A bridge left to expire, a swap that fails, and deposit addresses first: so that their kinds are among the
    // feed's first 50 events.
    commit_bridge(client, "ETHEREUM", "ARBITRUM", "USDT", "75").await?;
    let refunded = commit_swap(client, "ARBITRUM", "0.015").await?;
    client.sandbox_deposit_bridge(&refunded, &bridge_deposit(Some(SandboxBridgeOutcome::SwapFailed))).await?;
    for _ in 0..4 {
        advance(client, bridge_sandbox::pricing::QUOTE_LIFETIME_MS as u64 / 4 + 1_000).await?;
    }

    let addresses = client
        .create_deposit_addresses(&DepositAddressCreateRequest {
            deposit_chains: vec!["ETHEREUM".into(), "ARBITRUM".into()],
            address_note: Some("bench".into()),
            ..address_request()
        })
        .await?;
    let on = |chain: &str| {
        addresses
            .iter()
            .find(|a| a.deposit_chain == chain)
            .map(|a| a.deposit_address.clone())
            .context("an address per deposit chain")
    };
    let (ethereum, arbitrum) = (on("ETHEREUM")?, on("ARBITRUM")?);
    let stellar = client
        .create_deposit_addresses(&DepositAddressCreateRequest {
            deposit_chains: vec!["STELLAR".into()],
            destination_chain: "ARBITRUM".into(),
            destination_address: EVM_A.into(),
            ..address_request()
        })
        .await?
        .remove(0);
    let routing = client.sandbox_create_routing_deposit_address(&routing_request(ten_usd_or_more())).await?;
    let deposits = [
        (&ethereum, "ETHEREUM", address_deposit("USDC", "25.5", None)),
        (&ethereum, "ETHEREUM", address_deposit("NOPE", "1", None)),
        (&arbitrum, "ARBITRUM", address_deposit("USDC", "0.01", None)),
        (&ethereum, "ETHEREUM", address_deposit("USDC", "40", Some(SandboxDepositOutcome::Delayed))),
        (&routing.deposit_address, "ETHEREUM", address_deposit("USDC", "1.25", None)),
        (&routing.deposit_address, "ETHEREUM", address_deposit("USDC", "40", Some(SandboxDepositOutcome::Delayed))),
    ];
    for (deposit_address, chain, deposit) in &deposits {
        client.sandbox_deposit_into_address(deposit_address, chain, deposit).await?;
    }
    client
        .sandbox_send_webhook_test(&SandboxWebhookTestRequest {
            webhook_url: WEBHOOK_URL.into(),
            message: Some("bench".into()),
        })
        .await?;

    // Records that are through their lifecycle: executed, cancelled (never paid), refunded (a failed swap).
    let routes = [
        ("ETHEREUM", "BASE", "USDC"),
        ("ARBITRUM", "BASE", "USDC"),
        ("BASE", "OPTIMISM", "USDT"),
        ("OPTIMISM", "ARBITRUM", "USDC"),
    ];
    let mut executed_bridge = None;
    for round in 0..6usize {
        let (chain_in, chain_out, token) = routes[round % routes.len()];
        let id =
            commit_bridge(client, chain_in, chain_out, token, &format!("{}.{}", 50 + round * 7, 25 + round)).await?;
        client.sandbox_deposit_bridge(&id, &bridge_deposit(None)).await?;
        if chain_in == "ARBITRUM" {
            executed_bridge.get_or_insert(id);
        }
        let outcome = (round % 2 == 1).then_some(SandboxBridgeOutcome::SwapFailed);
        let swap = commit_swap(client, chain_out, &format!("0.0{}5", round + 1)).await?;
        client.sandbox_deposit_bridge(&swap, &bridge_deposit(outcome)).await?;
        let (deposit_address, chain, token) = if round % 2 == 0 {
            (&arbitrum, "ARBITRUM", "USDT")
        } else {
            (&stellar.deposit_address, "STELLAR", "USDC")
        };
        client
            .sandbox_deposit_into_address(
                deposit_address,
                chain,
                &address_deposit(token, &format!("{}", 20 + round * 3), None),
            )
            .await?;
        if round < 2 {
            commit_bridge(client, chain_in, chain_out, token, "12.5").await?;
            commit_swap(client, chain_out, "0.02").await?;
        }
        advance(client, 60_000).await?;
    }
    for _ in 0..10 {
        advance(client, 60_000).await?;
    }

    // Records in flight when the page is read, in every state on the way. Each is paid `fraction` of its
    // estimated duration before the page is read (the lifecycle steps at 30 %, 40 % and 100 % of it; a failed
    // swap fails at 40 % and is refunded at 50 %); the clock moves a second at a time, as each step is timed
    // from the pass that made the previous one.
    let mut in_flight = Vec::new();
    for (fraction, outcome) in [(0.1, None), (0.35, None), (0.7, None), (0.45, Some(SandboxBridgeOutcome::SwapFailed))]
    {
        for (copy, &(chain_in, chain_out, token)) in routes.iter().enumerate().take(2) {
            if outcome.is_none() {
                let id = commit_bridge(client, chain_in, chain_out, token, &format!("{}.5", 30 + copy)).await?;
                in_flight.push(InFlight::new(client, Pay::Bridge(id, None), fraction).await?);
                let bridge_id =
                    address_bridge(client, &arbitrum, "ARBITRUM", "USDT", &format!("{}", 30 + copy)).await?;
                in_flight.push(InFlight::new(client, Pay::Address(arbitrum.clone(), bridge_id), fraction).await?);
            }
            let id = commit_swap(client, chain_out, &format!("0.0{}", 3 + copy)).await?;
            in_flight.push(InFlight::new(client, Pay::Bridge(id, outcome), fraction).await?);
        }
    }
    in_flight.sort_by_key(|f| std::cmp::Reverse(f.age_ms));
    let start_ms = in_flight.first().map_or(0, |f| f.age_ms);
    let mut now_ms = 0;
    for flight in &in_flight {
        let at = start_ms - flight.age_ms;
        while now_ms < at {
            let step = (at - now_ms).min(1_000);
            advance(client, step).await?;
            now_ms += step;
        }
        flight.pay(client).await?;
    }
    while now_ms < start_ms {
        let step = (start_ms - now_ms).min(1_000);
        advance(client, step).await?;
        now_ms += step;
    }
    // And bridges committed but not paid yet.
    commit_bridge(client, "ETHEREUM", "ARBITRUM", "USDC", "64").await?;
    commit_swap(client, "BASE", "0.05").await?;

    let executed_bridge = executed_bridge.context("an ARBITRUM bridge was deposited")?;
    let record = raw.get(&format!("/bridge/history/bridge/{executed_bridge}")).await?;
    let decoded: BridgeRecord = serde_json::from_slice(&record)?;
    ensure!(state_of(&decoded) == ("bridge", "EXECUTED"), "the recorded bridge is executed: {:?}", state_of(&decoded));

    let history = raw.get("/bridge/history/user?page=1&limit=50&sortBy=createdAt&sortDirection=desc").await?;
    let page: HistoryPage = serde_json::from_slice(&history)?;
    ensure!(page.items.len() == 50, "a full history page ({} items)", page.items.len());
    let mut states: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for item in &page.items {
        *states.entry(state_of(&item.bridge)).or_default() += 1;
    }
    tracing::info!(?states, "history page: records by family and state");
    let missing: Vec<_> = REACHABLE.iter().filter(|pair| !states.contains_key(*pair)).collect();
    ensure!(missing.is_empty(), "the history page lacks {missing:?}");

    let events = raw.get("/webhook/user-events-cursor?sinceTimestamp=0&pageSize=50").await?;
    let feed: UserEventsPage = serde_json::from_slice(&events)?;
    ensure!(feed.items.len() == 50, "a full event page ({} items)", feed.items.len());
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for event in &feed.items {
        *kinds.entry(event.tag()).or_default() += 1;
    }
    tracing::info!(?kinds, "event page: events by kind");
    let absent: Vec<_> = WebhookEvent::TAGS.iter().filter(|tag| !kinds.contains_key(*tag)).collect();
    if !absent.is_empty() {
        tracing::warn!(?absent, "kinds of the schema that are not on the event page");
    }

    let quote = raw
        .post(
            "/bridge/quote/user",
            &format!(
                r#"{{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100","mode":"pay","depositor":"{EVM_A}","recipient":"{EVM_B}","webhookUrl":"{WEBHOOK_URL}"}}"#
            ),
        )
        .await?;
    let _: QuoteResponse = serde_json::from_slice(&quote)?;

    Ok(vec![
        ("bridge-record.json", record),
        ("quote-response.json", quote),
        ("events-page-50.json", events),
        ("history-page-50.json", history),
    ])
}
