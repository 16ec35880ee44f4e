//! How the server decodes a JSON body: in one parse, without the engine's JavaScript value or its normalised JSON.
//!
//! The body is read into a [`Buffered`] tree (strings borrowed from the body, numbers as `JSON.parse` reads them;
//! [`scan`] reads ordinary bodies, serde_json the rest), then the operation's Rust type is read straight from the
//! tree through [`Normalised`], a deserializer that follows the decoder table: it checks every rule of the engine
//! on the way (types, `null` refused, lengths in UTF-16 units, patterns, bounds, safe integers, literals, item
//! counts, union tags, required members) and hands the type what the engine's normalised JSON would hold:
//! members of the schema only (a repeated member's last value), `x-trim` strings trimmed, absent members with a
//! `default` given it, numbers as the engine writes them, union members as their variant. Decimal strings and
//! dates are checked by the type itself, with the same `FromStr` the engine uses.
//!
//! When anything is off, the engine's walker reads the same tree ([`engine::check`]) and reports the issues, in
//! `First` or `All` mode, exactly as [`engine::decode`] does. So the result is the engine's, issue for issue and
//! value for value (`tests/fast_path.rs` compares the two on arbitrary and mutated bodies of every operation and on
//! the fuzz corpus); what is saved is the engine's allocations: a string per member name and value, the JavaScript
//! value, the normalised JSON, and a second pass for valid bodies.

use bridge_contract::codec::{Buffered, Error, Key};
use bridge_contract::Issue;
use serde::de::value::{BorrowedStrDeserializer, StrDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::engine::{self, parse_js_number, trim_js, ErrorsMode};
use super::shape::{NumberRules, Shape, StructShape};

/// A JSON body as `T`, or the engine's issues for it. `None` only if this path and the engine disagree (a bug the
/// tests look for): the caller then asks the engine alone.
pub fn body<T: DeserializeOwned>(shape: &Shape, bytes: &[u8], mode: ErrorsMode) -> Option<Result<T, Vec<Issue>>> {
    let tree = match parse(bytes) {
        Ok(tree) => tree,
        Err(e) => return Some(Err(vec![super::parts::json_issue(&e)])),
    };
    match T::deserialize(Normalised { shape, value: &tree }) {
        Ok(value) => Some(Ok(value)),
        Err(_) => match engine::check(shape, &tree, mode) {
            Err(issues) => Some(Err(issues)),
            Ok(()) => None,
        },
    }
}

/// The body as a tree (an empty body is `null`, as `parts::json` reads it), its numbers read from their text:
/// by [`scan`] when it can, else by serde_json (which also says where malformed JSON broke).
fn parse(bytes: &[u8]) -> Result<Buffered<'_>, serde_json::Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Buffered::Null);
    }
    if let Some(tree) = scan(bytes) {
        return Ok(tree);
    }
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let mut tree = Buffered::read(&mut json)?;
    json.end()?;
    // serde_json reads integers exactly but may read a long fraction one unit in the last place away from
    // `JSON.parse` (without its `float_roundtrip` feature): floats are read again from their text.
    if has_float(&tree) {
        let tokens = bridge_contract::js::number_tokens(bytes);
        exact_numbers(&mut tree, &mut tokens.iter());
    }
    Ok(tree)
}

/// JSON text read into a tree by a scanner that takes only what it reads exactly as serde_json does: UTF-8 text,
/// strings without escapes or control characters, finite numbers, at most 128 levels of nesting (serde_json's
/// limit); numbers are read from their text (as `JSON.parse` does). `None` for anything else, which serde_json
/// then reads (a string with escapes) or refuses with its message (malformed JSON). It saves serde_json's visitor
/// calls per token, most of the cost of reading a request into a tree.
fn scan(bytes: &[u8]) -> Option<Buffered<'_>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut scanner = Scanner { text, at: 0, depth: 0 };
    scanner.whitespace();
    let value = scanner.value()?;
    scanner.whitespace();
    (scanner.at == text.len()).then_some(value)
}

