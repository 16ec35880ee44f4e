//! Lifecycles, driven with the sandbox helpers (`--sandbox-helpers`): a committed bridge paid with
//! `POST /sandbox/bridges/{id}/deposit` moves forward through its states (never backwards) to `EXECUTED` as the
//! sandbox clock advances, and emits exactly `BRIDGE_PENDING`, `BRIDGE_ACCEPTED`, `BRIDGE_EXECUTED`, matching
//! the record; a bridge whose quote expires is `CANCELLED` (`BRIDGE_CANCELLED`) and the expired quote cannot be
//! committed; deposits into deposit addresses are bridged to `EXECUTED` or rejected (`OVER_MAX`, `UNDER_MIN`,
//! `UNSUPPORTED_TOKEN`) as the address's limits say, with their events and public status.

use anyhow::{anyhow, bail, ensure};
use bridge_contract::AnyOperation;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::steps::*;
use crate::runner::check::Ctx;
use crate::runner::http::Api;

/// States in lifecycle order (the usual path; `CANCELLED` and the failure states end it elsewhere).
pub const ORDER: [&str; 5] = ["PENDING", "PENDING_CONFIRMATION", "DEPOSIT_ACCEPTED", "ACCEPTED", "EXECUTED"];

fn rank(state: &str) -> Option<usize> {
    ORDER.iter().position(|s| *s == state)
}

pub(super) async fn clock_advances(ctx: &Ctx) -> anyhow::Result<()> {
    let t0 = advance(&ctx.main, 0).await?;
    let t1 = advance(&ctx.main, 1500).await?;
    ensure!(t1 - t0 >= 1500, "advancing by 1500 ms moved the clock from {t0} to {t1}");
    let t2 = advance(&ctx.main, 0).await?;
    ensure!(t2 >= t1, "the clock went backwards: {t1} then {t2}");
    Ok(())
}

/// Advances the clock in steps of a twentieth of the bridge's `estimatedDuration` (at least 1 s) until the
/// bridge is `EXECUTED` or three durations have passed; the states seen must follow [`ORDER`]. Returns the
/// states seen and the final record.
pub async fn drive_to_executed(api: &Api, id: &str, first: &Value) -> anyhow::Result<(Vec<String>, Value)> {
    let duration = first["estimatedDuration"].as_f64().filter(|d| *d > 0.0).unwrap_or(60_000.0) as u64;
    let step = (duration / 20).max(1000);
    let mut seen = vec![first["state"].as_str().unwrap_or("?").to_owned()];
    let mut record = first.clone();
    let mut elapsed = 0;
    while seen.last().map(String::as_str) != Some("EXECUTED") && elapsed <= 3 * duration {
        advance(api, step).await?;
        elapsed += step;
        record = get_bridge(api, id).await?;
        let state = record["state"].as_str().unwrap_or("?").to_owned();
        let last = seen.last().cloned().unwrap_or_default();
        if state != last {
            match (rank(&last), rank(&state)) {
                (Some(a), Some(b)) if b > a => seen.push(state),
                _ => bail!("bridge {id} went from {last} to {state} (states seen: {})", seen.join(" → ")),
            }
        }
    }
    if seen.last().map(String::as_str) != Some("EXECUTED") {
        bail!("bridge {id} is {} after the clock advanced {elapsed} ms (estimatedDuration {duration} ms); states seen: {}", record["state"], seen.join(" → "));
    }
    Ok((seen, record))
}

/// Quote, commit, deposit: the quote and the record after the deposit.
async fn paid_bridge(ctx: &Ctx, request: Value) -> anyhow::Result<(Value, Value)> {
    let (q, _) = committed_bridge(&ctx.main, request).await?;
    let id = str_at(&q, "/quoteId")?;
    let record =
        ctx.main.call(AnyOperation::SandboxDepositBridge, &[("bridgeId", id)], &[], Some(json!({}))).await?.ok()?;
    ensure!(record["_id"] == id, "the deposit answered the record of {}, not {id}", record["_id"]);
    ensure!(
        record["state"] == "PENDING_CONFIRMATION",
        "a paid bridge is {}, not PENDING_CONFIRMATION",
        record["state"]
    );
    Ok((q, record))
}

