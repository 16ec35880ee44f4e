//! [`Writer`]: SQLite's one writing connection on a thread of its own, committing concurrent writes together
//! (group commit).
//!
//! A write is a closure queued to the writer thread. The thread takes every write queued while it was busy (up
//! to [`MAX_BATCH`]), runs them in order in **one** transaction, each inside its own `SAVEPOINT` so that a write
//! that fails is rolled back alone and the others stand, then `COMMIT`s once: one fsync (`synchronous = FULL`)
//! for the whole batch instead of one per write. Each caller is answered only **after** that `COMMIT` has
//! returned, with its own closure's result, or with the commit's error if the commit failed (then nothing of the
//! batch was made durable and nobody was told otherwise): "acknowledged means durable" holds as before.
//!
//! Nothing waits on purpose: a batch is whatever queued during the previous commit, so a lone write commits at
//! once, and under load the batch grows with the number of concurrent writers. The writes of a batch run one
//! after another on one connection, so each sees the ones before it, exactly as if they had committed one by
//! one; feed positions stay in commit order. A closure that panics is answered with an error and its savepoint
//! is rolled back; the thread goes on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use rusqlite::Connection;

use crate::infra::store::{StoreError, StoreResult};

/// The most writes committed together.
pub const MAX_BATCH: usize = 128;

/// How a batch's `COMMIT` ended, told to each write of the batch.
type Committed = Result<(), String>;

/// A queued write: runs on the writer thread and says whether it succeeded; the answer it returns is called with
/// the batch's commit outcome.
type Job = Box<dyn FnOnce(&Connection) -> (bool, Reply) + Send>;
type Reply = Box<dyn FnOnce(Committed) + Send>;

/// The writer thread's queue. Dropping it lets the thread finish the batch it has and stop.
pub struct Writer {
    jobs: mpsc::Sender<Job>,
    /// Batches committed so far (the tests count them).
    #[cfg(test)]
    commits: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the writer thread, which owns `conn` from now on.
    pub fn start(conn: Connection) -> StoreResult<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let commits = Arc::new(AtomicU64::new(0));
        let counted = commits.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || commit_batches(conn, queue, &counted))
            .map_err(|e| StoreError::new(e).context("starting the store's writer thread"))?;
        #[cfg(not(test))]
        drop(commits);
        Ok(Self {
            jobs,
            #[cfg(test)]
            commits,
        })
    }

    /// How many batches have been committed (or have failed to commit) so far.
    #[cfg(test)]
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Runs the write `f` in the next batch and answers once that batch is durable.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let (answer, answered) = tokio::sync::oneshot::channel::<StoreResult<T>>();
        let job: Job = Box::new(move |conn| {
            let result = catch_unwind(AssertUnwindSafe(|| f(conn))).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(StoreError::new(anyhow::anyhow!("a store write panicked: {what}")))
            });
            let succeeded = result.is_ok();
            let reply: Reply = Box::new(move |committed: Committed| {
                let outcome = match (result, committed) {
                    (Ok(value), Ok(())) => Ok(value),
                    (Ok(_), Err(e)) => Err(StoreError::new(anyhow::anyhow!("committing: {e}"))),
                    (Err(e), _) => Err(e),
                };
                // The caller may have gone (its request was dropped): the write stands all the same.
                let _ = answer.send(outcome);
            });
            (succeeded, reply)
        });
        self.jobs.send(job).map_err(|_| StoreError::new(anyhow::anyhow!("the store's writer thread has stopped")))?;
        answered.await.map_err(|_| StoreError::new(anyhow::anyhow!("the store's writer dropped a write unanswered")))?
    }
}

/// The writer thread: batch, run, commit, answer; until every [`Writer`] is dropped.
fn commit_batches(conn: Connection, queue: mpsc::Receiver<Job>, commits: &AtomicU64) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        if let Err(e) = exec(&conn, "BEGIN IMMEDIATE") {
            // The writes are dropped unanswered: each caller gets an error, nothing was written.
            tracing::error!(error = %e, writes = batch.len(), "could not begin a write transaction");
            continue;
        }
        let answers = run_batch(&conn, batch);
        let ran = started.elapsed();
        let committed = exec(&conn, "COMMIT").map_err(|e| e.to_string());
        commits.fetch_add(1, Ordering::Relaxed);
        metrics::histogram!(crate::infra::telemetry::STORE_COMMIT_DURATION, "backend" => "sqlite")
            .record((started.elapsed() - ran).as_secs_f64());
        metrics::histogram!(crate::infra::telemetry::STORE_GROUP_COMMIT_WRITES).record(answers.len() as f64);
        tracing::trace!(
            writes = answers.len(),
            run_us = ran.as_micros() as u64,
            commit_us = (started.elapsed() - ran).as_micros() as u64,
            "group commit"
        );
        if let Err(e) = &committed {
            tracing::error!(error = %e, writes = answers.len(), "a group commit failed; none of its writes stand");
            let _ = exec(&conn, "ROLLBACK");
        }
        for answer in answers {
            answer(committed.clone());
        }
    }
}

