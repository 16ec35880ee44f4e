//! The infrastructure: what the sandbox runs on, over the domain's types.

pub mod clock;
pub mod core;
pub mod counters;
pub mod egress;
pub mod faults;
pub mod rate_limit;
pub mod secrets;
pub mod store;
pub mod telemetry;
