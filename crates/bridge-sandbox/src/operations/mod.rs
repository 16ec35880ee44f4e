//! The contract's operations over the domain, one module per area, on the [`crate::infra::core::Core`]: what
//! each operation of `BridgeApi` and `SandboxApi` does, from decoded input and the authenticated caller to the
//! contract's answer or documented error. Nothing here knows of HTTP; [`crate::service`] is the adapter from the
//! generated traits to these.

pub mod addresses;
pub mod bridge_config;
pub mod bridges;
pub mod deposits;
pub mod feed;
pub mod projects;
pub mod quotes;
pub mod routing;
pub mod webhooks;
