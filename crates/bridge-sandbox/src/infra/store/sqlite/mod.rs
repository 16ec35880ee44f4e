//! [`SqliteStore`]: the whole store in one SQLite file (`sandbox.db` in the data directory) with versioned
//! migrations, WAL journaling and `synchronous = FULL`: a change is acknowledged only after it is durable, so a
//! crash loses nothing that was acknowledged. Writes go through one connection on one thread (SQLite has one
//! writer at a time, which also keeps feed positions in commit order); reads go through a small pool of reader
//! connections, which WAL lets run beside the writer and each other, each seeing every commit made before it
//! starts. Writes are committed together when they arrive together (group commit, [`group_commit`]):
//! one fsync per batch, each write answered after its batch is durable. Reads run on the blocking thread pool
//! (`tokio::task::spawn_blocking`), writes on the writer's own thread, never on an async worker.

// One file per area of the store, each implementing that area's trait (`super::<area>`) for `SqliteStore` with
// the area's SQL (written once for both backends, in `super::<area>`); this file holds the connection handling
// and the helpers the areas share (running a `Query`, appending events, writing a bridge).
mod access;
mod addresses;
mod bridges;
mod checkpoint;
mod clocks;
mod deliveries;
mod events;
mod faults;
mod group_commit;
mod health;
mod quotes;
mod retention;
mod sessions;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};

use super::rows::{Columns, FromRow};
use super::sql::{sql, Query, Sql};
use super::{to_json, NewEvent, StoreError, StoreResult, StoredBridge};
use checkpoint::Checkpointer;
use group_commit::Writer;

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::new(e)
    }
}

/// Statements kept prepared per connection: every statement of the store fits, so none is prepared twice.
const STATEMENT_CACHE: usize = 128;

/// Query plans that do not depend on bound values (SQLite's query planner stability guarantee). Without it, a
/// cached statement with a bound `LIMIT` or range is prepared again at every execution (to plan for the new
/// values): measured, a sixth of a feed page's time went to SQLite's parser. Every query here is planned by its
/// indexes alone.
fn stable_plans(conn: &Connection) -> StoreResult<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(())
}

/// All state in one SQLite file.
pub struct SqliteStore {
    writer: Writer,
    _checkpointer: Checkpointer,
    readers: Arc<Vec<Mutex<Connection>>>,
    next_reader: std::sync::atomic::AtomicUsize,
}

/// Reader connections: one per core the sandbox is likely to have, and a few more for reads that wait on disk.
const READERS: usize = 4;

impl SqliteStore {
    /// Opens (creating and migrating) `dir/sandbox.db`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::new(e).context(format!("creating {}", dir.display())))?;
        let path = dir.join("sandbox.db");
        let mut conn =
            Connection::open(&path).map_err(|e| StoreError::new(e).context(format!("opening {}", path.display())))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Checkpoints run on their own thread (`Checkpointer`), not inside a commit.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        stable_plans(&conn)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        super::migrations::sqlite()
            .to_latest(&mut conn)
            .map_err(|e| StoreError::new(e).context("migrating the sandbox database"))?;
        let readers = (0..READERS)
            .map(|_| {
                let reader = Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(|e| StoreError::new(e).context(format!("opening {} to read", path.display())))?;
                reader.busy_timeout(std::time::Duration::from_secs(5))?;
                stable_plans(&reader)?;
                Ok(Mutex::new(reader))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Self {
            _checkpointer: Checkpointer::start(&path)?,
            writer: Writer::start(conn)?,
            readers: Arc::new(readers),
            next_reader: Default::default(),
        })
    }

    /// Runs the read `f` with a reader connection (a free one if any, else the next in turn) on the blocking
    /// thread pool.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let readers = self.readers.clone();
        let start = self.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::task::spawn_blocking(move || {
            let n = readers.len();
            let free = (0..n).find_map(|i| readers[(start + i) % n].try_lock().ok());
            let reader = match free {
                Some(reader) => reader,
                None => readers[start % n].lock().unwrap_or_else(|p| p.into_inner()),
            };
            f(&reader)
        })
        .await
        .map_err(|e| StoreError::new(e).context("store task"))?
    }

    /// Runs the read `f` with a free reader connection right here, on the calling (async) thread, or like
    /// [`Self::read`] when none is free. For reads that an index bounds (one row by key, a page from a cursor):
    /// handing them to another thread costs more than they do (thread wake-ups were most of a bridge read's
    /// time), and they hold the thread for microseconds.
    async fn read_now<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let start = self.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let n = self.readers.len();
        let f = {
            let free = (0..n).find_map(|i| self.readers[(start + i) % n].try_lock().ok());
            match free {
                Some(reader) => return f(&reader),
                None => f,
            }
        };
        self.read(f).await
    }

    /// Runs the write `f` in the writer's next batch; answers once the batch is durable.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.writer.run(f).await
    }
}

