//! The client against a real sandbox over real HTTP, with faults injected by a proxy on 127.0.0.1
//! ([`harness`]): retries, the commit whose answer is lost, waiting for a bridge, the webhook receiver, event
//! kinds newer than this build, the `User-Agent` and the errors; and the example receiver under the sandbox's
//! receiver check. Every scenario also runs with the feature
//! under test off (no retries, no feed, a wrong key...) and checks that it then fails.

// `POST /bridge/quote/user` is deprecated in production; it is the spec's single-token quote and stays under test.
#![allow(deprecated)]

mod harness;

mod commit;
mod faults;
mod feed;
mod receiver;
mod receiver_check;
mod retries;
mod wait;
