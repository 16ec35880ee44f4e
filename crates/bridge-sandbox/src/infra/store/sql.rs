//! The SQL both backends run, written once: each statement is one text with numbered placeholders (`?1`, `?2`,
//! ...), and the few places where SQLite and PostgreSQL spell a thing differently are rewritten here, in
//! [`sqlite`] and [`postgres`], and nowhere else. The text is written in the spelling both read, or in
//! PostgreSQL's where one of them must change:
//!
//! | written                 | SQLite                | PostgreSQL            |
//! |-------------------------|-----------------------|-----------------------|
//! | `?1`                    | `?1`                  | `$1`                  |
//! | `greatest(a, b)`        | `max(a, b)`           | `greatest(a, b)`      |
//! | `col::jsonb ->> 'name'` | `json_extract(col, '$.name')` | the same          |
//! | other `col::jsonb`      | `col` (JSON text)     | the same              |
//! | `jsonb_array_elements(` | `json_each(`          | `jsonb_array_elements(` |
//! | `jsonb_array_elements_text(` | `json_each(`     | `jsonb_array_elements_text(` |
//! | `t INDEXED BY index`    | the same              | `t` (the planner picks) |
//! | ` FOR UPDATE SKIP LOCKED` | (nothing: one writer) | the same            |
//! | `wall_ms()`             | [`SQLITE_WALL_MS`]    | [`POSTGRES_WALL_MS`]  |
//!
//! Both read `TRUE` / `FALSE`, `RETURNING`, `ON CONFLICT`, row values and `CAST(?1 AS TEXT)` (which gives a
//! parameter that may be `NULL` its type on PostgreSQL). A statement whose logic differs between the backends
//! (PostgreSQL's leases, locks and `feed_head`) stays in its backend's area file.
//!
//! A [`Sql`] is rendered once per backend and kept (a `static` statement costs one atomic load per use: measured
//! against the hand-written texts in `docs/performance.md`); its arguments are [`Arg`]s, which either driver
//! binds.

use std::sync::OnceLock;

use sqlx_core::encode::{Encode, IsNull};
use sqlx_core::error::BoxDynError;
use sqlx_core::types::Type;
use sqlx_postgres::{PgArgumentBuffer, PgTypeInfo, Postgres};

/// One statement of the store, for both backends: its text is written once ([`sql!`]) and rendered for each
/// backend the first time that backend runs it.
pub(crate) struct Sql {
    write: fn() -> String,
    sqlite: OnceLock<String>,
    postgres: OnceLock<String>,
}

impl Sql {
    pub(crate) const fn new(write: fn() -> String) -> Self {
        Self { write, sqlite: OnceLock::new(), postgres: OnceLock::new() }
    }

    /// The statement as SQLite reads it.
    pub(crate) fn sqlite(&self) -> &str {
        self.sqlite.get_or_init(|| sqlite(&(self.write)()))
    }

    /// The statement as PostgreSQL reads it.
    pub(crate) fn postgres(&self) -> &str {
        self.postgres.get_or_init(|| postgres(&(self.write)()))
    }
}

/// A `static` [`Sql`]: `sql!("SELECT {QUOTE_COLUMNS} FROM quotes WHERE id = ?1")` (a `format!` string: the
/// column lists of `rows` are named inline).
macro_rules! sql {
    ($text:literal) => {
        $crate::infra::store::sql::Sql::new(|| format!($text))
    };
}
pub(crate) use sql;

/// The wall-clock time, in milliseconds since the Unix epoch, on the host's clock, as SQLite computes it: what
/// `wall_ms()` is on SQLite (rows keep it as `stored_ms`, the time retention measures ages on).
pub(crate) const SQLITE_WALL_MS: &str = "CAST(round(unixepoch('subsec') * 1000) AS INTEGER)";

/// The wall-clock time, in milliseconds since the Unix epoch, on the database server's clock (the one clock every
/// instance on the database shares; `clock_timestamp()`, not the transaction's start): `wall_ms()` on PostgreSQL.
pub(crate) const POSTGRES_WALL_MS: &str = "CAST(round(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)";

