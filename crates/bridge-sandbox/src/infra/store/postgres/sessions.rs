//! [`SessionStore`] on PostgreSQL, shared by instances: sign-ins take turns (a transaction-scoped advisory lock),
//! so the caps hold across instances; reading and clearing a notice locks its row.

use async_trait::async_trait;

use super::{commit, execute, select_first, select_one, PgStore};
use crate::infra::store::rows::{One, Two};
use crate::infra::store::sessions::{self, NewSession, SessionCaps, SessionStore, StoredSession};
use crate::infra::store::sql::query;
use crate::infra::store::StoreResult;

/// The advisory lock sign-ins take turns on (any constant of the database's lock space; this one is "dash").
const SIGN_IN_LOCK: i64 = 0x6461_7368;

#[async_trait]
impl SessionStore for PgStore {
    async fn start_session(&self, new: &NewSession, caps: SessionCaps) -> StoreResult<Result<(), i64>> {
        let mut tx = self.pool.begin().await?;
        execute(&mut *tx, query!("SELECT pg_advisory_xact_lock(?1)", SIGN_IN_LOCK)).await?;
        execute(&mut *tx, sessions::delete_ended(new.now_ms)).await?;
        let One(own) = select_one::<One<i64>>(&mut *tx, sessions::count_of(&new.project)).await?;
        if own as u64 >= caps.per_project {
            let beyond = own - caps.per_project as i64 + 1;
            execute(&mut *tx, sessions::delete_least_used(&new.project, beyond)).await?;
        } else {
            let Two(all, first_end) =
                select_one::<Two<i64, Option<i64>>>(&mut *tx, sessions::count_and_first_end()).await?;
            if all as u64 >= caps.total {
                return Ok(Err(first_end.unwrap_or(new.now_ms))); // rolled back when dropped: nothing written
            }
        }
        execute(&mut *tx, sessions::insert(new)).await?;
        commit(tx).await?;
        Ok(Ok(()))
    }

    async fn session(&self, id_hash: &str, now_ms: i64) -> StoreResult<Option<StoredSession>> {
        if let Some(session) = select_first(&self.pool, sessions::live(id_hash, now_ms)).await? {
            return Ok(Some(session));
        }
        execute(&self.pool, sessions::delete_if_ended(id_hash, now_ms)).await?;
        Ok(None)
    }

    async fn touch_session(&self, id_hash: &str, used_ms: i64, expires_ms: i64) -> StoreResult<()> {
        execute(&self.pool, sessions::touch(id_hash, used_ms, expires_ms)).await.map(drop)
    }

    async fn take_session_notice(&self, id_hash: &str) -> StoreResult<Option<String>> {
        let mut tx = self.pool.begin().await?;
        let locked = query!("SELECT notice FROM dashboard_sessions WHERE id_hash = ?1 FOR UPDATE", id_hash);
        let notice = select_first::<One<Option<String>>>(&mut *tx, locked).await?.and_then(|One(n)| n);
        if notice.is_some() {
            execute(&mut *tx, sessions::clear_notice(id_hash)).await?;
            commit(tx).await?;
        }
        Ok(notice)
    }

    async fn leave_session_notice(&self, id_hash: &str, notice: &str) -> StoreResult<()> {
        execute(&self.pool, sessions::leave_notice(id_hash, notice)).await.map(drop)
    }

    async fn end_session(&self, id_hash: &str) -> StoreResult<()> {
        execute(&self.pool, sessions::end(id_hash)).await.map(drop)
    }

    async fn session_count(&self) -> StoreResult<u64> {
        let One(n) = select_one::<One<i64>>(&self.pool, sessions::count()).await?;
        Ok(n as u64)
    }
}
