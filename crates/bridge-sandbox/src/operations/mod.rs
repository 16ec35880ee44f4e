//! The contract's operations over the domain, one module per area, on the [`crate::infra::core::Core`]: what
//! each operation of `BridgeApi` and `SandboxApi` does, from decoded input and the authenticated caller to the
//! contract's answer or documented error. Nothing here knows of HTTP; [`crate::service`] is the adapter from the
//! generated traits to these.
//!
//! Each area file is an `impl Core` block whose public methods are the area's operations, named as the generated
//! traits name them (`quote_bridge`, `sandbox_deposit_bridge`, ...). Only `service` calls them: the layers below
//! (the pipeline's jobs, `access`) work on the core's own methods and the store. A method call names no module,
//! so `cargo xtask check` cannot see one made from below; keep it so by review.

pub mod addresses;
pub mod bridge_config;
pub mod bridges;
pub mod deposits;
pub mod faults;
pub mod feed;
pub mod projects;
pub mod quotes;
pub mod receiver_check;
pub mod routing;
pub mod webhooks;
