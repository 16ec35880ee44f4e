//! [`PgStore`]: the whole store on a PostgreSQL server, through sqlx's connection pool, with versioned migrations
//! (`migrations/postgres/`, embedded with `sqlx::migrate!`; concurrent starts wait on sqlx's migration lock).
//! Several sandbox instances may share one database: counters are rows updated atomically, feed positions come
//! from the one-row `feed_head` in commit order (the module docs of [`crate::store`]), and due deliveries are taken
//! with `FOR UPDATE SKIP LOCKED` and a wall-clock lease, so each is in flight at one instance at a time and a dead
//! instance's lease runs out and the delivery is retried. JSON is kept as `TEXT`, byte for byte.

use async_trait::async_trait;
use bridge_contract::{BridgeRecord, DateString, Encoded, WebhookDeliveryAttempt, WebhookEvent};
use sqlx_core::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::{PgPool, PgPoolOptions, PgRow, Postgres};

use super::postgres_access as access;
use super::{
    from_json, from_text, history_order, synced, to_json, AddressSearch, AttemptOutcome, Backlog, Counter,
    DeliveryClaim, DueDelivery, HistoryCursorQuery, HistoryQuery, NewEvent, ResetCounts, SchemaStatus, Store,
    StoreError, StoreResult, StoredAddress, StoredBridge, StoredDeposit, StoredQuote, StoredRoutingAddress,
};
use super::{
    AccessSnapshot, AuditEntry, AuditQuery, KeyLookup, ProjectChange, Retire, StoredApiKey, StoredProject,
    StoredSigningKey, Usage,
};
use crate::clock::{ClockSync, ProjectClock};

use crate::records;

type Tx = sqlx_core::transaction::Transaction<'static, Postgres>;

/// Commits, timing the commit ([`crate::telemetry::STORE_COMMIT_DURATION`]).
async fn commit(tx: Tx) -> StoreResult<()> {
    let started = std::time::Instant::now();
    tx.commit().await?;
    metrics::histogram!(crate::telemetry::STORE_COMMIT_DURATION, "backend" => "postgres")
        .record(started.elapsed().as_secs_f64());
    Ok(())
}

impl From<sqlx_core::Error> for StoreError {
    fn from(e: sqlx_core::Error) -> Self {
        StoreError::new(e)
    }
}

/// The versioned migrations (`migrations/postgres/<version>_<name>.sql`), embedded in the binary. sqlx keeps the
/// applied versions and their checksums in `_sqlx_migrations`, refuses a database whose applied migrations were
/// changed, and holds an advisory lock while migrating, so instances starting together migrate once.
#[derive(Debug)]
struct Migrations;

const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "sandbox", include_str!("../../migrations/postgres/0001_sandbox.sql")),
    (2, "beyond spec", include_str!("../../migrations/postgres/0002_beyond_spec.sql")),
    (3, "feed time floor", include_str!("../../migrations/postgres/0003_feed_time_floor.sql")),
    (4, "bridge version", include_str!("../../migrations/postgres/0004_bridge_version.sql")),
    (5, "projects", include_str!("../../migrations/postgres/0005_projects.sql")),
    (7, "access", include_str!("../../migrations/postgres/0007_access.sql")),
    (8, "lease holders", include_str!("../../migrations/postgres/0008_lease_holders.sql")),
    (9, "delivery details", include_str!("../../migrations/postgres/0009_delivery_details.sql")),
];

type Resolved =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<Migration>, sqlx_core::error::BoxDynError>> + Send>>;

impl MigrationSource<'static> for Migrations {
    fn resolve(self) -> Resolved {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|(version, name, sql)| {
                    Migration::new(*version, (*name).into(), MigrationType::Simple, (*sql).into(), false)
                })
                .collect())
        })
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

