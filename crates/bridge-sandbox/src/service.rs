//! The sandbox's implementation of [`BridgeApi`]: every operation of the contract over the [`Store`], the
//! [`Catalogue`], the pricing model and the sandbox [`Clock`]. A project sees only its own quotes, bridges,
//! addresses and events; another project's id is answered exactly like an id that does not exist.

use std::sync::Arc;

use anyhow::Context;
use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::{BridgeApi, Caller, SandboxApi};
use serde_json::{json, Value};

use crate::catalogue::Catalogue;
use crate::clock::Clock;
use crate::lifecycle::{self, iso};
use crate::store::{AddressSearch, HistoryQuery, NewEvent, Store, StoredBridge, StoredDeposit, StoredQuote};
use crate::{ids, pricing};

/// How many of an address's deposits the public status lists.
const LAST_BRIDGES: u64 = 10;
/// Largest history page.
pub const MAX_HISTORY_LIMIT: u64 = 100;
/// Default and largest deposit-address search page.
pub const DEFAULT_SEARCH_PAGE: u64 = 20;
pub const MAX_SEARCH_PAGE: u64 = 100;
/// The event feed's `pageSize` default and maximum, as the schema states them (read once from the document).
fn events_page_limits() -> (f64, f64) {
    static LIMITS: std::sync::OnceLock<(f64, f64)> = std::sync::OnceLock::new();
    *LIMITS.get_or_init(|| {
        let doc = bridge_contract::openapi::document();
        let parameters =
            doc["paths"]["/webhook/user-events-cursor"]["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let schema =
            parameters.iter().find(|p| p["name"] == "pageSize").map(|p| p["schema"].clone()).unwrap_or_default();
        (schema["default"].as_f64().unwrap_or(1.0), schema["maximum"].as_f64().unwrap_or(1.0))
    })
}

struct Inner {
    store: Arc<dyn Store>,
    catalogue: Catalogue,
    clock: Clock,
    served_key: String,
    /// One lifecycle pass at a time.
    tick: tokio::sync::Mutex<()>,
}

/// The sandbox service. Cheap to clone.
#[derive(Clone)]
pub struct Sandbox(Arc<Inner>);

pub(crate) fn invalid(message: impl Into<String>) -> InvalidRequest {
    InvalidRequest { tag: Default::default(), message: message.into() }
}

/// A failure of the store (or of the sandbox's own consistency checks), logged; answered 503
/// `ServiceUnavailable`. Nothing was changed: every write is one transaction.
pub(crate) fn storage<E: From<ServiceUnavailable>>(e: anyhow::Error) -> E {
    tracing::error!(error = %format!("{e:#}"), "storage failure");
    ServiceUnavailable { tag: Default::default(), message: format!("the sandbox store failed: {e:#}") }.into()
}

/// `postBridgeData` on a quote from a project without the feature: 422 (production documents no 403 on quotes).
fn post_bridge_data_not_enabled() -> InvalidRequest {
    invalid(format!(
        "postBridgeData is not enabled for this project (feature `{}`)",
        bridge_server::auth::POST_BRIDGE_DATA
    ))
}

impl Sandbox {
    pub fn new(store: Arc<dyn Store>, catalogue: Catalogue, clock: Clock, served_key: String) -> Self {
        Self(Arc::new(Inner { store, catalogue, clock, served_key, tick: tokio::sync::Mutex::new(()) }))
    }

    pub fn now_ms(&self) -> i64 {
        self.0.clock.now_ms()
    }

    pub fn clock(&self) -> &Clock {
        &self.0.clock
    }

    /// Runs a store operation off the async workers.
    async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let store = self.0.store.clone();
        tokio::task::spawn_blocking(move || f(&*store)).await.context("store task")?
    }

    async fn counter(&self, name: &'static str) -> anyhow::Result<u64> {
        self.db(move |s| s.next_counter(name)).await
    }

    async fn event(&self, project: &str, event: WebhookEvent, webhook_url: Option<String>) -> anyhow::Result<NewEvent> {
        let n = self.counter("event").await?;
        Ok(lifecycle::new_event(project, self.now_ms(), n, event, webhook_url))
    }

    /// Moves every bridge whose time has come; returns how many steps were taken.
    pub async fn tick(&self) -> anyhow::Result<usize> {
        let _guard = self.0.tick.lock().await;
        let (value, floor) = self.0.clock.snapshot();
        self.db(move |s| s.save_clock(value, floor)).await?;
        let mut steps = 0;
        loop {
            let now = self.now_ms();
            let due = self.db(move |s| s.due_bridges(now, 100)).await?;
            if due.is_empty() {
                return Ok(steps);
            }
            for mut bridge in due {
                let at = bridge.next_ms.unwrap_or(now);
                let seed = self.counter("tx").await?;
                let kinds = match lifecycle::step(&mut bridge, at, seed) {
                    Ok(kinds) => kinds,
                    Err(e) => {
                        tracing::warn!(bridge = %bridge.id, error = %e, "lifecycle step failed; parking the bridge");
                        vec![]
                    }
                };
                let record = serde_json::to_value(&bridge.record)?;
                let extra = self.address_note_of(&record).await?;
                let mut events = Vec::new();
                for kind in kinds {
                    let n = self.counter("event").await?;
                    let event = lifecycle::bridge_event_with(kind, &record, extra.clone())?;
                    events.push(lifecycle::new_event(&bridge.project, at, n, event, bridge.webhook_url.clone()));
                }
                tracing::info!(bridge = %bridge.id, state = %bridge.state, "bridge advanced");
                self.db(move |s| s.save_bridge(&bridge, &events)).await?;
                steps += 1;
            }
        }
    }

    /// The `addressNote` a deposit-address bridge's events carry: the note of the (routing) deposit address that
    /// received the deposit, when it has one.
    async fn address_note_of(&self, record: &Value) -> anyhow::Result<serde_json::Map<String, Value>> {
        let mut extra = serde_json::Map::new();
        let (Some(chain), Some(address)) = (record["chainIn"].as_str(), record["depositAddress"].as_str()) else {
            return Ok(extra);
        };
        let (chain, address) = (chain.to_owned(), address.to_owned());
        let note = self
            .db(move |s| {
                Ok(match s.address(&chain, &address)? {
                    Some(a) => a.address.address_note,
                    None => s.routing_address(&chain, &address)?.and_then(|a| a.address.address_note),
                })
            })
            .await?;
        if let Some(note) = note {
            extra.insert("addressNote".into(), json!(note));
        }
        Ok(extra)
    }

    fn usd_price(&self, chain: &str, token: &str) -> Option<rust_decimal::Decimal> {
        self.0.catalogue.chain(chain).and_then(|c| c.tokens.get(token)).map(|t| t.usd_price)
    }

    /// The bridge record a committed quote becomes.
    fn record_from_quote(
        &self,
        quote: &StoredQuote,
        now_ms: i64,
        deposit_address: Option<&str>,
    ) -> anyhow::Result<Value> {
        let q = serde_json::to_value(&quote.response)?;
        let fees = &q["fees"];
        let zero_sponsored = json!({"fee": "0", "gasFee": "0", "platformFee": "0", "percentageFee": "0", "sourceGasFee": "0",
            "feeUsd": 0, "gasFeeUsd": 0, "platformFeeUsd": 0, "percentageFeeUsd": 0, "sourceGasFeeUsd": 0});
        let mut r = json!({
            "_id": quote.id, "userId": quote.project, "chainIn": q["chainIn"], "chainOut": q["chainOut"],
            "amountIn": q["payAmount"], "amountInUsd": q["payAmountUsd"], "amountOut": q["receiveAmount"], "amountOutUsd": q["receiveAmountUsd"],
            "amountNative": q.pointer("/gasBoost/amountNative").cloned().unwrap_or(Value::Null),
            "amountNativeUsd": q.pointer("/gasBoost/amountNativeUsd").cloned().unwrap_or(Value::Null),
            "sponsoredFees": fees.get("sponsoredFees").cloned().unwrap_or(zero_sponsored),
            "recipient": q["recipient"], "depositor": q["depositor"],
            "createdAt": iso(quote.created_ms), "commitmentDate": iso(now_ms), "state": "PENDING",
        });
        for key in [
            "fee",
            "feeUsd",
            "gasFee",
            "gasFeeUsd",
            "platformFee",
            "platformFeeUsd",
            "percentageFee",
            "percentageFeeUsd",
            "sourceGasFee",
            "sourceGasFeeUsd",
        ] {
            r[key] = fees[key].clone();
        }
        for key in ["speed", "estimatedDuration", "postBridgeData"] {
            if let Some(v) = q.get(key) {
                r[key] = v.clone();
            }
        }
        let chain_in = q["chainIn"].as_str().unwrap_or_default();
        let price = |token: &Value| {
            let p = self.usd_price(chain_in, token.as_str().unwrap_or_default()).unwrap_or_default();
            DecimalNumber::try_from(p.to_string().parse::<f64>().unwrap_or(0.0)).unwrap_or_default()
        };
        match q["_tag"].as_str() {
            Some("bridgeSwap") => {
                r["_tag"] = json!("bridgeSwap");
                r["tokenIn"] = q["tokenIn"].clone();
                r["tokenOut"] = q["tokenOut"].clone();
                r["minAmountOut"] = q["minReceiveAmount"].clone();
                r["minAmountOutUsd"] = q["minReceiveAmountUsd"].clone();
                r["usdPriceTokenIn"] = q["usdPriceTokenIn"].clone();
                r["usdPriceTokenOut"] = q["usdPriceTokenOut"].clone();
                r["mode"] = json!(quote.mode);
                if let Some(atomic) = q.get("isAtomicSwap") {
                    r["isAtomicSwap"] = atomic.clone();
                }
            }
            Some("depositAddressBridge") => {
                r["_tag"] = json!("depositAddressBridge");
                r["token"] = q["token"].clone();
                r["usdPrice"] = json!(price(&q["token"]));
                if let Some(address) = deposit_address {
                    r["depositAddress"] = json!(address);
                }
            }
            _ => {
                r["_tag"] = json!("bridge");
                r["token"] = q["token"].clone();
                r["usdPrice"] = json!(price(&q["token"]));
            }
        }
        serde_json::from_value::<BridgeRecord>(r.clone()).context("a committed quote makes a valid record")?;
        Ok(r)
    }

    fn stored_bridge(
        &self,
        project: &str,
        id: &str,
        record: Value,
        now_ms: i64,
        next_ms: Option<i64>,
        webhook_url: Option<String>,
    ) -> anyhow::Result<StoredBridge> {
        let state = record["state"].as_str().unwrap_or("PENDING").to_owned();
        Ok(StoredBridge {
            id: id.to_owned(),
            project: project.to_owned(),
            record: serde_json::from_value(record)?,
            rejections: vec![],
            state,
            created_ms: now_ms,
            updated_ms: now_ms,
            next_ms,
            webhook_url,
            plan: None,
        })
    }

    async fn new_quote(&self, caller: &Caller, response: QuoteResponse, mode: &QuoteMode) -> anyhow::Result<()> {
        let id = match &response {
            QuoteResponse::Bridge(q) => q.quote_id.clone(),
            QuoteResponse::BridgeSwap(q) => q.quote_id.clone(),
            QuoteResponse::DepositAddressBridge(q) => q.quote_id.clone(),
        };
        let now = self.now_ms();
        let quote = StoredQuote {
            id,
            project: caller.project_id.clone(),
            response,
            mode: mode.as_str().to_owned(),
            created_ms: now,
            expires_ms: now + pricing::QUOTE_LIFETIME_MS,
            committed: false,
        };
        self.db(move |s| s.insert_quote(&quote)).await
    }

    async fn quote_context_id(&self) -> anyhow::Result<String> {
        Ok(ids::quote_id(self.counter("quote").await?))
    }

    /// The status a deposit shows in `lastBridges`: its own when rejected, else its bridge's.
    fn live_status(deposit: &StoredDeposit, bridge: Option<&StoredBridge>) -> LastBridge {
        let mut last = deposit.last_bridge.clone();
        if let Some(bridge) = bridge.filter(|b| b.state == "FAILED") {
            let _ = bridge;
            last.status = LastBridgeStatus::Rejected(LastBridgeRejected {
                tag: Default::default(),
                reason: RejectReason::TerminalProcessingIssue,
            });
            return last;
        }
        if let Some(bridge) =
            bridge.filter(|b| !b.plan.as_deref().is_some_and(|p| lifecycle::delayed_deposit(p).is_some()))
        {
            let record = serde_json::to_value(&bridge.record).unwrap_or_default();
            let amount_out: Option<DecimalString> = serde_json::from_value(record["amountOut"].clone()).ok();
            let fee: Option<DecimalString> = serde_json::from_value(record["fee"].clone()).ok();
            if let (Some(amount_out), Some(fee)) = (amount_out, fee) {
                last.status = match bridge.state.as_str() {
                    "EXECUTED" => LastBridgeStatus::Executed(LastBridgeExecuted {
                        tag: Default::default(),
                        withdraw_tx_hash: record["withdrawTxHash"].as_str().unwrap_or_default().to_owned(),
                        withdraw_tx_timestamp: serde_json::from_value(record["withdrawCommittedAt"].clone())
                            .unwrap_or(last.deposit_tx_timestamp),
                        amount_out,
                        fee,
                    }),
                    _ => LastBridgeStatus::Accepted(LastBridgeAccepted { tag: Default::default(), amount_out, fee }),
                };
            }
        }
        last
    }
}

