//! Webhook deliveries: signing them (the service, and the sandbox) and verifying them (receivers), with one
//! implementation of the algorithm for both sides. Feature `webhook-signing` (off by default: it brings `rsa`,
//! `sha2`, `hex` and `base64`); `bridge-client` turns it on and re-exports this module as `bridge_client::webhook`,
//! beside a receiver that fetches the served key and a client method for it.
//!
//! # The delivery
//!
//! The service POSTs the envelope `{"event": <event>, "eventId": "<id>", "ts": <ms>}` as compact JSON to the
//! `webhookUrl` of the quote or deposit address, with the signature in the [`SIGNATURE_HEADER`]
//! (`X-Webhook-Signature`) header. Any 2xx answer counts as delivered; anything else is retried later, so a
//! receiver answers 2xx only once it has stored the event, and drops duplicates by `eventId`.
//!
//! # The signature
//!
//! Exactly as the service computes it (it is written in TypeScript):
//!
//! 1. parse the body (`JSON.parse`) and serialise it again with JavaScript's `JSON.stringify`
//!    ([`canonical_json`]; numbers as JavaScript prints them, object keys in JavaScript's order);
//! 2. the SHA-256 digest of that text, as lower-case hex ([`digest_hex`]);
//! 3. an RSA-SHA256 (PKCS#1 v1.5) signature **over that hex string**, hex-encoded, is the header's value.
//!
//! The public key is served by `GET /webhook/public-key` as a JSON string holding the base64 encoding of the
//! PEM (SPKI) text ([`WebhookVerifier::from_served_key`]; `bridge_client::Client::webhook_verifier` fetches it).
//!
//! # Event kinds this build does not know
//!
//! The service adds event kinds over time. A delivery whose `event._tag` is not one of the kinds of
//! [`crate::WebhookEvent`] still verifies and decodes: its event is [`Event::Unknown`] with the tag
//! and the raw JSON, so a receiver can acknowledge (or store) it and carry on. A *known* kind whose members do
//! not match the contract is an error ([`WebhookError::InvalidEnvelope`]), not `Unknown`.
//!
//! # A receiver
//!
//! ```
//! use bridge_contract::webhook::{Event, WebhookVerifier};
//! use bridge_contract::WebhookEvent;
//!
//! /// Called with the raw request body and the value of the `X-Webhook-Signature` header
//! /// ([`SIGNATURE_HEADER`](bridge_contract::webhook::SIGNATURE_HEADER)); returns the HTTP status to answer.
//! fn on_delivery(verifier: &WebhookVerifier, body: &[u8], signature: Option<&str>) -> u16 {
//!     let Some(signature) = signature else { return 400 };
//!     let delivery = match verifier.verify(body, signature) {
//!         Ok(delivery) => delivery,
//!         Err(e) => {
//!             eprintln!("rejected delivery: {e}");
//!             return 400;
//!         }
//!     };
//!     // Deduplicate on delivery.event_id before acting on it: deliveries are retried.
//!     match &delivery.event {
//!         Event::Known(WebhookEvent::BridgeExecuted(executed)) => println!("executed: {executed:?}"),
//!         Event::Known(other) => println!("{} event", other.tag()),
//!         Event::Unknown { tag, .. } => println!("event kind {tag} is newer than this build; stored raw"),
//!     }
//!     200
//! }
//!
//! // Once at start-up, from the key `GET /webhook/public-key` serves (or `WebhookVerifier::from_pem`).
//! # let served = bridge_contract::webhook::WebhookSigner::generate_with_bits(1024)?.served_public_key();
//! let verifier = WebhookVerifier::from_served_key(&served)?;
//! assert_eq!(on_delivery(&verifier, b"{}", Some("00")), 400);
//! # Ok::<(), bridge_contract::webhook::WebhookError>(())
//! ```

use std::fmt;

use crate::{DecimalNumber, WebhookEnvelope, WebhookEvent};
use base64::Engine as _;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::signature::{SignatureEncoding, Signer, Verifier};
use rsa::{RsaPrivateKey, RsaPublicKey};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The request header that carries the signature of a delivery.
pub const SIGNATURE_HEADER: &str = crate::operations::WEBHOOK_SIGNATURE_HEADER;

/// The key size [`WebhookSigner::generate`] uses.
pub const DEFAULT_KEY_BITS: usize = 2048;

/// A webhook event: a kind this build knows, typed, or a newer kind kept as raw JSON.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // as the contract's WebhookEvent: boxing would only complicate matching
pub enum Event {
    /// One of the kinds of the contract.
    Known(WebhookEvent),
    /// A kind the contract (as this build has it) does not list: its `_tag` and the whole event as JSON.
    Unknown {
        /// The event's `_tag`.
        tag: String,
        /// The whole event object, as received.
        raw: serde_json::Value,
    },
}

