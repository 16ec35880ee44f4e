//! The sandbox's signing keys, made on first start and kept in the data directory:
//! `keys/jwt-hs256.secret` (the HS256 secret that project tokens are signed with) and
//! `keys/webhook-rsa.pem` (the RSA key that signs webhook deliveries; its public half is served by
//! `GET /webhook/public-key`). On PostgreSQL they are kept in the database instead ([`Keys::shared`]), so every
//! instance on one database accepts the same tokens and signs with the same key.

use std::path::{Path, PathBuf};

use anyhow::Context;
use bridge_client::webhook::WebhookSigner;
use rand::RngCore;

use crate::store::PgStore;

#[derive(Clone)]
pub struct Keys {
    pub jwt_secret: Vec<u8>,
    pub webhook: std::sync::Arc<WebhookSigner>,
}

impl Keys {
    /// Loads the keys of `data_dir`, making any that are missing.
    pub fn load_or_create(data_dir: &Path) -> anyhow::Result<Self> {
        let dir = data_dir.join("keys");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let secret_path = dir.join("jwt-hs256.secret");
        let jwt_secret = match std::fs::read_to_string(&secret_path) {
            Ok(text) => hex::decode(text.trim()).context("reading the JWT secret")?,
            Err(_) => {
                let mut secret = vec![0u8; 32];
                rand::rng().fill_bytes(&mut secret);
                write_private(&secret_path, &hex::encode(&secret))?;
                tracing::info!(path = %secret_path.display(), "made a new JWT signing secret");
                secret
            }
        };
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
        Ok(Self { jwt_secret, webhook: std::sync::Arc::new(webhook) })
    }
}

impl Keys {
    /// The keys kept in a PostgreSQL database: the first instance to start makes and keeps them, every other one
    /// (and `bridge-sandbox token --database-url`) reads them.
    pub async fn shared(store: &PgStore) -> anyhow::Result<Self> {
        let jwt_hex = match store.shared_value(JWT_SECRET).await? {
            Some(hex) => hex,
            None => {
                let mut secret = vec![0u8; 32];
                rand::rng().fill_bytes(&mut secret);
                store.keep_first(JWT_SECRET, &hex::encode(&secret)).await?
            }
        };
        let jwt_secret = hex::decode(jwt_hex.trim()).context("reading the JWT secret")?;
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
        Ok(Self { jwt_secret, webhook: std::sync::Arc::new(webhook) })
    }
}

/// Names of the keys in the database.
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
