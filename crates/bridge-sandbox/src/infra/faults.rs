//! Fault profiles at run time: each instance's view of every project's own profile (`PUT /sandbox/faults`, kept in
//! the store's faults area) and the sandbox's default (`serve --faults`), the per-project counters the draws are
//! read at ([`crate::domain::faults`]), and the metrics of what was injected. The API's admission
//! ([`ApiAdmission`]) asks it about every request of the production operations; the deliverer about every delivery
//! attempt.
//!
//! Like the access view (`crate::access`), the view is kept in memory and a task polls the store's fault version
//! every [`REFRESH`] (one indexed read of one row), reading the profiles again only when it moved: a request pays no
//! store read, and a change made on any instance of a database is in force on every other within a poll (on the
//! instance that made it, at once). Off by default: with no profile and no default, nothing is drawn or counted.
//!
//! Determinism: each project has two counters in this instance's memory, one of its requests and one of its
//! delivery attempts, counting only while its profile has a fault of that group on; the `n`-th request draws the
//! `n`-th number of the project's stream. With `serve --seed` the streams are the seed's, so a fresh sandbox
//! started with that seed faults the same requests of the same sequence; several instances each count their own
//! (exact per instance). Counters start at 0 at each start.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use bridge_contract::operations::{SandboxSetFaults, SANDBOX_FAULT_HEADER};
use bridge_contract::{Operation, SandboxDeliveryFault, SandboxFaultProfile, SandboxFaultSource, SandboxFaults};
use bridge_server::{Admission, Caller, Decision, Throttled, Verdict};

use crate::domain::faults::{self, DeliveryFault, FaultKey, RequestFault, Stream};
use crate::infra::store::{FaultSnapshot, Store, StoreResult};
use crate::infra::telemetry;

/// How often each instance polls the store's fault version.
pub const REFRESH: Duration = Duration::from_millis(250);

/// The profiles of one fault version.
#[derive(Default)]
struct View {
    version: i64,
    own: HashMap<String, Arc<SandboxFaultProfile>>,
}

struct Inner {
    store: Arc<dyn Store>,
    default: Arc<SandboxFaultProfile>,
    key: FaultKey,
    view: RwLock<Arc<View>>,
    /// Per project: requests and delivery attempts drawn for so far.
    counters: Mutex<HashMap<String, [u64; 2]>>,
    refreshing: tokio::sync::Mutex<()>,
}

/// The fault profiles of one instance. Cheap to clone; its refresh task ends when the last clone is dropped.
#[derive(Clone)]
pub struct Faults(Arc<Inner>);

impl Faults {
    /// The profiles of `store` with `default` for every project without its own, draws keyed by `key`, and the
    /// refresh task on the current tokio runtime.
    pub async fn open(store: Arc<dyn Store>, default: SandboxFaultProfile, key: FaultKey) -> StoreResult<Self> {
        let snapshot = store.fault_profiles().await?;
        let faults = Self::new(store, default, key, snapshot);
        tokio::spawn(refresh_loop(Arc::downgrade(&faults.0)));
        Ok(faults)
    }

    /// No profile, no default, nothing polled (a core made without `open`, in tests and benchmarks): no fault.
    pub fn off(store: Arc<dyn Store>) -> Self {
        Self::new(store, faults::none(), FaultKey::random(), FaultSnapshot::default())
    }

    fn new(store: Arc<dyn Store>, default: SandboxFaultProfile, key: FaultKey, snapshot: FaultSnapshot) -> Self {
        Self(Arc::new(Inner {
            store,
            default: Arc::new(default),
            key,
            view: RwLock::new(Arc::new(view(snapshot))),
            counters: Default::default(),
            refreshing: Default::default(),
        }))
    }

