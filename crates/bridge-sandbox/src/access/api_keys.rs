//! API keys (a production endpoint beyond the spec): `bridge-sandbox api-key --project ID` prints a new key,
//! `POST /authentication/auth/apiKey` exchanges it for a bearer JWT, and the event feed accepts it as the legacy
//! `x-api-key`. What a key is, here; who may use one is [`crate::access`].
//!
//! A key is `sbx_` and 43 base64url characters: 32 bytes from the operating system's random generator. It is
//! shown once, when it is made; the store keeps only its SHA-256 ([`hash`]) beside its id (`key_` and 16 hex
//! digits, which lists show and `api-key revoke` takes), its project, its name and its times. A plain SHA-256
//! suffices because the secret has 256 bits of entropy: nobody can guess their way to a key from its hash, so the
//! slow, salted hashes made for passwords (which people choose) add nothing but cost per request.
//!
//! Keys of earlier versions ([`legacy`]) were `sbx_<project, base64url>.<HMAC-SHA256 of the project under the
//! JWT secret, hex>` and were stored nowhere. They are accepted until revoked: the first time one is used (or
//! named by `api-key revoke`), the sandbox checks it against the secret of that earlier version (the signing key
//! carried over, `unlabelled`) and keeps it as an ordinary record.

use std::time::Duration;

use anyhow::Context as _;
use rand::TryRngCore as _;
use sha2::{Digest, Sha256};

use crate::infra::store::StoredApiKey;

/// How long a JWT from the exchange is valid (production does not publish its lifetime; clients renew before
/// `exp`, which the token carries).
pub const EXCHANGED_JWT_TTL: Duration = Duration::from_secs(3600);

/// What every key begins with (also those of earlier versions): the sandbox's credential form, which logs,
/// recordings, reports and error answers recognise and redact ([`bridge_server::credential`]).
pub const PREFIX: &str = bridge_server::credential::PREFIX;

/// What every key id begins with.
pub const ID_PREFIX: &str = "key_";

/// A key just made: its text (shown once) and its record (what the store keeps).
#[derive(Debug, Clone)]
pub struct NewKey {
    pub text: String,
    pub record: StoredApiKey,
}

/// `n` bytes from the operating system's random generator.
pub fn random_bytes(n: usize) -> anyhow::Result<Vec<u8>> {
    let mut bytes = vec![0u8; n];
    rand::rngs::OsRng.try_fill_bytes(&mut bytes).context("reading the operating system's random generator")?;
    Ok(bytes)
}

/// A new key of `project` named `name`, made at `now_ms` (wall clock).
pub fn generate(project: &str, name: &str, now_ms: i64) -> anyhow::Result<NewKey> {
    let text = format!("{PREFIX}{}", data_encoding::BASE64URL_NOPAD.encode(&random_bytes(32)?));
    let id = format!("{ID_PREFIX}{}", hex::encode(random_bytes(8)?));
    let record = StoredApiKey {
        id,
        project: project.to_owned(),
        name: name.to_owned(),
        hash: hash(&text),
        created_ms: now_ms,
        last_used_ms: None,
        revoked_ms: None,
    };
    Ok(NewKey { text, record })
}

/// What the store keeps of a key: the SHA-256 of its text, hex.
pub fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Whether `text` names a key by its id (`key_…`) rather than being a key.
pub fn is_id(text: &str) -> bool {
    text.starts_with(ID_PREFIX)
}

/// The keys of earlier versions: an HMAC of the project under the JWT secret of that version.
pub mod legacy {
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    use super::{hash, ID_PREFIX, PREFIX};
    use crate::infra::store::StoredApiKey;

    fn mac(secret: &[u8], project: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
        mac.update(b"bridge-sandbox api key\0");
        mac.update(project.as_bytes());
        mac
    }

    /// The key an earlier version printed for `project` under `secret`.
    pub fn key(secret: &[u8], project: &str) -> String {
        let tag = hex::encode(mac(secret, project).finalize().into_bytes());
        format!("{PREFIX}{}.{tag}", data_encoding::BASE64URL_NOPAD.encode(project.as_bytes()))
    }

