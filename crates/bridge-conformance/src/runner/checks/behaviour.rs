//! Behaviour a client relies on, beyond the shape of each answer:
//!
//! * quotes add up exactly, in decimal (`DecimalString` → `rust_decimal`, never rounded): `fees.fee` is the sum
//!   of its parts, `payAmount = receiveAmount + fees.fee + gasBoost.amountNativeTokenCost` (bridge-swap quotes:
//!   the bridged leg, `bridgePayAmount = bridgeReceiveAmount + fee + cost`), the requested amount is the pay
//!   amount in `pay` mode and the receive amount in `receive` mode, the request is echoed;
//! * commit makes a bridge record whose `_id` is the quote's id and whose amounts are the quote's; a quote is
//!   committed once; unknown ids are answered 404/422 with the documented errors (422 `InvalidRequest` for a bridge
//!   id, as production);
//! * history paging, sort and filter agree with `totalItems`; the deposit-address search and the event feed
//!   cursors return every item exactly once, whatever the page size; the deposit-address reuse policy; the
//!   deprecated aliases behave like the `/sda` operations; `postBridgeData` needs the project's feature;
//! * bodies over the limit get 413, unknown paths and wrong methods 404 with an empty body.

use std::collections::{BTreeSet, HashSet};

use anyhow::{anyhow, bail, ensure};
use bridge_contract::AnyOperation;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::steps::*;
use crate::runner::check::Ctx;
use crate::runner::http::Api;

fn requested(amount: &str) -> anyhow::Result<Decimal> {
    let d: bridge_contract::DecimalString = amount.parse().map_err(|e| anyhow!("fixture amount {amount:?}: {e}"))?;
    Ok(d.to_decimal()?)
}

/// `fees.fee` is the sum of its four parts (and the same for `sponsoredFees` when present); no part is negative.
fn fees_add_up(q: &Value) -> anyhow::Result<()> {
    let parts = ["gasFee", "sourceGasFee", "platformFee", "percentageFee"];
    for block in ["/fees", "/fees/sponsoredFees"] {
        if q.pointer(block).is_none() {
            continue;
        }
        let mut sum = Decimal::ZERO;
        for part in parts {
            let value = dec(q, &format!("{block}/{part}"))?;
            ensure!(value >= Decimal::ZERO, "{block}/{part} is negative: {value}");
            sum += value;
        }
        ensure_eq(
            dec(q, &format!("{block}/fee"))?,
            sum,
            &format!("{block}/fee = gasFee + sourceGasFee + platformFee + percentageFee"),
        )?;
    }
    Ok(())
}

/// `pay = receive + fee + gas-boost cost`, for the given members.
fn leg_adds_up(q: &Value, pay: &str, receive: &str) -> anyhow::Result<()> {
    let cost = dec_or_zero(q, "/gasBoost/amountNativeTokenCost")?;
    let (p, r, fee) = (dec(q, pay)?, dec(q, receive)?, dec(q, "/fees/fee")?);
    ensure!(r >= Decimal::ZERO, "{receive} is negative: {r}");
    ensure_eq(
        p,
        r + fee + cost,
        &format!("{pay} = {receive} + fees.fee + gasBoost.amountNativeTokenCost ({r} + {fee} + {cost})"),
    )
}

fn echoes(q: &Value, request: &Value, members: &[&str]) -> anyhow::Result<()> {
    for m in members {
        ensure!(q[m] == request[m], "the quote's {m} is {}, the request's {}", q[m], request[m]);
    }
    Ok(())
}

pub(super) async fn quote_pay_mode(ctx: &Ctx) -> anyhow::Result<()> {
    let request = quote_request(&ctx.config.fixtures);
    requested_amount_quoted(ctx, request, &["token", "chainIn", "chainOut", "depositor", "recipient"], "pay").await
}

