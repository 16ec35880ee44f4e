//! Rate limits (`--rate-limited`; with `--spawn-sandbox`, a second sandbox started with a low limit): a project
//! over its request rate limit is answered 429 `TooManyRequests{message, retryAfter}` (production's shape,
//! `retryAfter` in seconds) with a `Retry-After` header in whole seconds; the refusal comes before decoding; a
//! second project is served meanwhile; and the project is served again once `retryAfter` has passed.
//!
//! Each check first spends the main project's budget (requests until the first 429, at most [`MAX_REQUESTS`]),
//! so each runs alone; they run last, against the rate-limited deployment only, so no other check meets the
//! limit.

use std::time::Duration;

use anyhow::{bail, ensure, Context as _};
use bridge_contract::AnyOperation;
use serde_json::json;

use crate::runner::check::Ctx;
use crate::runner::http::{Api, Reply};

/// Most requests sent to reach the limit before the check gives up (the deployment seems not to limit).
pub const MAX_REQUESTS: usize = 500;
/// The longest `retryAfter` the recovery check waits for.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A cheap authenticated read of the main project.
async fn read(api: &Api) -> anyhow::Result<Reply> {
    api.call(AnyOperation::ListUserEvents, &[], &[("sinceTimestamp", "0"), ("pageSize", "1")], None).await
}

/// Reads until the first 429 (its answer), checking its shape on the way.
async fn exhaust(api: &Api) -> anyhow::Result<(Reply, f64)> {
    for sent in 1..=MAX_REQUESTS {
        let reply = read(api).await?;
        match reply.status {
            200 => continue,
            429 => {
                let wait = shape(&reply).with_context(|| format!("the 429 after {sent} requests"))?;
                return Ok((reply, wait));
            }
            _ => bail!("request {sent} answered {}", reply.describe()),
        }
    }
    bail!("{MAX_REQUESTS} requests of one project were all served: is the deployment rate limited?")
}

/// A 429's shape: `TooManyRequests` with a positive `retryAfter` (seconds) and a `Retry-After` header of whole
/// seconds that is at least as long. The wait in seconds.
fn shape(reply: &Reply) -> anyhow::Result<f64> {
    ensure!(reply.tag() == Some("TooManyRequests"), "the 429 is {}, not TooManyRequests", reply.describe());
    let wait = reply.json["retryAfter"].as_f64().context("retryAfter is not a number")?;
    ensure!(wait > 0.0, "retryAfter is {wait}: no wait");
    let header = reply.headers.get("retry-after").context("the 429 has no Retry-After header")?;
    let seconds: u64 = header
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .with_context(|| format!("Retry-After {header:?} is not whole seconds"))?;
    ensure!(seconds as f64 >= wait, "Retry-After {seconds} s is shorter than retryAfter {wait} s");
    Ok(wait)
}

pub(super) async fn too_many_requests(ctx: &Ctx) -> anyhow::Result<()> {
    let (main, _) = ctx.limited()?;
    exhaust(main).await.map(|_| ())
}

/// A project over its limit is refused whatever it sends: an undecodable request gets 429, not 400.
pub(super) async fn refused_before_decoding(ctx: &Ctx) -> anyhow::Result<()> {
    let (main, _) = ctx.limited()?;
    exhaust(main).await?;
    let reply = main.call(AnyOperation::QuoteBridge, &[], &[], Some(json!({"token": 1}))).await?;
    ensure!(reply.status == 429, "an undecodable request of a project over its limit answered {}", reply.describe());
    shape(&reply).map(|_| ())
}

pub(super) async fn other_project_unaffected(ctx: &Ctx) -> anyhow::Result<()> {
    let (main, other) = ctx.limited()?;
    let other = other.context("no second project of the rate-limited deployment")?;
    exhaust(main).await?;
    let reply = read(other).await?;
    ensure!(reply.status == 200, "another project, while the first is at its limit: {}", reply.describe());
    Ok(())
}

pub(super) async fn served_after_retry_after(ctx: &Ctx) -> anyhow::Result<()> {
    let (main, _) = ctx.limited()?;
    let (_, wait) = exhaust(main).await?;
    let wait = Duration::try_from_secs_f64(wait).context("retryAfter is not a duration")?;
    ensure!(wait <= MAX_WAIT, "retryAfter {wait:?} is longer than this check waits ({MAX_WAIT:?})");
    tokio::time::sleep(wait).await;
    let reply = read(main).await?;
    ensure!(reply.status == 200, "after waiting retryAfter ({wait:?}): {}", reply.describe());
    Ok(())
}
