//! The receiver check (`POST /sandbox/webhook-receiver-checks`): every check of the battery is seen failing
//! against a receiver built to break exactly it, and passing against one that does everything right
//! ([`each_check_fails_against_the_receiver_built_to_break_it`], table-driven); what the checks send is the
//! contract's (every kind, realistic, dates on the project's clock, `ts` on the wall clock) and leaves nothing
//! behind; a refused URL is never connected to; and the checks obey the webhook egress policy at delivery.
//!
//! Every receiver here is an axum server on 127.0.0.1 that the test builds (`TestReceiver`): one that verifies
//! signatures with the contract's verifier, refuses envelopes more than 5 minutes old, acknowledges duplicates
//! and events it does not know; each [`Fault`] breaks one of those behaviours. The receiver built on
//! `bridge-client`'s extractor is checked in `crates/bridge-client/tests/it/receiver_check.rs`, the one on the
//! production SDK's verifier in `sdk.rs`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bridge_client::{Client, Error, RetryPolicy};
use bridge_contract::operations::{SandboxCheckWebhookReceiverError, WEBHOOK_STALE_HEADER};
use bridge_contract::webhook::{canonical_json, digest_hex, WebhookVerifier, SIGNATURE_HEADER};
use bridge_contract::*;
use bridge_sandbox::egress::{EgressMode, HostLookup, WebhookEgress};
use bridge_sandbox::SandboxConfig;
use rsa::traits::PublicKeyParts;
use rsa::{BigUint, RsaPublicKey};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::{advance, Running, TestStore};

/// How a test receiver departs from doing everything right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// None: verifies, refuses old envelopes, acknowledges duplicates and unknown kinds and members.
    None,
    /// Verifies nothing: every delivery is taken.
    SkipsVerification,
    /// Verifies a signature when there is one, takes a delivery without one.
    AcceptsUnsigned,
    /// Verifies "fail open": a signature that cannot be checked (its block does not even open under the key, as
    /// another key's does not) raises an error the receiver swallows, and the delivery is taken; only a
    /// signature that opens to another digest is refused.
    FailsOpen,
    /// Checks that the signature opens to a well-formed PKCS#1 v1.5 block under the key, never comparing the
    /// digest in it with the body's.
    ChecksPaddingOnly,
    /// Answers every delivery after [`SLOW`].
    Slow,
    /// Answers 500 to an `eventId` it has handled.
    RefusesDuplicates,
    /// A state machine per bridge: answers 409 to an event of an earlier state than one it has seen.
    RefusesOutOfOrder,
    /// Decodes known kinds into the contract's closed types: 500 for a member they do not have.
    RefusesExtraMembers,
    /// Answers 500 to an event kind it does not know.
    RefusesUnknownKinds,
    /// Never looks at `ts`.
    AcceptsStale,
    /// Takes an old envelope but flags it (the `X-Webhook-Stale` answer header): passes.
    FlagsStale,
    /// Answers 500 to BRIDGE_REFUNDED, a kind it did not expect to get.
    RefusesRefunds,
}

/// How long [`Fault::Slow`] takes to answer, and the sender's timeout its check is run with: slower than the
/// timeout, and well within the 5 seconds a late answer is still awaited.
const SLOW: Duration = Duration::from_millis(1_000);
const SHORT_TIMEOUT_MS: u64 = 300;
/// The window of `ts` the receivers hold envelopes to (the usual one).
const MAX_AGE_MS: f64 = 300_000.0;

/// What a test receiver saw of each delivery it took: the event's kind, whether the envelope decodes into the
/// contract's closed types, the event, and the envelope's `ts`.
#[derive(Debug, Clone)]
struct Seen {
    tag: String,
    strict: bool,
    event: Value,
    ts: f64,
}

pub(crate) struct TestReceiver {
    fault: Fault,
    verifier: WebhookVerifier,
    pub(crate) handled: Mutex<HashSet<String>>,
    /// Per bridge (`_id`), the latest state seen (index in [`STATES`]).
    states: Mutex<HashMap<String, usize>>,
    seen: Mutex<Vec<Seen>>,
}

/// A bridge's states in order, as a naive state machine of a receiver ranks its events.
const STATES: [&str; 3] = ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED"];

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as f64
}