impl BridgeApi for Sandbox {
    async fn quote_bridge(&self, caller: Caller, body: BridgeQuoteRequest) -> Result<QuoteResponse, QuoteBridgeError> {
        if body.post_bridge_data.is_some() && !caller.has_post_bridge_data() {
            return Err(post_bridge_data_not_enabled().into());
        }
        let quote_id = self.quote_context_id().await.map_err(storage::<QuoteBridgeError>)?;
        let ctx = pricing::QuoteContext {
            catalogue: &self.0.catalogue,
            project_id: &caller.project_id,
            now: now_date(self.now_ms()),
            quote_id,
        };
        let quote = pricing::quote_bridge(&ctx, &body)?;
        let quote = QuoteResponse::Bridge(quote);
        self.new_quote(&caller, quote.clone(), &body.mode).await.map_err(storage::<QuoteBridgeError>)?;
        Ok(quote)
    }

    async fn quote_bridge_swap(
        &self,
        caller: Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        if body.post_bridge_data.is_some() && !caller.has_post_bridge_data() {
            return Err(post_bridge_data_not_enabled().into());
        }
        let quote_id = self.quote_context_id().await.map_err(storage::<QuoteBridgeSwapError>)?;
        let ctx = pricing::QuoteContext {
            catalogue: &self.0.catalogue,
            project_id: &caller.project_id,
            now: now_date(self.now_ms()),
            quote_id,
        };
        let quote = pricing::quote_bridge_swap(&ctx, &body)?;
        self.new_quote(&caller, quote.clone(), &body.mode).await.map_err(storage::<QuoteBridgeSwapError>)?;
        Ok(quote)
    }

