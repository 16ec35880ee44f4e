//! The generated types decode from other serde deserializers than serde_json's, as serde's derived impls did: the
//! table-driven decoder makes the same calls (`deserialize_struct` with the field names, `deserialize_enum` with
//! the variant names, a struct from a sequence of its members, field and variant indexes), so a format answers it
//! as it answered the derive. Here with serde's own value deserializers (a map of strings, a sequence, a string, an
//! index), which call the visitors as non-JSON formats do (no `null`, no borrowed JSON text).

use bridge_contract::{GasBoost, QuoteCommitted, Speed};
use serde::de::value::{Error, MapDeserializer, SeqDeserializer, StrDeserializer, U32Deserializer};
use serde::de::IntoDeserializer;
use serde::Deserialize;

fn map<'a>(members: &'a [(&'a str, &'a str)]) -> MapDeserializer<'a, impl Iterator<Item = (&'a str, &'a str)>, Error> {
    MapDeserializer::new(members.iter().copied())
}

#[test]
fn structs_from_a_map_and_from_a_sequence() {
    let committed = QuoteCommitted::deserialize(map(&[("quoteId", "q1")])).unwrap();
    assert_eq!(committed.quote_id, "q1");
    // Unknown members are ignored (the struct is open), a repeated one refused, a missing one named.
    assert!(QuoteCommitted::deserialize(map(&[("other", "x"), ("quoteId", "q1")])).is_ok());
    let repeated = QuoteCommitted::deserialize(map(&[("quoteId", "q1"), ("quoteId", "q2")])).unwrap_err();
    assert_eq!(repeated.to_string(), "duplicate field `quoteId`");
    assert_eq!(QuoteCommitted::deserialize(map(&[])).unwrap_err().to_string(), "missing field `quoteId`");
    // A struct from a sequence of its members in declaration order, as serde's derive reads one.
    let items = ["1.5", "2", "0.25"].map(|s: &str| s.into_deserializer());
    let boost: Result<GasBoost, Error> = GasBoost::deserialize(SeqDeserializer::new(items.into_iter()));
    // `amountNativeUsd` is a number, which a string is not (the scalar's own message).
    assert_eq!(boost.unwrap_err().to_string(), "Expected number, actual \"2\"");
    let short: Result<QuoteCommitted, Error> =
        QuoteCommitted::deserialize(SeqDeserializer::new(std::iter::empty::<StrDeserializer<'_, Error>>()));
    assert_eq!(short.unwrap_err().to_string(), "invalid length 0, expected struct QuoteCommitted with 1 element");
}

#[test]
fn enums_by_name_and_by_index() {
    let fast: Result<Speed, Error> = Speed::deserialize("fast".into_deserializer());
    assert_eq!(fast.unwrap(), Speed::Fast);
    let unknown: Result<Speed, Error> = Speed::deserialize("warp".into_deserializer());
    assert_eq!(unknown.unwrap_err().to_string(), "unknown variant `warp`, expected one of `fast`, `standard`, `slow`");
    // Formats that write variants by index (bincode, postcard) name them by number.
    let by_index: Result<Speed, Error> = Speed::deserialize(U32Deserializer::<Error>::new(2));
    assert_eq!(by_index.unwrap(), Speed::Slow);
    let beyond: Result<Speed, Error> = Speed::deserialize(U32Deserializer::<Error>::new(3));
    assert_eq!(beyond.unwrap_err().to_string(), "invalid value: integer `3`, expected variant index 0 <= i < 3");
    let slow: Result<(Speed,), Error> =
        <(Speed,)>::deserialize(SeqDeserializer::new(std::iter::once("slow".into_deserializer())));
    assert_eq!(slow.unwrap().0, Speed::Slow);
}

/// Decodes `json` with serde_json, writes it as CBOR (a self-describing binary format, `is_human_readable` false)
/// and reads it back with ciborium: the same value.
fn through_cbor<T>(json: &[u8])
where
    T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    let typed: T = serde_json::from_slice(json).expect("the fixture decodes from JSON");
    let mut cbor = Vec::new();
    ciborium::into_writer(&typed, &mut cbor).expect("encodes as CBOR");
    let back: T = ciborium::from_reader(cbor.as_slice()).expect("decodes from CBOR");
    assert_eq!(back, typed);
}

#[test]
fn unions_and_flattened_structs_from_a_self_describing_binary_format() {
    // The benchmark fixtures: a record (a union of families, each flattening `allOf` parts, with a state union),
    // a quote (a union), a page of every event kind, a page of every family and state the sandbox reaches.
    through_cbor::<bridge_contract::BridgeRecord>(include_bytes!("../../benches/fixtures/bridge-record.json"));
    through_cbor::<bridge_contract::QuoteResponse>(include_bytes!("../../benches/fixtures/quote-response.json"));
    through_cbor::<bridge_contract::UserEventsPage>(include_bytes!("../../benches/fixtures/events-page-50.json"));
    through_cbor::<bridge_contract::HistoryPage>(include_bytes!("../../benches/fixtures/history-page-50.json"));
}

#[test]
fn a_union_from_a_format_that_is_not_self_describing_is_an_error() {
    // A union reads its object with `deserialize_any`, which bincode and postcard refuse; here a bare integer
    // stands for what such a format hands over: an error, not a panic or a wrong value.
    let number: Result<bridge_contract::QuoteResponse, Error> =
        bridge_contract::QuoteResponse::deserialize(U32Deserializer::<Error>::new(7));
    assert!(number.is_err());
}
