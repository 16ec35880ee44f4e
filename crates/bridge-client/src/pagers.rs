//! Paging as async streams (`futures_core::Stream`; read them with `futures::TryStreamExt::try_next` or any
//! stream combinator).
//!
//! * the event feed (`GET /webhook/user-events-cursor`): from a `sinceTimestamp`, following `nextPageToken`
//!   until it is null ([`Client::event_pages`], [`Client::events`], [`Client::events_since`]);
//! * the deposit-address search: following `nextPageToken` until it is null ([`Client::deposit_address_pages`],
//!   [`Client::deposit_addresses`]);
//! * the bridge history by page number, until `totalItems` are read ([`Client::history_pages`]);
//! * the bridge history by cursor (`GET /bridge/history-cursor/user`), following `nextPageToken` until it is
//!   null ([`Client::history_cursor_pages`], [`Client::history_records`]).
//!
//! Every request after the first repeats the first one's parameters with the new page token (or page number).
//! A stream ends after the last page, or after yielding the first error.
//!
//! The event feed decodes into [`EventPage`]: its items are [`Event`]s, so an event of a kind this build does
//! not know is an [`Event::Unknown`] and does not stop a replay.

use bridge_contract::operations::{
    ListBridgeHistoryCursorError, ListBridgeHistoryError, ListUserEventsError, SearchDepositAddressesError,
};
use bridge_contract::{
    DecimalNumber, DepositAddressSearchItem, DepositAddressSearchPage, HistoryCursorPage, HistoryItem, HistoryPage,
    ListBridgeHistoryCursorQuery, ListBridgeHistoryQuery, ListUserEventsQuery, SearchDepositAddressesQuery,
};
use futures_util::stream::{self, BoxStream, StreamExt as _, TryStreamExt as _};

use crate::client::Client;
use crate::error::Error;
pub use crate::event_page::EventPage;
use crate::webhook::Event;

/// Paging state of a cursor-paged operation: the next token to ask for, or done.
enum Cursor {
    First,
    Next(String),
    Done,
}

/// The pages of an operation paged by `nextPageToken`: `fetch` with `query` (whose `page_token`, reached through
/// `token`, starts as the caller gave it and then carries each page's `next_token`) until a page has none.
fn token_pages<'a, Q, P, E, Fut>(
    query: Q,
    token: fn(&mut Q) -> &mut Option<String>,
    next_token: fn(&P) -> Option<String>,
    fetch: impl Fn(Q) -> Fut + Send + 'a,
) -> BoxStream<'a, Result<P, E>>
where
    Q: Clone + Send + 'a,
    P: Send + 'a,
    E: Send + 'a,
    Fut: std::future::Future<Output = Result<P, E>> + Send + 'a,
{
    let mut query = query;
    let start = match token(&mut query).clone() {
        Some(t) => Cursor::Next(t),
        None => Cursor::First,
    };
    stream::try_unfold((start, query), move |(cursor, mut query)| {
        let fetched = match cursor {
            Cursor::Done => None,
            Cursor::First => {
                *token(&mut query) = None;
                Some(fetch(query.clone()))
            }
            Cursor::Next(t) => {
                *token(&mut query) = Some(t);
                Some(fetch(query.clone()))
            }
        };
        async move {
            let Some(fetched) = fetched else { return Ok(None) };
            let page = fetched.await?;
            let next = match next_token(&page) {
                Some(t) => Cursor::Next(t),
                None => Cursor::Done,
            };
            Ok(Some((page, (next, query))))
        }
    })
    .boxed()
}

impl Client {
    /// The event feed page by page, from `query.since_timestamp` (and `query.page_token`, to resume from a
    /// stored cursor) until `nextPageToken` is null. Each page carries the token of the next one, so a consumer
    /// can store it as its checkpoint.
    pub fn event_pages(
        &self,
        query: ListUserEventsQuery,
    ) -> BoxStream<'_, Result<EventPage, Error<ListUserEventsError>>> {
        token_pages(
            query,
            |query| &mut query.page_token,
            |page| page.next_page_token.clone(),
            move |query| async move { self.list_user_events(&query).await },
        )
    }

    /// Every event of the feed from `query.since_timestamp`, across pages.
    pub fn events(&self, query: ListUserEventsQuery) -> BoxStream<'_, Result<Event, Error<ListUserEventsError>>> {
        self.event_pages(query).map_ok(|page| stream::iter(page.items.into_iter().map(Ok))).try_flatten().boxed()
    }

    /// Every event at or after `since_ms` (milliseconds since the Unix epoch), across pages of the default size.
    pub fn events_since(&self, since_ms: i64) -> BoxStream<'_, Result<Event, Error<ListUserEventsError>>> {
        let since = DecimalNumber::try_from(since_ms as f64).expect("an i64 is a finite number");
        self.events(ListUserEventsQuery { since_timestamp: since, page_token: None, page_size: None })
    }

    /// The deposit-address search page by page, from `query.page_token` (usually `None`) until `nextPageToken`
    /// is null; the filters of `query` are sent with every page.
    pub fn deposit_address_pages(
        &self,
        query: SearchDepositAddressesQuery,
    ) -> BoxStream<'_, Result<DepositAddressSearchPage, Error<SearchDepositAddressesError>>> {
        token_pages(
            query,
            |query| &mut query.page_token,
            |page| page.next_page_token.clone(),
            move |query| async move { self.search_deposit_addresses(&query).await },
        )
    }

    /// Every deposit address the search finds, across pages.
    pub fn deposit_addresses(
        &self,
        query: SearchDepositAddressesQuery,
    ) -> BoxStream<'_, Result<DepositAddressSearchItem, Error<SearchDepositAddressesError>>> {
        self.deposit_address_pages(query)
            .map_ok(|page| stream::iter(page.items.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }

    /// The bridge history page by page, from page `query.page` (pages are 1-based) with `query.limit` records
    /// each, until `totalItems` records are covered or a page comes back empty.
    pub fn history_pages(
        &self,
        query: ListBridgeHistoryQuery,
    ) -> BoxStream<'_, Result<HistoryPage, Error<ListBridgeHistoryError>>> {
        stream::try_unfold(Some(query), move |query| async move {
            let Some(mut query) = query else {
                return Ok(None);
            };
            let page = self.list_bridge_history(&query).await?;
            let number = query.page.as_f64();
            let limit = query.limit.as_f64();
            let covered = number * limit;
            let more = !page.items.is_empty() && limit > 0.0 && covered < page.total_items as f64;
            let next = match DecimalNumber::try_from(number + 1.0) {
                Ok(n) if more => {
                    query.page = n;
                    Some(query)
                }
                _ => None,
            };
            Ok(Some((page, next)))
        })
        .boxed()
    }

    /// The bridge history by cursor, page by page, from `query.page_token` (usually `None`) until
    /// `nextPageToken` is null; the filter and sort of `query` are sent with every page.
    pub fn history_cursor_pages(
        &self,
        query: ListBridgeHistoryCursorQuery,
    ) -> BoxStream<'_, Result<HistoryCursorPage, Error<ListBridgeHistoryCursorError>>> {
        token_pages(
            query,
            |query| &mut query.page_token,
            |page| page.next_page_token.clone(),
            move |query| async move { self.list_bridge_history_cursor(&query).await },
        )
    }

    /// Every bridge record of the cursor history, across pages.
    pub fn history_records(
        &self,
        query: ListBridgeHistoryCursorQuery,
    ) -> BoxStream<'_, Result<HistoryItem, Error<ListBridgeHistoryCursorError>>> {
        self.history_cursor_pages(query)
            .map_ok(|page| stream::iter(page.items.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }
}
