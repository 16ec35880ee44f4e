//! progenitor's request hooks (`ClientHooks`) on the generated client, applying the [`Settings`]:
//!
//! * `pre`, before the first attempt: the `User-Agent` and the credentials the operation's `security` calls for;
//! * `exec`: sends the request with the retries of the retry policy ([`crate::retry`]).

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::header::USER_AGENT;

use crate::raw;
use crate::retry;
use crate::transport::Settings;

impl ClientHooks<Settings> for raw::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> Result<(), progenitor_client::Error<E>> {
        let settings = self.inner();
        request.headers_mut().insert(USER_AGENT, settings.user_agent.clone());
        settings.credentials.apply_for(request, info.operation_id).await.map_err(progenitor_client::Error::Custom)
    }

    async fn exec(&self, request: reqwest::Request, info: &OperationInfo) -> reqwest::Result<reqwest::Response> {
        let settings = self.inner();
        retry::execute(self.client(), &settings.retry, &settings.credentials, request, info.operation_id).await
    }
}
