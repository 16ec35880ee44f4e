//! The decoder over an object read whole ([`Buffered`]), for the unions (their tag may come anywhere) and the
//! structs that flatten `allOf` parts (each part takes the members it knows, the unions get the rest). It reads
//! the same tables as [`super::stream`] and answers as serde's derived impls answered when they read the object
//! from a `serde_json::Value` (which is what [`Buffered::replay`] stands for): the same errors, checked in the same
//! order. Scalars that are not what the common case expects are read by their own `Deserialize` impls from the
//! replayed value, so their messages are theirs.
//!
//! None of this is generic: it is compiled once, in this crate, for every type and every deserializer.

use std::fmt;

use serde::de::{self, Unexpected};
use serde::Deserialize;

use super::buffer::{build_from, Body, Buffered, Error, Key};
use super::table::{Discriminant, Kinds, Members, Place, Record, Struct, Union, Variants};
use crate::{DateString, DecimalNumber, DecimalString};

/// A union's object: its variant, by its discriminant, read from the members (see [`build_from`] for repeated
/// members).
pub(super) fn union(
    entries: &[(Key<'_>, Buffered<'_>)],
    human_readable: bool,
    table: &'static Union,
    variants: &mut dyn Variants,
) -> Result<(), Error> {
    build_from(entries, human_readable, |body| union_body(body, table, variants))
}

/// A flattening struct's object: its members, then its parts.
pub(super) fn flattened(
    entries: &[(Key<'_>, Buffered<'_>)],
    human_readable: bool,
    table: &'static Struct,
    record: &mut dyn Record,
) -> Result<(), Error> {
    build_from(entries, human_readable, |body| flattened_body(body, table, record))
}

/// A union told apart by JSON kind: the variant of the value's kind. Should that fail while some object repeats a
/// member, it is tried again with each repeated member reduced to its last value (as [`build_from`] does).
pub(super) fn kind(
    value: &Buffered<'_>,
    human_readable: bool,
    table: &'static Kinds,
    variants: &mut dyn Variants,
) -> Result<(), Error> {
    match kind_variant(value, human_readable, table, variants) {
        Err(_) if value.has_repeats() => kind_variant(&value.without_repeats(), human_readable, table, variants),
        result => result,
    }
}

fn kind_variant(
    value: &Buffered<'_>,
    human_readable: bool,
    table: &'static Kinds,
    variants: &mut dyn Variants,
) -> Result<(), Error> {
    let kind = value.kind();
    match table.kinds.iter().position(|k| *k == kind) {
        Some(i) => read(value, human_readable, variants.variant(i)),
        None => Err(Error::custom(format_args!(
            "expected one of {} ({}), got a JSON {kind}",
            table.kinds.join(", "),
            table.name
        ))),
    }
}

fn union_body(body: &Body<'_, '_>, table: &'static Union, variants: &mut dyn Variants) -> Result<(), Error> {
    let i = match table.discriminant {
        Discriminant::Tag { property, tags, default } => body.tag(table.name, property, tags, default)?,
        Discriminant::Presence { members } => body.presence(table.name, members)?,
    };
    object_part(body, variants.variant(i))
}

fn flattened_body(body: &Body<'_, '_>, table: &'static Struct, record: &mut dyn Record) -> Result<(), Error> {
    let parts = body.parts();
    if !table.fields.is_empty() {
        members(&parts.rest(), table, record)?;
    }
    for j in 0..table.parts {
        object_part(&parts.rest(), record.member(table.fields.len() + j))?;
    }
    Ok(())
}

/// A union's variant or a flattened part, read from the members not taken yet.
fn object_part(body: &Body<'_, '_>, place: Place<'_>) -> Result<(), Error> {
    match place {
        Place::Struct(table, record) => members(body, table, record),
        Place::Flattened(table, record) => flattened_body(body, table, record),
        Place::Union(table, variants) => union_body(body, table, variants),
        _ => Err(Error::custom("a union's variant or a flattened part is not an object")),
    }
}

/// The members of a struct, from the members of `body` not taken yet (each one read is taken): as serde's derive
/// reads them, in the order they come.
fn members(body: &Body<'_, '_>, table: &'static Struct, record: &mut dyn Record) -> Result<(), Error> {
    let (mut seen, mut hint): (Members, usize) = (0, 0);
    for (i, (key, value)) in body.entries.iter().enumerate() {
        if body.is_taken(i) {
            continue;
        }
        match table.find(key, hint) {
            Some(m) => {
                if seen & (1 << m) != 0 {
                    return Err(de::Error::duplicate_field(table.fields[m]));
                }
                seen |= 1 << m;
                hint = m + 1;
                body.take(i);
                read_member(value, body.human_readable, table.member_place(m, record.member(m)))?;
            }
            None if table.refuses_unknown() => return Err(de::Error::unknown_field(key, table.fields)),
            None => {}
        }
    }
    match table.first_missing(seen) {
        Some(name) => Err(de::Error::missing_field(name)),
        None => Ok(()),
    }
}

