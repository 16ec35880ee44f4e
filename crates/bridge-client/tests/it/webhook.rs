//! Webhook signatures: round trips, tampering, wrong keys, malformed input, unknown event kinds.

use crate::support;

use base64::Engine as _;
use bridge_client::webhook::{
    canonical_json, digest_hex, Event, SignedDelivery, WebhookError, WebhookSigner, WebhookVerifier, SIGNATURE_HEADER,
};
use bridge_contract::{DecimalNumber, WebhookEnvelope, WebhookEvent};
use serde_json::json;

const KEY_A: &str = include_str!("../fixtures/signer_a.key.pem");
const PUB_A: &str = include_str!("../fixtures/signer_a.pub.pem");
const KEY_B: &str = include_str!("../fixtures/signer_b.key.pem");

fn signer_a() -> WebhookSigner {
    WebhookSigner::from_pem(KEY_A).unwrap()
}

fn envelope(event: serde_json::Value) -> serde_json::Value {
    json!({ "event": event, "eventId": "evt_0001", "ts": 1767225600123u64 })
}

fn sign(signer: &WebhookSigner, value: &serde_json::Value) -> SignedDelivery {
    signer.signed_delivery(value).unwrap()
}

#[test]
fn header_name_is_the_documented_one() {
    assert_eq!(SIGNATURE_HEADER, "X-Webhook-Signature");
}

#[test]
fn signed_delivery_verifies_and_decodes() {
    let signer = signer_a();
    let delivery = sign(&signer, &envelope(support::test_event("hello")));
    // The header value is lower-case hex of a 2048-bit signature.
    assert_eq!(delivery.signature.len(), 512);
    assert!(delivery.signature.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));

    let verified = signer.verifier().verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    assert_eq!(verified.event_id, "evt_0001");
    assert_eq!(verified.ts, DecimalNumber::try_from(1767225600123.0).unwrap());
    assert_eq!(verified.canonical, delivery.body);
    match &verified.event {
        Event::Known(WebhookEvent::WebhookTest(e)) => assert_eq!(e.message, "hello"),
        other => panic!("expected a known WEBHOOK_TEST event, got {other:?}"),
    }
    let typed = verified.into_envelope().expect("known kind");
    assert_eq!(typed.event.tag(), "WEBHOOK_TEST");
}

#[test]
fn signing_a_typed_envelope_round_trips() {
    let signer = signer_a();
    let event: WebhookEvent = serde_json::from_value(support::created_event("0xabc")).unwrap();
    let envelope = WebhookEnvelope { event: event.clone(), event_id: "e-9".into(), ts: DecimalNumber::from(5u32) };
    let delivery = signer.signed_delivery(&envelope).unwrap();
    let verified = signer.verifier().verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    assert_eq!(verified.into_envelope(), Some(envelope));
}