    fn view(&self) -> Arc<View> {
        self.0.view.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reads the profiles again if the store's fault version moved (or `always`); whether it read them.
    async fn reload(&self, always: bool) -> StoreResult<bool> {
        let _one_at_a_time = self.0.refreshing.lock().await;
        if !always && self.0.store.fault_version().await? == self.view().version {
            return Ok(false);
        }
        let view = view(self.0.store.fault_profiles().await?);
        tracing::debug!(version = view.version, projects = view.own.len(), "fault profiles reloaded");
        *self.0.view.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(view);
        Ok(true)
    }

    /// Reloads the profiles if the store's fault version moved; whether it did.
    pub async fn refresh(&self) -> StoreResult<bool> {
        self.reload(false).await
    }

    /// The profile in force for `project`, and whether it is its own.
    pub fn profile_of(&self, project: &str) -> (Arc<SandboxFaultProfile>, SandboxFaultSource) {
        match self.view().own.get(project) {
            Some(own) => (own.clone(), SandboxFaultSource::Project),
            None => (self.0.default.clone(), SandboxFaultSource::Default),
        }
    }

    /// `project`'s profile as `GET /sandbox/faults` answers it.
    pub fn answer(&self, project: &str) -> SandboxFaults {
        let (profile, source) = self.profile_of(project);
        SandboxFaults { profile: (*profile).clone(), source }
    }

    /// Makes `profile` `project`'s own: in the store, then in this instance's view at once.
    pub async fn set(&self, project: &str, profile: &SandboxFaultProfile) -> StoreResult<()> {
        self.0.store.set_fault_profile(project, profile, crate::infra::clock::wall_ms()).await?;
        self.reload(true).await.map(drop)
    }

    /// Forgets `project`'s own profile: in the store, then in this instance's view at once.
    pub async fn clear(&self, project: &str) -> StoreResult<()> {
        self.0.store.clear_fault_profile(project).await?;
        self.reload(true).await.map(drop)
    }

    /// The next draw of `project`'s `stream` (counted).
    fn next_draw(&self, project: &str, stream: Stream) -> f64 {
        let n = {
            let mut counters = self.0.counters.lock().unwrap_or_else(|p| p.into_inner());
            let counter = &mut counters.entry(project.to_owned()).or_default()[stream as usize];
            *counter += 1;
            *counter - 1
        };
        self.0.key.draw(project, stream, n)
    }

    /// The fault of `project`'s next request, if its profile draws one (counted in `/metrics`).
    pub fn for_request(&self, project: &str) -> Option<RequestFault> {
        let (profile, _) = self.profile_of(project);
        let on = faults::requests_on(&profile)?;
        let fault = faults::request_fault(on, self.next_draw(project, Stream::Requests))?;
        metrics::counter!(telemetry::FAULTS_INJECTED, "on" => "request", "kind" => fault.kind().as_str()).increment(1);
        Some(fault)
    }

    /// The fault of `project`'s next delivery attempt, if its profile draws one. The deliverer counts it
    /// ([`count_delivery_fault`]) when it injects it: a duplicate only once the receiver acknowledged the first
    /// send.
    pub fn for_delivery(&self, project: &str) -> Option<DeliveryFault> {
        let (profile, _) = self.profile_of(project);
        let on = faults::deliveries_on(&profile)?;
        faults::delivery_fault(on, self.next_draw(project, Stream::Deliveries))
    }
}

/// Counts a delivery fault injected, in `/metrics`.
pub fn count_delivery_fault(kind: SandboxDeliveryFault) {
    metrics::counter!(telemetry::FAULTS_INJECTED, "on" => "delivery", "kind" => kind.as_str()).increment(1);
}

fn view(snapshot: FaultSnapshot) -> View {
    View {
        version: snapshot.version,
        own: snapshot.profiles.into_iter().map(|p| (p.project, Arc::new(p.profile))).collect(),
    }
}

/// Polls the fault version every [`REFRESH`] until the faults are dropped.
async fn refresh_loop(faults: Weak<Inner>) {
    loop {
        tokio::time::sleep(REFRESH).await;
        let Some(inner) = faults.upgrade() else { return };
        if let Err(e) = Faults(inner).refresh().await {
            tracing::warn!(error = %e, "refreshing the fault profiles failed");
        }
    }
}

/// The admission of the production operations: the per-project rate limit first (when there is one: a request
/// over it is refused as usual, and draws no fault), then the project's request faults. The sandbox helpers are
/// served by a router without it (their faults would fault a test's own set-up, and a project could not turn
/// faults off), and so is the dashboard.
pub struct ApiAdmission {
    pub rate_limit: Option<Arc<dyn Admission>>,
    pub faults: Faults,
}

impl Admission for ApiAdmission {
    /// The rate limit alone (what is counted against a project's budget).
    fn admit(&self, caller: &Caller, operation: &'static str) -> Result<(), Throttled> {
        self.rate_limit.as_ref().map_or(Ok(()), |limit| limit.admit(caller, operation))
    }

