//! Authentication, for each failure production answers (docs/production.md): no credential, malformed token, bad signature,
//! `alg: none`, algorithm not configured, expiry, the legacy API key, and the public key needing nothing.

use crate::common;

use base64::Engine as _;
use bridge_server::auth::sign_token;
use bridge_server::{Claims, JwtAuthenticator, ServerConfig};
use common::{app, now, Send};
use jsonwebtoken::{Algorithm, EncodingKey};

const EVENTS: &str = "/webhook/user-events-cursor?sinceTimestamp=0";

fn claims(exp: u64) -> Claims {
    Claims { sub: "project-a".into(), exp, iat: None, features: vec![] }
}

async fn status_with(authorization: Option<String>, uri: &str) -> (u16, serde_json::Value) {
    let (app, _) = app(ServerConfig::default());
    let mut send = Send::get(Box::leak(uri.to_owned().into_boxed_str())).without_auth();
    if let Some(value) = authorization {
        send = send.header("authorization", value);
    }
    let answer = send.to(&app).await;
    (answer.status, answer.body)
}

#[tokio::test]
async fn missing_credential_is_401_unauthorized() {
    let (status, body) = status_with(None, EVENTS).await;
    assert_eq!((status, body["_tag"].as_str()), (401, Some("Unauthorized")));
    let (status, _) = status_with(Some("Basic dXNlcjpwYXNz".into()), "/bridge/history/user").await;
    assert_eq!(status, 401, "another scheme is no bearer credential");
}

#[tokio::test]
async fn malformed_token_is_400_invalid_jwt() {
    for token in ["Bearer not-a-jwt", "Bearer a.b.c", "Bearer "] {
        let (status, body) = status_with(Some(token.into()), EVENTS).await;
        assert_eq!((status, body["_tag"].as_str()), (400, Some("InvalidJwt")), "{token}");
    }
}

#[tokio::test]
async fn wrong_signature_is_400_invalid_jwt() {
    let token = sign_token(
        &claims(now() + 60),
        Algorithm::HS256,
        &EncodingKey::from_secret(b"another secret, another secret!!"),
    )
    .unwrap();
    let (status, body) = status_with(Some(format!("Bearer {token}")), EVENTS).await;
    assert_eq!((status, body["_tag"].as_str()), (400, Some("InvalidJwt")));
}