    /// The project of a key an earlier version made under `secret`, or `None`.
    pub fn project_of(secret: &[u8], key: &str) -> Option<String> {
        let (project, tag) = key.strip_prefix(PREFIX)?.split_once('.')?;
        let project = String::from_utf8(data_encoding::BASE64URL_NOPAD.decode(project.as_bytes()).ok()?).ok()?;
        let tag = hex::decode(tag).ok()?;
        // Constant-time comparison (`verify_slice`).
        mac(secret, &project).verify_slice(&tag).ok()?;
        (!project.is_empty()).then_some(project)
    }

    /// The record such a key becomes when it is first seen at `now_ms`: its id comes from its hash, so instances
    /// that see it at once make the same record.
    pub fn record(key: &str, project: &str, now_ms: i64) -> StoredApiKey {
        let hash = hash(key);
        StoredApiKey {
            id: format!("{ID_PREFIX}{}", &hash[..16]),
            project: project.to_owned(),
            name: "key of an earlier version".into(),
            hash,
            created_ms: now_ms,
            last_used_ms: None,
            revoked_ms: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_keys_are_random_prefixed_and_stored_as_their_hash() {
        let a = generate("p", "ci", 1).unwrap();
        let b = generate("p", "ci", 1).unwrap();
        assert_ne!(a.text, b.text);
        assert_ne!(a.record.id, b.record.id);
        for key in [&a, &b] {
            assert!(key.text.starts_with(PREFIX) && key.text.len() == PREFIX.len() + 43, "{}", key.text);
            assert!(!key.text.contains('.'), "never mistaken for a key of an earlier version");
            assert_eq!(key.record.hash, hash(&key.text));
            assert!(!key.record.hash.contains(&key.text[PREFIX.len()..]));
            assert!(is_id(&key.record.id) && !is_id(&key.text));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 64, failure_persistence: None, ..Default::default() })]

        /// Every credential the sandbox issues has a form [`bridge_server::credential`] recognises: keys, keys of
        /// earlier versions (any project, any secret), and the JWTs it signs (any project, features, key id,
        /// lifetime, exchanged from a key or not). Dashboard session ids and CSRF tokens: `dashboard::session`.
        #[test]
        fn every_issued_credential_is_recognised_by_its_form(
            project in ".{1,64}",
            secret in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
            post_bridge_data in proptest::prelude::any::<bool>(),
            kid in 1i64..10_000,
            ttl in 1u64..10_000_000,
            exchanged in proptest::prelude::any::<bool>(),
        ) {
            use bridge_server::credential::is_credential;
            let key = generate(&project, "name", 1).unwrap();
            proptest::prop_assert!(is_credential(&key.text), "{}", key.text);
            let legacy = legacy::key(&secret, &project);
            proptest::prop_assert!(is_credential(&legacy), "{}", legacy);
            let signing = crate::infra::store::access::next_signing_key(kid, &secret, 0);
            let mut claims = crate::access::signing::TokenClaims::new(&project, post_bridge_data, 1_700_000_000_000, Duration::from_secs(ttl));
            if exchanged {
                claims = claims.from_api_key(&key.record.id);
            }
            let jwt = crate::access::signing::sign(&signing, &claims).unwrap();
            proptest::prop_assert!(is_credential(&jwt), "{}", jwt);
        }
    }

    #[test]
    fn a_legacy_key_names_its_project_and_only_its_secret_accepts_it() {
        for project in ["p", "my_project", "with spaces_and_underscores", "ünïcode"] {
            let key = legacy::key(b"secret one", project);
            assert_eq!(legacy::project_of(b"secret one", &key).as_deref(), Some(project));
            assert_eq!(legacy::project_of(b"secret two", &key), None);
            let mut forged = key.clone();
            forged.pop();
            forged.push(if key.ends_with('0') { '1' } else { '0' });
            assert_eq!(legacy::project_of(b"secret one", &forged), None, "{forged}");
            assert_eq!(legacy::record(&key, project, 5), legacy::record(&key, project, 5), "the same record");
        }
        assert_eq!(legacy::project_of(b"secret one", "sbx_"), None);
        assert_eq!(legacy::project_of(b"secret one", "not a key"), None);
    }
}
