//! Smart deposit addresses: creation (with production's validations and the reuse policy), search, and the
//! public status with the recent deposits (simulated by [`crate::operations::deposits`]).
//!
//! Reuse: unless `reusePolicy` is `create-new`, a request reuses the project's existing address on a deposit
//! chain when every other member of the request (destination, `tokenOut`, `addressNote`, `webhookUrl`,
//! `refundAddress`, `postBridgeData`, `bridgeIfNotSwappable`) is the same. The addresses made by one request
//! share one seed.

pub mod details;

use bridge_contract::operations::{
    CreateDepositAddressesError, GetDepositAddressPublicStatusError, SearchDepositAddressesError,
};
use bridge_contract::{
    CountLimitExceeded, DecimalNumber, DepositAddress, DepositAddressChainsNotSupported, DepositAddressCreateRequest,
    DepositAddressCreatedEvent, DepositAddressInvalidDestinationAddress, DepositAddressInvalidRefundAddress,
    DepositAddressLimit, DepositAddressMultipleChainTypesNotAllowed, DepositAddressNoBridgableTokens,
    DepositAddressNotFound, DepositAddressRateLimitExceeded, DepositAddressSearchItem, DepositAddressSearchPage,
    DepositAddressTokenOutNotSupported, ExtensionNotEnabled, GetDepositAddressPublicStatusPath,
    GetDepositAddressPublicStatusQuery, InvalidRequest, LastBridge, LastBridgeAccepted, LastBridgeExecuted,
    LastBridgeRejected, LastBridgeStatus, PublicDepositAddressStatus, PublicStatusUnprocessable, RejectReason,
    ReusePolicy, SearchDepositAddressesQuery, WindowLimitExceeded,
};
use bridge_server::Caller;

use crate::domain::records::{self, Plan};
use crate::infra::core::Core;
use crate::infra::store::{
    AddressSearch, Counter, StoreError, StoreResult, StoredAddress, StoredBridge, StoredDeposit,
};

/// How many of an address's deposits the public status lists.
const LAST_BRIDGES: u64 = 10;
/// Default and largest deposit-address search page (the spec leaves them open; docs/integrating.md, "Limits").
pub const DEFAULT_SEARCH_PAGE: u64 = 20;
pub const MAX_SEARCH_PAGE: u64 = 100;

/// The answer for an address that does not exist, is another project's, or has another destination.
pub fn not_found(address: &str) -> DepositAddressNotFound {
    DepositAddressNotFound::new(format!("no deposit address {address} with that destination"), vec![address.to_owned()])
}

/// The key under which a request's addresses are reused: the request's JSON without its deposit chains and reuse
/// policy (the JSON of earlier versions' keys, member for member, so their addresses are still reused).
fn reuse_key(body: &DepositAddressCreateRequest) -> Result<String, StoreError> {
    let options = DepositAddressCreateRequest { deposit_chains: Vec::new(), reuse_policy: None, ..body.clone() };
    let mut options = serde_json::to_value(&options).map_err(StoreError::new)?;
    // The emptied chains are the only array at the top of the request (the policy is absent already).
    if let Some(members) = options.as_object_mut() {
        members.retain(|_, value| !value.is_array());
    }
    Ok(options.to_string())
}

impl Core {
    pub async fn create_deposit_addresses(
        &self,
        caller: &Caller,
        body: DepositAddressCreateRequest,
    ) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
        self.check_webhook_url(body.webhook_url.as_deref()).await?;
        if body.post_bridge_data.is_some() && !caller.has_post_bridge_data() {
            return Err(ExtensionNotEnabled::new(
                "postBridgeData is not enabled for this project",
                bridge_server::auth::POST_BRIDGE_DATA,
            )
            .into());
        }
        let catalogue = &self.catalogue;
        let mut unsupported: Vec<String> =
            body.deposit_chains.iter().filter(|c| catalogue.chain(c).is_none()).cloned().collect();
        if catalogue.chain(&body.destination_chain).is_none() {
            unsupported.push(body.destination_chain.clone());
        }
        if !unsupported.is_empty() {
            return Err(DepositAddressChainsNotSupported::new(unsupported).into());
        }
        let mut families: Vec<String> = body
            .deposit_chains
            .iter()
            .filter_map(|c| catalogue.chain(c))
            .map(|c| c.family.as_str().to_owned())
            .collect();
        families.sort();
        families.dedup();
        if families.len() > 1 {
            return Err(DepositAddressMultipleChainTypesNotAllowed::new(families).into());
        }
        if catalogue.invalid_address(&body.destination_chain, &body.destination_address).is_some() {
            return Err(DepositAddressInvalidDestinationAddress::new(
                body.destination_chain.clone(),
                body.destination_address.clone(),
            )
            .into());
        }
        if let Some(token_out) = &body.token_out {
            let on_destination =
                catalogue.chain(&body.destination_chain).is_some_and(|c| c.tokens.contains_key(token_out));
            if !on_destination {
                return Err(DepositAddressTokenOutNotSupported::new(token_out.clone()).into());
            }
        }
        if let Some(refund) = &body.refund_address {
            if let Some(reason) = catalogue.invalid_address(&body.deposit_chains[0], refund) {
                return Err(DepositAddressInvalidRefundAddress::new(reason).into());
            }
        }
        let reuse_key = reuse_key(&body)?;
        let reuse = body.reuse_policy != Some(ReusePolicy::CreateNew);
        let now = self.now_of(&caller.project_id).await?;
        if self.creates_any(caller, &body, &reuse_key, reuse).await? {
            if let Some(limit) = self.address_limit_reached(caller, now).await? {
                let message =
                "too many deposit addresses created by this project; see GET /sda/deposit-addresses/rate-limit-status";
                return Err(DepositAddressRateLimitExceeded::new(message, limit).into());
            }
        }
        let mut seed = self.next(Counter::Address).await?;

