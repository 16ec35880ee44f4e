//! The serde side of `types.rs` that is serde's derive: the `#[serde(...)]` attributes of members (which the
//! derived `Serialize` and schemars read), and the `Serialize` of unions. Decoding is not derived: see [`super::decode`].

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::model::Field;

/// `#[serde(rename = "…", …)]` of a (non-flattened) member: optional members are skipped when `None` (and
/// `default`, which tells schemars they are optional).
pub fn member_attributes(f: &Field) -> TokenStream {
    let json = &f.json;
    let optional = (!f.required).then(|| quote!(, default, skip_serializing_if = "Option::is_none"));
    quote!(#[serde(rename = #json #optional)])
}

/// `Serialize` of an enum whose every variant holds one value: the value, as its own `Serialize` writes it.
pub fn serialize_each_variant(name: &Ident, variants: impl Iterator<Item = Ident>) -> TokenStream {
    quote! {
        impl Serialize for #name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self { #(Self::#variants(v) => v.serialize(serializer),)* }
            }
        }
    }
}
