//! Committing a quote exactly once, even when the answer is lost.
//!
//! A commit changes state, so it is never repeated blindly: the request may have been carried out even though
//! its answer never arrived. But the outcome can be read: the quote id is the bridge id, and a committed quote is
//! a bridge record (`GET /bridge/history/bridge/{quoteId}`). [`crate::Client::commit_quote`] therefore, when an
//! answer is lost (a timeout, a reset or closed connection, a body cut short, or an undocumented 5xx such as a
//! gateway's 502/503/504):
//!
//! 1. reads the bridge ([`crate::Client::get_bridge`], itself retried as a safe request);
//! 2. if it exists, the commit happened: returns the `QuoteCommitted` a first successful commit would have
//!    returned (`{quoteId}`);
//! 3. if it does not (404 `BridgeNotFound`), the commit did not happen, so committing again is safe: it does,
//!    after the retry policy's delay, within the policy's bounds (attempts and elapsed time);
//! 4. a 422 `InvalidRequest` ("already committed") to such a repeated commit means the lost one was carried out
//!    after all (it was still in flight when the bridge was read): the bridge is read again, and if it exists
//!    the commit succeeded.
//!
//! Answers that prove nothing was done (a connection that could not be made, 429 with `retryAfter`, 503 with the
//! contract's `ServiceUnavailable` body) are retried by the transport like any request ([`crate::retry`]). With
//! [`crate::RetryPolicy::none`] none of this happens: the first error is returned. When the bridge cannot be
//! read either (after the read's own retries), the commit's own error is returned: its outcome is unknown, and
//! `get_bridge(quote_id)` tells it later. A 422 to a commit that is not a repeat after a lost answer stays an
//! error: the caller committed the quote twice.

use bridge_contract::operations::{CommitQuoteError, GetBridgeError};
use bridge_contract::QuoteCommitted;

use crate::client::Client;
use crate::error::lift;
use crate::error::Error;

/// Whether the answer to a commit was lost, so that the commit may or may not have happened.
fn answer_lost(error: &Error<CommitQuoteError>) -> bool {
    match error {
        // A connection that could not be made sent nothing (and was already retried by the transport).
        Error::Communication(e) => !e.is_connect() && !e.is_builder(),
        // The documented 503 says nothing was changed; any other 5xx comes from something in between.
        Error::UnexpectedResponse(u) => u.status.is_server_error(),
        Error::Api(_) | Error::InvalidRequest(_) => false,
    }
}

/// What reading the bridge says about a commit whose answer was lost.
enum Outcome {
    Committed,
    NotCommitted,
    Unknown(Error<GetBridgeError>),
}

async fn outcome(client: &Client, quote_id: &str) -> Outcome {
    match client.get_bridge(quote_id).await {
        Ok(_) => Outcome::Committed,
        // Production answers an unknown bridge id with 422 InvalidRequest (it documents no 404 there).
        Err(Error::Api(GetBridgeError::InvalidRequest(_))) => Outcome::NotCommitted,
        Err(e) => Outcome::Unknown(e),
    }
}

/// `commit_quote`, resolving lost answers (see the [module documentation](self)).
pub(crate) async fn commit_resolving_lost_answers(
    client: &Client,
    quote_id: &str,
) -> Result<QuoteCommitted, Error<CommitQuoteError>> {
    let policy = client.raw.inner.retry;
    let mut schedule = policy.start();
    let mut lost_before = false;
    loop {
        let error = match lift(client.raw.commit_quote(quote_id).await).await {
            Ok(committed) => return Ok(committed),
            Err(e) => e,
        };
        let already_committed = matches!(error, Error::Api(CommitQuoteError::InvalidRequest(_)));
        if !policy.is_enabled() || !(answer_lost(&error) || (lost_before && already_committed)) {
            return Err(error);
        }
        let attempt = schedule.attempt();
        tracing::warn!(operation = "commit_quote", quote_id, attempt, error = %error, "reading the bridge to learn whether the commit happened");
        match outcome(client, quote_id).await {
            Outcome::Committed => {
                tracing::info!(operation = "commit_quote", quote_id, attempt, "the bridge exists: the commit happened");
                return Ok(QuoteCommitted { quote_id: quote_id.to_owned() });
            }
            Outcome::NotCommitted if already_committed => {
                // 422 without a bridge: the quote cannot be committed (expired, say), not a lost commit.
                return Err(error);
            }
            Outcome::NotCommitted => {}
            Outcome::Unknown(why) => {
                tracing::warn!(operation = "commit_quote", quote_id, error = %why, "the bridge cannot be read: the commit's outcome is unknown");
                return Err(error);
            }
        }
        lost_before = true;
        let Some(delay) = schedule.next_delay(None) else {
            tracing::warn!(
                operation = "commit_quote",
                quote_id,
                attempts = attempt,
                "giving up: the retry policy's bounds are reached"
            );
            return Err(error);
        };
        tracing::warn!(
            operation = "commit_quote",
            quote_id,
            attempt,
            reason = "the answer was lost and the bridge does not exist",
            delay_ms = delay.as_millis() as u64,
            "committing again"
        );
        tokio::time::sleep(delay).await;
    }
}
