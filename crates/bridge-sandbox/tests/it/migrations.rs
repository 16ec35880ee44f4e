//! The migrations, run on real databases. The data steps: the schema before a migration is made by the migration
//! files before it, rows as an earlier version wrote them are put in, and the migration must carry them over (the
//! schema after every SQLite step is pinned by `infra::store::sqlite::tests::every_migration_step_keeps_its_schema`).
//! The plan: a database migrated by an earlier version (every SQLite version from the released 0.1.0 on, every
//! PostgreSQL state under its earlier numbering) opens with this one and is migrated to the plan's last step, its
//! rows kept.

use std::sync::Arc;

use bridge_sandbox::store::{Counter, Store};
use sqlx_core::migrate::{Migration, MigrationType, Migrator};
use sqlx_core::query_as::query_as;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::raw_sql::raw_sql;
use sqlx_postgres::{PgPool, Postgres};

/// The PostgreSQL migrations before 0013, in order.
const POSTGRES_BEFORE_0013: &[&str] = &[
    include_str!("../../migrations/postgres/0001_sandbox.sql"),
    include_str!("../../migrations/postgres/0007_beyond_spec.sql"),
    include_str!("../../migrations/postgres/0008_bridge_version.sql"),
    include_str!("../../migrations/postgres/0009_feed_time_floor.sql"),
    include_str!("../../migrations/postgres/0010_projects.sql"),
    include_str!("../../migrations/postgres/0011_access.sql"),
    include_str!("../../migrations/postgres/0012_delivery_details.sql"),
];

/// Two addresses with notes and four bridges as versions before the address note wrote them: two deposit-address
/// bridges of those addresses, one of an address on another chain, and a plain bridge naming an address.
const ROWS_WITHOUT_NOTES: &str = r#"
    INSERT INTO addresses (project, deposit_chain, deposit_address, reuse_key, body, search_item, created_ms)
        VALUES ('p', 'ETHEREUM', '0xsda', 'k', '{"addressNote":"desk"}', '{}', 0);
    INSERT INTO routing_addresses (project, deposit_chain, deposit_address, body, created_ms)
        VALUES ('p', 'ETHEREUM', '0xrouting', '{"addressNote":"router"}', 0);
    INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms) VALUES
        ('a', 'p', '{"_tag":"depositAddressBridge","chainIn":"ETHEREUM","depositAddress":"0xsda"}', '[]', 'PENDING', 0, 0),
        ('b', 'p', '{"_tag":"depositAddressBridge","chainIn":"ETHEREUM","depositAddress":"0xrouting"}', '[]', 'PENDING', 0, 0),
        ('c', 'p', '{"_tag":"depositAddressBridge","chainIn":"BASE","depositAddress":"0xsda"}', '[]', 'PENDING', 0, 0),
        ('d', 'p', '{"_tag":"bridge","chainIn":"ETHEREUM","depositAddress":"0xsda"}', '[]', 'PENDING', 0, 0);
"#;

/// What the address-note migration must make of [`ROWS_WITHOUT_NOTES`]: each deposit-address bridge gets the note
/// of the address that received its deposit (on the record's `chainIn`), other bridges none.
fn notes_kept() -> Vec<(String, Option<String>)> {
    [("a", Some("desk")), ("b", Some("router")), ("c", None), ("d", None)]
        .map(|(id, note)| (id.to_owned(), note.map(str::to_owned)))
        .to_vec()
}

const NOTES: &str = "SELECT id, address_note FROM bridges ORDER BY id";

#[test]
fn sqlite_0013_gives_deposit_address_bridges_their_address_s_note() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    for sql in &SQLITE_MIGRATIONS[..12] {
        // every step before 0013
        conn.execute_batch(sql).unwrap();
    }
    conn.execute_batch(ROWS_WITHOUT_NOTES).unwrap();
    conn.execute_batch(include_str!("../../migrations/sqlite/0013_bridge_address_note.sql")).unwrap();
    let mut stmt = conn.prepare(NOTES).unwrap();
    let notes: Vec<(String, Option<String>)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(notes, notes_kept());
}

#[tokio::test]
async fn postgres_0013_gives_deposit_address_bridges_their_address_s_note() {
    let Some((_server, url)) = crate::pg::database() else { return };
    let pool = PgPool::connect(&url).await.unwrap();
    for sql in POSTGRES_BEFORE_0013 {
        raw_sql(sql).execute(&pool).await.unwrap();
    }
    raw_sql(ROWS_WITHOUT_NOTES).execute(&pool).await.unwrap();
    raw_sql(include_str!("../../migrations/postgres/0013_bridge_address_note.sql")).execute(&pool).await.unwrap();
    let notes: Vec<(String, Option<String>)> = query_as::<Postgres, _>(NOTES).fetch_all(&pool).await.unwrap();
    assert_eq!(notes, notes_kept());
}

/// Every SQLite migration, in the order data directories applied them (SQLite's numbering never changed; the
/// first five are the released 0.1.0's, the same statements as the files).
const SQLITE_MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/sqlite/0001_sandbox.sql"),
    include_str!("../../migrations/sqlite/0002_outbox.sql"),
    include_str!("../../migrations/sqlite/0003_bridge_plan.sql"),
    include_str!("../../migrations/sqlite/0004_routing_addresses.sql"),
    include_str!("../../migrations/sqlite/0005_outbox_lease.sql"),
    include_str!("../../migrations/sqlite/0006_plans_as_json.sql"),
    include_str!("../../migrations/sqlite/0007_beyond_spec.sql"),
    include_str!("../../migrations/sqlite/0008_bridge_version.sql"),
    include_str!("../../migrations/sqlite/0009_feed_time_floor.sql"),
    include_str!("../../migrations/sqlite/0010_projects.sql"),
    include_str!("../../migrations/sqlite/0011_access.sql"),
    include_str!("../../migrations/sqlite/0012_delivery_details.sql"),
    include_str!("../../migrations/sqlite/0013_bridge_address_note.sql"),
];

