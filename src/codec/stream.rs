//! The decoder over any serde deserializer: one copy per deserializer type, shared by every generated type. It
//! reads a value into its [`Place`] by the place's table, making the calls serde's derived impls make (the same
//! `deserialize_*` method with the same visitor expectations, members in the order they come, `duplicate field`,
//! `unknown field` for closed structs, then `missing field` for the first required member absent in declaration
//! order), so that a deserializer answers as it answered the derived impls, errors and their positions included.
//! Scalars are read by their own `Deserialize` impls. Unions and structs that flatten `allOf` parts read their
//! object whole ([`Buffered`]) and go on in [`super::tree`].

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, Expected, IgnoredAny, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde::Deserialize;

use super::buffer::{Buffered, Key};
use super::table::{Choice, Decode, Enum, MapPlace, Members, OptionPlace, Place, Record, Struct, VecPlace};
use super::tree;
use crate::{DateString, DecimalNumber, DecimalString};

/// `Deserialize` of every generated type: a blank value, read into.
pub fn deserialize<'de, D: Deserializer<'de>, T: Decode>(deserializer: D) -> Result<T, D::Error> {
    let mut value = T::blank();
    read(deserializer, value.place())?;
    Ok(value)
}

/// Reads one value from `deserializer` into `place`.
fn read<'de, D: Deserializer<'de>>(deserializer: D, place: Place<'_>) -> Result<(), D::Error> {
    match place {
        Place::String(p) => *p = String::deserialize(deserializer)?,
        Place::Bool(p) => *p = bool::deserialize(deserializer)?,
        Place::U64(p) => *p = u64::deserialize(deserializer)?,
        Place::I64(p) => *p = i64::deserialize(deserializer)?,
        Place::DecimalString(p) => *p = DecimalString::deserialize(deserializer)?,
        Place::DecimalNumber(p) => *p = DecimalNumber::deserialize(deserializer)?,
        Place::DateString(p) => *p = DateString::deserialize(deserializer)?,
        Place::Option(p) => deserializer.deserialize_option(OptionVisitor(p))?,
        Place::Vec(p) => deserializer.deserialize_seq(SeqVisitor(p))?,
        Place::Map(p) => deserializer.deserialize_map(MapVisitor(p))?,
        Place::Struct(table, record) => {
            deserializer.deserialize_struct(table.name, table.fields, StructVisitor { table, record })?
        }
        Place::Flattened(table, record) => {
            let human_readable = deserializer.is_human_readable();
            let entries = deserializer.deserialize_map(ObjectVisitor(table.name))?;
            tree::flattened(&entries, human_readable, table, record).map_err(de::Error::custom)?
        }
        Place::Enum(table, choice) => {
            deserializer.deserialize_enum(table.name, table.values, EnumVisitor { table, choice })?
        }
        Place::Union(table, variants) => {
            let human_readable = deserializer.is_human_readable();
            match Buffered::read_top(deserializer)? {
                Buffered::Map(entries) => {
                    tree::union(&entries, human_readable, table, variants).map_err(de::Error::custom)?
                }
                other => {
                    return Err(de::Error::custom(format_args!(
                        "expected an object ({}), got a JSON {}",
                        table.name,
                        other.kind()
                    )))
                }
            }
        }
        Place::Kind(table, variants) => {
            let human_readable = deserializer.is_human_readable();
            let value = Buffered::read(deserializer)?;
            tree::kind(&value, human_readable, table, variants).map_err(de::Error::custom)?
        }
        Place::Skip => {
            deserializer.deserialize_ignored_any(IgnoredAny)?;
        }
    }
    Ok(())
}

/// A place as a seed: reads the next element or member value into it.
struct Seed<'p>(Place<'p>);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        read(deserializer, self.0)
    }
}

/// `Option<T>` as serde reads it.
struct OptionVisitor<'p>(&'p mut dyn OptionPlace);

impl<'de> Visitor<'de> for OptionVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.none();
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.0.none();
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        read(deserializer, self.0.some())
    }
}

/// `Vec<T>` as serde reads it.
struct SeqVisitor<'p>(&'p mut dyn VecPlace);

