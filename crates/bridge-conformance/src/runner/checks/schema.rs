//! One check per operation of the document (`schema::<operationId>`): the operation is exercised with a
//! successful request and with requests that get its documented refusals, and every answer is validated
//! against the schema of its status (see [`crate::runner::http`]: status documented, `application/json`, body valid).
//! The answers of every other check are validated the same way; this area makes sure each operation is
//! covered even when only it runs (`--only schema`).
//!
//! An operation added to the document does not compile until it has an exercise here (an exhaustive `match` over
//! `bridge_contract::AnyOperation`).

use bridge_contract::AnyOperation;
use serde_json::json;

use super::steps::*;
use crate::contract::contract;
use crate::runner::check::{Check, Ctx, Needs};

pub fn checks() -> Vec<Check> {
    contract()
        .operations()
        .iter()
        .map(|op| {
            // A reset is exercised on the other project only: the main project's data stays for the other checks.
            let needs = match op.operation {
                AnyOperation::SandboxResetProject => Needs::OTHER_AND_HELPERS,
                _ if op.sandbox_only => Needs::HELPERS,
                _ => Needs::NOTHING,
            };
            let operation = op.operation;
            Check::new(format!("schema::{}", op.id), needs, move |ctx| Box::pin(exercise(ctx, operation)))
        })
        .collect()
}

const UNKNOWN: &str = "conformance-unknown-id";

