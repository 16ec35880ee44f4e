//! The production endpoints beyond the spec, over real HTTP through the client: cancelling, the cursor history
//! under concurrent writes, lookups by hash, the configuration against what quotes accept, a deposit address's
//! own views, and the API-key exchange.
#![allow(deprecated)]

use std::collections::BTreeSet;

use crate::support::{address_request, both_stores, committed, feed_query, pay, Running, TestStore};
use bridge_client::{Client, Credentials, Error};
use bridge_contract::operations::*;
use bridge_contract::*;

use crate::support::{address_deposit, quote_request};

fn cancel() -> CancelBridgeRequest {
    CancelBridgeRequest { state: CancelBridgeRequestState::Cancelled }
}

fn is_cancelled(record: &BridgeRecord) -> bool {
    matches!(record, BridgeRecord::Bridge(BridgeRecordBridge { state: BridgeState::Cancelled(_), .. }))
}

#[tokio::test]
async fn cancel_a_pending_bridge_once_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let (a, b) = (sandbox.client(dir.path(), "project-a"), sandbox.client(dir.path(), "project-b"));

    let id = committed(&a).await;
    // Another project's bridge is not found, and stays PENDING.
    match b.cancel_bridge(&id, &cancel()).await {
        Err(Error::Api(CancelBridgeError::BridgeNotFound(_))) => {}
        other => panic!("another project cancelled: {other:?}"),
    }
    let cancelled = a.cancel_bridge(&id, &cancel()).await.unwrap();
    assert!(is_cancelled(&cancelled), "{cancelled:?}");
    assert!(is_cancelled(&a.get_bridge(&id).await.unwrap()));
    match a.cancel_bridge(&id, &cancel()).await {
        Err(Error::Api(CancelBridgeError::CancelBridgeUnprocessable(
            CancelBridgeUnprocessable::CannotCancelBridge(_),
        ))) => {}
        other => panic!("a second cancel got {other:?}"),
    }
    // A paid bridge cannot be cancelled.
    let paid = committed(&a).await;
    pay(&a, &paid, None).await;
    assert!(matches!(
        a.cancel_bridge(&paid, &cancel()).await,
        Err(Error::Api(CancelBridgeError::CancelBridgeUnprocessable(_)))
    ));
    // The cancellation is an event of the feed, once.
    let feed = a.list_user_events(&feed_query(None, 50)).await.unwrap();
    let cancelled_events =
        feed.items.iter().filter(|e| e.tag() == BridgeCancelledBridgeEventTag::BridgeCancelled.as_str()).count();
    assert_eq!(cancelled_events, 1);
    sandbox.stop().await;
}