struct Scanner<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    fn literal(&mut self, word: &str, value: Buffered<'a>) -> Option<Buffered<'a>> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            value
        })
    }

    fn value(&mut self) -> Option<Buffered<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Buffered::Str),
            b'{' => self.nested(Self::object),
            b'[' => self.nested(Self::array),
            b't' => self.literal("true", Buffered::Bool(true)),
            b'f' => self.literal("false", Buffered::Bool(false)),
            b'n' => self.literal("null", Buffered::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Option<Buffered<'a>>) -> Option<Buffered<'a>> {
        self.depth += 1;
        if self.depth > 128 {
            return None;
        }
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn string(&mut self) -> Option<&'a str> {
        let start = self.at + 1;
        let rest = self.text.as_bytes().get(start..)?;
        let len = string_end(rest)?;
        self.at = start + len + 1;
        self.text.get(start..start + len)
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`, read as the nearest `f64` (finite).
    fn number(&mut self) -> Option<Buffered<'a>> {
        let start = self.at;
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        let n: f64 = self.text[start..self.at].parse().ok()?;
        n.is_finite().then_some(Buffered::F64(n))
    }

    fn array(&mut self) -> Option<Buffered<'a>> {
        let mut items = Vec::new();
        self.members(b']', |parser| {
            items.push(parser.value()?);
            Some(())
        })?;
        Some(Buffered::Seq(items))
    }

    fn object(&mut self) -> Option<Buffered<'a>> {
        let mut entries = Vec::with_capacity(8);
        self.members(b'}', |parser| {
            if parser.peek()? != b'"' {
                return None;
            }
            let key = parser.string()?;
            parser.whitespace();
            parser.eat(b':')?;
            parser.whitespace();
            entries.push((std::borrow::Cow::Borrowed(key), parser.value()?));
            Some(())
        })?;
        Some(Buffered::Map(entries))
    }

    /// The comma-separated members of an array or object, from its opening bracket (at `self.at`) to `close`:
    /// `member` reads each one (white space around it is skipped here).
    fn members(&mut self, close: u8, mut member: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.at += 1;
        self.whitespace();
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            self.whitespace();
            member(self)?;
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                next if next == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

/// The length of a string's contents: the index of its closing `"`, when no escape or control character comes
/// before it (else `None`: serde_json reads the string). The quote is found with `memchr`, the rest checked in
/// one pass the compiler vectorises.
fn string_end(bytes: &[u8]) -> Option<usize> {
    let end = memchr::memchr(b'"', bytes)?;
    let plain = !bytes[..end].iter().fold(false, |bad, b| bad | (*b < 0x20) | (*b == b'\\'));
    plain.then_some(end)
}

fn has_float(value: &Buffered<'_>) -> bool {
    match value {
        Buffered::F64(_) => true,
        Buffered::Seq(items) => items.iter().any(has_float),
        Buffered::Map(entries) => entries.iter().any(|(_, v)| has_float(v)),
        _ => false,
    }
}

/// Gives every number of `value`, in document order (the order of the tokens), the value of its text.
fn exact_numbers<'a>(value: &mut Buffered<'_>, tokens: &mut impl Iterator<Item = &'a &'a str>) {
    match value {
        Buffered::U64(_) | Buffered::I64(_) => {
            tokens.next();
        }
        Buffered::F64(n) => {
            if let Some(exact) = tokens.next().and_then(|text| text.parse::<f64>().ok()) {
                *n = exact;
            }
        }
        Buffered::Seq(items) => items.iter_mut().for_each(|item| exact_numbers(item, tokens)),
        Buffered::Map(entries) => entries.iter_mut().for_each(|(_, v)| exact_numbers(v, tokens)),
        _ => {}
    }
}

/// The tree as the engine's normalised JSON would hold it, checked on the way (see the module documentation), as a
/// deserializer. Its errors only say "ask the engine".
struct Normalised<'a, 'de> {
    shape: &'a Shape,
    value: &'a Buffered<'de>,
}

impl<'a, 'de> Normalised<'a, 'de> {
    fn drive<V: Visitor<'de>>(self, visitor: V, as_enum: bool) -> Result<V::Value, Error> {
        let value = self.value;
        match self.shape {
            Shape::String(rules) => {
                let s = value.as_str().ok_or_else(refused)?;
                let s = if rules.trim { trim_js(s) } else { s };
                if rules.min_length.is_some() || rules.max_length.is_some() {
                    let len = s.encode_utf16().count() as u64;
                    if rules.min_length.is_some_and(|m| len < m) || rules.max_length.is_some_and(|m| len > m) {
                        return Err(refused());
                    }
                }
                if rules.pattern.is_some_and(|pattern| !super::pattern::matches(pattern, s)) {
                    return Err(refused());
                }
                match value {
                    Buffered::Str(whole) => visitor.visit_borrowed_str(if rules.trim { trim_js(whole) } else { whole }),
                    _ => visitor.visit_str(s),
                }
            }
            // The type reads these with the `FromStr` the engine checks them with.
            Shape::Decimal | Shape::Date => match value {
                Buffered::Str(s) => visitor.visit_borrowed_str(s),
                other => visitor.visit_str(other.as_str().ok_or_else(refused)?),
            },
            Shape::Literals(values) => {
                let s = value.as_str().filter(|s| values.contains(s)).ok_or_else(refused)?;
                match (as_enum, value) {
                    (true, Buffered::Str(s)) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
                    (true, _) => visitor.visit_enum(StrDeserializer::new(s)),
                    (false, Buffered::Str(s)) => visitor.visit_borrowed_str(s),
                    (false, _) => visitor.visit_str(s),
                }
            }
            Shape::Number(rules) => number(rules, number_of(value).ok_or_else(refused)?, visitor),
            Shape::NumberFromString(rules) => {
                number(rules, value.as_str().and_then(parse_js_number).ok_or_else(refused)?, visitor)
            }
            Shape::Boolean => match value {
                Buffered::Bool(b) => visitor.visit_bool(*b),
                _ => Err(refused()),
            },
            Shape::Array(array) => {
                let Buffered::Seq(items) = value else { return Err(refused()) };
                let count = items.len() as u64;
                if array.min_items.is_some_and(|m| count < m) || array.max_items.is_some_and(|m| count > m) {
                    return Err(refused());
                }
                visitor.visit_seq(Items { items: items.iter(), shape: &array.items })
            }
            Shape::Struct(structure) => visitor.visit_map(Members::new(structure, value)?),
            Shape::Union(union) => {
                let Buffered::Map(entries) = value else { return Err(refused()) };
                let tag = entries
                    .iter()
                    .rev()
                    .find(|(k, _)| k == union.tag)
                    .and_then(|(_, t)| t.as_str())
                    .ok_or_else(refused)?;
                let (_, structure) = union.variants.iter().find(|(name, _)| *name == tag).ok_or_else(refused)?;
                visitor.visit_map(Members::new(structure, value)?)
            }
        }
    }
}

