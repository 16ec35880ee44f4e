//! An answer's JSON body, read once for every check of it: the `serde_json::Value` the schema validator reads, and
//! whether some object in it repeated a member. A `Value` keeps only the last value of a repeated member, so the
//! generated type can be decoded from it ([`AnswerJson::holds_what_was_sent`]) exactly when nothing was
//! repeated; otherwise it is decoded from the bytes, where a plain struct refuses the repeat (`duplicate field`).
//!
//! The `Value` is built as `serde_json::from_slice::<Value>` builds it (same parser, same calls, same errors for
//! malformed JSON), by a visitor that also notes a repeated member.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// See the module documentation.
#[derive(Debug)]
pub struct AnswerJson {
    pub value: Value,
    repeats: bool,
}

impl AnswerJson {
    /// Reads `body` as `serde_json::from_slice::<Value>` does (the same errors).
    pub fn read(body: &[u8]) -> Result<Self, serde_json::Error> {
        let repeats = Cell::new(false);
        let mut json = serde_json::Deserializer::from_slice(body);
        let value = ValueSeed(&repeats).deserialize(&mut json)?;
        json.end()?;
        Ok(Self { value, repeats: repeats.get() })
    }

    /// The `Value` holds every member that was sent: no object repeated a member.
    pub fn holds_what_was_sent(&self) -> bool {
        !self.repeats
    }
}

/// serde_json's `Value` visitor, noting repeated members in `.0`.
#[derive(Clone, Copy)]
struct ValueSeed<'r>(&'r Cell<bool>);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            if members.insert(key, value).is_some() {
                self.0.set(true);
            }
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_serde_json_reads_and_notes_repeated_members() {
        for text in [
            r#"{"a":1,"b":[1.5,-2,null,true,"x\u00e9"],"c":{"d":{}}}"#,
            r#"[{"a":1},{"a":2}]"#,
            "1e400",
            r#"{"a":1"#,
            r#"{"a":1} x"#,
            "",
        ] {
            let ours = AnswerJson::read(text.as_bytes()).map(|a| a.value).map_err(|e| e.to_string());
            let theirs = serde_json::from_slice::<Value>(text.as_bytes()).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
        let once = AnswerJson::read(br#"{"a":1,"b":{"c":2}}"#).unwrap();
        assert!(once.holds_what_was_sent());
        for repeated in [r#"{"a":1,"a":2}"#, r#"{"b":[{"c":1,"c":1}]}"#] {
            let read = AnswerJson::read(repeated.as_bytes()).unwrap();
            assert!(!read.holds_what_was_sent(), "{repeated}");
            assert_eq!(read.value, serde_json::from_str::<Value>(repeated).unwrap(), "the last value is kept");
        }
    }
}
