//! [`Checkpointer`]: copies the SQLite write-ahead log back into the database file on a thread of its own.
//!
//! By default SQLite checkpoints inside the commit that fills the log past 1,000 pages, so that one commit (and
//! every write of its group, [`super::group_commit`]) also waits for the database file's writes and fsync. The
//! writer turns that off (`wal_autocheckpoint = 0`) and this thread runs a `PASSIVE` checkpoint on its own
//! connection every [`INTERVAL`], beside the writer and the readers, blocking neither. Durability is unchanged:
//! a commit is durable once its log frames are synced, checkpointed or not; a crash before a checkpoint replays
//! the log on the next open.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

use crate::infra::store::{StoreError, StoreResult};

/// How often the log is copied back.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// The checkpointing thread; dropping this stops it (after a last checkpoint).
pub struct Checkpointer {
    _stop: mpsc::Sender<()>,
}

impl Checkpointer {
    /// Starts checkpointing the database at `path` (already in WAL mode).
    pub fn start(path: &Path) -> StoreResult<Self> {
        let conn = Connection::open(path)
            .map_err(|e| StoreError::new(e).context(format!("opening {} to checkpoint", path.display())))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || loop {
                let last = matches!(stopped.recv_timeout(INTERVAL), Err(mpsc::RecvTimeoutError::Disconnected));
                if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    tracing::warn!(error = %e, "checkpointing the write-ahead log");
                }
                if last {
                    break;
                }
            })
            .map_err(|e| StoreError::new(e).context("starting the checkpoint thread"))?;
        Ok(Self { _stop: stop })
    }
}
