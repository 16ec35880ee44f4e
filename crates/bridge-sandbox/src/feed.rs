//! The event feed, `GET /webhook/user-events-cursor`: a project's events at or after `sinceTimestamp` in the
//! order they were written (which is time order), paged by a cursor that is the position of a page's last event,
//! so that a traversal never returns an event twice and never skips one, also under concurrent writes.

use bridge_contract::operations::ListUserEventsError;
use bridge_contract::{ListUserEventsQuery, UserEventsPage};
use bridge_server::Caller;

use crate::core::Core;

pub async fn list_user_events(
    core: &Core,
    caller: &Caller,
    query: ListUserEventsQuery,
) -> Result<UserEventsPage, ListUserEventsError> {
    // The feed documents no 422: out-of-range values are brought into range (see the schema).
    let since = query.since_timestamp.as_f64().floor().clamp(i64::MIN as f64, i64::MAX as f64) as i64;
    let after = query.page_token.as_deref().and_then(|t| i64::from_str_radix(t, 16).ok()).unwrap_or(0);
    let size = query
        .page_size
        .map_or(ListUserEventsQuery::PAGE_SIZE_DEFAULT, |n| n.as_f64())
        .floor()
        .clamp(1.0, ListUserEventsQuery::PAGE_SIZE_MAXIMUM) as u64;
    let mut page = core.store.events(&caller.project_id, since, after, size + 1).await?;
    let more = page.len() as u64 > size;
    page.truncate(size as usize);
    let next_page_token = if more { page.last().map(|(seq, _)| format!("{seq:024x}")) } else { None };
    Ok(UserEventsPage { items: page.into_iter().map(|(_, e)| e).collect(), next_page_token })
}