        let mut answer = Vec::new();
        let mut new_addresses: Vec<StoredAddress> = Vec::new();
        let mut events = Vec::new();
        for chain in &body.deposit_chains {
            if reuse {
                if let Some(existing) = self.store.reusable_address(&caller.project_id, chain, &reuse_key).await? {
                    answer.push(existing.address);
                    continue;
                }
            }
            let supported_tokens =
                catalogue.supported_tokens(chain, &body.destination_chain, body.token_out.as_deref());
            if supported_tokens.is_empty() {
                return Err(DepositAddressNoBridgableTokens::new(chain.clone(), body.destination_chain.clone()).into());
            }
            let (deposit_address, chain_metadata) = loop {
                let Some((address, metadata)) = catalogue.deposit_address(chain, seed) else {
                    return Err(DepositAddressChainsNotSupported::new(vec![chain.clone()]).into());
                };
                let taken = self.store.address_taken(chain, &address).await?
                    || new_addresses
                        .iter()
                        .any(|n| &n.address.deposit_chain == chain && n.address.deposit_address == address);
                if !taken {
                    break (address, metadata);
                }
                seed = self.next(Counter::Address).await?;
            };
            let address = DepositAddress {
                deposit_chain: chain.clone(),
                deposit_address: deposit_address.clone(),
                destination_chain: body.destination_chain.clone(),
                supported_tokens,
                is_active: true,
                destination_address: Some(body.destination_address.clone()),
                address_note: body.address_note.clone(),
                post_bridge_data: body.post_bridge_data.clone(),
                token_out: body.token_out.clone(),
                refund_address: body.refund_address.clone(),
                bridge_if_not_swappable: body.bridge_if_not_swappable,
                chain_metadata,
            };
            let search_item = DepositAddressSearchItem {
                destination_address: Some(body.destination_address.clone()),
                address_note: body.address_note.clone(),
                post_bridge_data: body.post_bridge_data.clone(),
                token_out: body.token_out.clone(),
                refund_address: body.refund_address.clone(),
                bridge_if_not_swappable: body.bridge_if_not_swappable,
                chain_metadata: address.chain_metadata.clone(),
                // An empty `webhookUrl` (the deprecated path allows it) means no webhook.
                webhook_url: body.webhook_url.clone().filter(|u| !u.is_empty()),
                ..DepositAddressSearchItem::new(
                    chain.clone(),
                    deposit_address.clone(),
                    body.destination_chain.clone(),
                    caller.project_id.clone(),
                )
            };
            let created = DepositAddressCreatedEvent {
                destination_address: Some(body.destination_address.clone()),
                token_out: body.token_out.clone(),
                post_bridge_data: body.post_bridge_data.clone(),
                address_note: body.address_note.clone(),
                ..DepositAddressCreatedEvent::new(
                    chain.clone(),
                    deposit_address.clone(),
                    body.destination_chain.clone(),
                )
            };
            events.push(self.event(&caller.project_id, now, created, body.webhook_url.clone()).await?);
            new_addresses.push(StoredAddress {
                project: caller.project_id.clone(),
                address: address.clone(),
                search_item,
                reuse_key: reuse_key.clone(),
                webhook_url: body.webhook_url.clone(),
                created_ms: now,
            });
            answer.push(address);
        }
        if !new_addresses.is_empty() {
            self.store.insert_addresses(&new_addresses, &events).await?;
        }
        tracing::info!(project = %caller.project_id, count = answer.len(), "deposit addresses");
        Ok(answer)
    }

    pub async fn search_deposit_addresses(
        &self,
        caller: &Caller,
        query: SearchDepositAddressesQuery,
    ) -> Result<DepositAddressSearchPage, SearchDepositAddressesError> {
        let after = match &query.page_token {
            None => 0,
            Some(token) => token
                .strip_prefix('p')
                .and_then(|hex| i64::from_str_radix(hex, 16).ok())
                .ok_or_else(|| InvalidRequest::new("pageToken is not a token this sandbox gave out"))?,
        };
        let size = query.page_size.map(|n| n.as_f64()).unwrap_or(DEFAULT_SEARCH_PAGE as f64);
        if size < 1.0 || size.fract() != 0.0 || size > MAX_SEARCH_PAGE as f64 {
            return Err(
                InvalidRequest::new(format!("pageSize must be a whole number from 1 to {MAX_SEARCH_PAGE}")).into()
            );
        }
        let search = AddressSearch {
            address_note: query.address_note,
            deposit_chain: query.deposit_chain,
            destination_chain: query.destination_chain,
            destination_address: query.destination_address,
            after,
            limit: size as u64 + 1,
        };
        let mut found = self.store.search_addresses(&caller.project_id, &search).await?;
        let more = found.len() > size as usize;
        found.truncate(size as usize);
        let next_page_token = if more { found.last().map(|(seq, _)| format!("p{seq:x}")) } else { None };
        Ok(DepositAddressSearchPage { next_page_token, items: found.into_iter().map(|(_, a)| a.search_item).collect() })
    }

    pub async fn get_deposit_address_public_status(
        &self,
        caller: &Caller,
        path: GetDepositAddressPublicStatusPath,
        query: GetDepositAddressPublicStatusQuery,
    ) -> Result<PublicDepositAddressStatus, GetDepositAddressPublicStatusError> {
        let stored = match self.store.address(&path.deposit_chain, &path.deposit_address).await? {
            Some(a)
                if a.project == caller.project_id
                    && a.address.destination_address.as_deref() == Some(query.destination_address.as_str()) =>
            {
                a
            }
            _ => return Err(PublicStatusUnprocessable::from(not_found(&path.deposit_address)).into()),
        };
        let mut last_bridges = Vec::new();
        for deposit in self.store.deposits(&path.deposit_chain, &path.deposit_address, LAST_BRIDGES).await? {
            let bridge = match &deposit.bridge_id {
                Some(id) => self.store.bridge(&caller.project_id, id).await?,
                None => None,
            };
            last_bridges.push(live_status(&deposit, bridge.as_ref()));
        }
        Ok(PublicDepositAddressStatus {
            deposit_address: stored.address.deposit_address,
            deposit_chain: stored.address.deposit_chain,
            destination_chain: stored.address.destination_chain,
            destination_address: query.destination_address,
            last_bridges,
            chain_metadata: stored.address.chain_metadata,
        })
    }

    /// Whether the request creates at least one address: a request that only gets back addresses it reuses is not
    /// refused by the creation limits.
    async fn creates_any(
        &self,
        caller: &Caller,
        body: &DepositAddressCreateRequest,
        reuse_key: &str,
        reuse: bool,
    ) -> StoreResult<bool> {
        if !reuse {
            return Ok(true);
        }
        for chain in &body.deposit_chains {
            if self.store.reusable_address(&caller.project_id, chain, reuse_key).await?.is_none() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The creation limit a project has reached (`catalogue::AddressLimits`), checked before a request creates
    /// anything: a request under the limits is served whole, so one that creates several addresses may end above
    /// them by at most its own count. Concurrent requests are not serialised against each other either; the limit is
    /// a guard against runaway clients, as production's is, not an exact quota.
    async fn address_limit_reached(&self, caller: &Caller, now: i64) -> StoreResult<Option<DepositAddressLimit>> {
        let limits = self.catalogue.address_limits(&caller.project_id);
        if limits.total.is_none() && limits.window.is_none() {
            return Ok(None);
        }
        let since = now.saturating_sub(i64::try_from(limits.window_ms).unwrap_or(i64::MAX));
        let (total, in_window) = self.store.address_counts(&caller.project_id, since).await?;
        if let Some(allowed) = limits.total.filter(|allowed| total >= *allowed) {
            return Ok(Some(CountLimitExceeded::new(allowed, total).into()));
        }
        if let Some(allowed) = limits.window.filter(|allowed| in_window >= *allowed) {
            let duration = DecimalNumber::try_from(limits.window_ms as f64).unwrap_or_default();
            return Ok(Some(WindowLimitExceeded::new(allowed, in_window, duration).into()));
        }
        Ok(None)
    }
}

/// The status a deposit shows in `lastBridges`: its own when rejected or still delayed, else its bridge's.
fn live_status(deposit: &StoredDeposit, bridge: Option<&StoredBridge>) -> LastBridge {
    let mut last = deposit.last_bridge.clone();
    let Some(bridge) = bridge else { return last };
    if records::is_failed(&bridge.record) {
        last.status = LastBridgeRejected::new(RejectReason::TerminalProcessingIssue).into();
        return last;
    }
    if matches!(bridge.plan, Some(Plan::Delayed(_))) {
        return last;
    }
    let common = bridge.record.common();
    let (amount_out, fee) = (common.amount_out.clone(), common.fee.clone());
    last.status = match records::withdrawal(&bridge.record) {
        Some((tx_hash, at)) => LastBridgeStatus::Executed(LastBridgeExecuted::new(tx_hash, at, amount_out, fee)),
        None => LastBridgeStatus::Accepted(LastBridgeAccepted::new(amount_out, fee)),
    };
    last
}
