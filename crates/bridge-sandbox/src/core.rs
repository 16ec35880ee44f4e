//! The core every area of the sandbox works over: the [`Store`], the [`Catalogue`], the sandbox [`Clock`], the
//! webhook egress policy, and the counters that ids and made-up chain data come from.

use std::sync::Arc;

use bridge_contract::{DateString, WebhookEvent};

use crate::catalogue::Catalogue;
use crate::clock::Clock;
use crate::counters::Counters;
use crate::egress::WebhookEgress;
use crate::ids;
use crate::store::{Counter, NewEvent, Store, StoreResult};

pub struct Core {
    pub store: Arc<dyn Store>,
    pub catalogue: Catalogue,
    pub clock: Clock,
    /// Where webhooks may be delivered: checked when a `webhookUrl` is given and again at delivery.
    pub egress: WebhookEgress,
    /// One lifecycle pass at a time (`crate::bridges::advance`).
    pub(crate) pass: tokio::sync::Mutex<()>,
    counters: Counters,
}

impl Core {
    pub fn new(store: Arc<dyn Store>, catalogue: Catalogue, clock: Clock) -> Self {
        let egress = WebhookEgress::default();
        Self { store, catalogue, clock, egress, pass: tokio::sync::Mutex::new(()), counters: Counters::default() }
    }

    /// This core with the webhook egress policy `egress` (the default is [`WebhookEgress::default`]).
    pub fn with_webhook_egress(mut self, egress: WebhookEgress) -> Self {
        self.egress = egress;
        self
    }

    /// Milliseconds since the Unix epoch, on the sandbox clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The sandbox clock's time as a date.
    pub fn now(&self) -> DateString {
        date(self.now_ms())
    }

    /// The next value of a counter (unique, increasing within a block; see [`Counters`]).
    pub async fn next(&self, counter: Counter) -> StoreResult<u64> {
        self.counters.next(counter, &*self.store).await
    }

    /// An event of `project` at `at_ms`, ready to append, with the next event id.
    pub async fn event(
        &self,
        project: &str,
        at_ms: i64,
        event: impl Into<WebhookEvent>,
        webhook_url: Option<String>,
    ) -> StoreResult<NewEvent> {
        let id = ids::event_id(self.next(Counter::Event).await?);
        Ok(NewEvent { id, project: project.to_owned(), created_ms: at_ms, event: event.into(), webhook_url })
    }

    /// The USD price of `token` on `chain` as the JSON number records carry (0 when the catalogue has none).
    pub fn usd_price(&self, chain: &str, token: &str) -> bridge_contract::DecimalNumber {
        let price = self.catalogue.chain(chain).and_then(|c| c.token(token)).map(|t| t.usd_price);
        crate::catalogue::usd_number(price.unwrap_or_default())
    }
}

/// A time on the sandbox clock as a date (the clock stays within the dates the contract can write).
pub fn date(ms: i64) -> DateString {
    DateString::from_millis(ms).unwrap_or(DateString::MIN)
}