/// RSA done by hand, for the receivers whose verification is broken in the way real ones are.
mod raw {
    use super::*;

    /// The DER prefix of a SHA-256 `DigestInfo` (RFC 8017, 9.2).
    const SHA256_INFO: [u8; 19] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
        0x20,
    ];

    /// The digest a signature's PKCS#1 v1.5 block holds under `key`: `Err` when the block is not well formed.
    pub fn opened(key: &RsaPublicKey, signature_hex: &str) -> Result<Vec<u8>, String> {
        let signature = hex::decode(signature_hex.trim()).map_err(|e| e.to_string())?;
        let k = key.size();
        let block = BigUint::from_bytes_be(&signature).modpow(key.e(), key.n()).to_bytes_be();
        let mut em = vec![0u8; k.saturating_sub(block.len())];
        em.extend(block);
        let ones = em.iter().skip(2).take_while(|b| **b == 0xff).count();
        let rest = em.get(2 + ones..).unwrap_or_default();
        if em.len() != k
            || em[..2] != [0, 1]
            || ones < 8
            || rest.first() != Some(&0)
            || !rest[1..].starts_with(&SHA256_INFO)
        {
            return Err("not a PKCS#1 v1.5 SHA-256 block: decryption error".into());
        }
        Ok(rest[1 + SHA256_INFO.len()..].to_vec())
    }

    /// The digest a valid signature of `body` holds: SHA-256 of the hex SHA-256 of its canonical text.
    pub fn expected(body: &[u8]) -> Vec<u8> {
        let canonical = canonical_json(body).unwrap_or_default();
        Sha256::digest(digest_hex(&canonical).as_bytes()).to_vec()
    }
}

impl TestReceiver {
    /// Whether the delivery's signature passes, as this receiver checks it.
    fn signed(&self, signature: Option<&str>, body: &[u8]) -> bool {
        let key = self.verifier.public_key();
        match (self.fault, signature) {
            (Fault::SkipsVerification, _) | (Fault::AcceptsUnsigned, None) => true,
            (_, None) => false,
            (Fault::FailsOpen, Some(signature)) => match raw::opened(key, signature) {
                Err(swallowed) => {
                    eprintln!("signature check error ignored: {swallowed}");
                    true
                }
                Ok(digest) => digest == raw::expected(body),
            },
            (Fault::ChecksPaddingOnly, Some(signature)) => raw::opened(key, signature).is_ok(),
            (_, Some(signature)) => self.verifier.verify_signature(body, signature).is_ok(),
        }
    }

    fn receive(&self, signature: Option<&str>, body: &[u8]) -> Response {
        if !self.signed(signature, body) {
            return (StatusCode::UNAUTHORIZED, "the signature does not verify").into_response();
        }
        let Ok(envelope) = serde_json::from_slice::<Value>(body) else {
            return (StatusCode::BAD_REQUEST, "not JSON").into_response();
        };
        let ts = envelope["ts"].as_f64().unwrap_or_default();
        let stale = (now_ms() - ts).abs() > MAX_AGE_MS;
        if stale && !matches!(self.fault, Fault::AcceptsStale | Fault::FlagsStale) {
            return (StatusCode::UNAUTHORIZED, "ts outside the window").into_response();
        }
        let event_id = envelope["eventId"].as_str().unwrap_or_default().to_owned();
        if self.handled.lock().unwrap().contains(&event_id) {
            return match self.fault {
                Fault::RefusesDuplicates => (StatusCode::INTERNAL_SERVER_ERROR, "duplicate key").into_response(),
                _ => StatusCode::NO_CONTENT.into_response(),
            };
        }
        let event = envelope["event"].clone();
        let tag = event[WebhookEvent::TAG_PROPERTY].as_str().unwrap_or_default().to_owned();
        let known = WebhookEvent::TAGS.contains(&tag.as_str());
        let strict = serde_json::from_value::<WebhookEnvelope>(envelope.clone()).is_ok();
        match self.fault {
            Fault::RefusesUnknownKinds if !known => {
                return (StatusCode::INTERNAL_SERVER_ERROR, format!("unknown event {tag}")).into_response()
            }
            Fault::RefusesExtraMembers if known && !strict => {
                return (StatusCode::INTERNAL_SERVER_ERROR, "unknown field").into_response()
            }
            Fault::RefusesRefunds if tag == "BRIDGE_REFUNDED" => {
                return (StatusCode::INTERNAL_SERVER_ERROR, "unexpected event").into_response()
            }
            Fault::RefusesOutOfOrder => {
                if let (Some(state), Some(id)) = (STATES.iter().position(|s| *s == tag), event["_id"].as_str()) {
                    let mut states = self.states.lock().unwrap();
                    let latest = states.entry(id.to_owned()).or_insert(state);
                    if state < *latest {
                        return (StatusCode::CONFLICT, format!("{tag} after {}", STATES[*latest])).into_response();
                    }
                    *latest = state;
                }
            }
            _ => {}
        }
        self.seen.lock().unwrap().push(Seen { tag, strict, event, ts });
        self.handled.lock().unwrap().insert(event_id);
        match (self.fault, stale) {
            (Fault::FlagsStale, true) => (StatusCode::OK, [(WEBHOOK_STALE_HEADER, "held for review")]).into_response(),
            _ => StatusCode::NO_CONTENT.into_response(),
        }
    }
}

