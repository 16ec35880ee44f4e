//! [`SessionStore`] on SQLite: one writer, so a sign-in's reads and writes in one write closure are atomic.

use async_trait::async_trait;

use super::{execute, select_first, select_one, SqliteStore};
use crate::infra::store::rows::{One, Two};
use crate::infra::store::sessions::{self, NewSession, SessionCaps, SessionStore, StoredSession};
use crate::infra::store::StoreResult;

#[async_trait]
impl SessionStore for SqliteStore {
    async fn start_session(&self, new: &NewSession, caps: SessionCaps) -> StoreResult<Result<(), i64>> {
        let new = new.clone();
        self.run(move |c| {
            execute(c, &sessions::delete_ended(new.now_ms))?;
            let One(own) = select_one::<One<i64>>(c, &sessions::count_of(&new.project))?;
            if own as u64 >= caps.per_project {
                let beyond = own - caps.per_project as i64 + 1;
                execute(c, &sessions::delete_least_used(&new.project, beyond))?;
            } else {
                let Two(all, first_end) = select_one::<Two<i64, Option<i64>>>(c, &sessions::count_and_first_end())?;
                if all as u64 >= caps.total {
                    return Ok(Err(first_end.unwrap_or(new.now_ms)));
                }
            }
            execute(c, &sessions::insert(&new))?;
            Ok(Ok(()))
        })
        .await
    }

    async fn session(&self, id_hash: &str, now_ms: i64) -> StoreResult<Option<StoredSession>> {
        let read = sessions::live(id_hash, now_ms);
        if let Some(session) = self.read_now(move |c| select_first(c, &read)).await? {
            return Ok(Some(session));
        }
        let delete = sessions::delete_if_ended(id_hash, now_ms);
        self.run(move |c| execute(c, &delete)).await?;
        Ok(None)
    }

    async fn touch_session(&self, id_hash: &str, used_ms: i64, expires_ms: i64) -> StoreResult<()> {
        let touch = sessions::touch(id_hash, used_ms, expires_ms);
        self.run(move |c| execute(c, &touch).map(drop)).await
    }

    async fn take_session_notice(&self, id_hash: &str) -> StoreResult<Option<String>> {
        let (read, clear) = (sessions::notice(id_hash), sessions::clear_notice(id_hash));
        self.run(move |c| {
            let notice = select_first::<One<Option<String>>>(c, &read)?.and_then(|One(n)| n);
            if notice.is_some() {
                execute(c, &clear)?;
            }
            Ok(notice)
        })
        .await
    }

    async fn leave_session_notice(&self, id_hash: &str, notice: &str) -> StoreResult<()> {
        let leave = sessions::leave_notice(id_hash, notice);
        self.run(move |c| execute(c, &leave).map(drop)).await
    }

    async fn end_session(&self, id_hash: &str) -> StoreResult<()> {
        let end = sessions::end(id_hash);
        self.run(move |c| execute(c, &end).map(drop)).await
    }

    async fn session_count(&self) -> StoreResult<u64> {
        let count = sessions::count();
        let One(n) = self.read(move |c| select_one::<One<i64>>(c, &count)).await?;
        Ok(n as u64)
    }
}
