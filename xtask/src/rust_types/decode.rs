//! The decoding side of `types.rs`: for every type, the table the one runtime decoder reads
//! (`src/codec/table.rs`) and the places it writes to, and a `Deserialize` impl that hands the type to it
//! (`crate::codec::deserialize`). What is generated is data (names, required and nullable members as bit sets,
//! closed or not, tags) and two small functions per type: `blank` (a value to decode into) and `member` /
//! `variant` / `set` (where member, variant or value number `i` goes). No visitor is generated: the code that
//! reads JSON is the same for every type.
//!
//! Numbering: a struct's members in declaration order, then its flattened parts in the order they are read (the
//! structs, then the unions, which get the members no one before them took); a union's variants and an enum's
//! values in the schema's order.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::model::{Discriminant, Field, KindUnion, StringEnum, Struct, Union};
use crate::tokens::{ident, unsuffixed};

/// `Deserialize` through the table-driven decoder.
fn deserialize(name: &Ident) -> TokenStream {
    quote! {
        impl<'de> Deserialize<'de> for #name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::codec::deserialize(deserializer)
            }
        }
    }
}

/// `.setter(&[0, 2, 5])` of a struct's table, or nothing for no member.
fn members_set(setter: &str, members: impl Iterator<Item = usize>) -> Option<TokenStream> {
    let members: Vec<_> = members.map(|i| unsuffixed(i as u64)).collect();
    let setter = ident(setter);
    (!members.is_empty()).then(|| quote!(.#setter(&[#(#members),*])))
}

/// The table, places and `Deserialize` of a struct (with or without flattened parts).
pub fn structure(s: &Struct) -> TokenStream {
    let name = ident(&s.name);
    let json_name = &s.name;
    let own: Vec<&Field> = s.fields.iter().filter(|f| f.part().is_none()).collect();
    // Structs first, then the parts that read the object whole (unions), which get what is left.
    let mut parts: Vec<&Field> = s.fields.iter().filter(|f| f.part().is_some()).collect();
    parts.sort_by_key(|f| f.part().is_some_and(|p| p.reads_whole_object));
    let fields = own.iter().map(|f| &f.json);
    let required = members_set("required", own.iter().enumerate().filter(|(_, f)| f.required).map(|(i, _)| i));
    let nullable = |f: &Field| f.shape().is_some_and(|shape| shape.is_nullable());
    let some_when_present = members_set(
        "some_when_present",
        own.iter().enumerate().filter(|(_, f)| !f.required && nullable(f)).map(|(i, _)| i),
    );
    let closed = s.deny_unknown_fields.then(|| quote!(.closed()));
    let part_count = (!parts.is_empty()).then(|| {
        let n = unsuffixed(parts.len() as u64);
        quote!(.parts(#n))
    });
    let place = if parts.is_empty() { quote!(Struct) } else { quote!(Flattened) };
    let blank = s.fields.iter().map(|f| {
        let member = ident(&f.ident);
        quote!(#member: Decode::blank())
    });
    let members = own.iter().chain(&parts).enumerate().map(|(i, f)| {
        let (i, member) = (unsuffixed(i as u64), ident(&f.ident));
        quote!(#i => self.#member.place(),)
    });
    let deserialize = deserialize(&name);
    quote! {
        impl crate::codec::Decode for #name {
            fn blank() -> Self {
                Self { #(#blank),* }
            }
            #[inline]
            fn place(&mut self) -> crate::codec::Place<'_> {
                const TABLE: crate::codec::Struct = crate::codec::Struct::new(#json_name, &[#(#fields),*])
                    #required #some_when_present #closed #part_count;
                crate::codec::Place::#place(&TABLE, self)
            }
        }
        impl crate::codec::Record for #name {
            #[inline]
            fn member(&mut self, i: usize) -> crate::codec::Place<'_> {
                match i {
                    #(#members)*
                    _ => crate::codec::Place::Skip,
                }
            }
        }
        #deserialize
    }
}

/// The table and `Deserialize` of a string enum (a tag's one-value enum too); its places are
/// `crate::codec::Enumeration`'s, the same for every enum.
pub fn string_enum(e: &StringEnum) -> TokenStream {
    let name = ident(&e.name);
    let json_name = &e.name;
    let values = &e.values;
    let deserialize = deserialize(&name);
    quote! {
        impl crate::codec::Enumeration for #name {
            const VALUES: &'static [Self] = Self::ALL;
            const TABLE: crate::codec::Enum = crate::codec::Enum { name: #json_name, values: &[#(#values),*] };
        }
        #deserialize
    }
}

/// `Variants` of a union (of either kind): variant `i` made blank, and its place.
fn variants(name: &Ident, variant_idents: &[Ident]) -> TokenStream {
    let first = &variant_idents[0];
    let places = variant_idents.iter().map(|v| quote!(Self::#v(value) => value.place(),));
    let make = match variant_idents {
        [_] => quote!(let _ = i;),
        _ => {
            let others = variant_idents.iter().enumerate().skip(1).map(|(i, v)| {
                let i = unsuffixed(i as u64);
                quote!(#i => Self::#v(Decode::blank()),)
            });
            let numbers = variant_idents.iter().enumerate().map(|(i, v)| {
                let i = unsuffixed(i as u64);
                quote!(Self::#v(_) => #i,)
            });
            quote! {
                let current: usize = match self { #(#numbers)* };
                if current != i {
                    *self = match i { #(#others)* _ => Self::#first(Decode::blank()) };
                }
            }
        }
    };
    quote! {
        impl crate::codec::Variants for #name {
            #[inline]
            fn variant(&mut self, i: usize) -> crate::codec::Place<'_> {
                #make
                match self {
                    #(#places)*
                }
            }
        }
    }
}

/// The table, places and `Deserialize` of a tag or presence union.
pub fn union(u: &Union) -> TokenStream {
    let name = ident(&u.name);
    let json_name = &u.name;
    let idents: Vec<Ident> = u.variants.iter().map(|v| ident(&v.ident)).collect();
    let first = &idents[0];
    let discriminant = match &u.discriminant {
        Discriminant::Tag { default, .. } => {
            let default = match default {
                Some(i) => {
                    let i = unsuffixed(*i as u64);
                    quote!(Some(#i))
                }
                None => quote!(None),
            };
            quote! {
                crate::codec::Discriminant::Tag {
                    property: #name::TAG_PROPERTY,
                    tags: #name::TAGS,
                    default: #default,
                }
            }
        }
        Discriminant::Presence => quote!(crate::codec::Discriminant::Presence { members: #name::MEMBERS }),
    };
    let variants = variants(&name, &idents);
    let deserialize = deserialize(&name);
    quote! {
        impl crate::codec::Decode for #name {
            fn blank() -> Self {
                Self::#first(Decode::blank())
            }
            #[inline]
            fn place(&mut self) -> crate::codec::Place<'_> {
                const TABLE: crate::codec::Union = crate::codec::Union {
                    name: #json_name,
                    discriminant: #discriminant,
                };
                crate::codec::Place::Union(&TABLE, self)
            }
        }
        #variants
        #deserialize
    }
}

/// The table, places and `Deserialize` of a union told apart by JSON kind.
pub fn kind_union(k: &KindUnion) -> TokenStream {
    let name = ident(&k.name);
    let json_name = &k.name;
    let idents: Vec<Ident> = k.variants.iter().map(|v| ident(&v.ident)).collect();
    let first = &idents[0];
    let kinds = k.variants.iter().map(|v| &v.kind);
    let variants = variants(&name, &idents);
    let deserialize = deserialize(&name);
    quote! {
        impl crate::codec::Decode for #name {
            fn blank() -> Self {
                Self::#first(Decode::blank())
            }
            #[inline]
            fn place(&mut self) -> crate::codec::Place<'_> {
                const TABLE: crate::codec::Kinds = crate::codec::Kinds { name: #json_name, kinds: &[#(#kinds),*] };
                crate::codec::Place::Kind(&TABLE, self)
            }
        }
        #variants
        #deserialize
    }
}