pub(super) async fn quote_receive_mode(ctx: &Ctx) -> anyhow::Result<()> {
    let mut request = quote_request(&ctx.config.fixtures);
    request["mode"] = json!("receive");
    requested_amount_quoted(ctx, request, &["token", "chainIn", "chainOut"], "receive").await
}

/// The quote of `request` (in `mode`: `pay` or `receive`) echoes its `echoed` members and adds up, and its
/// `payAmount` (`receiveAmount`) is the requested amount.
async fn requested_amount_quoted(ctx: &Ctx, request: Value, echoed: &[&str], mode: &str) -> anyhow::Result<()> {
    let q = quote(&ctx.main, request.clone()).await?;
    echoes(&q, &request, echoed)?;
    fees_add_up(&q)?;
    leg_adds_up(&q, "/payAmount", "/receiveAmount")?;
    ensure_eq(
        dec(&q, &format!("/{mode}Amount"))?,
        requested(&ctx.config.fixtures.amount)?,
        &format!("{mode}Amount = the requested amount ({mode} mode)"),
    )
}

pub(super) async fn quote_gas_boost(ctx: &Ctx) -> anyhow::Result<()> {
    let mut request = quote_request(&ctx.config.fixtures);
    request["amountNative"] = json!(ctx.config.fixtures.gas_boost);
    let q = quote(&ctx.main, request).await?;
    ensure!(q.get("gasBoost").is_some(), "a quote with amountNative has no gasBoost");
    ensure_eq(
        dec(&q, "/gasBoost/amountNative")?,
        requested(&ctx.config.fixtures.gas_boost)?,
        "gasBoost.amountNative = the requested amountNative",
    )?;
    ensure!(
        dec(&q, "/gasBoost/amountNativeTokenCost")? > Decimal::ZERO,
        "gasBoost.amountNativeTokenCost is not positive"
    );
    fees_add_up(&q)?;
    leg_adds_up(&q, "/payAmount", "/receiveAmount")
}

fn swap_request(ctx: &Ctx) -> Value {
    let f = &ctx.config.fixtures;
    json!({"chainIn": f.chain_in, "chainOut": f.chain_out, "amount": f.swap_amount, "mode": "pay",
        "tokenIn": f.swap_token_in, "tokenOut": f.swap_token_out, "depositor": f.depositor, "recipient": f.recipient})
}

pub(super) async fn swap_quote(ctx: &Ctx) -> anyhow::Result<()> {
    let request = swap_request(ctx);
    let q = ctx.main.call(AnyOperation::QuoteBridgeSwap, &[], &[], Some(request.clone())).await?.ok()?;
    ensure!(
        q["_tag"] == "bridgeSwap",
        "a swap of {} into {} answered the {} variant",
        request["tokenIn"],
        request["tokenOut"],
        q["_tag"]
    );
    echoes(&q, &request, &["tokenIn", "tokenOut", "chainIn", "chainOut"])?;
    fees_add_up(&q)?;
    leg_adds_up(&q, "/bridgePayAmount", "/bridgeReceiveAmount")?;
    ensure_eq(
        dec(&q, "/payAmount")?,
        requested(&ctx.config.fixtures.swap_amount)?,
        "payAmount = the requested amount (pay mode)",
    )?;
    let (min, receive) = (dec(&q, "/minReceiveAmount")?, dec(&q, "/receiveAmount")?);
    ensure!(min <= receive, "minReceiveAmount {min} is more than receiveAmount {receive}");
    Ok(())
}

