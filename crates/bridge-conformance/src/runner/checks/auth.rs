//! Authentication, for every operation by its `security` (from `every_operation!`): an authenticated operation
//! answers 401 `Unauthorized` without a credential (and for an unknown legacy API key where that scheme is
//! allowed), 400 `InvalidJwt` for a malformed token and for a token signed with another key, and 401
//! `Unauthorized` for an expired token of the right issuer (`bridge_server::auth`'s table). Each request is also
//! undecodable (a JSON string as body, no query), so a server that decoded before authenticating answers a decode error
//! instead and fails. An operation with `security: []` (the webhook public key) answers without any credential.
//!
//! The production service's SDK sends the JWT as the whole `Authorization` value, without `Bearer`: for every
//! authenticated operation the same cases run in that form too (`...-no-scheme`), and a valid token sent without a
//! scheme must get exactly the answer (status and `_tag`) the same request gets with `Bearer`.
//!
//! Revocation (with `--revoked-api-key`, and `--revoked-key-token`: a key of the deployment that was revoked, and a
//! token exchanged from it before): the key is refused by the exchange (`POST /authentication/auth/apiKey`) and as
//! the legacy `x-api-key`, and the token by every authenticated operation, each 401 `Unauthorized` in the
//! contract's shape.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;
use base64::Engine as _;
use bridge_contract::{AnyOperation, Security};
use bridge_server::Claims;
use rand::RngCore as _;

use crate::contract::{contract, OpInfo};
use crate::runner::check::{Check, Ctx, Needs};
use crate::runner::http::{Body, Credential};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    NoCredential,
    MalformedToken,
    WrongSignature,
    ExpiredToken,
    UnknownApiKey,
    RevokedApiKey,
    RevokedKeyToken,
    NoneNeeded,
    /// The token cases again, the JWT sent as the whole `Authorization` value (production's SDK).
    NoScheme(Token),
}

/// A token sent without a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Valid,
    Malformed,
    WrongSignature,
    Expired,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::NoCredential => "no-credential",
            Case::MalformedToken => "malformed-token",
            Case::WrongSignature => "wrong-signature",
            Case::ExpiredToken => "expired-token",
            Case::UnknownApiKey => "unknown-api-key",
            Case::RevokedApiKey => "revoked-api-key",
            Case::RevokedKeyToken => "revoked-key-token",
            Case::NoneNeeded => "no-credential-needed",
            Case::NoScheme(Token::Valid) => "valid-token-no-scheme",
            Case::NoScheme(Token::Malformed) => "malformed-token-no-scheme",
            Case::NoScheme(Token::WrongSignature) => "wrong-signature-no-scheme",
            Case::NoScheme(Token::Expired) => "expired-token-no-scheme",
        }
    }
}

/// The token cases in both forms.
const TOKEN_CASES: [Case; 8] = [
    Case::NoCredential,
    Case::MalformedToken,
    Case::WrongSignature,
    Case::ExpiredToken,
    Case::NoScheme(Token::Valid),
    Case::NoScheme(Token::Malformed),
    Case::NoScheme(Token::WrongSignature),
    Case::NoScheme(Token::Expired),
];

pub fn checks() -> Vec<Check> {
    let mut checks = Vec::new();
    for op in contract().operations() {
        let cases: Vec<Case> = match op.security {
            Security::None => vec![Case::NoneNeeded],
            Security::Bearer => TOKEN_CASES.iter().copied().chain([Case::RevokedKeyToken]).collect(),
            Security::BearerOrApiKey => TOKEN_CASES
                .iter()
                .copied()
                .chain([Case::RevokedKeyToken, Case::UnknownApiKey, Case::RevokedApiKey])
                .collect(),
        };
        if op.operation == AnyOperation::ExchangeApiKey {
            let needs = Needs { revoked_key: true, ..Needs::NOTHING };
            checks.push(Check::new(format!("auth::{}::revoked-api-key", op.id), needs, move |ctx| {
                Box::pin(exchange_revoked(ctx, op))
            }));
        }
        for case in cases {
            let mut needs = if op.sandbox_only { Needs::HELPERS } else { Needs::NOTHING };
            needs.expired = matches!(case, Case::ExpiredToken | Case::NoScheme(Token::Expired));
            needs.revoked_key = case == Case::RevokedApiKey;
            needs.revoked_token = case == Case::RevokedKeyToken;
            checks.push(Check::new(format!("auth::{}::{}", op.id, case.name()), needs, move |ctx| {
                Box::pin(run(ctx, op, case))
            }));
        }
    }
    checks
}