impl Event {
    /// The event's `_tag`.
    pub fn tag(&self) -> &str {
        match self {
            Event::Known(e) => e.tag(),
            Event::Unknown { tag, .. } => tag,
        }
    }

    /// The typed event, when its kind is known.
    pub fn known(&self) -> Option<&WebhookEvent> {
        match self {
            Event::Known(e) => Some(e),
            Event::Unknown { .. } => None,
        }
    }

    /// The typed event, when its kind is known.
    pub fn into_known(self) -> Option<WebhookEvent> {
        match self {
            Event::Known(e) => Some(e),
            Event::Unknown { .. } => None,
        }
    }
}

impl From<WebhookEvent> for Event {
    fn from(e: WebhookEvent) -> Self {
        Event::Known(e)
    }
}

impl<'de> Deserialize<'de> for Event {
    /// Reads `_tag` first: a known tag decodes as [`WebhookEvent`] (its errors are reported: a required member
    /// missing, a wrong type), ignoring members the contract does not have, at any depth, since production may add
    /// members to an event and a receiver must acknowledge it; any other string tag becomes [`Event::Unknown`]. A
    /// value without a string `_tag` is an error. (`WebhookEvent` itself stays closed: decoded directly, an
    /// unknown member is `unknown field`.)
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = serde_json::Value::deserialize(deserializer)?;
        let tag = match raw.get(WebhookEvent::TAG_PROPERTY) {
            Some(serde_json::Value::String(tag)) => tag.clone(),
            Some(other) => return Err(D::Error::custom(format_args!("event `_tag` is not a string: {other}"))),
            None => return Err(D::Error::custom("event without `_tag`")),
        };
        if WebhookEvent::TAGS.contains(&tag.as_str()) {
            crate::codec::ignoring_unknown_members(|| WebhookEvent::deserialize(raw))
                .map(Event::Known)
                .map_err(D::Error::custom)
        } else {
            Ok(Event::Unknown { tag, raw })
        }
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Event::Known(e) => e.serialize(serializer),
            Event::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// A delivery whose signature checked out, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedDelivery {
    /// The event (see [`Event`] for kinds this build does not know).
    pub event: Event,
    /// Unique id of the event: drop deliveries whose id you have already processed.
    pub event_id: String,
    /// Time of the delivery attempt, in milliseconds since the Unix epoch.
    pub ts: DecimalNumber,
    /// The text that was signed: the body as JavaScript's `JSON.stringify(JSON.parse(body))` writes it.
    pub canonical: String,
}

impl VerifiedDelivery {
    /// The contract's envelope type, when the event's kind is known.
    pub fn into_envelope(self) -> Option<WebhookEnvelope> {
        Some(WebhookEnvelope { event: self.event.into_known()?, event_id: self.event_id, ts: self.ts })
    }
}

/// The envelope, with the event read leniently.
#[derive(Deserialize)]
struct Envelope {
    event: Event,
    #[serde(rename = "eventId")]
    event_id: String,
    ts: DecimalNumber,
}

/// Why a delivery was rejected, or a key could not be used.
#[derive(Debug)]
pub enum WebhookError {
    /// The body is not JSON.
    MalformedBody(serde_json::Error),
    /// The signature header is not a hex string.
    MalformedSignature(String),
    /// The signature does not match the body and the key: the body was changed, or signed with another key.
    BadSignature,
    /// The signature is valid but the body is not an envelope of the contract (a member missing or of the
    /// wrong type, or an event of a known kind that does not match it).
    InvalidEnvelope(serde_json::Error),
    /// A key could not be read.
    InvalidKey(String),
    /// Signing failed (or the key could not be generated or written).
    Signing(String),
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebhookError::MalformedBody(e) => write!(f, "webhook body is not JSON: {e}"),
            WebhookError::MalformedSignature(why) => {
                write!(f, "malformed {SIGNATURE_HEADER} header: {why}")
            }
            WebhookError::BadSignature => {
                write!(f, "webhook signature does not match the body and the key")
            }
            WebhookError::InvalidEnvelope(e) => {
                write!(f, "signed webhook body is not a valid envelope: {e}")
            }
            WebhookError::InvalidKey(why) => write!(f, "invalid webhook key: {why}"),
            WebhookError::Signing(why) => write!(f, "webhook signing failed: {why}"),
        }
    }
}

impl std::error::Error for WebhookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WebhookError::MalformedBody(e) | WebhookError::InvalidEnvelope(e) => Some(e),
            _ => None,
        }
    }
}

