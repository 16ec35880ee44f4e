//! `Encoded<T>` and the generated `encode_with` of the answers marked `x-encoded-answer`: the JSON a service
//! puts together from stored text is byte for byte what the typed value's `Serialize` writes, so a client cannot
//! tell an answer served from storage from one encoded on the spot.

use bridge_contract::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// A page put together from its events' stored texts is the page's own encoding.
    #[test]
    fn an_events_page_from_stored_events_is_its_typed_encoding(page in any::<UserEventsPage>()) {
        let stored: Vec<String> =
            page.items.iter().map(|e| Encoded::new(e).unwrap().into_string()).collect();
        let read: Vec<Encoded<WebhookEvent>> = stored.into_iter().map(Encoded::from_stored).collect();
        let items = Encoded::from_items(&read);
        let encoded = UserEventsPage::encode_with(&items, &page.next_page_token).unwrap();
        prop_assert_eq!(encoded.as_str(), serde_json::to_string(&page).unwrap());
        prop_assert_eq!(encoded.decode().unwrap(), page);
    }

    /// What is stored reads back as the same value, without being decoded until asked.
    #[test]
    fn a_stored_event_decodes_to_the_event(event in any::<WebhookEvent>()) {
        let text = Encoded::new(&event).unwrap().into_string();
        prop_assert_eq!(Encoded::<WebhookEvent>::from_stored(text).decode().unwrap(), event);
    }
}

#[test]
fn an_empty_list_and_an_absent_token() {
    let items = Encoded::<Vec<WebhookEvent>>::from_items([]);
    let page = UserEventsPage::encode_with(&items, &None).unwrap();
    assert_eq!(page.as_str(), r#"{"items":[],"nextPageToken":null}"#);
}
