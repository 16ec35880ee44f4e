//! Bridge records: the history and one record (`GET /bridge/history/...`), lookups by transaction hash, the
//! owner's cancel, and the sandbox helper that pays a committed bridge's deposit. What moves bridges as time passes
//! is the lifecycle pass ([`crate::pipeline::lifecycle`]).

use bridge_contract::operations::{
    CancelBridgeError, GetBridgeByWithdrawHashError, GetBridgeError, GetBridgesByDepositHashError,
    ListBridgeHistoryCursorError, ListBridgeHistoryError, SandboxDepositBridgeError,
};
use bridge_contract::{
    BridgeNotFound, BridgeRecord, CancelBridgePath, CancelBridgeRequest, CannotCancelBridge,
    GetBridgeByWithdrawHashPath, GetBridgePath, GetBridgesByDepositHashPath, HistoryCursorPage, HistoryItem,
    HistoryNotFound, HistoryPage, HistorySortBy, InvalidRequest, ListBridgeHistoryCursorQuery, ListBridgeHistoryQuery,
    SandboxBridgeDepositRequest, SandboxBridgeOutcome, SandboxDepositBridgePath,
};
use bridge_server::{Answer, Caller};

use crate::domain::ids;
use crate::domain::lifecycle;
use crate::domain::records::{self, Plan, SeenDeposit, StoredBridge};
use crate::infra::core::Core;
use crate::infra::store::{Counter, HistoryCursorQuery, HistoryQuery, StoreError, StoreResult};

/// Largest history page (the spec leaves it open; docs/integrating.md, "Limits").
pub const MAX_HISTORY_LIMIT: u64 = 100;

impl Core {
    pub async fn list_bridge_history(
        &self,
        caller: &Caller,
        query: ListBridgeHistoryQuery,
    ) -> Result<HistoryPage, ListBridgeHistoryError> {
        let (page, limit) = (query.page.as_f64(), query.limit.as_f64());
        if page < 1.0 || page.fract() != 0.0 {
            return Err(InvalidRequest::new("page must be a whole number, 1 or more (pages are 1-based)").into());
        }
        if limit < 1.0 || limit.fract() != 0.0 || limit > MAX_HISTORY_LIMIT as f64 {
            return Err(
                InvalidRequest::new(format!("limit must be a whole number from 1 to {MAX_HISTORY_LIMIT}")).into()
            );
        }
        let q = HistoryQuery {
            state: query.state,
            sort_by: query.sort_by,
            direction: query.sort_direction,
            offset: (page as u64 - 1).saturating_mul(limit as u64),
            limit: limit as u64,
        };
        let (total, bridges) = self.store.history(&caller.project_id, &q).await?;
        Ok(HistoryPage {
            total_items: total,
            items: bridges.into_iter().map(|b| HistoryItem { bridge: b.record, rejections: b.rejections }).collect(),
        })
    }

    /// `GET /bridge/history/bridge/{bridgeId}`: the record as it was stored, not decoded and re-encoded.
    pub async fn get_bridge(
        &self,
        caller: &Caller,
        path: GetBridgePath,
    ) -> Result<Answer<BridgeRecord>, GetBridgeError> {
        match self.store.bridge_record(&caller.project_id, &path.bridge_id).await? {
            Some(record) => Ok(record.into()),
            None => Err(InvalidRequest::new(format!("no bridge {}", path.bridge_id)).into()),
        }
    }

    /// The caller's bridge `bridge_id`, to change (another project's is not found either).
    async fn owned_bridge(
        &self,
        caller: &Caller,
        bridge_id: &str,
    ) -> StoreResult<Result<StoredBridge, BridgeNotFound>> {
        Ok(self
            .store
            .bridge(&caller.project_id, bridge_id)
            .await?
            .ok_or_else(|| BridgeNotFound::new(format!("no bridge {bridge_id}"))))
    }

    /// `POST /sandbox/bridges/{bridgeId}/deposit`: the depositor pays a PENDING bridge (or, late, a CANCELLED swap).
    pub async fn sandbox_deposit_bridge(
        &self,
        caller: &Caller,
        path: SandboxDepositBridgePath,
        body: SandboxBridgeDepositRequest,
    ) -> Result<BridgeRecord, SandboxDepositBridgeError> {
        until_saved(&path.bridge_id, || self.try_deposit_bridge(caller, &path, &body)).await
    }