    async fn commit_quote(&self, caller: Caller, path: CommitQuotePath) -> Result<QuoteCommitted, CommitQuoteError> {
        let (project, id) = (caller.project_id.clone(), path.quote_id.clone());
        let not_found = || QuoteNotFound {
            tag: Default::default(),
            message: format!("no quote {} (unknown or expired)", path.quote_id),
        };
        let quote = self
            .db(move |s| s.quote(&project, &id))
            .await
            .map_err(storage::<CommitQuoteError>)?
            .ok_or_else(not_found)?;
        let now = self.now_ms();
        if quote.committed {
            return Err(invalid(format!("quote {} is already committed", quote.id)).into());
        }
        if now > quote.expires_ms {
            return Err(not_found().into());
        }
        let webhook_url = match &quote.response {
            QuoteResponse::Bridge(q) => q.webhook_url.clone(),
            QuoteResponse::BridgeSwap(q) => q.webhook_url.clone(),
            QuoteResponse::DepositAddressBridge(q) => q.webhook_url.clone(),
        };
        let record = self.record_from_quote(&quote, now, None).map_err(storage::<CommitQuoteError>)?;
        let event = lifecycle::bridge_event("BRIDGE_PENDING", &record).map_err(storage::<CommitQuoteError>)?;
        let event =
            self.event(&caller.project_id, event, webhook_url.clone()).await.map_err(storage::<CommitQuoteError>)?;
        let bridge = self
            .stored_bridge(&caller.project_id, &quote.id, record, now, Some(quote.expires_ms), webhook_url)
            .map_err(storage::<CommitQuoteError>)?;
        let quote_id = quote.id.clone();
        let committed = self
            .db(move |s| s.commit_quote(&quote_id, &bridge, &[event]))
            .await
            .map_err(storage::<CommitQuoteError>)?;
        if !committed {
            return Err(invalid(format!("quote {} is already committed", quote.id)).into());
        }
        tracing::info!(project = %caller.project_id, bridge = %quote.id, "quote committed");
        Ok(QuoteCommitted { quote_id: quote.id })
    }