async fn deliver(State(receiver): State<Arc<TestReceiver>>, headers: HeaderMap, body: Bytes) -> Response {
    if receiver.fault == Fault::Slow {
        tokio::time::sleep(SLOW).await;
    }
    let signature = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok());
    receiver.receive(signature, &body)
}

/// Starts a test receiver with `fault` on 127.0.0.1, verifying with the sandbox's served key; its URL.
pub(crate) async fn start(fault: Fault, served_key: &str) -> (Arc<TestReceiver>, String) {
    let receiver = Arc::new(TestReceiver {
        fault,
        verifier: WebhookVerifier::from_served_key(served_key).unwrap(),
        handled: Mutex::default(),
        states: Mutex::default(),
        seen: Mutex::default(),
    });
    let app = axum::Router::new().route("/hooks", axum::routing::post(deliver)).with_state(receiver.clone());
    let address = crate::support::serve_locally(app).await;
    (receiver, format!("http://{address}/hooks"))
}

/// A client of `project` that waits as long as a check may take (its 25 seconds, and some).
fn patient_client(sandbox: &Running, project: &str) -> Client {
    let http = Client::reqwest_builder().unwrap().timeout(Duration::from_secs(60)).build().unwrap();
    Client::with_reqwest(&sandbox.base_url, http, sandbox.credentials_of(project)).with_retry(RetryPolicy::none())
}

