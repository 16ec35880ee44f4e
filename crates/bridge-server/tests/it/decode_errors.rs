//! Decode errors pinned with insta snapshots: every rule of `docs/decode-errors.md`, across the
//! operations. Each case is one request through the real router; its status and body are the snapshot
//! (`tests/it/snapshots/it__decode_errors__<case>.snap`). A few cases also assert the doc's exact words in code, so
//! a wrongly accepted snapshot cannot hide a regression of the core rules.

use crate::common;

use bridge_server::{ErrorsMode, ServerConfig};
use common::{app, quote_body, with, Answer, Send};
use serde_json::{json, Value};

const QUOTE: &str = "/bridge/quote/user";
const SWAP: &str = "/bridge/quote/bridge-swap/user";
const SDA: &str = "/sda/deposit-addresses";
const LEGACY: &str = "/bridge/deposit-addresses";

fn swap_body() -> Value {
    json!({"chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "1", "mode": "pay", "tokenIn": "USDC", "tokenOut": "ETH",
           "depositor": "0xabc", "recipient": "0xdef"})
}

fn sda_body() -> Value {
    json!({"depositChains": ["ETHEREUM"], "destinationChain": "BASE", "destinationAddress": "0xdef"})
}

/// (snapshot name, request)
fn cases() -> Vec<(&'static str, Send<'static>)> {
    let long_note = "n".repeat(81);
    let astral_81 = "😀".repeat(41); // 82 UTF-16 code units
    let long_url = format!("http://127.0.0.1/{}", "u".repeat(2049 - 17));
    vec![
        // --- required keys, JSON types (quote/user, declaration order: token, chainIn, chainOut, amount, ...)
        ("quote_empty_object_missing_first_key", Send::json("POST", QUOTE, "{}")),
        ("quote_token_wrong_type", Send::json("POST", QUOTE, &with(quote_body(), "token", json!(1)))),
        (
            "quote_first_error_only_in_declaration_order",
            Send::json("POST", QUOTE, &json!({"mode": "both", "amount": "x", "chainIn": 5}).to_string()),
        ),
        ("quote_amount_not_a_decimal", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!("abc")))),
        ("quote_amount_with_blank", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!(" 1")))),
        ("quote_amount_hex", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!("0x10")))),
        ("quote_amount_nan", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!("NaN")))),
        ("quote_amount_underscore", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!("1_000")))),
        ("quote_amount_json_number", Send::json("POST", QUOTE, &with(quote_body(), "amount", json!(1.50)))),
        (
            "quote_amount_native_optional_bad",
            Send::json("POST", QUOTE, &with(quote_body(), "amountNative", json!("Infinity"))),
        ),
        ("quote_mode_enum", Send::json("POST", QUOTE, &with(quote_body(), "mode", json!("both")))),
        ("quote_is_sda_string", Send::json("POST", QUOTE, &with(quote_body(), "isSda", json!("yes")))),
        ("quote_is_sda_boolean", Send::json("POST", QUOTE, &with(quote_body(), "isSda", json!(true)))),
        ("quote_optional_null_is_an_error", Send::json("POST", QUOTE, &with(quote_body(), "webhookUrl", Value::Null))),
        (
            "quote_depositor_number_rendered_like_js",
            Send::json("POST", QUOTE, &with(quote_body(), "depositor", json!(1e21))),
        ),
        // --- postBridgeData (a union inside an optional member)
        (
            "quote_post_bridge_data_unknown_tag",
            Send::json("POST", QUOTE, &with(quote_body(), "postBridgeData", json!({"_tag": "foo", "x": 1}))),
        ),
        (
            "quote_post_bridge_data_missing_tag",
            Send::json("POST", QUOTE, &with(quote_body(), "postBridgeData", json!({}))),
        ),
        (
            "quote_post_bridge_data_not_an_object",
            Send::json("POST", QUOTE, &with(quote_body(), "postBridgeData", json!("extended"))),
        ),
        (
            "quote_vault_id_negative",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "extended", "vaultId": -1})),
            ),
        ),
        (
            "quote_vault_id_negative_fraction",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "extended", "vaultId": -1.5})),
            ),
        ),
        (
            "quote_vault_id_fraction",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "extended", "vaultId": 1.5})),
            ),
        ),
        (
            "quote_vault_id_string",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "extended", "vaultId": "1"})),
            ),
        ),
        (
            "quote_vault_id_missing",
            Send::json("POST", QUOTE, &with(quote_body(), "postBridgeData", json!({"_tag": "extended"}))),
        ),
        (
            "quote_spans_too_many",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "partnerbtcfiv2", "spans": vec!["s"; 71]})),
            ),
        ),
        (
            "quote_spans_not_an_array",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "partnerbtcfiv2", "spans": "a"})),
            ),
        ),
        (
            "quote_spans_item_not_a_string",
            Send::json(
                "POST",
                QUOTE,
                &with(quote_body(), "postBridgeData", json!({"_tag": "partnerbtcfiv2", "spans": ["a", 2, 3]})),
            ),
        ),
        // --- whole payload
        ("quote_payload_string", Send::json("POST", QUOTE, "\"text\"")),
        ("quote_payload_array", Send::json("POST", QUOTE, "[1,2]")),
        ("quote_payload_empty_body_is_null", Send::json("POST", QUOTE, "")),
        ("quote_payload_malformed_json", Send::json("POST", QUOTE, "{\"token\": ")),
        (
            "quote_payload_text_plain",
            Send::json("POST", QUOTE, "hello").content_type(Some("text/plain; charset=utf-8")),
        ),
        ("quote_payload_octet_stream", Send::json("POST", QUOTE, "{}").content_type(Some("application/octet-stream"))),
        (
            "quote_payload_form_encoded",
            Send::json(
                "POST",
                QUOTE,
                "token=USDC&chainIn=ETHEREUM&chainOut=BASE&amount=1&mode=pay&depositor=a&recipient=b&isSda=maybe",
            )
            .content_type(Some("application/x-www-form-urlencoded")),
        ),
        // --- bridge-swap (declaration order: chainIn, chainOut, amount, amountNative, mode, isSda, tokenIn, ...)
        ("swap_empty_object_missing_first_key", Send::json("POST", SWAP, "{}")),
        (
            "swap_token_in_missing",
            Send::json("POST", SWAP, &{
                let mut b = swap_body();
                b.as_object_mut().unwrap().remove("tokenIn");
                b.to_string()
            }),
        ),
        ("swap_refund_address_number", Send::json("POST", SWAP, &with(swap_body(), "refundAddress", json!(5)))),
        // --- deposit addresses (declaration order: depositChains, addressNote, reusePolicy, webhookUrl, refundAddress, ...)
        (
            "sda_deposit_chains_not_an_array",
            Send::json("POST", SDA, &with(sda_body(), "depositChains", json!("ETHEREUM"))),
        ),
        ("sda_deposit_chains_empty", Send::json("POST", SDA, &with(sda_body(), "depositChains", json!([])))),
        (
            "sda_deposit_chains_empty_item",
            Send::json("POST", SDA, &with(sda_body(), "depositChains", json!(["ETHEREUM", "", ""]))),
        ),
        ("sda_address_note_too_long", Send::json("POST", SDA, &with(sda_body(), "addressNote", json!(long_note)))),
        ("sda_address_note_utf16_length", Send::json("POST", SDA, &with(sda_body(), "addressNote", json!(astral_81)))),
        ("sda_reuse_policy_enum", Send::json("POST", SDA, &with(sda_body(), "reusePolicy", json!("sometimes")))),
        ("sda_webhook_url_empty", Send::json("POST", SDA, &with(sda_body(), "webhookUrl", json!("")))),
        ("sda_webhook_url_too_long", Send::json("POST", SDA, &with(sda_body(), "webhookUrl", json!(long_url)))),
        ("sda_destination_chain_empty", Send::json("POST", SDA, &with(sda_body(), "destinationChain", json!("")))),
        (
            "sda_bridge_if_not_swappable_string",
            Send::json("POST", SDA, &with(sda_body(), "bridgeIfNotSwappable", json!("yes"))),
        ),
        ("sda_missing_everything", Send::json("POST", SDA, "{}")),
        (
            "legacy_deposit_chains_not_an_array",
            Send::json("POST", LEGACY, &with(sda_body(), "depositChains", json!("ETHEREUM"))),
        ),
        // --- query strings
        ("search_page_size_not_a_number", Send::get("/sda/deposit-addresses/search?pageSize=abc")),
        ("search_page_size_blank", Send::get("/sda/deposit-addresses/search?pageSize=%20")),
        ("search_page_token_empty", Send::get("/sda/deposit-addresses/search?pageToken=")),
        (
            "search_address_note_too_long",
            Send::get(Box::leak(
                format!("/sda/deposit-addresses/search?addressNote={}", "x".repeat(81)).into_boxed_str(),
            )),
        ),
        ("search_repeated_key", Send::get("/sda/deposit-addresses/search?depositChain=A&depositChain=B")),
        ("search_legacy_path_same_rules", Send::get("/bridge/deposit-addresses/search?pageSize=abc")),
        ("history_missing_page", Send::get("/bridge/history/user")),
        (
            "history_page_not_a_number",
            Send::get("/bridge/history/user?page=abc&limit=10&sortBy=createdAt&sortDirection=asc"),
        ),
        ("history_sort_by_enum", Send::get("/bridge/history/user?page=1&limit=10&sortBy=name&sortDirection=asc")),
        (
            "history_state_enum_optional",
            Send::get("/bridge/history/user?page=1&limit=10&sortBy=createdAt&sortDirection=asc&state=DONE"),
        ),
        ("events_missing_since", Send::get("/webhook/user-events-cursor")),
        ("events_page_token_pattern", Send::get("/webhook/user-events-cursor?sinceTimestamp=0&pageToken=XYZ")),
        ("events_page_size_over_max", Send::get("/webhook/user-events-cursor?sinceTimestamp=0&pageSize=51")),
        ("events_page_size_repeated", Send::get("/webhook/user-events-cursor?sinceTimestamp=0&pageSize=1&pageSize=2")),
        ("status_missing_destination_address", Send::get("/sda/deposit-addresses/0xabc/ETHEREUM/public-status")),
        // --- sandbox helpers (the contract's own schemas, same rules)
        ("sandbox_clock_negative", Send::json("POST", "/sandbox/clock/advance", "{\"ms\":-1}")),
        ("sandbox_clock_string", Send::json("POST", "/sandbox/clock/advance", "{\"ms\":\"5\"}")),
        (
            "sandbox_deposit_amount_bad",
            Send::json(
                "POST",
                "/sandbox/deposit-addresses/0xabc/ETHEREUM/deposits",
                "{\"token\":\"USDC\",\"amount\":\"1,5\"}",
            ),
        ),
        // --- order of work: authentication first, then decoding; routing before both
        ("auth_before_decoding", Send::json("POST", QUOTE, "not json").without_auth()),
        ("unknown_path_is_404_empty", Send::get("/bridge/nothing-here")),
        ("wrong_method_is_404_empty", Send::json("DELETE", QUOTE, "{}")),
    ]
}

