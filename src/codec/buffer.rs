//! A JSON value held while a union's tag is looked for, and read into the chosen variant.
//!
//! The contract's unions are told apart by a member that may come anywhere in the object (the bridge records and
//! events write their tag last), so a union's object is read whole before its variant is known. It is held as a
//! [`Buffered`] tree: strings are borrowed from the input whenever the deserializer lends them (serde_json does,
//! for strings without escapes), numbers are kept as read, objects are their members in order. Nothing is copied
//! that the typed value does not keep anyway: reading the chosen variant from it (`super::tree`) is a walk over
//! the tree, without parsing anything again.
//!
//! Reading from the tree answers as serde_json's `Value` deserializer did (what the unions read their variants
//! from before; [`Replay`] is that deserializer over a tree): the same errors, so a variant fails exactly as it
//! did. The one difference a `Value` would hide, members repeated in one object, is made up for where the object
//! was read (see [`Buffered::without_repeats`]): the last value of a repeated member wins, as in a `Value`.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};

use super::table::same;

/// A member name.
pub type Key<'de> = Cow<'de, str>;

/// A JSON value read whole, strings borrowed from the input where possible.
#[derive(Debug, Clone)]
pub enum Buffered<'de> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(&'de str),
    String(String),
    Seq(Vec<Buffered<'de>>),
    Map(Vec<(Key<'de>, Buffered<'de>)>),
}

/// The error of reading a typed value from a [`Buffered`] one: a message, turned into the caller's
/// deserializer's error where the value was read (`D::Error::custom`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// An error with this message.
    pub fn custom(msg: impl fmt::Display) -> Self {
        Self(msg.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    #[cold]
    #[inline(never)]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

impl<'de> Buffered<'de> {
    /// Reads one value from `deserializer`.
    pub fn read<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BufferVisitor { capacity: NESTED_MEMBERS })
    }

    /// Reads one value from `deserializer`, expected to be a union's object: room is made for as many members as
    /// the contract's records have, so that reading one does not grow the list twice.
    pub(super) fn read_top<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BufferVisitor { capacity: TOP_MEMBERS })
    }

    /// The members of an object a flattening struct reads whole (with room as [`Buffered::read_top`] makes).
    pub(super) fn top_entries<A: MapAccess<'de>>(map: &mut A) -> Result<Vec<(Key<'de>, Buffered<'de>)>, A::Error> {
        entries(map, TOP_MEMBERS)
    }

    /// The JSON kind, as the schema's `type` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "boolean",
            Self::U64(_) | Self::I64(_) | Self::F64(_) => "number",
            Self::Str(_) | Self::String(_) => "string",
            Self::Seq(_) => "array",
            Self::Map(_) => "object",
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as serde_json's `Value` (for messages that show a value as serde_json writes it).
    pub fn to_json(&self) -> serde_json::Value {
        serde::Deserialize::deserialize(self.replay(true)).unwrap_or(serde_json::Value::Null)
    }

    /// A deserializer over this value, by reference.
    pub fn replay<'a>(&'a self, human_readable: bool) -> Replay<'a, 'de> {
        Replay { value: self, human_readable }
    }

    pub(super) fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Self::Null => Unexpected::Unit,
            Self::Bool(b) => Unexpected::Bool(*b),
            Self::U64(n) => Unexpected::Unsigned(*n),
            Self::I64(n) => Unexpected::Signed(*n),
            Self::F64(n) => Unexpected::Float(*n),
            Self::Str(s) => Unexpected::Str(s),
            Self::String(s) => Unexpected::Str(s),
            Self::Seq(_) => Unexpected::Seq,
            Self::Map(_) => Unexpected::Map,
        }
    }

    /// `true` when some object in this value repeats a member.
    pub fn has_repeats(&self) -> bool {
        match self {
            Self::Seq(items) => items.iter().any(Self::has_repeats),
            Self::Map(entries) => has_repeats(entries),
            _ => false,
        }
    }

    /// The value with every repeated member reduced to its last occurrence (what a `serde_json::Value` holds).
    pub fn without_repeats(&self) -> Self {
        match self {
            Self::Seq(items) => Self::Seq(items.iter().map(Self::without_repeats).collect()),
            Self::Map(entries) => Self::Map(without_repeats(entries)),
            other => other.clone(),
        }
    }
}

/// Reads a [`Buffered`] value.
struct BufferVisitor {
    /// Room for members made when an object is read (its number of members is not known before).
    capacity: usize,
}

/// Room made for the members of an object that a union or a flattening struct reads (records have about 40).
const TOP_MEMBERS: usize = 48;
/// Room made for the members of an object inside one (most have fewer than 16).
const NESTED_MEMBERS: usize = 16;

