//! The domain: what the sandbox models, with no input or output of its own (no store, no clock, no network).

pub mod catalogue;
pub mod faults;
pub mod ids;
pub mod lifecycle;
pub mod pricing;
pub mod records;
pub mod webhook_url;
