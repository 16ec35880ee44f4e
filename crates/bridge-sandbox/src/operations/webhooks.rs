//! Webhooks as operations: the public key that verifies them (`GET /webhook/public-key`), and the sandbox helpers
//! that send a test event, list delivery attempts, resend one event's deliveries and recover the failed ones. Deliveries themselves are [`crate::pipeline::delivery`]'s.

use bridge_contract::operations::{
    SandboxListWebhookDeliveriesError, SandboxRecoverWebhookDeliveriesError, SandboxResendWebhookDeliveryError,
    SandboxSendWebhookTestError,
};
use bridge_contract::{
    DateString, SandboxListWebhookDeliveriesQuery, SandboxResendWebhookDeliveryPath, SandboxWebhookDeliveries,
    SandboxWebhookRecover, SandboxWebhookRecoverRequest, SandboxWebhookResend, SandboxWebhookTest,
    SandboxWebhookTestRequest, WebhookDeliveryNotFound, WebhookTestEvent,
};
use bridge_server::Caller;

use crate::domain::webhook_url;
use crate::infra::core::Core;

/// The test event's `message` when the request has none (the schema's description says so).
pub const DEFAULT_TEST_MESSAGE: &str = "test";
/// Most delivery attempts listed at once.
const MAX_ATTEMPTS_LISTED: u64 = 500;

impl Core {
    pub async fn sandbox_send_webhook_test(
        &self,
        caller: &Caller,
        body: SandboxWebhookTestRequest,
    ) -> Result<SandboxWebhookTest, SandboxSendWebhookTestError> {
        self.check_webhook_url(Some(&body.webhook_url)).await?;
        let event = WebhookTestEvent::new(body.message.unwrap_or_else(|| DEFAULT_TEST_MESSAGE.into()));
        let now = self.now_of(&caller.project_id).await?;
        let event = self.event(&caller.project_id, now, event, Some(body.webhook_url)).await?;
        let event_id = event.id.clone();
        self.store.append_events(&[event]).await?;
        Ok(SandboxWebhookTest { event_id })
    }

    pub async fn sandbox_list_webhook_deliveries(
        &self,
        caller: &Caller,
        query: SandboxListWebhookDeliveriesQuery,
    ) -> Result<SandboxWebhookDeliveries, SandboxListWebhookDeliveriesError> {
        let mut items =
            self.store.delivery_attempts(&caller.project_id, query.event_id.as_deref(), MAX_ATTEMPTS_LISTED).await?;
        // A URL with a password (kept by an earlier version) is listed, and so shown on the dashboard, without it.
        for item in &mut items {
            if let std::borrow::Cow::Owned(shown) = webhook_url::redacted(&item.url) {
                item.url = shown;
            }
        }
        Ok(SandboxWebhookDeliveries { items })
    }

    /// `POST /sandbox/webhook-deliveries/{eventId}/resend`: every delivery of the event due now.
    pub async fn sandbox_resend_webhook_delivery(
        &self,
        caller: &Caller,
        path: SandboxResendWebhookDeliveryPath,
    ) -> Result<SandboxWebhookResend, SandboxResendWebhookDeliveryError> {
        let now = self.now_of(&caller.project_id).await?;
        let deliveries = self.store.resend_deliveries(&caller.project_id, &path.event_id, now).await?;
        if deliveries == 0 {
            return Err(WebhookDeliveryNotFound::new(format!("no webhook delivery of event {}", path.event_id)).into());
        }
        Ok(SandboxWebhookResend {
            event_id: path.event_id,
            deliveries,
            next_attempt_at: DateString::from_millis(now).unwrap_or(DateString::MIN),
        })
    }

    /// `POST /sandbox/webhook-deliveries/recover`: every failed delivery whose latest attempt was at or after `since`
    /// due now.
    pub async fn sandbox_recover_webhook_deliveries(
        &self,
        caller: &Caller,
        body: SandboxWebhookRecoverRequest,
    ) -> Result<SandboxWebhookRecover, SandboxRecoverWebhookDeliveriesError> {
        let now = self.now_of(&caller.project_id).await?;
        let deliveries = self.store.recover_deliveries(&caller.project_id, body.since.millis(), now).await?;
        Ok(SandboxWebhookRecover { deliveries })
    }
}