    fn decide(&self, caller: &Caller, operation: &'static str) -> Decision {
        if let Err(throttled) = self.admit(caller, operation) {
            return Decision::new(Verdict::TooManyRequests(throttled));
        }
        let Some(fault) = self.faults.for_request(&caller.project_id) else {
            return Decision::serve();
        };
        tracing::info!(project = %caller.project_id, operation, fault = fault.kind().as_str(), "fault injected");
        let verdict = match fault {
            RequestFault::TooManyRequests { retry_after } => Verdict::TooManyRequests(Throttled {
                message: format!(
                    "a fault injected on purpose: project {}'s fault profile answers some requests 429 (retry after \
                     {} ms); GET /sandbox/faults shows it",
                    caller.project_id,
                    retry_after.as_millis()
                ),
                retry_after,
            }),
            RequestFault::Unavailable => Verdict::Unavailable(format!(
                "a fault injected on purpose: project {}'s fault profile answers some requests 503; nothing was \
                 changed; GET /sandbox/faults shows it",
                caller.project_id
            )),
            RequestFault::Delay(wait) => Verdict::ServeAfter(wait),
        };
        Decision::new(verdict)
            .with_header(HeaderName::from_static(SANDBOX_FAULT_HEADER), HeaderValue::from_static(fault.kind().as_str()))
    }
}

/// A fault profile from `serve --faults`: `KIND=FRACTION[:DURATION]` pairs separated by commas, `KIND` the path of
/// a kind in `SandboxFaultProfile` (`requests.tooManyRequests`, `deliveries.holdBack`, ...), `DURATION` its `ms`
/// (`500ms`, `2s`), checked exactly as `PUT /sandbox/faults` checks its body (the schema's decoder, then the
/// fractions of each group adding up to at most 1). An empty text is the empty profile.
pub fn profile_from_flag(text: &str) -> Result<SandboxFaultProfile, String> {
    let mut profile = serde_json::Map::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, value) = pair.split_once('=').ok_or_else(|| format!("{pair:?} is not KIND=FRACTION[:DURATION]"))?;
        let (group, name) =
            kind.trim().split_once('.').ok_or_else(|| format!("{kind:?} is not GROUP.KIND (requests.delay, ...)"))?;
        let (fraction, duration) = match value.split_once(':') {
            Some((fraction, duration)) => (fraction, Some(duration)),
            None => (value, None),
        };
        let fraction: f64 = fraction.trim().parse().map_err(|_| format!("{fraction:?} of {kind} is not a fraction"))?;
        let mut fault = serde_json::Map::new();
        fault.insert("fraction".into(), fraction.into());
        if let Some(duration) = duration {
            let ms = humantime::parse_duration(duration.trim())
                .map_err(|e| format!("{duration:?} of {kind} is not a duration (500ms, 2s): {e}"))?
                .as_millis();
            fault.insert("ms".into(), serde_json::Value::from(ms.min(u64::MAX as u128) as u64));
        }
        let group = profile.entry(group.trim()).or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(group) = group {
            group.insert(name.trim().to_owned(), fault.into());
        }
    }
    let written = serde_json::Value::Object(profile);
    let profile = decode_profile(&written)?;
    // The decoder ignores members the schema does not name, as the API does; a flag names every one on purpose.
    let decoded = serde_json::to_value(&profile).map_err(|e| e.to_string())?;
    if let Some(path) = unnamed(&written, &decoded) {
        return Err(format!(
            "{path} is not in SandboxFaultProfile (a kind it does not name, or a duration a kind does not take)"
        ));
    }
    faults::check(&profile)?;
    Ok(profile)
}

/// The first member path of `written` that `decoded` lacks (what the decoder dropped), dot-separated.
fn unnamed(written: &serde_json::Value, decoded: &serde_json::Value) -> Option<String> {
    written.as_object()?.iter().find_map(|(name, inner)| match decoded.get(name) {
        None => Some(name.clone()),
        Some(kept) => unnamed(inner, kept).map(|below| format!("{name}.{below}")),
    })
}

/// A profile written as JSON (by the flag, by the dashboard's form), decoded exactly as `PUT /sandbox/faults`
/// decodes its body: the schema's decoder, every issue in the error.
pub fn decode_profile(profile: &serde_json::Value) -> Result<SandboxFaultProfile, String> {
    let body = profile.to_string();
    let shape = bridge_server::shapes::by_operation_id(SandboxSetFaults::ID)
        .and_then(|shapes| shapes.body.as_ref())
        .ok_or_else(|| format!("no decoder of {}'s body", SandboxSetFaults::ID))?;
    bridge_server::decode::body(shape, Some(b"application/json"), body.as_bytes(), bridge_server::ErrorsMode::All)
        .map_err(|issues| format!("{body}: {}", bridge_server::serve::summary(&issues)))
}

#[cfg(test)]
mod tests {
    use super::profile_from_flag;

    #[test]
    fn the_flag_is_the_profile_checked_as_the_api_checks_it() {
        let profile = profile_from_flag(
            "requests.tooManyRequests=0.1:1500ms, requests.unavailable=0.05,requests.delay=0.1:500ms,\
             deliveries.duplicate=0.2,deliveries.holdBack=0.1:3s,deliveries.delay=0.05:2s",
        )
        .unwrap();
        let json = serde_json::to_value(&profile).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "requests": {"tooManyRequests": {"fraction": 0.1, "ms": 1500}, "unavailable": {"fraction": 0.05},
                             "delay": {"fraction": 0.1, "ms": 500}},
                "deliveries": {"duplicate": {"fraction": 0.2}, "holdBack": {"fraction": 0.1, "ms": 3000},
                               "delay": {"fraction": 0.05, "ms": 2000}}
            })
        );
        assert_eq!(serde_json::to_value(profile_from_flag("").unwrap()).unwrap(), serde_json::json!({}));
        // The schema's bounds and members, through its decoder; the sum of a group.
        for (flag, says) in [
            ("requests.delay=1.5:1s", "fraction"),
            ("requests.delay=0.5", "ms"),
            ("requests.delay=0.5:1h", "ms"),
            ("requests.unavailable=0.5:1s", "ms"),
            ("requests.sometimes=0.5", "sometimes"),
            ("bridges.delay=0.5:1s", "bridges"),
            ("requests.unavailable=0.6,requests.delay=0.6:1s", "add up to"),
            ("delay=0.5", "GROUP.KIND"),
            ("requests.delay=half:1s", "not a fraction"),
        ] {
            let refused = profile_from_flag(flag).unwrap_err();
            assert!(refused.contains(says), "{flag}: {refused}");
        }
    }
}
