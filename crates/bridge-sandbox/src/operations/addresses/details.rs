//! A deposit address's own views (production endpoints beyond the spec): its status as created, its deposits in a
//! date window, its completed refunds, the tokens an address between two chains accepts, and the project's
//! creation limits. Every view of one address answers `DepositAddressNotFound` for an address of another project,
//! exactly as for one that does not exist.

use bridge_contract::operations::{
    GetDepositAddressCompletedRefundsError, GetDepositAddressHistoryError, GetDepositAddressRateLimitStatusError,
    GetDepositAddressStatusError, GetDepositAddressSupportedTokensError,
};
use bridge_contract::{
    BridgeRecord, CompletedRefund, CompletedRefunds, DateString, DecimalString, DepositAddressChainsNotSupported,
    DepositAddressHistory, DepositAddressHistoryAccepted, DepositAddressHistoryEntry, DepositAddressHistoryRejected,
    DepositAddressHistoryUnprocessable, DepositAddressNoBridgableTokens, DepositAddressRateLimitStatus,
    DepositAddressStatus, DepositAddressTokenOutNotSupported, GetDepositAddressCompletedRefundsPath,
    GetDepositAddressHistoryPath, GetDepositAddressHistoryQuery, GetDepositAddressStatusPath,
    GetDepositAddressSupportedTokensPath, GetDepositAddressSupportedTokensQuery, InvalidDateRange, LastBridgeStatus,
    PublicStatusUnprocessable, SupportedTokens, TotalLimit, TotalLimited, Unlimited, WebhookEvent, WindowLimit,
    WindowLimited,
};
use bridge_server::Caller;
use rust_decimal::Decimal;

use crate::domain::catalogue::usd_number;
use crate::infra::core::Core;
use crate::infra::store::{StoreResult, StoredAddress, StoredDeposit};
use crate::operations::addresses::not_found;

/// Longest deposit-history window, and the window when `from` is absent (production's).
pub const MAX_HISTORY_WINDOW_MS: i64 = 31 * DAY_MS;
pub const DEFAULT_HISTORY_WINDOW_MS: i64 = 7 * DAY_MS;
const DAY_MS: i64 = 24 * 3600 * 1000;
/// Deposits of one address the history reads at most (the sandbox keeps them all; this bounds one answer).
const HISTORY_READ: u64 = 10_000;
/// Events read per store call while looking for an address's refunds.
const EVENT_BATCH: u64 = 500;

impl Core {
    /// The caller's address on a chain, or `None` (unknown, or another project's).
    async fn own_address(&self, caller: &Caller, chain: &str, address: &str) -> StoreResult<Option<StoredAddress>> {
        Ok(self.store.address(chain, address).await?.filter(|a| a.project == caller.project_id))
    }

    /// `GET /sda/deposit-addresses/{depositAddress}/{depositChain}`.
    pub async fn get_deposit_address_status(
        &self,
        caller: &Caller,
        path: GetDepositAddressStatusPath,
    ) -> Result<DepositAddressStatus, GetDepositAddressStatusError> {
        let Some(stored) = self.own_address(caller, &path.deposit_chain, &path.deposit_address).await? else {
            return Err(PublicStatusUnprocessable::from(not_found(&path.deposit_address)).into());
        };
        let a = stored.address;
        Ok(DepositAddressStatus {
            deposit_chain: a.deposit_chain,
            deposit_address: a.deposit_address,
            destination_chain: a.destination_chain,
            destination_address: a.destination_address,
            address_note: a.address_note,
            supported_tokens: a.supported_tokens,
            is_active: a.is_active,
            post_bridge_data: a.post_bridge_data,
            token_out: a.token_out,
            refund_address: a.refund_address,
            bridge_if_not_swappable: a.bridge_if_not_swappable,
            chain_metadata: a.chain_metadata,
        })
    }

