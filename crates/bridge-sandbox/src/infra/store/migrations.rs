//! The one migration plan of both backends: step `N` is the same change on SQLite and on PostgreSQL, in
//! `migrations/sqlite/NNNN_name.sql` and `migrations/postgres/NNNN_name.sql` (same number, same name). A step that
//! one backend does not need has no file there: PostgreSQL's first step made at once what SQLite's steps 1 to 6
//! made one by one, and PostgreSQL's lease holders (step 14) have no SQLite counterpart (one process serves a
//! data directory).
//!
//! * **SQLite** counts the steps applied in `PRAGMA user_version`, so it runs every step in order, a step it does
//!   not need (or a number the plan does not hold yet) as an empty one: `user_version` is always the number of the
//!   last step applied.
//! * **PostgreSQL** runs through sqlx's migrator, which keeps each applied step's number and a checksum of its
//!   text in `_sqlx_migrations` and refuses a database whose applied steps were changed; a step's text is never
//!   edited once released.
//!
//! ## PostgreSQL databases made before the plan
//!
//! Until the plan, PostgreSQL's migrations were numbered on their own (1, 2, 3, 4, 5, 7, 8, 9, 10); the files
//! are the same texts under the plan's numbers (old 2 is step 7, old 3 step 9, old 4 step 8, old 5 step 10,
//! old 7 step 11, old 8 step 14, old 9 step 12, old 10 step 13; 1 stays 1). A database migrated before records
//! the old numbers; [`PLAN`]'s one documented step for it, [`renumber_recorded`], runs before the migrator and
//! gives each recorded migration the number of the plan step whose text has its checksum (the texts did not
//! change, so neither did their checksums). It is idempotent and runs in one transaction that locks
//! `_sqlx_migrations`, so instances starting together renumber once; the migrator then applies the steps the
//! database lacks, in plan order (a step that an old database applied earlier than its number, such as old 3,
//! is recognised by its checksum and not run again). `tests/it/migrations.rs` builds a database at each earlier
//! PostgreSQL state and SQLite version and opens it with this plan.

use sqlx_core::migrate::{Migration, MigrationType};
use sqlx_postgres::PgPool;

use super::StoreResult;

/// One step of the plan: its number and name (the files' `NNNN_name`), and its text for each backend (`None`:
/// the backend has nothing to do at this step).
pub(crate) struct Step {
    pub(crate) version: i64,
    pub(crate) name: &'static str,
    pub(crate) sqlite: Option<&'static str>,
    pub(crate) postgres: Option<&'static str>,
}

/// `step!(N, "file_name", sqlite, postgres)`: the step's files, each named `NNNN_file_name.sql` in its backend's
/// folder (`-` where the backend has none).
macro_rules! step {
    ($version:literal, $name:literal, $sqlite:tt, $postgres:tt) => {
        Step {
            version: $version,
            name: $name,
            sqlite: step!(@file "sqlite", $version, $name, $sqlite),
            postgres: step!(@file "postgres", $version, $name, $postgres),
        }
    };
    (@file $backend:literal, $version:literal, $name:literal, -) => {
        None
    };
    (@file $backend:literal, $version:literal, $name:literal, $file:literal) => {
        Some(include_str!(concat!("../../../migrations/", $backend, "/", $file)))
    };
}