/// Appends events, and an outbox row for each that has a `webhookUrl`, in the caller's transaction. The feed
/// positions are `events.seq` (`AUTOINCREMENT`), taken in commit order since SQLite has one writer.
fn insert_events(c: &Connection, events: &[NewEvent]) -> StoreResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    // The watermark of these positions: the latest time of the feed so far, these events included.
    let before: Option<i64> = c
        .prepare_cached("SELECT latest_ms FROM events ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?
        .flatten();
    let newest = events.iter().map(|e| e.created_ms).max().unwrap_or(i64::MIN);
    let latest = before.map_or(newest, |b| b.max(newest));
    static INSERT: Sql = sql!(
        "INSERT INTO events (id, project, created_ms, body, webhook_url, latest_ms, stored_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, wall_ms())"
    );
    let mut stmt = c.prepare_cached(INSERT.sqlite())?;
    for e in events {
        stmt.execute(params![e.id, e.project, e.created_ms, to_json(&e.event)?, e.webhook_url, latest])?;
        if let Some(outbox) = super::events::outbox_row(e) {
            execute(c, &outbox)?;
        }
    }
    Ok(())
}

/// Inserts a bridge, or saves it over the stored one ([`super::bridges::saved_values`]).
fn upsert_bridge(c: &Connection, b: &StoredBridge) -> StoreResult<()> {
    static UPSERT: Sql = sql!(
        "INSERT INTO bridges (id, record, rejections, state, updated_ms, next_ms, plan, ended, project, created_ms,
           webhook_url, address_note, stored_ms)
         VALUES (?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, wall_ms())
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan, ended = excluded.ended,
           stored_ms = excluded.stored_ms, version = bridges.version + 1"
    );
    c.prepare_cached(UPSERT.sqlite())?.execute(rusqlite::params_from_iter(super::bridges::saved_values(b)?))?;
    Ok(())
}

impl Columns for rusqlite::Row<'_> {
    fn at<T: super::rows::Column>(&self, index: usize) -> StoreResult<T> {
        Ok(self.get(index)?)
    }
}

/// Runs a statement (prepared once per connection): how many rows it changed.
fn execute(c: &Connection, q: &Query) -> StoreResult<usize> {
    Ok(c.prepare_cached(&q.text.sqlite())?.execute(rusqlite::params_from_iter(&q.args))?)
}

/// The rows of a query (prepared once per connection), each read as a `T`.
fn select<T: FromRow>(c: &Connection, q: &Query) -> StoreResult<Vec<T>> {
    let mut stmt = c.prepare_cached(&q.text.sqlite())?;
    let mut rows = stmt.query(rusqlite::params_from_iter(&q.args))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(T::from_row(row)?);
    }
    Ok(out)
}

/// The first row of a query (prepared once per connection), read as a `T`, if there is one.
fn select_first<T: FromRow>(c: &Connection, q: &Query) -> StoreResult<Option<T>> {
    let mut stmt = c.prepare_cached(&q.text.sqlite())?;
    let mut rows = stmt.query(rusqlite::params_from_iter(&q.args))?;
    rows.next()?.map(T::from_row).transpose()
}

/// The one row of a query, read as a `T`.
fn select_one<T: FromRow>(c: &Connection, q: &Query) -> StoreResult<T> {
    select_first(c, q)?.ok_or_else(|| StoreError::new(anyhow::anyhow!("a query returned no row")))
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    /// The schema after each migration, in order: a data directory made by an earlier version is at one of these
    /// steps (its `user_version` counts the migrations applied), so the list may only grow at its end and no step
    /// may change. The snapshot was taken from the list as it was before the migrations moved to `.sql` files.
    #[test]
    fn every_migration_step_keeps_its_schema() {
        let migrations = crate::infra::store::migrations::sqlite();
        let mut conn = Connection::open_in_memory().unwrap();
        let mut steps = Vec::new();
        for version in 1..=crate::infra::store::migrations::last_version() as usize {
            migrations.to_version(&mut conn, version).unwrap();
            let mut stmt = conn
                .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
                .unwrap();
            let schema: Vec<String> = stmt
                .query_map([], |r| {
                    let sql: String = r.get(3)?;
                    let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
                    Ok(format!(
                        "{} {} on {}: {sql}",
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?
                    ))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            steps.push(format!("-- after migration {version}\n{}", schema.join("\n")));
        }
        assert_eq!(migrations.pending_migrations(&conn).unwrap(), 0);
        insta::assert_snapshot!(steps.join("\n\n"));
    }
}