async fn check(client: &Client, url: &str, timeout_ms: Option<u64>) -> ReceiverCheckReport {
    let request = SandboxReceiverCheckRequest { url: url.to_owned(), timeout_ms };
    client.sandbox_check_webhook_receiver(&request).await.unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// A check as the report names it: `signedEvent:BRIDGE_REFUNDED`, `duplicate`.
fn label(check: &ReceiverCheck) -> String {
    match &check.event_kind {
        Some(kind) => format!("{}:{kind}", check.name),
        None => check.name.to_string(),
    }
}

fn failed(report: &ReceiverCheckReport) -> BTreeSet<String> {
    report.checks.iter().filter(|c| c.outcome == ReceiverCheckOutcome::Failed).map(label).collect()
}

/// The table: each receiver fails exactly the checks named for it, and passes the others.
#[tokio::test]
async fn each_check_fails_against_the_receiver_built_to_break_it() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let client = patient_client(&sandbox, "receivers");
    let served = client.get_webhook_public_key().await.unwrap();
    let table: &[(Fault, Option<u64>, &[&str])] = &[
        (Fault::None, None, &[]),
        (Fault::SkipsVerification, None, &["changedBody", "missingSignature", "otherKey"]),
        (Fault::AcceptsUnsigned, None, &["missingSignature"]),
        (Fault::FailsOpen, None, &["otherKey"]),
        (Fault::ChecksPaddingOnly, None, &["changedBody"]),
        (Fault::Slow, Some(SHORT_TIMEOUT_MS), &["timeout"]),
        (Fault::RefusesDuplicates, None, &["duplicate"]),
        (Fault::RefusesOutOfOrder, None, &["outOfOrder"]),
        (Fault::RefusesExtraMembers, None, &["extraMember"]),
        (Fault::RefusesUnknownKinds, None, &["unknownKind"]),
        (Fault::AcceptsStale, None, &["staleTs"]),
        (Fault::FlagsStale, None, &[]),
        (Fault::RefusesRefunds, None, &["signedEvent:BRIDGE_REFUNDED"]),
    ];
    let mut seen_failing: BTreeSet<&str> = BTreeSet::new();
    for (fault, timeout_ms, expected) in table {
        let (_receiver, url) = start(*fault, &served).await;
        let report = check(&client, &url, *timeout_ms).await;
        let expected: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
        assert_eq!(failed(&report), expected, "{fault:?}: {}", serde_json::to_string_pretty(&report).unwrap());
        let musts = report
            .checks
            .iter()
            .filter(|c| c.outcome == ReceiverCheckOutcome::Failed && c.severity == ReceiverCheckSeverity::Must)
            .count() as u64;
        assert_eq!(
            (report.passed + report.failed, report.failed, report.must_failed),
            (report.checks.len() as u64, expected.len() as u64, musts),
            "{fault:?}: the totals"
        );
        for c in report.checks.iter().filter(|c| c.outcome == ReceiverCheckOutcome::Failed) {
            assert!(!c.exchanges.is_empty(), "{fault:?}: a failed check shows what was sent and what came back");
            seen_failing.insert(c.name.as_str());
        }
        if *fault == Fault::FlagsStale {
            let stale = report.checks.iter().find(|c| c.name == ReceiverCheckName::StaleTs).unwrap();
            assert_eq!(stale.exchanges[0].received.stale_flag.as_deref(), Some("held for review"), "{stale:?}");
        }
    }
    let every: BTreeSet<&str> = ReceiverCheckName::ALL.iter().map(|n| n.as_str()).collect();
    assert_eq!(seen_failing, every, "every check of the battery was seen failing");
    sandbox.stop().await;
}

/// What a failed check reports: the delivery as sent (its event id, the start of its body, the headers with the
/// signature shortened) and what came back (status, body start) for each delivery, and the check's reason.
#[tokio::test]
async fn a_failed_check_names_what_was_sent_and_what_came_back() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let client = patient_client(&sandbox, "receivers");
    let (_receiver, url) = start(Fault::RefusesDuplicates, &client.get_webhook_public_key().await.unwrap()).await;
    let report = check(&client, &url, None).await;
    let duplicate = report.checks.iter().find(|c| c.name == ReceiverCheckName::Duplicate).unwrap();
    assert_eq!(duplicate.severity, ReceiverCheckSeverity::Should);
    assert_eq!(duplicate.title, "acknowledges the same event delivered twice");
    assert!(duplicate.reason.contains("at least once"), "{}", duplicate.reason);
    assert!(
        duplicate.detail.starts_with("delivery 2 of 2: not acknowledged: answered 500 (duplicate key)"),
        "{}",
        duplicate.detail
    );
    let [first, again] = &duplicate.exchanges[..] else { panic!("two deliveries: {duplicate:?}") };
    assert_eq!(first.sent.event_id, again.sent.event_id, "the same event");
    let signature_of = |x: &ReceiverCheckExchange| {
        x.sent.headers.iter().find(|h| h.name == SIGNATURE_HEADER).map(|h| h.value.clone()).unwrap()
    };
    assert_ne!(signature_of(first), signature_of(again), "a retry has its own ts, so its own signature");
    assert_eq!((first.received.status, again.received.status), (Some(204), Some(500)));
    assert_eq!(again.received.body_start.as_deref(), Some("duplicate key"));
    assert!(first.sent.body_start.starts_with(r#"{"event":{"_id":""#), "{}", first.sent.body_start);
    let headers: Vec<(&str, &str)> = first.sent.headers.iter().map(|h| (h.name.as_str(), h.value.as_str())).collect();
    assert_eq!(headers[0], ("content-type", "application/json"));
    let signature = headers.iter().find(|(name, _)| *name == SIGNATURE_HEADER).unwrap().1;
    assert!(signature.ends_with("… (512 hex digits)") && signature.len() < 40, "shortened: {signature}");
    // The report as the schema has it (the client decoded it; this checks the JSON names too).
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["checks"][0]["name"], "signedEvent");
    assert_eq!(json["checks"][0]["eventKind"], WebhookEvent::TAGS[0]);
    assert_eq!(json["mustFailed"], 0);
    sandbox.stop().await;
}

