//! Isolation (`--other-token`): nothing of one project is visible to another. The main project makes a quote, a
//! bridge and deposit addresses; the other project's requests for them are answered exactly like requests for
//! ids that do not exist (same status, same body once the id is replaced), and its history, search, event feed
//! (and, with the sandbox helpers, deposits) never show them; the same for the production endpoints beyond the
//! spec (cancel, cursor history, a deposit address's own views, bridges by deposit hash). With the sandbox
//! helpers, projects are isolated in time too: the other project's clock advance and its reset (`POST
//! /sandbox/reset`, which deletes the other project's data: use a test project) change nothing the main project
//! sees.

use anyhow::{bail, ensure};
use bridge_contract::AnyOperation;
use serde_json::{json, Value};

use super::steps::*;
use crate::runner::check::Ctx;
use crate::runner::http::{Api, Reply};

/// `GET /sandbox/clock` of a project, in ms.
async fn clock(api: &Api) -> anyhow::Result<i64> {
    date_ms(&api.call(AnyOperation::SandboxGetClock, &[], &[], None).await?.ok()?, "/now")
}

/// Real time the main project's clock may pass during a check (its clock may be `--clock real`).
const REAL_TIME_SLACK_MS: i64 = 600_000;

pub(super) async fn foreign_clock_advance(ctx: &Ctx) -> anyhow::Result<()> {
    let id: &str = &main_bridge(ctx).await?;
    let open = quote(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let before = clock(&ctx.main).await?;
    let other = ctx.other()?;
    let day = 86_400_000;
    let theirs = advance(other, day as u64).await?;
    let theirs_now = clock(other).await?;
    ensure!(theirs_now >= theirs, "the other project's clock answered {theirs} after advancing, then {theirs_now}");
    let after = clock(&ctx.main).await?;
    ensure!(
        (before..before + REAL_TIME_SLACK_MS).contains(&after),
        "the other project's advance of a day moved the main project's clock from {before} to {after} ms"
    );
    let record = get_bridge(&ctx.main, id).await?;
    ensure!(
        record["state"] == "PENDING",
        "the other project's advance moved the main project's bridge to {}",
        record["state"]
    );
    // The main project's quote has not expired on the other project's time.
    commit(&ctx.main, str_at(&open, "/quoteId")?).await
}

pub(super) async fn foreign_reset(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let since = date_ms(&record, "/createdAt")?;
    let mine = feed(&ctx.main, since, 50).await?;
    let before = clock(&ctx.main).await?;
    let other = ctx.other()?;
    let (theirs, _) = committed_bridge(other, quote_request(&ctx.config.fixtures)).await?;
    let reset = other.call(AnyOperation::SandboxResetProject, &[], &[], None).await?.ok()?;
    ensure!(
        reset.pointer("/deleted/bridges").and_then(Value::as_u64).unwrap_or(0) >= 1,
        "the other project's reset deleted no bridge: {reset}"
    );
    let gone = other.call(AnyOperation::GetBridge, &[("bridgeId", str_at(&theirs, "/quoteId")?)], &[], None).await?;
    ensure!(gone.status >= 400, "the other project's bridge is still there after its reset: {}", gone.describe());
    let record = get_bridge(&ctx.main, id).await?;
    ensure!(record["state"] == "PENDING", "the other project's reset changed the main project's bridge");
    let mine_after = feed(&ctx.main, since, 50).await?;
    ensure!(
        mine_after.len() >= mine.len() && mine_after[..mine.len()] == mine[..],
        "the other project's reset changed the main project's feed ({} events before, {} after)",
        mine.len(),
        mine_after.len()
    );
    let after = clock(&ctx.main).await?;
    ensure!(
        (before..before + REAL_TIME_SLACK_MS).contains(&after),
        "the other project's reset moved the main project's clock from {before} to {after} ms"
    );
    Ok(())
}

/// A new committed bridge of the main project: its id.
async fn main_bridge(ctx: &Ctx) -> anyhow::Result<String> {
    let (q, _) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    Ok(str_at(&q, "/quoteId")?.to_owned())
}

/// The other project's `op` with `body` on a new (PENDING) bridge of the main project (`what` it is, `action`:
/// which word names it in the failure) is answered like the same on an unknown bridge, and the bridge stays PENDING.
async fn bridge_stays_pending(
    ctx: &Ctx,
    what: &str,
    action: &str,
    op: AnyOperation,
    body: Value,
) -> anyhow::Result<()> {
    let id = main_bridge(ctx).await?;
    let unknown = ctx.unique("bridge");
    let request = Request { op, path: &[("bridgeId", &id)], query: &[], body: Some(body) };
    answered_like_unknown(ctx.other()?, what, request, &id, &unknown).await?;
    let record = get_bridge(&ctx.main, &id).await?;
    ensure!(record["state"] == "PENDING", "the other project's {action} moved the bridge to {}", record["state"]);
    Ok(())
}

/// A request of the other project that names something of the main project's by its id in `path`.
struct Request<'a> {
    op: AnyOperation,
    path: &'a [(&'a str, &'a str)],
    query: &'a [(&'a str, &'a str)],
    body: Option<Value>,
}

