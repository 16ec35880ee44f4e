//! The integration tests of `bridge-server`, in one test binary (one link instead of one per file):
//!
//! * [`admission`]: the admission step (429 `TooManyRequests` after authentication, before decoding) and the
//!   `ErrorTag` of every error answer;
//! * [`auth`]: authentication, for each failure production answers;
//! * [`credentials`]: credentials recognised by their form, and never quoted back by an error answer;
//! * [`decode_errors`]: decode errors pinned with insta snapshots, one request through the real router each;
//! * [`properties`]: property tests of the decoder (valid requests accepted unchanged, nothing makes it panic).
//!
//! [`common`] is their `BridgeApi` that records every call, and the helpers that send requests through the
//! router in process. `cargo test -p bridge-server --test it decode_errors::` runs one module.

mod admission;
mod auth;
mod common;
mod credentials;
mod decode_errors;
mod fast_path;
mod properties;