pub(super) async fn swap_quote_variants(ctx: &Ctx) -> anyhow::Result<()> {
    let f = &ctx.config.fixtures;
    let mut same = swap_request(ctx);
    same["tokenIn"] = json!(f.token);
    same["tokenOut"] = json!(f.token);
    same["amount"] = json!(f.amount);
    let q = ctx.main.call(AnyOperation::QuoteBridgeSwap, &[], &[], Some(same.clone())).await?.ok()?;
    ensure!(q["_tag"] == "bridge", "the same token on both sides answered the {} variant, not bridge", q["_tag"]);
    fees_add_up(&q)?;
    leg_adds_up(&q, "/payAmount", "/receiveAmount")?;
    same["isSda"] = json!("true");
    let q = ctx.main.call(AnyOperation::QuoteBridgeSwap, &[], &[], Some(same)).await?.ok()?;
    ensure!(
        q["_tag"] == "depositAddressBridge",
        "isSda \"true\" answered the {} variant, not depositAddressBridge",
        q["_tag"]
    );
    fees_add_up(&q)?;
    leg_adds_up(&q, "/payAmount", "/receiveAmount")
}

pub(super) async fn commit_makes_the_record(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    ensure!(record["_id"] == q["quoteId"], "the record's _id {} is not the quote's id {}", record["_id"], q["quoteId"]);
    ensure!(record["state"] == "PENDING", "a committed bridge is {}, not PENDING", record["state"]);
    ensure!(record["userId"].as_str().is_some_and(|u| !u.is_empty()), "the record has no userId");
    for m in ["chainIn", "chainOut", "token", "depositor", "recipient"] {
        ensure!(record[m] == q[m], "the record's {m} {} is not the quote's {}", record[m], q[m]);
    }
    ensure_eq(dec(&record, "/amountIn")?, dec(&q, "/payAmount")?, "amountIn = the quote's payAmount")?;
    ensure_eq(dec(&record, "/amountOut")?, dec(&q, "/receiveAmount")?, "amountOut = the quote's receiveAmount")?;
    for m in ["fee", "gasFee", "sourceGasFee", "platformFee", "percentageFee"] {
        ensure_eq(
            dec(&record, &format!("/{m}"))?,
            dec(&q, &format!("/fees/{m}"))?,
            &format!("the record's {m} = the quote's fees.{m}"),
        )?;
    }
    ensure!(
        date_ms(&record, "/createdAt")? <= date_ms(&record, "/commitmentDate")?,
        "createdAt is after commitmentDate"
    );
    Ok(())
}

pub(super) async fn commit_once(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, _) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    ctx.main.call(AnyOperation::CommitQuote, &[("quoteId", id)], &[], None).await?.expect_tag(422, "InvalidRequest")?;
    Ok(())
}

/// Production beyond the spec: a PENDING bridge is cancelled once (the answer and the record say `CANCELLED`); a
/// second cancel is 422 `CannotCancelBridge`, an unknown id 404 `BridgeNotFound`.
pub(super) async fn cancel_pending_once(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, _) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let body = || Some(json!({ "state": "CANCELLED" }));
    let cancelled = ctx.main.call(AnyOperation::CancelBridge, &[("bridgeId", id)], &[], body()).await?.ok()?;
    ensure!(cancelled["_id"] == id && cancelled["state"] == "CANCELLED", "the cancel answered {cancelled}");
    let record = get_bridge(&ctx.main, id).await?;
    ensure!(record["state"] == "CANCELLED", "after the cancel the bridge is {}", record["state"]);
    ctx.main
        .call(AnyOperation::CancelBridge, &[("bridgeId", id)], &[], body())
        .await?
        .expect_tag(422, "CannotCancelBridge")?;
    let unknown = ctx.unique("unknown");
    ctx.main
        .call(AnyOperation::CancelBridge, &[("bridgeId", &unknown)], &[], body())
        .await?
        .expect_tag(404, "BridgeNotFound")?;
    Ok(())
}