/// The other project's `request`, naming the main project's `id`, must be answered like the same request naming
/// the unknown id `unknown` instead ([`like_unknown`]).
async fn answered_like_unknown(
    other: &Api,
    what: &str,
    request: Request<'_>,
    id: &str,
    unknown: &str,
) -> anyhow::Result<()> {
    let foreign = other.call(request.op, request.path, request.query, request.body.clone()).await?;
    let path: Vec<(&str, &str)> =
        request.path.iter().map(|&(name, value)| (name, if value == id { unknown } else { value })).collect();
    let missing = other.call(request.op, &path, request.query, request.body).await?;
    like_unknown(what, &foreign, id, &missing, unknown)
}

/// The answer to a foreign id must be the answer to an unknown id: same status, same body with the ids
/// replaced by one placeholder.
fn like_unknown(
    what: &str,
    foreign: &Reply,
    foreign_id: &str,
    unknown: &Reply,
    unknown_id: &str,
) -> anyhow::Result<()> {
    let normalise = |reply: &Reply, id: &str| String::from_utf8_lossy(&reply.body).replace(id, "<id>");
    if foreign.status != unknown.status || normalise(foreign, foreign_id) != normalise(unknown, unknown_id) {
        bail!(
            "{what}: the other project's id is answered {}, an unknown id {}",
            foreign.describe(),
            unknown.describe()
        );
    }
    ensure!(foreign.status >= 400, "{what}: the other project's id is answered {}", foreign.describe());
    Ok(())
}