/// The events sent: one of every kind of the contract, each decoding into the contract's closed types, realistic
/// (the project's catalogue, its clock: moved 40 days on, the events are dated then), the envelope `ts` on the
/// wall clock; and nothing left behind: no event in the project's feed, no delivery in its log.
#[tokio::test]
async fn the_deliveries_are_realistic_events_of_every_kind_and_leave_nothing_behind() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let client = patient_client(&sandbox, "realistic");
    let forty_days = 40 * 24 * 3_600_000;
    advance(&client, forty_days).await;
    let project_now = client.sandbox_get_clock().await.unwrap().now.millis();
    let (receiver, url) = start(Fault::None, &client.get_webhook_public_key().await.unwrap()).await;
    let started = now_ms();
    let report = check(&client, &url, None).await;
    assert_eq!(report.failed, 0, "{report:?}");
    assert_eq!(report.checks.len(), WebhookEvent::TAGS.len() + ReceiverCheckName::ALL.len() - 1);
    assert_eq!(report.timeout_ms, 10_000, "the delivery engine's timeout by default");

    let seen = receiver.seen.lock().unwrap().clone();
    let strict_kinds: BTreeSet<&str> = seen.iter().filter(|s| s.strict).map(|s| s.tag.as_str()).collect();
    let every: BTreeSet<&str> = WebhookEvent::TAGS.iter().copied().collect();
    assert_eq!(strict_kinds, every, "every kind, as the contract's types decode it");
    for s in &seen {
        assert!((s.ts - started).abs() < 60_000.0, "ts is the wall clock: {} vs {started}", s.ts);
    }
    let executed = seen.iter().find(|s| s.tag == "BRIDGE_EXECUTED" && s.strict).unwrap();
    let created: DateString = serde_json::from_value(executed.event["createdAt"].clone()).unwrap();
    let age = project_now - created.millis();
    assert!((0..=2 * 3_600_000).contains(&age), "dated on the project's clock, before its now: {age} ms");
    assert_eq!(executed.event["userId"], "realistic", "the caller's project");
    assert!(executed.event["_id"].as_str().is_some_and(|id| id.len() == 24), "ids of production's form");

    let feed = client.list_user_events(&crate::support::feed_query(None, 50)).await.unwrap();
    assert!(feed.items.is_empty(), "no event is added to the feed: {:?}", feed.items);
    let query = SandboxListWebhookDeliveriesQuery { event_id: None };
    assert!(client.sandbox_list_webhook_deliveries(&query).await.unwrap().items.is_empty(), "no delivery is logged");
    sandbox.stop().await;
}

fn refusal(result: Result<ReceiverCheckReport, Error<SandboxCheckWebhookReceiverError>>) -> String {
    match result {
        Err(Error::Api(SandboxCheckWebhookReceiverError::InvalidRequest(e))) => e.message,
        other => panic!("expected 422 InvalidRequest, got {other:?}"),
    }
}

