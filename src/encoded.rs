//! [`Encoded`]: a value of a contract type held as the JSON text it encodes to, for services that keep what they
//! serve as JSON (a store of events, a cache) and answer with it without decoding and re-encoding it.
//!
//! ```
//! use bridge_contract::{Encoded, DecimalString};
//!
//! let amount: DecimalString = "100.5".parse().unwrap();
//! let kept = Encoded::new(&amount).unwrap();              // encoded once, e.g. when stored
//! let text = kept.as_str().to_owned();                    // what a store keeps
//! let read = Encoded::<DecimalString>::from_stored(text);  // read back: not decoded
//! assert_eq!(read.as_str(), r#""100.5""#);
//! assert_eq!(read.decode().unwrap(), amount);             // decoded only when asked
//!
//! let list = Encoded::from_items([&read, &read]);           // a list of them, still not decoded
//! assert_eq!(list.as_str(), r#"["100.5","100.5"]"#);
//! assert_eq!(list.decode().unwrap(), vec![amount.clone(), amount]);
//! ```
//!
//! Objects whose members are lists of encoded values are put together by generated constructors
//! (`UserEventsPage::encode_with`), which write the other members with serde and copy the lists' text.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A `T` as its JSON text. Made by [`Encoded::new`] (which encodes a `T`), [`Encoded::from_stored`] (text an
/// earlier `Encoded::new` made, read back from storage) or a generated constructor; [`Encoded::decode`] gives
/// the `T` back.
pub struct Encoded<T> {
    json: String,
    of: PhantomData<fn() -> T>,
}

impl<T> Encoded<T> {
    /// Text that encodes a `T` exactly as [`Encoded::new`] (serde_json with this crate's types) writes it, kept
    /// by the caller since: a store's own column, a cache. It is not checked in release builds (that is the
    /// point: nothing is decoded); debug builds decode it and panic if it is not a `T`, so that a test catches
    /// a store handing back the wrong text.
    pub fn from_stored(json: String) -> Self
    where
        T: DeserializeOwned,
    {
        debug_assert!(
            serde_json::from_str::<T>(&json).is_ok(),
            "Encoded::from_stored: not a {}: {json}",
            std::any::type_name::<T>()
        );
        Self { json, of: PhantomData }
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.json
    }

    /// The JSON text, owned.
    pub fn into_string(self) -> String {
        self.json
    }

    /// Text made by this crate's code (a generated constructor), trusted without a check.
    pub(crate) fn from_generated(json: String) -> Self {
        Self { json, of: PhantomData }
    }
}

impl<T: Serialize> Encoded<T> {
    /// Encodes `value`.
    pub fn new(value: &T) -> Result<Self, serde_json::Error> {
        Ok(Self { json: serde_json::to_string(value)?, of: PhantomData })
    }
}

impl<T: DeserializeOwned> Encoded<T> {
    /// Decodes the text back into a `T`.
    pub fn decode(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.json)
    }
}

impl<T> Encoded<Vec<T>> {
    /// The list of `items`, in order: their texts copied between `[` and `]`, none decoded.
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a Encoded<T>>) -> Self
    where
        T: 'a,
    {
        let mut json = String::from("[");
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&item.json);
        }
        json.push(']');
        Self { json, of: PhantomData }
    }
}

impl<T> Clone for Encoded<T> {
    fn clone(&self) -> Self {
        Self { json: self.json.clone(), of: PhantomData }
    }
}

impl<T> PartialEq for Encoded<T> {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl<T> Eq for Encoded<T> {}

impl<T> fmt::Debug for Encoded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Encoded<{}>({})", std::any::type_name::<T>(), self.json)
    }
}

/// Writes one member of an object a generated constructor puts together: `"name":` and the member's JSON,
/// preceded by a comma unless it is the first member (`first` is updated).
pub(crate) fn write_member(out: &mut String, first: &mut bool, name: &str, json: &str) {
    if !std::mem::take(first) {
        out.push(',');
    }
    // Member names are the schema's: plain ASCII identifiers that need no escaping (the generator checks).
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
    out.push_str(json);
}
