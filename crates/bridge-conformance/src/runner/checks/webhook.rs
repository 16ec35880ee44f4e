//! Webhooks. `webhook::public-key`: `GET /webhook/public-key` answers without credentials a key that
//! `bridge_client::webhook::WebhookVerifier` reads. With `--sandbox-helpers`, deliveries: the runner starts a
//! receiver on 127.0.0.1 (so the deployment must run on the same machine, as `--spawn-sandbox` does), passes its
//! URL as `webhookUrl`, advances the sandbox clock while it waits (real time: `RunConfig::webhook_wait`), and
//! checks each delivery: the envelope `{event, eventId, ts}` signed in `X-Webhook-Signature`, verified with the
//! served key; the event is the one the feed lists; `GET /sandbox/webhook-deliveries` lists the attempts; a
//! delivery answered 503 is retried; `POST /sandbox/webhook-deliveries/{eventId}/resend` delivers an event again
//! (an unknown event is 404 `WebhookDeliveryNotFound`), and `POST /sandbox/webhook-deliveries/recover` tries a
//! failed delivery again.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, bail, ensure};
use bridge_client::webhook::WebhookVerifier;
use bridge_contract::AnyOperation;
use serde_json::{json, Value};

use super::steps::*;
use crate::runner::check::Ctx;
use crate::runner::receiver::{Delivery, Receiver};

async fn verifier(ctx: &Ctx) -> anyhow::Result<WebhookVerifier> {
    let served = ctx.anonymous.call(AnyOperation::GetWebhookPublicKey, &[], &[], None).await?.ok()?;
    let served = served.as_str().ok_or_else(|| anyhow!("the public key is not a JSON string: {served}"))?;
    WebhookVerifier::from_served_key(served).map_err(|e| anyhow!("the served public key cannot verify signatures: {e}"))
}

pub(super) async fn public_key(ctx: &Ctx) -> anyhow::Result<()> {
    verifier(ctx).await.map(|_| ())
}

/// A delivery whose signature checked out: its `eventId` and the event as JSON.
struct Verified {
    event_id: String,
    event: Value,
}

/// Verifies every delivery with the served key (the signature, then the envelope against the contract).
fn verify_all(verifier: &WebhookVerifier, deliveries: &[Delivery]) -> anyhow::Result<Vec<Verified>> {
    let mut out = Vec::new();
    for (i, d) in deliveries.iter().enumerate() {
        let what = format!("delivery {} (eventId {})", i + 1, event_id_of(d).unwrap_or_else(|| "?".into()));
        let body = crate::contract::excerpt(&d.body);
        let signature = d.signature.as_deref().ok_or_else(|| {
            anyhow!("{what} has no {} header; body: {body}", bridge_client::webhook::SIGNATURE_HEADER)
        })?;
        let media = d
            .content_type
            .as_deref()
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        ensure!(media == "application/json", "{what} has content type {:?}, not application/json", d.content_type);
        let verified = verifier
            .verify(&d.body, signature)
            .map_err(|e| anyhow!("{what}: {e} (verified with the key of GET /webhook/public-key); body: {body}"))?;
        let envelope: Value = serde_json::from_slice(&d.body)?;
        out.push(Verified { event_id: verified.event_id, event: envelope["event"].clone() });
    }
    Ok(out)
}

/// Waits for deliveries until `done`, advancing the sandbox clock a little more each time; fails with a reason
/// that says what arrived and what the deployment lists.
async fn wait(
    ctx: &Ctx,
    receiver: &Receiver,
    what: &str,
    done: impl Fn(&[Delivery]) -> bool,
) -> anyhow::Result<Vec<Delivery>> {
    let advanced = AtomicU64::new(0);
    let step = AtomicU64::new(1000);
    let api = &ctx.main;
    let arrived = receiver
        .wait_until(ctx.config.webhook_wait, done, || {
            let ms = step.load(Ordering::Relaxed);
            step.store((ms * 2).min(600_000), Ordering::Relaxed);
            advanced.fetch_add(ms, Ordering::Relaxed);
            async move {
                if let Err(e) = advance(api, ms).await {
                    tracing::warn!("advancing the sandbox clock: {e:#}");
                }
            }
        })
        .await;
    let deliveries = receiver.deliveries();
    if !arrived {
        let attempts = api.call(AnyOperation::SandboxListWebhookDeliveries, &[], &[], None).await?.ok()?;
        let listed = attempts["items"].as_array().map(Vec::len).unwrap_or(0);
        bail!(
            "{what}: not delivered to {} within {:?} of real time (sandbox clock advanced {} ms); the receiver got {} POST(s), GET /sandbox/webhook-deliveries lists {listed} attempt(s){}",
            receiver.url,
            ctx.config.webhook_wait,
            advanced.load(Ordering::Relaxed),
            deliveries.len(),
            if deliveries.is_empty() && listed == 0 { ": the deployment makes no webhook deliveries" } else { "" }
        );
    }
    Ok(deliveries)
}

