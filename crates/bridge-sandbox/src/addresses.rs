//! Smart deposit addresses: creation (with the facts file's validations and the reuse policy) and simulated
//! deposits into them and into routing deposit addresses ([`crate::routing`]).
//!
//! Reuse: unless `reusePolicy` is `create-new`, a request reuses the project's existing address on a deposit
//! chain when every other member of the request (destination, `tokenOut`, `addressNote`, `webhookUrl`,
//! `refundAddress`, `postBridgeData`, `bridgeIfNotSwappable`) is the same. The addresses made by one request
//! share one seed, so chains of one family get the same address (as on EVM chains in production).

use bridge_contract::operations::*;
use bridge_contract::*;
use bridge_server::Caller;
use rust_decimal::Decimal;

use crate::ids;
use crate::lifecycle;
use crate::pricing;
use crate::routing;
use crate::service::{address_not_found, now_date, storage, Sandbox};
use crate::store::{StoredAddress, StoredDeposit, StoredQuote, StoredRoutingAddress};

/// Confirmations a deposit into a deposit address needs before its bridge is accepted.
pub const REQUIRED_CONFIRMATIONS: u64 = 12;

pub async fn create(
    sb: &Sandbox,
    caller: &Caller,
    body: DepositAddressCreateRequest,
) -> Result<Vec<DepositAddress>, CreateDepositAddressesError> {
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
        return Err(unprocessable(
            DepositAddressChainsNotSupported { tag: Default::default(), chains: unsupported }.into(),
        ));
    }
    let mut families: Vec<String> = body
        .deposit_chains
        .iter()
        .filter_map(|c| cat.chain(c))
        .map(|c| format!("{:?}", c.family).to_uppercase())
        .collect();
    families.sort();
    families.dedup();
    if families.len() > 1 {
        return Err(unprocessable(
            DepositAddressMultipleChainTypesNotAllowed { tag: Default::default(), chain_types: families }.into(),
        ));
    }
    if cat.invalid_address(&body.destination_chain, &body.destination_address).is_some() {
        return Err(unprocessable(
            DepositAddressInvalidDestinationAddress {
                tag: Default::default(),
                chain: body.destination_chain.clone(),
                address: body.destination_address.clone(),
            }
            .into(),
        ));
    }
    if let Some(token_out) = &body.token_out {
        let on_destination = cat.chain(&body.destination_chain).is_some_and(|c| c.tokens.contains_key(token_out));
        if !on_destination {
            return Err(unprocessable(
                DepositAddressTokenOutNotSupported { tag: Default::default(), token_out: token_out.clone() }.into(),
            ));
        }
    }
    if let Some(refund) = &body.refund_address {
        if let Some(reason) = cat.invalid_address(&body.deposit_chains[0], refund) {
            return Err(unprocessable(
                DepositAddressInvalidRefundAddress { tag: Default::default(), message: reason }.into(),
            ));
        }
    }
    let mut options = serde_json::to_value(&body).map_err(|e| storage::<CreateDepositAddressesError>(e.into()))?;
    if let Some(map) = options.as_object_mut() {
        map.remove("depositChains");
        map.remove("reusePolicy");
    }
    let reuse_key = options.to_string();
    let reuse = body.reuse_policy != Some(ReusePolicy::CreateNew);
    let now = sb.now_ms();
    let mut seed = sb.next("address").await.map_err(storage::<CreateDepositAddressesError>)?;

    let mut answer = Vec::new();
    let mut new_addresses = Vec::new();
    let mut events = Vec::new();
    for chain in &body.deposit_chains {
        if reuse {
            let (project, chain, key) = (caller.project_id.clone(), chain.clone(), reuse_key.clone());
            if let Some(existing) = sb
                .store_call(move |s| s.reusable_address(&project, &chain, &key))
                .await
                .map_err(storage::<CreateDepositAddressesError>)?
            {
                answer.push(existing.address);
                continue;
            }
        }
        let supported_tokens = cat.supported_tokens(chain, &body.destination_chain, body.token_out.as_deref());
        if supported_tokens.is_empty() {
            return Err(unprocessable(
                DepositAddressNoBridgableTokens {
                    tag: Default::default(),
                    from: chain.clone(),
                    to: body.destination_chain.clone(),
                }
                .into(),
            ));
        }
        let (deposit_address, chain_metadata) = loop {
            let Some((address, metadata)) = cat.deposit_address(chain, seed) else {
                return Err(unprocessable(
                    DepositAddressChainsNotSupported { tag: Default::default(), chains: vec![chain.clone()] }.into(),
                ));
            };
            let (c, a) = (chain.clone(), address.clone());
            let taken = sb
                .store_call(move |s| s.address_taken(&c, &a))
                .await
                .map_err(storage::<CreateDepositAddressesError>)?
                || new_addresses
                    .iter()
                    .any(|n: &StoredAddress| &n.address.deposit_chain == chain && n.address.deposit_address == address);
            if !taken {
                break (address, metadata);
            }
            seed = sb.next("address").await.map_err(storage::<CreateDepositAddressesError>)?;
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
            destination_address: Some(body.destination_address.clone()),
            address_note: body.address_note.clone(),
            post_bridge_data: body.post_bridge_data.clone(),
            token_out: body.token_out.clone(),
            refund_address: body.refund_address.clone(),
            bridge_if_not_swappable: body.bridge_if_not_swappable,
            chain_metadata: address.chain_metadata.clone(),
            tag: None,
            user_id: caller.project_id.clone(),
            // An empty `webhookUrl` (the deprecated path allows it) means no webhook.
            webhook_url: body.webhook_url.clone().filter(|u| !u.is_empty()),
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
        events.push(
            sb.make_event(&caller.project_id, created, body.webhook_url.clone())
                .await
                .map_err(storage::<CreateDepositAddressesError>)?,
        );
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
        sb.store_call(move |s| s.insert_addresses(&new_addresses, &events))
            .await
            .map_err(storage::<CreateDepositAddressesError>)?;
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

/// The address a simulated deposit goes into, as its events name it.
enum Target {
    /// A deposit address: its events are the DEPOSIT_ADDRESS_* kinds.
    Sda(StoredAddress),
    /// A routing deposit address: its events are the ROUTING_DEPOSIT_ADDRESS_* kinds.
    Routing(StoredRoutingAddress),
}

impl Target {
    fn webhook_url(&self) -> Option<String> {
        match self {
            Target::Sda(a) => a.webhook_url.clone(),
            Target::Routing(a) => a.webhook_url.clone(),
        }
    }
}

/// What every event about one deposit says of it.
struct DepositFacts {
    id: String,
    token_symbol: String,
    token_address: String,
    amount: DecimalString,
    amount_usd: DecimalNumber,
    amount_wei: String,
    sender: String,
    tx_hash: String,
    created_at: DateString,
    block: i64,
    /// The deposit was the chain's native gas token (no token contract).
    native_token: bool,
    /// `amount_usd` as a decimal string (refund triggers carry it so).
    amount_usd_decimal: Option<DecimalString>,
}

fn sda_info(a: &StoredAddress) -> DepositAddressInfo {
    DepositAddressInfo {
        deposit_chain: a.address.deposit_chain.clone(),
        deposit_address: a.address.deposit_address.clone(),
        destination_chain: a.address.destination_chain.clone(),
        destination_address: a.address.destination_address.clone(),
        token_out: a.address.token_out.clone(),
        post_bridge_data: a.address.post_bridge_data.clone(),
        address_note: a.address.address_note.clone(),
    }
}

/// An event of `$ty` about one deposit: the members every such event shares, from [`DepositFacts`], then the
/// given ones.
macro_rules! deposit_event {
    ($ty:ident, $facts:expr, { $($member:ident: $value:expr),* $(,)? }) => {{
        let f: &DepositFacts = $facts;
        $ty {
            tag: Default::default(),
            id: f.id.clone(),
            token_symbol: f.token_symbol.clone(),
            token_address: f.token_address.clone(),
            amount: f.amount.clone(),
            amount_usd: f.amount_usd,
            amount_wei: f.amount_wei.clone(),
            sender: f.sender.clone(),
            tx_hash: f.tx_hash.clone(),
            created_at: f.created_at.clone(),
            $($member: $value),*
        }
    }};
}

fn delayed_event(target: &Target, f: &DepositFacts, original_error_tag: Option<String>) -> WebhookEvent {
    match target {
        Target::Sda(a) => {
            WebhookEvent::DepositAddressBridgeDelayed(deposit_event!(DepositAddressBridgeDelayedEvent, f, {
                original_error_tag: original_error_tag,
                deposit_address: sda_info(a),
            }))
        }
        Target::Routing(a) => WebhookEvent::RoutingDepositAddressBridgeDelayed(
            deposit_event!(RoutingDepositAddressBridgeDelayedEvent, f, {
                original_error_tag: original_error_tag,
                deposit_address: a.address.clone(),
            }),
        ),
    }
}

fn rejected_event(target: &Target, f: &DepositFacts, reason: RejectReason) -> WebhookEvent {
    let tx_uid = format!("{}:0", f.tx_hash);
    match target {
        Target::Sda(a) => {
            WebhookEvent::DepositAddressBridgeRejected(deposit_event!(DepositAddressBridgeRejectedEvent, f, {
                original_error_tag: None,
                original_error_json: None,
                reason: reason,
                tx_uid: tx_uid,
                block_number: Some(f.block),
                deposit_address: sda_info(a),
            }))
        }
        Target::Routing(a) => WebhookEvent::RoutingDepositAddressBridgeRejected(
            deposit_event!(RoutingDepositAddressBridgeRejectedEvent, f, {
                original_error_tag: None,
                original_error_json: None,
                reason: reason,
                tx_uid: tx_uid,
                block_number: Some(f.block),
                deposit_address: a.address.clone(),
            }),
        ),
    }
}

/// Where a deposit that is bridged goes.
struct Destination {
    chain: String,
    address: String,
    token_out: Option<String>,
}

pub async fn deposit(
    sb: &Sandbox,
    caller: &Caller,
    path: SandboxDepositIntoAddressPath,
    body: SandboxAddressDepositRequest,
) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
    let err = storage::<SandboxDepositIntoAddressError>;
    let not_found = || -> SandboxDepositIntoAddressError {
        PublicStatusUnprocessable::from(address_not_found(&path.deposit_address)).into()
    };
    let (chain, addr) = (path.deposit_chain.clone(), path.deposit_address.clone());
    let target = match sb.store_call(move |s| s.address(&chain, &addr)).await.map_err(err)? {
        Some(a) if a.project == caller.project_id => Target::Sda(a),
        Some(_) => return Err(not_found()),
        None => {
            let (chain, addr) = (path.deposit_chain.clone(), path.deposit_address.clone());
            match sb.store_call(move |s| s.routing_address(&chain, &addr)).await.map_err(err)? {
                Some(a) if a.project == caller.project_id => Target::Routing(a),
                _ => return Err(not_found()),
            }
        }
    };
    let webhook_url = target.webhook_url();
    let cat = sb.catalogue();
    let seed = sb.next("tx").await.map_err(err)?;
    let tx_hash = ids::tx_hash(seed);
    // A made-up sender in the deposit chain's own address format (a refund of a rejected deposit goes to it).
    let sender = body.sender.clone().unwrap_or_else(|| match cat.deposit_address(&path.deposit_chain, seed ^ 0x5e4d) {
        Some((address, _)) => address,
        None => format!("0x{}", ids::hex_digits(seed ^ 0x5e4d, 40)),
    });
    let now = sb.now_ms();
    let token = cat.chain(&path.deposit_chain).and_then(|c| c.tokens.get(&body.token));
    let decimals = token.map(|t| t.decimals).unwrap_or(18);
    let block = 1_000_000 + seed as i64;
    let facts = DepositFacts {
        id: format!("dep_{}", ids::hex_digits(seed ^ 0xde90, 24)),
        token_symbol: body.token.clone(),
        token_address: token.map(|t| t.address.clone()).unwrap_or_else(|| "unknown".into()),
        amount: body.amount.clone(),
        amount_usd: token
            .and_then(|t| body.amount.to_decimal().ok().and_then(|a| a.checked_mul(t.usd_price)))
            .map(pricing::usd_number)
            .unwrap_or_default(),
        amount_wei: amount_wei(&body.amount, decimals),
        sender: sender.clone(),
        tx_hash: tx_hash.clone(),
        created_at: now_date(now),
        block,
        native_token: cat.chain(&path.deposit_chain).is_some_and(|c| c.native_symbol == body.token),
        amount_usd_decimal: token
            .and_then(|t| body.amount.to_decimal().ok().and_then(|a| a.checked_mul(t.usd_price)))
            .and_then(|usd| usd.round_dp(2).normalize().to_string().parse().ok()),
    };
    let destination = match &target {
        Target::Sda(a) => Ok(Destination {
            chain: a.address.destination_chain.clone(),
            address: a.address.destination_address.clone().unwrap_or_default(),
            token_out: a.address.token_out.clone(),
        }),
        Target::Routing(a) => routing::choose_route(
            &a.address.routes,
            &routing::Deposit::new(
                &facts.token_symbol,
                &facts.token_address,
                &sender,
                &path.deposit_chain,
                facts.amount_usd,
            ),
        )
        .map(|r| {
            let to = routing::destination(&r.action);
            Destination {
                chain: to.destination_chain.to_owned(),
                address: to.destination_address.to_owned(),
                token_out: to.token_out.map(str::to_owned),
            }
        })
        .ok_or(RejectReason::NoRouteFound),
    };
    let quote_id = ids::quote_id(sb.next("quote").await.map_err(err)?);
    let ctx = pricing::QuoteContext { catalogue: cat, project_id: &caller.project_id, now: now_date(now), quote_id };
    let priced = destination.and_then(|d| {
        pricing::quote_deposit(
            &ctx,
            &path.deposit_chain,
            &d.chain,
            &d.address,
            &body.token,
            &body.amount,
            d.token_out.as_deref(),
            &sender,
        )
    });
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
            let stored_quote = StoredQuote {
                id: ctx.quote_id.clone(),
                project: caller.project_id.clone(),
                response: quote,
                mode: "pay".into(),
                created_ms: now,
                expires_ms: now,
                committed: true,
            };
            let record = sb.bridge_from_deposit_quote(&stored_quote, now, &path.deposit_address).map_err(err)?;
            let mut bridge = sb
                .new_stored_bridge(&caller.project_id, &ctx.quote_id, record, now, None, webhook_url.clone())
                .map_err(err)?;
            let delayed = body.outcome == Some(SandboxDepositOutcome::Delayed);
            if delayed {
                // Bridging is delayed once: the record waits in PENDING until the delay is over.
                bridge.plan = Some(lifecycle::plan_delayed(&tx_hash, block));
                bridge.next_ms = Some(now + lifecycle::DELAY_MS);
            } else {
                lifecycle::deposit_seen(&mut bridge, now, &tx_hash, block).map_err(err)?;
            }
            if body.outcome == Some(SandboxDepositOutcome::Failed) {
                bridge.plan = Some(lifecycle::PLAN_FAILED.to_owned());
            }
            let record = serde_json::to_value(&bridge.record).map_err(|e| err(e.into()))?;
            last_bridge.status = LastBridgeStatus::Accepted(LastBridgeAccepted {
                tag: Default::default(),
                amount_out: serde_json::from_value(record["amountOut"].clone()).map_err(|e| err(e.into()))?,
                fee: serde_json::from_value(record["fee"].clone()).map_err(|e| err(e.into()))?,
            });
            let mut kinds = Vec::new();
            if let Target::Sda(a) = &target {
                // Only deposit addresses have detected / confirming kinds (the spec names none for routing ones).
                kinds.push(WebhookEvent::DepositAddressDepositDetected(
                    deposit_event!(DepositAddressDepositDetectedEvent, &facts, {
                        block_number: Some(block),
                        deposit_address: sda_info(a),
                    }),
                ));
            }
            if delayed {
                // The public status says RETRYING while the bridge waits.
                let original_error_tag = Some("OPERATION_UNAVAILABLE".to_owned());
                last_bridge.status = LastBridgeStatus::Retrying(LastBridgeRetrying {
                    tag: Default::default(),
                    original_error_tag: original_error_tag.clone(),
                });
                kinds.push(delayed_event(&target, &facts, original_error_tag));
            } else if let Target::Sda(a) = &target {
                // The deposit's first confirmation comes with the block that holds it; the bridge is accepted
                // when it has all of them (the lifecycle's DEPOSIT_ACCEPTED step).
                kinds.push(WebhookEvent::DepositAddressDepositConfirming(deposit_event!(DepositAddressDepositConfirmingEvent, &facts, {
                    block_number: Some(block),
                    confirmations: 1,
                    required_confirmations: REQUIRED_CONFIRMATIONS,
                    expected_confirmed_at: serde_json::from_value(record["expectedDepositConfirmedAt"].clone()).ok(),
                    deposit_address: sda_info(a),
                })));
            }
            let mut events = Vec::new();
            for kind in kinds {
                events.push(sb.make_event(&caller.project_id, kind, webhook_url.clone()).await.map_err(err)?);
            }
            let id = bridge.id.clone();
            (Some(bridge), events, Some(id))
        }
        Err(reason) => {
            last_bridge.status = LastBridgeStatus::Rejected(LastBridgeRejected { tag: Default::default(), reason });
            let rejected = rejected_event(&target, &facts, reason);
            // A rejected deposit goes back: to the address's refund address, else to its sender.
            let trigger = match reason {
                // A token the address does not take: sent back as it came; what the sandbox knows of it is named.
                RejectReason::UnsupportedToken => SdaRefundTrigger::UnsupportedToken(SdaRefundUnsupportedToken {
                    tag: Default::default(),
                    native_token: facts.native_token,
                    amount_wei: facts.amount_wei.clone(),
                    token_address: token.map(|t| t.address.clone()),
                    token_symbol: Some(facts.token_symbol.clone()),
                    amount: Some(facts.amount.clone()),
                    amount_usd: facts.amount_usd_decimal.clone(),
                }),
                _ => SdaRefundTrigger::RejectedBridge(SdaRefundRejectedBridge {
                    tag: Default::default(),
                    rejected_deposit_address_bridge_id: facts.id.clone(),
                    native_token: facts.native_token,
                    amount_wei: facts.amount_wei.clone(),
                    amount: facts.amount.clone(),
                    amount_usd: facts.amount_usd_decimal.clone().unwrap_or_default(),
                    token_address: facts.token_address.clone(),
                    token_symbol: facts.token_symbol.clone(),
                }),
            };
            let refund_address = match &target {
                Target::Sda(a) => a.address.refund_address.clone(),
                Target::Routing(_) => None,
            };
            let refund = WebhookEvent::SdaRefundCompleted(CompletedSdaRefundEvent {
                tag: Default::default(),
                refund_id: format!("ref_{}", ids::hex_digits(seed ^ 0x4ef, 24)),
                deposit_address: path.deposit_address.clone(),
                recipient: refund_address.unwrap_or_else(|| sender.clone()),
                deposit_chain: path.deposit_chain.clone(),
                trigger,
                original_deposit_tx_hash: Some(tx_hash.clone()),
                tx_hash: ids::tx_hash(seed ^ 0x4ef),
                tx_timestamp: now_date(now),
            });
            let events = vec![
                sb.make_event(&caller.project_id, rejected, webhook_url.clone()).await.map_err(err)?,
                sb.make_event(&caller.project_id, refund, webhook_url.clone()).await.map_err(err)?,
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
