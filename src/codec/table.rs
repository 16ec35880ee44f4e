//! What the generated types hand to the one decoder: a static table per type (its JSON name, its members' names
//! and which of them are required, closed or not, its variants' tags), and a [`Place`] per member, where the
//! decoder writes the member's value.
//!
//! A type is decoded by writing into a value of it made [`Decode::blank`] (strings empty, numbers zero, options
//! `None`, the first variant of an enum or union): the decoder asks the value for the place of each member it
//! reads ([`Record::member`]) and writes there, and the table says which members had to be present. A blank
//! member that the table requires and the input lacks is an error (`missing field`), so a blank value never
//! reaches the caller. The code that runs is the same for every type ([`super::stream`] from any serde
//! deserializer, [`super::tree`] from an object read whole); what is generated per type is its table, `blank`
//! and `member` (one line per member each) and a one-line `Deserialize` impl.

use std::cell::Cell;

use std::collections::BTreeMap;

use crate::{DateString, DecimalNumber, DecimalString};

/// A type the table-driven decoder reads: every generated type, the scalars, and `Option`, `Vec` and string-keyed
/// `BTreeMap`s of them.
pub trait Decode {
    /// A placeholder to decode into (never handed to a caller: see the module documentation).
    fn blank() -> Self;
    /// Where the decoder writes this value, and how it reads it.
    fn place(&mut self) -> Place<'_>;
}

