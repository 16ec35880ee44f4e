//! `POST /sandbox/webhook-receiver-checks`: the receiver check. A battery of deliveries against a receiver's URL,
//! made as the sandbox's own deliveries are, and a report of what the receiver did with each ([`battery`]: the
//! checks, what each sends and expects, in the report's words; [`samples`]: realistic events of every kind from the
//! caller's project; [`sender`]: the deliveries, signed, under the webhook egress policy, timed).
//!
//! Synchronous, and nothing is stored: the report is the answer. Decisions (the schema's description of the
//! operation says them to users):
//!
//! * The sender's timeout is the delivery engine's ([`delivery::TIMEOUT`]) unless the request asks for a shorter
//!   one; a late answer is still awaited [`LATE_GRACE`] longer, so that the other checks report what it was.
//! * The checks run side by side, the deliveries of one check one after the other, at most
//!   [`delivery::PER_RECEIVER`] deliveries in flight (as the deliverer sends to one URL); the whole check ends
//!   within [`BUDGET`], below the server's 30-second request timeout.
//! * Deliveries carry nothing that marks them as a check's, and their envelope `ts` is the wall clock (a receiver
//!   compares it with its own clock); the events' own dates are on the project's clock.
//! * `url` is judged as a `webhookUrl` is before anything is sent (422, no connection), and the deliveries obey
//!   the egress policy at the address they connect to.
//! * One request counts once against the project's rate limit, whatever it sends.

mod battery;
mod samples;
mod sender;

use std::sync::Arc;
use std::time::Duration;

use bridge_contract::operations::SandboxCheckWebhookReceiverError;
use bridge_contract::{
    DateString, InvalidRequest, ReceiverCheckOutcome, ReceiverCheckReport, ReceiverCheckSeverity,
    SandboxReceiverCheckRequest, ServiceUnavailable,
};
use bridge_server::Caller;

use crate::domain::{ids, webhook_url};
use crate::infra::clock::wall_ms;
use crate::infra::core::Core;
use crate::pipeline::delivery;

/// How much longer than the sender's timeout a late answer is awaited.
pub const LATE_GRACE: Duration = Duration::from_secs(5);
/// The longest a whole check takes: below the server's 30-second request timeout.
pub const BUDGET: Duration = Duration::from_secs(25);

/// 422 for a `url` the sandbox cannot deliver to: it speaks plain HTTP to receivers.
fn refuse_other_schemes(url: &str) -> Result<(), InvalidRequest> {
    match url::Url::parse(url) {
        Ok(parsed) if parsed.scheme() == "http" && parsed.host().is_some() => Ok(()),
        _ => Err(InvalidRequest::new(format!(
            "url {} is refused: the sandbox delivers webhooks over plain HTTP, so the receiver check needs an \
             http:// URL with a host",
            webhook_url::redacted(url)
        ))),
    }
}

impl Core {
    /// `POST /sandbox/webhook-receiver-checks`.
    pub async fn sandbox_check_webhook_receiver(
        &self,
        caller: &Caller,
        body: SandboxReceiverCheckRequest,
    ) -> Result<ReceiverCheckReport, SandboxCheckWebhookReceiverError> {
        let started = tokio::time::Instant::now();
        let started_at = DateString::from_millis(wall_ms()).unwrap_or(DateString::MIN);
        // Judged before anything is sent: a refused URL is never connected to. The refusal names the request's
        // member (`url`), not the `webhookUrl` the same checks name elsewhere.
        refuse_other_schemes(&body.url)?;
        self.check_webhook_url(Some(&body.url))
            .await
            .map_err(|refused| InvalidRequest::new(refused.message.replacen("webhookUrl", "url", 1)))?;
        let timeout = body.timeout_ms.map(Duration::from_millis).unwrap_or(delivery::TIMEOUT);
        let now = self.now_of(&caller.project_id).await?;
        let samples = samples::Samples::new(self, &caller.project_id, now).map_err(|samples::NoRoute| {
            InvalidRequest::new(
                "the sandbox's catalogue prices no route (a bridge of one token and a swap between two chains), so \
                 the receiver check has no events to send",
            )
        })?;
        let unavailable = |why: String| ServiceUnavailable::new(format!("the receiver check failed: {why}"));
        let battery = battery::Battery::new(&samples, || ids::seeded_id(rand::random(), now)).map_err(unavailable)?;
        let sender = sender::Sender::new(
            &self.egress,
            self.signer.clone(),
            &body.url,
            timeout + LATE_GRACE,
            started + BUDGET,
            delivery::PER_RECEIVER,
        )
        .await
        .map_err(unavailable)?;
        let exchanges = Arc::new(sender).run(battery.sequences).await;
        let checks = battery::judge(&battery.checks, &exchanges, timeout);
        let failed = |c: &&bridge_contract::ReceiverCheck| c.outcome == ReceiverCheckOutcome::Failed;
        let report = ReceiverCheckReport {
            url: body.url.clone(),
            started_at,
            duration_ms: started.elapsed().as_millis() as u64,
            timeout_ms: timeout.as_millis() as u64,
            passed: checks.iter().filter(|c| !failed(c)).count() as u64,
            failed: checks.iter().filter(failed).count() as u64,
            must_failed: checks.iter().filter(failed).filter(|c| c.severity == ReceiverCheckSeverity::Must).count()
                as u64,
            checks,
        };
        tracing::info!(
            project = %caller.project_id,
            url = %webhook_url::redacted(&body.url),
            passed = report.passed,
            failed = report.failed,
            must_failed = report.must_failed,
            duration_ms = report.duration_ms,
            "webhook receiver checked"
        );
        Ok(report)
    }
}
