//! Realistic events of every kind, made for a receiver check from the caller's project: a route of its catalogue
//! (chains, tokens, prices), quotes priced as its own quotes are, records moved through their states by the
//! lifecycle, deposit addresses and deposits made up as the sandbox helpers make them, dates on the project's
//! clock. Ids have production's form but come from the operating system's randomness, not the store's counters:
//! a check stores nothing and uses up no counter.

use bridge_contract::{
    BridgeExecutedBridgeEvent, BridgeQuoteRequest, BridgeRecord, BridgeRecordBridge, BridgeState,
    BridgeSwapQuoteRequest, CompletedSdaRefundEvent, DecimalString, DepositAddressBridgeDelayedEvent,
    DepositAddressBridgeRejectedEvent, DepositAddressCreatedEvent, DepositAddressDepositConfirmingEvent,
    DepositAddressDepositDetectedEvent, DepositAddressInfo, QuoteMode, QuoteResponse, RejectReason, RoutingAction,
    RoutingActionBridge, RoutingDepositAddress, RoutingDepositAddressBridgeDelayedEvent,
    RoutingDepositAddressBridgeRejectedEvent, RoutingDepositAddressCreatedEvent, RoutingMatcher,
    RoutingMatcherSentAmountUsdGreaterThan, RoutingRoute, SdaDeposit, SdaRefundRejectedBridge, SdaRefundTrigger,
    WebhookEvent, WebhookTestEvent,
};
use rand::Rng as _;
use rust_decimal::Decimal;

use crate::domain::catalogue::{usd_number, Catalogue, Chain, Token};
use crate::domain::ids;
use crate::domain::lifecycle;
use crate::domain::pricing::{self, QuoteContext};
use crate::domain::records::{self, date, NewRecord, Plan, SeenDeposit, StoredBridge};
use crate::infra::core::Core;
use crate::operations::deposits::{amount_wei, REQUIRED_CONFIRMATIONS};

/// How long before the project's now the sample records start (their lifecycles end well before now).
const HISTORY_MS: i64 = 60 * 60 * 1000;
/// What the sample deposits and quotes are worth, in USD (within every built-in limit).
const AMOUNT_USD: i64 = 100;
/// A routing deposit address's route takes deposits worth this much or more (USD); the sample's rejected deposit
/// is worth less.
const ROUTE_MINIMUM_USD: i32 = 10;
/// The `addressNote` of the sample addresses.
const NOTE: &str = "receiver check";

/// A route of the catalogue the samples are priced on: a token bridged as such, and a swap.
struct Route<'c> {
    chain_in: &'c Chain,
    chain_out: &'c Chain,
    token: &'c Token,
    swap_in: &'c Token,
    swap_out: &'c Token,
    depositor: String,
    recipient: String,
}

/// A bridge of one token through its life: its events in order (BRIDGE_PENDING, BRIDGE_ACCEPTED,
/// BRIDGE_EXECUTED), and the executed event again with `amountOut` raised a thousandfold (a body changed after
/// signing).
pub struct BridgeLife {
    pub pending: WebhookEvent,
    pub accepted: WebhookEvent,
    pub executed: WebhookEvent,
    pub executed_altered: WebhookEvent,
}

/// Makes the samples of one check.
pub struct Samples<'a> {
    core: &'a Core,
    project: &'a str,
    /// The project's clock when the check started.
    now: i64,
    route: Route<'a>,
}

/// Why no samples could be made: the catalogue prices no route (an override file removed them all).
#[derive(Debug)]
pub struct NoRoute;

impl<'a> Samples<'a> {
    /// The samples of `project` at `now` (its clock), on the first route of the catalogue that prices both a bridge
    /// of one token and a swap.
    pub fn new(core: &'a Core, project: &'a str, now: i64) -> Result<Self, NoRoute> {
        let route = route(&core.catalogue, project, now).ok_or(NoRoute)?;
        Ok(Self { core, project, now, route })
    }

    /// A fresh id of production's form (an ObjectId made at `at_ms`).
    fn id(at_ms: i64) -> String {
        ids::seeded_id(seed(), at_ms)
    }