pub(super) async fn commit_foreign_quote(ctx: &Ctx) -> anyhow::Result<()> {
    let q = quote(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let unknown = ctx.unique("quote");
    let other = ctx.other()?;
    let request = Request { op: AnyOperation::CommitQuote, path: &[("quoteId", id)], query: &[], body: None };
    answered_like_unknown(other, "committing the main project's quote", request, id, &unknown).await?;
    // The quote is still the main project's to commit.
    commit(&ctx.main, id).await
}

pub(super) async fn get_foreign_bridge(ctx: &Ctx) -> anyhow::Result<()> {
    let id: &str = &main_bridge(ctx).await?;
    let unknown = ctx.unique("bridge");
    let other = ctx.other()?;
    let request = Request { op: AnyOperation::GetBridge, path: &[("bridgeId", id)], query: &[], body: None };
    answered_like_unknown(other, "reading the main project's bridge", request, id, &unknown).await
}

pub(super) async fn history(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let other = ctx.other()?;
    for state in [None, Some("PENDING")] {
        let mut page = 1u64;
        loop {
            let p = page.to_string();
            let mut query =
                vec![("page", p.as_str()), ("limit", "100"), ("sortBy", "createdAt"), ("sortDirection", "desc")];
            query.extend(state.map(|s| ("state", s)));
            let answer = other.call(AnyOperation::ListBridgeHistory, &[], &query, None).await?.ok()?;
            let items = answer["items"].as_array().cloned().unwrap_or_default();
            if let Some(item) =
                items.iter().find(|i| i["bridge"]["_id"] == id || i["bridge"]["userId"] == record["userId"])
            {
                bail!("the other project's history lists the main project's bridge {}", item["bridge"]["_id"]);
            }
            if items.len() < 100 || page as usize >= MAX_PAGES {
                break;
            }
            page += 1;
        }
    }
    Ok(())
}

pub(super) async fn event_feed(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let note = ctx.unique("isolation");
    let created =
        create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &address_request(ctx, &note)).await?;
    let since = date_ms(&record, "/createdAt")?;
    let mine = feed(&ctx.main, since, 50).await?;
    ensure!(!events_of_bridge(&mine, id).is_empty(), "the main project's feed has no event of its bridge {id}");
    let theirs = feed(ctx.other()?, since, 50).await?;
    ensure!(
        events_of_bridge(&theirs, id).is_empty(),
        "the other project's feed has events of the main project's bridge {id}"
    );
    let addresses: Vec<&Value> = created.iter().map(|a| &a["depositAddress"]).collect();
    if let Some(e) =
        theirs.iter().find(|e| addresses.contains(&&e["depositAddress"]) || e["addressNote"] == note.as_str())
    {
        bail!("the other project's feed has the main project's {} event", e["_tag"]);
    }
    Ok(())
}

pub(super) async fn search(ctx: &Ctx) -> anyhow::Result<()> {
    let note = ctx.unique("isolation");
    let created =
        create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &address_request(ctx, &note)).await?;
    let other = ctx.other()?;
    for op in [AnyOperation::SearchDepositAddresses, AnyOperation::SearchDepositAddressesLegacy] {
        let found = read_pages(other, op, &[("addressNote", &note)], 50).await?;
        ensure!(
            found.is_empty(),
            "{op} of the other project finds the main project's addresses: {:?}",
            address_keys(&found)
        );
        let (chain, _) = &address_keys(&created)[0];
        let by_chain = read_pages(
            other,
            op,
            &[("depositChain", chain), ("destinationAddress", &ctx.config.fixtures.recipient)],
            100,
        )
        .await?;
        let keys = address_keys(&created);
        ensure!(
            address_keys(&by_chain).iter().all(|k| !keys.contains(k)),
            "{op} of the other project lists the main project's address"
        );
    }
    Ok(())
}

pub(super) async fn public_status(ctx: &Ctx) -> anyhow::Result<()> {
    let (chain, address) = new_address(ctx, &ctx.main, "isolation").await?;
    let unknown = ctx.unique("address");
    let destination = [("destinationAddress", ctx.config.fixtures.recipient.as_str())];
    let other = ctx.other()?;
    let request = Request {
        op: AnyOperation::GetDepositAddressPublicStatus,
        path: &[("depositAddress", &address), ("depositChain", &chain)],
        query: &destination,
        body: None,
    };
    answered_like_unknown(other, "the public status of the main project's address", request, &address, &unknown).await
}

pub(super) async fn address_reuse(ctx: &Ctx) -> anyhow::Result<()> {
    let request = address_request(ctx, &ctx.unique("isolation"));
    let mine = address_keys(&create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?);
    let theirs = address_keys(&create_addresses(ctx.other()?, AnyOperation::CreateDepositAddresses, &request).await?);
    ensure!(
        theirs.iter().all(|k| !mine.contains(k)),
        "the other project's identical request reused the main project's addresses {theirs:?}"
    );
    Ok(())
}

pub(super) async fn deposit_foreign_bridge(ctx: &Ctx) -> anyhow::Result<()> {
    let what = "a deposit into the main project's bridge";
    bridge_stays_pending(ctx, what, "deposit", AnyOperation::SandboxDepositBridge, json!({})).await
}

