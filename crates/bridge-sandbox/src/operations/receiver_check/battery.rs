//! The battery of a receiver check: its checks (each with its severity, what it checks and why, in the words the
//! report gives), the deliveries each one makes, and how each is judged from what came back.

use std::time::Duration;

use bridge_contract::operations::WEBHOOK_STALE_HEADER;
use bridge_contract::webhook::SIGNATURE_HEADER;
use bridge_contract::{
    ReceiverCheck, ReceiverCheckExchange, ReceiverCheckName, ReceiverCheckOutcome, ReceiverCheckReceived,
    ReceiverCheckSeverity, WebhookEvent,
};

use super::samples::{BridgeLife, Samples};

/// How a delivery is signed.
pub enum Signing {
    /// With the sandbox's key, over the body sent.
    Valid,
    /// Not at all: no signature header.
    Missing,
    /// With a key that is not the sandbox's.
    OtherKey,
    /// With the sandbox's key over the envelope of this event, while the body sent carries another one: a body
    /// changed after signing.
    ValidFor(Box<WebhookEvent>),
}

/// What the envelope of a delivery carries.
pub enum Payload {
    /// An event of the contract, as the sandbox delivers it.
    Event(WebhookEvent),
    /// The event with one member more than the contract has ([`super::sender::EXTRA_MEMBER`]).
    ExtraMember(WebhookEvent),
    /// The event's members under a kind the contract does not have ([`super::sender::UNKNOWN_KIND`]).
    UnknownKind(WebhookEvent),
}

/// The envelope's `ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Age {
    /// The wall clock when the delivery is made.
    Fresh,
    /// [`STALE_AGE`] before that.
    Stale,
}

/// How old the `staleTs` check's envelope is: an hour, far beyond the usual 5-minute window (Stripe, Svix,
/// `bridge-client`'s receiver), so that a receiver with any reasonable window refuses it.
pub const STALE_AGE: Duration = Duration::from_secs(3_600);

/// One delivery of the battery.
pub struct Delivery {
    /// The check it counts for (its index in [`Battery::checks`]).
    pub check: usize,
    pub event_id: String,
    pub payload: Payload,
    pub signing: Signing,
    pub age: Age,
}

/// One check: which, and for `signedEvent` which event kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    pub name: ReceiverCheckName,
    pub event_kind: Option<&'static str>,
}

/// What a check expects of every one of its deliveries.
enum Expect {
    /// A 2xx answer.
    Acknowledged,
    /// An answer that is not 2xx.
    Refused,
    /// An answer that is not 2xx, or a 2xx one with the stale header.
    RefusedOrFlagged,
    /// Every delivery of the whole check answered within the sender's timeout.
    InTime,
}

impl Check {
    pub fn severity(self) -> ReceiverCheckSeverity {
        match self.name {
            ReceiverCheckName::SignedEvent
            | ReceiverCheckName::MissingSignature
            | ReceiverCheckName::OtherKey
            | ReceiverCheckName::ChangedBody
            | ReceiverCheckName::Timeout => ReceiverCheckSeverity::Must,
            ReceiverCheckName::Duplicate
            | ReceiverCheckName::OutOfOrder
            | ReceiverCheckName::ExtraMember
            | ReceiverCheckName::UnknownKind
            | ReceiverCheckName::StaleTs => ReceiverCheckSeverity::Should,
        }
    }

    fn expect(self) -> Expect {
        match self.name {
            ReceiverCheckName::SignedEvent
            | ReceiverCheckName::Duplicate
            | ReceiverCheckName::OutOfOrder
            | ReceiverCheckName::ExtraMember
            | ReceiverCheckName::UnknownKind => Expect::Acknowledged,
            ReceiverCheckName::MissingSignature | ReceiverCheckName::OtherKey | ReceiverCheckName::ChangedBody => {
                Expect::Refused
            }
            ReceiverCheckName::StaleTs => Expect::RefusedOrFlagged,
            ReceiverCheckName::Timeout => Expect::InTime,
        }
    }