async fn cursor_history_reads_every_record_once_while_others_are_written(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let client = sandbox.client_of("project-a");
    let mut before = BTreeSet::new();
    for _ in 0..7 {
        before.insert(committed(&client).await);
        client.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1 }).await.unwrap();
    }
    for direction in [SortDirection::Asc, SortDirection::Desc] {
        let mut seen = Vec::new();
        let mut token = None;
        loop {
            let page = client
                .list_bridge_history_cursor(&ListBridgeHistoryCursorQuery {
                    sort_by: HistorySortBy::CreatedAt,
                    sort_direction: direction,
                    state: None,
                    page_token: token.clone(),
                    page_size: 2.into(),
                })
                .await
                .unwrap();
            seen.extend(page.items.iter().map(|i| i.bridge.common().id.clone()));
            // Writes between pages: new records must not make an old one repeat or vanish.
            committed(&client).await;
            match page.next_page_token {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        let unique: BTreeSet<String> = seen.iter().cloned().collect();
        assert_eq!(unique.len(), seen.len(), "a record repeated ({direction:?}): {seen:?}");
        assert!(before.is_subset(&unique), "a record was skipped ({direction:?})");
    }
    // A token of another query, or none of ours, is refused with the spec's error shape.
    for token in ["garbage", "Y3JlYXRlZEF0fGRlc2N8fDF8eA"] {
        let answer = client
            .list_bridge_history_cursor(&ListBridgeHistoryCursorQuery {
                sort_by: HistorySortBy::UpdatedAt,
                sort_direction: SortDirection::Asc,
                state: None,
                page_token: Some(token.into()),
                page_size: 2.into(),
            })
            .await;
        assert!(matches!(answer, Err(Error::Api(ListBridgeHistoryCursorError::InvalidRequest(_)))), "{answer:?}");
    }
    sandbox.stop().await;
}

async fn bridges_by_deposit_and_withdrawal_hash(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let (a, b) = (sandbox.client_of("project-a"), sandbox.client_of("project-b"));
    let id = committed(&a).await;
    let hash = "0xfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeedfeed";
    a.sandbox_deposit_bridge(&id, &SandboxBridgeDepositRequest { tx_hash: Some(hash.into()), outcome: None })
        .await
        .unwrap();
    let found = a.get_bridges_by_deposit_hash(hash).await.unwrap();
    assert_eq!(found.iter().map(|r| r.common().id.clone()).collect::<Vec<_>>(), vec![id.clone()]);
    assert!(matches!(
        b.get_bridges_by_deposit_hash(hash).await,
        Err(Error::Api(GetBridgesByDepositHashError::HistoryNotFound(_)))
    ));
    // Not executed yet: no withdrawal to find.
    a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 3_600_000 }).await.unwrap();
    let executed = a.get_bridge(&id).await.unwrap();
    let BridgeRecord::Bridge(BridgeRecordBridge { state: BridgeState::Executed(state), .. }) = &executed else {
        panic!("not executed: {executed:?}");
    };
    let by_withdrawal = a.get_bridge_by_withdraw_hash(&state.withdraw_tx_hash).await.unwrap();
    assert_eq!(by_withdrawal, executed);
    assert_eq!(a.get_bridge_by_withdraw_hash_legacy(&state.withdraw_tx_hash).await.unwrap(), executed);
    assert!(matches!(
        b.get_bridge_by_withdraw_hash(&state.withdraw_tx_hash).await,
        Err(Error::Api(GetBridgeByWithdrawHashError::InvalidRequest(_)))
    ));
    sandbox.stop().await;
}

#[tokio::test]
async fn the_configuration_lists_what_quotes_accept() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let client = sandbox.client(dir.path(), "project-a");
    let anonymous = Client::new(&sandbox.base_url, Credentials::default()).unwrap();
    let configs = anonymous.get_bridge_configs().await.unwrap();
    let mut checked = 0;
    for (chain, config) in &configs {
        for symbol in config.tokens.keys().take(2) {
            let entry = anonymous.get_bridge_token_config(chain, symbol).await.unwrap();
            assert_eq!((&entry.chain, &entry.token), (chain, symbol));
            // Every configured token of a chain bridges to a chain that has it.
            let Some(other) = configs.iter().find(|(c, k)| *c != chain && k.tokens.contains_key(symbol)) else {
                continue;
            };
            let quote = client
                .quote_bridge(&BridgeQuoteRequest {
                    token: symbol.clone(),
                    chain_in: chain.clone(),
                    chain_out: other.0.clone(),
                    amount: "1".parse().unwrap(),
                    ..quote_request()
                })
                .await;
            let refused_for_address = matches!(
                &quote,
                Err(Error::Api(QuoteBridgeError::QuoteBridgeUnprocessable(QuoteBridgeUnprocessable::InvalidRequest(
                    _
                ))))
            );
            assert!(quote.is_ok() || refused_for_address, "{chain} {symbol} → {}: {quote:?}", other.0);
            checked += 1;
        }
    }
    assert!(checked > 0);
    assert!(matches!(
        anonymous.get_bridge_token_config("ETHEREUM", "NO-SUCH-TOKEN").await,
        Err(Error::Api(GetBridgeTokenConfigError::TokenConfigBadRequest(TokenConfigBadRequest::InvalidToken(_))))
    ));
    let swaps = anonymous.get_bridge_swap_token_configs().await.unwrap();
    assert_eq!(swaps.keys().collect::<Vec<_>>(), configs.keys().collect::<Vec<_>>());
    sandbox.stop().await;
}

