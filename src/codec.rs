//! The decoder the generated types share, and the runtime helpers of their impls (hand-written, small, and
//! generic over every type).
//!
//! Every generated type's `Deserialize` is [`deserialize`]: the type gives a static table ([`Struct`], [`Enum`],
//! [`Union`], [`Kinds`]: member names, which are required, closed or not, tags) and the places its members are
//! written to ([`Decode`], [`Place`]); one decoder reads them all:
//!
//! * `stream`: from any serde deserializer, as serde's derived impls read (one copy per deserializer type);
//! * `tree`: from an object read whole ([`Buffered`], module `buffer`), for the unions, whose tag may come
//!   anywhere, and the structs that flatten `allOf` parts (not generic: compiled once, here).

mod buffer;
mod stream;
mod table;
mod tree;

pub use buffer::{Buffered, Error, Key, Replay};
pub use stream::deserialize;
pub use table::ignoring_unknown_members;
pub use table::{
    Choice, Decode, Discriminant, Enum, Enumeration, Kinds, MapPlace, Members, OptionPlace, Place, Record, Struct,
    Union, Variants, VecPlace,
};

/// JSON Schema of a required member that may be `null` (`{anyOf: [T, null]}`), for schemars: unlike
/// `Option<T>`, it does not make the member optional.
#[cfg(feature = "schemars")]
pub struct Nullable<T>(std::marker::PhantomData<T>);

#[cfg(feature = "schemars")]
impl<T: schemars::JsonSchema> schemars::JsonSchema for Nullable<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let inner = generator.subschema_for::<T>();
        schemars::json_schema!({ "anyOf": [inner, { "type": "null" }] })
    }
}
