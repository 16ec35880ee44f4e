//! `POST /sandbox/deposit-addresses/{address}/{chain}/deposits`: a simulated deposit into a deposit address or a
//! routing deposit address. Priced as a deposit quote ([`crate::domain::pricing::quote_deposit`]) to the address's
//! destination (or the route [`crate::operations::routing`] chooses): bridged (a `depositAddressBridge` record, or `bridgeSwap`
//! when it swaps, seen at once or after a delay) or rejected and refunded (to the address's refund address, else
//! to the sender). Every event about the deposit is built from one [`SdaDeposit`].

use bridge_contract::operations::SandboxDepositIntoAddressError;
use bridge_contract::{
    CompletedSdaRefundEvent, DecimalString, DepositAddressBridgeDelayedEvent, DepositAddressBridgeRejectedEvent,
    DepositAddressDepositConfirmingEvent, DepositAddressDepositDetectedEvent, DepositAddressInfo, LastBridge,
    LastBridgeAccepted, LastBridgeRejected, LastBridgeRetrying, LastBridgeStatus, PublicStatusUnprocessable, QuoteMode,
    QuoteResponse, RejectReason, RoutingDepositAddressBridgeDelayedEvent, RoutingDepositAddressBridgeRejectedEvent,
    SandboxAddressDeposit, SandboxAddressDepositRequest, SandboxDepositIntoAddressPath, SandboxDepositOutcome,
    SdaDeposit, SdaRefundRejectedBridge, SdaRefundTrigger, SdaRefundUnsupportedToken, WebhookEvent,
};
use bridge_server::Caller;
use rust_decimal::Decimal;

use crate::domain::catalogue::usd_number;
use crate::domain::ids;
use crate::domain::lifecycle::{self, DELAY_MS};
use crate::domain::pricing::{self, DepositQuote, QuoteContext};
use crate::domain::records::date;
use crate::domain::records::{self, NewRecord, Plan, SeenDeposit};
use crate::infra::core::Core;
use crate::infra::store::{
    Counter, NewEvent, StoreResult, StoredAddress, StoredBridge, StoredDeposit, StoredRoutingAddress,
};
use crate::operations::addresses::not_found;
use crate::operations::routing;

/// Confirmations a deposit into a deposit address needs before its bridge is accepted.
pub const REQUIRED_CONFIRMATIONS: u64 = 12;

/// The address a simulated deposit goes into, as its events name it.
enum Target {
    /// A deposit address: its events are the DEPOSIT_ADDRESS_* kinds. (Boxed: much larger than a routing one.)
    Sda(Box<StoredAddress>),
    /// A routing deposit address: its events are the ROUTING_DEPOSIT_ADDRESS_* kinds.
    Routing(StoredRoutingAddress),
}

impl Target {
    /// The address's `addressNote`, which the events of the bridges its deposits start carry.
    fn address_note(&self) -> Option<String> {
        match self {
            Target::Sda(a) => a.address.address_note.clone(),
            Target::Routing(a) => a.address.address_note.clone(),
        }
    }

    fn webhook_url(&self) -> Option<String> {
        match self {
            Target::Sda(a) => a.webhook_url.clone(),
            Target::Routing(a) => a.webhook_url.clone(),
        }
    }

    /// A deposit address as its events describe it.
    fn info(a: &StoredAddress) -> DepositAddressInfo {
        let a = &a.address;
        DepositAddressInfo {
            deposit_chain: a.deposit_chain.clone(),
            deposit_address: a.deposit_address.clone(),
            destination_chain: a.destination_chain.clone(),
            destination_address: a.destination_address.clone(),
            token_out: a.token_out.clone(),
            post_bridge_data: a.post_bridge_data.clone(),
            address_note: a.address_note.clone(),
        }
    }

    fn delayed_event(&self, d: &SdaDeposit, original_error_tag: Option<String>) -> WebhookEvent {
        match self {
            Target::Sda(a) => DepositAddressBridgeDelayedEvent {
                original_error_tag,
                ..DepositAddressBridgeDelayedEvent::from_sda_deposit(d, Self::info(a))
            }
            .into(),
            Target::Routing(a) => RoutingDepositAddressBridgeDelayedEvent {
                original_error_tag,
                ..RoutingDepositAddressBridgeDelayedEvent::from_sda_deposit(d, a.address.clone())
            }
            .into(),
        }
    }

    fn rejected_event(&self, d: &SdaDeposit, reason: RejectReason) -> WebhookEvent {
        let tx_uid = format!("{}:0", d.tx_hash);
        match self {
            Target::Sda(a) => {
                DepositAddressBridgeRejectedEvent::from_sda_deposit(d, reason, tx_uid, Self::info(a)).into()
            }
            Target::Routing(a) => {
                RoutingDepositAddressBridgeRejectedEvent::from_sda_deposit(d, reason, tx_uid, a.address.clone()).into()
            }
        }
    }
}