#[test]
fn the_signature_covers_the_javascript_text_of_the_body() {
    // Whitespace and number spelling are not part of what is signed: the receiver re-serialises like
    // JSON.stringify, as the service does.
    let signer = signer_a();
    let spaced = br#"{ "event" : {"_tag":"WEBHOOK_TEST","type":"test","message":"m"},
        "eventId":"e1", "ts": 1.50e3 }"#;
    let compact = br#"{"event":{"_tag":"WEBHOOK_TEST","type":"test","message":"m"},"eventId":"e1","ts":1500}"#;
    assert_eq!(canonical_json(spaced).unwrap(), String::from_utf8(compact.to_vec()).unwrap());
    let signature = signer.sign(spaced).unwrap();
    let verifier = signer.verifier();
    verifier.verify(compact, &signature).unwrap();
    verifier.verify(spaced, &signature).unwrap();
    // The signed message is the lower-case hex SHA-256 of that text.
    assert_eq!(digest_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

#[test]
fn tampered_bodies_are_rejected() {
    let signer = signer_a();
    let verifier = signer.verifier();
    let delivery = sign(&signer, &envelope(support::test_event("pay 100")));
    let cases = [
        delivery.body.replace("pay 100", "pay 900"),
        delivery.body.replace("evt_0001", "evt_0002"),
        delivery.body.replace("1767225600123", "1767225600124"),
        // Key order is part of the JSON.stringify text: moving a member changes what was signed.
        r#"{"eventId":"evt_0001","event":{"_tag":"WEBHOOK_TEST","type":"test","message":"pay 100"},"ts":1767225600123}"#
            .to_owned(),
    ];
    for body in cases {
        assert_ne!(body, delivery.body);
        match verifier.verify(body.as_bytes(), &delivery.signature) {
            Err(WebhookError::BadSignature) => {}
            other => panic!("tampered body {body} was not rejected: {other:?}"),
        }
    }
    // A changed signature fails too.
    let mut sig = delivery.signature.clone().into_bytes();
    sig[10] = if sig[10] == b'0' { b'1' } else { b'0' };
    let sig = String::from_utf8(sig).unwrap();
    assert!(matches!(verifier.verify(delivery.body.as_bytes(), &sig), Err(WebhookError::BadSignature)));
}

#[test]
fn another_key_is_rejected() {
    let delivery = sign(&WebhookSigner::from_pem(KEY_B).unwrap(), &envelope(support::test_event("x")));
    let verifier = WebhookVerifier::from_pem(PUB_A).unwrap();
    assert!(matches!(verifier.verify(delivery.body.as_bytes(), &delivery.signature), Err(WebhookError::BadSignature)));
}

#[test]
fn malformed_input_is_reported_as_such() {
    let signer = signer_a();
    let verifier = signer.verifier();
    let delivery = sign(&signer, &envelope(support::test_event("x")));
    for bad in ["", "  ", "not hex", "abc", "zz"] {
        match verifier.verify(delivery.body.as_bytes(), bad) {
            Err(WebhookError::MalformedSignature(_)) => {}
            other => panic!("signature {bad:?}: {other:?}"),
        }
    }
    // Upper-case hex and surrounding whitespace are the same signature.
    let upper = format!(" {} ", delivery.signature.to_uppercase());
    verifier.verify(delivery.body.as_bytes(), &upper).unwrap();
    // A body that is not JSON.
    let sig = delivery.signature.as_str();
    assert!(matches!(verifier.verify(b"{\"event\":", sig), Err(WebhookError::MalformedBody(_))));
}

#[test]
fn signed_bodies_that_are_not_envelopes_are_invalid_envelopes() {
    let signer = signer_a();
    let verifier = signer.verifier();
    let bodies = [
        // A known kind missing a required member.
        envelope(json!({ "_tag": "DEPOSIT_ADDRESS_CREATED", "depositChain": "ETHEREUM" })),
        // An event without `_tag`, and one whose `_tag` is not a string.
        envelope(json!({ "type": "test" })),
        envelope(json!({ "_tag": 7 })),
        // No eventId.
        json!({ "event": support::test_event("m"), "ts": 1 }),
    ];
    for body in bodies {
        let delivery = sign(&signer, &body);
        match verifier.verify(delivery.body.as_bytes(), &delivery.signature) {
            Err(WebhookError::InvalidEnvelope(_)) => {}
            other => panic!("{body} should be an invalid envelope: {other:?}"),
        }
        // The signature itself is fine.
        verifier.verify_signature(delivery.body.as_bytes(), &delivery.signature).unwrap();
    }
}

/// Production may add members to an event, at any depth; a receiver must acknowledge such a delivery (the
/// receiver check's `extraMember`), so `Event` reads a known kind ignoring members the contract does not have,
/// while still checking what it has (a required member missing is an invalid envelope, above). The contract's
/// `WebhookEvent` decoded directly stays closed, also right after a lenient decode on the same thread.
#[test]
fn members_production_may_add_are_ignored_at_any_depth() {
    let mut plain = support::pending_bridge("b-1");
    let event = plain.as_object_mut().unwrap();
    event.remove("state");
    event.insert("_tag".into(), json!("BRIDGE_PENDING"));
    event.insert("type".into(), json!("bridge"));
    let known: WebhookEvent = serde_json::from_value(plain.clone()).expect("a BRIDGE_PENDING event");
    let mut added = plain.clone();
    added["addedLater"] = json!({ "any": ["shape", 1] });
    added["sponsoredFees"]["rebate"] = json!("0.1");

    let signer = signer_a();
    let delivery = sign(&signer, &envelope(added.clone()));
    let verified = signer.verifier().verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    assert_eq!(verified.event, Event::Known(known));
    let refused = serde_json::from_value::<WebhookEvent>(added).unwrap_err().to_string();
    assert!(refused.contains("unknown field `addedLater`"), "{refused}");
}

#[test]
fn unknown_event_kinds_surface_as_unknown() {
    let signer = signer_a();
    let delivery = sign(&signer, &envelope(support::future_event()));
    let verified = signer.verifier().verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    assert_eq!(verified.event_id, "evt_0001");
    assert_eq!(verified.event.tag(), "TELEPORT_COMPLETED");
    match &verified.event {
        Event::Unknown { tag, raw } => {
            assert_eq!(tag, "TELEPORT_COMPLETED");
            assert_eq!(raw, &support::future_event());
        }
        other => panic!("expected Event::Unknown, got {other:?}"),
    }
    assert!(verified.event.known().is_none());
    assert_eq!(verified.clone().into_envelope(), None);
    // It serialises back to the same JSON.
    assert_eq!(serde_json::to_value(&verified.event).unwrap(), support::future_event());
}

#[test]
fn the_served_key_format_is_base64_of_spki_pem() {
    let signer = signer_a();
    // Same PEM text as Node's `publicKeyEncoding: { type: 'spki', format: 'pem' }` wrote for this key.
    assert_eq!(signer.public_key_pem(), PUB_A);
    let served = signer.served_public_key();
    let decoded = base64::engine::general_purpose::STANDARD.decode(&served).unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), PUB_A);

    let delivery = sign(&signer, &envelope(support::test_event("k")));
    for verifier in [
        WebhookVerifier::from_served_key(&served).unwrap(),
        WebhookVerifier::from_pem(PUB_A).unwrap(),
        WebhookVerifier::from_pem(&rsa_pkcs1_pem(&signer)).unwrap(),
    ] {
        verifier.verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    }
    assert!(matches!(WebhookVerifier::from_served_key("***"), Err(WebhookError::InvalidKey(_))));
    assert!(matches!(
        WebhookVerifier::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
        Err(WebhookError::InvalidKey(_))
    ));
}

