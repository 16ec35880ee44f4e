//! Smart deposit addresses: creation (with the facts file's validations and the reuse policy) and simulated
//! deposits into them.
//!
//! Reuse: unless `reusePolicy` is `create-new`, a request reuses the project's existing address on a deposit
//! chain when every other member of the request (destination, `tokenOut`, `addressNote`, `webhookUrl`,
//! `refundAddress`, `postBridgeData`, `bridgeIfNotSwappable`) is the same. The addresses made by one request
//! share one seed, so chains of one family get the same address (as on EVM chains in production).

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::Caller;
use rust_decimal::Decimal;

use crate::lifecycle;
use crate::pricing;
use crate::service::{address_not_found, now_date, Sandbox};
use crate::store::{StoredAddress, StoredDeposit, StoredQuote};
use crate::ids;

/// Confirmations a deposit into a deposit address needs before its bridge is accepted.
pub const REQUIRED_CONFIRMATIONS: u64 = 12;

fn storage(e: anyhow::Error) -> InvalidRequest {
    tracing::error!(error = %format!("{e:#}"), "storage failure");
    InvalidRequest { tag: Default::default(), message: format!("the sandbox store failed: {e:#}") }
}

/// 422 answers of creation have no `InvalidRequest`; a storage failure is reported as invalid post-bridge data
/// would be, with the cause in the message (it cannot happen short of a broken disk).
fn create_storage(e: anyhow::Error) -> CreateDepositAddressesError {
    let e = storage(e);
    DepositAddressCreateUnprocessable::from(DepositAddressInvalidPostBridgeData { tag: Default::default(), message: e.message }).into()
}

pub async fn create(sb: &Sandbox, caller: &Caller, body: DepositAddressCreateRequest) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
    if body.post_bridge_data.is_some() && !caller.has_post_bridge_data() {
        return Err(ExtensionNotEnabled {
            tag: Default::default(),
            message: "postBridgeData is not enabled for this project".into(),
            extension: bridge_server::auth::POST_BRIDGE_DATA.into(),
        }
        .into());
    }
    let cat = sb.catalogue();
    let unprocessable = |e: DepositAddressCreateUnprocessable| -> CreateDepositAddressesError { e.into() };
    let mut unsupported: Vec<String> = body.deposit_chains.iter().filter(|c| cat.chain(c).is_none()).cloned().collect();
    if cat.chain(&body.destination_chain).is_none() {
        unsupported.push(body.destination_chain.clone());
    }
    if !unsupported.is_empty() {
        return Err(unprocessable(DepositAddressChainsNotSupported { tag: Default::default(), chains: unsupported }.into()));
    }
    let mut families: Vec<String> = body.deposit_chains.iter().filter_map(|c| cat.chain(c)).map(|c| format!("{:?}", c.family).to_uppercase()).collect();
    families.sort();
    families.dedup();
    if families.len() > 1 {
        return Err(unprocessable(DepositAddressMultipleChainTypesNotAllowed { tag: Default::default(), chain_types: families }.into()));
    }
    if cat.invalid_address(&body.destination_chain, &body.destination_address).is_some() {
        return Err(unprocessable(
            DepositAddressInvalidDestinationAddress { tag: Default::default(), chain: body.destination_chain.clone(), address: body.destination_address.clone() }.into(),
        ));
    }
    if let Some(token_out) = &body.token_out {
        let on_destination = cat.chain(&body.destination_chain).is_some_and(|c| c.tokens.contains_key(token_out));
        if !on_destination {
            return Err(unprocessable(DepositAddressTokenOutNotSupported { tag: Default::default(), token_out: token_out.clone() }.into()));
        }
    }
    if let Some(refund) = &body.refund_address {
        if let Some(reason) = cat.invalid_address(&body.deposit_chains[0], refund) {
            return Err(unprocessable(DepositAddressInvalidRefundAddress { tag: Default::default(), message: reason }.into()));
        }
    }
    let mut options = serde_json::to_value(&body).map_err(|e| create_storage(e.into()))?;
    if let Some(map) = options.as_object_mut() {
        map.remove("depositChains");
        map.remove("reusePolicy");
    }
    let reuse_key = options.to_string();
    let reuse = body.reuse_policy != Some(ReusePolicy::CreateNew);
    let now = sb.now_ms();
    let mut seed = sb.next("address").await.map_err(create_storage)?;

    let mut answer = Vec::new();
    let mut new_addresses = Vec::new();
    let mut events = Vec::new();
    for chain in &body.deposit_chains {
        if reuse {
            let (project, chain, key) = (caller.project_id.clone(), chain.clone(), reuse_key.clone());
            if let Some(existing) = sb.store_call(move |s| s.reusable_address(&project, &chain, &key)).await.map_err(create_storage)? {
                answer.push(existing.address);
                continue;
            }
        }
        let supported_tokens = cat.supported_tokens(chain, &body.destination_chain, body.token_out.as_deref());
        if supported_tokens.is_empty() {
            return Err(unprocessable(DepositAddressNoBridgableTokens { tag: Default::default(), from: chain.clone(), to: body.destination_chain.clone() }.into()));
        }
        let (deposit_address, chain_metadata) = loop {
            let Some((address, metadata)) = cat.deposit_address(chain, seed) else {
                return Err(unprocessable(DepositAddressChainsNotSupported { tag: Default::default(), chains: vec![chain.clone()] }.into()));
            };
            let (c, a) = (chain.clone(), address.clone());
            let taken = sb.store_call(move |s| s.address(&c, &a)).await.map_err(create_storage)?.is_some()
                || new_addresses.iter().any(|n: &StoredAddress| &n.address.deposit_chain == chain && n.address.deposit_address == address);
            if !taken {
                break (address, metadata);
            }
            seed = sb.next("address").await.map_err(create_storage)?;
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
            deposit_chain: chain.clone(),
            deposit_address: deposit_address.clone(),
            destination_chain: body.destination_chain.clone(),
            user_id: caller.project_id.clone(),
            destination_address: body.destination_address.clone(),
            address_note: body.address_note.clone(),
            post_bridge_data: body.post_bridge_data.clone(),
            token_out: body.token_out.clone(),
            refund_address: body.refund_address.clone(),
            bridge_if_not_swappable: body.bridge_if_not_swappable,
            webhook_url: body.webhook_url.clone(),
        };
        let created = WebhookEvent::DepositAddressCreated(DepositAddressCreatedEvent {
            tag: Default::default(),
            deposit_chain: chain.clone(),
            deposit_address: deposit_address.clone(),
            destination_chain: body.destination_chain.clone(),
            destination_address: Some(body.destination_address.clone()),
            token_out: body.token_out.clone(),
            post_bridge_data: body.post_bridge_data.clone(),
            address_note: body.address_note.clone(),
        });
        events.push(sb.make_event(&caller.project_id, created, body.webhook_url.clone()).await.map_err(create_storage)?);
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
        sb.store_call(move |s| s.insert_addresses(&new_addresses, &events)).await.map_err(create_storage)?;
    }
    tracing::info!(project = %caller.project_id, count = answer.len(), "deposit addresses");
    Ok(answer)
}