pub(super) async fn bridge_to_executed(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, paid) = paid_bridge(ctx, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let (_seen, executed) = drive_to_executed(&ctx.main, id, &paid).await?;
    ensure!(
        executed["depositTxHash"] == paid["depositTxHash"],
        "depositTxHash changed from {} to {}",
        paid["depositTxHash"],
        executed["depositTxHash"]
    );
    ensure_eq(
        dec(&executed, "/amountOut")?,
        dec(&q, "/receiveAmount")?,
        "the executed record's amountOut = the quote's receiveAmount",
    )?;
    for (state, listed) in [("EXECUTED", true), ("PENDING", false)] {
        let query =
            [("page", "1"), ("limit", "100"), ("sortBy", "updatedAt"), ("sortDirection", "desc"), ("state", state)];
        let page = ctx.main.call(AnyOperation::ListBridgeHistory, &[], &query, None).await?.ok()?;
        let found = page["items"].as_array().into_iter().flatten().any(|i| i["bridge"]["_id"] == id);
        ensure!(
            found == listed,
            "state={state} {} the executed bridge {id}",
            if listed { "does not list" } else { "lists" }
        );
    }
    Ok(())
}

pub(super) async fn bridge_events(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, paid) = paid_bridge(ctx, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let (_, executed) = drive_to_executed(&ctx.main, id, &paid).await?;
    let events = feed(&ctx.main, date_ms(&executed, "/createdAt")?, 50).await?;
    let ours = events_of_bridge(&events, id);
    let kinds: Vec<&str> = ours.iter().map(|e| e["_tag"].as_str().unwrap_or("?")).collect();
    ensure!(
        kinds == ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED"],
        "bridge {id} emitted {kinds:?}, expected BRIDGE_PENDING, BRIDGE_ACCEPTED, BRIDGE_EXECUTED once each, in order"
    );
    for event in &ours {
        ensure!(event["type"] == "bridge", "{} has type {}, not bridge", event["_tag"], event["type"]);
        for m in ["userId", "chainIn", "chainOut", "token", "depositor", "recipient", "amountIn", "amountOut", "fee"] {
            ensure!(event[m] == executed[m], "{}.{m} is {}, the record's {}", event["_tag"], event[m], executed[m]);
        }
    }
    ensure!(ours[1]["depositTxHash"] == executed["depositTxHash"], "BRIDGE_ACCEPTED.depositTxHash is not the record's");
    ensure!(
        ours[2]["withdrawTxHash"] == executed["withdrawTxHash"],
        "BRIDGE_EXECUTED.withdrawTxHash is not the record's"
    );
    Ok(())
}

pub(super) async fn deposit_twice_refused(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, _) = paid_bridge(ctx, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    ctx.main
        .call(AnyOperation::SandboxDepositBridge, &[("bridgeId", id)], &[], Some(json!({})))
        .await?
        .expect_tag(422, "InvalidRequest")?;
    Ok(())
}

