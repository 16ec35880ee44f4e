//! The API evolution guard: every difference between two bundled OpenAPI documents (`base`, the last release,
//! and `head`, the working tree), classified as breaking or compatible for **clients** and for **servers**.
//!
//! * **Clients** call the API and receive its events: services using `bridge-client` or the `bridge-contract`
//!   types, and webhook receivers.
//! * **Servers** implement it: the production service, `bridge-sandbox`, any implementation of
//!   `bridge_server::BridgeApi`.
//!
//! A change is *breaking* for an audience when a member of it that works with the base contract can fail with
//! the head contract without changing its own code: a deployed peer built from the base meets one built from the
//! head and a message is refused or misread, or its code stops compiling against the regenerated crates because
//! something it names was removed or a `BridgeApi` method was added.
//!
//! Every rule has a fixed [`Effect`] on the set of valid messages at the place where the change is; which
//! audience it breaks then follows from who sends those messages ([`Side`]):
//!
//! | effect | the change... | client → server (requests) | server → client (responses, events) |
//! |---|---|---|---|
//! | narrows | makes valid messages invalid | breaks clients | breaks servers |
//! | widens | makes invalid messages valid | breaks servers | breaks clients |
//! | changes, removes | both, or removes a name code uses | breaks both | breaks both |
//! | neutral | neither | compatible | compatible |
//!
//! The sender of a narrowed message may still send what is no longer allowed; the receiver of a widened one may
//! be sent what it refuses (our generated enums are closed and `additionalProperties: false` objects deny
//! unknown members, so "refuses" is literal). Callbacks turn the sides around: the service sends the webhook
//! request and the client answers it.
//!
//! `$ref`s are followed into components; a change inside a shared component is reported once, with every
//! operation that uses it on both sides of the comparison, and breaks the union of what each use breaks: a
//! component used in requests and in responses can break both audiences.
//!
//! `model.rs` is the model: the rules (all in its `rules!` table), effects, audiences and the changes a
//! comparison returns. `diff.rs` compares (one function per rule family), `report.rs` prints.

use serde_json::Value;

mod diff;
mod model;
pub mod report;
#[cfg(test)]
mod tests;

pub use model::*;

/// Compares two bundled documents (anchors and merge keys already expanded).
pub fn compare(base: &Value, head: &Value) -> Comparison {
    diff::compare(base, head)
}