/// Runs one statement, prepared once per connection (these run several times per batch).
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

/// Runs each write of the batch in its own savepoint of the open transaction. A write that cannot be started is
/// dropped unanswered (its caller gets an error); a write that fails is rolled back to its savepoint.
fn run_batch(conn: &Connection, batch: Vec<Job>) -> Vec<Reply> {
    let mut answers = Vec::with_capacity(batch.len());
    for job in batch {
        if let Err(e) = exec(conn, "SAVEPOINT write") {
            tracing::error!(error = %e, "could not open a savepoint for a write");
            continue;
        }
        let (succeeded, answer) = job(conn);
        let closed = if succeeded {
            exec(conn, "RELEASE write")
        } else {
            exec(conn, "ROLLBACK TO write").and_then(|()| exec(conn, "RELEASE write"))
        };
        match closed {
            Ok(()) => answers.push(answer),
            // The write's changes cannot be told apart from the batch's any more: fail the whole batch.
            Err(e) => {
                tracing::error!(error = %e, "could not close a write's savepoint");
                let _ = exec(conn, "ROLLBACK");
                let failed = Err(format!("closing a write's savepoint: {e}"));
                answers.push(answer);
                for answer in answers.drain(..) {
                    answer(failed.clone());
                }
                let _ = exec(conn, "BEGIN IMMEDIATE");
            }
        }
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn writer() -> (tempfile::TempDir, Writer, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t (n INTEGER PRIMARY KEY)").unwrap();
        (dir, Writer::start(conn).unwrap(), path)
    }

    fn stored(path: &std::path::Path) -> Vec<i64> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn.prepare("SELECT n FROM t ORDER BY n").unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    /// What a write does: insert its number, then succeed, fail or panic.
    #[derive(Debug, Clone, Copy)]
    enum Fate {
        Succeed,
        Fail,
        Panic,
    }

    fn fate() -> impl Strategy<Value = Fate> {
        prop_oneof![6 => Just(Fate::Succeed), 3 => Just(Fate::Fail), 1 => Just(Fate::Panic)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Writes queued together are committed together, and each is answered with its own outcome: exactly
        /// the writes answered `Ok` are stored, whatever the others in their batch did.
        #[test]
        fn each_write_of_a_batch_stands_or_falls_alone(fates in prop::collection::vec(fate(), 1..40)) {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_time().build().unwrap();
            let (_dir, writer, path) = writer();
            let writer = Arc::new(writer);
            // The first write holds the writer thread until every other write is queued behind it.
            let (release, hold) = std::sync::mpsc::channel::<()>();
            let answers = runtime.block_on(async {
                let (started, running) = tokio::sync::oneshot::channel::<()>();
                let first = tokio::spawn({
                    let writer = writer.clone();
                    async move {
                        writer.run(move |_| {
                            started.send(()).ok();
                            hold.recv().ok();
                            Ok(())
                        }).await
                    }
                });
                running.await.unwrap();
                let mut tasks = Vec::new();
                for (n, fate) in fates.iter().copied().enumerate() {
                    let writer = writer.clone();
                    tasks.push(tokio::spawn(async move {
                        writer.run(move |c| {
                            c.execute("INSERT INTO t (n) VALUES (?1)", [n as i64])?;
                            match fate {
                                Fate::Succeed => Ok(n as i64),
                                Fate::Fail => Err(StoreError::new(anyhow::anyhow!("refused"))),
                                Fate::Panic => panic!("write {n} panics"),
                            }
                        }).await
                    }));
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                release.send(()).unwrap();
                first.await.unwrap().unwrap();
                let mut answers = Vec::new();
                for task in tasks {
                    answers.push(task.await.unwrap());
                }
                answers
            });
            let acknowledged: Vec<i64> = answers.iter().filter_map(|a| a.as_ref().ok().copied()).collect();
            let expected: Vec<i64> =
                fates.iter().enumerate().filter(|(_, f)| matches!(f, Fate::Succeed)).map(|(n, _)| n as i64).collect();
            prop_assert_eq!(&acknowledged, &expected);
            prop_assert_eq!(stored(&path), expected);
            // The held write's batch, then one batch for everything queued behind it.
            prop_assert_eq!(writer.commits(), 2);
        }
    }

    #[tokio::test]
    async fn a_lone_write_commits_at_once_and_is_durable_when_answered() {
        let (_dir, writer, path) = writer();
        for n in 0..3 {
            writer.run(move |c| Ok(c.execute("INSERT INTO t (n) VALUES (?1)", [n])?)).await.unwrap();
            // Another connection sees it as soon as it is answered.
            assert_eq!(stored(&path).len() as i64, n + 1);
        }
        assert_eq!(writer.commits(), 3);
    }
}