/// Where a deposit that is bridged goes.
struct Destination {
    chain: String,
    address: String,
    token_out: Option<String>,
}

/// What the sandbox knows of a deposit beyond its events' members (refund triggers say it).
struct Extras {
    /// The deposit was the chain's native gas token (no token contract).
    native_token: bool,
    /// The deposited token's contract, when the catalogue knows it.
    token_address: Option<String>,
    /// `amountUsd` as a decimal string (refund triggers carry it so).
    amount_usd: Option<DecimalString>,
}

/// `amount` in the token's smallest unit, as an integer string (truncated past the token's decimals).
pub fn amount_wei(amount: &DecimalString, decimals: u32) -> String {
    match amount.to_decimal() {
        Ok(d) => {
            let scaled = d * Decimal::from_i128_with_scale(10i128.pow(decimals.min(28)), 0);
            scaled.trunc().abs().to_string()
        }
        Err(_) => "0".into(),
    }
}

/// Where a deposit into `target` goes: a deposit address's destination, or the route a routing deposit address
/// chooses for it (`NoRouteFound` when none matches).
fn destination(target: &Target, deposit: &SdaDeposit, deposit_chain: &str) -> Result<Destination, RejectReason> {
    match target {
        Target::Sda(a) => Ok(Destination {
            chain: a.address.destination_chain.clone(),
            address: a.address.destination_address.clone().unwrap_or_default(),
            token_out: a.address.token_out.clone(),
        }),
        Target::Routing(a) => routing::choose_route(
            &a.address.routes,
            &routing::Deposit::new(
                &deposit.token_symbol,
                &deposit.token_address,
                &deposit.sender,
                deposit_chain,
                deposit.amount_usd,
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
    }
}

impl Core {
    /// `POST /sandbox/deposit-addresses/{address}/{chain}/deposits`: finds the address, makes up the deposit, prices
    /// it to where it goes, and keeps the outcome (a bridge and its events, or a rejection and its refund) with the
    /// deposit in one store write.
    pub async fn sandbox_deposit_into_address(
        &self,
        caller: &Caller,
        path: SandboxDepositIntoAddressPath,
        body: SandboxAddressDepositRequest,
    ) -> Result<SandboxAddressDeposit, SandboxDepositIntoAddressError> {
        let Some(target) = self.deposit_target(caller, &path.deposit_chain, &path.deposit_address).await? else {
            return Err(PublicStatusUnprocessable::from(not_found(&path.deposit_address)).into());
        };
        let seed = self.next(Counter::Tx).await?;
        let now = self.now_of(&caller.project_id).await?;
        let request = Request { core: self, project: &caller.project_id, path: &path, body: &body, target, now };
        let made = request.made_up_deposit(seed);
        let outcome = match request.price(&made).await? {
            Ok(quote) => request.bridged(&made, &quote).await?,
            Err(reason) => request.rejected(&made, reason, seed).await?,
        };
        let Outcome { bridge, events, status } = outcome;
        let last_bridge = LastBridge {
            deposit_tx_hash: made.deposit.tx_hash.clone(),
            deposit_tx_timestamp: date(now),
            token_symbol: body.token.clone(),
            deposit_amount: body.amount.clone(),
            sender: made.deposit.sender.clone(),
            status,
        };
        let bridge_id = bridge.as_ref().map(|b| b.id.clone());
        let stored = StoredDeposit { last_bridge: last_bridge.clone(), bridge_id: bridge_id.clone() };
        self.store.add_deposit(&path.deposit_chain, &path.deposit_address, &stored, bridge.as_ref(), &events).await?;
        tracing::info!(project = %caller.project_id, address = %path.deposit_address, status = ?last_bridge.status, "deposit into address");
        Ok(SandboxAddressDeposit { deposit: last_bridge, bridge_id })
    }

    /// The caller's deposit address or routing deposit address `address` on `chain` (another project's is not found
    /// either).
    async fn deposit_target(&self, caller: &Caller, chain: &str, address: &str) -> StoreResult<Option<Target>> {
        Ok(match self.store.address(chain, address).await? {
            Some(a) if a.project == caller.project_id => Some(Target::Sda(Box::new(a))),
            Some(_) => None,
            None => match self.store.routing_address(chain, address).await? {
                Some(a) if a.project == caller.project_id => Some(Target::Routing(a)),
                _ => None,
            },
        })
    }
}

/// A made-up deposit of the request's token and amount: its transaction, block and sender (the request's, or one
/// in the deposit chain's own address format, to which a rejected deposit is refunded).
struct MadeUpDeposit {
    deposit: SdaDeposit,
    extras: Extras,
    block: i64,
}

/// What a deposit comes to: the bridge it starts (if any), the events it emits, and the public status of the
/// address's last bridge.
struct Outcome {
    bridge: Option<StoredBridge>,
    events: Vec<NewEvent>,
    status: LastBridgeStatus,
}

/// One deposit request: what each of its steps reads.
struct Request<'a> {
    core: &'a Core,
    project: &'a str,
    path: &'a SandboxDepositIntoAddressPath,
    body: &'a SandboxAddressDepositRequest,
    target: Target,
    /// The project's clock when the request came.
    now: i64,
}

impl Request<'_> {
    fn made_up_deposit(&self, seed: u64) -> MadeUpDeposit {
        let Self { core, body, now, .. } = *self;
        let deposit_chain = self.path.deposit_chain.as_str();
        let catalogue = &core.catalogue;
        let sender = body.sender.clone().unwrap_or_else(|| {
            let seed = ids::sender_seed(seed);
            catalogue.deposit_address(deposit_chain, seed).map(|(a, _)| a).unwrap_or_else(|| ids::evm_address(seed))
        });
        let token = catalogue.chain(deposit_chain).and_then(|c| c.tokens.get(&body.token));
        let amount_usd = token.and_then(|t| body.amount.to_decimal().ok().and_then(|a| a.checked_mul(t.usd_price)));
        let block = ids::block(seed);
        let deposit = SdaDeposit {
            id: ids::deposit_id(seed, now),
            token_symbol: body.token.clone(),
            token_address: token.map(|t| t.address.clone()).unwrap_or_else(|| "unknown".into()),
            amount: body.amount.clone(),
            amount_usd: amount_usd.map(usd_number).unwrap_or_default(),
            amount_wei: amount_wei(&body.amount, token.map(|t| t.decimals).unwrap_or(18)),
            sender,
            tx_hash: ids::tx_hash(seed),
            created_at: date(now),
            block_number: Some(block),
        };
        let extras = Extras {
            native_token: catalogue.chain(deposit_chain).is_some_and(|c| c.native_symbol == body.token),
            token_address: token.map(|t| t.address.clone()),
            amount_usd: amount_usd.and_then(|usd| usd.round_dp(2).normalize().to_string().parse().ok()),
        };
        MadeUpDeposit { deposit, extras, block }
    }

    /// The deposit priced as a deposit quote to where it goes, or why it is rejected.
    async fn price(&self, made: &MadeUpDeposit) -> StoreResult<Result<QuoteResponse, RejectReason>> {
        let Self { core, path, body, now, .. } = *self;
        let destination = destination(&self.target, &made.deposit, &path.deposit_chain);
        let quote_id = core.object_id(Counter::Quote, now).await?;
        let ctx = QuoteContext { catalogue: &core.catalogue, project_id: self.project, now: date(now), quote_id };
        Ok(destination.and_then(|d| {
            pricing::quote_deposit(
                &ctx,
                &DepositQuote {
                    deposit_chain: &path.deposit_chain,
                    destination_chain: &d.chain,
                    destination_address: &d.address,
                    token: &body.token,
                    amount: &body.amount,
                    token_out: d.token_out.as_deref(),
                    depositor: &made.deposit.sender,
                },
            )
        }))
    }

    /// A priced deposit starts a deposit-address bridge: seen at once (DEPOSIT_DETECTED, then the first confirmation
    /// for a deposit address), or delayed once (BRIDGE_DELAYED; the status says RETRYING while it waits).
    async fn bridged(&self, made: &MadeUpDeposit, quote: &QuoteResponse) -> StoreResult<Outcome> {
        let Self { core, project, path, body, now, .. } = *self;
        let target = &self.target;
        let record = NewRecord {
            quote,
            project,
            mode: QuoteMode::Pay,
            quoted_at: date(now),
            committed_at: date(now),
            token_usd_price: core.usd_price(quote.chain_in(), records::quote_token(quote)),
            deposit_address: Some(&path.deposit_address),
        }
        .record();
        let webhook_url = target.webhook_url();
        let mut bridge = StoredBridge::new(project, record, now, webhook_url.clone());
        bridge.address_note = target.address_note();
        let seen = SeenDeposit { tx_hash: made.deposit.tx_hash.clone(), block: made.block };
        let delayed = body.outcome == Some(SandboxDepositOutcome::Delayed);
        if delayed {
            // Bridging is delayed once: the record waits in PENDING until the delay is over.
            bridge.plan = Some(Plan::Delayed(seen));
            bridge.next_ms = Some(now + DELAY_MS);
        } else if let Err(stuck) = lifecycle::see_deposit(&mut bridge, &seen, now) {
            unreachable!("a new record is PENDING: {stuck}");
        }
        if body.outcome == Some(SandboxDepositOutcome::Failed) {
            bridge.plan = Some(Plan::Failed);
        }
        let common = bridge.record.common();
        let mut status: LastBridgeStatus =
            LastBridgeAccepted::new(common.amount_out.clone(), common.fee.clone()).into();
        let mut emitted: Vec<WebhookEvent> = Vec::new();
        if let Target::Sda(a) = target {
            // Only deposit addresses have detected / confirming kinds (the spec names none for routing ones).
            emitted.push(DepositAddressDepositDetectedEvent::from_sda_deposit(&made.deposit, Target::info(a)).into());
        }
        if delayed {
            let original_error_tag = Some(RejectReason::OperationUnavailable.as_str().to_owned());
            status = LastBridgeRetrying { original_error_tag: original_error_tag.clone(), ..LastBridgeRetrying::new() }
                .into();
            emitted.push(target.delayed_event(&made.deposit, original_error_tag));
        } else if let Target::Sda(a) = target {
            // The deposit's first confirmation comes with the block that holds it; the bridge is accepted when it has
            // all of them (the lifecycle's DEPOSIT_ACCEPTED step).
            let confirming = DepositAddressDepositConfirmingEvent {
                expected_confirmed_at: records::expected_confirmation(&bridge.record),
                ..DepositAddressDepositConfirmingEvent::from_sda_deposit(
                    &made.deposit,
                    1u64,
                    REQUIRED_CONFIRMATIONS,
                    Target::info(a),
                )
            };
            emitted.push(confirming.into());
        }
        let events = core.new_events(project, now, emitted, &webhook_url).await?;
        Ok(Outcome { bridge: Some(bridge), events, status })
    }

    /// A deposit that cannot be bridged is rejected (BRIDGE_REJECTED) and refunded (COMPLETED_SDA_REFUND).
    async fn rejected(&self, made: &MadeUpDeposit, reason: RejectReason, seed: u64) -> StoreResult<Outcome> {
        let Self { core, project, now, .. } = *self;
        let target = &self.target;
        let rejected = target.rejected_event(&made.deposit, reason);
        let refund = refund_event(target, &made.deposit, &made.extras, reason, seed, now);
        let events = core.new_events(project, now, vec![rejected, refund], &target.webhook_url()).await?;
        Ok(Outcome { bridge: None, events, status: LastBridgeStatus::Rejected(LastBridgeRejected::new(reason)) })
    }
}

