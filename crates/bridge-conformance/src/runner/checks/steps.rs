//! The steps the checks share: quote, commit, read a bridge, create deposit addresses, read the event feed and
//! the search page by page, advance the sandbox clock, and read typed values (decimals, dates) out of answers.

use std::collections::HashSet;

use anyhow::{anyhow, bail, Context as _};
use bridge_contract::{AnyOperation, DateString, DecimalString};
use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::runner::check::Ctx;
use crate::runner::config::Fixtures;
use crate::runner::http::Api;

/// Most pages a pager reads before giving up (a deployment with a huge history or feed).
pub const MAX_PAGES: usize = 200;

/// A bridge quote request of the fixtures, `pay` mode.
pub fn quote_request(f: &Fixtures) -> Value {
    json!({
        "token": f.token, "chainIn": f.chain_in, "chainOut": f.chain_out, "amount": f.amount, "mode": "pay",
        "depositor": f.depositor, "recipient": f.recipient,
    })
}

/// `POST /bridge/quote/user`, expecting 200.
pub async fn quote(api: &Api, request: Value) -> anyhow::Result<Value> {
    api.call(AnyOperation::QuoteBridge, &[], &[], Some(request)).await?.ok()
}

/// `POST /bridge/quote/commit/{quoteId}`, expecting 200 with the quote's id.
pub async fn commit(api: &Api, quote_id: &str) -> anyhow::Result<()> {
    let answer = api.call(AnyOperation::CommitQuote, &[("quoteId", quote_id)], &[], None).await?.ok()?;
    if answer["quoteId"] != quote_id {
        bail!("committing quote {quote_id} answered quoteId {}", answer["quoteId"]);
    }
    Ok(())
}

/// `GET /bridge/history/bridge/{bridgeId}`, expecting 200.
pub async fn get_bridge(api: &Api, id: &str) -> anyhow::Result<Value> {
    api.call(AnyOperation::GetBridge, &[("bridgeId", id)], &[], None).await?.ok()
}

/// A fresh quote committed: the quote and the bridge record.
pub async fn committed_bridge(api: &Api, request: Value) -> anyhow::Result<(Value, Value)> {
    let q = quote(api, request).await?;
    let id = str_at(&q, "/quoteId")?.to_owned();
    commit(api, &id).await?;
    let record = get_bridge(api, &id).await?;
    Ok((q, record))
}

/// A deposit-address request of the fixtures with a note unique to this run.
pub fn address_request(ctx: &Ctx, note: &str) -> Value {
    let f = &ctx.config.fixtures;
    json!({"depositChains": f.deposit_chains, "destinationChain": f.chain_out, "destinationAddress": f.recipient, "addressNote": note})
}

/// A routing deposit address on the first deposit chain whose one route takes the fixtures' deposit token to
/// the recipient; any other token has no route.
pub fn routing_request(ctx: &Ctx, note: &str) -> Value {
    let f = &ctx.config.fixtures;
    let route = json!({
        "matcher": {"_tag": "sentToken", "symbolsOrAddresses": [f.deposit_token]},
        "action": {"_tag": "bridge", "destinationChain": f.chain_out, "destinationAddress": f.recipient},
        "priority": 1
    });
    json!({"depositChain": f.deposit_chains[0], "routes": [route], "addressNote": note})
}

/// `POST /sda/deposit-addresses` (or another create operation), expecting 200 with one address per chain.
pub async fn create_addresses(api: &Api, op: AnyOperation, request: &Value) -> anyhow::Result<Vec<Value>> {
    let answer = api.call(op, &[], &[], Some(request.clone())).await?.ok()?;
    let items = answer.as_array().cloned().ok_or_else(|| anyhow!("{op} did not answer an array"))?;
    let chains = request["depositChains"].as_array().map(Vec::len).unwrap_or(0);
    if items.len() != chains {
        bail!("{op} answered {} addresses for {chains} deposit chains", items.len());
    }
    for (item, chain) in items.iter().zip(request["depositChains"].as_array().into_iter().flatten()) {
        if &item["depositChain"] != chain {
            bail!(
                "{op}: addresses are not in the order of depositChains ({} where {chain} was asked)",
                item["depositChain"]
            );
        }
    }
    Ok(items)
}

/// A new deposit address of `api`'s project, noted as for `what`: its chain and address.
pub async fn new_address(ctx: &Ctx, api: &Api, what: &str) -> anyhow::Result<(String, String)> {
    let request = address_request(ctx, &ctx.unique(what));
    let created = create_addresses(api, AnyOperation::CreateDepositAddresses, &request).await?;
    Ok(address_keys(&created).remove(0))
}

