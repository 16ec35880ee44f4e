//! [`PgStore`]: the whole store on a PostgreSQL server, through sqlx's connection pool, with versioned migrations
//! (`migrations/postgres/`, embedded with `sqlx::migrate!`; concurrent starts wait on sqlx's migration lock).
//! Several sandbox instances may share one database: counters are rows updated atomically, feed positions come
//! from the one-row `feed_head` in commit order (the module docs of [`crate::infra::store`]), and due deliveries are taken
//! with `FOR UPDATE SKIP LOCKED` and a wall-clock lease, so each is in flight at one instance at a time and a dead
//! instance's lease runs out and the delivery is retried. JSON is kept as `TEXT`, byte for byte.

// One file per area of the store, each implementing that area's trait (`super::<area>`) for `PgStore` with the
// area's SQL (written once for both backends, in `super::<area>`); this file holds the connection handling and
// the helpers the areas share (running a `Query`, appending events in commit order, writing a bridge).
mod access;
mod addresses;
mod bridges;
mod clocks;
mod deliveries;
mod events;
mod faults;
mod health;
mod quotes;
mod rate_budgets;
mod retention;
mod sessions;

use sqlx_core::arguments::Arguments;
use sqlx_core::migrate::{Migration, MigrationSource, Migrator};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::{PgArguments, PgExecutor, PgPool, PgPoolOptions, PgRow, Postgres};

pub use rate_budgets::{Lease, LeaseAsk, MICROS};

use super::rows::{Column, Columns, FromRow};
use super::sql::{sql, Arg, Query, Sql};
use super::{to_json, NewEvent, StoreError, StoreResult, StoredBridge};

type Tx = sqlx_core::transaction::Transaction<'static, Postgres>;

/// Commits, timing the commit ([`crate::infra::telemetry::STORE_COMMIT_DURATION`]).
async fn commit(tx: Tx) -> StoreResult<()> {
    let started = std::time::Instant::now();
    tx.commit().await?;
    metrics::histogram!(crate::infra::telemetry::STORE_COMMIT_DURATION, "backend" => "postgres")
        .record(started.elapsed().as_secs_f64());
    Ok(())
}

impl From<sqlx_core::Error> for StoreError {
    fn from(e: sqlx_core::Error) -> Self {
        StoreError::new(e)
    }
}

/// The migrations of the plan that PostgreSQL has (`super::migrations`), embedded in the binary. sqlx keeps the
/// applied versions and their checksums in `_sqlx_migrations`, refuses a database whose applied migrations were
/// changed, and holds an advisory lock while migrating, so instances starting together migrate once.
#[derive(Debug)]
struct Migrations;

type Resolved =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<Migration>, sqlx_core::error::BoxDynError>> + Send>>;

impl MigrationSource<'static> for Migrations {
    fn resolve(self) -> Resolved {
        Box::pin(async { Ok(super::migrations::postgres()) })
    }
}

/// How long a lifecycle pass holds the bridges it took (real time).
const BRIDGE_LEASE_MS: i64 = 30_000;

/// Connections per instance: enough for concurrent requests, the lifecycle pass and the deliverer.
const POOL_SIZE: u32 = 16;

