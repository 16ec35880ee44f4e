//! The sandbox's webhook signing key and ids key, made on first start and kept in the data directory:
//! `keys/webhook-rsa.pem` (the RSA key that signs webhook deliveries; its public half is served by
//! `GET /webhook/public-key`) and `keys/ids.key` (the key of ids and feed page tokens, 32 random bytes in hex:
//! [`crate::domain::ids`]). On PostgreSQL they are kept in the database instead ([`Keys::shared`]), so every
//! instance on one database signs with the same key, and makes ids and page tokens with the same key (a page token
//! one instance hands out names the same position on every other, and after a restart). The JWT signing keys are in the store (`crate::access::signing`); the one JWT secret of earlier versions
//! (`keys/jwt-hs256.secret`, or the database's `jwt-hs256-secret`) is only read, to carry it over
//! ([`legacy_jwt_secret`], [`legacy_jwt_secret_shared`]).

use std::path::{Path, PathBuf};

use anyhow::Context;
use bridge_contract::webhook::WebhookSigner;

use crate::domain::ids::Ids;
use crate::infra::store::PgStore;

#[derive(Clone)]
pub struct Keys {
    pub webhook: std::sync::Arc<WebhookSigner>,
    /// The key of ids and page tokens ([`crate::domain::ids::Ids::from_key`]).
    pub ids: [u8; 32],
}

/// An ids key as kept: 64 hex digits.
fn parse_ids_key(text: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = hex::decode(text.trim()).context("the ids key is not hex")?;
    bytes.try_into().map_err(|_| anyhow::anyhow!("the ids key is not 32 bytes"))
}

/// The JWT secret an earlier version kept in `data_dir`, if any.
pub fn legacy_jwt_secret(data_dir: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    let path = data_dir.join("keys").join("jwt-hs256.secret");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(hex::decode(text.trim()).with_context(|| format!("reading {}", path.display()))?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The JWT secret an earlier version kept in a PostgreSQL database, if any.
pub async fn legacy_jwt_secret_shared(store: &PgStore) -> anyhow::Result<Option<Vec<u8>>> {
    match store.shared_value(JWT_SECRET).await? {
        Some(text) => Ok(Some(hex::decode(text.trim()).context("reading the stored JWT secret")?)),
        None => Ok(None),
    }
}

impl Keys {
    /// Loads the webhook key of `data_dir`, making it if it is missing.
    pub fn load_or_create(data_dir: &Path) -> anyhow::Result<Self> {
        let dir = data_dir.join("keys");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let pem_path = dir.join("webhook-rsa.pem");
        let webhook = match std::fs::read_to_string(&pem_path) {
            Ok(pem) => {
                WebhookSigner::from_pem(&pem).map_err(|e| anyhow::anyhow!("reading {}: {e}", pem_path.display()))?
            }
            Err(_) => {
                let signer = WebhookSigner::generate().map_err(|e| anyhow::anyhow!("making the webhook key: {e}"))?;
                let pem = signer.private_key_pem().map_err(|e| anyhow::anyhow!("{e}"))?;
                write_private(&pem_path, &pem)?;
                tracing::info!(path = %pem_path.display(), "made a new webhook signing key");
                signer
            }
        };
        let ids_path = dir.join("ids.key");
        let ids = match std::fs::read_to_string(&ids_path) {
            Ok(text) => parse_ids_key(&text).with_context(|| format!("reading {}", ids_path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = Ids::new_key();
                write_private(&ids_path, &hex::encode(key))?;
                tracing::info!(path = %ids_path.display(), "made a new ids key");
                key
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", ids_path.display())),
        };
        Ok(Self { webhook: std::sync::Arc::new(webhook), ids })
    }
}

impl Keys {
    /// The webhook key kept in a PostgreSQL database: the first instance to start makes and keeps it, every other
    /// one (and the `bridge-sandbox` commands with `--database-url`) reads it.
    pub async fn shared(store: &PgStore) -> anyhow::Result<Self> {
        let pem = match store.shared_value(WEBHOOK_KEY).await? {
            Some(pem) => pem,
            None => {
                let signer = WebhookSigner::generate().map_err(|e| anyhow::anyhow!("making the webhook key: {e}"))?;
                let pem = signer.private_key_pem().map_err(|e| anyhow::anyhow!("{e}"))?;
                store.keep_first(WEBHOOK_KEY, &pem).await?
            }
        };
        let webhook =
            WebhookSigner::from_pem(&pem).map_err(|e| anyhow::anyhow!("reading the stored webhook key: {e}"))?;
        let ids = match store.shared_value(IDS_KEY).await? {
            Some(text) => text,
            None => store.keep_first(IDS_KEY, &hex::encode(Ids::new_key())).await?,
        };
        let ids = parse_ids_key(&ids).context("reading the stored ids key")?;
        Ok(Self { webhook: std::sync::Arc::new(webhook), ids })
    }
}

/// Names of the keys in the database (the JWT secret: of earlier versions).
const JWT_SECRET: &str = "jwt-hs256-secret";
const WEBHOOK_KEY: &str = "webhook-rsa-pem";
const IDS_KEY: &str = "ids-key";

fn write_private(path: &PathBuf, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}