/// `amount` in the token's smallest unit, as an integer string (truncated past the token's decimals).
fn amount_wei(amount: &DecimalString, decimals: u32) -> String {
    match amount.to_decimal() {
        Ok(d) => {
            let scaled = d * Decimal::from_i128_with_scale(10i128.pow(decimals.min(28)), 0);
            scaled.trunc().abs().to_string()
        }
        Err(_) => "0".into(),
    }
}

pub async fn deposit(
    sb: &Sandbox,
    caller: &Caller,
    path: SandboxDepositIntoAddressPath,
    body: SandboxAddressDepositRequest,
) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
    let (chain, addr) = (path.deposit_chain.clone(), path.deposit_address.clone());
    let stored = match sb.store_call(move |s| s.address(&chain, &addr)).await.map_err(|e| PublicStatusUnprocessable::from(storage(e)))? {
        Some(a) if a.project == caller.project_id => a,
        _ => return Err(PublicStatusUnprocessable::from(address_not_found(&path.deposit_address)).into()),
    };
    let cat = sb.catalogue();
    let seed = sb.next("tx").await.map_err(|e| PublicStatusUnprocessable::from(storage(e)))?;
    let tx_hash = ids::tx_hash(seed);
    // A made-up sender in the deposit chain's own address format (a refund of a rejected deposit goes to it).
    let sender = body.sender.clone().unwrap_or_else(|| match cat.deposit_address(&path.deposit_chain, seed ^ 0x5e4d) {
        Some((address, _)) => address,
        None => format!("0x{}", ids::hex_digits(seed ^ 0x5e4d, 40)),
    });
    let now = sb.now_ms();
    let token = cat.chain(&path.deposit_chain).and_then(|c| c.tokens.get(&body.token));
    let token_address = token.map(|t| t.address.clone()).unwrap_or_else(|| "unknown".into());
    let decimals = token.map(|t| t.decimals).unwrap_or(18);
    let amount_usd = token
        .and_then(|t| body.amount.to_decimal().ok().and_then(|a| a.checked_mul(t.usd_price)))
        .map(pricing::usd_number)
        .unwrap_or_default();
    let info = DepositAddressInfo {
        deposit_chain: stored.address.deposit_chain.clone(),
        deposit_address: stored.address.deposit_address.clone(),
        destination_chain: stored.address.destination_chain.clone(),
        destination_address: stored.address.destination_address.clone(),
        token_out: stored.address.token_out.clone(),
        post_bridge_data: stored.address.post_bridge_data.clone(),
        address_note: stored.address.address_note.clone(),
    };
    let deposit_id = format!("dep_{}", ids::hex_digits(seed ^ 0xde90, 24));
    let quote_id = ids::quote_id(sb.next("quote").await.map_err(|e| PublicStatusUnprocessable::from(storage(e)))?);
    let ctx = pricing::QuoteContext { catalogue: cat, project_id: &caller.project_id, now: now_date(now), quote_id };
    let destination_address = stored.address.destination_address.clone().unwrap_or_default();
    let priced = pricing::quote_deposit(
        &ctx,
        &path.deposit_chain,
        &stored.address.destination_chain,
        &destination_address,
        &body.token,
        &body.amount,
        stored.address.token_out.as_deref(),
        &sender,
    );
    let err = |e: anyhow::Error| -> SandboxDepositIntoAddressError { PublicStatusUnprocessable::from(storage(e)).into() };
    let mut last_bridge = LastBridge {
        deposit_tx_hash: tx_hash.clone(),
        deposit_tx_timestamp: now_date(now),
        token_symbol: body.token.clone(),
        deposit_amount: body.amount.clone(),
        sender: sender.clone(),
        status: LastBridgeStatus::Retrying(LastBridgeRetrying { tag: Default::default(), original_error_tag: None }),
    };
    let (bridge, events, bridge_id) = match priced {
        Ok(quote) => {
            let stored_quote = StoredQuote { id: ctx.quote_id.clone(), project: caller.project_id.clone(), response: quote, mode: "pay".into(), created_ms: now, expires_ms: now, committed: true };
            let record = sb.bridge_from_deposit_quote(&stored_quote, now, &stored.address.deposit_address).map_err(err)?;
            let mut bridge = sb.new_stored_bridge(&caller.project_id, &ctx.quote_id, record, now, None, stored.webhook_url.clone()).map_err(err)?;
            lifecycle::deposit_seen(&mut bridge, now, &tx_hash, 1_000_000 + seed as i64).map_err(err)?;
            let record = serde_json::to_value(&bridge.record).map_err(|e| err(e.into()))?;
            last_bridge.status = LastBridgeStatus::Accepted(LastBridgeAccepted {
                tag: Default::default(),
                amount_out: serde_json::from_value(record["amountOut"].clone()).map_err(|e| err(e.into()))?,
                fee: serde_json::from_value(record["fee"].clone()).map_err(|e| err(e.into()))?,
            });
            let block = 1_000_000 + seed as i64;
            let (delayed_id, delayed_token_address, delayed_info) = (deposit_id.clone(), token_address.clone(), info.clone());
            let detected = WebhookEvent::DepositAddressDepositDetected(DepositAddressDepositDetectedEvent {
                tag: Default::default(),
                id: deposit_id.clone(),
                token_symbol: body.token.clone(),
                token_address: token_address.clone(),
                amount: body.amount.clone(),
                amount_usd,
                amount_wei: amount_wei(&body.amount, decimals),
                sender: sender.clone(),
                tx_hash: tx_hash.clone(),
                created_at: now_date(now),
                block_number: Some(block),
                deposit_address: info.clone(),
            });
            // The deposit's first confirmation comes with the block that holds it; the bridge is accepted when it
            // has all of them (the lifecycle's DEPOSIT_ACCEPTED step).
            let confirming = WebhookEvent::DepositAddressDepositConfirming(DepositAddressDepositConfirmingEvent {
                tag: Default::default(),
                id: deposit_id,
                token_symbol: body.token.clone(),
                token_address,
                amount: body.amount.clone(),
                amount_usd,
                amount_wei: amount_wei(&body.amount, decimals),
                sender: sender.clone(),
                tx_hash: tx_hash.clone(),
                created_at: now_date(now),
                block_number: Some(block),
                confirmations: 1,
                required_confirmations: REQUIRED_CONFIRMATIONS,
                expected_confirmed_at: serde_json::from_value(record["expectedDepositConfirmedAt"].clone()).ok(),
                deposit_address: info,
            });
            let mut events = vec![sb.make_event(&caller.project_id, detected, stored.webhook_url.clone()).await.map_err(err)?];
            if body.outcome == Some(SandboxDepositOutcome::Delayed) {
                // Bridging is delayed once: the bridge waits, the public status says RETRYING.
                bridge.plan = Some(lifecycle::PLAN_DELAYED.to_owned());
                bridge.next_ms = Some(now + lifecycle::DELAY_MS);
                let original_error_tag = Some("OPERATION_UNAVAILABLE".to_owned());
                last_bridge.status = LastBridgeStatus::Retrying(LastBridgeRetrying { tag: Default::default(), original_error_tag: original_error_tag.clone() });
                let delayed = WebhookEvent::DepositAddressBridgeDelayed(DepositAddressBridgeDelayedEvent {
                    tag: Default::default(),
                    id: delayed_id,
                    token_symbol: body.token.clone(),
                    token_address: delayed_token_address,
                    amount: body.amount.clone(),
                    amount_usd,
                    amount_wei: amount_wei(&body.amount, decimals),
                    sender: sender.clone(),
                    tx_hash: tx_hash.clone(),
                    original_error_tag,
                    created_at: now_date(now),
                    deposit_address: delayed_info,
                });
                events.push(sb.make_event(&caller.project_id, delayed, stored.webhook_url.clone()).await.map_err(err)?);
            } else {
                events.push(sb.make_event(&caller.project_id, confirming, stored.webhook_url.clone()).await.map_err(err)?);
            }
            let id = bridge.id.clone();
            (Some(bridge), events, Some(id))
        }
        Err(reason) => {
            last_bridge.status = LastBridgeStatus::Rejected(LastBridgeRejected { tag: Default::default(), reason });
            let rejected = WebhookEvent::DepositAddressBridgeRejected(DepositAddressBridgeRejectedEvent {
                tag: Default::default(),
                id: deposit_id.clone(),
                token_symbol: body.token.clone(),
                token_address,
                amount: body.amount.clone(),
                amount_usd,
                amount_wei: amount_wei(&body.amount, decimals),
                sender: sender.clone(),
                tx_hash: tx_hash.clone(),
                original_error_tag: None,
                original_error_json: None,
                reason,
                tx_uid: format!("{tx_hash}:0"),
                created_at: now_date(now),
                block_number: Some(1_000_000 + seed as i64),
                deposit_address: info,
            });
            // A rejected deposit goes back: to the address's refund address, else to its sender.
            let trigger = match reason {
                RejectReason::UnsupportedToken => SdaRefundTrigger::UnsupportedToken(SdaRefundUnsupportedToken { tag: Default::default() }),
                _ => SdaRefundTrigger::RejectedBridge(SdaRefundRejectedBridge { tag: Default::default() }),
            };
            let refund = WebhookEvent::SdaRefundCompleted(CompletedSdaRefundEvent {
                tag: Default::default(),
                refund_id: format!("ref_{}", ids::hex_digits(seed ^ 0x4ef, 24)),
                deposit_address: stored.address.deposit_address.clone(),
                recipient: stored.address.refund_address.clone().unwrap_or_else(|| sender.clone()),
                deposit_chain: stored.address.deposit_chain.clone(),
                trigger,
                original_deposit_tx_hash: Some(tx_hash.clone()),
                tx_hash: ids::tx_hash(seed ^ 0x4ef),
                tx_timestamp: now_date(now),
            });
            let events = vec![
                sb.make_event(&caller.project_id, rejected, stored.webhook_url.clone()).await.map_err(err)?,
                sb.make_event(&caller.project_id, refund, stored.webhook_url.clone()).await.map_err(err)?,
            ];
            (None, events, None)
        }
    };
    let deposit = StoredDeposit { last_bridge: last_bridge.clone(), bridge_id: bridge_id.clone() };
    let (chain, addr) = (path.deposit_chain.clone(), path.deposit_address.clone());
    sb.store_call(move |s| s.add_deposit(&chain, &addr, &deposit, bridge.as_ref(), &events)).await.map_err(err)?;
    tracing::info!(project = %caller.project_id, address = %path.deposit_address, status = ?serde_json::to_value(&last_bridge.status).ok(), "deposit into address");
    Ok(SandboxAddressDeposit { deposit: last_bridge, bridge_id })
}