/// All state in one PostgreSQL database, shared by every instance that connects to it.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// This handle's name in the leases it takes (`leased_by`): random, one per connect.
    instance: std::sync::Arc<str>,
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) and migrates the database to the latest
    /// version.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(std::time::Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|e| StoreError::new(e).context("connecting to PostgreSQL"))?;
        super::migrations::renumber_recorded(&pool)
            .await
            .map_err(|e| e.context("renumbering the recorded migrations to the migration plan"))?;
        let migrator = Migrator::new(Migrations).await.map_err(|e| StoreError::new(e).context("the migrations"))?;
        migrator.run(&pool).await.map_err(|e| StoreError::new(e).context("migrating the sandbox database"))?;
        let instance = format!("{:016x}", rand::random::<u64>()).into();
        Ok(Self { pool, instance })
    }

    /// The value kept under `name`, if any.
    pub async fn shared_value(&self, name: &str) -> StoreResult<Option<String>> {
        Ok(query_scalar("SELECT value FROM meta WHERE key = $1")
            .bind(format!("shared:{name}"))
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Keeps `candidate` under `name` unless a value is kept already, and returns the kept value: of instances
    /// starting at once, the first to commit stores its candidate, and every one of them gets that.
    pub async fn keep_first(&self, name: &str, candidate: &str) -> StoreResult<String> {
        let key = format!("shared:{name}");
        query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
            .bind(&key)
            .bind(candidate)
            .execute(&self.pool)
            .await?;
        Ok(query_scalar("SELECT value FROM meta WHERE key = $1").bind(&key).fetch_one(&self.pool).await?)
    }
}

/// Appends events (and an outbox row for each that has a `webhookUrl`) as the last step of the transaction, and
/// commits it: the positions come from `feed_head`, whose row lock is held until the commit, so positions are
/// given out in commit order.
async fn commit_with_events(mut tx: Tx, events: &[NewEvent]) -> StoreResult<()> {
    if events.is_empty() {
        return commit(tx).await;
    }
    let newest = events.iter().map(|e| e.created_ms).max().unwrap_or(i64::MIN);
    let (last, latest): (i64, i64) = sqlx_core::query_as::query_as(
        "UPDATE feed_head SET position = position + $1, latest_ms = GREATEST(latest_ms, $2)
         RETURNING position, latest_ms",
    )
    .bind(events.len() as i64)
    .bind(newest)
    .fetch_one(&mut *tx)
    .await?;
    let first = last - events.len() as i64 + 1;
    for (i, e) in events.iter().enumerate() {
        static INSERT: Sql = sql!(
            "INSERT INTO events (seq, id, project, created_ms, body, webhook_url, latest_ms, stored_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, wall_ms())"
        );
        query(INSERT.postgres())
            .bind(first + i as i64)
            .bind(&e.id)
            .bind(&e.project)
            .bind(e.created_ms)
            .bind(to_json(&e.event)?)
            .bind(&e.webhook_url)
            .bind(latest)
            .execute(&mut *tx)
            .await?;
        if let Some(outbox) = super::events::outbox_row(e) {
            execute(&mut *tx, outbox).await?;
        }
    }
    commit(tx).await
}

/// Inserts a bridge, or saves it over the stored one and ends its lease ([`super::bridges::saved_values`]).
async fn upsert_bridge(tx: &mut Tx, b: &StoredBridge) -> StoreResult<()> {
    static UPSERT: Sql = sql!(
        "INSERT INTO bridges (id, record, rejections, state, updated_ms, next_ms, plan, ended, project, created_ms,
           webhook_url, address_note, stored_ms)
         VALUES (?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, wall_ms())
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan, ended = excluded.ended,
           stored_ms = excluded.stored_ms, leased_until = NULL, version = bridges.version + 1"
    );
    with_args(UPSERT.postgres(), super::bridges::saved_values(b)?)?.execute(&mut **tx).await?;
    Ok(())
}

impl Columns for PgRow {
    fn at<T: Column>(&self, index: usize) -> StoreResult<T> {
        Ok(self.try_get(index)?)
    }
}

type PgQuery<'q> = sqlx_core::query::Query<'q, Postgres, PgArguments>;

/// A statement's text with its arguments bound.
fn with_args(text: &str, args: Vec<Arg>) -> StoreResult<PgQuery<'_>> {
    let mut arguments = PgArguments::default();
    for arg in args {
        arguments.add(arg).map_err(|e| StoreError::new(anyhow::anyhow!(e)))?;
    }
    Ok(sqlx_core::query::query_with(text, arguments))
}

/// Runs a statement on `on` (the pool, or a transaction's connection): how many rows it changed.
async fn execute<'e>(on: impl PgExecutor<'e>, q: Query) -> StoreResult<u64> {
    let text = q.text.postgres();
    Ok(with_args(&text, q.args)?.execute(on).await?.rows_affected())
}

/// The rows of a query, each read as a `T`.
async fn select<'e, T: FromRow>(on: impl PgExecutor<'e>, q: Query) -> StoreResult<Vec<T>> {
    let text = q.text.postgres();
    with_args(&text, q.args)?.fetch_all(on).await?.iter().map(T::from_row).collect()
}

/// The first row of a query, if any, read as a `T`.
async fn select_first<'e, T: FromRow>(on: impl PgExecutor<'e>, q: Query) -> StoreResult<Option<T>> {
    let text = q.text.postgres();
    with_args(&text, q.args)?.fetch_optional(on).await?.as_ref().map(T::from_row).transpose()
}

/// The one row of a query, read as a `T`.
async fn select_one<'e, T: FromRow>(on: impl PgExecutor<'e>, q: Query) -> StoreResult<T> {
    let text = q.text.postgres();
    T::from_row(&with_args(&text, q.args)?.fetch_one(on).await?)
}