    async fn list_bridge_history(
        &self,
        caller: Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        let (page, limit) = (query.page.as_f64(), query.limit.as_f64());
        if page < 1.0 || page.fract() != 0.0 {
            return Err(invalid("page must be a whole number, 1 or more (pages are 1-based)").into());
        }
        if limit < 1.0 || limit.fract() != 0.0 || limit > MAX_HISTORY_LIMIT as f64 {
            return Err(invalid(format!("limit must be a whole number from 1 to {MAX_HISTORY_LIMIT}")).into());
        }
        let q = HistoryQuery {
            state: query.state.map(|s| s.as_str().to_owned()),
            sort_by_updated: query.sort_by == HistorySortBy::UpdatedAt,
            descending: query.sort_direction == SortDirection::Desc,
            offset: (page as u64 - 1).saturating_mul(limit as u64),
            limit: limit as u64,
        };
        let project = caller.project_id.clone();
        let (total, bridges) =
            self.db(move |s| s.history(&project, &q)).await.map_err(storage::<ListBridgeHistoryError>)?;
        Ok(HistoryPage {
            total_items: total,
            items: bridges.into_iter().map(|b| HistoryItem { bridge: b.record, rejections: b.rejections }).collect(),
        })
    }

    async fn get_bridge(&self, caller: Caller, path: GetBridgePath) -> Result<BridgeRecord, GetBridgeError> {
        let (project, id) = (caller.project_id.clone(), path.bridge_id.clone());
        match self.db(move |s| s.bridge(&project, &id)).await.map_err(storage::<GetBridgeError>)? {
            Some(b) => Ok(b.record),
            None => Err(invalid(format!("no bridge {}", path.bridge_id)).into()),
        }
    }

