//! API keys (a production endpoint beyond the spec): `bridge-sandbox api-key --project ID` prints a key,
//! `POST /authentication/auth/apiKey` exchanges it for a bearer JWT, and the event feed accepts it as the legacy
//! `x-api-key`. A key is `sbx_<project, base64url>.<HMAC-SHA256 of the project under the data directory's JWT
//! secret, hex>`: nothing is stored, a key names its project, and only a sandbox with the same secret accepts it.

use std::time::Duration;

use bridge_server::{AuthFailure, Authenticator, Caller, JwtAuthenticator};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a JWT from the exchange is valid (production does not publish its lifetime; clients renew before
/// `exp`, which the token carries).
pub const EXCHANGED_JWT_TTL: Duration = Duration::from_secs(3600);
const PREFIX: &str = "sbx_";

/// Makes and checks the API keys of one sandbox (its JWT secret).
#[derive(Clone)]
pub struct ApiKeys {
    secret: Vec<u8>,
}

impl ApiKeys {
    pub fn new(jwt_secret: &[u8]) -> Self {
        Self { secret: jwt_secret.to_vec() }
    }

    fn mac(&self, project: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes a key of any length");
        mac.update(b"bridge-sandbox api key\0");
        mac.update(project.as_bytes());
        mac
    }

    /// The API key of `project`.
    pub fn key(&self, project: &str) -> String {
        let tag = hex::encode(self.mac(project).finalize().into_bytes());
        format!("{PREFIX}{}.{tag}", data_encoding::BASE64URL_NOPAD.encode(project.as_bytes()))
    }

    /// The project of a key this sandbox made, or `None`.
    pub fn project_of(&self, key: &str) -> Option<String> {
        let (project, tag) = key.strip_prefix(PREFIX)?.split_once('.')?;
        let project = String::from_utf8(data_encoding::BASE64URL_NOPAD.decode(project.as_bytes()).ok()?).ok()?;
        let tag = hex::decode(tag).ok()?;
        // Constant-time comparison (`verify_slice`).
        self.mac(&project).verify_slice(&tag).ok()?;
        (!project.is_empty()).then_some(project)
    }
}

/// The sandbox's authenticator: bearer JWTs as [`JwtAuthenticator`] verifies them, and the sandbox's API keys as
/// the legacy key (the operations whose security allows one: the event feed).
#[derive(Clone)]
pub struct SandboxAuthenticator {
    pub jwt: JwtAuthenticator,
    pub keys: ApiKeys,
}

impl Authenticator for SandboxAuthenticator {
    fn verify_bearer(&self, token: &str) -> Result<Caller, AuthFailure> {
        self.jwt.verify_bearer(token)
    }

    fn verify_api_key(&self, key: &str) -> Result<Caller, AuthFailure> {
        self.keys.project_of(key).map(Caller::new).ok_or_else(|| AuthFailure::Rejected("unknown API key".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_its_project_and_only_its_secret_accepts_it() {
        let keys = ApiKeys::new(b"secret one");
        for project in ["p", "my_project", "with spaces_and_underscores", "ünïcode"] {
            let key = keys.key(project);
            assert_eq!(keys.project_of(&key).as_deref(), Some(project));
            assert_eq!(ApiKeys::new(b"secret two").project_of(&key), None);
            let mut forged = key.clone();
            forged.pop();
            forged.push(if key.ends_with('0') { '1' } else { '0' });
            assert_eq!(keys.project_of(&forged), None, "{forged}");
        }
        assert_eq!(keys.project_of("sbx_"), None);
        assert_eq!(keys.project_of("not a key"), None);
    }
}