    fn context(&self, at_ms: i64) -> QuoteContext<'a> {
        QuoteContext {
            catalogue: &self.core.catalogue,
            project_id: self.project,
            now: date(at_ms),
            quote_id: Self::id(at_ms),
        }
    }

    fn bridge_request(&self) -> BridgeQuoteRequest {
        let r = &self.route;
        bridge_request(r.chain_in, r.chain_out, r.token, &r.depositor, &r.recipient)
    }

    /// The record a quote committed at `at_ms` becomes, as a stored bridge (PENDING).
    fn committed(&self, quote: &QuoteResponse, at_ms: i64) -> StoredBridge {
        let record = NewRecord {
            quote,
            project: self.project,
            mode: QuoteMode::Pay,
            quoted_at: date(at_ms),
            committed_at: date(at_ms + 5_000),
            token_usd_price: self.core.usd_price(quote.chain_in(), records::quote_token(quote)),
            deposit_address: None,
        }
        .record();
        StoredBridge::new(self.project, record, at_ms + 5_000, None)
    }

    /// Moves a PENDING bridge on from its deposit at `at_ms` until the lifecycle leaves it; its events in order.
    fn live(bridge: &mut StoredBridge, at_ms: i64) -> Result<Vec<WebhookEvent>, lifecycle::Stuck> {
        let tx = seed();
        lifecycle::see_deposit(bridge, &SeenDeposit { tx_hash: ids::tx_hash(tx), block: ids::block(tx) }, at_ms)?;
        let mut events = Vec::new();
        while let Some(due) = bridge.next_ms {
            events.extend(lifecycle::step(bridge, due, seed())?);
        }
        Ok(events)
    }

    /// A bridge of one token, committed an hour before now, paid, accepted and executed.
    pub fn bridge_life(&self) -> Result<BridgeLife, String> {
        let at = self.now - HISTORY_MS;
        let quote = pricing::quote_bridge(&self.context(at), &self.bridge_request())
            .map(QuoteResponse::Bridge)
            .map_err(|r| format!("pricing the sample bridge: {r:?}"))?;
        let mut bridge = self.committed(&quote, at);
        let pending = lifecycle::committed_event(&bridge.record).ok_or("a bridge quote commits with an event")?;
        let mut events = Self::live(&mut bridge, at + 30_000).map_err(|s| s.to_string())?.into_iter();
        let (Some(accepted), Some(executed)) = (events.next(), events.next()) else {
            return Err("the sample bridge was not accepted and executed".into());
        };
        let BridgeRecord::Bridge(r @ BridgeRecordBridge { state: BridgeState::Executed(s), .. }) = &bridge.record
        else {
            return Err("the sample bridge did not end EXECUTED".into());
        };
        let mut altered = r.clone();
        altered.common.amount_out = thousandfold(&r.common.amount_out);
        let executed_altered = BridgeExecutedBridgeEvent::from((&altered, s)).into();
        Ok(BridgeLife { pending, accepted, executed, executed_altered })
    }

    /// A bridge of one token committed an hour before now and cancelled when its quote expired: BRIDGE_CANCELLED.
    fn cancelled(&self) -> Result<WebhookEvent, String> {
        let at = self.now - HISTORY_MS;
        let quote = pricing::quote_bridge(&self.context(at), &self.bridge_request())
            .map(QuoteResponse::Bridge)
            .map_err(|r| format!("pricing the sample bridge: {r:?}"))?;
        let mut bridge = self.committed(&quote, at);
        lifecycle::cancel(&mut bridge, at + pricing::QUOTE_LIFETIME_MS).map_err(|s| s.to_string())
    }

    /// A bridge with a swap whose swap failed after its deposit was accepted, refunded: BRIDGE_REFUNDED.
    fn refunded(&self) -> Result<WebhookEvent, String> {
        let r = &self.route;
        let at = self.now - HISTORY_MS;
        let request = swap_request(r.chain_in, r.chain_out, r.swap_in, r.swap_out, &r.depositor, &r.recipient);
        let quote = pricing::quote_bridge_swap(&self.context(at), &request)
            .map_err(|r| format!("pricing the sample swap: {r:?}"))?;
        let mut bridge = self.committed(&quote, at);
        bridge.plan = Some(Plan::SwapFailed);
        let events = Self::live(&mut bridge, at + 30_000).map_err(|s| s.to_string())?;
        events.into_iter().last().ok_or_else(|| "the sample swap was not refunded".into())
    }

    /// A made-up deposit worth `usd` of the route's token into an address on its `chainIn`, made at `at_ms`.
    fn deposit(&self, usd: i64, at_ms: i64) -> SdaDeposit {
        let (chain, token) = (self.route.chain_in, self.route.token);
        let amount = worth(token, usd);
        let tx = seed();
        let sender = self.core.catalogue.deposit_address(&chain.id, tx).map(|(a, _)| a).unwrap_or(ids::evm_address(tx));
        SdaDeposit {
            id: ids::deposit_id(tx, at_ms),
            token_symbol: token.symbol.clone(),
            token_address: token.address.clone(),
            amount_usd: usd_number(amount.to_decimal().unwrap_or_default() * token.usd_price),
            amount_wei: amount_wei(&amount, token.decimals),
            amount,
            sender,
            tx_hash: ids::tx_hash(tx),
            created_at: date(at_ms),
            block_number: Some(ids::block(tx)),
        }
    }

    /// A fresh address on the route's `chainIn`.
    fn address(&self) -> String {
        let chain = &self.route.chain_in.id;
        self.core.catalogue.deposit_address(chain, seed()).map(|(a, _)| a).unwrap_or_else(|| ids::evm_address(seed()))
    }

    /// A deposit address's events: created; a deposit detected and confirming; a deposit rejected (over the
    /// address's limit) and refunded; a deposit delayed. In sequences, each in the order a receiver would get it.
    fn deposit_address(&self) -> Vec<Vec<WebhookEvent>> {
        let r = &self.route;
        let at = self.now - HISTORY_MS;
        let address = self.address();
        let info = DepositAddressInfo {
            deposit_chain: r.chain_in.id.clone(),
            deposit_address: address.clone(),
            destination_chain: r.chain_out.id.clone(),
            destination_address: Some(r.recipient.clone()),
            token_out: None,
            post_bridge_data: None,
            address_note: Some(NOTE.into()),
        };
        let created = DepositAddressCreatedEvent {
            destination_address: info.destination_address.clone(),
            address_note: info.address_note.clone(),
            ..DepositAddressCreatedEvent::new(&r.chain_in.id, &address, &r.chain_out.id)
        };
        let seen = self.deposit(AMOUNT_USD, at + 60_000);
        let detected = DepositAddressDepositDetectedEvent::from_sda_deposit(&seen, info.clone());
        let confirming = DepositAddressDepositConfirmingEvent {
            expected_confirmed_at: Some(date(at + 60_000 + r.chain_in.confirmation_ms() as i64)),
            ..DepositAddressDepositConfirmingEvent::from_sda_deposit(&seen, 1u64, REQUIRED_CONFIRMATIONS, info.clone())
        };
        let over = self.deposit(AMOUNT_USD * 1_000, at + 120_000);
        let rejected = DepositAddressBridgeRejectedEvent::from_sda_deposit(
            &over,
            RejectReason::OverMax,
            format!("{}:0", over.tx_hash),
            info.clone(),
        );
        let refund = self.refund(&over, &address, at + 180_000);
        let delayed = DepositAddressBridgeDelayedEvent {
            original_error_tag: Some(RejectReason::OperationUnavailable.as_str().to_owned()),
            ..DepositAddressBridgeDelayedEvent::from_sda_deposit(&self.deposit(AMOUNT_USD, at + 240_000), info)
        };
        vec![
            vec![created.into(), detected.into(), confirming.into()],
            vec![rejected.into(), refund],
            vec![delayed.into()],
        ]
    }

    /// The refund of a rejected deposit into `address`, to its sender, at `at_ms`: SDA_REFUND_COMPLETED.
    fn refund(&self, d: &SdaDeposit, address: &str, at_ms: i64) -> WebhookEvent {
        let (refund_id, refund_tx_hash) = ids::refund(seed(), at_ms);
        let trigger = SdaRefundTrigger::RejectedBridge(SdaRefundRejectedBridge::new(
            d.id.clone(),
            false,
            d.amount_wei.clone(),
            d.amount.clone(),
            decimal(d.amount_usd.as_f64()),
            d.token_address.clone(),
            d.token_symbol.clone(),
        ));
        CompletedSdaRefundEvent {
            original_deposit_tx_hash: Some(d.tx_hash.clone()),
            ..CompletedSdaRefundEvent::new(
                refund_id,
                address,
                d.sender.clone(),
                &self.route.chain_in.id,
                trigger,
                refund_tx_hash,
                date(at_ms),
            )
        }
        .into()
    }

    /// A routing deposit address's events: created, a deposit no route takes rejected, a deposit delayed.
    fn routing_address(&self) -> Vec<WebhookEvent> {
        let r = &self.route;
        let at = self.now - HISTORY_MS;
        let worth_enough = RoutingMatcher::SentAmountUsdGreaterThan(RoutingMatcherSentAmountUsdGreaterThan {
            tag: Default::default(),
            value: ROUTE_MINIMUM_USD.into(),
            inclusive: Some(true),
        });
        let routing = RoutingDepositAddress {
            deposit_chain: r.chain_in.id.clone(),
            deposit_address: self.address(),
            routes: vec![RoutingRoute {
                matcher: Some(worth_enough),
                action: RoutingAction::Bridge(RoutingActionBridge {
                    tag: Default::default(),
                    destination_chain: r.chain_out.id.clone(),
                    destination_address: r.recipient.clone(),
                }),
                priority: Some(1),
            }],
            address_note: Some(NOTE.into()),
        };
        let created = RoutingDepositAddressCreatedEvent {
            address_note: routing.address_note.clone(),
            ..RoutingDepositAddressCreatedEvent::new(
                &routing.deposit_chain,
                &routing.deposit_address,
                routing.routes.clone(),
            )
        };
        let small = self.deposit(i64::from(ROUTE_MINIMUM_USD) / 10, at + 60_000);
        let rejected = RoutingDepositAddressBridgeRejectedEvent::from_sda_deposit(
            &small,
            RejectReason::NoRouteFound,
            format!("{}:0", small.tx_hash),
            routing.clone(),
        );
        let delayed = RoutingDepositAddressBridgeDelayedEvent {
            original_error_tag: Some(RejectReason::OperationUnavailable.as_str().to_owned()),
            ..RoutingDepositAddressBridgeDelayedEvent::from_sda_deposit(
                &self.deposit(AMOUNT_USD, at + 120_000),
                routing,
            )
        };
        vec![created.into(), rejected.into(), delayed.into()]
    }

    /// One event of every kind of the contract, in sequences: the events of one record in the order a receiver
    /// would get them (a bridge's PENDING, ACCEPTED, EXECUTED; an address created before its deposits), each
    /// record its own.
    pub fn every_kind(&self) -> Result<Vec<Vec<WebhookEvent>>, String> {
        let life = self.bridge_life()?;
        let mut sequences =
            vec![vec![life.pending, life.accepted, life.executed], vec![self.cancelled()?], vec![self.refunded()?]];
        sequences.extend(self.deposit_address());
        sequences.push(self.routing_address());
        sequences.push(vec![WebhookTestEvent::new("receiver check").into()]);
        Ok(sequences)
    }
}