fn rsa_pkcs1_pem(signer: &WebhookSigner) -> String {
    use rsa::pkcs1::EncodeRsaPublicKey;
    let pem = signer.verifier().public_key().to_pkcs1_pem(rsa::pkcs8::LineEnding::LF).unwrap();
    assert!(pem.starts_with("-----BEGIN RSA PUBLIC KEY-----"));
    pem
}

#[test]
fn keys_survive_a_store_and_load() {
    let signer = signer_a();
    let pem = signer.private_key_pem().unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    let again = WebhookSigner::from_pem(&pem).unwrap();
    let body = serde_json::to_vec(&envelope(support::test_event("k"))).unwrap();
    // PKCS#1 v1.5 signatures are deterministic.
    assert_eq!(again.sign(&body).unwrap(), signer.sign(&body).unwrap());
    assert!(matches!(WebhookSigner::from_pem(PUB_A), Err(WebhookError::InvalidKey(_))));
}

#[test]
fn generated_keys_sign_and_verify() {
    // Small key to keep debug builds quick; `WebhookSigner::generate()` uses 2048 bits.
    let signer = WebhookSigner::generate_with_bits(1024).unwrap();
    let delivery = sign(&signer, &envelope(support::test_event("fresh")));
    signer.verifier().verify(delivery.body.as_bytes(), &delivery.signature).unwrap();
    let other = WebhookVerifier::from_pem(PUB_A).unwrap();
    assert!(other.verify(delivery.body.as_bytes(), &delivery.signature).is_err());
}