pub(super) async fn unknown_ids(ctx: &Ctx) -> anyhow::Result<()> {
    let unknown = ctx.unique("unknown");
    ctx.main
        .call(AnyOperation::CommitQuote, &[("quoteId", &unknown)], &[], None)
        .await?
        .expect_tag(404, "QuoteNotFound")?;
    // Production documents no 404 for a bridge id: an unknown one is 422 InvalidRequest.
    ctx.main
        .call(AnyOperation::GetBridge, &[("bridgeId", &unknown)], &[], None)
        .await?
        .expect_tag(422, "InvalidRequest")?;
    let f = &ctx.config.fixtures;
    let path = [("depositAddress", unknown.as_str()), ("depositChain", f.deposit_chains[0].as_str())];
    ctx.main
        .call(AnyOperation::GetDepositAddressPublicStatus, &path, &[("destinationAddress", &f.recipient)], None)
        .await?
        .expect_tag(422, "DepositAddressNotFound")?;
    Ok(())
}

async fn history(
    api: &Api,
    page: u64,
    limit: u64,
    sort_by: &str,
    direction: &str,
    state: Option<&str>,
) -> anyhow::Result<(u64, Vec<Value>)> {
    let (page, limit) = (page.to_string(), limit.to_string());
    let mut query =
        vec![("page", page.as_str()), ("limit", limit.as_str()), ("sortBy", sort_by), ("sortDirection", direction)];
    if let Some(state) = state {
        query.push(("state", state));
    }
    let answer = api.call(AnyOperation::ListBridgeHistory, &[], &query, None).await?.ok()?;
    let total = answer["totalItems"]
        .as_u64()
        .ok_or_else(|| anyhow!("totalItems is not a whole number: {}", answer["totalItems"]))?;
    let items = answer["items"].as_array().cloned().unwrap_or_default();
    Ok((total, items))
}

/// Every page of the history (limit chosen so that at most [`MAX_PAGES`] pages are read), checked page by page
/// against `totalItems`; the bridges in order.
async fn all_history(api: &Api, sort_by: &str, direction: &str, state: Option<&str>) -> anyhow::Result<Vec<Value>> {
    let (total, _) = history(api, 1, 1, sort_by, direction, state).await?;
    let limit = if total <= 20 { 3 } else { total.div_ceil(MAX_PAGES as u64 / 2).clamp(3, 100) };
    let pages = total.div_ceil(limit).max(1);
    ensure!(pages <= MAX_PAGES as u64, "the history has {total} bridges: too many to page through");
    let mut bridges = Vec::new();
    for page in 1..=pages {
        let (t, items) = history(api, page, limit, sort_by, direction, state).await?;
        ensure!(t == total, "totalItems changed from {total} to {t} while paging");
        let expected = if page < pages { limit } else { total - limit * (pages - 1) };
        ensure!(
            items.len() as u64 == expected,
            "page {page} of {pages} (limit {limit}, totalItems {total}) has {} items, expected {expected}",
            items.len()
        );
        bridges.extend(items.into_iter().map(|i| i["bridge"].clone()));
    }
    let (t, beyond) = history(api, pages + 1, limit, sort_by, direction, state).await?;
    ensure!(beyond.is_empty(), "page {} (after the last) has {} items", pages + 1, beyond.len());
    ensure!(t == total, "totalItems changed from {total} to {t} while paging");
    Ok(bridges)
}

fn ids(bridges: &[Value]) -> Vec<String> {
    bridges.iter().map(|b| b["_id"].as_str().unwrap_or_default().to_owned()).collect()
}

pub(super) async fn history_paging(ctx: &Ctx) -> anyhow::Result<()> {
    let mut ours = Vec::new();
    for _ in 0..3 {
        let (q, _) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
        ours.push(str_at(&q, "/quoteId")?.to_owned());
    }
    let bridges = all_history(&ctx.main, "createdAt", "asc", None).await?;
    let listed = ids(&bridges);
    let unique: HashSet<&String> = listed.iter().collect();
    ensure!(
        unique.len() == listed.len(),
        "a bridge is listed on two pages ({} listings, {} bridges)",
        listed.len(),
        unique.len()
    );
    for id in &ours {
        ensure!(unique.contains(id), "the committed bridge {id} is on no page");
    }
    Ok(())
}