/// A random seed for made-up ids and values.
fn seed() -> u64 {
    rand::rng().random()
}

/// `amount` a thousand times over.
fn thousandfold(amount: &DecimalString) -> DecimalString {
    let raised = amount.to_decimal().ok().and_then(|a| a.checked_mul(Decimal::ONE_THOUSAND));
    raised.and_then(|a| a.normalize().to_string().parse().ok()).unwrap_or_else(|| amount.clone())
}

/// A USD amount as the decimal string refund triggers carry (two places).
fn decimal(usd: f64) -> DecimalString {
    Decimal::try_from(usd).ok().and_then(|d| d.round_dp(2).normalize().to_string().parse().ok()).unwrap_or_default()
}

/// An amount of `token` worth `usd`, in at most six decimal places.
fn worth(token: &Token, usd: i64) -> DecimalString {
    let amount = Decimal::from(usd).checked_div(token.usd_price).unwrap_or(Decimal::ONE);
    amount.round_dp(token.decimals.min(6)).normalize().to_string().parse().unwrap_or_default()
}

fn bridge_request(from: &Chain, to: &Chain, token: &Token, depositor: &str, recipient: &str) -> BridgeQuoteRequest {
    BridgeQuoteRequest {
        token: token.symbol.clone(),
        chain_in: from.id.clone(),
        chain_out: to.id.clone(),
        amount: worth(token, AMOUNT_USD),
        amount_native: None,
        mode: QuoteMode::Pay,
        is_sda: None,
        depositor: depositor.to_owned(),
        recipient: recipient.to_owned(),
        post_bridge_data: None,
        webhook_url: None,
    }
}