#[tokio::test]
async fn alg_none_is_refused() {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64.encode(format!(r#"{{"sub":"project-a","exp":{}}}"#, now() + 60));
    let (status, body) = status_with(Some(format!("Bearer {header}.{payload}.")), EVENTS).await;
    assert_eq!((status, body["_tag"].as_str()), (400, Some("InvalidJwt")));
}

#[tokio::test]
async fn expired_token_is_401() {
    let token = sign_token(&claims(now() - 10), Algorithm::HS256, &EncodingKey::from_secret(common::SECRET)).unwrap();
    let (status, body) = status_with(Some(format!("Bearer {token}")), EVENTS).await;
    assert_eq!((status, body["_tag"].as_str()), (401, Some("Unauthorized")));
}

#[tokio::test]
async fn valid_token_passes_and_names_the_project() {
    let (app, recorder) = app(ServerConfig::default());
    let answer = Send::get(EVENTS).to(&app).await;
    assert_eq!(answer.status, 200);
    assert_eq!(recorder.last().unwrap().project, "project-a");
}

#[tokio::test]
async fn rs256_and_es256_tokens_verify_and_unconfigured_algorithms_do_not() {
    let rsa_private = include_bytes!("../fixtures/rsa-private.pem");
    let ec_private = include_bytes!("../fixtures/ec-private.pem");
    let auth = JwtAuthenticator::new()
        .with_rs256_pem(include_bytes!("../fixtures/rsa-public.pem"))
        .unwrap()
        .with_es256_pem(include_bytes!("../fixtures/ec-public.pem"))
        .unwrap();
    use bridge_server::Authenticator;
    let rs =
        sign_token(&claims(now() + 60), Algorithm::RS256, &EncodingKey::from_rsa_pem(rsa_private).unwrap()).unwrap();
    let es = sign_token(&claims(now() + 60), Algorithm::ES256, &EncodingKey::from_ec_pem(ec_private).unwrap()).unwrap();
    assert_eq!(auth.verify_bearer(&rs).await.unwrap().project_id, "project-a");
    assert_eq!(auth.verify_bearer(&es).await.unwrap().project_id, "project-a");
    let hs = sign_token(&claims(now() + 60), Algorithm::HS256, &EncodingKey::from_secret(common::SECRET)).unwrap();
    assert!(
        matches!(auth.verify_bearer(&hs).await, Err(bridge_server::AuthFailure::Invalid(_))),
        "HS256 is not configured here"
    );
}

#[tokio::test]
async fn legacy_api_key_only_on_the_event_feed() {
    let (app, recorder) = app(ServerConfig::default());
    let answer = Send::get(EVENTS).without_auth().header("x-api-key", "legacy-key").to(&app).await;
    assert_eq!(answer.status, 200);
    assert_eq!(recorder.last().unwrap().project, "project-legacy");
    let answer = Send::get(EVENTS).without_auth().header("x-api-key", "wrong").to(&app).await;
    assert_eq!((answer.status, answer.body["_tag"].as_str()), (401, Some("Unauthorized")));
    let answer =
        Send::get("/sda/deposit-addresses/search").without_auth().header("x-api-key", "legacy-key").to(&app).await;
    assert_eq!(answer.status, 401, "other operations accept bearer tokens only");
}

#[tokio::test]
async fn the_public_key_needs_no_credential() {
    let (app, _) = app(ServerConfig::default());
    let answer = Send::get("/webhook/public-key").without_auth().to(&app).await;
    assert_eq!((answer.status, answer.body.as_str()), (200, Some("public-key")));
}

#[tokio::test]
async fn body_over_the_limit_is_413() {
    let (app, recorder) = app(ServerConfig { body_limit: 1024, ..ServerConfig::default() });
    let big = format!("{{\"token\":\"{}\"}}", "x".repeat(2048));
    let answer = Send::json("POST", "/bridge/quote/user", &big).to(&app).await;
    assert_eq!((answer.status, answer.body["_tag"].as_str()), (413, Some("PayloadTooLarge")));
    assert!(recorder.last().is_none(), "nothing reached the handler");
}

/// An operation without authentication reads its body before any credential is checked: it accepts 4 KiB of it
/// (not the 1 MiB of the others), so a larger one is 413 even below `body_limit`, and nothing reaches the handler.
#[tokio::test]
async fn an_unauthenticated_body_over_its_small_limit_is_413() {
    let (app, recorder) = app(ServerConfig::default());
    let big = format!("{{\"apiKey\":\"{}\"}}", "x".repeat(4096));
    let answer = Send::json("POST", "/authentication/auth/apiKey", &big).without_auth().to(&app).await;
    assert_eq!((answer.status, answer.body["_tag"].as_str()), (413, Some("PayloadTooLarge")), "{:?}", answer.body);
    assert!(answer.body["message"].as_str().unwrap().contains("4096 bytes"), "{:?}", answer.body);
    assert!(recorder.last().is_none(), "nothing reached the handler");
    let small = format!("{{\"apiKey\":\"{}\"}}", "x".repeat(4000));
    let answer = Send::json("POST", "/authentication/auth/apiKey", &small).without_auth().to(&app).await;
    assert_ne!(answer.status, 413, "{:?}", answer.body);
}

/// The production service's SDK sends the JWT as the whole `Authorization` value, without `Bearer`: every
/// credential gets the same answer in both forms, on the event feed and on a bearer-only operation.
#[tokio::test]
async fn a_jwt_without_a_scheme_is_answered_exactly_like_a_bearer_token() {
    let valid = sign_token(&claims(now() + 60), Algorithm::HS256, &EncodingKey::from_secret(common::SECRET)).unwrap();
    let expired = sign_token(&claims(now() - 10), Algorithm::HS256, &EncodingKey::from_secret(common::SECRET)).unwrap();
    let forged =
        sign_token(&claims(now() + 60), Algorithm::HS256, &EncodingKey::from_secret(b"not the issuer's key!")).unwrap();
    let cases = [(valid.as_str(), 200, None), (expired.as_str(), 401, Some("Unauthorized"))];
    let invalid = [("not-a-jwt", 400), ("a.b.c", 400), (forged.as_str(), 400)];
    for uri in [EVENTS, "/bridge/history/bridge/b1"] {
        let expected_ok = if uri == EVENTS { 200 } else { 422 }; // the recorder answers getBridge with 422
        for (token, status, tag) in cases {
            let status = if status == 200 { expected_ok } else { status };
            for value in [format!("Bearer {token}"), format!("bearer {token}"), token.to_owned()] {
                let (got, body) = status_with(Some(value.clone()), uri).await;
                assert_eq!(got, status, "{uri} with Authorization: {value}");
                if let Some(tag) = tag {
                    assert_eq!(body["_tag"].as_str(), Some(tag), "{uri} with Authorization: {value}");
                }
            }
        }
        for (token, status) in invalid {
            for value in [format!("Bearer {token}"), token.to_owned()] {
                let (got, body) = status_with(Some(value.clone()), uri).await;
                assert_eq!(
                    (got, body["_tag"].as_str()),
                    (status, Some("InvalidJwt")),
                    "{uri} with Authorization: {value}"
                );
            }
        }
    }
    // The handler saw the project of the token sent without a scheme.
    let (app, recorder) = app(ServerConfig::default());
    let answer = Send::get(EVENTS).without_auth().header("authorization", valid).to(&app).await;
    assert_eq!(answer.status, 200);
    assert_eq!(recorder.last().unwrap().project, "project-a");
}

#[test]
fn the_bearer_token_of_an_authorization_value() {
    use bridge_server::auth::bearer_token;
    assert_eq!(bearer_token("Bearer abc.def.ghi"), Some("abc.def.ghi"));
    assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
    assert_eq!(bearer_token("abc.def.ghi"), Some("abc.def.ghi"));
    assert_eq!(bearer_token(" eyJ.x.y "), Some("eyJ.x.y"));
    assert_eq!(bearer_token("Bearer"), Some(""));
    assert_eq!(bearer_token("Bearer "), Some(""));
    assert_eq!(bearer_token(""), None);
    assert_eq!(bearer_token("Basic dXNlcjpwYXNz"), None);
}

fn signed_with_kid(kid: Option<&str>, secret: &[u8]) -> String {
    let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
    header.kid = kid.map(str::to_owned);
    bridge_server::auth::sign_claims(&claims(now() + 60), &header, &EncodingKey::from_secret(secret)).unwrap()
}

/// Several HS256 keys (a rotation): the `kid` in a token's header chooses the key; a token without one (or naming
/// a key the authenticator does not have) is verified by the keys added without a key id, as before key ids.
#[tokio::test]
async fn the_kid_header_chooses_the_key() {
    use bridge_server::{AuthFailure, Authenticator};
    let (old, new) = (b"the old secret, the old secret!!!".as_slice(), b"the new secret, the new secret!!!".as_slice());
    let rotated = JwtAuthenticator::new().with_hs256_kid("k1", old).with_hs256_kid("k2", new);
    for (kid, secret) in [("k1", old), ("k2", new)] {
        let caller = rotated.verify_bearer(&signed_with_kid(Some(kid), secret)).await.unwrap();
        assert_eq!(caller.project_id, "project-a", "{kid}");
    }
    let crossed = rotated.verify_bearer(&signed_with_kid(Some("k1"), new)).await;
    assert!(matches!(crossed, Err(AuthFailure::Invalid(ref m)) if m.contains("signature")), "{crossed:?}");
    let unknown = rotated.verify_bearer(&signed_with_kid(Some("k9"), new)).await;
    assert!(matches!(unknown, Err(AuthFailure::Invalid(ref m)) if m.contains("k9")), "{unknown:?}");
    let unnamed = rotated.verify_bearer(&signed_with_kid(None, new)).await;
    assert!(matches!(unnamed, Err(AuthFailure::Invalid(ref m)) if m.contains("kid")), "{unnamed:?}");

    // Keys without a key id verify tokens without one, and tokens naming a key id nobody has.
    let mixed = JwtAuthenticator::new().with_hs256(old).with_hs256_kid("k2", new);
    assert!(mixed.verify_bearer(&signed_with_kid(None, old)).await.is_ok());
    assert!(mixed.verify_bearer(&signed_with_kid(Some("elsewhere"), old)).await.is_ok());
    assert!(mixed.verify_bearer(&signed_with_kid(Some("k2"), new)).await.is_ok());
    assert!(mixed.verify_bearer(&signed_with_kid(Some("k2"), old)).await.is_err(), "k2 is not the old key");
    // Several keys without an id: each is tried.
    let both = JwtAuthenticator::new().with_hs256(new).with_hs256(old);
    assert!(both.verify_bearer(&signed_with_kid(None, old)).await.is_ok());
}

/// An authenticator that has to look a credential up (here: after yielding to the runtime, as a store read would)
/// and one that cannot decide: its 503 is the contract's `ServiceUnavailable`, and the handler never runs.
#[tokio::test]
async fn an_async_authenticator_is_awaited_and_its_failure_is_503() {
    use bridge_server::{AuthFailure, Authenticator, Caller};
    struct LooksUp;
    impl Authenticator for LooksUp {
        async fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
            tokio::task::yield_now().await;
            match token {
                "known" => Ok(Caller::new("looked-up")),
                "store-down" => Err(AuthFailure::Unavailable("the key store failed".into())),
                _ => Err(AuthFailure::Rejected("unknown".into())),
            }
        }
    }
    let recorder = common::Recorder::default();
    let app = bridge_server::router(recorder.clone(), LooksUp, ServerConfig::default());
    let answer = Send::get(EVENTS).without_auth().header("authorization", "Bearer known").to(&app).await;
    assert_eq!(answer.status, 200);
    assert_eq!(recorder.last().unwrap().project, "looked-up");
    let calls = recorder.calls.lock().unwrap().len();
    let answer = Send::get(EVENTS).without_auth().header("authorization", "Bearer store-down").to(&app).await;
    assert_eq!((answer.status, answer.body["_tag"].as_str()), (503, Some("ServiceUnavailable")), "{answer:?}");
    assert_eq!(recorder.calls.lock().unwrap().len(), calls, "the handler did not run");
    let answer = Send::get(EVENTS).without_auth().header("authorization", "Bearer other").to(&app).await;
    assert_eq!(answer.status, 401);
    let answer = Send::get(EVENTS).without_auth().header("x-api-key", "any").to(&app).await;
    assert_eq!(answer.status, 401, "API keys are refused by default");
}
