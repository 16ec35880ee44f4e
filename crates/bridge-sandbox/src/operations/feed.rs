//! The event feed, `GET /webhook/user-events-cursor`: a project's events at or after `sinceTimestamp` in the
//! order they were committed (time order up to the moment between taking a time and committing), paged by a cursor that is the feed position of a page's last
//! event, so that a traversal never returns an event twice and never skips one, also under concurrent writes and
//! across sandbox instances sharing one database (the store assigns feed positions in commit order: see
//! [`crate::infra::store`]).
//!
//! The page is put together from the events' stored JSON ([`UserEventsPage::encode_with`]): nothing is decoded
//! or re-encoded on the way out (the schema marks the operation `x-encoded-answer`).
//!
//! A `pageToken` is the position put through the sandbox's keyed permutation ([`Ids::page_token`]), as 24
//! lower-case hex digits (the schema's pattern): positions are global (every project's events share them), so a
//! plain position would show how many events other projects had between two of this project's pages. The key is
//! kept with the data, so a token still names its position after a restart and on every instance of one
//! database. Positions are 1..=`i64::MAX` (0 is "before the first event"). Every token of the pattern is a
//! position, whether or not a page handed it out (as the reference framework and production treat it): the page
//! starts after it. Tokens of 8 zero digits are plain positions, as earlier versions handed them out (a traversal
//! goes on across the upgrade); one that names nothing below `i64::MAX` (which no event can have) answers an empty
//! last page. It never restarts the feed.

use bridge_contract::operations::ListUserEventsError;
use bridge_contract::{Encoded, HttpApiDecodeError, Issue, IssueTag, ListUserEventsQuery, PropertyKey, UserEventsPage};
use bridge_server::{Answer, Caller};

use crate::domain::ids::Ids;
use crate::infra::core::Core;

/// A position in the feed: the cursor of a page token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FeedPosition(i64);

impl FeedPosition {
    /// Before the first event.
    pub const START: Self = Self(0);

    /// The position of a stored event (the store's positions are positive).
    pub fn of_event(position: i64) -> Self {
        Self(position)
    }

    pub fn get(self) -> i64 {
        self.0
    }

    /// The position a page token names (`None` unless 24 hex digits; see [`Ids::page_position`]).
    pub fn from_token(token: &str, ids: &Ids) -> Option<Self> {
        ids.page_position(token).map(Self)
    }

    pub fn token(self, ids: &Ids) -> String {
        ids.page_token(self.0)
    }
}

/// 400 for a page token that is not 24 hex digits, in the decoder's error shape (the decoder's pattern lets none
/// through: this only keeps such a token from ever restarting the feed).
fn not_a_token(token: &str) -> HttpApiDecodeError {
    let message = format!("Expected a page token of this feed (24 hex digits), actual \"{token}\"");
    let issues =
        vec![Issue { tag: IssueTag::Refinement, path: vec![PropertyKey::String("pageToken".into())], message }];
    HttpApiDecodeError::new(bridge_server::serve::summary(&issues), issues)
}

impl Core {
    pub async fn list_user_events(
        &self,
        caller: &Caller,
        query: ListUserEventsQuery,
    ) -> Result<Answer<UserEventsPage>, ListUserEventsError> {
        // The feed documents no 422: out-of-range values are brought into range (see the schema).
        let since = query.since_timestamp.as_f64().floor().clamp(i64::MIN as f64, i64::MAX as f64) as i64;
        let after = match query.page_token.as_deref() {
            None => FeedPosition::START,
            Some(token) => FeedPosition::from_token(token, &self.ids).ok_or_else(|| not_a_token(token))?,
        };
        let size = query
            .page_size
            .map_or(ListUserEventsQuery::PAGE_SIZE_DEFAULT, |n| n.as_f64())
            .floor()
            .clamp(1.0, ListUserEventsQuery::PAGE_SIZE_MAXIMUM) as u64;
        let mut page = self.store.events(&caller.project_id, since, after.get(), size + 1).await?;
        let more = page.len() as u64 > size;
        page.truncate(size as usize);
        let next_page_token =
            if more { page.last().map(|(seq, _)| FeedPosition::of_event(*seq).token(&self.ids)) } else { None };
        // The events are served as they were stored: copied into the page, never decoded and re-encoded.
        let items = Encoded::from_items(page.iter().map(|(_, e)| e));
        Ok(UserEventsPage::encode_with(&items, &next_page_token).map_err(crate::infra::store::StoreError::new)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::{FeedPosition, Ids};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_position_round_trips_through_its_token(p in 0..=i64::MAX) {
            let (ids, position) = (Ids::seeded(1), FeedPosition::of_event(p));
            prop_assert_eq!(FeedPosition::from_token(&position.token(&ids), &ids), Some(position));
            prop_assert_eq!(FeedPosition::from_token(&format!("{p:024x}"), &ids), Some(position), "a plain position");
        }

        #[test]
        fn tokens_with_an_unknown_prefix_are_the_last_position(v in (2u128 << 64)..(1u128 << 96)) {
            let ids = Ids::seeded(1);
            prop_assert_eq!(FeedPosition::from_token(&format!("{v:024x}"), &ids), Some(FeedPosition::of_event(i64::MAX)));
        }
    }
}
