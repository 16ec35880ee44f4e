//! Bridge records: the contract's [`BridgeRecord`] a committed quote (or a deposit into a deposit address) becomes,
//! the sandbox's [`Plan`] for it, and what the rest of the sandbox reads of a record whatever its family. Records
//! are the generated types throughout; nothing here names a member or a state by a string.

use bridge_contract::{
    BridgeRecord, BridgeRecordBridge, BridgeRecordBridgeSwap, BridgeRecordCommon, BridgeRecordDepositAddressBridge,
    BridgeState, BridgeSwapState, DateString, DecimalNumber, DecimalString, DepositAddressBridgeState,
    DepositAddressStatePending, QuoteMode, QuoteResponse, Rejection, SponsoredFees, StatePending,
};
use serde::{Deserialize, Serialize};

/// A deposit seen on chain: its transaction and the block that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeenDeposit {
    pub tx_hash: String,
    pub block: i64,
}

/// A departure from the usual path, chosen with a sandbox helper's `outcome` and taken by the lifecycle when its
/// time comes (`crate::domain::lifecycle`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Plan {
    /// `outcome: swapFailed`: the swap fails after the deposit is accepted.
    SwapFailed,
    /// `outcome: failed`: the bridge fails after the deposit is accepted.
    Failed,
    /// `outcome: delayed`: the record waits in PENDING before its deposit is seen.
    Delayed(SeenDeposit),
}

/// What a record is made of when a quote is committed, or a deposit into a deposit address is priced.
pub struct NewRecord<'a> {
    pub quote: &'a QuoteResponse,
    pub project: &'a str,
    /// The request's mode (kept by `bridgeSwap` records).
    pub mode: QuoteMode,
    pub quoted_at: DateString,
    pub committed_at: DateString,
    /// The bridged token's USD price on chainIn (`usdPrice` of the single-token families).
    pub token_usd_price: DecimalNumber,
    /// The deposit address that received the deposit (`depositAddressBridge` records).
    pub deposit_address: Option<&'a str>,
}

impl NewRecord<'_> {
    /// The record, in PENDING, of the quote's family: `bridge`, `bridgeSwap` or `depositAddressBridge`.
    pub fn record(&self) -> BridgeRecord {
        let common = self.common();
        match self.quote {
            QuoteResponse::Bridge(q) => BridgeRecord::Bridge(BridgeRecordBridge {
                tag: Some(Default::default()),
                ..BridgeRecordBridge::new(common, q.token.clone(), self.token_usd_price, StatePending::new().into())
            }),
            QuoteResponse::DepositAddressBridge(q) => {
                let pending = DepositAddressStatePending {
                    deposit_address: self.deposit_address.map(str::to_owned),
                    ..DepositAddressStatePending::new()
                };
                BridgeRecord::DepositAddressBridge(BridgeRecordDepositAddressBridge::new(
                    common,
                    q.token.clone(),
                    self.token_usd_price,
                    pending.into(),
                ))
            }
            // Too many members for a generated constructor: a literal, checked member for member by the compiler.
            QuoteResponse::BridgeSwap(q) => BridgeRecord::BridgeSwap(BridgeRecordBridgeSwap {
                common,
                tag: Default::default(),
                token_in: q.token_in.clone(),
                token_out: q.token_out.clone(),
                min_amount_out: q.min_receive_amount.clone(),
                min_amount_out_usd: q.min_receive_amount_usd,
                usd_price_token_in: q.usd_price_token_in,
                usd_price_token_out: q.usd_price_token_out,
                pre_swap: None,
                post_swap: None,
                mode: Some(self.mode),
                is_atomic_swap: q.is_atomic_swap,
                swap_fee_multiplier: None,
                state: StatePending::new().into(),
            }),
        }
    }

    /// The members every record has: the quote's amounts (pay → in, receive → out), fees and parties.
    fn common(&self) -> BridgeRecordCommon {
        let q = self.quote;
        let fees = q.fees();
        let boost = q.gas_boost();
        BridgeRecordCommon {
            id: q.quote_id().to_owned(),
            user_id: self.project.to_owned(),
            chain_in: q.chain_in().to_owned(),
            chain_out: q.chain_out().to_owned(),
            amount_in: q.pay_amount().clone(),
            amount_in_usd: *q.pay_amount_usd(),
            amount_out: q.receive_amount().clone(),
            amount_out_usd: *q.receive_amount_usd(),
            amount_native: boost.map(|b| b.amount_native.clone()),
            amount_native_usd: boost.map(|b| b.amount_native_usd),
            fee: fees.fee.clone(),
            fee_usd: fees.fee_usd,
            gas_fee: fees.gas_fee.clone(),
            gas_fee_usd: fees.gas_fee_usd,
            platform_fee: fees.platform_fee.clone(),
            platform_fee_usd: fees.platform_fee_usd,
            percentage_fee: fees.percentage_fee.clone(),
            percentage_fee_usd: fees.percentage_fee_usd,
            source_gas_fee: fees.source_gas_fee.clone(),
            source_gas_fee_usd: fees.source_gas_fee_usd,
            sponsored_fees: fees.sponsored_fees.clone().unwrap_or_else(no_sponsored_fees),
            recipient: q.recipient().to_owned(),
            depositor: q.depositor().to_owned(),
            created_at: self.quoted_at,
            commitment_date: self.committed_at,
            speed: q.speed().copied(),
            estimated_duration: q.estimated_duration().copied(),
            post_bridge_data: q.post_bridge_data().cloned(),
            additional_steps: None,
        }
    }
}

