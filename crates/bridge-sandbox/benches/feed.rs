//! The event feed's page cost at 1,000 and at 1,000,000 stored events, through `SqliteStore::events` (the query
//! `GET /webhook/user-events-cursor` runs: a page of 50 plus one to know whether there is a next page), awaited on
//! a current-thread runtime as the service awaits it (the query runs on the blocking pool).
//!
//! The events are the 50 of `benches/fixtures/events-page-50.json` (every kind, real sandbox output), repeated
//! with fresh ids, 10 ms apart, spread over four projects in turn; the pages read are those of one project. Each
//! database is populated once, in transactions of 10,000 events, and kept in `target/tmp/feed-bench-N/` for the
//! next run (delete it to start over). The cost of a page must not grow with the number of stored events:
//! `scripts/bench-report.py` prints each case as a ratio to the same case at 1,000 events, which should be ~1.
//!
//! Run: `cargo bench -p bridge-sandbox --bench feed` (add `-- --quick` for a short run). Populating the large
//! database takes about 15 s and 1.2 GB of disk the first time (`FEED_BENCH_LARGE=N` replaces 1,000,000).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use bridge_contract::{UserEventsPage, WebhookEvent};
use bridge_sandbox::store::{EventStore, NewEvent, SqliteStore};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use tokio::runtime::Runtime;

const PAGE: u64 = 50;
const PROJECTS: u64 = 4;
const BATCH: u64 = 10_000;
const START_MS: i64 = 1_700_000_000_000;

fn fixture_events() -> Vec<WebhookEvent> {
    let page: UserEventsPage = serde_json::from_str(include_str!("../../../benches/fixtures/events-page-50.json"))
        .expect("the fixture decodes");
    page.items
}

/// A store with `n` events (kept between runs; rebuilt when incomplete).
fn store_with(rt: &Runtime, n: u64, events: &[WebhookEvent]) -> SqliteStore {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("feed-bench-{n}"));
    let marker = dir.join("complete");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(&n.to_string()) {
        let _ = std::fs::remove_dir_all(&dir);
        let store = SqliteStore::open(&dir).expect("the store opens");
        let started = Instant::now();
        let mut i = 0u64;
        while i < n {
            let batch: Vec<NewEvent> = (i..(i + BATCH).min(n))
                .map(|k| NewEvent {
                    id: format!("evt_{k:024x}"),
                    project: format!("project-{}", k % PROJECTS),
                    created_ms: START_MS + 10 * k as i64,
                    event: events[(k as usize) % events.len()].clone(),
                    webhook_url: None,
                })
                .collect();
            rt.block_on(store.append_events(&batch)).expect("the batch is written");
            i += BATCH;
        }
        drop(store);
        std::fs::write(&marker, n.to_string()).unwrap();
        eprintln!("populated {n} events in {:.1} s ({})", started.elapsed().as_secs_f64(), dir.display());
    }
    SqliteStore::open(&dir).expect("the store opens")
}

fn feed(c: &mut Criterion) {
    let events = fixture_events();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let mut group = c.benchmark_group("feed-page-50");
    // `FEED_BENCH_LARGE` replaces 1,000,000 (for a quick smoke run: `cargo test --benches` runs each case once).
    let large = std::env::var("FEED_BENCH_LARGE").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000u64);
    for n in [1_000u64, large] {
        let store = store_with(&rt, n, &events);
        let project = "project-0";
        // Sequence numbers are 1..=n in insertion order; project-0 has 1, 5, 9, ...
        let middle_seq = (n / 2) as i64;
        let near_end_seq = n as i64 - (PAGE * PROJECTS) as i64 - 8;
        let middle_ms = START_MS + 10 * (n as i64 / 2);
        let cases: [(&str, i64, i64); 4] = [
            ("first-page", 0, 0),
            ("cursor-middle", 0, middle_seq),
            ("since-middle", middle_ms, 0),
            ("cursor-last", 0, near_end_seq),
        ];
        for (name, since, after) in cases {
            let got = rt.block_on(store.events(project, since, after, PAGE + 1)).unwrap();
            assert!(
                got.len() as u64 >= PAGE.min(n / PROJECTS - 1) || name == "cursor-last",
                "{name} at {n}: {} events",
                got.len()
            );
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| rt.block_on(store.events(black_box(project), since, after, PAGE + 1)).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, feed);
criterion_main!(benches);