fn swap_request(
    from: &Chain,
    to: &Chain,
    token_in: &Token,
    token_out: &Token,
    depositor: &str,
    recipient: &str,
) -> BridgeSwapQuoteRequest {
    BridgeSwapQuoteRequest {
        chain_in: from.id.clone(),
        chain_out: to.id.clone(),
        amount: worth(token_in, AMOUNT_USD),
        amount_native: None,
        mode: QuoteMode::Pay,
        is_sda: None,
        token_in: token_in.symbol.clone(),
        token_out: token_out.symbol.clone(),
        depositor: depositor.to_owned(),
        recipient: recipient.to_owned(),
        post_bridge_data: None,
        webhook_url: None,
        refund_address: None,
    }
}

/// The first route of the catalogue (chains in its order) on which a bridge of one token and a swap both price.
fn route<'c>(catalogue: &'c Catalogue, project: &str, now: i64) -> Option<Route<'c>> {
    let ctx = || QuoteContext { catalogue, project_id: project, now: date(now), quote_id: ids::seeded_id(seed(), now) };
    for from in catalogue.chains() {
        for to in catalogue.chains().filter(|to| to.id != from.id) {
            let (Some((depositor, _)), Some((recipient, _))) =
                (catalogue.deposit_address(&from.id, seed()), catalogue.deposit_address(&to.id, seed()))
            else {
                continue;
            };
            // The tokens bridges prefer first (stablecoins, in the built-in catalogue), then the others.
            let preferred = &catalogue.fees().bridge_token_preference;
            let mut tokens: Vec<&Token> = from.tokens.values().collect();
            tokens.sort_by_key(|t| preferred.iter().position(|p| *p == t.symbol).unwrap_or(usize::MAX));
            let token = tokens.into_iter().find(|t| {
                t.usd_price > Decimal::ZERO
                    && pricing::quote_bridge(&ctx(), &bridge_request(from, to, t, &depositor, &recipient)).is_ok()
            });
            let swap = from.tokens.values().filter(|t| t.usd_price > Decimal::ZERO).find_map(|t_in| {
                to.tokens
                    .values()
                    .filter(|t_out| t_out.symbol != t_in.symbol)
                    .find(|t_out| {
                        let request = swap_request(from, to, t_in, t_out, &depositor, &recipient);
                        matches!(pricing::quote_bridge_swap(&ctx(), &request), Ok(QuoteResponse::BridgeSwap(_)))
                    })
                    .map(|t_out| (t_in, t_out))
            });
            if let (Some(token), Some((swap_in, swap_out))) = (token, swap) {
                return Some(Route { chain_in: from, chain_out: to, token, swap_in, swap_out, depositor, recipient });
            }
        }
    }
    None
}
