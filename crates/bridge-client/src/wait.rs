//! Following a bridge until it reaches a final state or a state of the caller's choosing:
//! [`Client::wait_for_bridge`], and the stream of its state changes [`Client::bridge_states`].
//!
//! The bridge record (`GET /bridge/history/bridge/{id}`) is the truth; the event feed
//! (`GET /webhook/user-events-cursor`) tells when to read it:
//!
//! * the feed is read from the bridge's `createdAt` on, every [`WaitPolicy::feed_interval`], following its
//!   cursor (only new events are fetched); an event about this bridge (its `_id`; events of kinds newer than
//!   this build count too) makes the client read the record at once;
//! * the record is also read on a backoff schedule ([`WaitPolicy::poll_initial`] doubling to
//!   [`WaitPolicy::poll_max`], with jitter, from the start again after each change), for the transitions no
//!   event announces (`PENDING_CONFIRMATION`, `DEPOSIT_ACCEPTED`, `FAILED`, `SWAP_FAILED`, ...);
//! * if the feed cannot be read (the credential is not accepted there, a page does not decode), the client logs
//!   it once and polls only. [`WaitPolicy::without_feed`] polls only from the start.
//!
//! Final states: `EXECUTED`, `CANCELLED`, `FAILED`, `SWAP_FAILED_REFUNDED` and
//! `DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD_REFUNDED` ([`BridgeRecordExt::is_final`], an exhaustive match over the
//! contract's state enums, so a state added to the schema does not compile until it is classified here).
//!
//! Each waiter reads the feed on its own: fine for a few bridges at a time; a service following many should
//! receive the webhooks (`crate::receiver`, feature `axum`) or read the feed once for all of them.

use std::time::Duration;

use bridge_contract::operations::{GetBridgeError, ListUserEventsError};
use bridge_contract::{
    BridgeRecord, BridgeState, BridgeSwapState, DecimalNumber, DepositAddressBridgeState, ListUserEventsQuery,
};
use futures_util::stream::{self, BoxStream, StreamExt as _};
use tokio::time::Instant;

use crate::client::Client;
use crate::error::Error;
use crate::webhook::Event;

pub use crate::wait_policy::WaitPolicy;

/// The member of a bridge event that holds the bridge's id (`bridgeMembers._id` in the schema, the same member
/// as `BridgeRecordCommon::id`).
const BRIDGE_ID_MEMBER: &str = "_id";

/// When [`Client::wait_for_bridge`] returns (besides a final state, where it always returns).
#[derive(Debug, Clone, Copy)]
pub enum Until {
    /// A final state.
    Final,
    /// The state with this tag, as the contract's enums write it (for example
    /// `bridge_contract::StateDepositAcceptedState::DepositAccepted.as_str()`).
    State(&'static str),
    /// The first record for which the function returns `true`.
    Matches(fn(&BridgeRecord) -> bool),
}

impl Until {
    fn reached(&self, record: &BridgeRecord) -> bool {
        record.is_final()
            || match self {
                Until::Final => false,
                Until::State(tag) => record.state_tag() == *tag,
                Until::Matches(f) => f(record),
            }
    }
}

/// The state of a bridge record, whatever its family.
pub trait BridgeRecordExt {
    /// The `state` tag (`PENDING`, `EXECUTED`, ...), from the contract's state enums.
    fn state_tag(&self) -> &'static str;
    /// Whether the bridge can change no more.
    fn is_final(&self) -> bool;
    /// The bridge id (`_id`, the id of the committed quote).
    fn bridge_id(&self) -> &str;
}

impl BridgeRecordExt for BridgeRecord {
    fn state_tag(&self) -> &'static str {
        match self {
            BridgeRecord::Bridge(b) => b.state.tag(),
            BridgeRecord::BridgeSwap(b) => b.state.tag(),
            BridgeRecord::DepositAddressBridge(b) => b.state.tag(),
        }
    }

    fn is_final(&self) -> bool {
        match self {
            BridgeRecord::Bridge(b) => bridge_state_is_final(&b.state),
            BridgeRecord::BridgeSwap(b) => swap_state_is_final(&b.state),
            BridgeRecord::DepositAddressBridge(b) => deposit_address_state_is_final(&b.state),
        }
    }

