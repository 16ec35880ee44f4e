//! The deliveries of a receiver check: each envelope written and signed as the battery says, POSTed as the
//! deliverer POSTs (the egress policy's client: only allowed addresses, no redirect, no proxy), timed, and what came
//! back kept as the report shows it.

use std::sync::Arc;
use std::time::Duration;

use bridge_contract::js::{self, JsValue};
use bridge_contract::operations::WEBHOOK_STALE_HEADER;
use bridge_contract::webhook::{WebhookSigner, SIGNATURE_HEADER};
use bridge_contract::{
    DecimalNumber, ReceiverCheckExchange, ReceiverCheckHeader, ReceiverCheckReceived, ReceiverCheckSent,
    WebhookEnvelope, WebhookEvent,
};
use tokio::sync::{OnceCell, Semaphore};
use tokio::time::Instant;

use super::battery::{Age, Delivery, Payload, Signing, STALE_AGE};
use crate::infra::clock::wall_ms;
use crate::infra::egress;
use crate::pipeline::delivery::{body_start, read_body_start, without_url, REFUSED_PREFIX};

/// The member the `extraMember` check adds to an event, and its value: one this contract does not have.
pub const EXTRA_MEMBER: &str = "newMemberFromReceiverCheck";
/// The kind (`_tag`) of the `unknownKind` check's event: one this contract does not have.
pub const UNKNOWN_KIND: &str = "NEW_EVENT_KIND_FROM_RECEIVER_CHECK";
/// How many hex digits of a signature the report shows.
const SIGNATURE_SHOWN: usize = 16;

/// The key of the `otherKey` check's signatures: made once per process, the size of the sandbox's own. Its private
/// half never leaves the process; it only ever signs a check's delivery, which the receiver must refuse.
static OTHER_KEY: OnceCell<Arc<WebhookSigner>> = OnceCell::const_new();

async fn other_key() -> Result<Arc<WebhookSigner>, String> {
    let made = OTHER_KEY
        .get_or_try_init(|| async {
            let generated = tokio::task::spawn_blocking(WebhookSigner::generate).await;
            match generated {
                Ok(Ok(signer)) => Ok(Arc::new(signer)),
                Ok(Err(e)) => Err(format!("making another signing key: {e}")),
                Err(e) => Err(format!("making another signing key: {e}")),
            }
        })
        .await;
    made.cloned()
}

/// Sends a battery's deliveries to one URL.
pub struct Sender {
    http: reqwest::Client,
    signer: Arc<WebhookSigner>,
    other: Arc<WebhookSigner>,
    url: String,
    /// How long an answer is awaited: the sender's timeout and the grace for late answers.
    wait: Duration,
    /// When the whole check must be over: a delivery not made by then is not made.
    deadline: Instant,
    /// Deliveries in flight at once.
    slots: Semaphore,
}

impl Sender {
    /// A sender to `url` under the webhook egress policy `egress`, signing with `signer`, waiting `wait` for each
    /// answer and never past `deadline`, with at most `in_flight` deliveries at once.
    pub async fn new(
        egress: &egress::WebhookEgress,
        signer: Arc<WebhookSigner>,
        url: &str,
        wait: Duration,
        deadline: Instant,
        in_flight: usize,
    ) -> Result<Self, String> {
        let http = egress.client_builder().build().map_err(|e| format!("building the HTTP client: {e}"))?;
        Ok(Self {
            http,
            signer,
            other: other_key().await?,
            url: url.to_owned(),
            wait,
            deadline,
            slots: Semaphore::new(in_flight),
        })
    }

    /// Makes every delivery: the sequences side by side, each one delivery after the other. Answers each delivery's
    /// check and exchange, in the order of the sequences.
    pub async fn run(self: Arc<Self>, sequences: Vec<Vec<Delivery>>) -> Vec<(usize, ReceiverCheckExchange)> {
        let mut running = tokio::task::JoinSet::new();
        for (i, sequence) in sequences.into_iter().enumerate() {
            let sender = self.clone();
            running.spawn(async move {
                let mut made = Vec::with_capacity(sequence.len());
                for delivery in &sequence {
                    made.push((delivery.check, sender.deliver(delivery).await));
                }
                (i, made)
            });
        }
        let mut done = Vec::new();
        while let Some(joined) = running.join_next().await {
            match joined {
                Ok(sequence) => done.push(sequence),
                // A sequence whose task failed leaves its checks without deliveries: they fail, saying so.
                Err(e) => tracing::warn!(error = %e, "a receiver check sequence failed"),
            }
        }
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().flat_map(|(_, made)| made).collect()
    }

