//! The serde side of `types.rs`: the `#[serde(...)]` attributes of members, and the impls serde's derives
//! cannot give the contract: unions of objects (tag and presence unions alike: the object is read once
//! (`codec::union`), then `from_body` reads the variant the discriminant names), JSON-kind unions
//! (`codec::by_kind`) and structs that flatten `allOf` parts (`codec::flattened`).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::model::{Discriminant, Field, KindUnion, Shape, Struct, Union};
use crate::tokens::{ident, unsuffixed};

/// `#[serde(rename = "…", …)]` of a (non-flattened) member: optional members are skipped when `None`, and
/// `null` is told apart from absent where the schema allows both.
pub fn member_attributes(f: &Field) -> TokenStream {
    let attributes = member_attribute_list(f, true);
    quote!(#[serde(#(#attributes),*)])
}

fn member_attribute_list(f: &Field, serializes: bool) -> Vec<TokenStream> {
    let nullable = f.shape().is_some_and(Shape::is_nullable);
    let json = &f.json;
    let mut out = vec![quote!(rename = #json)];
    if !f.required {
        out.push(quote!(default));
    }
    match (f.required, nullable) {
        // Optional and nullable: absent is `None`, `null` is `Some(None)`.
        (false, true) => out.push(quote!(deserialize_with = "crate::codec::optional_nullable")),
        (true, true) => out.push(quote!(deserialize_with = "crate::codec::required_nullable")),
        _ => {}
    }
    if !f.required && serializes {
        out.push(quote!(skip_serializing_if = "Option::is_none"));
    }
    out
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

/// `Serialize` and `Deserialize` of a tag or presence union, and the `from_body` that reads the variant its
/// discriminant names from an object read whole (a union inside a flattened struct is read the same way).
pub fn union(u: &Union) -> TokenStream {
    let name = ident(&u.name);
    let json_name = &u.name;
    let serialize = serialize_each_variant(&name, u.variants.iter().map(|v| ident(&v.ident)));
    let (doc, select, out_of_range) = match &u.discriminant {
        Discriminant::Tag { default, .. } => {
            let default = match default {
                Some(i) => {
                    let i = unsuffixed(*i as u64);
                    quote!(Some(#i))
                }
                None => quote!(None),
            };
            (
                "Reads the variant its tag names from an object read whole.",
                quote!(body.tag(#json_name, Self::TAG_PROPERTY, Self::TAGS, #default)?),
                "tag index out of range",
            )
        }
        Discriminant::Presence => (
            "Reads the variant the member present names from an object read whole.",
            quote!(body.presence(#json_name, Self::MEMBERS)?),
            "member index out of range",
        ),
    };
    let doc = crate::tokens::doc_comment(doc);
    let arms = u.variants.iter().enumerate().map(|(i, v)| {
        let (i, variant) = (unsuffixed(i as u64), ident(&v.ident));
        let read = if v.reads_whole_object {
            let ty = ident(&v.ty);
            quote!(#ty::from_body(body))
        } else {
            quote!(body.read())
        };
        quote!(#i => #read.map(Self::#variant),)
    });
    quote! {
        #serialize
        impl<'de> Deserialize<'de> for #name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::codec::union(deserializer, #json_name, Self::from_body)
            }
        }
        impl #name {
            #doc
            pub(crate) fn from_body(body: &crate::codec::Body<'_, '_>) -> Result<Self, crate::codec::Error> {
                match #select {
                    #(#arms)*
                    _ => Err(crate::codec::Error::custom(#out_of_range)),
                }
            }
        }
    }
}

/// `Serialize` and `Deserialize` of a union told apart by JSON kind.
pub fn kind_union(k: &KindUnion) -> TokenStream {
    let name = ident(&k.name);
    let serialize = serialize_each_variant(&name, k.variants.iter().map(|v| ident(&v.ident)));
    let arms = k.variants.iter().map(|v| {
        let (kind, variant) = (&v.kind, ident(&v.ident));
        quote!(#kind => value.read().map(Self::#variant),)
    });
    let kinds = k.variants.iter().map(|v| &v.kind);
    let expected = format!("expected one of {{}} ({}), got a JSON {{other}}", k.name);
    quote! {
        #serialize
        impl<'de> Deserialize<'de> for #name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::codec::by_kind(deserializer, |value| match value.kind() {
                    #(#arms)*
                    other => Err(crate::codec::Error::custom(format_args!(#expected, [#(#kinds),*].join(", ")))),
                })
            }
        }
    }
}

/// `Deserialize` of a struct that flattens `allOf` members: the object is read whole (`codec::flattened`), then
/// its parts are read from it one after the other, each taking the members it knows: the struct's own members
/// (through a private derived struct), the flattened structs, then the flattened unions, which get the rest
/// (serde's `flatten` would hand them the same members, after buffering them once more).
pub fn flattened(s: &Struct) -> TokenStream {
    let name = ident(&s.name);
    let json_name = &s.name;
    let own: Vec<&Field> = s.fields.iter().filter(|f| f.part().is_none()).collect();
    let own_struct = (!own.is_empty()).then(|| {
        let fields = own.iter().map(|f| {
            let attributes = member_attribute_list(f, false);
            let (member, ty) = (ident(&f.ident), f.declared());
            quote!(#[serde(#(#attributes),*)] #member: #ty,)
        });
        quote!(#[derive(Deserialize)] struct Own { #(#fields)* })
    });
    let read_own = (!own.is_empty()).then(|| quote!(let own: Own = parts.rest().read()?;));
    // Structs first, then the parts that read the object whole (unions), which get what is left.
    let mut parts: Vec<&Field> = s.fields.iter().filter(|f| f.part().is_some()).collect();
    parts.sort_by_key(|f| f.part().is_some_and(|p| p.reads_whole_object));
    let reads = parts.iter().filter_map(|f| {
        let part = f.part()?;
        let (member, ty) = (ident(&f.ident), ident(&part.component));
        let read = if part.reads_whole_object {
            quote!(#ty::from_body(&parts.rest())?)
        } else {
            quote!(parts.rest().read()?)
        };
        Some(quote!(let #member: #ty = #read;))
    });
    let members = s.fields.iter().map(|f| {
        let member = ident(&f.ident);
        if f.part().is_some() {
            quote!(#member)
        } else {
            quote!(#member: own.#member)
        }
    });
    quote! {
        impl<'de> Deserialize<'de> for #name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::codec::flattened(deserializer, #json_name, Self::from_body)
            }
        }
        impl #name {
            /// Reads the parts from an object read whole: own members, flattened structs, flattened unions.
            pub(crate) fn from_body(body: &crate::codec::Body<'_, '_>) -> Result<Self, crate::codec::Error> {
                #own_struct
                let parts = body.parts();
                #read_own
                #(#reads)*
                Ok(Self { #(#members),* })
            }
        }
    }
}
