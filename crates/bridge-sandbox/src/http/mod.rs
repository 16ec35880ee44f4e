//! The contract's operations, one module per area, over the [`crate::infra::core::Core`]; [`service`] implements
//! the generated `BridgeApi` and `SandboxApi` traits by delegating to them.

pub mod addresses;
pub mod bridge_config;
pub mod bridges;
pub mod deposits;
pub mod docs;
pub mod feed;
pub mod projects;
pub mod quotes;
pub mod routing;
pub mod service;
pub mod webhooks;