/// A statement's text as SQLite reads it: `greatest(` is `max(`, a JSON member `column::jsonb ->> 'name'` is
/// `json_extract(column, '$.name')` (the spelling SQLite's expression indexes on JSON members are made with), any
/// other `::jsonb` goes (SQLite reads JSON text as it is), `jsonb_array_elements(` and
/// `jsonb_array_elements_text(` are `json_each(`, row locks (` FOR UPDATE SKIP LOCKED`) go (one writer at a time
/// takes no row locks), and `wall_ms()` is [`SQLITE_WALL_MS`].
pub(crate) fn sqlite(text: &str) -> String {
    let text = text
        .replace("greatest(", "max(")
        .replace("jsonb_array_elements(", "json_each(")
        .replace("jsonb_array_elements_text(", "json_each(")
        .replace(" FOR UPDATE SKIP LOCKED", "")
        .replace("wall_ms()", SQLITE_WALL_MS);
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text.as_str();
    while let Some(at) = rest.find("::jsonb") {
        let (before, after) = (&rest[..at], &rest[at + "::jsonb".len()..]);
        let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).map_or(0, |i| i + 1);
        let (head, column) = before.split_at(start);
        out.push_str(head);
        let member = after.strip_prefix(" ->> '").and_then(|m| m.split_once('\''));
        match member {
            Some((name, tail)) => {
                out.push_str(&format!("json_extract({column}, '$.{name}')"));
                rest = tail;
            }
            None => {
                out.push_str(column);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A statement's text as PostgreSQL reads it: `?N` is `$N`, SQLite's index hints (`INDEXED BY name`) go
/// (PostgreSQL's planner picks its indexes itself), and `wall_ms()` is [`POSTGRES_WALL_MS`].
pub(crate) fn postgres(text: &str) -> String {
    let text = text.replace("wall_ms()", POSTGRES_WALL_MS);
    let text = text.as_str();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" INDEXED BY ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " INDEXED BY ".len()..];
        rest = after.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    }
    out.push_str(rest);
    let mut chars = out.chars().peekable();
    let mut text = String::with_capacity(out.len());
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            text.push('$');
        } else {
            text.push(c);
        }
    }
    text
}

/// A statement and its arguments, in placeholder order.
pub(crate) struct Query {
    pub(crate) text: Text,
    pub(crate) args: Vec<Arg>,
}

/// A statement's text: written once ([`Sql`]), or made for this call (an order the request chose).
pub(crate) enum Text {
    Fixed(&'static Sql),
    Made(String),
}

impl Query {
    /// A statement made for this call, from a text written as [`sql!`]'s are.
    pub(crate) fn made(text: String, args: Vec<Arg>) -> Self {
        Self { text: Text::Made(text), args }
    }
}

impl Text {
    pub(crate) fn sqlite(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Text::Fixed(sql) => sql.sqlite().into(),
            Text::Made(text) => sqlite(text).into(),
        }
    }

    pub(crate) fn postgres(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Text::Fixed(sql) => sql.postgres().into(),
            Text::Made(text) => postgres(text).into(),
        }
    }
}

/// `query!("... ?1 ... ?2", a, b)`: a [`Query`] whose text is a `static` [`Sql`] (a `format!` string: column lists
/// are named inline) and whose arguments are `a`, `b`, each converted `Into<Arg>`.
macro_rules! query {
    ($text:literal $(, $arg:expr)* $(,)?) => {{
        static SQL: $crate::infra::store::sql::Sql = $crate::infra::store::sql::sql!($text);
        $crate::infra::store::sql::Query {
            text: $crate::infra::store::sql::Text::Fixed(&SQL),
            args: vec![$($crate::infra::store::sql::Arg::from($arg)),*],
        }
    }};
}
pub(crate) use query;

/// An argument of a statement, typed for PostgreSQL (a `NULL` keeps its type there).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Int(Option<i64>),
    Text(Option<String>),
    Bool(Option<bool>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}

impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

