//! `arbitrary.rs` (feature `proptest`): an `Arbitrary` impl for every generated type whose strategy makes only
//! schema-valid values: strings within their lengths or matching their pattern, numbers within their bounds,
//! optional members absent or present, and every variant of a union.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::model::{FieldValue, Item, Model, Shape, Struct};
use crate::tokens::{float, ident, number, string_spelt, unsuffixed};

/// JavaScript's largest safe integer: generated integers stay within it unless the schema is narrower.
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

pub fn arbitrary_file(model: &Model) -> TokenStream {
    let impls = model.items.iter().filter_map(|item| {
        let (name, strategy) = match item {
            Item::Alias { .. } => return None,
            Item::Struct(s) => (&s.name, structure(s)),
            Item::Enum(e) => {
                let name = ident(&e.name);
                (&e.name, quote!(proptest::sample::select(#name::ALL).boxed()))
            }
            Item::Union(u) => {
                let name = ident(&u.name);
                let arms = u.variants.iter().map(|v| {
                    let (ty, variant) = (ident(&v.ty), ident(&v.ident));
                    quote!(any::<#ty>().prop_map(#name::#variant).boxed())
                });
                (&u.name, quote!(proptest::strategy::Union::new(vec![#(#arms),*]).boxed()))
            }
            Item::KindUnion(k) => {
                let name = ident(&k.name);
                let arms = k.variants.iter().map(|v| {
                    let (strategy, variant) = (strategy(&v.shape), ident(&v.ident));
                    quote!((#strategy).prop_map(#name::#variant).boxed())
                });
                (&k.name, quote!(proptest::strategy::Union::new(vec![#(#arms),*]).boxed()))
            }
        };
        let name = ident(name);
        Some(quote! {
            impl Arbitrary for #name {
                type Parameters = ();
                type Strategy = BoxedStrategy<Self>;
                fn arbitrary_with(_: ()) -> Self::Strategy { #strategy }
            }
        })
    });
    quote! {
        use proptest::prelude::*;
        use crate::types::*;
        #(#impls)*
    }
}

/// A struct from one strategy per member: tuples of at most eight strategies (proptest's limit), nested, mapped
/// into the struct.
fn structure(s: &Struct) -> TokenStream {
    let name = ident(&s.name);
    if s.fields.is_empty() {
        return quote!(Just(#name {}).boxed());
    }
    let strategies: Vec<TokenStream> = s
        .fields
        .iter()
        .map(|f| match &f.value {
            FieldValue::Flatten(part) => {
                let part = ident(&part.component);
                quote!(any::<#part>())
            }
            FieldValue::Member(shape) if f.required => strategy(shape),
            FieldValue::Member(shape) => {
                let strategy = strategy(shape);
                quote!(proptest::option::of(#strategy))
            }
        })
        .collect();
    let names: Vec<_> = s.fields.iter().map(|f| ident(&f.ident)).collect();
    let strategy_chunks = strategies.chunks(8).map(|chunk| quote!((#(#chunk,)*)));
    let name_chunks = names.chunks(8).map(|chunk| quote!((#(#chunk,)*)));
    quote! {
        (#(#strategy_chunks,)*).prop_map(|(#(#name_chunks,)*)| #name { #(#names),* }).boxed()
    }
}

/// The strategy of values of one shape.
fn strategy(shape: &Shape) -> TokenStream {
    match shape {
        Shape::Named(ty) => {
            let ty = crate::tokens::path(ty);
            quote!(any::<#ty>())
        }
        Shape::Tag(ty) => {
            let ty = ident(ty);
            quote!(Just(#ty::default()))
        }
        Shape::String { pattern: Some(pattern), .. } => {
            let body = pattern.trim_start_matches('^').trim_end_matches('$');
            quote!(proptest::string::string_regex(#body).expect("pattern compiles"))
        }
        Shape::String { min_length, max_length, pattern: None } => {
            // Printable BMP characters, so that a length is the same in chars and in UTF-16 units; written as
            // escapes, so that the generated file stays ASCII.
            let (lo, hi) = (min_length.unwrap_or(0), max_length.unwrap_or(min_length.unwrap_or(0) + 24));
            string_spelt(&format!(r#""[ -~\u{{a0}}-\u{{d7ff}}\u{{e000}}-\u{{fffd}}]{{{lo},{hi}}}""#))
                .into_token_stream()
        }
        Shape::Number { minimum: None, maximum: None } => quote!(any::<crate::DecimalNumber>()),
        Shape::Number { minimum, maximum } => {
            let lo = float(minimum.unwrap_or(-1e15), "f64");
            let hi = float(maximum.unwrap_or(1e15), "f64");
            quote!((#lo..=#hi).prop_map(|x| crate::DecimalNumber::try_from(x).expect("finite")))
        }
        Shape::Integer { minimum, maximum } => {
            let hi = grouped(maximum.map_or(MAX_SAFE_INTEGER, |h| (h as i64).min(MAX_SAFE_INTEGER)));
            match minimum {
                Some(lo) if *lo >= 0.0 => {
                    let (lo, hi) = (number(&format!("{}u64", *lo as u64)), number(&format!("{hi}u64")));
                    quote!(#lo..=#hi)
                }
                _ => {
                    let (lo, hi) = (number(&format!("-{}i64", grouped(MAX_SAFE_INTEGER))), number(&format!("{hi}i64")));
                    quote!(#lo..=#hi)
                }
            }
        }
        Shape::Boolean => quote!(any::<bool>()),
        Shape::Array { items, min_items, max_items } => {
            let item = strategy(items);
            let lo = min_items.unwrap_or(0);
            let hi = max_items.unwrap_or(lo + 3).min(lo + 6);
            let (lo, hi) = (unsuffixed(lo), unsuffixed(hi));
            quote!(proptest::collection::vec(#item, #lo..=#hi))
        }
        Shape::Map(values) => {
            let value = strategy(values);
            quote!(proptest::collection::btree_map("[a-zA-Z0-9_]{1,8}", #value, 0..3))
        }
        Shape::Nullable(inner) => {
            let inner = strategy(inner);
            quote!(proptest::option::of(#inner))
        }
    }
}

/// An integer with `_` between groups of three digits (`9_007_199_254_740_991`).
fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}