    /// One read, change and save of [`Self::sandbox_deposit_bridge`]; `None` when the bridge was saved by someone else in between.
    async fn try_deposit_bridge(
        &self,
        caller: &Caller,
        path: &SandboxDepositBridgePath,
        body: &SandboxBridgeDepositRequest,
    ) -> Result<Option<BridgeRecord>, SandboxDepositBridgeError> {
        let mut bridge = self.owned_bridge(caller, &path.bridge_id).await??;
        let swap = matches!(bridge.record, BridgeRecord::BridgeSwap(_));
        let late = swap && records::is_cancelled(&bridge.record);
        if !records::is_pending(&bridge.record) && !late {
            let state = records::state_name(&bridge.record);
            return Err(InvalidRequest::new(format!("bridge {} is {state}, not PENDING", bridge.id)).into());
        }
        match body.outcome {
            Some(SandboxBridgeOutcome::SwapFailed) if !swap => {
                return Err(InvalidRequest::new("outcome swapFailed needs a bridgeSwap record").into())
            }
            Some(SandboxBridgeOutcome::Failed) if !matches!(bridge.record, BridgeRecord::Bridge(_)) => {
                return Err(InvalidRequest::new(
                    "outcome failed needs a single-token bridge record (a bridgeSwap record fails with swapFailed)",
                )
                .into())
            }
            Some(outcome) if late && outcome != SandboxBridgeOutcome::Executed => {
                return Err(InvalidRequest::new(format!(
                    "bridge {} is CANCELLED: a late deposit is refunded, whatever the outcome",
                    bridge.id
                ))
                .into())
            }
            Some(SandboxBridgeOutcome::SwapFailed) => bridge.plan = Some(Plan::SwapFailed),
            Some(SandboxBridgeOutcome::Failed) => bridge.plan = Some(Plan::Failed),
            Some(SandboxBridgeOutcome::Executed) | None => {}
        }
        let seed = self.next(Counter::Tx).await?;
        let tx_hash = body.tx_hash.clone().unwrap_or_else(|| ids::tx_hash(seed));
        let now = self.now_of(&caller.project_id).await?;
        let moved = if late {
            lifecycle::late_deposit(&mut bridge, &tx_hash, now)
        } else {
            lifecycle::see_deposit(&mut bridge, &SeenDeposit { tx_hash, block: ids::block(seed) }, now)
        };
        if let Err(stuck) = moved {
            // Checked above: a PENDING record sees its deposit, a CANCELLED swap takes a late one.
            return Err(InvalidRequest::new(format!("bridge {}: {stuck}", bridge.id)).into());
        }
        if !self.store.save_bridge(&bridge, &[]).await? {
            return Ok(None);
        }
        tracing::info!(project = %caller.project_id, bridge = %path.bridge_id, "deposit seen");
        Ok(Some(bridge.record))
    }

    // ----------------------------------------------------------------- production endpoints beyond the spec (issue 17)

    /// `PATCH /bridge/history/bridge/{bridgeId}`: the owner cancels a PENDING bridge whose deposit was not paid.
    pub async fn cancel_bridge(
        &self,
        caller: &Caller,
        path: CancelBridgePath,
        _body: CancelBridgeRequest,
    ) -> Result<BridgeRecord, CancelBridgeError> {
        let _pass = self.pass.lock().await;
        until_saved(&path.bridge_id, || self.try_cancel_bridge(caller, &path)).await
    }

    /// One read, change and save of [`Self::cancel_bridge`]; `None` when the bridge was saved by someone else in between.
    async fn try_cancel_bridge(
        &self,
        caller: &Caller,
        path: &CancelBridgePath,
    ) -> Result<Option<BridgeRecord>, CancelBridgeError> {
        let mut bridge = self.owned_bridge(caller, &path.bridge_id).await??;
        let now = self.now_of(&caller.project_id).await?;
        let event = lifecycle::cancel(&mut bridge, now).map_err(|stuck| {
            CannotCancelBridge::new(format!("bridge {} cannot be cancelled: {stuck}", path.bridge_id))
        })?;
        let event = self.event(&bridge.project, now, event, bridge.webhook_url.clone()).await?;
        if !self.store.save_bridge(&bridge, &[event]).await? {
            return Ok(None);
        }
        tracing::info!(project = %caller.project_id, bridge = %path.bridge_id, "bridge cancelled");
        Ok(Some(bridge.record))
    }