    async fn create_deposit_addresses(
        &self,
        caller: Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        crate::addresses::create(self, &caller, body).await
    }

    async fn search_deposit_addresses(
        &self,
        caller: Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        let after = match &query.page_token {
            None => 0,
            Some(token) => token
                .strip_prefix('p')
                .and_then(|hex| i64::from_str_radix(hex, 16).ok())
                .ok_or_else(|| invalid("pageToken is not a token this sandbox gave out"))?,
        };
        let size = query.page_size.map(|n| n.as_f64()).unwrap_or(DEFAULT_SEARCH_PAGE as f64);
        if size < 1.0 || size.fract() != 0.0 || size > MAX_SEARCH_PAGE as f64 {
            return Err(invalid(format!("pageSize must be a whole number from 1 to {MAX_SEARCH_PAGE}")).into());
        }
        let search = AddressSearch {
            address_note: query.address_note,
            deposit_chain: query.deposit_chain,
            destination_chain: query.destination_chain,
            destination_address: query.destination_address,
            after,
            limit: size as u64 + 1,
        };
        let project = caller.project_id.clone();
        let mut found = self
            .db(move |s| s.search_addresses(&project, &search))
            .await
            .map_err(storage::<SearchDepositAddressesError>)?;
        let more = found.len() > size as usize;
        found.truncate(size as usize);
        let next_page_token = if more { found.last().map(|(seq, _)| format!("p{seq:x}")) } else { None };
        Ok(DepositAddressSearchPage { next_page_token, items: found.into_iter().map(|(_, a)| a.search_item).collect() })
    }

    async fn get_deposit_address_public_status(
        &self,
        caller: Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        let (chain, address) = (path.deposit_chain.clone(), path.deposit_address.clone());
        let found = self
            .db(move |s| s.address(&chain, &address))
            .await
            .map_err(storage::<GetDepositAddressPublicStatusError>)?;
        let stored = match found {
            Some(a)
                if a.project == caller.project_id
                    && a.address.destination_address.as_deref() == Some(query.destination_address.as_str()) =>
            {
                a
            }
            _ => return Err(PublicStatusUnprocessable::from(address_not_found(&path.deposit_address)).into()),
        };
        let (chain, address, project) =
            (path.deposit_chain.clone(), path.deposit_address.clone(), caller.project_id.clone());
        let deposits = self
            .db(move |s| {
                let deposits = s.deposits(&chain, &address, LAST_BRIDGES)?;
                deposits
                    .into_iter()
                    .map(|d| {
                        let bridge = match &d.bridge_id {
                            Some(id) => s.bridge(&project, id)?,
                            None => None,
                        };
                        Ok((d, bridge))
                    })
                    .collect::<anyhow::Result<Vec<_>>>()
            })
            .await
            .map_err(storage::<GetDepositAddressPublicStatusError>)?;
        Ok(PublicDepositAddressStatus {
            deposit_address: stored.address.deposit_address.clone(),
            deposit_chain: stored.address.deposit_chain.clone(),
            destination_chain: stored.address.destination_chain.clone(),
            destination_address: query.destination_address,
            last_bridges: deposits.iter().map(|(d, b)| Self::live_status(d, b.as_ref())).collect(),
            chain_metadata: stored.address.chain_metadata.clone(),
        })
    }