async fn run(ctx: &Ctx, op: &'static OpInfo, case: Case) -> anyhow::Result<()> {
    let expired = || ctx.config.expired_token.clone().unwrap_or_default();
    let credential = match case {
        Case::NoCredential | Case::NoneNeeded => Credential::None,
        Case::MalformedToken => Credential::Authorization("Bearer conformance.not-a-jwt".into()),
        Case::WrongSignature => Credential::Bearer(resigned_with_random_key(&ctx.config.token)?),
        Case::ExpiredToken => Credential::Bearer(expired()),
        Case::UnknownApiKey => Credential::ApiKey(ctx.unique("unknown-api-key")),
        Case::RevokedApiKey => Credential::ApiKey(ctx.config.revoked_api_key.clone().unwrap_or_default()),
        Case::RevokedKeyToken => Credential::Bearer(ctx.config.revoked_key_token.clone().unwrap_or_default()),
        Case::NoScheme(Token::Valid) => Credential::Authorization(ctx.config.token.clone()),
        Case::NoScheme(Token::Malformed) => Credential::Authorization("conformance.not-a-jwt".into()),
        Case::NoScheme(Token::WrongSignature) => {
            Credential::Authorization(resigned_with_random_key(&ctx.config.token)?)
        }
        Case::NoScheme(Token::Expired) => Credential::Authorization(expired()),
    };
    let api = ctx.main.with_credential(credential);
    let names: Vec<&str> = op.shapes.path.map(|s| s.fields.iter().map(|f| f.name).collect()).unwrap_or_default();
    let path: Vec<(&str, &str)> = names.iter().map(|n| (*n, "conformance-unknown")).collect();
    // Undecodable on purpose (a JSON string as body, no query): authentication must answer first.
    let body = match op.shapes.body {
        Some(_) => Body::Raw { content_type: Some("application/json".into()), bytes: b"\"conformance\"".to_vec() },
        None => Body::None,
    };
    let reply = api.send(op, &path, "", body.clone()).await?;
    let (status, tag) = match case {
        Case::NoScheme(Token::Valid) => {
            // Authenticated: the same answer as with `Bearer` (the request is undecodable where it has a body).
            let bearer = ctx
                .main
                .with_credential(Credential::Bearer(ctx.config.token.clone()))
                .send(op, &path, "", body)
                .await?;
            if reply.status != bearer.status || reply.tag() != bearer.tag() {
                bail!(
                    "without a scheme the token got {}; with `Bearer` it got {}",
                    reply.describe(),
                    bearer.describe()
                );
            }
            if reply.status == 401 || reply.tag() == Some("InvalidJwt") {
                bail!("a valid token was refused in both forms: {}", reply.describe());
            }
            return Ok(());
        }
        Case::NoneNeeded => {
            // Authentication lets it through: whatever it answers (a success, or a documented refusal of the
            // unknown ids and the undecodable body), it is not an authentication failure.
            if reply.status == 401 || reply.tag() == Some("InvalidJwt") {
                bail!("a request without credentials got {}; this operation needs none", reply.describe());
            }
            return Ok(());
        }
        Case::NoCredential
        | Case::ExpiredToken
        | Case::UnknownApiKey
        | Case::RevokedApiKey
        | Case::RevokedKeyToken
        | Case::NoScheme(Token::Expired) => (401, "Unauthorized"),
        Case::MalformedToken | Case::WrongSignature | Case::NoScheme(Token::Malformed | Token::WrongSignature) => {
            (400, "InvalidJwt")
        }
    };
    if reply.status != status || reply.tag() != Some(tag) {
        bail!("expected {status} {tag}, got {}", reply.describe());
    }
    Ok(())
}

/// The exchange refuses a revoked key: 401 `Unauthorized` (the body is valid, so only the key can be refused).
async fn exchange_revoked(ctx: &Ctx, op: &'static OpInfo) -> anyhow::Result<()> {
    let key = ctx.config.revoked_api_key.clone().unwrap_or_default();
    let reply = ctx.anonymous.call(op.operation, &[], &[], Some(serde_json::json!({ "apiKey": key }))).await?;
    if reply.status != 401 || reply.tag() != Some("Unauthorized") {
        bail!("a revoked API key was exchanged: expected 401 Unauthorized, got {}", reply.describe());
    }
    Ok(())
}

/// The claims of `token` (a JWT), read without verification.
pub fn claims_of(token: &str) -> Option<serde_json::Value> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The project and features of `token`, valid for another hour, signed with a random HS256 key: the same
/// claims as a real token, but a signature that no issuer made.
pub fn resigned_with_random_key(token: &str) -> anyhow::Result<String> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let mut claims = claims_of(token).and_then(|c| serde_json::from_value::<Claims>(c).ok()).unwrap_or(Claims {
        sub: "conformance".into(),
        exp: 0,
        iat: None,
        features: vec![],
    });
    claims.exp = claims.exp.max(now + 3600);
    let mut key = [0u8; 32];
    rand::rng().fill_bytes(&mut key);
    Ok(bridge_server::auth::sign_token(
        &claims,
        jsonwebtoken::Algorithm::HS256,
        &jsonwebtoken::EncodingKey::from_secret(&key),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_authenticated_operation_has_its_cases() {
        let names: Vec<String> = checks().into_iter().map(|c| c.name).collect();
        assert!(names.contains(&"auth::quoteBridge::wrong-signature".to_owned()));
        assert!(names.contains(&"auth::listUserEvents::unknown-api-key".to_owned()));
        assert!(!names.contains(&"auth::quoteBridge::unknown-api-key".to_owned()));
        assert!(names.contains(&"auth::getWebhookPublicKey::no-credential-needed".to_owned()));
        assert!(names.contains(&"auth::createDepositAddresses::valid-token-no-scheme".to_owned()));
        assert!(names.contains(&"auth::listUserEvents::expired-token-no-scheme".to_owned()));
        assert!(names.contains(&"auth::listUserEvents::revoked-api-key".to_owned()));
        assert!(names.contains(&"auth::quoteBridge::revoked-key-token".to_owned()));
        assert!(names.contains(&"auth::exchangeApiKey::revoked-api-key".to_owned()));
        assert!(!names.contains(&"auth::quoteBridge::revoked-api-key".to_owned()));
    }

    #[test]
    fn resigning_keeps_the_claims() {
        let original = resigned_with_random_key("x").unwrap();
        let claims = claims_of(&original).unwrap();
        assert_eq!(claims["sub"], "conformance");
        let again = resigned_with_random_key(&original).unwrap();
        assert_eq!(claims_of(&again).unwrap()["sub"], "conformance");
        assert_ne!(again.rsplit('.').next(), original.rsplit('.').next());
    }
}
