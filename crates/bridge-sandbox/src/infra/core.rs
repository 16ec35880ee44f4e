//! The core every area of the sandbox works over: the [`Store`], the [`Catalogue`], the clocks (the sandbox's
//! [`Clock`] and each project's, read from the store: [`crate::infra::clock`]), the webhook egress policy and signing
//! key, the fault profiles ([`crate::infra::faults`]), and the counters and key that ids and made-up chain data come
//! from ([`crate::domain::ids`]). The contract's operations are
//! methods of `Core` too, an `impl Core` block per area in `crate::operations` (a layer above this one).

use std::sync::Arc;

use bridge_contract::webhook::WebhookSigner;
use bridge_contract::WebhookEvent;

use crate::domain::catalogue::Catalogue;
use crate::domain::ids::Ids;
use crate::domain::webhook_url;
use crate::infra::clock::{base_ms, Clock, Floors, ProjectClock};
use crate::infra::counters::Counters;
use crate::infra::egress::WebhookEgress;
use crate::infra::faults::Faults;
use crate::infra::store::{Counter, NewEvent, Store, StoreResult};

pub struct Core {
    pub store: Arc<dyn Store>,
    pub catalogue: Catalogue,
    /// The sandbox's clock: where projects start (and restart after a reset).
    pub clock: Clock,
    /// Where webhooks may be delivered: checked when a `webhookUrl` is given and again at delivery.
    pub egress: WebhookEgress,
    /// The projects' fault profiles (`PUT /sandbox/faults`, `serve --faults`): none unless set.
    pub faults: Faults,
    /// The key webhook deliveries are signed with (its public half is `GET /webhook/public-key`): the deliverer's,
    /// and the receiver check's.
    pub signer: Arc<WebhookSigner>,
    /// One lifecycle pass at a time (`crate::pipeline::lifecycle::advance`, and a cancel).
    pub(crate) pass: tokio::sync::Mutex<()>,
    /// The latest time answered per project (`--clock real` across wall-clock steps).
    pub(crate) floors: Floors,
    counters: Counters,
    /// The key of ids and feed page tokens.
    pub(crate) ids: Ids,
}

impl Core {
    pub fn new(
        store: Arc<dyn Store>,
        catalogue: Catalogue,
        clock: Clock,
        ids: Ids,
        signer: Arc<WebhookSigner>,
    ) -> Self {
        Self {
            faults: Faults::off(store.clone()),
            store,
            catalogue,
            clock,
            egress: WebhookEgress::default(),
            signer,
            pass: tokio::sync::Mutex::new(()),
            floors: Floors::default(),
            counters: Counters::default(),
            ids,
        }
    }

    /// This core with the webhook egress policy `egress` (the default is [`WebhookEgress::default`]).
    pub fn with_webhook_egress(mut self, egress: WebhookEgress) -> Self {
        self.egress = egress;
        self
    }

    /// This core with the fault profiles `faults` (the default has none: [`Faults::off`]).
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// The clock of `project` as the store keeps it (the project is first seen now if it has none yet).
    pub async fn project_clock(&self, project: &str) -> StoreResult<ProjectClock> {
        self.store.project_clock(project, &self.clock.project_start()).await
    }

    /// Milliseconds since the Unix epoch, on `project`'s clock.
    pub async fn now_of(&self, project: &str) -> StoreResult<i64> {
        let clock = self.project_clock(project).await?;
        Ok(self.answer(project, &clock))
    }

    /// The time `project`'s stored `clock` answers now (kept as this instance's floor of the project).
    pub fn answer(&self, project: &str, clock: &ProjectClock) -> i64 {
        self.floors.answer(project, clock, base_ms(self.clock.mode()))
    }

    /// A made-up seed from the next value of a counter (unique within the store, see [`Counters`]; unique across
    /// stores through the key of [`Ids`]).
    pub async fn next(&self, counter: Counter) -> StoreResult<u64> {
        let n = self.counters.next(counter, &*self.store).await?;
        Ok(self.ids.seed(counter, n))
    }

    /// An ObjectId-like id from the next value of a counter, made at `at_ms` ([`Ids::object_id`]).
    pub async fn object_id(&self, counter: Counter, at_ms: i64) -> StoreResult<String> {
        let n = self.counters.next(counter, &*self.store).await?;
        Ok(self.ids.object_id(counter, n, at_ms))
    }

    /// The checks of a `webhookUrl` when it is given: no user name or password in it
    /// ([`webhook_url::refuse_credentials`]), then the webhook egress policy ([`WebhookEgress::check_webhook_url`]).
    /// 422 `InvalidRequest` naming the rule.
    pub async fn check_webhook_url(&self, url: Option<&str>) -> Result<(), bridge_contract::InvalidRequest> {
        if let Some(url) = url {
            webhook_url::refuse_credentials(url)?;
        }
        self.egress.check_webhook_url(url).await
    }

    /// An event of `project` at `at_ms`, ready to append, with the next event id.
    pub async fn event(
        &self,
        project: &str,
        at_ms: i64,
        event: impl Into<WebhookEvent>,
        webhook_url: Option<String>,
    ) -> StoreResult<NewEvent> {
        let id = self.object_id(Counter::Event, at_ms).await?;
        Ok(NewEvent { id, project: project.to_owned(), created_ms: at_ms, event: event.into(), webhook_url })
    }

    /// The events of `project` at `at_ms`, each with the next event id and the same `webhook_url`.
    pub async fn new_events(
        &self,
        project: &str,
        at_ms: i64,
        events: Vec<WebhookEvent>,
        webhook_url: &Option<String>,
    ) -> StoreResult<Vec<NewEvent>> {
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            out.push(self.event(project, at_ms, event, webhook_url.clone()).await?);
        }
        Ok(out)
    }

    /// The USD price of `token` on `chain` as the JSON number records carry (0 when the catalogue has none).
    pub fn usd_price(&self, chain: &str, token: &str) -> bridge_contract::DecimalNumber {
        let price = self.catalogue.chain(chain).and_then(|c| c.token(token)).map(|t| t.usd_price);
        crate::domain::catalogue::usd_number(price.unwrap_or_default())
    }
}