pub(super) async fn history_sort(ctx: &Ctx) -> anyhow::Result<()> {
    for _ in 0..2 {
        committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    }
    let asc = all_history(&ctx.main, "createdAt", "asc", None).await?;
    let desc = all_history(&ctx.main, "createdAt", "desc", None).await?;
    let times =
        |bridges: &[Value]| bridges.iter().map(|b| date_ms(b, "/createdAt")).collect::<anyhow::Result<Vec<i64>>>();
    let (a, d) = (times(&asc)?, times(&desc)?);
    ensure!(
        a.windows(2).all(|w| w[0] <= w[1]),
        "sortBy=createdAt&sortDirection=asc is not in ascending createdAt order"
    );
    ensure!(
        d.windows(2).all(|w| w[0] >= w[1]),
        "sortBy=createdAt&sortDirection=desc is not in descending createdAt order"
    );
    let set = |b: &[Value]| ids(b).into_iter().collect::<BTreeSet<String>>();
    ensure!(set(&asc) == set(&desc), "ascending and descending orders list different bridges");
    let up_asc = all_history(&ctx.main, "updatedAt", "asc", None).await?;
    let up_desc = all_history(&ctx.main, "updatedAt", "desc", None).await?;
    ensure!(
        set(&up_asc) == set(&asc) && set(&up_desc) == set(&asc),
        "sortBy=updatedAt lists other bridges than sortBy=createdAt"
    );
    Ok(())
}

pub(super) async fn history_filter(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, _) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let (all, _) = history(&ctx.main, 1, 1, "createdAt", "desc", None).await?;
    let mut filtered = 0;
    for state in ["PENDING", "ACCEPTED", "EXECUTED"] {
        let bridges = all_history(&ctx.main, "createdAt", "desc", Some(state)).await?;
        if let Some(other) = bridges.iter().find(|b| b["state"] != state) {
            bail!("state={state} lists bridge {} in state {}", other["_id"], other["state"]);
        }
        ensure!(
            state != "PENDING" || ids(&bridges).iter().any(|b| b == id),
            "state=PENDING does not list the bridge {id} just committed"
        );
        filtered += bridges.len() as u64;
    }
    ensure!(filtered <= all, "the three state filters list {filtered} bridges, more than totalItems {all}");
    Ok(())
}

pub(super) async fn search_cursor(ctx: &Ctx) -> anyhow::Result<()> {
    let note = ctx.unique("search");
    let mut request = address_request(ctx, &note);
    request["reusePolicy"] = json!("create-new");
    let mut created: Vec<(String, String)> = Vec::new();
    for _ in 0..2 {
        created
            .extend(address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?));
    }
    let expected: BTreeSet<(String, String)> = created.iter().cloned().collect();
    ensure!(expected.len() == created.len(), "create-new answered an address twice: {created:?}");
    let mut first: Option<Vec<Value>> = None;
    for (op, size) in [
        (AnyOperation::SearchDepositAddresses, 1),
        (AnyOperation::SearchDepositAddresses, 3),
        (AnyOperation::SearchDepositAddresses, 50),
        (AnyOperation::SearchDepositAddressesLegacy, 2),
    ] {
        let items = read_pages(&ctx.main, op, &[("addressNote", &note)], size).await?;
        let keys = address_keys(&items);
        let unique: BTreeSet<(String, String)> = keys.iter().cloned().collect();
        ensure!(unique.len() == keys.len(), "{op} pageSize={size}: an address is listed twice: {keys:?}");
        ensure!(unique == expected, "{op} pageSize={size} lists {unique:?}, created {expected:?}");
        ensure!(
            items.iter().all(|i| i["addressNote"] == note.as_str()),
            "{op} lists an address with another addressNote"
        );
        match &first {
            None => first = Some(items),
            Some(first) => ensure!(
                first == &items,
                "{op} pageSize={size} lists the addresses in another order or form than pageSize=1"
            ),
        }
    }
    Ok(())
}