/// Every step, in order.
pub(crate) const PLAN: &[Step] = &[
    step!(1, "sandbox", "0001_sandbox.sql", "0001_sandbox.sql"),
    step!(2, "outbox", "0002_outbox.sql", -),
    step!(3, "bridge_plan", "0003_bridge_plan.sql", -),
    step!(4, "routing_addresses", "0004_routing_addresses.sql", -),
    step!(5, "outbox_lease", "0005_outbox_lease.sql", -),
    step!(6, "plans_as_json", "0006_plans_as_json.sql", -),
    step!(7, "beyond_spec", "0007_beyond_spec.sql", "0007_beyond_spec.sql"),
    step!(8, "bridge_version", "0008_bridge_version.sql", "0008_bridge_version.sql"),
    step!(9, "feed_time_floor", "0009_feed_time_floor.sql", "0009_feed_time_floor.sql"),
    step!(10, "projects", "0010_projects.sql", "0010_projects.sql"),
    step!(11, "access", "0011_access.sql", "0011_access.sql"),
    step!(12, "delivery_details", "0012_delivery_details.sql", "0012_delivery_details.sql"),
    step!(13, "bridge_address_note", "0013_bridge_address_note.sql", "0013_bridge_address_note.sql"),
    step!(14, "lease_holders", -, "0014_lease_holders.sql"),
    step!(15, "outbox_generation", "0015_outbox_generation.sql", "0015_outbox_generation.sql"),
    step!(16, "faults", "0016_faults.sql", "0016_faults.sql"),
    step!(17, "rate_budgets", -, "0017_rate_budgets.sql"),
    step!(18, "dashboard_sessions", "0018_dashboard_sessions.sql", "0018_dashboard_sessions.sql"),
    step!(19, "retention", "0019_retention.sql", "0019_retention.sql"),
];

/// The number of the plan's last step.
pub(crate) fn last_version() -> i64 {
    PLAN.last().map_or(0, |s| s.version)
}

/// SQLite's migrations: every step number up to the last, in order (an empty one where SQLite has nothing to do,
/// and for a number the plan does not have yet: steps are numbered as teammates reserve them, so the plan may have
/// a gap until the step that fills it lands), so that `user_version` is the number of the last step applied.
pub(crate) fn sqlite() -> rusqlite_migration::Migrations<'static> {
    let text = |version: i64| PLAN.iter().find(|s| s.version == version).and_then(|s| s.sqlite).unwrap_or("");
    rusqlite_migration::Migrations::new((1..=last_version()).map(|v| rusqlite_migration::M::up(text(v))).collect())
}

/// PostgreSQL's migrations, as sqlx's migrator takes them: the steps PostgreSQL has, by their plan numbers.
pub(crate) fn postgres() -> Vec<Migration> {
    PLAN.iter()
        .filter_map(|s| {
            let sql = s.postgres?;
            Some(Migration::new(s.version, s.name.replace('_', " ").into(), MigrationType::Simple, sql.into(), false))
        })
        .collect()
}

/// Gives every migration a PostgreSQL database recorded under an earlier numbering the number of the plan step
/// whose text has its checksum (the module docs); nothing when the database is new or already renumbered.
pub(crate) async fn renumber_recorded(pool: &PgPool) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    let table: Option<String> = sqlx_core::query_scalar::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
        .fetch_one(&mut *tx)
        .await?;
    if table.is_none() {
        return Ok(());
    }
    sqlx_core::query::query("LOCK TABLE _sqlx_migrations IN SHARE ROW EXCLUSIVE MODE").execute(&mut *tx).await?;
    let steps = postgres();
    let (checksums, versions): (Vec<Vec<u8>>, Vec<i64>) =
        steps.iter().map(|m| (m.checksum.to_vec(), m.version)).unzip();
    // Two statements, since a version may move onto one another row still holds: first out of the way (negative),
    // then to the plan's number.
    let moved = sqlx_core::query::query(
        "UPDATE _sqlx_migrations m SET version = -p.version
         FROM UNNEST($1::bytea[], $2::bigint[]) AS p(checksum, version)
         WHERE m.checksum = p.checksum AND m.version <> p.version AND m.version > 0",
    )
    .bind(&checksums)
    .bind(&versions)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if moved > 0 {
        sqlx_core::query::query("UPDATE _sqlx_migrations SET version = -version WHERE version < 0")
            .execute(&mut *tx)
            .await?;
        tracing::info!(migrations = moved, "renumbered the recorded PostgreSQL migrations to the migration plan");
    }
    tx.commit().await?;
    Ok(())
}