pub(super) async fn deposit_foreign_address(ctx: &Ctx) -> anyhow::Result<()> {
    let (chain, address) = new_address(ctx, &ctx.main, "isolation").await?;
    let unknown = ctx.unique("address");
    let f = &ctx.config.fixtures;
    let deposit = json!({"token": f.deposit_token, "amount": f.deposit_amount});
    let other = ctx.other()?;
    let request = Request {
        op: AnyOperation::SandboxDepositIntoAddress,
        path: &[("depositAddress", &address), ("depositChain", &chain)],
        query: &[],
        body: Some(deposit),
    };
    answered_like_unknown(other, "a deposit into the main project's address", request, &address, &unknown).await?;
    let status = ctx
        .main
        .call(
            AnyOperation::GetDepositAddressPublicStatus,
            &[("depositAddress", &address), ("depositChain", &chain)],
            &[("destinationAddress", &f.recipient)],
            None,
        )
        .await?
        .ok()?;
    ensure!(
        status["lastBridges"].as_array().is_some_and(Vec::is_empty),
        "the other project's deposit shows in the address's status"
    );
    Ok(())
}

pub(super) async fn cancel_foreign_bridge(ctx: &Ctx) -> anyhow::Result<()> {
    let what = "cancelling the main project's bridge";
    bridge_stays_pending(ctx, what, "cancel", AnyOperation::CancelBridge, json!({ "state": "CANCELLED" })).await
}

pub(super) async fn cursor_history(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let other = ctx.other()?;
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut query = vec![("sortBy", "createdAt"), ("sortDirection", "desc"), ("pageSize", "100")];
        if let Some(t) = &token {
            query.push(("pageToken", t.as_str()));
        }
        let answer = other.call(AnyOperation::ListBridgeHistoryCursor, &[], &query, None).await?.ok()?;
        let items = answer["items"].as_array().cloned().unwrap_or_default();
        if let Some(item) = items.iter().find(|i| i["bridge"]["_id"] == id || i["bridge"]["userId"] == record["userId"])
        {
            bail!("the other project's cursor history lists the main project's bridge {}", item["bridge"]["_id"]);
        }
        match answer["nextPageToken"].as_str() {
            Some(next) => token = Some(next.to_owned()),
            None => break,
        }
    }
    Ok(())
}

pub(super) async fn foreign_address_views(ctx: &Ctx) -> anyhow::Result<()> {
    let (chain, address) = new_address(ctx, &ctx.main, "isolation").await?;
    let unknown = ctx.unique("address");
    let other = ctx.other()?;
    for op in [
        AnyOperation::GetDepositAddressStatus,
        AnyOperation::GetDepositAddressHistory,
        AnyOperation::GetDepositAddressCompletedRefunds,
    ] {
        let request =
            Request { op, path: &[("depositAddress", &address), ("depositChain", &chain)], query: &[], body: None };
        answered_like_unknown(other, &format!("{op} of the main project's address"), request, &address, &unknown)
            .await?;
    }
    Ok(())
}

pub(super) async fn foreign_bridge_by_deposit_hash(ctx: &Ctx) -> anyhow::Result<()> {
    let id: &str = &main_bridge(ctx).await?;
    let hash = ctx.unique("deposit-hash");
    ctx.main
        .call(AnyOperation::SandboxDepositBridge, &[("bridgeId", id)], &[], Some(json!({ "txHash": hash })))
        .await?
        .ok()?;
    let mine =
        ctx.main.call(AnyOperation::GetBridgesByDepositHash, &[("depositTxHash", &hash)], &[], None).await?.ok()?;
    ensure!(
        mine.as_array().is_some_and(|items| items.iter().any(|r| r["_id"] == id)),
        "the main project's bridge is not found by its deposit hash: {mine}"
    );
    let unknown = ctx.unique("deposit-hash");
    let other = ctx.other()?;
    let request = Request {
        op: AnyOperation::GetBridgesByDepositHash,
        path: &[("depositTxHash", &hash)],
        query: &[],
        body: None,
    };
    answered_like_unknown(other, "the main project's bridge by its deposit hash", request, &hash, &unknown).await
}
