//! Credentials by their form ([`bridge_server::credential`]): every form the sandbox issues is recognised, also
//! inside other text; no ordinary value of the contract is; and a refused request never gets its credential
//! quoted back in the error answer, whatever part of the request carries it.

use crate::common;

use base64::Engine as _;
use bridge_server::credential::{self, MARK};
use bridge_server::ServerConfig;
use common::{app, Send};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Every form of credential the sandbox issues, from random bytes (the sandbox's own generators are checked
/// against the recogniser in bridge-sandbox's tests).
fn issued() -> impl Strategy<Value = String> {
    let random = proptest::collection::vec(any::<u8>(), 32);
    prop_oneof![
        random.clone().prop_map(|b| format!("sbx_{}", b64(&b))),
        random.clone().prop_map(|b| format!("{}{}", credential::SESSION_PREFIX, b64(&b))),
        random.clone().prop_map(|b| format!("{}{}", credential::CSRF_PREFIX, b64(&b))),
        // A key of an earlier version: the project (any text), then the HMAC in hex.
        (".{1,40}", random.clone()).prop_map(|(project, mac)| format!("sbx_{}.{}", b64(project.as_bytes()), hex(&mac))),
        // A JWT: a JSON header and payload, a signature of 32 to 256 bytes (HS256 to RS256).
        (
            prop_oneof![Just("HS256"), Just("RS256"), Just("ES256")],
            "[a-z0-9-]{1,40}",
            0i64..4_000_000_000,
            proptest::collection::vec(any::<u8>(), 32..256)
        )
            .prop_map(|(alg, sub, exp, signature)| {
                let header = format!(r#"{{"alg":"{alg}","typ":"JWT","kid":"k1"}}"#);
                let claims = format!(r#"{{"sub":"{sub}","exp":{exp}}}"#);
                format!("{}.{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()), b64(&signature))
            }),
    ]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Ordinary values of the contract: token symbols, chain names, EVM and base58 addresses, transaction hashes,
/// 24-hex-digit ids and feed cursors, key ids, decimal strings, dates, UUIDs, words.
fn ordinary() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Z0-9.]{0,11}",
        "[A-Z_]{3,24}",
        "0x[0-9a-fA-F]{40}",
        "0x[0-9a-f]{64}",
        "[1-9A-HJ-NP-Za-km-z]{32,44}",
        "[0-9a-f]{24}",
        "key_[0-9a-f]{16}",
        "-?[0-9]{1,30}(\\.[0-9]{1,18})?",
        "20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?Z",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[a-z]{1,12}( [a-z]{1,12}){0,6}",
    ]
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    /// Every issued form is one credential; inside any text it is found and written shortened, never whole, and
    /// what is written is not recognised again.
    #[test]
    fn every_issued_form_is_recognised_and_redacted_anywhere(
        secret in issued(),
        before in "[ -~]{0,20}",
        after in "[ -~&&[^A-Za-z0-9_.-]][ -~]{0,20}",
    ) {
        prop_assert!(credential::is_credential(&secret), "{}", secret);
        let text = format!("{before}{secret}{after}");
        let redacted = credential::redact(&text);
        prop_assert!(!redacted.contains(&secret), "{}", redacted);
        prop_assert!(redacted.contains(MARK), "{}", redacted);
        let again = credential::redact(&redacted).into_owned();
        prop_assert_eq!(&again, redacted.as_ref(), "idempotent");
        prop_assert!(!credential::contains(&redacted), "{}", redacted);
    }

    /// No ordinary value of the contract is taken for a credential.
    #[test]
    fn ordinary_values_are_not_credentials(value in ordinary()) {
        prop_assert!(!credential::contains(&value), "{}", value);
        let redacted = credential::redact(&value).into_owned();
        prop_assert_eq!(redacted, value);
    }

    /// A credential where the decoder refuses it (a text body, a JSON string body, a form field sent twice, a
    /// query number, an enum member, a path parameter's pattern): the 400 `HttpApiDecodeError` says where and
    /// why, and writes the value redacted, never whole.
    #[test]
    fn a_refused_credential_is_never_quoted_back(secret in issued(), case in 0usize..6) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (app, _) = app(ServerConfig::default());
        let exchange = "/authentication/auth/apiKey";
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let send = match case {
            0 => Send::json("POST", exchange, &secret).content_type(Some("text/plain")).without_auth(),
            1 => Send::json("POST", exchange, &format!("\"{secret}\"")).without_auth(),
            2 => Send::json("POST", exchange, &format!("apiKey={secret}&apiKey={secret}"))
                .content_type(Some("application/x-www-form-urlencoded"))
                .without_auth(),
            3 => Send::get(leak(format!("/bridge/history/user?page={secret}&limit=1&sortBy=createdAt&sortDirection=asc"))),
            4 => Send::json("POST", "/bridge/quote/user", &common::with(common::quote_body(), "mode", secret.clone().into())),
            _ => Send::get(leak(format!("/webhook/user-events-cursor?sinceTimestamp=0&pageToken={secret}"))),
        };
        let answer = rt.block_on(send.to(&app));
        prop_assert_eq!(answer.status, 400, "{:?}", answer);
        prop_assert_eq!(answer.body["_tag"].as_str(), Some("HttpApiDecodeError"));
        let text = answer.body.to_string();
        prop_assert!(!text.contains(&secret), "{}", text);
        prop_assert!(text.contains(MARK), "{}", text);
    }
}

/// The shape of a redacted value in a decode error, pinned: the key exchange sent a key as `text/plain`.
#[tokio::test]
async fn a_key_sent_as_text_is_refused_with_the_key_redacted() {
    let (app, _) = app(ServerConfig::default());
    let key = "sbx_q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83";
    let answer = Send::json("POST", "/authentication/auth/apiKey", key)
        .content_type(Some("text/plain"))
        .without_auth()
        .to(&app)
        .await;
    insta::assert_json_snapshot!("key_exchange_text_key_redacted", answer);
    assert_eq!(
        answer.body["issues"][0]["message"],
        format!("Expected {{ readonly apiKey: NonEmptyString }}, actual \"sbx_q83v{MARK}\"")
    );
}