/// `JSON.stringify(JSON.parse(body))`: the text the signature covers.
pub fn canonical_json(body: &[u8]) -> Result<String, serde_json::Error> {
    // Numbers read exactly, as JSON.parse reads them: serde_json's default float parsing can be one unit in
    // the last place off, and the text would then differ from the one that was signed.
    Ok(crate::js::from_json_slice(body)?.to_string())
}

/// The SHA-256 digest of `text`, as lower-case hex: the message that is signed.
pub fn digest_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Checks deliveries with the service's public key.
#[derive(Debug, Clone)]
pub struct WebhookVerifier {
    key: VerifyingKey<Sha256>,
}

impl WebhookVerifier {
    /// From the value `GET /webhook/public-key` answers (the JSON string's content: base64 of the PEM text).
    pub fn from_served_key(served: &str) -> Result<Self, WebhookError> {
        let compact: String = served.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let pem = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map_err(|e| WebhookError::InvalidKey(format!("the served key is not base64: {e}")))?;
        let pem = String::from_utf8(pem)
            .map_err(|_| WebhookError::InvalidKey("the served key does not decode to PEM text".to_owned()))?;
        Self::from_pem(&pem)
    }

    /// From PEM text: an SPKI public key (`-----BEGIN PUBLIC KEY-----`, what the service serves) or a PKCS#1
    /// one (`-----BEGIN RSA PUBLIC KEY-----`).
    pub fn from_pem(pem: &str) -> Result<Self, WebhookError> {
        let key = RsaPublicKey::from_public_key_pem(pem.trim())
            .or_else(|spki| RsaPublicKey::from_pkcs1_pem(pem.trim()).map_err(|_| spki))
            .map_err(|e| WebhookError::InvalidKey(format!("not an RSA public key in PEM (SPKI or PKCS#1): {e}")))?;
        Ok(Self::from_public_key(key))
    }

    /// From a parsed RSA public key.
    pub fn from_public_key(key: RsaPublicKey) -> Self {
        Self { key: VerifyingKey::new(key) }
    }

    /// The RSA public key.
    pub fn public_key(&self) -> &RsaPublicKey {
        self.key.as_ref()
    }

    /// Verifies a delivery: `body` is the raw request body, `signature_header` the value of the
    /// [`SIGNATURE_HEADER`] header. On success, the envelope decoded (an event of an unknown kind is
    /// [`Event::Unknown`]).
    pub fn verify(&self, body: &[u8], signature_header: &str) -> Result<VerifiedDelivery, WebhookError> {
        let canonical = self.verify_signature(body, signature_header)?;
        let envelope: Envelope = serde_json::from_slice(body).map_err(WebhookError::InvalidEnvelope)?;
        Ok(VerifiedDelivery { event: envelope.event, event_id: envelope.event_id, ts: envelope.ts, canonical })
    }

    /// Checks the signature only (any JSON body); returns the canonical text that was signed.
    pub fn verify_signature(&self, body: &[u8], signature_header: &str) -> Result<String, WebhookError> {
        let signature = parse_signature(signature_header)?;
        let canonical = canonical_json(body).map_err(WebhookError::MalformedBody)?;
        let digest = digest_hex(&canonical);
        self.key.verify(digest.as_bytes(), &signature).map_err(|_| WebhookError::BadSignature)?;
        Ok(canonical)
    }
}

fn parse_signature(header: &str) -> Result<Signature, WebhookError> {
    let header = header.trim();
    if header.is_empty() {
        return Err(WebhookError::MalformedSignature("empty".to_owned()));
    }
    let bytes = hex::decode(header).map_err(|e| WebhookError::MalformedSignature(format!("not hex: {e}")))?;
    Signature::try_from(bytes.as_slice()).map_err(|e| WebhookError::MalformedSignature(e.to_string()))
}

/// A delivery ready to send: POST `body` with the header [`SIGNATURE_HEADER`]: `signature`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedDelivery {
    /// The body, written as JavaScript's `JSON.stringify` writes it.
    pub body: String,
    /// The hex signature for the [`SIGNATURE_HEADER`] header.
    pub signature: String,
}