    fn bridge_id(&self) -> &str {
        match self {
            BridgeRecord::Bridge(b) => &b.common.id,
            BridgeRecord::BridgeSwap(b) => &b.common.id,
            BridgeRecord::DepositAddressBridge(b) => &b.common.id,
        }
    }
}

// Exhaustive on purpose (no `_`): a state added to the contract must be classified here before this compiles.
// CANCELLED is final for a waiter: the quote expired (a swap record can still take a late deposit, which is
// refunded: DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD and its REFUNDED state).
fn bridge_state_is_final(state: &BridgeState) -> bool {
    match state {
        BridgeState::Executed(_) | BridgeState::Cancelled(_) | BridgeState::Failed(_) => true,
        BridgeState::Pending(_)
        | BridgeState::PendingConfirmation(_)
        | BridgeState::DepositAccepted(_)
        | BridgeState::Accepted(_) => false,
    }
}

fn swap_state_is_final(state: &BridgeSwapState) -> bool {
    match state {
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
    }
}

fn deposit_address_state_is_final(state: &DepositAddressBridgeState) -> bool {
    match state {
        DepositAddressBridgeState::Executed(_) | DepositAddressBridgeState::Failed(_) => true,
        DepositAddressBridgeState::Pending(_)
        | DepositAddressBridgeState::PendingConfirmation(_)
        | DepositAddressBridgeState::DepositAccepted(_)
        | DepositAddressBridgeState::Accepted(_) => false,
    }
}

fn is_state_tag(tag: &str) -> bool {
    BridgeState::TAGS.contains(&tag)
        || BridgeSwapState::TAGS.contains(&tag)
        || DepositAddressBridgeState::TAGS.contains(&tag)
}

fn created_at_ms(record: &BridgeRecord) -> i64 {
    match record {
        BridgeRecord::Bridge(b) => b.common.created_at.millis(),
        BridgeRecord::BridgeSwap(b) => b.common.created_at.millis(),
        BridgeRecord::DepositAddressBridge(b) => b.common.created_at.millis(),
    }
}

/// Why [`Client::wait_for_bridge`] did not return a record.
#[derive(Debug)]
pub enum WaitError {
    /// The record could not be read: the bridge does not exist (404 `BridgeNotFound`), the credential was
    /// refused, or the service stayed unreachable through the retries.
    GetBridge(Error<GetBridgeError>),
    /// The time ran out first.
    TimedOut {
        /// The bridge waited for.
        bridge_id: String,
        /// How long the wait lasted.
        waited: Duration,
        /// The last record read, if any.
        last: Option<Box<BridgeRecord>>,
    },
    /// [`Until::State`] names a state no bridge record has.
    UnknownState(&'static str),
}

impl std::fmt::Display for WaitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitError::GetBridge(e) => write!(f, "waiting for the bridge: {e}"),
            WaitError::TimedOut { bridge_id, waited, last } => {
                write!(f, "waiting for bridge {bridge_id}: timed out after {waited:?}")?;
                match last {
                    Some(record) => write!(f, " in state {}", record.state_tag()),
                    None => write!(f, " before the record could be read"),
                }
            }
            WaitError::UnknownState(tag) => {
                write!(f, "waiting for state {tag}, which no bridge record has")
            }
        }
    }
}

impl std::error::Error for WaitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WaitError::GetBridge(e) => Some(e),
            _ => None,
        }
    }
}

/// The event feed from a point on, read incrementally: the cursor of the last page read and how many of its
/// events were seen. The last page has no `nextPageToken`, so it is read again from its own start (the cursor of
/// the page before) and its first `seen` events skipped: the feed's order is stable and new events come last.
struct FeedTail {
    since: DecimalNumber,
    page_start: Option<String>,
    seen: usize,
}

impl FeedTail {
    fn new(since_ms: i64) -> Option<Self> {
        Some(Self { since: DecimalNumber::try_from(since_ms as f64).ok()?, page_start: None, seen: 0 })
    }