/// `sponsoredFees` of a quote that has none: every fee zero.
fn no_sponsored_fees() -> SponsoredFees {
    let zero = DecimalString::default;
    SponsoredFees {
        fee: zero(),
        gas_fee: zero(),
        platform_fee: zero(),
        percentage_fee: zero(),
        source_gas_fee: zero(),
        fee_usd: DecimalNumber::ZERO,
        gas_fee_usd: DecimalNumber::ZERO,
        platform_fee_usd: DecimalNumber::ZERO,
        percentage_fee_usd: DecimalNumber::ZERO,
        source_gas_fee_usd: DecimalNumber::ZERO,
    }
}

/// The record's `state`, as its JSON has it (and as the store indexes it for the history filter).
pub fn state_name(record: &BridgeRecord) -> &'static str {
    match record {
        BridgeRecord::Bridge(r) => r.state.tag(),
        BridgeRecord::BridgeSwap(r) => r.state.tag(),
        BridgeRecord::DepositAddressBridge(r) => r.state.tag(),
    }
}

/// Whether the record is PENDING (committed, no deposit seen).
pub fn is_pending(record: &BridgeRecord) -> bool {
    match record {
        BridgeRecord::Bridge(r) => matches!(r.state, BridgeState::Pending(_)),
        BridgeRecord::BridgeSwap(r) => matches!(r.state, BridgeSwapState::Pending(_)),
        BridgeRecord::DepositAddressBridge(r) => matches!(r.state, DepositAddressBridgeState::Pending(_)),
    }
}

/// Whether the record is EXECUTED.
pub fn is_executed(record: &BridgeRecord) -> bool {
    match record {
        BridgeRecord::Bridge(r) => matches!(r.state, BridgeState::Executed(_)),
        BridgeRecord::BridgeSwap(r) => matches!(r.state, BridgeSwapState::Executed(_)),
        BridgeRecord::DepositAddressBridge(r) => matches!(r.state, DepositAddressBridgeState::Executed(_)),
    }
}

/// Whether the record is CANCELLED (the families that have that state).
pub fn is_cancelled(record: &BridgeRecord) -> bool {
    match record {
        BridgeRecord::Bridge(r) => matches!(r.state, BridgeState::Cancelled(_)),
        BridgeRecord::BridgeSwap(r) => matches!(r.state, BridgeSwapState::Cancelled(_)),
        BridgeRecord::DepositAddressBridge(_) => false,
    }
}

/// Whether the record FAILED (the families that have that state).
pub fn is_failed(record: &BridgeRecord) -> bool {
    match record {
        BridgeRecord::Bridge(r) => matches!(r.state, BridgeState::Failed(_)),
        BridgeRecord::BridgeSwap(_) => false,
        BridgeRecord::DepositAddressBridge(r) => matches!(r.state, DepositAddressBridgeState::Failed(_)),
    }
}

/// Whether the record is in a state its lifecycle ends in: EXECUTED, CANCELLED, FAILED, or one of the refunded
/// states. (A CANCELLED `bridgeSwap` record is final unless a deposit still comes, which starts it again: a late
/// deposit makes it DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD.) Every state of every family is named, so a state the
/// schema adds is decided here.
pub fn is_final(record: &BridgeRecord) -> bool {
    match record {
        BridgeRecord::Bridge(r) => match r.state {
            BridgeState::Executed(_) | BridgeState::Cancelled(_) | BridgeState::Failed(_) => true,
            BridgeState::Pending(_)
            | BridgeState::PendingConfirmation(_)
            | BridgeState::DepositAccepted(_)
            | BridgeState::Accepted(_) => false,
        },
        BridgeRecord::BridgeSwap(r) => match r.state {
            BridgeSwapState::Executed(_)
            | BridgeSwapState::Cancelled(_)
            | BridgeSwapState::SwapFailedRefunded(_)
            | BridgeSwapState::DepositReceivedAfterGracePeriodRefunded(_) => true,
            BridgeSwapState::Pending(_)
            | BridgeSwapState::PendingConfirmation(_)
            | BridgeSwapState::DepositAccepted(_)
            | BridgeSwapState::Accepted(_)
            | BridgeSwapState::SwapFailed(_)
            | BridgeSwapState::DepositReceivedAfterGracePeriod(_) => false,
        },
        BridgeRecord::DepositAddressBridge(r) => match r.state {
            DepositAddressBridgeState::Executed(_) | DepositAddressBridgeState::Failed(_) => true,
            DepositAddressBridgeState::Pending(_)
            | DepositAddressBridgeState::PendingConfirmation(_)
            | DepositAddressBridgeState::DepositAccepted(_)
            | DepositAddressBridgeState::Accepted(_) => false,
        },
    }
}