    /// `GET /sda/deposit-addresses/{depositAddress}/{depositChain}/history?from&to`: the deposits seen in the window,
    /// oldest first: each rejected one, and each bridged one with its bridge record. (A deposit still waiting for its
    /// bridge, `RETRYING`, is listed once it is bridged or rejected.)
    pub async fn get_deposit_address_history(
        &self,
        caller: &Caller,
        path: GetDepositAddressHistoryPath,
        query: GetDepositAddressHistoryQuery,
    ) -> Result<DepositAddressHistory, GetDepositAddressHistoryError> {
        let Some(stored) = self.own_address(caller, &path.deposit_chain, &path.deposit_address).await? else {
            return Err(DepositAddressHistoryUnprocessable::from(not_found(&path.deposit_address)).into());
        };
        let (from, to) = history_window(self.now_of(&caller.project_id).await?, query.from, query.to)
            .map_err(DepositAddressHistoryUnprocessable::from)?;
        let mut deposits = self.store.deposits(&path.deposit_chain, &path.deposit_address, HISTORY_READ).await?;
        deposits.reverse();
        let mut bridges = Vec::new();
        for deposit in deposits {
            let at = deposit.last_bridge.deposit_tx_timestamp.millis();
            if at < from || at > to {
                continue;
            }
            if let Some(entry) = self.history_entry(caller, &stored, &deposit).await? {
                bridges.push(entry);
            }
        }
        Ok(DepositAddressHistory { deposit_address: path.deposit_address, deposit_chain: path.deposit_chain, bridges })
    }

    /// The token amount in its smallest unit (`amountWei`), and its USD value.
    fn deposit_amounts(
        &self,
        chain: &str,
        symbol: &str,
        amount: &DecimalString,
    ) -> (String, bridge_contract::DecimalNumber, String) {
        let token = self.catalogue.chain(chain).and_then(|c| c.token(symbol));
        let value = amount.to_decimal().unwrap_or_default();
        let (address, wei, usd) = match token {
            Some(t) => {
                let wei = (value * Decimal::from(10u64.pow(t.decimals.min(18)))).trunc();
                (t.address.clone(), wei.to_string(), value * t.usd_price)
            }
            None => (String::new(), value.trunc().to_string(), Decimal::ZERO),
        };
        (address, usd_number(usd), wei)
    }

    async fn history_entry(
        &self,
        caller: &Caller,
        stored: &StoredAddress,
        deposit: &StoredDeposit,
    ) -> StoreResult<Option<DepositAddressHistoryEntry>> {
        let last = &deposit.last_bridge;
        let chain = &stored.address.deposit_chain;
        let (token_address, amount_usd, amount_wei) =
            self.deposit_amounts(chain, &last.token_symbol, &last.deposit_amount);
        let id = deposit.bridge_id.clone().unwrap_or_else(|| last.deposit_tx_hash.clone());
        let bridge = match &deposit.bridge_id {
            Some(bridge_id) => self.store.bridge(&caller.project_id, bridge_id).await?,
            None => None,
        };
        if let Some(record @ BridgeRecord::DepositAddressBridge(_)) = bridge.map(|b| b.record) {
            return Ok(Some(
                DepositAddressHistoryAccepted {
                    tag: Default::default(),
                    id,
                    token_symbol: last.token_symbol.clone(),
                    token_address,
                    amount: last.deposit_amount.clone(),
                    amount_usd,
                    amount_wei,
                    sender: last.sender.clone(),
                    tx_hash: last.deposit_tx_hash.clone(),
                    history: record,
                    created_at: last.deposit_tx_timestamp,
                }
                .into(),
            ));
        }
        Ok(match &last.status {
            LastBridgeStatus::Rejected(rejected) => Some(
                DepositAddressHistoryRejected {
                    tag: Default::default(),
                    id,
                    token_symbol: last.token_symbol.clone(),
                    token_address,
                    amount: last.deposit_amount.clone(),
                    amount_usd,
                    amount_wei,
                    sender: last.sender.clone(),
                    tx_hash: last.deposit_tx_hash.clone(),
                    reason: rejected.reason,
                    tx_uid: last.deposit_tx_hash.clone(),
                    created_at: last.deposit_tx_timestamp,
                }
                .into(),
            ),
            _ => None,
        })
    }

