//! The integration tests of `bridge-client`, in one test binary (one link instead of one per file):
//!
//! * [`client`]: the typed client against small scripted servers on 127.0.0.1 (pagers, errors, credentials);
//! * [`webhook`]: signing and verifying webhook deliveries;
//! * [`js_reference`]: signatures checked the way a JavaScript receiver checks them (Node.js);
//! * [`live`]: the client against a real sandbox, with faults injected by a proxy on 127.0.0.1.
//!
//! [`support`] is the scripted server and the sample events. `cargo test -p bridge-client --test it live::`
//! runs one module.

mod client;
mod js_reference;
mod live;
mod support;
mod webhook;
