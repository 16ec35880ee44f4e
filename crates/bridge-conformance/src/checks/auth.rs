//! Authentication, for every operation by its `security` (from `every_operation!`): an authenticated operation
//! answers 401 `Unauthorized` without a credential (and for an unknown legacy API key where that scheme is
//! allowed), 400 `InvalidJwt` for a malformed token and for a token signed with another key, and 401
//! `Unauthorized` for an expired token of the right issuer (`bridge_server::auth`'s table). Each request is also
//! undecodable (a JSON string as body, no query), so a server that decoded before authenticating answers a decode error
//! instead and fails. An operation with `security: []` (the webhook public key) answers without any credential.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;
use base64::Engine as _;
use bridge_contract::Security;
use bridge_server::Claims;
use rand::RngCore as _;

use crate::contract::{contract, OpInfo};
use crate::http::{Body, Credential};
use crate::runner::{Check, Ctx, Needs};

#[derive(Debug, Clone, Copy)]
enum Case {
    NoCredential,
    MalformedToken,
    WrongSignature,
    ExpiredToken,
    UnknownApiKey,
    NoneNeeded,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::NoCredential => "no-credential",
            Case::MalformedToken => "malformed-token",
            Case::WrongSignature => "wrong-signature",
            Case::ExpiredToken => "expired-token",
            Case::UnknownApiKey => "unknown-api-key",
            Case::NoneNeeded => "no-credential-needed",
        }
    }
}

pub fn checks() -> Vec<Check> {
    let mut checks = Vec::new();
    for op in contract().operations() {
        let cases: &[Case] = match op.security {
            Security::None => &[Case::NoneNeeded],
            Security::Bearer => &[Case::NoCredential, Case::MalformedToken, Case::WrongSignature, Case::ExpiredToken],
            Security::BearerOrApiKey => &[
                Case::NoCredential,
                Case::MalformedToken,
                Case::WrongSignature,
                Case::ExpiredToken,
                Case::UnknownApiKey,
            ],
        };
        for &case in cases {
            let mut needs = if op.sandbox_only { Needs::HELPERS } else { Needs::NOTHING };
            needs.expired = matches!(case, Case::ExpiredToken);
            checks.push(Check::new(format!("auth::{}::{}", op.id, case.name()), needs, move |ctx| {
                Box::pin(run(ctx, op, case))
            }));
        }
    }
    checks
}

async fn run(ctx: &Ctx, op: &'static OpInfo, case: Case) -> anyhow::Result<()> {
    let credential = match case {
        Case::NoCredential | Case::NoneNeeded => Credential::None,
        Case::MalformedToken => Credential::Authorization("Bearer conformance.not-a-jwt".into()),
        Case::WrongSignature => Credential::Bearer(resigned_with_random_key(&ctx.config.token)?),
        Case::ExpiredToken => Credential::Bearer(ctx.config.expired_token.clone().unwrap_or_default()),
        Case::UnknownApiKey => Credential::ApiKey(ctx.unique("unknown-api-key")),
    };
    let api = ctx.main.with_credential(credential);
    let names: Vec<&str> = op.shapes.path.map(|s| s.fields.iter().map(|f| f.name).collect()).unwrap_or_default();
    let path: Vec<(&str, &str)> = names.iter().map(|n| (*n, "conformance-unknown")).collect();
    // Undecodable on purpose (a JSON string as body, no query): authentication must answer first.
    let body = match op.shapes.body {
        Some(_) => Body::Raw { content_type: Some("application/json".into()), bytes: b"\"conformance\"".to_vec() },
        None => Body::None,
    };
    let reply = api.send(op, &path, "", body).await?;
    let (status, tag) = match case {
        Case::NoneNeeded => {
            if !(200..300).contains(&reply.status) {
                bail!("a request without credentials got {}; this operation needs none", reply.describe());
            }
            return Ok(());
        }
        Case::NoCredential | Case::ExpiredToken | Case::UnknownApiKey => (401, "Unauthorized"),
        Case::MalformedToken | Case::WrongSignature => (400, "InvalidJwt"),
    };
    if reply.status != status || reply.tag() != Some(tag) {
        bail!("expected {status} {tag}, got {}", reply.describe());
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
