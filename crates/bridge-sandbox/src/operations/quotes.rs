//! Quotes and their commitment: `POST /bridge/quote/user`, `POST /bridge/quote/bridge-swap/user` (priced by
//! [`crate::domain::pricing`] and kept until they expire) and `POST /bridge/quote/commit/{quoteId}`, which makes the quote's
//! bridge record (PENDING, due to be cancelled when the quote expires) and its BRIDGE_PENDING event.

use bridge_contract::operations::{CommitQuoteError, QuoteBridgeError, QuoteBridgeSwapError};
use bridge_contract::{
    BridgeQuoteRequest, BridgeSwapQuoteRequest, CommitQuotePath, InvalidRequest, PostBridgeData, QuoteCommitted,
    QuoteMode, QuoteNotFound, QuoteResponse,
};
use bridge_server::Caller;

use crate::domain::lifecycle;
use crate::domain::pricing::{self, QuoteContext, Refusal};
use crate::domain::records::date;
use crate::domain::records::{self, NewRecord};
use crate::infra::core::Core;
use crate::infra::store::{Counter, StoreError, StoredBridge, StoredQuote};

/// `postBridgeData` on a quote from a project without the feature: 422 (production documents no 403 on quotes).
fn post_bridge_data_not_enabled() -> InvalidRequest {
    InvalidRequest::new(format!(
        "postBridgeData is not enabled for this project (feature `{}`)",
        bridge_server::auth::POST_BRIDGE_DATA
    ))
}

impl Core {
    /// `POST /bridge/quote/user`: a quote of one token.
    pub async fn quote_bridge(
        &self,
        caller: &Caller,
        body: BridgeQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeError> {
        let price = |ctx: &QuoteContext| pricing::quote_bridge(ctx, &body).map(QuoteResponse::Bridge);
        self.quote(caller, body.webhook_url.as_deref(), body.post_bridge_data.as_ref(), body.mode, price).await
    }

    /// `POST /bridge/quote/bridge-swap/user`: a quote of a bridge with a swap.
    pub async fn quote_bridge_swap(
        &self,
        caller: &Caller,
        body: BridgeSwapQuoteRequest,
    ) -> Result<QuoteResponse, QuoteBridgeSwapError> {
        let price = |ctx: &QuoteContext| pricing::quote_bridge_swap(ctx, &body);
        self.quote(caller, body.webhook_url.as_deref(), body.post_bridge_data.as_ref(), body.mode, price).await
    }

    /// A quote as both quote operations make it: the `webhookUrl` and `postBridgeData` checks, then `price` in the
    /// caller's context (a new quote id, the project's time), and the quote kept until it expires (or is committed).
    async fn quote<E: From<InvalidRequest> + From<Refusal> + From<StoreError>>(
        &self,
        caller: &Caller,
        webhook_url: Option<&str>,
        post_bridge_data: Option<&PostBridgeData>,
        mode: QuoteMode,
        price: impl FnOnce(&QuoteContext) -> Result<QuoteResponse, Refusal>,
    ) -> Result<QuoteResponse, E> {
        self.check_webhook_url(webhook_url).await?;
        if post_bridge_data.is_some() && !caller.has_post_bridge_data() {
            return Err(post_bridge_data_not_enabled().into());
        }
        let now = self.now_of(&caller.project_id).await?;
        let quote_id = self.object_id(Counter::Quote, now).await?;
        let ctx = QuoteContext { catalogue: &self.catalogue, project_id: &caller.project_id, now: date(now), quote_id };
        let quote = price(&ctx)?;
        let kept = StoredQuote {
            id: quote.quote_id().to_owned(),
            project: caller.project_id.clone(),
            response: quote.clone(),
            mode,
            created_ms: now,
            expires_ms: now + pricing::QUOTE_LIFETIME_MS,
            committed: false,
        };
        self.store.insert_quote(&kept).await?;
        Ok(quote)
    }

    /// `POST /bridge/quote/commit/{quoteId}`: the quote's bridge record (PENDING) and its BRIDGE_PENDING event.
    pub async fn commit_quote(
        &self,
        caller: &Caller,
        path: CommitQuotePath,
    ) -> Result<QuoteCommitted, CommitQuoteError> {
        let not_found = || QuoteNotFound::new(format!("no quote {} (unknown or expired)", path.quote_id));
        let quote = self.store.quote(&caller.project_id, &path.quote_id).await?.ok_or_else(not_found)?;
        let now = self.now_of(&caller.project_id).await?;
        if quote.committed {
            return Err(InvalidRequest::new(format!("quote {} is already committed", quote.id)).into());
        }
        if now > quote.expires_ms {
            return Err(not_found().into());
        }
        let response = &quote.response;
        let record = NewRecord {
            quote: response,
            project: &caller.project_id,
            mode: quote.mode,
            quoted_at: date(quote.created_ms),
            committed_at: date(now),
            token_usd_price: self.usd_price(response.chain_in(), records::quote_token(response)),
            deposit_address: None,
        }
        .record();
        // A quote made for a deposit address (`isSda`) is bridged by deposits into the address, not committed: its
        // record's family has no BRIDGE_PENDING event and no CANCELLED state for the quote's expiry.
        let Some(event) = lifecycle::committed_event(&record) else {
            return Err(InvalidRequest::new(format!(
            "quote {} was made for a smart deposit address (isSda); deposits into a deposit address start its bridges",
            quote.id
        ))
            .into());
        };
        let webhook_url = response.webhook_url().map(str::to_owned);
        let event = self.event(&caller.project_id, now, event, webhook_url.clone()).await?;
        let mut bridge = StoredBridge::new(&caller.project_id, record, now, webhook_url);
        bridge.next_ms = Some(quote.expires_ms);
        if !self.store.commit_quote(&quote.id, &bridge, &[event]).await? {
            return Err(InvalidRequest::new(format!("quote {} is already committed", quote.id)).into());
        }
        tracing::info!(project = %caller.project_id, bridge = %quote.id, "quote committed");
        Ok(QuoteCommitted { quote_id: quote.id })
    }
}