async fn a_deposit_address_own_views(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let (a, b) = (sandbox.client_of("project-a"), sandbox.client_of("project-b"));
    let anonymous = Client::new(&sandbox.base_url, Credentials::default()).unwrap();
    let request = DepositAddressCreateRequest { address_note: Some("views".into()), ..address_request() };
    let before = a.get_deposit_address_rate_limit_status().await.unwrap();
    let created = a.create_deposit_addresses(&request).await.unwrap().remove(0);
    let after = a.get_deposit_address_rate_limit_status().await.unwrap();
    assert_eq!(after.total_created, before.total_created + 1);
    assert_eq!(b.get_deposit_address_rate_limit_status().await.unwrap().total_created, 0);

    let (address, chain) = (created.deposit_address.as_str(), created.deposit_chain.as_str());
    let status = a.get_deposit_address_status(address, chain).await.unwrap();
    assert_eq!(status.supported_tokens, created.supported_tokens);
    assert_eq!(status.address_note.as_deref(), Some("views"));
    assert!(b.get_deposit_address_status(address, chain).await.is_err(), "another project's address is not found");

    let supported = anonymous
        .get_deposit_address_supported_tokens(
            "ETHEREUM",
            "BASE",
            &GetDepositAddressSupportedTokensQuery { token_out: None },
        )
        .await
        .unwrap();
    assert_eq!(supported.supported_tokens, created.supported_tokens, "what creation answers");

    let token = created.supported_tokens[0].symbol.clone();
    let deposit = address_deposit(&token, "50", None);
    a.sandbox_deposit_into_address(address, chain, &deposit).await.unwrap();
    let history = a
        .get_deposit_address_history(address, chain, &GetDepositAddressHistoryQuery { from: None, to: None })
        .await
        .unwrap();
    assert_eq!(history.bridges.len(), 1, "{history:?}");
    let too_long = GetDepositAddressHistoryQuery {
        from: Some("2026-01-01T00:00:00.000Z".parse().unwrap()),
        to: Some("2026-02-15T00:00:00.000Z".parse().unwrap()),
    };
    assert!(matches!(
        a.get_deposit_address_history(address, chain, &too_long).await,
        Err(Error::Api(GetDepositAddressHistoryError::DepositAddressHistoryUnprocessable(
            DepositAddressHistoryUnprocessable::InvalidDateRange(_)
        )))
    ));
    // 50 of the first token is over its USD limit: the deposit is rejected, then refunded.
    let DepositAddressHistoryEntry::Rejected(rejected) = &history.bridges[0] else {
        panic!("an over-limit deposit is bridged: {history:?}");
    };
    assert_eq!(rejected.reason, RejectReason::OverMax);
    let refunds = a.get_deposit_address_completed_refunds(address, chain).await.unwrap().items;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0].original_deposit_tx_hash.as_deref(), Some(rejected.tx_hash.as_str()));
    assert!(b.get_deposit_address_completed_refunds(address, chain).await.is_err());
    sandbox.stop().await;
}

#[tokio::test]
async fn an_api_key_is_exchanged_for_a_token_and_reads_the_feed() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Running::start(dir.path()).await;
    let a = sandbox.client(dir.path(), "project-a");
    let id = committed(&a).await;
    let key = bridge_sandbox::mint_api_key(dir.path(), "project-a").unwrap();
    let anonymous = Client::new(&sandbox.base_url, Credentials::default()).unwrap();
    let jwt = anonymous.exchange_api_key(&ApiKeyExchangeRequest { api_key: key.clone() }).await.unwrap().jwt;
    let by_jwt = Client::new(&sandbox.base_url, Credentials::bearer(jwt)).unwrap();
    assert_eq!(by_jwt.get_bridge(&id).await.unwrap().common().id, id);
    assert!(matches!(
        anonymous.exchange_api_key(&ApiKeyExchangeRequest { api_key: format!("{key}0") }).await,
        Err(Error::Api(ExchangeApiKeyError::Unauthorized(_)))
    ));
    // The client's provider exchanges the key itself, and the cursor pager reads the whole history.
    let provider = bridge_client::ApiKeyTokenProvider::new(&sandbox.base_url, key.clone()).unwrap();
    let by_provider = Client::new(&sandbox.base_url, Credentials::token_provider(provider)).unwrap();
    // A millisecond later, so that `createdAt` orders the two (records of one millisecond are ordered by `_id`,
    // which is unpredictable: HistorySortBy's description).
    a.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 1 }).await.unwrap();
    let second = committed(&by_provider).await;
    let ids: Vec<String> =
        futures_util::TryStreamExt::try_collect::<Vec<_>>(by_provider.history_records(ListBridgeHistoryCursorQuery {
            sort_by: HistorySortBy::CreatedAt,
            sort_direction: SortDirection::Asc,
            state: None,
            page_token: None,
            page_size: 1.into(),
        }))
        .await
        .unwrap()
        .into_iter()
        .map(|item| item.bridge.common().id.clone())
        .collect();
    assert_eq!(ids, vec![id.clone(), second]);
    let by_key = Client::new(&sandbox.base_url, Credentials::api_key(key)).unwrap();
    let feed = by_key
        .list_user_events(&ListUserEventsQuery { since_timestamp: 0.into(), page_token: None, page_size: None })
        .await
        .unwrap();
    assert!(!feed.items.is_empty(), "the key reads its project's feed");
    sandbox.stop().await;
}