#[tokio::test]
async fn decode_error_snapshots() {
    let (app, _) = app(ServerConfig::default());
    let cases = cases();
    assert!(cases.len() >= 50, "at least fifty cases ({})", cases.len());
    for (name, request) in cases {
        let answer = request.to(&app).await;
        insta::assert_json_snapshot!(name, answer);
    }
}

#[tokio::test]
async fn all_mode_reports_every_failing_property() {
    let (app, _) = app(ServerConfig { errors: ErrorsMode::All, ..ServerConfig::default() });
    let body = json!({"chainIn": 5, "mode": "both", "amount": "x", "depositor": "a", "recipient": "b"}).to_string();
    let answer = Send::json("POST", QUOTE, &body).to(&app).await;
    insta::assert_json_snapshot!("all_mode_quote", answer);
    let paths: Vec<&Value> = answer.body["issues"].as_array().unwrap().iter().map(|i| &i["path"]).collect();
    assert_eq!(
        paths,
        [
            &json!(["token"]),
            &json!(["chainIn"]),
            &json!(["chainOut"]),
            &json!(["amount"]),
            &json!(["mode"]),
            &json!(["mode"])
        ]
    );
}

/// The doc's own examples, asserted word for word.
#[tokio::test]
async fn the_documented_examples_hold() {
    let (app, _) = app(ServerConfig::default());
    let issues = |a: &Answer| a.body["issues"].as_array().cloned().unwrap_or_default();

    let a = Send::json("POST", QUOTE, &with(quote_body(), "mode", json!("both"))).to(&app).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["_tag"], "HttpApiDecodeError");
    assert_eq!(
        issues(&a),
        [
            json!({"_tag": "Type", "path": ["mode"], "message": "Expected \"pay\", actual \"both\""}),
            json!({"_tag": "Type", "path": ["mode"], "message": "Expected \"receive\", actual \"both\""}),
        ]
    );

    let a = Send::json("POST", QUOTE, &with(quote_body(), "isSda", json!("yes"))).to(&app).await;
    let messages: Vec<Value> = issues(&a).iter().map(|i| i["message"].clone()).collect();
    assert_eq!(
        messages,
        [
            json!("Expected \"true\", actual \"yes\""),
            json!("Expected \"false\", actual \"yes\""),
            json!("Expected undefined, actual \"yes\"")
        ]
    );

    let a = Send::json("POST", SDA, &with(sda_body(), "depositChains", json!("ETHEREUM"))).to(&app).await;
    assert_eq!(
        issues(&a),
        [
            json!({"_tag": "Type", "path": ["depositChains"], "message": "Expected ReadonlyArray<NonEmptyString>, actual \"ETHEREUM\""})
        ]
    );

    let a = Send::json("POST", SDA, &with(sda_body(), "depositChains", json!(["A", ""]))).to(&app).await;
    assert_eq!(
        issues(&a),
        [
            json!({"_tag": "Refinement", "path": ["depositChains", 1], "message": "Expected a non empty string, actual \"\""})
        ]
    );

    let a = Send::get("/webhook/user-events-cursor?sinceTimestamp=0&pageSize=51").to(&app).await;
    assert_eq!(
        issues(&a)[0],
        json!({"_tag": "Refinement", "path": ["pageSize"], "message": "Expected a number less than or equal to 50, actual 51"})
    );

    let a = Send::json("POST", QUOTE, &with(quote_body(), "amount", json!("abc"))).to(&app).await;
    assert_eq!(
        issues(&a),
        [
            json!({"_tag": "Transformation", "path": ["amount"], "message": "Unable to decode \"abc\" into a BigDecimal"})
        ]
    );

    let a = Send::json("POST", QUOTE, &with(quote_body(), "postBridgeData", json!({"_tag": "foo"}))).to(&app).await;
    let first = &issues(&a)[0];
    assert_eq!(first["path"], json!(["postBridgeData", "_tag"]));
    assert!(first["message"].as_str().unwrap().starts_with("Expected \"extended\" | \"partnerbtcfi\" | "));
    assert_eq!(
        issues(&a)[1],
        json!({"_tag": "Type", "path": ["postBridgeData"], "message": "Expected undefined, actual {\"_tag\":\"foo\"}"})
    );

    let a = Send::json("POST", "/sandbox/clock/advance", "{\"ms\":-1.5}").to(&app).await;
    assert_eq!(
        issues(&a)[0]["message"],
        "Expected a non-negative number, actual -1.5",
        "non-negative is checked before integer"
    );
}