/// The payout of an EXECUTED record: its transaction hash and time.
pub fn withdrawal(record: &BridgeRecord) -> Option<(&str, DateString)> {
    match record {
        BridgeRecord::Bridge(BridgeRecordBridge { state: BridgeState::Executed(s), .. })
        | BridgeRecord::BridgeSwap(BridgeRecordBridgeSwap { state: BridgeSwapState::Executed(s), .. }) => {
            Some((&s.withdraw_tx_hash, s.withdraw_committed_at))
        }
        BridgeRecord::DepositAddressBridge(BridgeRecordDepositAddressBridge {
            state: DepositAddressBridgeState::Executed(s),
            ..
        }) => Some((&s.withdraw_tx_hash, s.withdraw_committed_at)),
        _ => None,
    }
}

/// When a record in PENDING_CONFIRMATION expects its deposit to be final.
pub fn expected_confirmation(record: &BridgeRecord) -> Option<DateString> {
    match record {
        BridgeRecord::Bridge(BridgeRecordBridge { state: BridgeState::PendingConfirmation(s), .. })
        | BridgeRecord::BridgeSwap(BridgeRecordBridgeSwap { state: BridgeSwapState::PendingConfirmation(s), .. }) => {
            Some(s.expected_deposit_confirmed_at)
        }
        BridgeRecord::DepositAddressBridge(BridgeRecordDepositAddressBridge {
            state: DepositAddressBridgeState::PendingConfirmation(s),
            ..
        }) => Some(s.expected_deposit_confirmed_at),
        _ => None,
    }
}

/// The token a refund of the record's deposit sends back: the deposited one.
pub fn deposited_token(record: &BridgeRecord) -> &str {
    match record {
        BridgeRecord::Bridge(r) => &r.token,
        BridgeRecord::BridgeSwap(r) => &r.token_in,
        BridgeRecord::DepositAddressBridge(r) => &r.token,
    }
}

/// The token a quote bridges as such: the single-token variants' `token`, a swap's `tokenIn`.
pub fn quote_token(quote: &QuoteResponse) -> &str {
    match quote {
        QuoteResponse::Bridge(q) => &q.token,
        QuoteResponse::DepositAddressBridge(q) => &q.token,
        QuoteResponse::BridgeSwap(q) => &q.token_in,
    }
}

/// A bridge record and what the lifecycle needs to move it on. Its state is the record's own.
#[derive(Debug, Clone)]
pub struct StoredBridge {
    pub id: String,
    pub project: String,
    pub record: BridgeRecord,
    pub rejections: Vec<Rejection>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// When the lifecycle next moves this bridge (`None`: final state, or parked).
    pub next_ms: Option<i64>,
    pub webhook_url: Option<String>,
    /// A departure from the usual path chosen through a sandbox helper's `outcome`.
    /// The `addressNote` of the (routing) deposit address that received a deposit-address bridge's deposit, which
    /// its events carry; kept on the bridge so that the lifecycle does not read the address at each step.
    pub address_note: Option<String>,
    pub plan: Option<Plan>,
    /// How many times it was saved: `BridgeStore::save_bridge` writes only over the version it was read at.
    pub version: i64,
}

impl StoredBridge {
    /// A new bridge of `project` with `record` (its id is the record's), made at `now_ms`.
    pub fn new(project: &str, record: BridgeRecord, now_ms: i64, webhook_url: Option<String>) -> Self {
        Self {
            id: record.common().id.clone(),
            project: project.to_owned(),
            record,
            rejections: vec![],
            created_ms: now_ms,
            updated_ms: now_ms,
            next_ms: None,
            webhook_url,
            address_note: None,
            plan: None,
            version: 0,
        }
    }

    /// Whether the bridge's lifecycle is over: its record [`is_final`] and no step of it is due. Retention purges
    /// only such bridges (a parked bridge, whose step found nothing to do, is not final and is kept).
    pub fn has_ended(&self) -> bool {
        self.next_ms.is_none() && is_final(&self.record)
    }
}

/// A time on a clock as a date (the clocks stay within the dates the contract can write).
pub fn date(ms: i64) -> DateString {
    DateString::from_millis(ms).unwrap_or(DateString::MIN)
}