pub(super) async fn event_feed_cursor(ctx: &Ctx) -> anyhow::Result<()> {
    let mut ours = Vec::new();
    let mut since = i64::MAX;
    for _ in 0..3 {
        let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
        since = since.min(date_ms(&record, "/createdAt")?);
        ours.push(str_at(&q, "/quoteId")?.to_owned());
    }
    create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &address_request(ctx, &ctx.unique("feed")))
        .await?;
    let reference = feed(&ctx.main, since, 50).await?;
    for id in &ours {
        let pending: Vec<&Value> =
            events_of_bridge(&reference, id).into_iter().filter(|e| e["_tag"] == "BRIDGE_PENDING").collect();
        ensure!(pending.len() == 1, "the feed has {} BRIDGE_PENDING events for bridge {id}, expected 1", pending.len());
    }
    for size in [1, 2, 7] {
        let paged = feed(&ctx.main, since, size).await?;
        if paged != reference {
            let missing = reference.iter().filter(|e| !paged.contains(e)).count();
            let extra = paged.iter().filter(|e| !reference.contains(e)).count();
            bail!(
                "pageSize={size} returns {} events ({missing} missing, {extra} not in the pageSize=50 reading, or another order) where pageSize=50 returns {}",
                paged.len(),
                reference.len()
            );
        }
    }
    Ok(())
}

pub(super) async fn address_reuse_policy(ctx: &Ctx) -> anyhow::Result<()> {
    let request = address_request(ctx, &ctx.unique("reuse"));
    let first = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?);
    let again = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?);
    ensure!(again == first, "the same request again (no reusePolicy) gave {again:?}, not the existing {first:?}");
    let mut explicit = request.clone();
    explicit["reusePolicy"] = json!("reuse-existing");
    let reused = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &explicit).await?);
    ensure!(reused == first, "reusePolicy reuse-existing gave {reused:?}, not the existing {first:?}");
    let mut fresh = request.clone();
    fresh["reusePolicy"] = json!("create-new");
    let new = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &fresh).await?);
    ensure!(
        new.iter().all(|k| !first.contains(k)),
        "reusePolicy create-new gave an existing address: {new:?} (existing {first:?})"
    );
    let mut other_options = request;
    other_options["addressNote"] = json!(ctx.unique("reuse"));
    let other = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &other_options).await?);
    ensure!(other.iter().all(|k| !first.contains(k)), "a request with another addressNote reused {other:?}");
    Ok(())
}

pub(super) async fn deprecated_aliases(ctx: &Ctx) -> anyhow::Result<()> {
    let note = ctx.unique("alias");
    let request = address_request(ctx, &note);
    let current = create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?;
    let legacy = create_addresses(&ctx.main, AnyOperation::CreateDepositAddressesLegacy, &request).await?;
    ensure!(
        address_keys(&legacy) == address_keys(&current),
        "the deprecated path did not reuse the addresses of the /sda path"
    );
    ensure!(legacy.iter().all(|a| a.get("chainMetadata").is_none()), "the deprecated path answered chainMetadata");
    let a = read_pages(&ctx.main, AnyOperation::SearchDepositAddresses, &[("addressNote", &note)], 10).await?;
    let b = read_pages(&ctx.main, AnyOperation::SearchDepositAddressesLegacy, &[("addressNote", &note)], 10).await?;
    ensure!(a == b, "the deprecated search lists other items than /sda/deposit-addresses/search");
    Ok(())
}