/// A URL with a password, one that is no http:// URL, and (under `--webhook-egress public`) a loopback address are
/// refused with 422 naming the rule before anything is sent: the receiver, listening on that address, gets
/// nothing. `timeoutMs` outside 100..=10000 is a decode error (400).
#[tokio::test]
async fn a_refused_url_is_never_connected_to() {
    let store = TestStore::sqlite();
    let sandbox =
        Running::with(SandboxConfig { webhook_egress: WebhookEgress::new(EgressMode::Public), ..store.config() }).await;
    let client = patient_client(&sandbox, "refused");
    let (receiver, url) = start(Fault::None, &client.get_webhook_public_key().await.unwrap()).await;
    let request = |url: &str| SandboxReceiverCheckRequest { url: url.to_owned(), timeout_ms: None };
    let message = refusal(client.sandbox_check_webhook_receiver(&request(&url)).await);
    assert!(message.starts_with("url http://127.0.0.1:"), "{message}");
    assert!(message.contains("--webhook-egress public"), "{message}");
    let with_password = url.replace("http://", "http://user:secret@");
    let message = refusal(client.sandbox_check_webhook_receiver(&request(&with_password)).await);
    assert!(message.contains("user name or password") && !message.contains("secret"), "{message}");
    let https = url.replace("http://", "https://");
    let message = refusal(client.sandbox_check_webhook_receiver(&request(&https)).await);
    assert!(message.contains("plain HTTP"), "{message}");
    assert!(receiver.seen.lock().unwrap().is_empty() && receiver.handled.lock().unwrap().is_empty());
    for timeout_ms in [99, 10_001] {
        let result = client
            .sandbox_check_webhook_receiver(&SandboxReceiverCheckRequest {
                url: url.clone(),
                timeout_ms: Some(timeout_ms),
            })
            .await;
        assert!(
            matches!(result, Err(Error::Api(SandboxCheckWebhookReceiverError::BadRequest(_)))),
            "{timeout_ms}: {result:?}"
        );
    }
    sandbox.stop().await;
}

/// Answers host names from a table, each lookup the next answer (the last repeating); no DNS server is asked.
struct Names(Mutex<Vec<Vec<std::net::IpAddr>>>);

#[async_trait::async_trait]
impl HostLookup for Names {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<std::net::IpAddr>> {
        let mut answers = self.0.lock().unwrap();
        if host != "receiver.test" {
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, host.to_owned()));
        }
        Ok(if answers.len() > 1 { answers.remove(0) } else { answers[0].clone() })
    }
}

/// The deliveries obey the egress policy at the address they connect to, as the deliverer's do: a name allowed
/// when the check starts (127.0.0.2, allowed by `--webhook-allow`) that resolves to a refused address afterwards
/// (127.0.0.1: loopback, refused by `public`) has every delivery refused before connecting, the reason in the
/// report; the receiver on 127.0.0.1 gets nothing (were the policy not applied, it would).
#[tokio::test]
async fn the_deliveries_obey_the_egress_policy_where_they_connect() {
    let store = TestStore::sqlite();
    let names =
        Arc::new(Names(Mutex::new(vec![vec!["127.0.0.2".parse().unwrap()], vec!["127.0.0.1".parse().unwrap()]])));
    let egress = WebhookEgress::new(EgressMode::Public).allowing(["127.0.0.2/32".parse().unwrap()]).with_lookup(names);
    let sandbox = Running::with(SandboxConfig { webhook_egress: egress, ..store.config() }).await;
    let client = patient_client(&sandbox, "rebinding");
    let (receiver, url) = start(Fault::None, &client.get_webhook_public_key().await.unwrap()).await;
    let url = url.replace("127.0.0.1", "receiver.test");
    let report = check(&client, &url, None).await;
    assert_eq!(report.passed, 0, "nothing reached the receiver, so nothing passed");
    for c in &report.checks {
        for x in &c.exchanges {
            let error = x.received.error.as_deref().unwrap_or_default();
            assert!(
                error.starts_with(bridge_sandbox::delivery::REFUSED_PREFIX) && error.contains("127.0.0.1"),
                "{error}"
            );
        }
    }
    assert!(receiver.handled.lock().unwrap().is_empty());
    sandbox.stop().await;
}

/// An unreachable receiver (a port nothing listens on) fails every check, each saying why; the check still
/// answers (200) at once.
#[tokio::test]
async fn an_unreachable_receiver_fails_every_check_with_the_reason() {
    let store = TestStore::sqlite();
    let sandbox = Running::on(&store).await;
    let client = patient_client(&sandbox, "unreachable");
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", closed.local_addr().unwrap());
    drop(closed);
    let report = check(&client, &url, None).await;
    assert_eq!(report.passed, 0, "{report:?}");
    assert_eq!(
        report.must_failed,
        report.checks.iter().filter(|c| c.severity == ReceiverCheckSeverity::Must).count() as u64
    );
    let first = &report.checks[0];
    assert!(first.detail.starts_with("no answer: "), "{}", first.detail);
    sandbox.stop().await;
}