impl<'de> Visitor<'de> for SeqVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.start(seq.size_hint().unwrap_or(0));
        while seq.next_element_seed(Seed(self.0.push()))?.is_some() {}
        self.0.pop();
        Ok(())
    }
}

/// `BTreeMap<String, T>` as serde reads it.
struct MapVisitor<'p>(&'p mut dyn MapPlace);

impl<'de> Visitor<'de> for MapVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.clear();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Seed(self.0.entry(key)))?;
        }
        Ok(())
    }
}

/// A struct as serde's derive reads it, from an object or an array.
struct StructVisitor<'p> {
    table: &'static Struct,
    record: &'p mut dyn Record,
}

impl<'de> Visitor<'de> for StructVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.table.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let table = self.table;
        let (mut seen, mut hint): (Members, usize) = (0, 0);
        while let Some(key) = map.next_key_seed(FieldSeed { table, hint })? {
            match key {
                Some(i) => {
                    if seen & (1 << i) != 0 {
                        return Err(de::Error::duplicate_field(table.fields[i]));
                    }
                    seen |= 1 << i;
                    hint = i + 1;
                    map.next_value_seed(Seed(table.member_place(i, self.record.member(i))))?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match table.first_missing(seen) {
            Some(name) => Err(de::Error::missing_field(name)),
            None => Ok(()),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let table = self.table;
        for i in 0..table.fields.len() {
            if seq.next_element_seed(Seed(table.member_place(i, self.record.member(i))))?.is_none() {
                if table.is_required(i) {
                    return Err(de::Error::invalid_length(i, &table.elements()));
                }
                // Absent: `None`, whatever `member_place` made of it.
                if let Place::Option(option) = self.record.member(i) {
                    option.none();
                }
            }
        }
        Ok(())
    }
}

/// What an index of a field or variant must be (`field index 0 <= i < 3`).
struct Index(&'static str, usize);

impl Expected for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} index 0 <= i < {}", self.0, self.1)
    }
}

/// A struct's member name: its number, or `None` for a member to ignore.
struct FieldSeed {
    table: &'static Struct,
    hint: usize,
}

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<usize>, E> {
        let n = self.table.fields.len();
        match usize::try_from(v) {
            Ok(i) if i < n => Ok(Some(i)),
            _ if self.table.refuses_unknown() => Err(E::invalid_value(Unexpected::Unsigned(v), &Index("field", n))),
            _ => Ok(None),
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        match self.table.find(v, self.hint) {
            Some(i) => Ok(Some(i)),
            None if self.table.refuses_unknown() => Err(E::unknown_field(v, self.table.fields)),
            None => Ok(None),
        }
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Option<usize>, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) if self.table.refuses_unknown() => {
                Err(E::unknown_field(&String::from_utf8_lossy(v), self.table.fields))
            }
            Err(_) => Ok(None),
        }
    }
}

/// A string enum as serde's derive reads it.
struct EnumVisitor<'p> {
    table: &'static Enum,
    choice: &'p mut dyn Choice,
}

impl<'de> Visitor<'de> for EnumVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "enum {}", self.table.name)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        let (i, variant) = data.variant_seed(VariantSeed(self.table))?;
        variant.unit_variant()?;
        self.choice.set(i);
        Ok(())
    }
}

/// A string enum's variant name: its number.
pub(super) struct VariantSeed(pub(super) &'static Enum);

impl<'de> DeserializeSeed<'de> for VariantSeed {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for VariantSeed {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("variant identifier")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        let n = self.0.values.len();
        match usize::try_from(v) {
            Ok(i) if i < n => Ok(i),
            _ => Err(E::invalid_value(Unexpected::Unsigned(v), &Index("variant", n))),
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0.find(v).ok_or_else(|| E::unknown_variant(v, self.0.values))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<usize, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::unknown_variant(&String::from_utf8_lossy(v), self.0.values)),
        }
    }
}

/// The members of an object, read whole for a struct that flattens `allOf` parts (`struct <name>` in messages, as
/// serde's derive with `flatten` expects).
struct ObjectVisitor(&'static str);

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Vec<(Key<'de>, Buffered<'de>)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.0)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        Buffered::top_entries(&mut map)
    }
}