    /// `GET /sda/deposit-addresses/{depositAddress}/{depositChain}/completed-refunds`: the refunds of this address's
    /// deposits that the project's event log holds (its `SDA_REFUND_COMPLETED` events), oldest first.
    pub async fn get_deposit_address_completed_refunds(
        &self,
        caller: &Caller,
        path: GetDepositAddressCompletedRefundsPath,
    ) -> Result<CompletedRefunds, GetDepositAddressCompletedRefundsError> {
        if self.own_address(caller, &path.deposit_chain, &path.deposit_address).await?.is_none() {
            return Err(PublicStatusUnprocessable::from(not_found(&path.deposit_address)).into());
        }
        let mut items = Vec::new();
        let mut after = 0;
        loop {
            let events = self.store.events(&caller.project_id, i64::MIN, after, EVENT_BATCH).await?;
            let Some((last, _)) = events.last() else { break };
            after = *last;
            for (_, event) in events {
                if let WebhookEvent::SdaRefundCompleted(e) =
                    event.decode().map_err(crate::infra::store::StoreError::new)?
                {
                    if e.deposit_address == path.deposit_address && e.deposit_chain == path.deposit_chain {
                        items.push(CompletedRefund {
                            refund_id: e.refund_id,
                            deposit_address: e.deposit_address,
                            deposit_chain: e.deposit_chain,
                            recipient: e.recipient,
                            trigger: e.trigger,
                            original_deposit_tx_hash: e.original_deposit_tx_hash,
                            tx_hash: e.tx_hash,
                            tx_timestamp: e.tx_timestamp,
                        });
                    }
                }
            }
        }
        Ok(CompletedRefunds { items })
    }

    /// `GET /sda/deposit-addresses/{depositChain}/{destinationChain}/supported-tokens?tokenOut`: what
    /// `POST /sda/deposit-addresses` would answer as `supportedTokens`, with the same refusals.
    pub async fn get_deposit_address_supported_tokens(
        &self,
        path: GetDepositAddressSupportedTokensPath,
        query: GetDepositAddressSupportedTokensQuery,
    ) -> Result<SupportedTokens, GetDepositAddressSupportedTokensError> {
        let catalogue = &self.catalogue;
        let unsupported: Vec<String> = [&path.deposit_chain, &path.destination_chain]
            .into_iter()
            .filter(|c| catalogue.chain(c).is_none())
            .cloned()
            .collect();
        if !unsupported.is_empty() {
            return Err(DepositAddressChainsNotSupported::new(unsupported).into());
        }
        if let Some(token_out) = &query.token_out {
            if !catalogue.chain(&path.destination_chain).is_some_and(|c| c.tokens.contains_key(token_out)) {
                return Err(DepositAddressTokenOutNotSupported::new(token_out.clone()).into());
            }
        }
        let supported_tokens =
            catalogue.supported_tokens(&path.deposit_chain, &path.destination_chain, query.token_out.as_deref());
        if supported_tokens.is_empty() {
            return Err(DepositAddressNoBridgableTokens::new(path.deposit_chain, path.destination_chain).into());
        }
        Ok(SupportedTokens { supported_tokens })
    }

    /// `GET /sda/deposit-addresses/rate-limit-status`.
    pub async fn get_deposit_address_rate_limit_status(
        &self,
        caller: &Caller,
    ) -> Result<DepositAddressRateLimitStatus, GetDepositAddressRateLimitStatusError> {
        let limits = self.catalogue.address_limits(&caller.project_id);
        let since =
            self.now_of(&caller.project_id).await?.saturating_sub(i64::try_from(limits.window_ms).unwrap_or(i64::MAX));
        let (total, in_window) = self.store.address_counts(&caller.project_id, since).await?;
        let total_limit = match limits.total {
            Some(value) => TotalLimit::Limited(TotalLimited::new(value)),
            None => TotalLimit::Unlimited(Unlimited::new()),
        };
        let (window_limit, window_created) = match limits.window {
            Some(value) => (WindowLimit::Limited(WindowLimited::new(value, limits.window_ms)), Some(in_window)),
            None => (WindowLimit::Unlimited(Unlimited::new()), None),
        };
        Ok(DepositAddressRateLimitStatus { total_limit, total_created: total, window_limit, window_created })
    }
}

/// The window `[from, to]` of a history request: `to` defaults to now, `from` to 7 days before `to`.
pub fn history_window(
    now_ms: i64,
    from: Option<DateString>,
    to: Option<DateString>,
) -> Result<(i64, i64), InvalidDateRange> {
    let to = to.map_or(now_ms, DateString::millis);
    let from = from.map_or(to - DEFAULT_HISTORY_WINDOW_MS, DateString::millis);
    if from > to {
        return Err(InvalidDateRange::new("from must not be after to"));
    }
    if to - from > MAX_HISTORY_WINDOW_MS {
        return Err(InvalidDateRange::new("the window from..to must not be longer than 31 days"));
    }
    Ok((from, to))
}
