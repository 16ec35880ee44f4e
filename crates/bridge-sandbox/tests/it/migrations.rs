//! The data steps of the migrations, run on real databases: the schema before a migration is made by the migration
//! files before it, rows as an earlier version wrote them are put in, and the migration must carry them over (the
//! schema after every SQLite step is pinned by `infra::store::sqlite::tests::every_migration_step_keeps_its_schema`).

use sqlx_core::query_as::query_as;
use sqlx_core::raw_sql::raw_sql;
use sqlx_postgres::{PgPool, Postgres};

/// The SQLite migrations before 0013, in order.
const SQLITE_BEFORE_0013: &[&str] = &[
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
];

/// The PostgreSQL migrations before 0010, in order.
const POSTGRES_BEFORE_0010: &[&str] = &[
    include_str!("../../migrations/postgres/0001_sandbox.sql"),
    include_str!("../../migrations/postgres/0002_beyond_spec.sql"),
    include_str!("../../migrations/postgres/0003_feed_time_floor.sql"),
    include_str!("../../migrations/postgres/0004_bridge_version.sql"),
    include_str!("../../migrations/postgres/0005_projects.sql"),
    include_str!("../../migrations/postgres/0007_access.sql"),
    include_str!("../../migrations/postgres/0008_lease_holders.sql"),
    include_str!("../../migrations/postgres/0009_delivery_details.sql"),
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
    for sql in SQLITE_BEFORE_0013 {
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
async fn postgres_0010_gives_deposit_address_bridges_their_address_s_note() {
    let Some((_server, url)) = crate::pg::database() else { return };
    let pool = PgPool::connect(&url).await.unwrap();
    for sql in POSTGRES_BEFORE_0010 {
        raw_sql(sql).execute(&pool).await.unwrap();
    }
    raw_sql(ROWS_WITHOUT_NOTES).execute(&pool).await.unwrap();
    raw_sql(include_str!("../../migrations/postgres/0010_bridge_address_note.sql")).execute(&pool).await.unwrap();
    let notes: Vec<(String, Option<String>)> = query_as::<Postgres, _>(NOTES).fetch_all(&pool).await.unwrap();
    assert_eq!(notes, notes_kept());
}
