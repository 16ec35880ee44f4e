//! The sandbox's webhook signing key, made on first start and kept in the data directory: `keys/webhook-rsa.pem`
//! (the RSA key that signs webhook deliveries; its public half is served by `GET /webhook/public-key`). On
//! PostgreSQL it is kept in the database instead ([`Keys::shared`]), so every instance on one database signs with
//! the same key. The JWT signing keys are in the store (`crate::access::signing`); the one JWT secret of earlier versions
//! (`keys/jwt-hs256.secret`, or the database's `jwt-hs256-secret`) is only read, to carry it over
//! ([`legacy_jwt_secret`], [`legacy_jwt_secret_shared`]).

use std::path::{Path, PathBuf};

use anyhow::Context;
use bridge_client::webhook::WebhookSigner;

use crate::infra::store::PgStore;

#[derive(Clone)]
pub struct Keys {
    pub webhook: std::sync::Arc<WebhookSigner>,
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
        Ok(Self { webhook: std::sync::Arc::new(webhook) })
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
        Ok(Self { webhook: std::sync::Arc::new(webhook) })
    }
}

/// Names of the keys in the database (the JWT secret: of earlier versions).
const JWT_SECRET: &str = "jwt-hs256-secret";
const WEBHOOK_KEY: &str = "webhook-rsa-pem";

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