    /// What is checked, in one line (the check's name in reports).
    pub fn title(self, timeout: Duration) -> String {
        match self.name {
            ReceiverCheckName::SignedEvent => {
                format!("acknowledges a signed {} delivery", self.event_kind.unwrap_or("(no kind)"))
            }
            ReceiverCheckName::MissingSignature => "refuses a delivery without a signature".into(),
            ReceiverCheckName::OtherKey => "refuses a delivery signed with another key".into(),
            ReceiverCheckName::ChangedBody => "refuses a delivery whose body was changed after signing".into(),
            ReceiverCheckName::Timeout => format!("answers every delivery within {} ms", timeout.as_millis()),
            ReceiverCheckName::Duplicate => "acknowledges the same event delivered twice".into(),
            ReceiverCheckName::OutOfOrder => "acknowledges a bridge's events delivered out of order".into(),
            ReceiverCheckName::ExtraMember => "acknowledges an event with a member it does not know".into(),
            ReceiverCheckName::UnknownKind => "acknowledges an event of a kind it does not know".into(),
            ReceiverCheckName::StaleTs => "refuses or flags a delivery whose ts is an hour old".into(),
        }
    }

    /// Why it matters, in one line: what goes wrong in production otherwise.
    pub fn reason(self, timeout: Duration) -> String {
        match self.name {
            ReceiverCheckName::SignedEvent => "Production sends every kind; a delivery not answered 2xx is retried, \
                then given up, and the event never reaches your system."
                .into(),
            ReceiverCheckName::MissingSignature => format!(
                "Anyone can POST to your URL: without checking {SIGNATURE_HEADER}, a forged event (a bridge \
                 \"executed\") is acted on."
            ),
            ReceiverCheckName::OtherKey => "A signature must verify with the key of GET /webhook/public-key, not \
                merely be there: anyone can sign with a key of their own."
                .into(),
            ReceiverCheckName::ChangedBody => "The signature covers the body: accepting a changed one lets whoever \
                can alter a delivery rewrite its amounts."
                .into(),
            ReceiverCheckName::Timeout => format!(
                "The sender gives up after {} ms and delivers again: a slow receiver gets duplicates, and one \
                 that is always slow loses the event.",
                timeout.as_millis()
            ),
            ReceiverCheckName::Duplicate => "Delivery is at least once: a retry after a lost answer repeats the \
                event; answer 2xx again (deduplicate by eventId), or it is retried until given up."
                .into(),
            ReceiverCheckName::OutOfOrder => "Deliveries are not ordered: a later event can arrive first, and \
                refusing it loses it (order by the feed or the events' dates, not by arrival)."
                .into(),
            ReceiverCheckName::ExtraMember => "Production adds members to events over time; refusing an event with \
                a new member loses every event of that kind from then on."
                .into(),
            ReceiverCheckName::UnknownKind => "Production adds event kinds over time; acknowledge and ignore a kind \
                you do not know, or its deliveries are retried until given up."
                .into(),
            ReceiverCheckName::StaleTs => format!(
                "A captured delivery can be replayed later: refuse an envelope whose ts is more than 5 minutes off \
                 (as Stripe and Svix receivers do), or flag it ({WEBHOOK_STALE_HEADER})."
            ),
        }
    }
}

/// The checks of a receiver check in the report's order, and the deliveries they make: in sequences, each sent
/// one delivery after the other, the sequences side by side.
pub struct Battery {
    pub checks: Vec<Check>,
    pub sequences: Vec<Vec<Delivery>>,
}

impl Battery {
    /// Every check: a `signedEvent` check per event kind in the schema's order, then the others in the schema's
    /// order of names.
    fn checks() -> Vec<Check> {
        let kinds = WebhookEvent::TAGS
            .iter()
            .map(|kind| Check { name: ReceiverCheckName::SignedEvent, event_kind: Some(kind) });
        let others = ReceiverCheckName::ALL
            .iter()
            .filter(|name| **name != ReceiverCheckName::SignedEvent)
            .map(|name| Check { name: *name, event_kind: None });
        kinds.chain(others).collect()
    }