/// PostgreSQL's migrations as they were numbered before the plan (versions 1, 2, 3, 4, 5, 7, 8, 9, 10 in
/// `_sqlx_migrations`): the same texts, now filed under the plan's numbers.
const POSTGRES_OLD_NUMBERING: &[(i64, &str, &str)] = &[
    (1, "sandbox", include_str!("../../migrations/postgres/0001_sandbox.sql")),
    (2, "beyond spec", include_str!("../../migrations/postgres/0007_beyond_spec.sql")),
    (3, "feed time floor", include_str!("../../migrations/postgres/0009_feed_time_floor.sql")),
    (4, "bridge version", include_str!("../../migrations/postgres/0008_bridge_version.sql")),
    (5, "projects", include_str!("../../migrations/postgres/0010_projects.sql")),
    (7, "access", include_str!("../../migrations/postgres/0011_access.sql")),
    (8, "lease holders", include_str!("../../migrations/postgres/0014_lease_holders.sql")),
    (9, "delivery details", include_str!("../../migrations/postgres/0012_delivery_details.sql")),
    (10, "bridge address note", include_str!("../../migrations/postgres/0013_bridge_address_note.sql")),
];

/// The plan's numbers of [`POSTGRES_OLD_NUMBERING`], in its order.
const POSTGRES_RENUMBERED: &[i64] = &[1, 7, 9, 8, 10, 11, 14, 12, 13];

/// A counter as every version kept it (`meta`, as the first migration made it): 41 quote ids given out.
const OLD_COUNTER: &str = "INSERT INTO meta (key, value) VALUES ('counter:quote', '41')";

/// An SQLite data directory left at each earlier version (`user_version` 1 to 13: 5 is the released 0.1.0's)
/// opens with the plan: it is migrated to the last step and its rows are there.
#[tokio::test]
async fn sqlite_databases_of_every_earlier_version_migrate_to_the_plan() {
    for version in 1..=SQLITE_MIGRATIONS.len() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut conn = rusqlite::Connection::open(dir.path().join("sandbox.db")).unwrap();
            let earlier = rusqlite_migration::Migrations::new(
                SQLITE_MIGRATIONS[..version].iter().map(|sql| rusqlite_migration::M::up(sql)).collect(),
            );
            earlier.to_latest(&mut conn).unwrap();
            conn.execute_batch(OLD_COUNTER).unwrap();
        }
        let store: Arc<dyn Store> = Arc::new(bridge_sandbox::store::SqliteStore::open(dir.path()).unwrap());
        let status = store.schema_status().await.unwrap();
        assert_eq!(status.applied, status.known, "from version {version}");
        assert!(status.known > SQLITE_MIGRATIONS.len(), "the plan's steps (14 and later) are known");
        assert_eq!(store.reserve_counter(Counter::Quote, 1).await.unwrap(), 42, "the counter kept from {version}");
    }
}

/// A PostgreSQL database left at each earlier state under the earlier numbering (the first 1 to 9 migrations, as
/// sqlx recorded them) opens with the plan: its recorded versions become the plan's (checksums unchanged), the
/// steps it lacks are applied, its rows are there; opening it again changes nothing.
#[tokio::test]
async fn postgres_databases_of_every_earlier_numbering_migrate_to_the_plan() {
    for applied in 1..=POSTGRES_OLD_NUMBERING.len() {
        let Some((_server, url)) = crate::pg::database() else { return };
        let pool = PgPool::connect(&url).await.unwrap();
        let earlier = POSTGRES_OLD_NUMBERING[..applied]
            .iter()
            .map(|(version, name, sql)| {
                Migration::new(*version, (*name).into(), MigrationType::Simple, (*sql).into(), false)
            })
            .collect::<Vec<_>>();
        Migrator { migrations: earlier.into(), ..Migrator::DEFAULT }.run(&pool).await.unwrap();
        raw_sql(OLD_COUNTER).execute(&pool).await.unwrap();
        for reserved in [42, 43] {
            let store: Arc<dyn Store> = Arc::new(bridge_sandbox::store::PgStore::connect(&url).await.unwrap());
            let status = store.schema_status().await.unwrap();
            assert_eq!(status.applied, status.known, "from {applied}");
            assert_eq!(
                store.reserve_counter(Counter::Quote, 1).await.unwrap(),
                reserved,
                "the counter kept from {applied}"
            );
            let recorded: Vec<i64> =
                query_scalar::<Postgres, i64>("SELECT version FROM _sqlx_migrations ORDER BY version")
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            // Every step of the plan is recorded once, under its plan number: the old migrations renumbered
            // (2, 3, 4 and 5 are no longer numbers of PostgreSQL's), the others applied.
            assert_eq!(recorded.len(), status.known, "recorded after opening a database of {applied} migrations");
            assert!(POSTGRES_RENUMBERED.iter().all(|v| recorded.contains(v)), "{recorded:?}");
            assert!(![2, 3, 4, 5].iter().any(|v| recorded.contains(v)), "{recorded:?}");
        }
    }
}