    async fn get_webhook_public_key(&self) -> Result<WebhookPublicKey, GetWebhookPublicKeyError> {
        Ok(self.0.served_key.clone())
    }

    async fn list_user_events(
        &self,
        caller: Caller,
        query: ListUserEventsQuery,
    ) -> Result<UserEventsPage, ListUserEventsError> {
        // The feed documents no 422: out-of-range values are brought into range (see the schema).
        let since = query.since_timestamp.as_f64().floor().clamp(i64::MIN as f64, i64::MAX as f64) as i64;
        let after = query.page_token.as_deref().and_then(|t| i64::from_str_radix(t, 16).ok()).unwrap_or(0);
        let (default_size, max_size) = events_page_limits();
        let size = query.page_size.map(|n| n.as_f64()).unwrap_or(default_size).floor().clamp(1.0, max_size) as u64;
        let project = caller.project_id.clone();
        let mut page = self
            .db(move |s| s.events(&project, since, after, size + 1))
            .await
            .map_err(storage::<ListUserEventsError>)?;
        let more = page.len() as u64 > size;
        page.truncate(size as usize);
        let next_page_token = if more { page.last().map(|(seq, _)| format!("{seq:024x}")) } else { None };
        Ok(UserEventsPage { items: page.into_iter().map(|(_, e)| e).collect(), next_page_token })
    }
}

impl SandboxApi for Sandbox {
    async fn sandbox_deposit_bridge(
        &self,
        caller: Caller,
        path: SandboxDepositBridgePath,
        body: SandboxBridgeDepositRequest,
    ) -> Result<BridgeRecord, SandboxDepositBridgeError> {
        let (project, id) = (caller.project_id.clone(), path.bridge_id.clone());
        let mut bridge =
            self.db(move |s| s.bridge(&project, &id)).await.map_err(storage::<SandboxDepositBridgeError>)?.ok_or_else(
                || BridgeNotFound { tag: Default::default(), message: format!("no bridge {}", path.bridge_id) },
            )?;
        let swap = matches!(bridge.record, BridgeRecord::BridgeSwap(_));
        let late = bridge.state == "CANCELLED" && swap;
        if bridge.state != "PENDING" && !late {
            return Err(invalid(format!("bridge {} is {}, not PENDING", bridge.id, bridge.state)).into());
        }
        match body.outcome {
            Some(SandboxBridgeOutcome::SwapFailed) if !swap => {
                return Err(invalid("outcome swapFailed needs a bridgeSwap record").into())
            }
            Some(SandboxBridgeOutcome::Failed) if !matches!(bridge.record, BridgeRecord::Bridge(_)) => {
                return Err(invalid(
                    "outcome failed needs a single-token bridge record (a bridgeSwap record fails with swapFailed)",
                )
                .into())
            }
            Some(outcome) if late && outcome != SandboxBridgeOutcome::Executed => {
                return Err(invalid(format!(
                    "bridge {} is CANCELLED: a late deposit is refunded, whatever the outcome",
                    bridge.id
                ))
                .into())
            }
            Some(SandboxBridgeOutcome::SwapFailed) => bridge.plan = Some(lifecycle::PLAN_SWAP_FAILED.to_owned()),
            Some(SandboxBridgeOutcome::Failed) => bridge.plan = Some(lifecycle::PLAN_FAILED.to_owned()),
            Some(SandboxBridgeOutcome::Executed) | None => {}
        }
        let seed = self.counter("tx").await.map_err(storage::<SandboxDepositBridgeError>)?;
        let tx_hash = body.tx_hash.unwrap_or_else(|| ids::tx_hash(seed));
        let now = self.now_ms();
        if late {
            lifecycle::late_deposit(&mut bridge, now, &tx_hash).map_err(storage::<SandboxDepositBridgeError>)?;
        } else {
            lifecycle::deposit_seen(&mut bridge, now, &tx_hash, 1_000_000 + seed as i64)
                .map_err(storage::<SandboxDepositBridgeError>)?;
        }
        let record = bridge.record.clone();
        self.db(move |s| s.save_bridge(&bridge, &[])).await.map_err(storage::<SandboxDepositBridgeError>)?;
        tracing::info!(project = %caller.project_id, bridge = %path.bridge_id, "deposit seen");
        Ok(record)
    }