    /// The battery over `samples`; `event_id` makes a fresh event id.
    pub fn new(samples: &Samples, mut event_id: impl FnMut() -> String) -> Result<Self, String> {
        use ReceiverCheckName as Name;
        let checks = Self::checks();
        let index = |name: Name, kind: Option<&str>| {
            checks.iter().position(|c| c.name == name && c.event_kind == kind).unwrap_or_default()
        };
        let mut sequences: Vec<Vec<Delivery>> = Vec::new();
        for sequence in samples.every_kind()? {
            let sequence = sequence.into_iter().map(|event| Delivery {
                check: index(Name::SignedEvent, Some(event.tag())),
                event_id: event_id(),
                payload: Payload::Event(event),
                signing: Signing::Valid,
                age: Age::Fresh,
            });
            sequences.push(sequence.collect());
        }
        // Each other check on a bridge of its own, so that no check's deliveries bear on another's.
        let mut one = |name: Name, payload: Payload, signing: Signing, age: Age| Delivery {
            check: index(name, None),
            event_id: event_id(),
            payload,
            signing,
            age,
        };
        let life = || samples.bridge_life();
        sequences.push(vec![one(
            Name::MissingSignature,
            Payload::Event(life()?.executed),
            Signing::Missing,
            Age::Fresh,
        )]);
        sequences.push(vec![one(Name::OtherKey, Payload::Event(life()?.executed), Signing::OtherKey, Age::Fresh)]);
        let BridgeLife { executed, executed_altered, .. } = life()?;
        let changed = Signing::ValidFor(Box::new(executed));
        sequences.push(vec![one(Name::ChangedBody, Payload::Event(executed_altered), changed, Age::Fresh)]);
        // A retry: the same event and eventId again, once the first delivery was answered (with its own ts).
        let executed = life()?.executed;
        let first = one(Name::Duplicate, Payload::Event(executed.clone()), Signing::Valid, Age::Fresh);
        let again = Delivery {
            event_id: first.event_id.clone(),
            ..one(Name::Duplicate, Payload::Event(executed), Signing::Valid, Age::Fresh)
        };
        sequences.push(vec![first, again]);
        let BridgeLife { pending, executed, .. } = life()?;
        sequences.push(vec![
            one(Name::OutOfOrder, Payload::Event(executed), Signing::Valid, Age::Fresh),
            one(Name::OutOfOrder, Payload::Event(pending), Signing::Valid, Age::Fresh),
        ]);
        sequences.push(vec![one(
            Name::ExtraMember,
            Payload::ExtraMember(life()?.executed),
            Signing::Valid,
            Age::Fresh,
        )]);
        sequences.push(vec![one(
            Name::UnknownKind,
            Payload::UnknownKind(life()?.executed),
            Signing::Valid,
            Age::Fresh,
        )]);
        sequences.push(vec![one(Name::StaleTs, Payload::Event(life()?.executed), Signing::Valid, Age::Stale)]);
        Ok(Self { checks, sequences })
    }
}

/// The checks judged from the exchanges of their deliveries (`(check, exchange)`, each check's in the order
/// they were made), with `timeout` the sender's timeout.
pub fn judge(checks: &[Check], exchanges: &[(usize, ReceiverCheckExchange)], timeout: Duration) -> Vec<ReceiverCheck> {
    checks
        .iter()
        .enumerate()
        .map(|(i, check)| {
            let (verdict, shown) = match check.expect() {
                Expect::InTime => {
                    let all: Vec<&ReceiverCheckExchange> = exchanges.iter().map(|(_, x)| x).collect();
                    in_time(&all, timeout)
                }
                expect => {
                    let own: Vec<ReceiverCheckExchange> =
                        exchanges.iter().filter(|(c, _)| *c == i).map(|(_, x)| x.clone()).collect();
                    (each(&expect, &own), own)
                }
            };
            let (outcome, detail) = match verdict {
                Ok(detail) => (ReceiverCheckOutcome::Passed, detail),
                Err(detail) => (ReceiverCheckOutcome::Failed, detail),
            };
            ReceiverCheck {
                name: check.name,
                event_kind: check.event_kind.map(str::to_owned),
                title: check.title(timeout),
                severity: check.severity(),
                outcome,
                reason: check.reason(timeout),
                detail,
                exchanges: shown,
            }
        })
        .collect()
}