/// A rejected deposit goes back: to the address's refund address, else to its sender.
fn refund_event(
    target: &Target,
    d: &SdaDeposit,
    extras: &Extras,
    reason: RejectReason,
    seed: u64,
    now: i64,
) -> WebhookEvent {
    let trigger = match reason {
        // A token the address does not take: sent back as it came; what the sandbox knows of it is named.
        RejectReason::UnsupportedToken => SdaRefundTrigger::UnsupportedToken(SdaRefundUnsupportedToken {
            token_address: extras.token_address.clone(),
            token_symbol: Some(d.token_symbol.clone()),
            amount: Some(d.amount.clone()),
            amount_usd: extras.amount_usd.clone(),
            ..SdaRefundUnsupportedToken::new(extras.native_token, d.amount_wei.clone())
        }),
        _ => SdaRefundTrigger::RejectedBridge(SdaRefundRejectedBridge::new(
            d.id.clone(),
            extras.native_token,
            d.amount_wei.clone(),
            d.amount.clone(),
            extras.amount_usd.clone().unwrap_or_default(),
            d.token_address.clone(),
            d.token_symbol.clone(),
        )),
    };
    let refund_address = match target {
        Target::Sda(a) => a.address.refund_address.clone(),
        Target::Routing(_) => None,
    };
    let (refund_id, refund_tx_hash) = ids::refund(seed, now);
    let deposit_address = match target {
        Target::Sda(a) => a.address.deposit_address.clone(),
        Target::Routing(a) => a.address.deposit_address.clone(),
    };
    let deposit_chain = match target {
        Target::Sda(a) => a.address.deposit_chain.clone(),
        Target::Routing(a) => a.address.deposit_chain.clone(),
    };
    CompletedSdaRefundEvent {
        original_deposit_tx_hash: Some(d.tx_hash.clone()),
        ..CompletedSdaRefundEvent::new(
            refund_id,
            deposit_address,
            refund_address.unwrap_or_else(|| d.sender.clone()),
            deposit_chain,
            trigger,
            refund_tx_hash,
            date(now),
        )
    }
    .into()
}