    async fn sandbox_deposit_into_address(
        &self,
        caller: Caller,
        path: SandboxDepositIntoAddressPath,
        body: SandboxAddressDepositRequest,
    ) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
        crate::addresses::deposit(self, &caller, path, body).await
    }

    async fn sandbox_create_routing_deposit_address(
        &self,
        caller: Caller,
        body: SandboxRoutingDepositAddressRequest,
    ) -> Result<RoutingDepositAddress, SandboxCreateRoutingDepositAddressError> {
        crate::routing::create(self, &caller, body).await
    }

    async fn sandbox_advance_clock(
        &self,
        _caller: Caller,
        body: SandboxAdvanceClockRequest,
    ) -> Result<SandboxClock, SandboxAdvanceClockError> {
        let ms = i64::try_from(body.ms).map_err(|_| invalid("ms is too large"))?;
        let now = self
            .0
            .clock
            .try_advance(ms)
            .ok_or_else(|| invalid("the sandbox clock cannot be advanced past 9999-01-01T00:00:00.000Z"))?;
        self.tick().await.map_err(storage::<SandboxAdvanceClockError>)?;
        Ok(SandboxClock { now: now_date(now) })
    }

    async fn sandbox_send_webhook_test(
        &self,
        caller: Caller,
        body: SandboxWebhookTestRequest,
    ) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> {
        let event = WebhookEvent::WebhookTest(WebhookTestEvent {
            tag: Default::default(),
            r#type: Default::default(),
            message: body.message.unwrap_or_else(|| "test".into()),
        });
        let event = self
            .event(&caller.project_id, event, Some(body.webhook_url))
            .await
            .map_err(storage::<SandboxSendWebhookTestError>)?;
        let event_id = event.id.clone();
        self.db(move |s| s.append_events(&[event])).await.map_err(storage::<SandboxSendWebhookTestError>)?;
        Ok(SandboxWebhookTest { event_id })
    }

    async fn sandbox_list_webhook_deliveries(
        &self,
        caller: Caller,
        query: SandboxListWebhookDeliveriesQuery,
    ) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> {
        let project = caller.project_id.clone();
        let items = self
            .db(move |s| s.delivery_attempts(&project, query.event_id.as_deref(), 500))
            .await
            .map_err(storage::<SandboxListWebhookDeliveriesError>)?;
        Ok(SandboxWebhookDeliveries { items })
    }
}

pub fn now_date(ms: i64) -> DateString {
    DateString::from_millis(ms).unwrap_or(DateString::MIN)
}

pub fn address_not_found(address: &str) -> DepositAddressNotFound {
    DepositAddressNotFound {
        tag: Default::default(),
        message: format!("no deposit address {address} with that destination"),
        addresses: vec![address.to_owned()],
    }
}

/// What the deposit-address module needs of the service.
impl Sandbox {
    pub(crate) fn catalogue(&self) -> &Catalogue {
        &self.0.catalogue
    }
    pub(crate) async fn store_call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        self.db(f).await
    }
    pub(crate) async fn next(&self, name: &'static str) -> anyhow::Result<u64> {
        self.counter(name).await
    }
    pub(crate) async fn make_event(
        &self,
        project: &str,
        event: WebhookEvent,
        webhook_url: Option<String>,
    ) -> anyhow::Result<NewEvent> {
        self.event(project, event, webhook_url).await
    }
    pub(crate) fn bridge_from_deposit_quote(
        &self,
        quote: &StoredQuote,
        now_ms: i64,
        deposit_address: &str,
    ) -> anyhow::Result<Value> {
        self.record_from_quote(quote, now_ms, Some(deposit_address))
    }
    pub(crate) fn new_stored_bridge(
        &self,
        project: &str,
        id: &str,
        record: Value,
        now_ms: i64,
        next_ms: Option<i64>,
        webhook_url: Option<String>,
    ) -> anyhow::Result<StoredBridge> {
        self.stored_bridge(project, id, record, now_ms, next_ms, webhook_url)
    }
}