    /// One delivery, and what came back.
    async fn deliver(&self, delivery: &Delivery) -> ReceiverCheckExchange {
        let slot = tokio::time::timeout_at(self.deadline, self.slots.acquire()).await;
        let ts = wall_ms() - if delivery.age == Age::Stale { STALE_AGE.as_millis() as i64 } else { 0 };
        let written = match self.write(delivery, ts) {
            Ok(written) => written,
            Err(e) => return unsent(delivery, String::new(), &[], format!("the sandbox could not write it: {e}")),
        };
        let headers = written.headers();
        let wait = self.wait.min(self.deadline.saturating_duration_since(Instant::now()));
        if !matches!(slot, Ok(Ok(_))) || wait.is_zero() {
            let why = "not sent: the check's time ran out before its turn (the receiver answered too slowly)";
            return unsent(delivery, written.body, &headers, why.into());
        }
        let sent = ReceiverCheckSent {
            event_id: delivery.event_id.clone(),
            body_start: body_start(written.body.as_bytes()),
            headers,
        };
        let mut request = self
            .http
            .post(&self.url)
            .timeout(wait)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(written.body);
        if let Some(signature) = written.signature {
            request = request.header(SIGNATURE_HEADER, signature);
        }
        let started = std::time::Instant::now();
        let received = match request.send().await {
            Ok(response) => {
                let latency_ms = Some(started.elapsed().as_millis() as u64);
                let status = Some(i64::from(response.status().as_u16()));
                let stale_flag = response
                    .headers()
                    .get(WEBHOOK_STALE_HEADER)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                let body_start = Some(read_body_start(response).await);
                ReceiverCheckReceived { status, latency_ms, body_start, stale_flag, error: None }
            }
            Err(e) => {
                let latency_ms = Some(started.elapsed().as_millis() as u64);
                let error = match egress::refusal_in(&e) {
                    Some(refusal) => format!("{REFUSED_PREFIX}{refusal}"),
                    None if e.is_timeout() => format!("no answer within {} ms", wait.as_millis()),
                    None => without_url(e),
                };
                no_answer(error, latency_ms)
            }
        };
        ReceiverCheckExchange { sent, received }
    }

    /// The body and signature of a delivery made at `ts_ms` (wall clock).
    fn write(&self, delivery: &Delivery, ts_ms: i64) -> Result<Written, String> {
        let envelope = |event: &WebhookEvent| envelope(event, &delivery.event_id, ts_ms);
        let body = match &delivery.payload {
            Payload::Event(event) => envelope(event)?,
            Payload::ExtraMember(event) => {
                let extra = JsValue::String("a member this contract does not have".into());
                altered(envelope(event)?, event, |members| members.push((EXTRA_MEMBER.into(), extra)))?
            }
            Payload::UnknownKind(event) => altered(envelope(event)?, event, |members| {
                for (name, value) in members.iter_mut() {
                    if name == WebhookEvent::TAG_PROPERTY {
                        *value = JsValue::String(UNKNOWN_KIND.into());
                    }
                }
            })?,
        }
        .to_string();
        let signature = match &delivery.signing {
            Signing::Valid => Some(self.signer.sign(body.as_bytes())),
            Signing::Missing => None,
            Signing::OtherKey => Some(self.other.sign(body.as_bytes())),
            Signing::ValidFor(original) => Some(self.signer.sign(envelope(original)?.to_string().as_bytes())),
        };
        let signature = signature.transpose().map_err(|e| e.to_string())?;
        Ok(Written { body, signature })
    }
}

/// A delivery's body and signature, as sent.
struct Written {
    body: String,
    signature: Option<String>,
}