/// Whether `status` is a 2xx answer.
fn acknowledges(status: i64) -> bool {
    (200..300).contains(&status)
}

/// What came back, in a few words: `204`, `500: <body start>`, `no answer: <error>`.
fn answer(received: &ReceiverCheckReceived) -> String {
    match (received.status, &received.error) {
        (Some(status), _) => {
            let body = received.body_start.as_deref().map(str::trim).filter(|b| !b.is_empty());
            let body = body.map(|b| format!(" ({})", one_line(b, 80))).unwrap_or_default();
            format!("{status}{body}")
        }
        (None, Some(error)) => format!("no answer: {error}"),
        (None, None) => "no answer".into(),
    }
}

fn one_line(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// A check whose every delivery must be answered as `expect` says: the detail of the pass, or of the first
/// delivery that fails it.
fn each(expect: &Expect, exchanges: &[ReceiverCheckExchange]) -> Result<String, String> {
    if exchanges.is_empty() {
        return Err("no delivery was made for this check (the sandbox could not build it)".into());
    }
    let n = exchanges.len();
    let which = |i: usize| if n == 1 { String::new() } else { format!("delivery {} of {n}: ", i + 1) };
    let mut passed = Vec::with_capacity(n);
    for (i, x) in exchanges.iter().enumerate() {
        let r = &x.received;
        let Some(status) = r.status else {
            return Err(format!("{}{}, so whether it was handled cannot be told", which(i), answer(r)));
        };
        let ok = match expect {
            Expect::Acknowledged if acknowledges(status) => format!("acknowledged: {}", answer(r)),
            Expect::Acknowledged => return Err(format!("{}not acknowledged: answered {}", which(i), answer(r))),
            Expect::Refused if !acknowledges(status) => format!("refused: {}", answer(r)),
            Expect::Refused => return Err(format!("{}accepted: answered {}", which(i), answer(r))),
            Expect::RefusedOrFlagged if !acknowledges(status) => format!("refused: {}", answer(r)),
            Expect::RefusedOrFlagged => match &r.stale_flag {
                Some(flag) => format!("acknowledged and flagged: {} with {WEBHOOK_STALE_HEADER}: {flag}", answer(r)),
                None => {
                    return Err(format!(
                        "{}accepted without a flag: answered {} and no {WEBHOOK_STALE_HEADER} header",
                        which(i),
                        answer(r)
                    ))
                }
            },
            Expect::InTime => unreachable!("the timeout check is judged over every delivery"),
        };
        passed.push(format!("{}{ok}", which(i)));
    }
    Ok(passed.join("; "))
}

/// The timeout check over every delivery of the check: the detail and the delivery shown (the slowest late one,
/// or the first without an answer).
fn in_time(all: &[&ReceiverCheckExchange], timeout: Duration) -> (Result<String, String>, Vec<ReceiverCheckExchange>) {
    let limit = timeout.as_millis() as u64;
    let latency = |x: &ReceiverCheckExchange| x.received.latency_ms.unwrap_or_default();
    let answered: Vec<&&ReceiverCheckExchange> = all.iter().filter(|x| x.received.status.is_some()).collect();
    let slowest = answered.iter().max_by_key(|x| latency(x)).map(|x| (**x).clone());
    let late = answered.iter().filter(|x| latency(x) > limit).count();
    let unanswered: Vec<&&ReceiverCheckExchange> = all.iter().filter(|x| x.received.status.is_none()).collect();
    let n = all.len();
    let slowest_ms = slowest.as_ref().map(latency).unwrap_or_default();
    if n == 0 {
        return (Err("no delivery was made".into()), Vec::new());
    }
    if late == 0 && unanswered.is_empty() {
        let detail = format!("all {n} deliveries answered within {limit} ms (the slowest in {slowest_ms} ms)");
        return (Ok(detail), slowest.into_iter().collect());
    }
    let mut parts = Vec::new();
    if late > 0 {
        parts.push(format!("{late} of {n} deliveries answered after {limit} ms (the slowest in {slowest_ms} ms)"));
    }
    if let Some(first) = unanswered.first() {
        parts.push(format!("{} of {n} got no answer ({})", unanswered.len(), answer(&first.received)));
    }
    let shown = match (late > 0, unanswered.first()) {
        (true, _) => slowest,
        (false, first) => first.map(|x| (**x).clone()),
    };
    (Err(parts.join("; ")), shown.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::{ReceiverCheckReceived, ReceiverCheckSent};

    fn exchange(status: Option<i64>, latency_ms: u64, stale: Option<&str>) -> ReceiverCheckExchange {
        ReceiverCheckExchange {
            sent: ReceiverCheckSent { event_id: "e".into(), body_start: "{}".into(), headers: vec![] },
            received: ReceiverCheckReceived {
                status,
                latency_ms: Some(latency_ms),
                body_start: status.map(|_| String::new()),
                stale_flag: stale.map(str::to_owned),
                error: status.is_none().then(|| "connection refused".into()),
            },
        }
    }

    #[test]
    fn every_name_has_one_check_but_signed_events_one_per_kind() {
        let checks = Battery::checks();
        assert_eq!(checks.len(), WebhookEvent::TAGS.len() + ReceiverCheckName::ALL.len() - 1);
        for name in ReceiverCheckName::ALL {
            let n = checks.iter().filter(|c| c.name == *name).count();
            let expected = if *name == ReceiverCheckName::SignedEvent { WebhookEvent::TAGS.len() } else { 1 };
            assert_eq!(n, expected, "{name}");
        }
    }

    #[test]
    fn a_check_passes_only_when_every_delivery_is_answered_as_expected() {
        let ok = exchange(Some(204), 3, None);
        let refused = exchange(Some(401), 3, None);
        let flagged = exchange(Some(200), 3, Some("1"));
        let gone = exchange(None, 3, None);
        let both = each(&Expect::Acknowledged, &[ok.clone(), ok.clone()]).unwrap();
        assert_eq!(
            both, "delivery 1 of 2: acknowledged: 204; delivery 2 of 2: acknowledged: 204",
            "each delivery named"
        );
        assert!(each(&Expect::Acknowledged, &[ok.clone(), exchange(Some(500), 3, None)])
            .unwrap_err()
            .starts_with("delivery 2 of 2: not acknowledged: answered 500"));
        assert!(each(&Expect::Refused, std::slice::from_ref(&refused)).is_ok());
        assert!(each(&Expect::Refused, std::slice::from_ref(&ok)).is_err());
        assert!(each(&Expect::Refused, std::slice::from_ref(&gone)).is_err(), "no answer is no refusal");
        assert!(each(&Expect::RefusedOrFlagged, &[refused]).is_ok());
        assert!(each(&Expect::RefusedOrFlagged, &[flagged]).is_ok());
        assert!(each(&Expect::RefusedOrFlagged, std::slice::from_ref(&ok)).is_err());
        assert!(each(&Expect::Acknowledged, &[]).is_err(), "a check that sent nothing never passes");
        let (verdict, shown) = in_time(&[&ok, &exchange(Some(204), 1500, None)], Duration::from_secs(1));
        assert!(verdict.unwrap_err().starts_with("1 of 2 deliveries answered after 1000 ms"));
        assert_eq!(shown[0].received.latency_ms, Some(1500));
        assert!(in_time(&[&ok, &gone], Duration::from_secs(1)).0.is_err());
        assert!(in_time(&[&ok], Duration::from_secs(1)).0.is_ok());
    }
}