/// A struct read from an array: its members in declaration order.
fn elements(
    items: &[Buffered<'_>],
    human_readable: bool,
    table: &'static Struct,
    record: &mut dyn Record,
) -> Result<(), Error> {
    let mut rest = items.iter();
    for m in 0..table.fields.len() {
        match rest.next() {
            Some(item) => read(item, human_readable, table.member_place(m, record.member(m)))?,
            None if table.is_required(m) => return Err(de::Error::invalid_length(m, &table.elements())),
            None => {}
        }
    }
    match rest.len() {
        0 => Ok(()),
        _ => Err(de::Error::invalid_length(items.len(), &"fewer elements in array")),
    }
}

/// Reads `value` into `place`: the scalars of the common case here, in the members' loop, the rest by [`read`].
#[inline(always)]
fn read_member(value: &Buffered<'_>, human_readable: bool, place: Place<'_>) -> Result<(), Error> {
    match (place, value) {
        (Place::String(p), Buffered::Str(s)) => *p = (*s).to_owned(),
        (Place::DecimalString(p), Buffered::Str(s)) if human_readable => *p = s.parse().map_err(Error::custom)?,
        (Place::DecimalNumber(p), Buffered::F64(x)) if human_readable => {
            *p = DecimalNumber::try_from(*x).map_err(Error::custom)?
        }
        (Place::DecimalNumber(p), Buffered::U64(n)) if human_readable => {
            *p = DecimalNumber::try_from(*n as f64).map_err(Error::custom)?
        }
        (Place::DateString(p), Buffered::Str(s)) if human_readable => *p = s.parse().map_err(Error::custom)?,
        (place, value) => read(value, human_readable, place)?,
    }
    Ok(())
}

/// Reads `value` into `place`.
fn read(value: &Buffered<'_>, human_readable: bool, place: Place<'_>) -> Result<(), Error> {
    let replay = || value.replay(human_readable);
    match place {
        Place::String(p) => match value {
            Buffered::Str(s) => *p = (*s).to_owned(),
            Buffered::String(s) => p.clone_from(s),
            _ => *p = String::deserialize(replay())?,
        },
        Place::Bool(p) => *p = bool::deserialize(replay())?,
        Place::U64(p) => *p = u64::deserialize(replay())?,
        Place::I64(p) => *p = i64::deserialize(replay())?,
        Place::DecimalString(p) => match value {
            Buffered::Str(s) if human_readable => *p = s.parse().map_err(Error::custom)?,
            _ => *p = DecimalString::deserialize(replay())?,
        },
        Place::DecimalNumber(p) => match *value {
            Buffered::F64(x) if human_readable => *p = DecimalNumber::try_from(x).map_err(Error::custom)?,
            Buffered::U64(n) if human_readable => *p = DecimalNumber::try_from(n as f64).map_err(Error::custom)?,
            _ => *p = DecimalNumber::deserialize(replay())?,
        },
        Place::DateString(p) => match value {
            Buffered::Str(s) if human_readable => *p = s.parse().map_err(Error::custom)?,
            _ => *p = DateString::deserialize(replay())?,
        },
        Place::Option(option) => match value {
            Buffered::Null => option.none(),
            _ => read(value, human_readable, option.some())?,
        },
        Place::Vec(vec) => match value {
            Buffered::Seq(items) => {
                vec.start(items.len());
                for item in items {
                    read(item, human_readable, vec.push())?;
                }
            }
            _ => return Err(invalid_type(value, &"a sequence")),
        },
        Place::Map(map) => match value {
            Buffered::Map(entries) => {
                map.clear();
                for (key, member) in entries {
                    read(member, human_readable, map.entry(key.as_ref().to_owned()))?;
                }
            }
            _ => return Err(invalid_type(value, &"a map")),
        },
        Place::Struct(table, record) => match value {
            Buffered::Map(entries) => members(&Body::whole(entries, human_readable), table, record)?,
            Buffered::Seq(items) => elements(items, human_readable, table, record)?,
            _ => return Err(invalid_type(value, &StructNamed(table.name))),
        },
        Place::Flattened(table, record) => match value {
            Buffered::Map(entries) => flattened(entries, human_readable, table, record)?,
            _ => return Err(invalid_type(value, &StructNamed(table.name))),
        },
        Place::Enum(table, choice) => {
            let (name, unit) = match value {
                Buffered::Str(s) => (*s, None),
                Buffered::String(s) => (s.as_str(), None),
                Buffered::Map(entries) => match entries.as_slice() {
                    [(variant, unit)] => (variant.as_ref(), Some(unit)),
                    _ => return Err(de::Error::invalid_value(Unexpected::Map, &"map with a single key")),
                },
                _ => return Err(invalid_type(value, &"string or map")),
            };
            let i = table.find(name).ok_or_else(|| de::Error::unknown_variant(name, table.values))?;
            if let Some(unit) = unit {
                <()>::deserialize(unit.replay(human_readable))?;
            }
            choice.set(i);
        }
        Place::Union(table, variants) => match value {
            Buffered::Map(entries) => union(entries, human_readable, table, variants)?,
            other => {
                return Err(Error::custom(format_args!(
                    "expected an object ({}), got a JSON {}",
                    table.name,
                    other.kind()
                )))
            }
        },
        Place::Kind(table, variants) => kind(value, human_readable, table, variants)?,
        Place::Skip => {}
    }
    Ok(())
}

/// `invalid type: <value>, expected <what>`, as a `Value`'s deserializer words it.
#[cold]
#[inline(never)]
fn invalid_type(value: &Buffered<'_>, expected: &dyn de::Expected) -> Error {
    de::Error::invalid_type(value.unexpected(), expected)
}

/// `struct <name>`, what serde's derive expects of a struct.
struct StructNamed(&'static str);

impl de::Expected for StructNamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.0)
    }
}