/// The creation limits of the catalogue: a window limit, then a total limit, each answered 429 with production's
/// limit object and nothing created, reported by the rate-limit status; another project has the default (generous)
/// limits.
#[tokio::test]
async fn deposit_address_creation_limits_answer_429_and_show_in_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("limits.toml");
    std::fs::write(&catalogue, "[projects.limited.deposit_address_limits]\ntotal = 3\nwindow = 2\nwindow_ms = 60000\n")
        .unwrap();
    let sandbox = Running::start_with_catalogue(dir.path(), &catalogue).await;
    let (limited, other) = (sandbox.client(dir.path(), "limited"), sandbox.client(dir.path(), "project-b"));
    let request = |note: &str| DepositAddressCreateRequest {
        address_note: Some(note.into()),
        reuse_policy: Some(ReusePolicy::CreateNew),
        ..address_request()
    };
    let status = limited.get_deposit_address_rate_limit_status().await.unwrap();
    assert_eq!(status.total_limit, TotalLimit::Limited(TotalLimited::new(3u64)));
    assert_eq!(status.window_limit, WindowLimit::Limited(WindowLimited::new(2u64, 60_000u64)));
    assert_eq!((status.total_created, status.window_created), (0, Some(0)));

    for i in 0..2 {
        limited.create_deposit_addresses(&request(&format!("a{i}"))).await.unwrap();
    }
    let refused = limited.create_deposit_addresses(&request("a2")).await;
    let Err(Error::Api(CreateDepositAddressesError::DepositAddressCreateTooManyRequests(
        DepositAddressCreateTooManyRequests::DepositAddressRateLimitExceeded(e),
    ))) = refused
    else {
        panic!("expected 429: {refused:?}");
    };
    let expected = WindowLimitExceeded::new(2u64, 2u64, DecimalNumber::from(60_000u32));
    assert_eq!(e.limit, DepositAddressLimit::from(expected));
    let status = limited.get_deposit_address_rate_limit_status().await.unwrap();
    assert_eq!((status.total_created, status.window_created), (2, Some(2)), "nothing created by the refusal");

    // The window slides with the sandbox clock; the total limit stays.
    limited.sandbox_advance_clock(&SandboxAdvanceClockRequest { ms: 60_001 }).await.unwrap();
    limited.create_deposit_addresses(&request("a3")).await.unwrap();
    let refused = limited.create_deposit_addresses(&request("a4")).await;
    let Err(Error::Api(CreateDepositAddressesError::DepositAddressCreateTooManyRequests(
        DepositAddressCreateTooManyRequests::DepositAddressRateLimitExceeded(e),
    ))) = refused
    else {
        panic!("expected 429: {refused:?}");
    };
    assert_eq!(e.limit, DepositAddressLimit::from(CountLimitExceeded::new(3u64, 3u64)));
    // At the limit, a request that only gets back an address it reuses is still answered.
    let reuse = DepositAddressCreateRequest { reuse_policy: None, ..request("a3") };
    let again = limited.create_deposit_addresses(&reuse).await.unwrap();
    assert_eq!(limited.get_deposit_address_rate_limit_status().await.unwrap().total_created, 3, "{again:?}");

    // The default limits (1000 in any hour, no total) of another project.
    other.create_deposit_addresses(&request("b")).await.unwrap();
    let status = other.get_deposit_address_rate_limit_status().await.unwrap();
    assert_eq!(status.total_limit, TotalLimit::Unlimited(Unlimited::new()));
    assert_eq!(status.window_limit, WindowLimit::Limited(WindowLimited::new(1000u64, 3_600_000u64)));
    assert_eq!((status.total_created, status.window_created), (1, Some(1)));
    sandbox.stop().await;
}

// The store-backed endpoints (cursor history, hash lookups, address counts) on SQLite and on PostgreSQL.
both_stores!(
    cursor_history_reads_every_record_once_while_others_are_written,
    bridges_by_deposit_and_withdrawal_hash,
    a_deposit_address_own_views,
);