/// The attempts `GET /sandbox/webhook-deliveries?eventId=` lists, polled (real time, up to the webhook wait)
/// until `done` holds for them; the last listing either way.
async fn attempts(ctx: &Ctx, event_id: &str, done: impl Fn(&[Value]) -> bool) -> anyhow::Result<Vec<Value>> {
    let deadline = std::time::Instant::now() + ctx.config.webhook_wait;
    loop {
        let answer = ctx
            .main
            .call(AnyOperation::SandboxListWebhookDeliveries, &[], &[("eventId", event_id)], None)
            .await?
            .ok()?;
        let items = answer["items"].as_array().cloned().unwrap_or_default();
        if done(&items) || std::time::Instant::now() >= deadline {
            return Ok(items);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn event_id_of(d: &Delivery) -> Option<String> {
    serde_json::from_slice::<Value>(&d.body).ok().and_then(|v| v["eventId"].as_str().map(str::to_owned))
}

pub(super) async fn test_event_delivered(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let receiver = Receiver::start(false).await?;
    let message = ctx.unique("webhook-test");
    let sent = ctx
        .main
        .call(
            AnyOperation::SandboxSendWebhookTest,
            &[],
            &[],
            Some(json!({"webhookUrl": receiver.url, "message": message})),
        )
        .await?
        .ok()?;
    let event_id = str_at(&sent, "/eventId")?.to_owned();
    let deliveries = wait(ctx, &receiver, &format!("the WEBHOOK_TEST event {event_id}"), |d| {
        d.iter().any(|x| event_id_of(x).as_deref() == Some(&event_id))
    })
    .await?;
    for v in verify_all(&verifier, &deliveries)? {
        ensure!(v.event_id == event_id, "a delivery of event {} arrived where only {event_id} was sent", v.event_id);
        ensure!(
            v.event["_tag"] == "WEBHOOK_TEST" && v.event["message"] == message.as_str(),
            "the delivered event is {}, expected WEBHOOK_TEST {message:?}",
            v.event
        );
    }
    // The deployment records an attempt once the receiver has answered: give it a moment.
    let items = attempts(ctx, &event_id, |items| items.iter().any(|a| a["delivered"] == true)).await?;
    ensure!(!items.is_empty(), "GET /sandbox/webhook-deliveries?eventId={event_id} lists no attempt");
    ensure!(
        items.iter().all(|a| a["eventId"] == event_id.as_str() && a["url"] == receiver.url.as_str()),
        "the attempts of {event_id} name another event or URL: {items:?}"
    );
    ensure!(
        items.iter().any(|a| a["delivered"] == true && a["status"] == 200),
        "no attempt of {event_id} is listed as delivered with status 200: {items:?}"
    );
    Ok(())
}

/// The delivered events by `eventId` (retries of one event collapse), in arrival order of first delivery.
fn by_event_id(verified: Vec<Verified>) -> anyhow::Result<Vec<Verified>> {
    let mut first: BTreeMap<String, Value> = BTreeMap::new();
    let mut out = Vec::new();
    for v in verified {
        match first.get(&v.event_id) {
            Some(e) => ensure!(*e == v.event, "two deliveries of event {} carry different events", v.event_id),
            None => {
                first.insert(v.event_id.clone(), v.event.clone());
                out.push(v);
            }
        }
    }
    Ok(out)
}

pub(super) async fn bridge_events_delivered(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let receiver = Receiver::start(false).await?;
    let mut request = quote_request(&ctx.config.fixtures);
    request["webhookUrl"] = json!(receiver.url);
    let (q, _) = committed_bridge(&ctx.main, request).await?;
    let id = str_at(&q, "/quoteId")?.to_owned();
    let paid =
        ctx.main.call(AnyOperation::SandboxDepositBridge, &[("bridgeId", &id)], &[], Some(json!({}))).await?.ok()?;
    let (_, executed) = super::lifecycle::drive_to_executed(&ctx.main, &id, &paid).await?;
    let expected = ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED"];
    let of_bridge = |d: &Delivery| {
        serde_json::from_slice::<Value>(&d.body)
            .ok()
            .filter(|v| v["event"]["_id"] == id.as_str())
            .map(|v| v["event"]["_tag"].clone())
    };
    let deliveries = wait(ctx, &receiver, &format!("the events of bridge {id}"), |ds| {
        expected.iter().all(|tag| ds.iter().any(|d| of_bridge(d).is_some_and(|t| t == *tag)))
    })
    .await?;
    let delivered = by_event_id(verify_all(&verifier, &deliveries)?)?;
    let feed_events = feed(&ctx.main, date_ms(&executed, "/createdAt")?, 50).await?;
    let listed = events_of_bridge(&feed_events, &id);
    // Deliveries are retried independently, so their order is not part of the contract (the feed's is).
    let mut tags: Vec<&str> = delivered.iter().map(|v| v.event["_tag"].as_str().unwrap_or("?")).collect();
    tags.sort_unstable();
    let mut wanted = expected.to_vec();
    wanted.sort_unstable();
    ensure!(tags == wanted, "delivered {tags:?} (distinct eventIds), expected {expected:?} once each");
    for v in &delivered {
        ensure!(
            listed.contains(&&v.event),
            "the delivered {} event (eventId {}) is not the one the event feed lists",
            v.event["_tag"],
            v.event_id
        );
    }
    Ok(())
}

pub(super) async fn deposit_address_events_delivered(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let receiver = Receiver::start(false).await?;
    let mut request = address_request(ctx, &ctx.unique("webhook"));
    request["webhookUrl"] = json!(receiver.url);
    let created = create_addresses(&ctx.main, AnyOperation::CreateDepositAddresses, &request).await?;
    let (chain, address) = address_keys(&created).remove(0);
    let f = &ctx.config.fixtures;
    ctx.main
        .call(
            AnyOperation::SandboxDepositIntoAddress,
            &[("depositAddress", &address), ("depositChain", &chain)],
            &[],
            Some(json!({"token": f.deposit_token, "amount": f.deposit_amount})),
        )
        .await?
        .ok()?;
    let expected = ["DEPOSIT_ADDRESS_CREATED", "DEPOSIT_ADDRESS_DEPOSIT_DETECTED"];
    let tag_of = |d: &Delivery| serde_json::from_slice::<Value>(&d.body).ok().map(|v| v["event"]["_tag"].clone());
    let deliveries = wait(ctx, &receiver, &format!("the events of deposit address {address}"), |ds| {
        expected.iter().all(|tag| ds.iter().any(|d| tag_of(d).is_some_and(|t| t == *tag)))
    })
    .await?;
    let delivered = by_event_id(verify_all(&verifier, &deliveries)?)?;
    for tag in expected {
        let n = delivered.iter().filter(|v| v.event["_tag"] == tag).count();
        ensure!(n >= 1, "no {tag} event was delivered");
    }
    Ok(())
}

pub(super) async fn failed_delivery_retried(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let receiver = Receiver::start(true).await?;
    let event_id = test_event_to(ctx, &receiver).await?;
    let deliveries = wait(ctx, &receiver, &format!("a retry of event {event_id} after a 503"), |d| {
        d.iter().filter(|x| event_id_of(x).as_deref() == Some(&event_id)).count() >= 2
    })
    .await?;
    verify_all(&verifier, &deliveries)?;
    let items = attempts(ctx, &event_id, |items| {
        items.iter().filter(|a| a["delivered"] == true).count() >= 1 && items.len() >= 2
    })
    .await?;
    ensure!(
        items.iter().any(|a| a["delivered"] == false && a["status"] == 503 && a["attempt"] == 1),
        "GET /sandbox/webhook-deliveries does not list the first attempt as failed with 503: {items:?}"
    );
    ensure!(
        items.iter().any(|a| a["delivered"] == true && a["attempt"].as_u64() >= Some(2)),
        "GET /sandbox/webhook-deliveries lists no later delivered attempt: {items:?}"
    );
    Ok(())
}

/// `POST /sandbox/webhook-test` to `receiver`: the event's id.
async fn test_event_to(ctx: &Ctx, receiver: &Receiver) -> anyhow::Result<String> {
    let sent = ctx
        .main
        .call(AnyOperation::SandboxSendWebhookTest, &[], &[], Some(json!({"webhookUrl": receiver.url})))
        .await?
        .ok()?;
    Ok(str_at(&sent, "/eventId")?.to_owned())
}

/// The deliveries of `event_id` among `deliveries`.
fn count_of(deliveries: &[Delivery], event_id: &str) -> usize {
    deliveries.iter().filter(|x| event_id_of(x).as_deref() == Some(event_id)).count()
}

pub(super) async fn resend_delivers_again(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let unknown =
        ctx.main.call(AnyOperation::SandboxResendWebhookDelivery, &[("eventId", "no-such-event")], &[], None).await?;
    let unknown = unknown.expect(404)?;
    ensure!(unknown["_tag"] == "WebhookDeliveryNotFound", "an unknown event's resend answered {unknown}");
    let receiver = Receiver::start(false).await?;
    let event_id = test_event_to(ctx, &receiver).await?;
    wait(ctx, &receiver, &format!("the WEBHOOK_TEST event {event_id}"), |d| count_of(d, &event_id) >= 1).await?;
    attempts(ctx, &event_id, |items| items.iter().any(|a| a["delivered"] == true)).await?;
    let resent =
        ctx.main.call(AnyOperation::SandboxResendWebhookDelivery, &[("eventId", &event_id)], &[], None).await?.ok()?;
    ensure!(
        resent["eventId"] == event_id.as_str() && resent["deliveries"].as_u64() >= Some(1),
        "the resend of {event_id} answered {resent}"
    );
    let deliveries =
        wait(ctx, &receiver, &format!("the resent event {event_id}"), |d| count_of(d, &event_id) >= 2).await?;
    verify_all(&verifier, &deliveries)?;
    let items = attempts(ctx, &event_id, |items| items.iter().filter(|a| a["delivered"] == true).count() >= 2).await?;
    ensure!(
        items.iter().any(|a| a["delivered"] == true && a["attempt"].as_u64() >= Some(2)),
        "GET /sandbox/webhook-deliveries lists no delivered attempt after the resend: {items:?}"
    );
    Ok(())
}

pub(super) async fn recover_failed_deliveries(ctx: &Ctx) -> anyhow::Result<()> {
    let verifier = verifier(ctx).await?;
    let receiver = Receiver::start(true).await?;
    let event_id = test_event_to(ctx, &receiver).await?;
    let failed = attempts(ctx, &event_id, |items| items.iter().any(|a| a["delivered"] == false)).await?;
    ensure!(
        failed.iter().any(|a| a["delivered"] == false),
        "GET /sandbox/webhook-deliveries lists no failed attempt of {event_id} (the receiver answered 503): {failed:?}"
    );
    let at = str_at(&failed[0], "/at")?.to_owned();
    let recovered = ctx
        .main
        .call(AnyOperation::SandboxRecoverWebhookDeliveries, &[], &[], Some(json!({"since": at})))
        .await?
        .ok()?;
    ensure!(recovered["deliveries"].as_u64().is_some(), "the recovery answered {recovered}");
    // Made due now: delivered without the clock moving (a deployment whose clock moves may retry it anyway).
    let arrived = receiver.wait_until(ctx.config.webhook_wait, |d| count_of(d, &event_id) >= 2, || async {}).await;
    ensure!(arrived, "the recovered delivery of {event_id} did not arrive within {:?}", ctx.config.webhook_wait);
    verify_all(&verifier, &receiver.deliveries())?;
    Ok(())
}
