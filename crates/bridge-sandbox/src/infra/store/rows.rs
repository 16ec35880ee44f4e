//! Stored types read from a result row, once for both backends. A backend's row ([`Columns`]: rusqlite's `Row`,
//! sqlx's `PgRow`) is read by column position, in the order of the column list that the type's area names
//! beside its [`FromRow`] (`store/<area>.rs`), which the area's `SELECT`s name too. The driver types a column
//! decodes to are the ones both drivers share for the two schemas (`TEXT` as `String`, `BIGINT` / `INTEGER` as
//! `i64`, PostgreSQL's `INT` columns as `i32`, `BOOLEAN` / 0-1 integers as `bool`).

use sqlx_postgres::Postgres;

use super::StoreResult;

/// A column value both drivers decode.
pub(super) trait Column:
    rusqlite::types::FromSql + for<'r> sqlx_core::decode::Decode<'r, Postgres> + sqlx_core::types::Type<Postgres>
{
}

impl<T> Column for T where
    T: rusqlite::types::FromSql + for<'r> sqlx_core::decode::Decode<'r, Postgres> + sqlx_core::types::Type<Postgres>
{
}

/// A result row of either backend, read by column position.
pub(super) trait Columns {
    fn at<T: Column>(&self, index: usize) -> StoreResult<T>;
}

/// A value read from one result row whose columns are the type's column list.
pub(super) trait FromRow: Sized {
    fn from_row(row: &impl Columns) -> StoreResult<Self>;
}

/// A row of one column (a count, a flag, an id), read as its value.
pub(super) struct One<T>(pub(super) T);

impl<T: Column> FromRow for One<T> {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(One(row.at(0)?))
    }
}

/// A row of two columns, read as their values.
pub(super) struct Two<A, B>(pub(super) A, pub(super) B);

impl<A: Column, B: Column> FromRow for Two<A, B> {
    fn from_row(row: &impl Columns) -> StoreResult<Self> {
        Ok(Two(row.at(0)?, row.at(1)?))
    }
}