/// Decode parity (issue 22): every `pageToken` of the feed's pattern decodes, whether or not a page handed it
/// out (the reference framework checks the pattern only; a position is the service's to interpret, and the sandbox
/// answers 200 from it). Only a token outside the pattern is a 400.
#[tokio::test]
async fn a_page_token_of_the_pattern_decodes_whatever_position_it_names() {
    let (app, _) = app(ServerConfig::default());
    for token in ["0123456789abcdef01234567", "000000008000000000000000", "ffffffffffffffffffffffff"] {
        let uri = format!("/webhook/user-events-cursor?sinceTimestamp=0&pageToken={token}");
        let a = Send::get(&uri).to(&app).await;
        assert_eq!(a.status, 200, "{token}: {:?}", a.body);
    }
    for token in ["FFFFFFFFFFFFFFFFFFFFFFFF", "0123456789abcdef0123456", "0123456789abcdef012345678"] {
        let uri = format!("/webhook/user-events-cursor?sinceTimestamp=0&pageToken={token}");
        let a = Send::get(&uri).to(&app).await;
        assert_eq!(a.status, 400, "{token}: {:?}", a.body);
        assert_eq!(a.body["issues"][0]["path"], json!(["pageToken"]));
    }
}

/// Every `webhookUrl` of a request is at most 2,048 characters (UTF-16 code units, as the reference framework
/// counts): one more is the framework's Refinement at `["webhookUrl"]` quoting the value, on every operation that
/// takes one; exactly 2,048 is no decode error.
#[tokio::test]
async fn a_webhook_url_longer_than_2048_characters_is_refused_by_every_operation() {
    let (app, _) = app(ServerConfig::default());
    let routing = json!({"depositChain": "ETHEREUM", "routes": [{"action": {"_tag": "bridge",
        "destinationChain": "BASE", "destinationAddress": "0xdef"}}]});
    let bodies = [
        (QUOTE, quote_body()),
        (SWAP, swap_body()),
        (SDA, sda_body()),
        (LEGACY, sda_body()),
        ("/sandbox/routing-deposit-addresses", routing),
        ("/sandbox/webhook-test", json!({})),
    ];
    let at_limit = format!("http://127.0.0.1/{}", "u".repeat(2048 - 17));
    let astral = format!("http://127.0.0.1/{}", "😀".repeat((2048 - 17) / 2 + 1)); // 2,049 or 2,050 code units
    assert_eq!(at_limit.encode_utf16().count(), 2048);
    for (path, body) in bodies {
        for too_long in [format!("{at_limit}u"), astral.clone()] {
            let a = Send::json("POST", path, &with(body.clone(), "webhookUrl", json!(too_long))).to(&app).await;
            assert_eq!(a.status, 400, "{path}");
            let expected = format!("Expected a string at most 2048 character(s) long, actual \"{too_long}\"");
            assert_eq!(
                a.body["issues"][0],
                json!({"_tag": "Refinement", "path": ["webhookUrl"], "message": expected}),
                "{path}"
            );
        }
        let a = Send::json("POST", path, &with(body, "webhookUrl", json!(at_limit))).to(&app).await;
        let on_url = a.body["issues"].as_array().into_iter().flatten().any(|i| i["path"] == json!(["webhookUrl"]));
        assert!(!on_url, "{path}: 2,048 characters are no decode error: {:?}", a.body);
    }
}