/// The cheap rules of a member (its JSON kind, a literal, a number's bounds, a union's tag), checked for every
/// member of an object before the type reads any of them: a body with such an issue goes to the engine without
/// the type building the members before it first. `drive` checks everything, these included.
fn plausible(shape: &Shape, value: &Buffered<'_>) -> bool {
    match shape {
        Shape::String(_) | Shape::Decimal | Shape::Date | Shape::NumberFromString(_) => value.as_str().is_some(),
        Shape::Literals(values) => value.as_str().is_some_and(|s| values.contains(&s)),
        Shape::Number(rules) => number_of(value).is_some_and(|n| acceptable(rules, n)),
        Shape::Boolean => matches!(value, Buffered::Bool(_)),
        Shape::Array(_) => matches!(value, Buffered::Seq(_)),
        Shape::Struct(_) => matches!(value, Buffered::Map(_)),
        Shape::Union(union) => match value {
            Buffered::Map(entries) => entries
                .iter()
                .rev()
                .find(|(k, _)| k == union.tag)
                .and_then(|(_, t)| t.as_str())
                .is_some_and(|tag| union.variants.iter().any(|(name, _)| *name == tag)),
            _ => false,
        },
    }
}

/// A number that passes `rules` as the engine checks them (bounds, safe integer, finite).
fn acceptable(rules: &NumberRules, n: f64) -> bool {
    let in_bounds = rules.minimum.is_none_or(|m| n >= m) && rules.maximum.is_none_or(|m| n <= m);
    let integer_ok = !rules.integer || (n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0);
    in_bounds && integer_ok && n.is_finite()
}

