//! [`EventPage`]: the client's form of the event feed's page (`UserEventsPage`), whose items are [`Event`]s, so an
//! event of a kind this build does not know is kept instead of failing the page. progenitor's generated client
//! decodes the feed into it.

use bridge_contract::UserEventsPage;
use serde::{Deserialize, Deserializer, Serialize};

use crate::webhook::Event;

/// A page of the event feed, with events of unknown kinds kept as [`Event::Unknown`] (the client's form of the
/// contract's [`UserEventsPage`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventPage {
    /// The events, oldest first as the service lists them.
    pub items: Vec<Event>,
    /// The cursor of the next page; `None` (JSON `null`, which must be present) on the last page.
    #[serde(rename = "nextPageToken", deserialize_with = "required_nullable")]
    pub next_page_token: Option<String>,
}

fn required_nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d)
}

impl From<UserEventsPage> for EventPage {
    fn from(page: UserEventsPage) -> Self {
        Self { items: page.items.into_iter().map(Event::Known).collect(), next_page_token: page.next_page_token }
    }
}

impl TryFrom<EventPage> for UserEventsPage {
    /// The page back, when it has an event of an unknown kind.
    type Error = EventPage;

    fn try_from(page: EventPage) -> Result<Self, EventPage> {
        if page.items.iter().any(|e| e.known().is_none()) {
            return Err(page);
        }
        Ok(UserEventsPage {
            items: page.items.into_iter().filter_map(Event::into_known).collect(),
            next_page_token: page.next_page_token,
        })
    }
}