/// A successful request of `op` and requests that get its documented refusals. The `match` names every operation:
/// one added to the schema does not compile until it has an exercise here.
async fn exercise(ctx: &Ctx, op: AnyOperation) -> anyhow::Result<()> {
    let api = &ctx.main;
    let f = &ctx.config.fixtures;
    match op {
        AnyOperation::QuoteBridge => {
            quote(api, quote_request(f)).await?;
            let mut nowhere = quote_request(f);
            nowhere["chainOut"] = json!("CONFORMANCE_NOWHERE");
            api.call(op, &[], &[], Some(nowhere)).await?;
        }
        AnyOperation::QuoteBridgeSwap => {
            let swap = json!({"chainIn": f.chain_in, "chainOut": f.chain_out, "amount": f.swap_amount, "mode": "pay",
                "tokenIn": f.swap_token_in, "tokenOut": f.swap_token_out, "depositor": f.depositor, "recipient": f.recipient});
            api.call(op, &[], &[], Some(swap.clone())).await?.ok()?;
            let mut same_chain = swap;
            same_chain["chainOut"] = json!(f.chain_in);
            api.call(op, &[], &[], Some(same_chain)).await?;
        }
        AnyOperation::CommitQuote => {
            let q = quote(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            commit(api, id).await?;
            api.call(op, &[("quoteId", id)], &[], None).await?;
            api.call(op, &[("quoteId", UNKNOWN)], &[], None).await?;
        }
        AnyOperation::ListBridgeHistory => {
            let query = [("page", "1"), ("limit", "5"), ("sortBy", "createdAt"), ("sortDirection", "desc")];
            api.call(op, &[], &query, None).await?.ok()?;
            api.call(
                op,
                &[],
                &[("page", "0"), ("limit", "5"), ("sortBy", "updatedAt"), ("sortDirection", "asc")],
                None,
            )
            .await?;
        }
        AnyOperation::GetBridge => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            get_bridge(api, str_at(&q, "/quoteId")?).await?;
            api.call(op, &[("bridgeId", UNKNOWN)], &[], None).await?;
        }
        AnyOperation::CreateDepositAddresses | AnyOperation::CreateDepositAddressesLegacy => {
            create_addresses(api, op, &address_request(ctx, &ctx.unique("schema"))).await?;
            let mut nowhere = address_request(ctx, &ctx.unique("schema"));
            nowhere["depositChains"] = json!(["CONFORMANCE_NOWHERE"]);
            api.call(op, &[], &[], Some(nowhere)).await?;
        }
        AnyOperation::SearchDepositAddresses | AnyOperation::SearchDepositAddressesLegacy => {
            let note = ctx.unique("schema");
            create_addresses(api, AnyOperation::CreateDepositAddresses, &address_request(ctx, &note)).await?;
            api.call(op, &[], &[("addressNote", &note), ("pageSize", "1")], None).await?.ok()?;
            api.call(op, &[], &[("pageSize", "0")], None).await?;
        }
        AnyOperation::GetDepositAddressPublicStatus => {
            let (chain, address) = &new_address(ctx, api, "schema").await?;
            let path = [("depositAddress", address.as_str()), ("depositChain", chain.as_str())];
            api.call(op, &path, &[("destinationAddress", &f.recipient)], None).await?.ok()?;
            api.call(
                op,
                &[("depositAddress", UNKNOWN), ("depositChain", chain)],
                &[("destinationAddress", &f.recipient)],
                None,
            )
            .await?;
        }
        AnyOperation::GetWebhookPublicKey => {
            ctx.anonymous.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::ListUserEvents => {
            quote(api, quote_request(f)).await?;
            api.call(op, &[], &[("sinceTimestamp", "0"), ("pageSize", "5")], None).await?.ok()?;
        }
        AnyOperation::SandboxDepositBridge => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            api.call(op, &[("bridgeId", id)], &[], Some(json!({}))).await?.ok()?;
            api.call(op, &[("bridgeId", id)], &[], Some(json!({}))).await?;
            api.call(op, &[("bridgeId", UNKNOWN)], &[], Some(json!({}))).await?;
        }
        AnyOperation::SandboxDepositIntoAddress => {
            let (chain, address) = &new_address(ctx, api, "schema").await?;
            let deposit = json!({"token": f.deposit_token, "amount": f.deposit_amount});
            api.call(op, &[("depositAddress", address), ("depositChain", chain)], &[], Some(deposit.clone()))
                .await?
                .ok()?;
            api.call(op, &[("depositAddress", UNKNOWN), ("depositChain", chain)], &[], Some(deposit)).await?;
        }
        AnyOperation::SandboxCreateRoutingDepositAddress => {
            let created = api.call(op, &[], &[], Some(routing_request(ctx, &ctx.unique("schema")))).await?.ok()?;
            let (chain, address) = (str_at(&created, "/depositChain")?, str_at(&created, "/depositAddress")?);
            let deposit = json!({"token": f.deposit_token, "amount": f.deposit_amount});
            api.call(
                AnyOperation::SandboxDepositIntoAddress,
                &[("depositAddress", address), ("depositChain", chain)],
                &[],
                Some(deposit),
            )
            .await?
            .ok()?;
            let mut nowhere = routing_request(ctx, &ctx.unique("schema"));
            nowhere["depositChain"] = json!("CONFORMANCE_NOWHERE");
            api.call(op, &[], &[], Some(nowhere)).await?;
        }
        AnyOperation::SandboxAdvanceClock => {
            api.call(op, &[], &[], Some(json!({"ms": 0}))).await?.ok()?;
        }
        AnyOperation::SandboxGetClock => {
            api.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::SandboxResetProject => {
            ctx.other()?.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::SandboxSendWebhookTest => {
            let receiver = crate::runner::receiver::Receiver::start(false).await?;
            api.call(op, &[], &[], Some(json!({"webhookUrl": receiver.url, "message": "conformance"}))).await?.ok()?;
            // Keep the receiver up for the delivery (the webhook area judges deliveries; this only avoids retries
            // to a closed port later).
            receiver.wait_until(std::time::Duration::from_secs(2), |d| !d.is_empty(), || async {}).await;
        }
        AnyOperation::SandboxListWebhookDeliveries => {
            api.call(op, &[], &[], None).await?.ok()?;
            api.call(op, &[], &[("eventId", UNKNOWN)], None).await?.ok()?;
        }
        AnyOperation::SandboxResendWebhookDelivery => {
            let receiver = crate::runner::receiver::Receiver::start(false).await?;
            let sent = api
                .call(AnyOperation::SandboxSendWebhookTest, &[], &[], Some(json!({"webhookUrl": receiver.url})))
                .await?
                .ok()?;
            let event_id = str_at(&sent, "/eventId")?.to_owned();
            api.call(op, &[("eventId", &event_id)], &[], None).await?.ok()?;
            api.call(op, &[("eventId", UNKNOWN)], &[], None).await?.expect(404)?;
            receiver.wait_until(std::time::Duration::from_secs(2), |d| d.len() >= 2, || async {}).await;
        }
        AnyOperation::SandboxRecoverWebhookDeliveries => {
            api.call(op, &[], &[], Some(json!({"since": "2026-01-01T00:00:00.000Z"}))).await?.ok()?;
        }
        // The fault profile: read, set to no fault, refused when a group's fractions add up to more than 1
        // (nothing changed), then back to the deployment's default, as it was.
        AnyOperation::SandboxGetFaults => {
            api.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::SandboxSetFaults => {
            api.call(op, &[], &[], Some(json!({}))).await?.ok()?;
            let over = json!({"requests": {"unavailable": {"fraction": 0.6}, "delay": {"fraction": 0.6, "ms": 1}}});
            api.call(op, &[], &[], Some(over)).await?.expect(422)?;
            api.call(AnyOperation::SandboxClearFaults, &[], &[], None).await?.ok()?;
        }
        AnyOperation::SandboxClearFaults => {
            api.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::SandboxCheckWebhookReceiver => {
            // A receiver that answers 200 to everything: the report has failed checks (it verifies nothing), which
            // is what this exercise's answer may say; the schema check judges its shape.
            let receiver = crate::runner::receiver::Receiver::start(false).await?;
            api.call(op, &[], &[], Some(json!({"url": receiver.url, "timeoutMs": 2000}))).await?.ok()?;
            // A URL with a password is refused before anything is sent (422 InvalidRequest).
            let refused = json!({"url": "http://user:secret@127.0.0.1:9/hook"});
            api.call(op, &[], &[], Some(refused)).await?.expect_tag(422, "InvalidRequest")?;
        }
        // Production endpoints beyond the spec.
        AnyOperation::CancelBridge => {
            let (q, _) = committed_bridge(api, quote_request(f)).await?;
            let id = str_at(&q, "/quoteId")?;
            let cancel = json!({"state": "CANCELLED"});
            api.call(op, &[("bridgeId", id)], &[], Some(cancel.clone())).await?.ok()?;
            api.call(op, &[("bridgeId", id)], &[], Some(cancel.clone())).await?;
            api.call(op, &[("bridgeId", UNKNOWN)], &[], Some(cancel)).await?;
        }
        AnyOperation::ListBridgeHistoryCursor => {
            committed_bridge(api, quote_request(f)).await?;
            let query = [("pageSize", "1"), ("sortBy", "createdAt"), ("sortDirection", "desc")];
            api.call(op, &[], &query, None).await?.ok()?;
            let foreign =
                [("pageSize", "1"), ("sortBy", "createdAt"), ("sortDirection", "desc"), ("pageToken", UNKNOWN)];
            api.call(op, &[], &foreign, None).await?;
        }
        AnyOperation::GetBridgesByDepositHash => {
            api.call(op, &[("depositTxHash", UNKNOWN)], &[], None).await?;
        }
        AnyOperation::GetBridgeByWithdrawHash | AnyOperation::GetBridgeByWithdrawHashLegacy => {
            api.call(op, &[("withdrawTxHash", UNKNOWN)], &[], None).await?;
        }
        AnyOperation::GetBridgeConfigs | AnyOperation::GetBridgeSwapTokenConfigs => {
            ctx.anonymous.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::GetBridgeTokenConfig => {
            ctx.anonymous.call(op, &[("chain", &f.chain_in), ("token", &f.token)], &[], None).await?.ok()?;
            ctx.anonymous.call(op, &[("chain", UNKNOWN), ("token", &f.token)], &[], None).await?;
            ctx.anonymous.call(op, &[("chain", &f.chain_in), ("token", UNKNOWN)], &[], None).await?;
        }
        AnyOperation::GetDepositAddressRateLimitStatus => {
            api.call(op, &[], &[], None).await?.ok()?;
        }
        AnyOperation::GetDepositAddressStatus
        | AnyOperation::GetDepositAddressCompletedRefunds
        | AnyOperation::GetDepositAddressHistory => {
            let (chain, address) = &new_address(ctx, api, "schema").await?;
            api.call(op, &[("depositAddress", address), ("depositChain", chain)], &[], None).await?.ok()?;
            api.call(op, &[("depositAddress", UNKNOWN), ("depositChain", chain)], &[], None).await?;
            if op == AnyOperation::GetDepositAddressHistory {
                let reversed = [("from", "2026-01-02T00:00:00.000Z"), ("to", "2026-01-01T00:00:00.000Z")];
                api.call(op, &[("depositAddress", address), ("depositChain", chain)], &reversed, None).await?;
            }
        }
        AnyOperation::GetDepositAddressSupportedTokens => {
            let path = [("depositChain", f.chain_in.as_str()), ("destinationChain", f.chain_out.as_str())];
            ctx.anonymous.call(op, &path, &[], None).await?.ok()?;
            ctx.anonymous.call(op, &[("depositChain", UNKNOWN), ("destinationChain", &f.chain_out)], &[], None).await?;
        }
        AnyOperation::ExchangeApiKey => {
            ctx.anonymous.call(op, &[], &[], Some(json!({"apiKey": UNKNOWN}))).await?;
        }
    }
    Ok(())
}