/// "Ask the engine": this value has an issue (or this path cannot tell).
fn refused() -> Error {
    Error::custom("refused by the fast path")
}

fn number_of(value: &Buffered<'_>) -> Option<f64> {
    match value {
        Buffered::U64(n) => Some(*n as f64),
        Buffered::I64(n) => Some(*n as f64),
        Buffered::F64(n) => Some(*n),
        _ => None,
    }
}

/// A number that passes `rules` as the engine checks them (bounds, safe integer, finite), handed over as the
/// engine writes it in its normalised JSON (integers up to 2^53 as integers).
fn number<'de, V: Visitor<'de>>(rules: &NumberRules, n: f64, visitor: V) -> Result<V::Value, Error> {
    if !acceptable(rules, n) {
        return Err(refused());
    }
    match engine::json_number(n) {
        serde_json::Value::Number(n) => serde::Deserializer::deserialize_any(n, visitor).map_err(de::Error::custom),
        _ => Err(refused()),
    }
}

impl<'a, 'de> Deserializer<'de> for Normalised<'a, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.drive(visitor, false)
    }

    /// A member of the normalised JSON is never `null` (no request schema is nullable: `null` fails its shape).
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.drive(visitor, true)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Items<'a, 'de> {
    items: std::slice::Iter<'a, Buffered<'de>>,
    shape: &'a Shape,
}

impl<'a, 'de> SeqAccess<'de> for Items<'a, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(value) => seed.deserialize(Normalised { shape: self.shape, value }).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// Most objects have at most this many members of their schema, and at most 255 members in all (others are read
/// with the engine).
const SLOTS: usize = 32;
const ABSENT: u8 = u8::MAX;

/// The members of an object in the normalised JSON: the schema's members that are present (their last value),
/// and those that are absent but have a `default`, in declaration order.
struct Members<'a, 'de> {
    structure: &'a StructShape,
    entries: &'a [(Key<'de>, Buffered<'de>)],
    /// For each member of the schema, the index in `entries` of its last occurrence ([`ABSENT`]: none).
    slots: [u8; SLOTS],
    next: usize,
    pending: Option<Pending<'a, 'de>>,
}

enum Pending<'a, 'de> {
    Member(&'a Shape, &'a Buffered<'de>),
    /// The engine inserts the default's JSON text as it is.
    Default(&'static str),
}

impl<'a, 'de> Members<'a, 'de> {
    /// Finds the schema's members in one pass over the object (clients usually send them in declaration order, so
    /// the next member is tried first); fails when a required member is absent or a member is not [`plausible`].
    fn new(structure: &'a StructShape, value: &'a Buffered<'de>) -> Result<Self, Error> {
        let Buffered::Map(entries) = value else { return Err(refused()) };
        let fields = structure.fields;
        if fields.len() > SLOTS || entries.len() >= usize::from(ABSENT) {
            return Err(refused());
        }
        let mut slots = [ABSENT; SLOTS];
        let mut hint = 0;
        for (i, (key, _)) in entries.iter().enumerate() {
            let key = key.as_bytes();
            let found = match fields.get(hint) {
                Some(field) if field.name.as_bytes() == key => Some(hint),
                _ => fields.iter().position(|f| f.name.as_bytes() == key),
            };
            if let Some(j) = found {
                slots[j] = i as u8;
                hint = j + 1;
            }
        }
        let sound = fields.iter().zip(&slots).all(|(field, slot)| match entries.get(usize::from(*slot)) {
            Some((_, member)) => plausible(&field.shape, member),
            None => !field.required,
        });
        if !sound {
            return Err(refused());
        }
        Ok(Self { structure, entries, slots, next: 0, pending: None })
    }
}

impl<'a, 'de> MapAccess<'de> for Members<'a, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        while let Some(field) = self.structure.fields.get(self.next) {
            let slot = usize::from(self.slots[self.next]);
            self.next += 1;
            self.pending = match (self.entries.get(slot), field.default) {
                (Some((_, member)), _) => Some(Pending::Member(&field.shape, member)),
                (None, Some(default)) => Some(Pending::Default(default)),
                (None, None) => continue,
            };
            return seed.deserialize(BorrowedStrDeserializer::new(field.name)).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.pending.take() {
            Some(Pending::Member(shape, value)) => seed.deserialize(Normalised { shape, value }),
            // A string default without escapes (`"false"`) as the string, which is what the engine's JSON holds.
            Some(Pending::Default(text)) => match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(plain) if !plain.contains(['"', '\\']) => seed.deserialize(DefaultString(plain)),
                _ => seed.deserialize(&mut serde_json::Deserializer::from_str(text)).map_err(de::Error::custom),
            },
            None => Err(refused()),
        }
    }
}