/// Where a decoded value goes, by what it is: a scalar (written whole), or a value of a generated type or a
/// container, with the table that says how to read it.
pub enum Place<'a> {
    String(&'a mut String),
    Bool(&'a mut bool),
    U64(&'a mut u64),
    I64(&'a mut i64),
    DecimalString(&'a mut DecimalString),
    DecimalNumber(&'a mut DecimalNumber),
    DateString(&'a mut DateString),
    Option(&'a mut dyn OptionPlace),
    Vec(&'a mut dyn VecPlace),
    Map(&'a mut dyn MapPlace),
    /// An object of members ([`Struct::parts`] is 0).
    Struct(&'static Struct, &'a mut dyn Record),
    /// An object of members and flattened `allOf` parts, read whole first.
    Flattened(&'static Struct, &'a mut dyn Record),
    /// A string enum (or the one-value enum of a tag).
    Enum(&'static Enum, &'a mut dyn Choice),
    /// A union of objects told apart by a tag or by which member is present, read whole first.
    Union(&'static Union, &'a mut dyn Variants),
    /// A union told apart by JSON kind.
    Kind(&'static Kinds, &'a mut dyn Variants),
    /// Nowhere: the value is read and dropped (what [`Record::member`] gives out of range).
    Skip,
}

/// The table of a struct: what serde's derive would know of it. Written as
/// `Struct::new("QuoteFees", &["fee", …]).required(&[0, 1]).closed()` (every part `const`).
#[derive(Debug)]
pub struct Struct {
    /// The component's name (`struct QuoteFees` in messages).
    pub name: &'static str,
    /// The members' JSON names, in declaration order (serde's `FIELDS`; members are numbered in this order).
    pub fields: &'static [&'static str],
    /// Member `i` is required (absent is `missing field`).
    pub required: Members,
    /// Member `i` is optional and nullable (`Option<Option<T>>`): present is `Some`, so that `null` is
    /// `Some(None)`. Other optional members are `Option<T>`, where `null` is `None`.
    pub some_when_present: Members,
    /// `additionalProperties: false`: an unknown member is `unknown field`.
    pub closed: bool,
    /// The flattened `allOf` parts, numbered after the members in the order they are read: the structs first,
    /// then the unions, which read the members no one before them took.
    pub parts: usize,
    /// Bit `n % 64` for each member name of `n` bytes: a name of another length is none of the members, found
    /// without comparing it (an object split between parts has many members of the others).
    lengths: u64,
}

impl Struct {
    /// The table of a struct named `name` with these members, all optional, not closed, without parts.
    pub const fn new(name: &'static str, fields: &'static [&'static str]) -> Self {
        let mut lengths = 0;
        let mut i = 0;
        while i < fields.len() {
            lengths |= 1 << (fields[i].len() % 64);
            i += 1;
        }
        Self { name, fields, required: 0, some_when_present: 0, closed: false, parts: 0, lengths }
    }

    /// The members numbered so are required.
    pub const fn required(self, members: &[usize]) -> Self {
        Self { required: bits(members), ..self }
    }

    /// The members numbered so are optional and nullable (see [`Struct::some_when_present`]).
    pub const fn some_when_present(self, members: &[usize]) -> Self {
        Self { some_when_present: bits(members), ..self }
    }

    /// `additionalProperties: false`.
    pub const fn closed(self) -> Self {
        Self { closed: true, ..self }
    }

    /// `parts` flattened parts follow the members.
    pub const fn parts(self, parts: usize) -> Self {
        Self { parts, ..self }
    }

    /// Whether a member this table does not have is refused (`unknown field`) here and now: when the table is
    /// closed, unless the decode runs inside [`ignoring_unknown_members`].
    pub(crate) fn refuses_unknown(&self) -> bool {
        self.closed && !IGNORE_UNKNOWN.with(Cell::get)
    }
}

thread_local! {
    /// Set while a decode runs inside [`ignoring_unknown_members`] on this thread.
    static IGNORE_UNKNOWN: Cell<bool> = const { Cell::new(false) };
}

/// Runs `decode` with every closed table open: a member a type does not have is skipped instead of refused, at
/// every depth; everything else (required members, types, tags, repeated members) is checked as always. For
/// what a newer producer may send that this build does not know yet, as webhook events are read
/// (`crate::webhook::Event`: production may add members to an event, and a receiver must acknowledge it). A
/// decode is synchronous, so the setting is this thread's for its length; it is restored after, also on a panic.
pub fn ignoring_unknown_members<T>(decode: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IGNORE_UNKNOWN.with(|ignore| ignore.set(self.0));
        }
    }
    let _restore = Restore(IGNORE_UNKNOWN.with(|ignore| ignore.replace(true)));
    decode()
}

/// The table of a string enum.
#[derive(Debug)]
pub struct Enum {
    /// The component's name (`enum Speed` in messages).
    pub name: &'static str,
    /// The values, in the schema's order (serde's `VARIANTS`; variants are numbered in this order).
    pub values: &'static [&'static str],
}

/// The table of a union of objects.
#[derive(Debug)]
pub struct Union {
    pub name: &'static str,
    pub discriminant: Discriminant,
}

/// What tells a union's variants apart (variants are numbered in the schema's order).
#[derive(Debug)]
pub enum Discriminant {
    /// The value of `property`, wherever it is in the object (its last occurrence); `default` is the variant taken
    /// when it is absent.
    Tag { property: &'static str, tags: &'static [&'static str], default: Option<usize> },
    /// Which one of `members` the object has.
    Presence { members: &'static [&'static str] },
}

/// The table of a union told apart by JSON kind.
#[derive(Debug)]
pub struct Kinds {
    pub name: &'static str,
    /// The JSON kind of each variant, as the schema's `type` names it (`string`, `number`, `object`).
    pub kinds: &'static [&'static str],
}

/// The members of a struct, by number ([`Struct::fields`], then the parts).
pub trait Record {
    /// Where member `i` goes (out of range: nowhere, which the decoder never asks for).
    fn member(&mut self, i: usize) -> Place<'_>;
}

/// A string enum's value, by number ([`Enum::values`]).
pub trait Choice {
    fn set(&mut self, i: usize);
}

/// A union's variants, by number.
pub trait Variants {
    /// Makes the value variant `i` and gives its place: a blank variant `i`, unless the value already is variant
    /// `i` (a blank one, or, when an object is read a second time without its repeated members, the same
    /// variant read from the same members, which are all written again).
    fn variant(&mut self, i: usize) -> Place<'_>;
}

/// An `Option` being decoded.
pub trait OptionPlace {
    fn none(&mut self);
    /// Makes the value `Some(blank)` and gives its place.
    fn some(&mut self) -> Place<'_>;
}

/// A `Vec` being decoded.
pub trait VecPlace {
    /// Empties the vector and makes room for `hint` items (bounded as serde bounds it, 1 MiB).
    fn start(&mut self, hint: usize);
    /// Appends a blank item and gives its place.
    fn push(&mut self) -> Place<'_>;
    /// Removes the last item (the blank pushed for an item that did not come).
    fn pop(&mut self);
}

/// A `BTreeMap<String, _>` being decoded.
pub trait MapPlace {
    fn clear(&mut self);
    /// Sets `key` to a blank value (replacing an earlier one, as serde's `insert` does) and gives its place.
    fn entry(&mut self, key: String) -> Place<'_>;
}

/// A set of a struct's members: bit `i` for member `i` (a struct has at most 64 members and parts; the generator
/// refuses more).
pub type Members = u64;

/// The set of members numbered so.
const fn bits(members: &[usize]) -> Members {
    let mut set = 0;
    let mut i = 0;
    while i < members.len() {
        set |= 1 << members[i];
        i += 1;
    }
    set
}

/// `a == b`, inline: member names are short, and comparing them was a call to `memcmp` per member.
#[inline]
pub(super) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let word = |s: &[u8], at: usize| s.get(at..at + 8).map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    // The last eight bytes (overlapping the ones compared when `n` is not a multiple of 8).
    word(a, n - 8) == word(b, n - 8)
}

impl Struct {
    /// The number of the member named `key`, trying `hint` first (members usually come in declaration order).
    #[inline]
    pub fn find(&self, key: &str, hint: usize) -> Option<usize> {
        if self.lengths & (1 << (key.len() % 64)) == 0 {
            return None;
        }
        if self.fields.get(hint).is_some_and(|f| same(f, key)) {
            return Some(hint);
        }
        self.fields.iter().position(|f| same(f, key))
    }

    /// The first required member (in declaration order) not in `seen`.
    #[inline]
    pub fn first_missing(&self, seen: Members) -> Option<&'static str> {
        let missing = self.required & !seen;
        (missing != 0).then(|| self.fields[missing.trailing_zeros() as usize])
    }

    /// Member `i` is read as `Some(_)` when present (see [`Struct::some_when_present`]).
    #[inline]
    pub fn is_some_when_present(&self, i: usize) -> bool {
        self.some_when_present & (1 << i) != 0
    }

    /// Member `i` is required.
    #[inline]
    pub fn is_required(&self, i: usize) -> bool {
        self.required & (1 << i) != 0
    }

    /// The place of member `i`, as this table reads it: `Some(_)` of a present optional nullable member.
    #[inline]
    pub fn member_place<'p>(&self, i: usize, place: Place<'p>) -> Place<'p> {
        match place {
            Place::Option(option) if self.is_some_when_present(i) => option.some(),
            place => place,
        }
    }

    /// What this struct read from an array expects (`struct QuoteFees with 13 elements`).
    pub fn elements(&self) -> impl serde::de::Expected + '_ {
        Elements(self)
    }
}

struct Elements<'t>(&'t Struct);