    /// `GET /bridge/history-cursor/user`: the page history's filter and order, by cursor.
    pub async fn list_bridge_history_cursor(
        &self,
        caller: &Caller,
        query: ListBridgeHistoryCursorQuery,
    ) -> Result<HistoryCursorPage, ListBridgeHistoryCursorError> {
        let size = query.page_size.as_f64();
        if size < 1.0 || size.fract() != 0.0 || size > MAX_HISTORY_LIMIT as f64 {
            return Err(
                InvalidRequest::new(format!("pageSize must be a whole number from 1 to {MAX_HISTORY_LIMIT}")).into()
            );
        }
        let this_query = HistoryCursor::query_of(&query);
        let foreign = "pageToken is not a nextPageToken of this history query (same sortBy, sortDirection and state)";
        let after = match &query.page_token {
            None => None,
            Some(token) => match HistoryCursor::decode(token) {
                Some(cursor) if cursor.query == this_query => Some((cursor.key, cursor.id)),
                _ => return Err(InvalidRequest::new(foreign).into()),
            },
        };
        let limit = size as u64;
        let q = HistoryCursorQuery {
            state: query.state,
            sort_by: query.sort_by,
            direction: query.sort_direction,
            after,
            // One more than asked: whether a next page exists.
            limit: limit + 1,
        };
        let mut bridges = self.store.history_after(&caller.project_id, &q).await?;
        let more = bridges.len() as u64 > limit;
        bridges.truncate(limit as usize);
        let next_page_token = match bridges.last() {
            Some(last) if more => {
                let key = match query.sort_by {
                    HistorySortBy::CreatedAt => last.created_ms,
                    HistorySortBy::UpdatedAt => last.updated_ms,
                };
                Some(HistoryCursor { query: this_query, key, id: last.id.clone() }.encode())
            }
            _ => None,
        };
        Ok(HistoryCursorPage {
            items: bridges.into_iter().map(|b| HistoryItem { bridge: b.record, rejections: b.rejections }).collect(),
            next_page_token,
        })
    }

    /// `GET /bridge/history/bridge/by-deposit-hash/{depositTxHash}`: every record of that deposit.
    pub async fn get_bridges_by_deposit_hash(
        &self,
        caller: &Caller,
        path: GetBridgesByDepositHashPath,
    ) -> Result<Vec<BridgeRecord>, GetBridgesByDepositHashError> {
        let bridges = self.store.bridges_by_deposit_hash(&caller.project_id, &path.deposit_tx_hash).await?;
        if bridges.is_empty() {
            return Err(HistoryNotFound::new(path.deposit_tx_hash).into());
        }
        Ok(bridges.into_iter().map(|b| b.record).collect())
    }

    /// `GET /bridge/history/bridge/by-withdraw-hash/{withdrawTxHash}`: the EXECUTED record of that withdrawal.
    pub async fn get_bridge_by_withdraw_hash(
        &self,
        caller: &Caller,
        path: GetBridgeByWithdrawHashPath,
    ) -> Result<BridgeRecord, GetBridgeByWithdrawHashError> {
        let bridges = self.store.bridges_by_withdraw_hash(&caller.project_id, &path.withdraw_tx_hash).await?;
        bridges.into_iter().map(|b| b.record).find(records::is_executed).ok_or_else(|| {
            InvalidRequest::new(format!("no executed bridge withdrew in {}", path.withdraw_tx_hash)).into()
        })
    }
}

/// How many times a request reads, changes and saves a bridge that others keep saving in between.
const SAVE_ATTEMPTS: usize = 5;

/// The failure of a request whose [`SAVE_ATTEMPTS`] saves all found the bridge saved by someone else in between:
/// 503, nothing changed by the request.
fn kept_changing(bridge_id: &str) -> StoreError {
    StoreError::new(anyhow::anyhow!("bridge {bridge_id} kept changing while this request changed it"))
}

/// Runs `attempt` (one read, change and save of bridge `bridge_id`; `None` when someone else saved it in between)
/// until it saves, at most [`SAVE_ATTEMPTS`] times.
async fn until_saved<T, E: From<StoreError>, F: std::future::Future<Output = Result<Option<T>, E>>>(
    bridge_id: &str,
    mut attempt: impl FnMut() -> F,
) -> Result<T, E> {
    for _ in 0..SAVE_ATTEMPTS {
        if let Some(saved) = attempt().await? {
            return Ok(saved);
        }
    }
    Err(kept_changing(bridge_id).into())
}

/// The opaque cursor of the cursor-paged history: the query it belongs to and the last record's (sort key, id),
/// base64url of `sortBy|sortDirection|state|key|id`. A token of another query, or not made here, is refused.
struct HistoryCursor {
    query: String,
    key: i64,
    id: String,
}

impl HistoryCursor {
    fn query_of(q: &ListBridgeHistoryCursorQuery) -> String {
        let state = q.state.map_or("", |s| s.as_str());
        format!("{}|{}|{state}", q.sort_by.as_str(), q.sort_direction.as_str())
    }

    fn encode(&self) -> String {
        data_encoding::BASE64URL_NOPAD.encode(format!("{}|{}|{}", self.query, self.key, self.id).as_bytes())
    }

    fn decode(token: &str) -> Option<Self> {
        let bytes = data_encoding::BASE64URL_NOPAD.decode(token.as_bytes()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut parts = text.splitn(5, '|');
        let query = [parts.next()?, parts.next()?, parts.next()?].join("|");
        let key = parts.next()?.parse().ok()?;
        let id = parts.next()?.to_owned();
        Some(Self { query, key, id })
    }
}
