//! Ids come from counters handed out in blocks (`bridge_sandbox::counters`): every value is unique across
//! concurrent requests, restarts and instances sharing a database, on both stores.

use std::collections::HashSet;
use std::sync::Arc;

use bridge_sandbox::counters::{Counters, BLOCK};
use bridge_sandbox::store::Counter;

use crate::support::{both_stores, TestStore};

async fn values_are_unique_across_requests_restarts_and_instances(store: TestStore) {
    let mut seen = HashSet::new();
    // Three "instances" on one database, then a restart of the first (fresh blocks in memory).
    let stores = [store.open().await, store.open().await, store.open().await];
    let instances: Vec<Arc<Counters>> = (0..3).map(|_| Arc::new(Counters::default())).collect();
    let mut tasks = Vec::new();
    for round in 0..(BLOCK as usize * 3 / 2) {
        for (i, counters) in instances.iter().enumerate() {
            let (counters, store) = (counters.clone(), stores[i].clone());
            let counter = if round % 3 == 0 { Counter::Event } else { Counter::Quote };
            tasks.push(tokio::spawn(async move { (counter, counters.next(counter, &*store).await.unwrap()) }));
        }
    }
    for task in tasks {
        let value = task.await.unwrap();
        assert!(seen.insert(value), "{value:?} handed out twice");
    }
    let restarted = Counters::default();
    for _ in 0..BLOCK + 1 {
        let value = (Counter::Quote, restarted.next(Counter::Quote, &*stores[0]).await.unwrap());
        assert!(seen.insert(value), "{value:?} handed out again after a restart");
    }
    // One instance alone hands out its block in order, from 1 on a fresh database.
    let fresh = TestStore::sqlite();
    let (store, counters) = (fresh.open().await, Counters::default());
    for expected in 1..=BLOCK + 2 {
        assert_eq!(counters.next(Counter::Tx, &*store).await.unwrap(), expected);
    }
}

both_stores!(values_are_unique_across_requests_restarts_and_instances);
