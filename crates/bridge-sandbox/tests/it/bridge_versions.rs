//! A bridge saved by two writers that read it at the same version: the first save stands, the second writes
//! nothing (neither its record nor its events) and says so, on both stores. This is what keeps a request and a
//! lifecycle pass (of any instance) from overwriting each other's change; the sandbox redoes the change that lost.

use bridge_contract::{BridgeRecord, LastBridge, WebhookTestEvent};
use bridge_sandbox::store::{NewEvent, StoredBridge, StoredDeposit};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::support::{both_stores, TestStore};

fn some<T: Arbitrary>(runner: &mut TestRunner) -> T {
    any::<T>().new_tree(runner).unwrap().current()
}

fn event(id: &str) -> NewEvent {
    NewEvent {
        id: id.into(),
        project: "versions".into(),
        created_ms: 1,
        event: WebhookTestEvent::new(id).into(),
        webhook_url: None,
    }
}

async fn a_save_over_a_changed_bridge_writes_nothing(store: TestStore) {
    let store = store.open().await;
    let mut runner = TestRunner::deterministic();
    let (first, second, third): (BridgeRecord, BridgeRecord, BridgeRecord) =
        (some(&mut runner), some(&mut runner), some(&mut runner));
    let id = first.common().id.clone();
    let deposit = StoredDeposit { last_bridge: some::<LastBridge>(&mut runner), bridge_id: Some(id.clone()) };
    let new = StoredBridge::new("versions", first, 1, None);
    store.add_deposit("ETHEREUM", "0xversions", &deposit, Some(&new), &[]).await.unwrap();

    let read = store.bridge("versions", &id).await.unwrap().unwrap();
    let (mut a, mut b) = (read.clone(), read);
    a.record = with_id(second, &id);
    b.record = with_id(third, &id);
    assert!(store.save_bridge(&a, &[event("saved-a")]).await.unwrap(), "the first save stands");
    assert!(!store.save_bridge(&b, &[event("saved-b")]).await.unwrap(), "the second read an older version");

    let stored = store.bridge("versions", &id).await.unwrap().unwrap();
    assert_eq!(stored.record, a.record);
    assert_eq!(stored.version, a.version + 1);
    let events: Vec<String> = store
        .events("versions", i64::MIN, 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.decode().unwrap().tag().to_owned())
        .collect();
    assert_eq!(events.len(), 1, "only the first save's event: {events:?}");

    // Read again, the change goes through.
    let mut again = store.bridge("versions", &id).await.unwrap().unwrap();
    again.record = b.record.clone();
    assert!(store.save_bridge(&again, &[]).await.unwrap());
    assert_eq!(store.bridge("versions", &id).await.unwrap().unwrap().record, b.record);
}

/// `record` with the common id `id` (records are stored under their own id).
fn with_id(mut record: BridgeRecord, id: &str) -> BridgeRecord {
    match &mut record {
        BridgeRecord::Bridge(r) => r.common.id = id.to_owned(),
        BridgeRecord::BridgeSwap(r) => r.common.id = id.to_owned(),
        BridgeRecord::DepositAddressBridge(r) => r.common.id = id.to_owned(),
    }
    record
}

both_stores!(a_save_over_a_changed_bridge_writes_nothing);