    /// The events written since the last call.
    async fn read_new(&mut self, client: &Client) -> Result<Vec<Event>, Error<ListUserEventsError>> {
        let mut new = Vec::new();
        loop {
            let query = ListUserEventsQuery {
                since_timestamp: self.since,
                page_token: self.page_start.clone(),
                page_size: None,
            };
            let page = client.list_user_events(&query).await?;
            let count = page.items.len();
            new.extend(page.items.into_iter().skip(self.seen));
            match page.next_page_token {
                Some(token) => {
                    self.page_start = Some(token);
                    self.seen = 0;
                }
                None => {
                    self.seen = self.seen.max(count);
                    return Ok(new);
                }
            }
        }
    }
}

/// Whether `event` is about bridge `id`.
fn concerns(event: &Event, id: &str) -> bool {
    let value = match event {
        Event::Known(e) => serde_json::to_value(e).ok(),
        Event::Unknown { raw, .. } => Some(raw.clone()),
    };
    value.as_ref().and_then(|v| v.get(BRIDGE_ID_MEMBER)).and_then(|v| v.as_str()) == Some(id)
}

/// The state of one follower.
struct Follower<'a> {
    client: &'a Client,
    id: String,
    policy: WaitPolicy,
    last: Option<&'static str>,
    done: bool,
    feed: Option<FeedTail>,
    feed_failed: bool,
    next_feed: Instant,
    polls: backon::ExponentialBackoff,
    next_poll: Instant,
}

impl<'a> Follower<'a> {
    fn new(client: &'a Client, id: &str) -> Self {
        let policy = client.raw.inner.wait;
        let now = Instant::now();
        Self {
            client,
            id: id.to_owned(),
            policy,
            last: None,
            done: false,
            feed: None,
            feed_failed: !policy.uses_feed(),
            next_feed: now,
            polls: policy.poll_schedule(),
            next_poll: now,
        }
    }

    /// The next record whose state differs from the last one's; `None` after a final state.
    async fn next_change(&mut self) -> Result<Option<BridgeRecord>, Error<GetBridgeError>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let now = Instant::now();
            let mut read = now >= self.next_poll;
            if !read && now >= self.next_feed {
                read = self.feed_mentions_bridge().await;
                self.next_feed = Instant::now() + self.policy.feed_interval();
            }
            if read {
                let record = self.client.get_bridge(&self.id).await?;
                if self.feed.is_none() && !self.feed_failed {
                    self.feed = FeedTail::new(created_at_ms(&record));
                }
                let tag = record.state_tag();
                if self.last != Some(tag) {
                    self.last = Some(tag);
                    self.done = record.is_final();
                    self.polls = self.policy.poll_schedule();
                    self.next_poll = Instant::now() + self.polls.next().unwrap_or(self.policy.poll_initial());
                    return Ok(Some(record));
                }
                self.next_poll = Instant::now() + self.polls.next().unwrap_or(self.policy.poll_max());
                continue;
            }
            let wake = if self.feed.is_some() { self.next_poll.min(self.next_feed) } else { self.next_poll };
            tokio::time::sleep_until(wake).await;
        }
    }

    /// Reads the new events of the feed; whether one is about this bridge. A feed that fails is left for good.
    async fn feed_mentions_bridge(&mut self) -> bool {
        let Some(feed) = self.feed.as_mut() else {
            return false;
        };
        match feed.read_new(self.client).await {
            Ok(events) => events.iter().any(|e| concerns(e, &self.id)),
            Err(e) => {
                tracing::warn!(bridge_id = %self.id, error = %e, "the event feed cannot be read; polling the bridge only");
                self.feed = None;
                self.feed_failed = true;
                false
            }
        }
    }
}