pub(super) async fn expired_quote_cancels_the_bridge(ctx: &Ctx) -> anyhow::Result<()> {
    let (q, record) = committed_bridge(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let id = str_at(&q, "/quoteId")?;
    let late = quote(&ctx.main, quote_request(&ctx.config.fixtures)).await?;
    let expires = date_ms(&q, "/expiresAt")?.max(date_ms(&late, "/expiresAt")?);
    let now = advance(&ctx.main, 0).await?;
    advance(&ctx.main, (expires - now).max(0) as u64 + 1000).await?;
    let cancelled = get_bridge(&ctx.main, id).await?;
    ensure!(
        cancelled["state"] == "CANCELLED",
        "bridge {id} is {} after its quote expired without a deposit, not CANCELLED",
        cancelled["state"]
    );
    ctx.main
        .call(AnyOperation::CommitQuote, &[("quoteId", str_at(&late, "/quoteId")?)], &[], None)
        .await?
        .expect_tag(404, "QuoteNotFound")?;
    let events = feed(&ctx.main, date_ms(&record, "/createdAt")?, 50).await?;
    let kinds: Vec<&str> = events_of_bridge(&events, id).iter().map(|e| e["_tag"].as_str().unwrap_or("?")).collect();
    ensure!(
        kinds == ["BRIDGE_PENDING", "BRIDGE_CANCELLED"],
        "bridge {id} emitted {kinds:?}, expected BRIDGE_PENDING, BRIDGE_CANCELLED"
    );
    Ok(())
}

/// A new deposit address of the fixtures (first deposit chain) and its supported-token entry for `token`.
async fn address_for(ctx: &Ctx, token: &str) -> anyhow::Result<(String, String, Value)> {
    let created = create_addresses(
        &ctx.main,
        AnyOperation::CreateDepositAddresses,
        &address_request(ctx, &ctx.unique("lifecycle")),
    )
    .await?;
    let address = &created[0];
    let supported = address["supportedTokens"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["symbol"] == token)
        .cloned()
        .unwrap_or(Value::Null);
    Ok((str_at(address, "/depositChain")?.to_owned(), str_at(address, "/depositAddress")?.to_owned(), supported))
}

async fn deposit(ctx: &Ctx, chain: &str, address: &str, token: &str, amount: &str) -> anyhow::Result<Value> {
    ctx.main
        .call(
            AnyOperation::SandboxDepositIntoAddress,
            &[("depositAddress", address), ("depositChain", chain)],
            &[],
            Some(json!({"token": token, "amount": amount})),
        )
        .await?
        .ok()
}

async fn last_bridges(ctx: &Ctx, chain: &str, address: &str) -> anyhow::Result<Vec<Value>> {
    let path = [("depositAddress", address), ("depositChain", chain)];
    let status = ctx
        .main
        .call(
            AnyOperation::GetDepositAddressPublicStatus,
            &path,
            &[("destinationAddress", &ctx.config.fixtures.recipient)],
            None,
        )
        .await?
        .ok()?;
    Ok(status["lastBridges"].as_array().cloned().unwrap_or_default())
}

pub(super) async fn deposit_address_bridged(ctx: &Ctx) -> anyhow::Result<()> {
    let f = &ctx.config.fixtures;
    let (chain, address, supported) = address_for(ctx, &f.deposit_token).await?;
    ensure!(!supported.is_null(), "the address does not list {} in supportedTokens", f.deposit_token);
    let answer = deposit(ctx, &chain, &address, &f.deposit_token, &f.deposit_amount).await?;
    let id = answer["bridgeId"]
        .as_str()
        .ok_or_else(|| anyhow!("a deposit of {} {} started no bridge: {answer}", f.deposit_amount, f.deposit_token))?
        .to_owned();
    let record = get_bridge(&ctx.main, &id).await?;
    ensure!(
        record["_tag"] == "depositAddressBridge",
        "the deposit's bridge is a {} record, not depositAddressBridge",
        record["_tag"]
    );
    let (_, executed) = drive_to_executed(&ctx.main, &id, &record).await?;
    let last = last_bridges(ctx, &chain, &address).await?;
    ensure!(last.len() == 1, "the public status lists {} deposits, expected 1", last.len());
    ensure!(
        last[0]["status"]["_tag"] == "EXECUTED",
        "the public status of the executed deposit is {}",
        last[0]["status"]
    );
    ensure_eq(
        dec(&last[0], "/status/amountOut")?,
        dec(&executed, "/amountOut")?,
        "the public status's amountOut = the record's",
    )?;
    let events = feed(&ctx.main, date_ms(&record, "/createdAt")?, 50).await?;
    let detected = events
        .iter()
        .filter(|e| {
            e["_tag"] == "DEPOSIT_ADDRESS_DEPOSIT_DETECTED" && e["depositAddress"]["depositAddress"] == address.as_str()
        })
        .count();
    ensure!(detected == 1, "{detected} DEPOSIT_ADDRESS_DEPOSIT_DETECTED events for the deposit, expected 1");
    let kinds: Vec<&str> = events_of_bridge(&events, &id).iter().map(|e| e["_tag"].as_str().unwrap_or("?")).collect();
    ensure!(
        kinds.last() == Some(&"BRIDGE_EXECUTED") && kinds.iter().filter(|k| **k == "BRIDGE_EXECUTED").count() == 1,
        "the deposit's bridge emitted {kinds:?}, expected one BRIDGE_EXECUTED, last"
    );
    Ok(())
}

/// A rejected deposit: no bridge, `REJECTED{reason}` in the answer and the public status, and one
/// `DEPOSIT_ADDRESS_BRIDGE_REJECTED` event with the reason.
async fn rejected(
    ctx: &Ctx,
    chain: &str,
    address: &str,
    token: &str,
    amount: &str,
    reason: &str,
) -> anyhow::Result<()> {
    let since = advance(&ctx.main, 0).await?;
    let answer = deposit(ctx, chain, address, token, amount).await?;
    ensure!(
        answer["bridgeId"].is_null(),
        "a deposit of {amount} {token} started bridge {}, expected a {reason} rejection",
        answer["bridgeId"]
    );
    let status = &answer["deposit"]["status"];
    ensure!(
        status["_tag"] == "REJECTED" && status["reason"] == reason,
        "a deposit of {amount} {token} is {status}, expected REJECTED {reason}"
    );
    let last = last_bridges(ctx, chain, address).await?;
    ensure!(
        last.first().is_some_and(|d| d["status"] == *status),
        "the public status's newest deposit is not the rejected one: {:?}",
        last.first()
    );
    let events = feed(&ctx.main, since, 50).await?;
    let found: Vec<&Value> = events
        .iter()
        .filter(|e| e["_tag"] == "DEPOSIT_ADDRESS_BRIDGE_REJECTED" && e["depositAddress"]["depositAddress"] == address)
        .collect();
    ensure!(
        found.len() == 1 && found[0]["reason"] == reason,
        "expected one DEPOSIT_ADDRESS_BRIDGE_REJECTED {reason} event, got {found:?}"
    );
    Ok(())
}

/// A deposit limit in USD (`limit`: `maxDepositLimitUsd`, `minDepositLimitUsd`) of `token`, `supported` on an
/// address.
fn usd_limit(token: &str, supported: &Value, limit: &str) -> anyhow::Result<f64> {
    supported[limit].as_f64().ok_or_else(|| anyhow!("{token} has no {limit}: {supported}"))
}

pub(super) async fn deposit_address_over_max(ctx: &Ctx) -> anyhow::Result<()> {
    let token = ctx.config.fixtures.deposit_token.clone();
    let (chain, address, supported) = address_for(ctx, &token).await?;
    let max = usd_limit(&token, &supported, "maxDepositLimitUsd")?;
    // Ten thousand times the USD limit, in tokens: over the limit for any token worth more than $0.0001.
    let amount = Decimal::try_from(max.ceil().max(1.0))? * Decimal::from(10_000);
    rejected(ctx, &chain, &address, &token, &amount.normalize().to_string(), "OVER_MAX").await
}

pub(super) async fn deposit_address_under_min(ctx: &Ctx) -> anyhow::Result<()> {
    let token = ctx.config.fixtures.deposit_token.clone();
    let (chain, address, supported) = address_for(ctx, &token).await?;
    let min = usd_limit(&token, &supported, "minDepositLimitUsd")?;
    ensure!(min > 0.0, "{token} has no minimum deposit (minDepositLimitUsd {min}): choose another --deposit-token");
    rejected(ctx, &chain, &address, &token, "0.000001", "UNDER_MIN").await
}

pub(super) async fn deposit_address_unsupported_token(ctx: &Ctx) -> anyhow::Result<()> {
    let (chain, address, _) = address_for(ctx, &ctx.config.fixtures.deposit_token).await?;
    rejected(ctx, &chain, &address, "CONFORMANCE", "1", "UNSUPPORTED_TOKEN").await
}

/// A routing deposit address: created (ROUTING_DEPOSIT_ADDRESS_CREATED), a deposit its route matches is bridged,
/// one no route matches is rejected with NO_ROUTE_FOUND (ROUTING_DEPOSIT_ADDRESS_BRIDGE_REJECTED), and a
/// delayed one is RETRYING (ROUTING_DEPOSIT_ADDRESS_BRIDGE_DELAYED).
pub(super) async fn routing_deposit_address(ctx: &Ctx) -> anyhow::Result<()> {
    let f = &ctx.config.fixtures;
    let since = advance(&ctx.main, 0).await?;
    let request = routing_request(ctx, &ctx.unique("lifecycle"));
    let created =
        ctx.main.call(AnyOperation::SandboxCreateRoutingDepositAddress, &[], &[], Some(request.clone())).await?.ok()?;
    ensure!(
        created["routes"] == request["routes"],
        "the routing address's routes are {}, not the {} asked for",
        created["routes"],
        request["routes"]
    );
    let (chain, address) =
        (str_at(&created, "/depositChain")?.to_owned(), str_at(&created, "/depositAddress")?.to_owned());
    let into = [("depositAddress", address.as_str()), ("depositChain", chain.as_str())];
    let call = |body: Value| ctx.main.call(AnyOperation::SandboxDepositIntoAddress, &into, &[], Some(body));

    let routed = call(json!({"token": f.deposit_token, "amount": f.deposit_amount})).await?.ok()?;
    let id = routed["bridgeId"]
        .as_str()
        .ok_or_else(|| anyhow!("a deposit its route matches started no bridge: {routed}"))?;
    let record = get_bridge(&ctx.main, id).await?;
    ensure!(
        record["chainOut"] == f.chain_out.as_str() && record["recipient"] == f.recipient.as_str(),
        "the routed bridge goes to {} {}, not the route's {} {}",
        record["chainOut"],
        record["recipient"],
        f.chain_out,
        f.recipient
    );

    let unrouted = call(json!({"token": "CONFORMANCE", "amount": "1"})).await?.ok()?;
    let status = &unrouted["deposit"]["status"];
    ensure!(
        unrouted["bridgeId"].is_null() && status["_tag"] == "REJECTED" && status["reason"] == "NO_ROUTE_FOUND",
        "a deposit no route matches is {status}, expected REJECTED NO_ROUTE_FOUND"
    );

    let delayed =
        call(json!({"token": f.deposit_token, "amount": f.deposit_amount, "outcome": "delayed"})).await?.ok()?;
    ensure!(
        delayed["deposit"]["status"]["_tag"] == "RETRYING",
        "a delayed routed deposit is {}, expected RETRYING",
        delayed["deposit"]["status"]
    );

    let events = feed(&ctx.main, since, 50).await?;
    let of_address = |e: &&Value| {
        e["depositAddress"] == address.as_str() || e["depositAddress"]["depositAddress"] == address.as_str()
    };
    let kinds: Vec<&str> = events
        .iter()
        .filter(of_address)
        .filter_map(|e| e["_tag"].as_str())
        .filter(|k| k.starts_with("ROUTING_"))
        .collect();
    ensure!(
        kinds == ["ROUTING_DEPOSIT_ADDRESS_CREATED", "ROUTING_DEPOSIT_ADDRESS_BRIDGE_REJECTED", "ROUTING_DEPOSIT_ADDRESS_BRIDGE_DELAYED"],
        "the routing address emitted {kinds:?}, expected ROUTING_DEPOSIT_ADDRESS_CREATED, _BRIDGE_REJECTED, _BRIDGE_DELAYED"
    );
    let rejected = events
        .iter()
        .filter(of_address)
        .find(|e| e["_tag"] == "ROUTING_DEPOSIT_ADDRESS_BRIDGE_REJECTED")
        .cloned()
        .unwrap_or_default();
    ensure!(
        rejected["reason"] == "NO_ROUTE_FOUND" && rejected["depositAddress"]["routes"] == request["routes"],
        "ROUTING_DEPOSIT_ADDRESS_BRIDGE_REJECTED is {rejected}"
    );
    Ok(())
}