/// A string default, as a JSON string deserializes (an `Option` member gets `Some`).
struct DefaultString(&'static str);

impl<'de> Deserializer<'de> for DefaultString {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(BorrowedStrDeserializer::new(self.0))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_contract::js::JsValue;
    use proptest::prelude::*;
    use serde::Deserialize;

    fn as_js(tree: &Buffered<'_>) -> JsValue {
        JsValue::deserialize(tree.replay(true)).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

        /// What the scanner reads, serde_json reads too (with numbers as `JSON.parse` reads them), to the same
        /// value: JSON-like text of every kind of token, nesting, whitespace, escapes, bad numbers and bytes.
        #[test]
        fn the_scanner_reads_what_serde_json_reads(
            text in r#"[ \t\n\r]{0,2}(\{("[a-z\\\x01é]{0,3}"[ ]?:[ ]?(-?[0-9]{1,3}(\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?|"[a-z\\"u0-9\x7f€]{0,6}"|true|fals|null|\[[0-9, ]{0,6}\]|\{\}|1e400|-|00|01|\.5),?){0,4}\}|\[("[a-z]{0,2}"|[0-9.eE+-]{1,8}|\[\[\]\]|,){0,5}\])[ \n]{0,2}.?"#,
        ) {
            let bytes = text.as_bytes();
            let by_serde = {
                let mut json = serde_json::Deserializer::from_slice(bytes);
                Buffered::read(&mut json).and_then(|mut tree| {
                    json.end()?;
                    let tokens = bridge_contract::js::number_tokens(bytes);
                    exact_numbers(&mut tree, &mut tokens.iter());
                    Ok(tree)
                })
            };
            if let Some(scanned) = scan(bytes) {
                let by_serde = by_serde.map_err(|e| TestCaseError::fail(format!("serde_json refuses what the scanner read: {e}")))?;
                prop_assert_eq!(as_js(&scanned), as_js(&by_serde));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

        /// A string ends at its first `"`, unless an escape or a control character comes first.
        #[test]
        fn string_end_is_the_first_quote_of_a_plain_string(
            bytes in proptest::collection::vec(prop_oneof![8 => 0x20u8..0x7f, 1 => any::<u8>(), 1 => Just(b'"'), 1 => Just(b'\\')], 0..40),
        ) {
            let naive = bytes.iter().position(|b| *b == b'"' || *b == b'\\' || *b < 0x20).filter(|i| bytes[*i] == b'"');
            prop_assert_eq!(string_end(&bytes), naive);
        }
    }

    /// Plain request bodies are scanned (the point of the scanner), and bodies the scanner leaves alone still read.
    #[test]
    fn what_is_scanned() {
        assert!(
            scan(br#" {"a": [1, -2.5e3, "x", true, false, null, {}], "b": "\u00e9"} "#).is_none(),
            "escapes are left to serde_json"
        );
        assert!(scan(r#"{"a": [1, -2.5e3, "x", true, false, null, {}], "b": "é"}"#.as_bytes()).is_some());
        assert!(
            scan(b"[1e400]").is_none()
                && scan(b"[01]").is_none()
                && scan(b"[1.]").is_none()
                && scan(b"{\"a\":1,}").is_none()
        );
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(scan(deep.as_bytes()).is_none() && scan(&deep.as_bytes()[1..deep.len() - 1]).is_some());
        assert!(parse(br#"{"b": "\u00e9"}"#).is_ok());
    }
}