/// Appends events (and an outbox row for each that has a `webhookUrl`) as the last step of the caller's
/// transaction: the positions come from `feed_head`, whose row lock is held until the commit, so positions are
/// given out in commit order.
async fn insert_events(tx: &mut Tx, events: &[NewEvent]) -> StoreResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let newest = events.iter().map(|e| e.created_ms).max().unwrap_or(i64::MIN);
    let (last, latest): (i64, i64) = sqlx_core::query_as::query_as(
        "UPDATE feed_head SET position = position + $1, latest_ms = GREATEST(latest_ms, $2)
         RETURNING position, latest_ms",
    )
    .bind(events.len() as i64)
    .bind(newest)
    .fetch_one(&mut **tx)
    .await?;
    let first = last - events.len() as i64 + 1;
    for (i, e) in events.iter().enumerate() {
        query(
            "INSERT INTO events (seq, id, project, created_ms, body, webhook_url, latest_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(first + i as i64)
        .bind(&e.id)
        .bind(&e.project)
        .bind(e.created_ms)
        .bind(to_json(&e.event)?)
        .bind(&e.webhook_url)
        .bind(latest)
        .execute(&mut **tx)
        .await?;
        if let Some(url) = &e.webhook_url {
            query("INSERT INTO outbox (event_id, project, url, next_ms) VALUES ($1, $2, $3, $4)")
                .bind(&e.id)
                .bind(&e.project)
                .bind(url)
                .bind(e.created_ms)
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(())
}

async fn upsert_bridge(tx: &mut Tx, b: &StoredBridge) -> StoreResult<()> {
    let plan = b.plan.as_ref().map(to_json).transpose()?;
    query(
        "INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, rejections = excluded.rejections, state = excluded.state,
           updated_ms = excluded.updated_ms, next_ms = excluded.next_ms, plan = excluded.plan, leased_until = NULL,
           version = bridges.version + 1",
    )
    .bind(&b.id)
    .bind(&b.project)
    .bind(to_json(&b.record)?)
    .bind(to_json(&b.rejections)?)
    .bind(records::state_name(&b.record))
    .bind(b.created_ms)
    .bind(b.updated_ms)
    .bind(b.next_ms)
    .bind(&b.webhook_url)
    .bind(plan)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

const BRIDGE_COLUMNS: &str =
    "id, project, record, rejections, created_ms, updated_ms, next_ms, webhook_url, plan, version";

fn bridge_from_row(row: &PgRow) -> StoreResult<StoredBridge> {
    Ok(StoredBridge {
        id: row.try_get(0)?,
        project: row.try_get(1)?,
        record: from_json(row.try_get(2)?)?,
        rejections: from_json(row.try_get(3)?)?,
        created_ms: row.try_get(4)?,
        updated_ms: row.try_get(5)?,
        next_ms: row.try_get(6)?,
        webhook_url: row.try_get(7)?,
        plan: row.try_get::<Option<&str>, _>(8)?.map(from_json).transpose()?,
        version: row.try_get(9)?,
    })
}

const ADDRESS_COLUMNS: &str = "seq, project, reuse_key, body, search_item, webhook_url, created_ms";

fn address_from_row(row: &PgRow) -> StoreResult<(i64, StoredAddress)> {
    Ok((
        row.try_get(0)?,
        StoredAddress {
            project: row.try_get(1)?,
            reuse_key: row.try_get(2)?,
            address: from_json(row.try_get(3)?)?,
            search_item: from_json(row.try_get(4)?)?,
            webhook_url: row.try_get(5)?,
            created_ms: row.try_get(6)?,
        },
    ))
}

fn quote_from_row(row: &PgRow) -> StoreResult<StoredQuote> {
    Ok(StoredQuote {
        id: row.try_get(0)?,
        project: row.try_get(1)?,
        response: from_json(row.try_get(2)?)?,
        mode: from_text(row.try_get(3)?)?,
        created_ms: row.try_get(4)?,
        expires_ms: row.try_get(5)?,
        committed: row.try_get(6)?,
    })
}

fn all<T>(rows: &[PgRow], decode: impl Fn(&PgRow) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    rows.iter().map(decode).collect()
}

#[async_trait]
impl Store for PgStore {
    async fn sync_clock(&self, sync: ClockSync) -> StoreResult<(i64, i64)> {
        let mut tx = self.pool.begin().await?;
        // The first sync keeps its own clock; later ones lock the row until the commit, so concurrent syncs take
        // turns.
        let inserted =
            query("INSERT INTO meta (key, value) VALUES ('clock', $1) ON CONFLICT (key) DO NOTHING RETURNING key")
                .bind(to_json(&(sync.value, sync.floor))?)
                .fetch_optional(&mut *tx)
                .await?;
        if inserted.is_some() {
            commit(tx).await?;
            return Ok((sync.value, sync.floor));
        }
        let text: String =
            query_scalar("SELECT value FROM meta WHERE key = 'clock' FOR UPDATE").fetch_one(&mut *tx).await?;
        let (value, floor) = synced(Some(from_json(&text)?), sync);
        query("UPDATE meta SET value = $1 WHERE key = 'clock'")
            .bind(to_json(&(value, floor))?)
            .execute(&mut *tx)
            .await?;
        commit(tx).await?;
        Ok((value, floor))
    }

    async fn project_clock(&self, project: &str, start: &ProjectClock) -> StoreResult<ProjectClock> {
        // One read on every request that needs the project's time: an advance committed by any instance is seen.
        let select = "SELECT clock_value, clock_floor, generation FROM projects WHERE id = $1";
        if let Some((value, floor, generation)) =
            sqlx_core::query_as::query_as(select).bind(project).fetch_optional(&self.pool).await?
        {
            return Ok(ProjectClock { value, floor, generation });
        }
        query(
            "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES ($1, $2, $3, $2)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(project)
        .bind(start.floor)
        .bind(start.value)
        .execute(&self.pool)
        .await?;
        let (value, floor, generation) =
            sqlx_core::query_as::query_as(select).bind(project).fetch_one(&self.pool).await?;
        Ok(ProjectClock { value, floor, generation })
    }

    async fn advance_project_clock(&self, project: &str, ms: i64, limit: i64) -> StoreResult<Option<ProjectClock>> {
        let row: Option<(i64, i64, i64)> = sqlx_core::query_as::query_as(
            "UPDATE projects SET clock_value = clock_value + $2 WHERE id = $1 AND clock_value <= $3
             RETURNING clock_value, clock_floor, generation",
        )
        .bind(project)
        .bind(ms)
        .bind(limit)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(value, floor, generation)| ProjectClock { value, floor, generation }))
    }

    async fn keep_project_floors(&self, floors: &[(String, i64, i64)]) -> StoreResult<()> {
        if floors.is_empty() {
            return Ok(());
        }
        let projects: Vec<&str> = floors.iter().map(|(p, _, _)| p.as_str()).collect();
        let generations: Vec<i64> = floors.iter().map(|(_, g, _)| *g).collect();
        let values: Vec<i64> = floors.iter().map(|(_, _, f)| *f).collect();
        query(
            "UPDATE projects p SET clock_floor = f.floor
             FROM UNNEST($1::text[], $2::bigint[], $3::bigint[]) AS f(id, generation, floor)
             WHERE p.id = f.id AND p.generation = f.generation AND p.clock_floor < f.floor",
        )
        .bind(&projects)
        .bind(&generations)
        .bind(&values)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn reset_project(&self, project: &str, start: &ProjectClock) -> StoreResult<(ProjectClock, ResetCounts)> {
        let mut tx = self.pool.begin().await?;
        // The project's row first: concurrent resets of one project take turns.
        let (generation,): (i64,) = sqlx_core::query_as::query_as(
            "INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor) VALUES ($1, $2, $3, $2)
             ON CONFLICT (id) DO UPDATE SET clock_value = $3, clock_floor = $2, generation = projects.generation + 1
             RETURNING generation",
        )
        .bind(project)
        .bind(start.floor)
        .bind(start.value)
        .fetch_one(&mut *tx)
        .await?;
        let count = |sql: &'static str| query(sql).bind(project);
        let deposits = count(
            "DELETE FROM deposits d WHERE EXISTS (SELECT 1 FROM addresses a WHERE a.project = $1
               AND a.deposit_chain = d.deposit_chain AND a.deposit_address = d.deposit_address)
             OR EXISTS (SELECT 1 FROM routing_addresses r WHERE r.project = $1
               AND r.deposit_chain = d.deposit_chain AND r.deposit_address = d.deposit_address)",
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let counts = ResetCounts {
            quotes: count("DELETE FROM quotes WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            bridges: count("DELETE FROM bridges WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            addresses: count("DELETE FROM addresses WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            routing_addresses: count("DELETE FROM routing_addresses WHERE project = $1")
                .execute(&mut *tx)
                .await?
                .rows_affected(),
            deposits,
            events: count("DELETE FROM events WHERE project = $1").execute(&mut *tx).await?.rows_affected(),
            deliveries: count("DELETE FROM delivery_attempts WHERE project = $1")
                .execute(&mut *tx)
                .await?
                .rows_affected(),
        };
        count("DELETE FROM outbox WHERE project = $1").execute(&mut *tx).await?;
        tx.commit().await?;
        Ok((ProjectClock { generation, ..*start }, counts))
    }

    async fn reserve_counter(&self, counter: Counter, count: u64) -> StoreResult<u64> {
        let value: String = query_scalar(
            "INSERT INTO meta (key, value) VALUES ($1, $2::bigint::text)
             ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + $2::bigint)::text RETURNING value",
        )
        .bind(format!("counter:{}", counter.name()))
        .bind(count as i64)
        .fetch_one(&self.pool)
        .await?;
        value.parse::<u64>().map_err(|e| StoreError::new(e).context("a stored counter"))
    }

    async fn insert_quote(&self, q: &StoredQuote) -> StoreResult<()> {
        query(
            "INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed) VALUES ($1, $2, $3, $4, $5, $6, FALSE)",
        )
        .bind(&q.id)
        .bind(&q.project)
        .bind(to_json(&q.response)?)
        .bind(q.mode.as_str())
        .bind(q.created_ms)
        .bind(q.expires_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn quote(&self, project: &str, id: &str) -> StoreResult<Option<StoredQuote>> {
        let row = query(
            "SELECT id, project, body, mode, created_ms, expires_ms, committed FROM quotes WHERE id = $1 AND project = $2",
        )
        .bind(id)
        .bind(project)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(quote_from_row).transpose()
    }

    async fn commit_quote(&self, quote_id: &str, bridge: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let changed = query("UPDATE quotes SET committed = TRUE WHERE id = $1 AND NOT committed")
            .bind(quote_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        upsert_bridge(&mut tx, bridge).await?;
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(true)
    }

    async fn bridge(&self, project: &str, id: &str) -> StoreResult<Option<StoredBridge>> {
        let row = query(&format!("SELECT {BRIDGE_COLUMNS} FROM bridges WHERE id = $1 AND project = $2"))
            .bind(id)
            .bind(project)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(bridge_from_row).transpose()
    }

    async fn bridge_record(&self, project: &str, id: &str) -> StoreResult<Option<Encoded<BridgeRecord>>> {
        let record: Option<String> = query_scalar("SELECT record FROM bridges WHERE id = $1 AND project = $2")
            .bind(id)
            .bind(project)
            .fetch_optional(&self.pool)
            .await?;
        Ok(record.map(Encoded::from_stored))
    }

    async fn save_bridge(&self, b: &StoredBridge, events: &[NewEvent]) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let plan = b.plan.as_ref().map(to_json).transpose()?;
        let saved = query(
            "UPDATE bridges SET record = $3, rejections = $4, state = $5, updated_ms = $6, next_ms = $7, plan = $8,
               leased_until = NULL, version = version + 1
             WHERE id = $1 AND version = $2",
        )
        .bind(&b.id)
        .bind(b.version)
        .bind(to_json(&b.record)?)
        .bind(to_json(&b.rejections)?)
        .bind(records::state_name(&b.record))
        .bind(b.updated_ms)
        .bind(b.next_ms)
        .bind(plan)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if saved == 0 {
            return Ok(false); // the transaction rolls back when dropped: nothing written
        }
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(true)
    }

    /// Takes the due bridges for this instance's lifecycle pass: each is leased (wall clock, [`BRIDGE_LEASE_MS`])
    /// so that no other instance steps it meanwhile; saving the bridge ends the lease, and the lease of an
    /// instance that died mid-pass runs out, so another instance steps the bridge.
    async fn due_bridges(&self, base_ms: i64, limit: u64) -> StoreResult<Vec<StoredBridge>> {
        let wall = crate::clock::wall_ms();
        // Each project's due bridges at its own time: one probe of (project, next_ms) per project, one statement.
        let rows = query(&format!(
            "UPDATE bridges SET leased_until = $3, leased_by = $5 WHERE id IN (
                 SELECT b.id FROM projects p JOIN bridges b ON b.project = p.id
                 WHERE b.next_ms IS NOT NULL AND b.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)
                   AND (b.leased_until IS NULL OR b.leased_until <= $4)
                 ORDER BY b.next_ms, b.id LIMIT $2 FOR UPDATE OF b SKIP LOCKED)
             RETURNING {BRIDGE_COLUMNS}"
        ))
        .bind(base_ms)
        .bind(limit as i64)
        .bind(wall + BRIDGE_LEASE_MS)
        .bind(wall)
        .bind(&*self.instance)
        .fetch_all(&self.pool)
        .await?;
        let mut due = all(&rows, bridge_from_row)?;
        due.sort_by(|a, b| (a.next_ms, &a.id).cmp(&(b.next_ms, &b.id)));
        Ok(due)
    }

    async fn history(&self, project: &str, q: &HistoryQuery) -> StoreResult<(u64, Vec<StoredBridge>)> {
        let state = q.state.map(|s| s.as_str());
        let total: i64 =
            query_scalar("SELECT COUNT(*) FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)")
                .bind(project)
                .bind(state)
                .fetch_one(&self.pool)
                .await?;
        let (column, direction, _) = history_order(q.sort_by, q.direction);
        let rows = query(&format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)
             ORDER BY {column} {direction}, id {direction} LIMIT $3 OFFSET $4"
        ))
        .bind(project)
        .bind(state)
        .bind(q.limit as i64)
        .bind(q.offset as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok((total as u64, all(&rows, bridge_from_row)?))
    }

    async fn history_after(&self, project: &str, q: &HistoryCursorQuery) -> StoreResult<Vec<StoredBridge>> {
        let state = q.state.map(|s| s.as_str());
        let (column, direction, beyond) = history_order(q.sort_by, q.direction);
        let (after_key, after_id) = match &q.after {
            Some((key, id)) => (Some(*key), Some(id.clone())),
            None => (None, None),
        };
        let rows = query(&format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ($2::text IS NULL OR state = $2)
               AND ($3::bigint IS NULL OR ({column}, id) {beyond} ($3::bigint, $4::text))
             ORDER BY {column} {direction}, id {direction} LIMIT $5"
        ))
        .bind(project)
        .bind(state)
        .bind(after_key)
        .bind(after_id)
        .bind(q.limit as i64)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, bridge_from_row)
    }

    async fn bridges_by_deposit_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let rows = query(&format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND ((record::jsonb) ->> 'depositTxHash' = $2
               OR EXISTS (SELECT 1 FROM jsonb_array_elements(rejections::jsonb) r WHERE r ->> 'depositTxHash' = $2))
             ORDER BY created_ms, id"
        ))
        .bind(project)
        .bind(tx_hash)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, bridge_from_row)
    }

    async fn bridges_by_withdraw_hash(&self, project: &str, tx_hash: &str) -> StoreResult<Vec<StoredBridge>> {
        let rows = query(&format!(
            "SELECT {BRIDGE_COLUMNS} FROM bridges WHERE project = $1 AND (record::jsonb) ->> 'withdrawTxHash' = $2
             ORDER BY created_ms, id"
        ))
        .bind(project)
        .bind(tx_hash)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, bridge_from_row)
    }

    async fn ping(&self) -> StoreResult<()> {
        query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn schema_status(&self) -> StoreResult<SchemaStatus> {
        let applied: Vec<i64> =
            query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&self.pool).await?;
        let known = MIGRATIONS.len();
        let applied = MIGRATIONS.iter().filter(|(version, _, _)| applied.contains(version)).count();
        Ok(SchemaStatus { known, applied })
    }

    async fn backlog(&self, base_ms: i64) -> StoreResult<Backlog> {
        let (pending, delivery_late, step_late): (i64, Option<i64>, Option<i64>) = sqlx_core::query_as::query_as(
            "SELECT (SELECT COUNT(*) FROM outbox WHERE next_ms IS NOT NULL),
                    (SELECT MAX(GREATEST(p.clock_value + $1, p.clock_floor) - o.next_ms)
                     FROM projects p JOIN outbox o ON o.project = p.id
                     WHERE o.next_ms IS NOT NULL AND o.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)),
                    (SELECT MAX(GREATEST(p.clock_value + $1, p.clock_floor) - b.next_ms)
                     FROM projects p JOIN bridges b ON b.project = p.id
                     WHERE b.next_ms IS NOT NULL AND b.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor))",
        )
        .bind(base_ms)
        .fetch_one(&self.pool)
        .await?;
        Ok(Backlog {
            outbox_pending: pending as u64,
            oldest_due_delivery_late_ms: delivery_late,
            oldest_due_step_late_ms: step_late,
        })
    }

    /// Clears the leases taken under this handle's name that are still held; others' stay.
    async fn release_own_leases(&self) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query(
            "UPDATE outbox SET leased_until = NULL, leased_by = NULL WHERE leased_by = $1 AND leased_until IS NOT NULL",
        )
        .bind(&*self.instance)
        .execute(&mut *tx)
        .await?;
        query("UPDATE bridges SET leased_until = NULL, leased_by = NULL WHERE leased_by = $1 AND leased_until IS NOT NULL")
            .bind(&*self.instance)
            .execute(&mut *tx)
            .await?;
        commit(tx).await
    }

    async fn address_counts(&self, project: &str, since_ms: i64) -> StoreResult<(u64, u64)> {
        let (total, recent): (i64, i64) = sqlx_core::query_as::query_as(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE created_ms >= $2) FROM addresses WHERE project = $1",
        )
        .bind(project)
        .bind(since_ms)
        .fetch_one(&self.pool)
        .await?;
        Ok((total as u64, recent as u64))
    }

    async fn reusable_address(
        &self,
        project: &str,
        deposit_chain: &str,
        reuse_key: &str,
    ) -> StoreResult<Option<StoredAddress>> {
        let row = query(&format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = $1 AND deposit_chain = $2 AND reuse_key = $3 ORDER BY seq LIMIT 1"
        ))
        .bind(project)
        .bind(deposit_chain)
        .bind(reuse_key)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(address_from_row).transpose()?.map(|(_, a)| a))
    }

    async fn insert_addresses(&self, addresses: &[StoredAddress], events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for a in addresses {
            query(
                "INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, webhook_url, created_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&a.project)
            .bind(&a.address.deposit_chain)
            .bind(&a.address.deposit_address)
            .bind(&a.reuse_key)
            .bind(to_json(&a.address)?)
            .bind(to_json(&a.search_item)?)
            .bind(&a.webhook_url)
            .bind(a.created_ms)
            .execute(&mut *tx)
            .await?;
        }
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(())
    }

    async fn address(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<Option<StoredAddress>> {
        let row = query(&format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE deposit_chain = $1 AND deposit_address = $2"
        ))
        .bind(deposit_chain)
        .bind(deposit_address)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(address_from_row).transpose()?.map(|(_, a)| a))
    }

    async fn search_addresses(&self, project: &str, s: &AddressSearch) -> StoreResult<Vec<(i64, StoredAddress)>> {
        let rows = query(&format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE project = $1 AND seq > $2
               AND ($3::text IS NULL OR search_item::jsonb ->> 'addressNote' = $3)
               AND ($4::text IS NULL OR deposit_chain = $4)
               AND ($5::text IS NULL OR search_item::jsonb ->> 'destinationChain' = $5)
               AND ($6::text IS NULL OR search_item::jsonb ->> 'destinationAddress' = $6)
             ORDER BY seq LIMIT $7"
        ))
        .bind(project)
        .bind(s.after)
        .bind(&s.address_note)
        .bind(&s.deposit_chain)
        .bind(&s.destination_chain)
        .bind(&s.destination_address)
        .bind(s.limit as i64)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, address_from_row)
    }

    async fn insert_routing_address(&self, a: &StoredRoutingAddress, events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query(
            "INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, webhook_url, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&a.project)
        .bind(&a.address.deposit_chain)
        .bind(&a.address.deposit_address)
        .bind(to_json(&a.address)?)
        .bind(&a.webhook_url)
        .bind(a.created_ms)
        .execute(&mut *tx)
        .await?;
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(())
    }

    async fn routing_address(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
    ) -> StoreResult<Option<StoredRoutingAddress>> {
        let row = query(
            "SELECT project, body, webhook_url, created_ms FROM routing_addresses WHERE deposit_chain = $1 AND deposit_address = $2",
        )
        .bind(deposit_chain)
        .bind(deposit_address)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(StoredRoutingAddress {
                project: r.try_get(0)?,
                address: from_json(r.try_get(1)?)?,
                webhook_url: r.try_get(2)?,
                created_ms: r.try_get(3)?,
            })
        })
        .transpose()
    }

    async fn address_taken(&self, deposit_chain: &str, deposit_address: &str) -> StoreResult<bool> {
        Ok(query_scalar(
            "SELECT EXISTS (SELECT 1 FROM addresses WHERE deposit_chain = $1 AND deposit_address = $2)
                 OR EXISTS (SELECT 1 FROM routing_addresses WHERE deposit_chain = $1 AND deposit_address = $2)",
        )
        .bind(deposit_chain)
        .bind(deposit_address)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn add_deposit(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        deposit: &StoredDeposit,
        bridge: Option<&StoredBridge>,
        events: &[NewEvent],
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        query("INSERT INTO deposits (deposit_chain, deposit_address, last_bridge, bridge_id) VALUES ($1, $2, $3, $4)")
            .bind(deposit_chain)
            .bind(deposit_address)
            .bind(to_json(&deposit.last_bridge)?)
            .bind(&deposit.bridge_id)
            .execute(&mut *tx)
            .await?;
        if let Some(b) = bridge {
            upsert_bridge(&mut tx, b).await?;
        }
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(())
    }

    async fn deposits(
        &self,
        deposit_chain: &str,
        deposit_address: &str,
        limit: u64,
    ) -> StoreResult<Vec<StoredDeposit>> {
        let rows = query(
            "SELECT last_bridge, bridge_id FROM deposits WHERE deposit_chain = $1 AND deposit_address = $2 ORDER BY seq DESC LIMIT $3",
        )
        .bind(deposit_chain)
        .bind(deposit_address)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, |r| Ok(StoredDeposit { last_bridge: from_json(r.try_get(0)?)?, bridge_id: r.try_get(1)? }))
    }

    async fn append_events(&self, events: &[NewEvent]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        insert_events(&mut tx, events).await?;
        commit(tx).await?;
        Ok(())
    }

    async fn events(
        &self,
        project: &str,
        since_ms: i64,
        after_seq: i64,
        limit: u64,
    ) -> StoreResult<Vec<(i64, Encoded<WebhookEvent>)>> {
        // As on SQLite: the time is a filter, the position is the order; the walk starts at the cursor or at the
        // first position whose watermark reaches the time, whichever is later.
        let rows = query(
            "SELECT seq, body FROM events WHERE project = $1 AND created_ms >= $3 AND seq > GREATEST($2, COALESCE(
                 (SELECT seq FROM events WHERE project = $1 AND latest_ms >= $3 ORDER BY latest_ms, seq LIMIT 1),
                 9223372036854775807) - 1)
             ORDER BY seq LIMIT $4",
        )
        .bind(project)
        .bind(after_seq)
        .bind(since_ms)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, |r| Ok((r.try_get(0)?, Encoded::from_stored(r.try_get(1)?))))
    }

    async fn take_due_deliveries(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let mut tx = self.pool.begin().await?;
        // Rows another instance is taking right now are skipped, not waited for; the per-URL share is applied to
        // the oldest due rows of this batch (window functions and `FOR UPDATE` do not mix).
        let batch = (claim.limit.max(1) * claim.per_url.max(1) as u64).min(1_000) as i64;
        let rows = query(
            "SELECT o.id, o.event_id, o.project, o.url, o.attempts, e.body
             FROM projects p JOIN outbox o ON o.project = p.id JOIN events e ON e.id = o.event_id
             WHERE o.next_ms IS NOT NULL AND o.next_ms <= GREATEST(p.clock_value + $1, p.clock_floor)
               AND (o.leased_until IS NULL OR o.leased_until <= $2)
             ORDER BY o.next_ms, o.id LIMIT $3 FOR UPDATE OF o SKIP LOCKED",
        )
        .bind(claim.base_ms)
        .bind(claim.wall_ms)
        .bind(batch)
        .fetch_all(&mut *tx)
        .await?;
        let mut taken = claim.busy.clone();
        let mut out = Vec::new();
        for r in &rows {
            if out.len() as u64 >= claim.limit {
                break;
            }
            let url: String = r.try_get(3)?;
            let n = taken.entry(url.clone()).or_insert(0);
            if *n >= claim.per_url {
                continue;
            }
            *n += 1;
            out.push(DueDelivery {
                outbox_id: r.try_get(0)?,
                event_id: r.try_get(1)?,
                project: r.try_get(2)?,
                url,
                event: from_json(r.try_get(5)?)?,
                attempt: r.try_get::<i32, _>(4)? as u32 + 1,
            });
        }
        let ids: Vec<i64> = out.iter().map(|d| d.outbox_id).collect();
        query("UPDATE outbox SET leased_until = $2, leased_by = $3 WHERE id = ANY($1)")
            .bind(&ids)
            .bind(claim.lease_until_wall_ms)
            .bind(&*self.instance)
            .execute(&mut *tx)
            .await?;
        commit(tx).await?;
        Ok(out)
    }

    /// Releases nothing: other instances on the database may have deliveries in flight, and a dead instance's
    /// leases run out on their own.
    async fn release_leases(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn record_attempt(&self, d: &DueDelivery, o: &AttemptOutcome) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let kept =
            query("UPDATE outbox SET attempts = $2, next_ms = $3, delivered = $4, leased_until = NULL WHERE id = $1")
                .bind(d.outbox_id)
                .bind(d.attempt as i32)
                .bind(o.next_ms)
                .bind(o.delivered)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if kept == 0 {
            return Ok(()); // reset meanwhile: the delivery and its log are gone
        }
        query(
            "INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, error, delivered, next_ms, latency_ms, body_start)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(d.outbox_id)
        .bind(&d.event_id)
        .bind(&d.project)
        .bind(&d.url)
        .bind(d.attempt as i32)
        .bind(o.at_ms)
        .bind(o.status.map(i32::from))
        .bind(&o.error)
        .bind(o.delivered)
        .bind(o.next_ms)
        .bind(o.latency_ms)
        .bind(&o.body_start)
        .execute(&mut *tx)
        .await?;
        commit(tx).await?;
        Ok(())
    }

    async fn resend_deliveries(&self, project: &str, event_id: &str, now_ms: i64) -> StoreResult<u64> {
        Ok(query("UPDATE outbox SET next_ms = $3, delivered = false WHERE project = $1 AND event_id = $2")
            .bind(project)
            .bind(event_id)
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    async fn recover_deliveries(&self, project: &str, since_ms: i64, now_ms: i64) -> StoreResult<u64> {
        Ok(query(
            "UPDATE outbox SET next_ms = $3 WHERE project = $1 AND NOT delivered AND attempts > 0
               AND (SELECT max(a.at_ms) FROM delivery_attempts a WHERE a.outbox_id = outbox.id) >= $2",
        )
        .bind(project)
        .bind(since_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }

    async fn delivery_attempts(
        &self,
        project: &str,
        event_id: Option<&str>,
        limit: u64,
    ) -> StoreResult<Vec<WebhookDeliveryAttempt>> {
        let rows = query(
            "SELECT a.event_id, a.url, a.attempt, a.at_ms, a.status, a.error, a.delivered, a.next_ms, a.latency_ms,
                    a.body_start, e.body
             FROM delivery_attempts a LEFT JOIN events e ON e.id = a.event_id
             WHERE a.project = $1 AND ($2::text IS NULL OR a.event_id = $2) ORDER BY a.id DESC LIMIT $3",
        )
        .bind(project)
        .bind(event_id)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        all(&rows, |r| {
            Ok(WebhookDeliveryAttempt {
                event_id: r.try_get(0)?,
                url: r.try_get(1)?,
                attempt: r.try_get::<i32, _>(2)? as u64,
                at: DateString::from_millis(r.try_get(3)?).unwrap_or(DateString::MIN),
                status: r.try_get::<Option<i32>, _>(4)?.map(i64::from),
                error: r.try_get(5)?,
                delivered: r.try_get(6)?,
                next_attempt_at: r.try_get::<Option<i64>, _>(7)?.and_then(DateString::from_millis),
                latency_ms: r.try_get::<Option<i64>, _>(8)?.map(|ms| ms.max(0) as u64),
                response_body_start: r.try_get(9)?,
                event: r.try_get::<Option<String>, _>(10)?.map(|body| from_json(&body)).transpose()?,
            })
        })
    }

    // ------------------------------------------- projects, API keys, signing keys, the audit list (issue 26)

    async fn access_version(&self) -> StoreResult<i64> {
        access::version(&self.pool).await
    }

    async fn access_snapshot(&self) -> StoreResult<AccessSnapshot> {
        access::snapshot(&self.pool).await
    }

    async fn api_key(&self, lookup: KeyLookup<'_>) -> StoreResult<Option<StoredApiKey>> {
        access::api_key(&self.pool, lookup.column(), lookup.value()).await
    }

    async fn api_keys(&self, project: Option<&str>) -> StoreResult<Vec<StoredApiKey>> {
        access::api_keys(&self.pool, project).await
    }

    async fn insert_api_key(&self, key: &StoredApiKey, imported: bool, actor: &str) -> StoreResult<bool> {
        access::insert_api_key(&self.pool, key, imported, actor).await
    }

    async fn revoke_api_key(&self, id: &str, at_ms: i64, actor: &str) -> StoreResult<Option<StoredApiKey>> {
        access::revoke_api_key(&self.pool, id, at_ms, actor).await
    }

    async fn ensure_project(&self, project: &str, at_ms: i64, actor: &str, how: &str) -> StoreResult<bool> {
        access::ensure_project(&self.pool, project, at_ms, actor, how).await
    }

    async fn set_project_disabled(
        &self,
        project: &str,
        disabled: bool,
        at_ms: i64,
        actor: &str,
    ) -> StoreResult<ProjectChange> {
        access::set_project_disabled(&self.pool, project, disabled, at_ms, actor).await
    }

    async fn projects(&self) -> StoreResult<Vec<StoredProject>> {
        access::projects(&self.pool).await
    }

    async fn record_usage(&self, usage: &Usage) -> StoreResult<()> {
        access::record_usage(&self.pool, usage).await
    }

    async fn initial_signing_key(&self, candidate: &StoredSigningKey, actor: &str) -> StoreResult<bool> {
        access::initial_signing_key(&self.pool, candidate, actor).await
    }

    async fn rotate_signing_key(
        &self,
        secret: &[u8],
        at_ms: i64,
        how: Retire,
        actor: &str,
    ) -> StoreResult<StoredSigningKey> {
        access::rotate_signing_key(&self.pool, secret, at_ms, how, actor).await
    }

    async fn extend_signed_until(&self, kid: &str, until_ms: i64) -> StoreResult<bool> {
        access::extend_signed_until(&self.pool, kid, until_ms).await
    }

    async fn audit(&self, query: &AuditQuery) -> StoreResult<Vec<AuditEntry>> {
        access::audit_list(&self.pool, query).await
    }
}