/// The `(depositChain, depositAddress)` of each address.
pub fn address_keys(items: &[Value]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|a| {
            (
                a["depositChain"].as_str().unwrap_or_default().to_owned(),
                a["depositAddress"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Reads a cursor-paged operation to the end: `items` of every page, following `nextPageToken`; fails when a
/// token repeats or the pages never end.
pub async fn read_pages(
    api: &Api,
    op: AnyOperation,
    query: &[(&str, &str)],
    page_size: u32,
) -> anyhow::Result<Vec<Value>> {
    let size = page_size.to_string();
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    let mut seen_tokens = HashSet::new();
    for page_number in 1..=MAX_PAGES {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("pageSize", &size));
        if let Some(t) = &token {
            q.push(("pageToken", t));
        }
        let page = api.call(op, &[], &q, None).await?.ok()?;
        let page_items =
            page["items"].as_array().ok_or_else(|| anyhow!("{op} page {page_number} has no items array"))?;
        if page_items.len() > page_size as usize {
            bail!("{op} page {page_number} has {} items, more than pageSize {page_size}", page_items.len());
        }
        items.extend(page_items.iter().cloned());
        match &page["nextPageToken"] {
            Value::Null => return Ok(items),
            Value::String(t) => {
                if !seen_tokens.insert(t.clone()) {
                    bail!("{op} gave the same nextPageToken {t:?} twice");
                }
                token = Some(t.clone());
            }
            other => bail!("{op} nextPageToken is {other}"),
        }
    }
    bail!("{op} did not end within {MAX_PAGES} pages of {page_size}")
}

/// The event feed from `since_ms` (inclusive), `page_size` per page.
pub async fn feed(api: &Api, since_ms: i64, page_size: u32) -> anyhow::Result<Vec<Value>> {
    read_pages(api, AnyOperation::ListUserEvents, &[("sinceTimestamp", &since_ms.to_string())], page_size).await
}

/// `POST /sandbox/clock/advance`: the sandbox time after advancing, in ms.
pub async fn advance(api: &Api, ms: u64) -> anyhow::Result<i64> {
    let answer = api.call(AnyOperation::SandboxAdvanceClock, &[], &[], Some(json!({ "ms": ms }))).await?.ok()?;
    date_ms(&answer, "/now")
}

/// The string at a JSON pointer.
pub fn str_at<'a>(v: &'a Value, pointer: &str) -> anyhow::Result<&'a str> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("no string at {pointer} in {}", crate::contract::excerpt(v.to_string().as_bytes())))
}

/// The decimal string at a JSON pointer, exactly (`rust_decimal`; never rounded).
pub fn dec(v: &Value, pointer: &str) -> anyhow::Result<Decimal> {
    let s = str_at(v, pointer)?;
    let d: DecimalString = s.parse().map_err(|e| anyhow!("{pointer} = {s:?} is not a decimal string: {e}"))?;
    d.to_decimal().with_context(|| format!("{pointer} = {s:?} does not fit rust_decimal"))
}

/// The decimal string at a pointer, or zero when the member is absent.
pub fn dec_or_zero(v: &Value, pointer: &str) -> anyhow::Result<Decimal> {
    if v.pointer(pointer).is_none() {
        return Ok(Decimal::ZERO);
    }
    dec(v, pointer)
}

/// The date string at a JSON pointer, in ms since the epoch.
pub fn date_ms(v: &Value, pointer: &str) -> anyhow::Result<i64> {
    let s = str_at(v, pointer)?;
    let d: DateString = s.parse().map_err(|e| anyhow!("{pointer} = {s:?} is not a date: {e:?}"))?;
    Ok(d.millis())
}

/// Fails with `what` and both sides when `left != right`.
pub fn ensure_eq<T: PartialEq + std::fmt::Display>(left: T, right: T, what: &str) -> anyhow::Result<()> {
    if left != right {
        bail!("{what}: {left} ≠ {right}");
    }
    Ok(())
}

/// The `_tag`s of events.
pub fn tags(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["_tag"].as_str().unwrap_or("?")).collect()
}

/// The events about bridge `id` (bridge events carry the record's `_id`).
pub fn events_of_bridge<'a>(events: &'a [Value], id: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["_id"] == id).collect()
}