impl<'de> Visitor<'de> for BufferVisitor {
    type Value = Buffered<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Buffered::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(if v < 0 { Buffered::I64(v) } else { Buffered::U64(v as u64) })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Buffered::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Buffered::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Buffered::String(v.to_owned()))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Buffered::Str(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Buffered::String(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Buffered::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Buffered::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Buffered::read(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Buffered::read(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(Seed)? {
            items.push(item);
        }
        Ok(Buffered::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        Ok(Buffered::Map(entries(&mut map, self.capacity)?))
    }
}

/// The members of an object, in order.
fn entries<'de, A: MapAccess<'de>>(map: &mut A, capacity: usize) -> Result<Vec<(Key<'de>, Buffered<'de>)>, A::Error> {
    let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(capacity).min(4096));
    while let Some(key) = map.next_key_seed(KeySeed)? {
        entries.push((key, map.next_value_seed(Seed)?));
    }
    Ok(entries)
}

struct Seed;

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Buffered<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Buffered::read(d)
    }
}

/// A member name, borrowed when the deserializer lends it.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A deserializer over a [`Buffered`] value, by reference (so that it can be read again), as serde_json's `Value`
/// deserializer reads a `Value`.
pub struct Replay<'a, 'de> {
    value: &'a Buffered<'de>,
    human_readable: bool,
}

impl<'a, 'de> Replay<'a, 'de> {
    fn value(&self) -> &'a Buffered<'de> {
        self.value
    }

    #[cold]
    #[inline(never)]
    fn invalid_type(&self, expected: &dyn de::Expected) -> Error {
        de::Error::invalid_type(self.value.unexpected(), expected)
    }

    fn visit_seq<V: Visitor<'de>>(&self, items: &'a [Buffered<'de>], visitor: V) -> Result<V::Value, Error> {
        let mut seq = SeqReplay { items: items.iter(), human_readable: self.human_readable };
        let value = visitor.visit_seq(&mut seq)?;
        if seq.items.len() == 0 {
            Ok(value)
        } else {
            Err(de::Error::invalid_length(items.len(), &"fewer elements in array"))
        }
    }

    fn visit_map<V: Visitor<'de>>(
        &self,
        entries: &'a [(Key<'de>, Buffered<'de>)],
        visitor: V,
    ) -> Result<V::Value, Error> {
        Body { entries, taken: None, human_readable: self.human_readable }.visit(visitor)
    }
}

macro_rules! as_any {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.deserialize_any(visitor)
        })*
    };
}

impl<'a, 'de> Deserializer<'de> for Replay<'a, 'de> {
    type Error = Error;

    #[inline(never)]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Null => visitor.visit_unit(),
            Buffered::Bool(v) => visitor.visit_bool(*v),
            Buffered::U64(v) => visitor.visit_u64(*v),
            Buffered::I64(v) => visitor.visit_i64(*v),
            Buffered::F64(v) => visitor.visit_f64(*v),
            Buffered::Str(v) => visitor.visit_borrowed_str(v),
            Buffered::String(v) => visitor.visit_str(v),
            Buffered::Seq(items) => self.visit_seq(items, visitor),
            Buffered::Map(entries) => self.visit_map(entries, visitor),
        }
    }

    as_any!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64);

    #[inline(never)]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    #[inline(never)]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let human_readable = self.human_readable;
        match self.value() {
            Buffered::Str(s) => visitor.visit_enum(EnumReplay { name: Name::Lent(s), value: None, human_readable }),
            Buffered::String(s) => visitor.visit_enum(EnumReplay { name: Name::Held(s), value: None, human_readable }),
            Buffered::Map(entries) => match entries.as_slice() {
                [(variant, value)] => {
                    visitor.visit_enum(EnumReplay { name: Name::of_key(variant), value: Some(value), human_readable })
                }
                _ => Err(de::Error::invalid_value(Unexpected::Map, &"map with a single key")),
            },
            _ => Err(self.invalid_type(&"string or map")),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    #[inline(never)]
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Bool(v) => visitor.visit_bool(*v),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    #[inline(never)]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Str(v) => visitor.visit_borrowed_str(v),
            Buffered::String(v) => visitor.visit_str(v),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Str(v) => visitor.visit_borrowed_str(v),
            Buffered::String(v) => visitor.visit_str(v),
            Buffered::Seq(items) => self.visit_seq(items, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    #[inline(never)]
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Null => visitor.visit_unit(),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    #[inline(never)]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Seq(items) => self.visit_seq(items, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    #[inline(never)]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Map(entries) => self.visit_map(entries, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value() {
            Buffered::Seq(items) => self.visit_seq(items, visitor),
            Buffered::Map(entries) => self.visit_map(entries, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        self.human_readable
    }
}

struct SeqReplay<'a, 'de> {
    items: std::slice::Iter<'a, Buffered<'de>>,
    human_readable: bool,
}

impl<'a, 'de> SeqAccess<'de> for SeqReplay<'a, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(value) => seed.deserialize(value.replay(self.human_readable)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An enum read from a string (unit variant) or a single-member object (variant with a value).
struct EnumReplay<'a, 'de> {
    name: Name<'a, 'de>,
    value: Option<&'a Buffered<'de>>,
    human_readable: bool,
}

impl<'a, 'de> de::EnumAccess<'de> for EnumReplay<'a, 'de> {
    type Error = Error;
    type Variant = VariantReplay<'a, 'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant), Error> {
        let variant = seed.deserialize(self.name)?;
        Ok((variant, VariantReplay { value: self.value, human_readable: self.human_readable }))
    }
}

