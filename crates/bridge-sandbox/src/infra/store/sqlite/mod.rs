//! [`SqliteStore`]: the whole store in one SQLite file (`sandbox.db` in the data directory) with versioned
//! migrations, WAL journaling and `synchronous = FULL`: a change is acknowledged only after it is durable, so a
//! crash loses nothing that was acknowledged. Writes go through one connection on one thread (SQLite has one
//! writer at a time, which also keeps feed positions in commit order); reads go through a small pool of reader
//! connections, which WAL lets run beside the writer and each other, each seeing every commit made before it
//! starts. Writes are committed together when they arrive together (group commit, [`group_commit`]):
//! one fsync per batch, each write answered after its batch is durable. Reads run on the blocking thread pool
//! (`tokio::task::spawn_blocking`), writes on the writer's own thread, never on an async worker.

// One file per area of the store, each an `impl Areas<'_, SqliteStore>` block with that area's `Store` methods
// (`store_by_area!` at the end forwards the trait to them); this file holds the connection handling and the
// helpers the areas share (events, bridges, and reading rows through `rows::FromRow`, the one mapping per type).
mod access;
mod addresses;
mod bridges;
mod checkpoint;
mod clocks;
mod deliveries;
mod events;
mod group_commit;
mod health;
mod quotes;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};
use rusqlite_migration::{Migrations, M};

use super::rows::{
    Column, Columns, FromRow, ADDRESS_COLUMNS, ATTEMPT_COLUMNS, BRIDGE_COLUMNS, CLOCK_COLUMNS, DEPOSIT_COLUMNS,
    FEED_COLUMNS, QUOTE_COLUMNS, ROUTING_ADDRESS_COLUMNS,
};
use super::{to_json, BridgeText, NewEvent, StoreError, StoreResult, StoredBridge};
use crate::infra::clock::ProjectClock;
use checkpoint::Checkpointer;
use group_commit::Writer;

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::new(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::new(e)
    }
}

/// The migrations (`migrations/sqlite/`), in the order existing data directories applied them: SQLite's
/// `user_version` counts how many are applied, so the list only grows at its end (the test below pins each step).
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../../../../migrations/sqlite/0001_sandbox.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0002_outbox.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0003_bridge_plan.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0004_routing_addresses.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0005_outbox_lease.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0006_plans_as_json.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0007_beyond_spec.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0008_bridge_version.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0009_feed_time_floor.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0010_projects.sql")),
        M::up(include_str!("../../../../migrations/sqlite/0011_access.sql")),
        // What each delivery attempt took and the start of its answer (issue 27; PostgreSQL migration 0009).
        M::up(include_str!("../../../../migrations/sqlite/0012_delivery_details.sql")),
        // A deposit-address bridge keeps its address's note (issue 28; PostgreSQL migration 0010).
        M::up(include_str!("../../../../migrations/sqlite/0013_bridge_address_note.sql")),
    ])
}

/// Query plans that do not depend on bound values (SQLite's query planner stability guarantee). Without it, a
/// cached statement with a bound `LIMIT` or range is prepared again at every execution (to plan for the new
/// values): measured, a sixth of a feed page's time went to SQLite's parser. Every query here is planned by its
/// indexes alone.
fn stable_plans(conn: &Connection) -> StoreResult<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
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
        migrations().to_latest(&mut conn).map_err(|e| StoreError::new(e).context("migrating the sandbox database"))?;
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

/// Appends events, and an outbox row for each that has a `webhookUrl`, in the caller's transaction.
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
    let mut stmt = c.prepare_cached(
        "INSERT INTO events (id, project, created_ms, body, webhook_url, latest_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut outbox =
        c.prepare_cached("INSERT INTO outbox (event_id, project, url, next_ms) VALUES (?1, ?2, ?3, ?4)")?;
    for e in events {
        stmt.execute(params![e.id, e.project, e.created_ms, to_json(&e.event)?, e.webhook_url, latest])?;
        if let Some(url) = &e.webhook_url {
            outbox.execute(params![e.id, e.project, url, e.created_ms])?;
        }
    }
    Ok(())
}

fn upsert_bridge(c: &Connection, b: &StoredBridge) -> StoreResult<()> {
    let text = BridgeText::of(b)?;
    c.prepare_cached(
        "INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan, address_note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan,
           version = bridges.version + 1",
    )?
    .execute(params![
            b.id,
            b.project,
            text.record,
            text.rejections,
            text.state,
            b.created_ms,
            b.updated_ms,
            b.next_ms,
            b.webhook_url,
            text.plan,
            b.address_note
        ],
    )?;
    Ok(())
}

/// The clock of `project`, if it was seen.
fn read_project_clock(c: &Connection, project: &str) -> StoreResult<Option<ProjectClock>> {
    select_first(c, &format!("SELECT {CLOCK_COLUMNS} FROM projects WHERE id = ?1"), params![project])
}

impl Columns for rusqlite::Row<'_> {
    fn at<T: Column>(&self, index: usize) -> StoreResult<T> {
        Ok(self.get(index)?)
    }
}

/// The rows of a statement, each read as a `T`.
fn collect<T: FromRow>(mut rows: rusqlite::Rows<'_>) -> StoreResult<Vec<T>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(T::from_row(row)?);
    }
    Ok(out)
}

/// The rows of a query (its statement cached on the connection), each read as a `T`.
fn select<T: FromRow>(c: &Connection, sql: &str, params: impl rusqlite::Params) -> StoreResult<Vec<T>> {
    collect(c.prepare_cached(sql)?.query(params)?)
}

/// The first row of a query (its statement cached on the connection), read as a `T`, if there is one.
fn select_first<T: FromRow>(c: &Connection, sql: &str, params: impl rusqlite::Params) -> StoreResult<Option<T>> {
    let mut stmt = c.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    rows.next()?.map(T::from_row).transpose()
}

crate::infra::store::store_by_area!(SqliteStore);

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    /// The schema after each migration, in order: a data directory made by an earlier version is at one of these
    /// steps (its `user_version` counts the migrations applied), so the list may only grow at its end and no step
    /// may change. The snapshot was taken from the list as it was before the migrations moved to `.sql` files.
    #[test]
    fn every_migration_step_keeps_its_schema() {
        let migrations = super::migrations();
        let mut conn = Connection::open_in_memory().unwrap();
        let mut steps = Vec::new();
        for version in 1..=13 {
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
        assert_eq!(migrations.pending_migrations(&conn).unwrap(), 0, "a migration past the 13th: add a step here");
        insta::assert_snapshot!(steps.join("\n\n"));
    }
}
