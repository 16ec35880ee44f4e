//! One check per operation of the document (`schema::<operationId>`): the operation is exercised with a
//! successful request and with requests that get its documented refusals, and every answer is validated
//! against the schema of its status (see [`crate::runner::http`]: status documented, `application/json`, body valid).
//! The answers of every other check are validated the same way; this area makes sure each operation is
//! covered even when only it runs (`--only schema`).
//!
//! An operation added to the document without an exercise here fails its check, naming this file.

use anyhow::bail;
use serde_json::json;

use super::steps::*;
use crate::contract::{contract, OpInfo};
use crate::runner::check::{Check, Ctx, Needs};

pub fn checks() -> Vec<Check> {
    contract()
        .operations()
        .iter()
        .map(|op| {
            // A reset is exercised on the other project only: the main project's data stays for the other checks.
            let needs = match op.id {
                "sandboxResetProject" => Needs::OTHER_AND_HELPERS,
                _ if op.sandbox_only => Needs::HELPERS,
                _ => Needs::NOTHING,
            };
            Check::new(format!("schema::{}", op.id), needs, move |ctx| Box::pin(exercise(ctx, op)))
        })
        .collect()
}

const UNKNOWN: &str = "conformance-unknown-id";

async fn exercise(ctx: &Ctx, op: &'static OpInfo) -> anyhow::Result<()> {
    let api = &ctx.main;
    let f = &ctx.config.fixtures;
    match op.id {
        "quoteBridge" => {
            quote(api, quote_request(f)).await?;
            let mut nowhere = quote_request(f);
            nowhere["chainOut"] = json!("CONFORMANCE_NOWHERE");
            api.call(op.id, &[], &[], Some(nowhere)).await?;
        }
        "quoteBridgeSwap" => {
            let swap = json!({"chainIn": f.chain_in, "chainOut": f.chain_out, "amount": f.swap_amount, "mode": "pay",
                "tokenIn": f.swap_token_in, "tokenOut": f.swap_token_out, "depositor": f.depositor, "recipient": f.recipient});
            api.call(op.id, &[], &[], Some(swap.clone())).await?.ok()?;
            let mut same_chain = swap;
            same_chain["chainOut"] = json!(f.chain_in);
            api.call(op.id, &[], &[], Some(same_chain)).await?;
        }
        "commitQuote" => {
            let q = quote(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            commit(api, id).await?;
            api.call(op.id, &[("quoteId", id)], &[], None).await?;
            api.call(op.id, &[("quoteId", UNKNOWN)], &[], None).await?;
        }
        "listBridgeHistory" => {
            let query = [("page", "1"), ("limit", "5"), ("sortBy", "createdAt"), ("sortDirection", "desc")];
            api.call(op.id, &[], &query, None).await?.ok()?;
            api.call(op.id, &[], &[("page", "0"), ("limit", "5"), ("sortBy", "updatedAt"), ("sortDirection", "asc")], None).await?;
        }
        "getBridge" => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            get_bridge(api, str_at(&q, "/quoteId")?).await?;
            api.call(op.id, &[("bridgeId", UNKNOWN)], &[], None).await?;
        }
        "createDepositAddresses" | "createDepositAddressesLegacy" => {
            create_addresses(api, op.id, &address_request(ctx, &ctx.unique("schema"))).await?;
            let mut nowhere = address_request(ctx, &ctx.unique("schema"));
            nowhere["depositChains"] = json!(["CONFORMANCE_NOWHERE"]);
            api.call(op.id, &[], &[], Some(nowhere)).await?;
        }
        "searchDepositAddresses" | "searchDepositAddressesLegacy" => {
            let note = ctx.unique("schema");
            create_addresses(api, "createDepositAddresses", &address_request(ctx, &note)).await?;
            api.call(op.id, &[], &[("addressNote", &note), ("pageSize", "1")], None).await?.ok()?;
            api.call(op.id, &[], &[("pageSize", "0")], None).await?;
        }
        "getDepositAddressPublicStatus" => {
            let created = create_addresses(api, "createDepositAddresses", &address_request(ctx, &ctx.unique("schema"))).await?;
            let (chain, address) = &address_keys(&created)[0];
            let path = [("depositAddress", address.as_str()), ("depositChain", chain.as_str())];
            api.call(op.id, &path, &[("destinationAddress", &f.recipient)], None).await?.ok()?;
            api.call(op.id, &[("depositAddress", UNKNOWN), ("depositChain", chain)], &[("destinationAddress", &f.recipient)], None).await?;
        }
        "getWebhookPublicKey" => {
            ctx.anonymous.call(op.id, &[], &[], None).await?.ok()?;
        }
        "listUserEvents" => {
            quote(api, quote_request(f)).await?;
            api.call(op.id, &[], &[("sinceTimestamp", "0"), ("pageSize", "5")], None).await?.ok()?;
        }
        "sandboxDepositBridge" => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            api.call(op.id, &[("bridgeId", id)], &[], Some(json!({}))).await?.ok()?;
            api.call(op.id, &[("bridgeId", id)], &[], Some(json!({}))).await?;
            api.call(op.id, &[("bridgeId", UNKNOWN)], &[], Some(json!({}))).await?;
        }
        "sandboxDepositIntoAddress" => {
            let created = create_addresses(api, "createDepositAddresses", &address_request(ctx, &ctx.unique("schema"))).await?;
            let (chain, address) = &address_keys(&created)[0];
            let deposit = json!({"token": f.deposit_token, "amount": f.deposit_amount});
            api.call(op.id, &[("depositAddress", address), ("depositChain", chain)], &[], Some(deposit.clone())).await?.ok()?;
            api.call(op.id, &[("depositAddress", UNKNOWN), ("depositChain", chain)], &[], Some(deposit)).await?;
        }
        "sandboxCreateRoutingDepositAddress" => {
            let created = api.call(op.id, &[], &[], Some(routing_request(ctx, &ctx.unique("schema")))).await?.ok()?;
            let (chain, address) = (str_at(&created, "/depositChain")?, str_at(&created, "/depositAddress")?);
            let deposit = json!({"token": f.deposit_token, "amount": f.deposit_amount});
            api.call("sandboxDepositIntoAddress", &[("depositAddress", address), ("depositChain", chain)], &[], Some(deposit)).await?.ok()?;
            let mut nowhere = routing_request(ctx, &ctx.unique("schema"));
            nowhere["depositChain"] = json!("CONFORMANCE_NOWHERE");
            api.call(op.id, &[], &[], Some(nowhere)).await?;
        }
        "sandboxAdvanceClock" => {
            api.call(op.id, &[], &[], Some(json!({"ms": 0}))).await?.ok()?;
        }
        "sandboxGetClock" => {
            api.call(op.id, &[], &[], None).await?.ok()?;
        }
        "sandboxResetProject" => {
            ctx.other()?.call(op.id, &[], &[], None).await?.ok()?;
        }
        "sandboxSendWebhookTest" => {
            let receiver = crate::runner::receiver::Receiver::start(false).await?;
            api.call(op.id, &[], &[], Some(json!({"webhookUrl": receiver.url, "message": "conformance"}))).await?.ok()?;
            // Keep the receiver up for the delivery (the webhook area judges deliveries; this only avoids retries
            // to a closed port later).
            receiver.wait_until(std::time::Duration::from_secs(2), |d| !d.is_empty(), || async {}).await;
        }
        "sandboxListWebhookDeliveries" => {
            api.call(op.id, &[], &[], None).await?.ok()?;
            api.call(op.id, &[], &[("eventId", UNKNOWN)], None).await?.ok()?;
        }
        "sandboxResendWebhookDelivery" => {
            let receiver = crate::runner::receiver::Receiver::start(false).await?;
            let sent = api
                .call("sandboxSendWebhookTest", &[], &[], Some(json!({"webhookUrl": receiver.url})))
                .await?
                .ok()?;
            let event_id = str_at(&sent, "/eventId")?.to_owned();
            api.call(op.id, &[("eventId", &event_id)], &[], None).await?.ok()?;
            api.call(op.id, &[("eventId", UNKNOWN)], &[], None).await?.expect(404)?;
            receiver.wait_until(std::time::Duration::from_secs(2), |d| d.len() >= 2, || async {}).await;
        }
        "sandboxRecoverWebhookDeliveries" => {
            api.call(op.id, &[], &[], Some(json!({"since": "2026-01-01T00:00:00.000Z"}))).await?.ok()?;
        }
        // Production endpoints beyond the spec.
        "cancelBridge" => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            let cancel = json!({"state": "CANCELLED"});
            api.call(op.id, &[("bridgeId", id)], &[], Some(cancel.clone())).await?.ok()?;
            api.call(op.id, &[("bridgeId", id)], &[], Some(cancel.clone())).await?;
            api.call(op.id, &[("bridgeId", UNKNOWN)], &[], Some(cancel)).await?;
        }
        "listBridgeHistoryCursor" => {
            committed_bridge(api, quote_request(f)).await?;
            let query = [("pageSize", "1"), ("sortBy", "createdAt"), ("sortDirection", "desc")];
            api.call(op.id, &[], &query, None).await?.ok()?;
            let foreign = [("pageSize", "1"), ("sortBy", "createdAt"), ("sortDirection", "desc"), ("pageToken", UNKNOWN)];
            api.call(op.id, &[], &foreign, None).await?;
        }
        "getBridgesByDepositHash" => {
            api.call(op.id, &[("depositTxHash", UNKNOWN)], &[], None).await?;
        }
        "getBridgeByWithdrawHash" | "getBridgeByWithdrawHashLegacy" => {
            api.call(op.id, &[("withdrawTxHash", UNKNOWN)], &[], None).await?;
        }
        "getBridgeConfigs" | "getBridgeSwapTokenConfigs" => {
            ctx.anonymous.call(op.id, &[], &[], None).await?.ok()?;
        }
        "getBridgeTokenConfig" => {
            ctx.anonymous.call(op.id, &[("chain", &f.chain_in), ("token", &f.token)], &[], None).await?.ok()?;
            ctx.anonymous.call(op.id, &[("chain", UNKNOWN), ("token", &f.token)], &[], None).await?;
            ctx.anonymous.call(op.id, &[("chain", &f.chain_in), ("token", UNKNOWN)], &[], None).await?;
        }
        "getDepositAddressRateLimitStatus" => {
            api.call(op.id, &[], &[], None).await?.ok()?;
        }
        "getDepositAddressStatus" | "getDepositAddressCompletedRefunds" | "getDepositAddressHistory" => {
            let created = create_addresses(api, "createDepositAddresses", &address_request(ctx, &ctx.unique("schema"))).await?;
            let (chain, address) = &address_keys(&created)[0];
            api.call(op.id, &[("depositAddress", address), ("depositChain", chain)], &[], None).await?.ok()?;
            api.call(op.id, &[("depositAddress", UNKNOWN), ("depositChain", chain)], &[], None).await?;
            if op.id == "getDepositAddressHistory" {
                let reversed = [("from", "2026-01-02T00:00:00.000Z"), ("to", "2026-01-01T00:00:00.000Z")];
                api.call(op.id, &[("depositAddress", address), ("depositChain", chain)], &reversed, None).await?;
            }
        }
        "getDepositAddressSupportedTokens" => {
            let path = [("depositChain", f.chain_in.as_str()), ("destinationChain", f.chain_out.as_str())];
            ctx.anonymous.call(op.id, &path, &[], None).await?.ok()?;
            ctx.anonymous.call(op.id, &[("depositChain", UNKNOWN), ("destinationChain", &f.chain_out)], &[], None).await?;
        }
        "exchangeApiKey" => {
            ctx.anonymous.call(op.id, &[], &[], Some(json!({"apiKey": UNKNOWN}))).await?;
        }
        other => bail!("the runner has no exercise for operation {other}: add one to crates/bridge-conformance/src/checks/schema.rs"),
    }
    Ok(())
}