impl Written {
    /// The request headers as the report shows them: the signature shortened (no secret, but 512 hex digits).
    fn headers(&self) -> Vec<ReceiverCheckHeader> {
        let header = |name: &str, value: String| ReceiverCheckHeader { name: name.to_owned(), value };
        let mut headers = vec![
            header(reqwest::header::CONTENT_TYPE.as_str(), "application/json".into()),
            header(reqwest::header::CONTENT_LENGTH.as_str(), self.body.len().to_string()),
        ];
        if let Some(signature) = &self.signature {
            let shown = signature.get(..SIGNATURE_SHOWN).unwrap_or(signature);
            headers.push(header(SIGNATURE_HEADER, format!("{shown}… ({} hex digits)", signature.len())));
        }
        headers
    }
}

/// A delivery that was not sent, and why.
fn unsent(delivery: &Delivery, body: String, headers: &[ReceiverCheckHeader], why: String) -> ReceiverCheckExchange {
    ReceiverCheckExchange {
        sent: ReceiverCheckSent {
            event_id: delivery.event_id.clone(),
            body_start: body_start(body.as_bytes()),
            headers: headers.to_vec(),
        },
        received: no_answer(why, None),
    }
}

/// What came back when no answer did.
fn no_answer(error: String, latency_ms: Option<u64>) -> ReceiverCheckReceived {
    ReceiverCheckReceived { status: None, latency_ms, body_start: None, stale_flag: None, error: Some(error) }
}

/// The envelope of `event` as the sandbox sends it (the contract's envelope as JavaScript's `JSON.stringify`
/// writes it), `ts` the wall clock in milliseconds.
fn envelope(event: &WebhookEvent, event_id: &str, ts_ms: i64) -> Result<JsValue, String> {
    let ts = DecimalNumber::try_from(ts_ms as f64).map_err(|e| e.to_string())?;
    let envelope = WebhookEnvelope { event: event.clone(), event_id: event_id.to_owned(), ts };
    let json = serde_json::to_vec(&envelope).map_err(|e| e.to_string())?;
    js::from_json_slice(&json).map_err(|e| e.to_string())
}

/// `envelope` with the members of its `event` changed by `change` (the envelope's member that holds the event,
/// whatever it is named).
fn altered(
    envelope: JsValue,
    event: &WebhookEvent,
    change: impl FnOnce(&mut Vec<(String, JsValue)>),
) -> Result<JsValue, String> {
    let json = serde_json::to_vec(event).map_err(|e| e.to_string())?;
    let original = js::from_json_slice(&json).map_err(|e| e.to_string())?;
    let JsValue::Object(mut members) = envelope else { return Err("the envelope is not an object".into()) };
    let Some((_, held)) = members.iter_mut().find(|(_, value)| *value == original) else {
        return Err("the envelope does not hold its event".into());
    };
    let JsValue::Object(event_members) = held else { return Err("the event is not an object".into()) };
    change(event_members);
    Ok(JsValue::Object(members))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::WebhookTestEvent;

    #[test]
    fn the_altered_envelopes_change_only_the_event_and_stay_the_contract_otherwise() {
        let event: WebhookEvent = WebhookTestEvent::new("hi").into();
        let plain = envelope(&event, "e1", 1_767_225_600_000).unwrap();
        let text = plain.to_string();
        assert!(text.starts_with(r#"{"event":{"_tag":"WEBHOOK_TEST""#), "{text}");
        assert!(text.ends_with(r#""eventId":"e1","ts":1767225600000}"#), "{text}");
        let extra = altered(plain.clone(), &event, |m| m.push((EXTRA_MEMBER.into(), JsValue::Null))).unwrap();
        assert_eq!(
            extra.to_string(),
            text.replace(r#""message":"hi""#, &format!(r#""message":"hi","{EXTRA_MEMBER}":null"#))
        );
        let unknown = altered(plain, &event, |m| m[0].1 = JsValue::String(UNKNOWN_KIND.into())).unwrap();
        assert_eq!(unknown.to_string(), text.replace("WEBHOOK_TEST", UNKNOWN_KIND));
        assert!(!WebhookEvent::TAGS.contains(&UNKNOWN_KIND), "the unknown kind must stay unknown to the contract");
        let envelope: serde_json::Value = serde_json::from_str(&extra.to_string()).unwrap();
        assert!(serde_json::from_value::<WebhookEnvelope>(envelope).is_err(), "the contract refuses the extra member");
    }
}