impl Client {
    /// The bridge record each time its state changes: first as it is now, then every record whose state differs
    /// from the one before, ending after a final state (see the [module documentation](crate::wait) for how it
    /// is followed). The stream ends after yielding the first error. It never ends by itself before a final
    /// state: bound it with `tokio::time::timeout` or [`Client::wait_for_bridge`].
    pub fn bridge_states(&self, bridge_id: &str) -> BoxStream<'_, Result<BridgeRecord, Error<GetBridgeError>>> {
        stream::try_unfold(Follower::new(self, bridge_id), |mut follower| async move {
            Ok(follower.next_change().await?.map(|record| (record, follower)))
        })
        .boxed()
    }

    /// Follows bridge `bridge_id` until it reaches a final state or `until`, and returns that record; at most
    /// `timeout` (then [`WaitError::TimedOut`], with the last record read). A final state other than the one
    /// asked for is returned too: check [`BridgeRecordExt::state_tag`].
    ///
    /// ```no_run
    /// # async fn run(client: bridge_client::Client, id: &str) -> Result<(), bridge_client::wait::WaitError> {
    /// use std::time::Duration;
    /// use bridge_client::wait::{BridgeRecordExt as _, Until};
    /// use bridge_contract::StateExecutedState;
    ///
    /// let record = client.wait_for_bridge(id, Until::Final, Duration::from_secs(15 * 60)).await?;
    /// if record.state_tag() == StateExecutedState::Executed.as_str() {
    ///     println!("paid out");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_bridge(
        &self,
        bridge_id: &str,
        until: Until,
        timeout: Duration,
    ) -> Result<BridgeRecord, WaitError> {
        if let Until::State(tag) = until {
            if !is_state_tag(tag) {
                return Err(WaitError::UnknownState(tag));
            }
        }
        let started = Instant::now();
        let mut follower = Follower::new(self, bridge_id);
        let mut last = None;
        let follow = async {
            while let Some(record) = follower.next_change().await.map_err(WaitError::GetBridge)? {
                if until.reached(&record) {
                    return Ok(record);
                }
                last = Some(Box::new(record));
            }
            // The follower ends only after a final state, which `until` always reaches: not reached in practice.
            Err(WaitError::GetBridge(Error::InvalidRequest("the bridge's states ended early".to_owned())))
        };
        let result = tokio::time::timeout(timeout, follow).await;
        result.unwrap_or_else(|_| {
            Err(WaitError::TimedOut { bridge_id: bridge_id.to_owned(), waited: started.elapsed(), last })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_tag_of_the_contract_is_known() {
        for tag in BridgeState::TAGS.iter().chain(BridgeSwapState::TAGS) {
            assert!(is_state_tag(tag));
        }
        assert!(!is_state_tag("DONE"));
    }

    #[test]
    fn bridge_events_carry_the_id_under_the_member_the_records_use() {
        // The same member name as the record's id: a record serialised by the contract's types.
        let record: BridgeRecord = serde_json::from_value(serde_json::json!({
            "_id": "q-1", "userId": "p", "chainIn": "ETHEREUM", "chainOut": "BASE",
            "amountIn": "1", "amountInUsd": 1, "amountOut": "1", "amountOutUsd": 1,
            "amountNative": null, "amountNativeUsd": null,
            "fee": "0", "feeUsd": 0, "gasFee": "0", "gasFeeUsd": 0, "platformFee": "0", "platformFeeUsd": 0,
            "percentageFee": "0", "percentageFeeUsd": 0, "sourceGasFee": "0", "sourceGasFeeUsd": 0,
            "sponsoredFees": {
                "fee": "0", "gasFee": "0", "platformFee": "0", "percentageFee": "0", "sourceGasFee": "0",
                "feeUsd": 0, "gasFeeUsd": 0, "platformFeeUsd": 0, "percentageFeeUsd": 0, "sourceGasFeeUsd": 0
            },
            "recipient": "0x2", "depositor": "0x1",
            "createdAt": "2026-01-02T03:04:05.678Z", "commitmentDate": "2026-01-02T03:04:05.678Z",
            "_tag": "bridge", "token": "USDC", "usdPrice": 1, "state": "PENDING"
        }))
        .unwrap();
        assert_eq!(record.bridge_id(), "q-1");
        let value = serde_json::to_value(&record).unwrap();
        assert_eq!(value.get(BRIDGE_ID_MEMBER).and_then(|v| v.as_str()), Some("q-1"));
        assert_eq!(record.state_tag(), "PENDING");
        assert!(!record.is_final());
        assert_eq!(created_at_ms(&record), 1_767_323_045_678);
    }

    #[test]
    fn unknown_events_count_when_they_name_the_bridge() {
        let raw = serde_json::json!({ "_tag": "BRIDGE_TELEPORTED", "_id": "q-1" });
        let event = Event::Unknown { tag: "BRIDGE_TELEPORTED".into(), raw };
        assert!(concerns(&event, "q-1"));
        assert!(!concerns(&event, "q-2"));
    }
}