struct VariantReplay<'a, 'de> {
    value: Option<&'a Buffered<'de>>,
    human_readable: bool,
}

impl<'a, 'de> de::VariantAccess<'de> for VariantReplay<'a, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            Some(value) => serde::Deserialize::deserialize(value.replay(self.human_readable)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(value) => seed.deserialize(value.replay(self.human_readable)),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"newtype variant")),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(value @ Buffered::Seq(_)) => value.replay(self.human_readable).deserialize_seq(visitor),
            Some(other) => Err(de::Error::invalid_type(other.unexpected(), &"tuple variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(value @ Buffered::Map(_)) => value.replay(self.human_readable).deserialize_map(visitor),
            Some(other) => Err(de::Error::invalid_type(other.unexpected(), &"struct variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"struct variant")),
        }
    }
}

/// A member name or variant name, as a deserializer: lent to the visitor when it was lent to us.
#[derive(Clone, Copy)]
enum Name<'a, 'de> {
    Lent(&'de str),
    Held(&'a str),
}

impl<'a, 'de> Name<'a, 'de> {
    fn of_key(key: &'a Key<'de>) -> Self {
        match key {
            Cow::Borrowed(s) => Self::Lent(s),
            Cow::Owned(s) => Self::Held(s),
        }
    }
}

impl<'a, 'de> Deserializer<'de> for Name<'a, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Self::Lent(s) => visitor.visit_borrowed_str(s),
            Self::Held(s) => visitor.visit_str(s),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// The members of an object read whole (or those of them that the parts read before have not taken, see
/// [`Parts`]), from which a union picks its variant and reads it.
pub struct Body<'a, 'de> {
    pub(super) entries: &'a [(Key<'de>, Buffered<'de>)],
    /// Members taken by the parts read before are skipped; reading one marks it taken.
    taken: Option<&'a [Cell<bool>]>,
    pub(super) human_readable: bool,
}

impl<'a, 'de> Body<'a, 'de> {
    /// All the members of an object.
    pub(super) fn whole(entries: &'a [(Key<'de>, Buffered<'de>)], human_readable: bool) -> Self {
        Self { entries, taken: None, human_readable }
    }

    fn visit<V: Visitor<'de>>(&self, visitor: V) -> Result<V::Value, Error> {
        let mut map = MapReplay { body: self, at: 0, value: None };
        let value = visitor.visit_map(&mut map)?;
        if map.next_index().is_none() {
            Ok(value)
        } else {
            Err(de::Error::invalid_length(self.entries.len(), &"fewer elements in map"))
        }
    }

    /// Member `i` was taken by a part read before.
    #[inline]
    pub(super) fn is_taken(&self, i: usize) -> bool {
        self.taken.is_some_and(|taken| taken[i].get())
    }

    /// Marks member `i` taken (by the part being read), when the members are split between parts.
    #[inline]
    pub(super) fn take(&self, i: usize) {
        if let Some(taken) = self.taken {
            taken[i].set(true);
        }
    }

    /// The index in `tags` of the value of the member `property` (its last occurrence, as in a `Value`), or
    /// `default` when it is absent. Errors name the union, the property and the bad tag, and list the tags.
    pub fn tag(&self, union: &str, property: &str, tags: &[&str], default: Option<usize>) -> Result<usize, Error> {
        let expected = || tags.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
        let found = (0..self.entries.len()).rev().find(|i| !self.is_taken(*i) && same(&self.entries[*i].0, property));
        let custom = |message: String| Error(message);
        match found.map(|i| &self.entries[i].1) {
            None => default
                .ok_or_else(|| custom(format!("missing `{property}` of {union}; expected one of {}", expected()))),
            Some(value) => match value.as_str() {
                Some(tag) => tags.iter().position(|t| *t == tag).ok_or_else(|| {
                    custom(format!("unknown `{property}` {tag:?} of {union}; expected one of {}", expected()))
                }),
                None => Err(custom(format!(
                    "`{property}` of {union} must be a string, got {}; expected one of {}",
                    value.to_json(),
                    expected()
                ))),
            },
        }
    }

    /// The variant of a union told apart by which member is present (`x-presence-discriminator`): the index of the
    /// one member of `members` that the object has. None of them, or more than one, is an error naming them.
    pub fn presence(&self, union: &str, members: &[&str]) -> Result<usize, Error> {
        let expected = || members.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(" or ");
        let has = |member: &str| (0..self.entries.len()).any(|i| !self.is_taken(i) && same(&self.entries[i].0, member));
        let mut present = members.iter().enumerate().filter(|(_, m)| has(m));
        match (present.next(), present.next()) {
            (Some((index, _)), None) => Ok(index),
            (None, _) => Err(Error(format!("{union} has neither {}; one of them tells its shape", expected()))),
            (Some(_), Some(_)) => {
                Err(Error(format!("{union} has both {}; exactly one of them tells its shape", expected())))
            }
        }
    }

    /// Splits the members between parts read one after the other (the `allOf` members of a struct that
    /// flattens them): each part reads the members the ones before it did not take.
    pub fn parts(&self) -> Parts<'a, 'de> {
        let taken = (0..self.entries.len()).map(|i| Cell::new(self.is_taken(i))).collect();
        Parts { entries: self.entries, taken, human_readable: self.human_readable }
    }
}

/// See [`Body::parts`].
pub struct Parts<'a, 'de> {
    entries: &'a [(Key<'de>, Buffered<'de>)],
    taken: Vec<Cell<bool>>,
    human_readable: bool,
}

impl<'a, 'de> Parts<'a, 'de> {
    /// The members not taken yet. Reading a struct from it takes the members the struct reads and leaves those it
    /// ignores.
    pub fn rest(&self) -> Body<'_, 'de> {
        Body { entries: self.entries, taken: Some(&self.taken), human_readable: self.human_readable }
    }
}

struct MapReplay<'b, 'a, 'de> {
    body: &'b Body<'a, 'de>,
    at: usize,
    value: Option<usize>,
}

impl<'b, 'a, 'de> MapReplay<'b, 'a, 'de> {
    fn next_index(&mut self) -> Option<usize> {
        while self.at < self.body.entries.len() {
            let i = self.at;
            self.at += 1;
            if !self.body.is_taken(i) {
                return Some(i);
            }
        }
        None
    }
}

impl<'b, 'a, 'de> MapAccess<'de> for MapReplay<'b, 'a, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        match self.next_index() {
            Some(i) => {
                self.value = Some(i);
                seed.deserialize(Name::of_key(&self.body.entries[i].0)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let i = self.value.take().ok_or_else(|| <Error as de::Error>::custom("value is missing"))?;
        seed.deserialize(self.body.entries[i].1.replay(self.body.human_readable))
    }
}

/// Reads an object whole, then `build` reads the typed value from its members; should that fail while some
/// object repeats a member, it is tried again with each repeated member reduced to its last value (what a
/// `serde_json::Value` holds: the variant then succeeds or fails exactly as it did from one).
pub(super) fn build_from<'de, T>(
    entries: &[(Key<'de>, Buffered<'de>)],
    human_readable: bool,
    mut build: impl FnMut(&Body<'_, 'de>) -> Result<T, Error>,
) -> Result<T, Error> {
    let first = build(&Body { entries, taken: None, human_readable });
    match first {
        Err(_) if has_repeats(entries) => {
            build(&Body { entries: &without_repeats(entries), taken: None, human_readable })
        }
        result => result,
    }
}

fn has_repeats(entries: &[(Key<'_>, Buffered<'_>)]) -> bool {
    entries.iter().enumerate().any(|(i, (k, _))| entries[i + 1..].iter().any(|(other, _)| other == k))
        || entries.iter().any(|(_, v)| v.has_repeats())
}

fn without_repeats<'de>(entries: &[(Key<'de>, Buffered<'de>)]) -> Vec<(Key<'de>, Buffered<'de>)> {
    entries
        .iter()
        .enumerate()
        .filter(|(i, (k, _))| !entries[i + 1..].iter().any(|(other, _)| other == k))
        .map(|(_, (k, v))| (k.clone(), v.without_repeats()))
        .collect()
}
