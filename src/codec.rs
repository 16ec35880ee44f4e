//! Runtime helpers that the generated serde impls call (hand-written, small, and generic over every type).
//!
//! * [`required_nullable`], [`optional_nullable`]: members that may be `null`;
//! * [`union`], [`flattened`], [`by_kind`] and [`Body`]: the unions and the structs that flatten `allOf` members,
//!   which read an object whole before they know what to read from it (module [`buffer`]).

mod buffer;

pub use buffer::{by_kind, flattened, union, Body, Buffered, Error, Held, Key, Parts};

use serde::{Deserialize, Deserializer};

/// Deserializes a required member whose value may be `null`: absent is an error, `null` is `None`.
pub fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// Deserializes an optional member whose value may be `null`: absent is `None` (by `#[serde(default)]`),
/// `null` is `Some(None)`.
pub fn optional_nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

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