impl From<u32> for Arg {
    fn from(v: u32) -> Self {
        Arg::Int(Some(v.into()))
    }
}

impl From<bool> for Arg {
    fn from(v: bool) -> Self {
        Arg::Bool(Some(v))
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(Some(v))
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(Some(v.to_owned()))
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(Some(v.clone()))
    }
}

impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v)
    }
}

impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Self {
        Arg::Text(v.map(str::to_owned))
    }
}

impl From<&Option<String>> for Arg {
    fn from(v: &Option<String>) -> Self {
        Arg::Text(v.clone())
    }
}

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Arg::Int(Some(v)) => ToSqlOutput::Owned(rusqlite::types::Value::Integer(*v)),
            Arg::Bool(Some(v)) => ToSqlOutput::Owned(rusqlite::types::Value::Integer(i64::from(*v))),
            Arg::Text(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Arg::Int(None) | Arg::Text(None) | Arg::Bool(None) => ToSqlOutput::Owned(rusqlite::types::Value::Null),
        })
    }
}

impl Type<Postgres> for Arg {
    /// Each value says its own type ([`Encode::produces`]); this one is never used alone.
    fn type_info() -> PgTypeInfo {
        <String as Type<Postgres>>::type_info()
    }

    fn compatible(_: &PgTypeInfo) -> bool {
        true
    }
}

impl Encode<'_, Postgres> for Arg {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        match self {
            Arg::Int(v) => <Option<i64> as Encode<Postgres>>::encode_by_ref(v, buf),
            Arg::Text(v) => <Option<String> as Encode<Postgres>>::encode_by_ref(v, buf),
            Arg::Bool(v) => <Option<bool> as Encode<Postgres>>::encode_by_ref(v, buf),
        }
    }

    fn produces(&self) -> Option<PgTypeInfo> {
        Some(match self {
            Arg::Int(_) => <i64 as Type<Postgres>>::type_info(),
            Arg::Text(_) => <String as Type<Postgres>>::type_info(),
            Arg::Bool(_) => <bool as Type<Postgres>>::type_info(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backend_reads_its_own_spelling() {
        let text = "SELECT greatest(a, ?1) FROM t INDEXED BY t_by_a WHERE body::jsonb ->> 'x' = ?12 AND EXISTS \
                    (SELECT 1 FROM jsonb_array_elements(r::jsonb) e WHERE e.value::jsonb ->> 'y' = ?2) AND q = '?'";
        assert_eq!(
            sqlite(text),
            "SELECT max(a, ?1) FROM t INDEXED BY t_by_a WHERE json_extract(body, '$.x') = ?12 AND EXISTS \
             (SELECT 1 FROM json_each(r) e WHERE json_extract(e.value, '$.y') = ?2) AND q = '?'"
        );
        assert_eq!(
            postgres(text),
            "SELECT greatest(a, $1) FROM t WHERE body::jsonb ->> 'x' = $12 AND EXISTS \
             (SELECT 1 FROM jsonb_array_elements(r::jsonb) e WHERE e.value::jsonb ->> 'y' = $2) AND q = '?'"
        );
        let purge = "DELETE FROM t WHERE stored_ms < wall_ms() AND id IN (SELECT value FROM \
                     jsonb_array_elements_text(?1::jsonb)) AND k IN (SELECT k FROM t LIMIT 5 FOR UPDATE SKIP LOCKED)";
        assert_eq!(
            sqlite(purge),
            format!(
                "DELETE FROM t WHERE stored_ms < {SQLITE_WALL_MS} AND id IN (SELECT value FROM json_each(?1)) \
                 AND k IN (SELECT k FROM t LIMIT 5)"
            )
        );
        assert_eq!(
            postgres(purge),
            format!(
                "DELETE FROM t WHERE stored_ms < {POSTGRES_WALL_MS} AND id IN (SELECT value FROM \
                 jsonb_array_elements_text($1::jsonb)) AND k IN (SELECT k FROM t LIMIT 5 FOR UPDATE SKIP LOCKED)"
            )
        );
    }
}