/// The signing side (what the service, and the sandbox, do): holds the RSA private key.
///
/// ```
/// use bridge_contract::webhook::{Event, WebhookError, WebhookSigner, WebhookVerifier};
/// use serde_json::json;
///
/// let signer = WebhookSigner::generate_with_bits(1024)?; // `generate()` makes a 2048-bit key
/// // Serve this as the JSON string of `GET /webhook/public-key`:
/// let served: String = signer.served_public_key();
///
/// let envelope = json!({
///     "event": { "_tag": "WEBHOOK_TEST", "type": "test", "message": "hello" },
///     "eventId": "evt-1",
///     "ts": 1767225600000u64,
/// });
/// let delivery = signer.signed_delivery(&envelope)?; // POST delivery.body with X-Webhook-Signature
///
/// let verifier = WebhookVerifier::from_served_key(&served)?;
/// let verified = verifier.verify(delivery.body.as_bytes(), &delivery.signature)?;
/// assert!(matches!(verified.event, Event::Known(_)));
/// assert_eq!(verified.event_id, "evt-1");
///
/// let forged = delivery.body.replace("hello", "hullo");
/// assert!(matches!(verifier.verify(forged.as_bytes(), &delivery.signature), Err(WebhookError::BadSignature)));
/// # Ok::<(), WebhookError>(())
/// ```
///
/// Signing uses the `rsa` crate, whose private-key operation is not constant-time (RUSTSEC-2023-0071): keep the
/// signer on machines where an attacker cannot time it closely, as for any server-side key. Verification uses
/// only the public key and is not affected.
#[derive(Clone)]
pub struct WebhookSigner {
    key: SigningKey<Sha256>,
}

impl fmt::Debug for WebhookSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookSigner").field("public_key", &self.public_key_pem()).finish_non_exhaustive()
    }
}

impl WebhookSigner {
    /// A new random 2048-bit key ([`DEFAULT_KEY_BITS`]). Key generation is slow in debug builds (seconds).
    pub fn generate() -> Result<Self, WebhookError> {
        Self::generate_with_bits(DEFAULT_KEY_BITS)
    }

    /// A new random key of `bits` bits.
    pub fn generate_with_bits(bits: usize) -> Result<Self, WebhookError> {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, bits)
            .map_err(|e| WebhookError::Signing(format!("generating a {bits}-bit RSA key: {e}")))?;
        Ok(Self::from_private_key(key))
    }

    /// From a PEM private key: PKCS#8 (`-----BEGIN PRIVATE KEY-----`) or PKCS#1 (`-----BEGIN RSA PRIVATE KEY-----`).
    pub fn from_pem(pem: &str) -> Result<Self, WebhookError> {
        let key = RsaPrivateKey::from_pkcs8_pem(pem.trim())
            .or_else(|pkcs8| RsaPrivateKey::from_pkcs1_pem(pem.trim()).map_err(|_| pkcs8))
            .map_err(|e| WebhookError::InvalidKey(format!("not an RSA private key in PEM (PKCS#8 or PKCS#1): {e}")))?;
        Ok(Self::from_private_key(key))
    }

    /// From a parsed RSA private key.
    pub fn from_private_key(key: RsaPrivateKey) -> Self {
        Self { key: SigningKey::new(key) }
    }

    /// The private key as PKCS#8 PEM text (to store it).
    pub fn private_key_pem(&self) -> Result<String, WebhookError> {
        let key: &RsaPrivateKey = self.key.as_ref();
        key.to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .map_err(|e| WebhookError::Signing(format!("writing the private key: {e}")))
    }

    /// The public key as SPKI PEM text (`-----BEGIN PUBLIC KEY-----`, LF line ends).
    pub fn public_key_pem(&self) -> String {
        let key: &RsaPrivateKey = self.key.as_ref();
        key.to_public_key().to_public_key_pem(LineEnding::LF).expect("an RSA public key always encodes as SPKI PEM")
    }

    /// What `GET /webhook/public-key` serves (as a JSON string): base64 of [`Self::public_key_pem`].
    pub fn served_public_key(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.public_key_pem())
    }

    /// A verifier for this signer's signatures.
    pub fn verifier(&self) -> WebhookVerifier {
        let key: &RsaPrivateKey = self.key.as_ref();
        WebhookVerifier::from_public_key(key.to_public_key())
    }

    /// The hex signature of a JSON body (the value of the [`SIGNATURE_HEADER`] header).
    pub fn sign(&self, body: &[u8]) -> Result<String, WebhookError> {
        let canonical = canonical_json(body).map_err(WebhookError::MalformedBody)?;
        Ok(self.sign_canonical(&canonical))
    }

    /// Serialises `envelope` (normally a [`WebhookEnvelope`]) as JavaScript's `JSON.stringify` would and signs
    /// it: the body and header value of a delivery.
    pub fn signed_delivery<T: Serialize + ?Sized>(&self, envelope: &T) -> Result<SignedDelivery, WebhookError> {
        let json = serde_json::to_vec(envelope).map_err(|e| WebhookError::Signing(format!("serialising: {e}")))?;
        let body = canonical_json(&json).map_err(|e| WebhookError::Signing(format!("re-reading: {e}")))?;
        let signature = self.sign_canonical(&body);
        Ok(SignedDelivery { body, signature })
    }

    fn sign_canonical(&self, canonical: &str) -> String {
        let signature: Signature = self.key.sign(digest_hex(canonical).as_bytes());
        hex::encode(signature.to_bytes())
    }
}