impl serde::de::Expected for Elements<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.fields.len() {
            1 => write!(f, "struct {} with 1 element", self.0.name),
            n => write!(f, "struct {} with {n} elements", self.0.name),
        }
    }
}

impl Enum {
    /// The number of the value `s`.
    #[inline]
    pub fn find(&self, s: &str) -> Option<usize> {
        self.values.iter().position(|v| same(v, s))
    }
}

/// A string enum (the generated enums, tags included): its values and its table; its [`Decode`] and [`Choice`]
/// are these, the same for every enum.
pub trait Enumeration: Copy + 'static {
    /// Every value, in the schema's order (non-empty).
    const VALUES: &'static [Self];
    const TABLE: Enum;
}

impl<T: Enumeration> Decode for T {
    #[inline]
    fn blank() -> Self {
        T::VALUES[0]
    }
    #[inline]
    fn place(&mut self) -> Place<'_> {
        Place::Enum(&T::TABLE, self)
    }
}

impl<T: Enumeration> Choice for T {
    #[inline]
    fn set(&mut self, i: usize) {
        if let Some(value) = T::VALUES.get(i) {
            *self = *value;
        }
    }
}

macro_rules! scalar {
    ($($ty:ty => $variant:ident = $blank:expr;)*) => {$(
        impl Decode for $ty {
            #[inline]
            fn blank() -> Self {
                $blank
            }
            #[inline]
            fn place(&mut self) -> Place<'_> {
                Place::$variant(self)
            }
        }
    )*};
}

scalar! {
    String => String = String::new();
    bool => Bool = false;
    u64 => U64 = 0;
    i64 => I64 = 0;
    DecimalString => DecimalString = DecimalString::PLACEHOLDER;
    DecimalNumber => DecimalNumber = DecimalNumber::ZERO;
    DateString => DateString = DateString::MIN;
}

impl<T: Decode> Decode for Option<T> {
    #[inline]
    fn blank() -> Self {
        None
    }
    #[inline]
    fn place(&mut self) -> Place<'_> {
        Place::Option(self)
    }
}

impl<T: Decode> OptionPlace for Option<T> {
    fn none(&mut self) {
        *self = None;
    }
    fn some(&mut self) -> Place<'_> {
        self.insert(T::blank()).place()
    }
}

impl<T: Decode> Decode for Vec<T> {
    #[inline]
    fn blank() -> Self {
        Vec::new()
    }
    #[inline]
    fn place(&mut self) -> Place<'_> {
        Place::Vec(self)
    }
}

impl<T: Decode> VecPlace for Vec<T> {
    fn start(&mut self, hint: usize) {
        self.clear();
        // serde's `size_hint::cautious`: at most 1 MiB reserved on a length the input claims.
        let most = 1024 * 1024 / std::mem::size_of::<T>().max(1);
        self.reserve(hint.min(most));
    }
    fn push(&mut self) -> Place<'_> {
        self.push(T::blank());
        match self.last_mut() {
            Some(item) => item.place(),
            None => Place::Skip,
        }
    }
    fn pop(&mut self) {
        Vec::pop(self);
    }
}

impl<T: Decode> Decode for BTreeMap<String, T> {
    #[inline]
    fn blank() -> Self {
        BTreeMap::new()
    }
    #[inline]
    fn place(&mut self) -> Place<'_> {
        Place::Map(self)
    }
}

impl<T: Decode> MapPlace for BTreeMap<String, T> {
    fn clear(&mut self) {
        BTreeMap::clear(self);
    }
    fn entry(&mut self, key: String) -> Place<'_> {
        use std::collections::btree_map::Entry;
        match self.entry(key) {
            Entry::Vacant(vacant) => vacant.insert(T::blank()).place(),
            Entry::Occupied(occupied) => {
                let value = occupied.into_mut();
                *value = T::blank();
                value.place()
            }
        }
    }
}
