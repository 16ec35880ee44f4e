//! The runner with the proxy in front of the deployment (`--html FILE`): the one place that uses both tools,
//! above them both.

use std::io::Write;

use crate::proxy::{Proxy, ProxyConfig};
use crate::report::coverage::TrafficReport;
use crate::report::Report;
use crate::runner::config::RunConfig;
use crate::runner::run;

/// [`run`] with every request going through a validating proxy ([`crate::proxy`]) in front of the deployment:
/// the run's report and what the proxy saw (coverage per operation, violations), for the HTML page
/// (`--html FILE`).
pub async fn run_through_proxy(
    config: &RunConfig,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<(Report, TrafficReport)> {
    let mut proxy_config = ProxyConfig::new(&config.base_url);
    proxy_config.sandbox_helpers = config.sandbox_helpers;
    proxy_config.errors = config.errors;
    let proxy = Proxy::start(proxy_config).await?;
    let mut through = config.clone();
    through.base_url = proxy.url.clone();
    let report = run(&through, out).await;
    let mut traffic = proxy.stop().await?;
    traffic.upstream = config.base_url.clone();
    Ok((report?, traffic))
}
