//! The quote request bodies the decoder is measured on (`benches/decode_request.rs` with criterion,
//! `examples/decode_count.rs` under callgrind): one valid, one with two issues.

/// A valid `POST /bridge/quote/user` body (250 bytes).
pub const VALID: &[u8] = br#"{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100.25","mode":"pay","depositor":"0x1111111111111111111111111111111111111111","recipient":"0x2222222222222222222222222222222222222222","webhookUrl":"https://example.com/hooks/bridge"}"#;
/// `mode` is not one of the literals and `recipient` is a number: the engine reports the first (one issue per
/// literal: 2, in `First` mode) or both (`All`: 3); serde stops at `mode`; jsonschema reports both (2 errors).
pub const INVALID: &[u8] = br#"{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100.25","mode":"swap","depositor":"0x1111111111111111111111111111111111111111","recipient":12345,"webhookUrl":"https://example.com/hooks/bridge"}"#;