pub(super) async fn public_status_of_a_new_address(ctx: &Ctx) -> anyhow::Result<()> {
    let created =
        create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &address_request(ctx, &ctx.unique("status")))
            .await?;
    let f = &ctx.config.fixtures;
    for address in &created {
        let (chain, addr) = (str_at(address, "/depositChain")?, str_at(address, "/depositAddress")?);
        let path = [("depositAddress", addr), ("depositChain", chain)];
        let status = ctx
            .main
            .call(AnyOperation::GetDepositAddressPublicStatus, &path, &[("destinationAddress", &f.recipient)], None)
            .await?
            .ok()?;
        for (m, expected) in [
            ("depositAddress", addr),
            ("depositChain", chain),
            ("destinationChain", f.chain_out.as_str()),
            ("destinationAddress", f.recipient.as_str()),
        ] {
            ensure!(status[m] == expected, "public status {m} is {}, expected {expected:?}", status[m]);
        }
        ensure!(
            status["lastBridges"].as_array().is_some_and(Vec::is_empty),
            "a new address lists bridges: {}",
            status["lastBridges"]
        );
        let wrong = ctx.unique("destination");
        ctx.main
            .call(AnyOperation::GetDepositAddressPublicStatus, &path, &[("destinationAddress", &wrong)], None)
            .await?
            .expect_tag(422, "DepositAddressNotFound")?;
    }
    Ok(())
}

pub(super) async fn post_bridge_data_needs_the_feature(ctx: &Ctx) -> anyhow::Result<()> {
    let mut projects = vec![(&ctx.main, ctx.config.token.as_str())];
    if let (Some(api), Some(token)) = (&ctx.other, &ctx.config.other_token) {
        projects.push((api, token.as_str()));
    }
    for (api, token) in projects {
        let claims =
            super::auth::claims_of(token).ok_or_else(|| anyhow!("the token is not a JWT whose claims can be read"))?;
        let enabled =
            claims["features"].as_array().is_some_and(|f| f.iter().any(|x| x == bridge_server::auth::POST_BRIDGE_DATA));
        let post_bridge = json!({"_tag": "partnerbtcfiv2", "spans": ["a", "b"]});
        let mut request = quote_request(&ctx.config.fixtures);
        request["postBridgeData"] = post_bridge.clone();
        let reply = api.call(AnyOperation::QuoteBridge, &[], &[], Some(request)).await?;
        let mut address = address_request(ctx, &ctx.unique("post-bridge"));
        address["postBridgeData"] = post_bridge.clone();
        let created = api.call(AnyOperation::CreateDepositAddresses, &[], &[], Some(address)).await?;
        if enabled {
            let q = reply.ok()?;
            ensure!(
                q["postBridgeData"] == post_bridge,
                "the quote's postBridgeData is {}, sent {post_bridge}",
                q["postBridgeData"]
            );
            let items = created.ok()?;
            ensure!(
                items[0]["postBridgeData"] == post_bridge,
                "the address's postBridgeData is {}",
                items[0]["postBridgeData"]
            );
        } else {
            // Quotes document no 403 (production's types): 422 there; address creation answers 403.
            reply.expect_tag(422, "InvalidRequest").map_err(|e| {
                anyhow!("project {} without {}: {e}", claims["sub"], bridge_server::auth::POST_BRIDGE_DATA)
            })?;
            created.expect_tag(403, "ExtensionNotEnabled")?;
        }
    }
    Ok(())
}

pub(super) async fn payload_too_large(ctx: &Ctx) -> anyhow::Result<()> {
    let mut request = quote_request(&ctx.config.fixtures);
    request["webhookUrl"] = json!(format!("https://example.com/{}", "x".repeat(2 * 1024 * 1024)));
    ctx.main.call(AnyOperation::QuoteBridge, &[], &[], Some(request)).await?.expect_tag(413, "PayloadTooLarge")?;
    Ok(())
}

pub(super) async fn unknown_path_and_wrong_method(ctx: &Ctx) -> anyhow::Result<()> {
    for (method, path) in
        [("GET", "/conformance/no-such-path"), ("DELETE", "/bridge/quote/user"), ("GET", "/bridge/quote/user")]
    {
        let (status, body) = ctx.main.raw(method, path, None).await?;
        ensure!(
            status == 404 && body.is_empty(),
            "{method} {path} answered {status} {}, expected 404 with an empty body",
            crate::contract::excerpt(&body)
        );
    }
    Ok(())
}
