//! Small builders of Rust tokens that every generator uses: doc attributes from the schema's descriptions,
//! identifiers and paths from its names, and literals spelt the way the generated files spell them. A leaf: it
//! knows nothing of the schema.

use std::fmt;
use std::str::FromStr;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote, ToTokens};

/// One `#[doc = " line"]` per line of `text` (prettyplease prints each as `/// line`).
pub fn doc_comment(text: &str) -> TokenStream {
    let lines = text.trim_end().lines().map(|line| if line.is_empty() { String::new() } else { format!(" {line}") });
    quote!(#(#[doc = #lines])*)
}

/// An identifier; `r#type` and the like become raw identifiers.
pub fn ident(name: &str) -> Ident {
    format_ident!("{}", name)
}

/// A path such as `crate::DecimalNumber`, `::bridge_contract::operations::GetKey` or `Vec` (no generics).
pub fn path(path: &str) -> TokenStream {
    let leading = path.starts_with("::").then(|| quote!(::));
    let mut segments = path.trim_start_matches("::").split("::").map(ident);
    let first = segments.next();
    quote!(#leading #first #(::#segments)*)
}

/// An integer without a suffix (`0`, not `0usize`): a match arm's index, a status, a count.
pub fn unsuffixed(n: u64) -> Literal {
    Literal::u64_unsuffixed(n)
}

/// A number spelt exactly `text`, suffix included (`9_007_199_254_740_991i64`, `1e-6`, `-1.5`): the generated
/// files write numbers as the schema and JavaScript do (`{:?}` of an `f64`), which `Literal::f64_unsuffixed`
/// would not. A minus sign is a token of its own, as the parser makes it.
pub fn number(text: &str) -> TokenStream {
    let (minus, digits) = match text.strip_prefix('-') {
        Some(digits) => (Some(quote!(-)), digits),
        None => (None, text),
    };
    let literal = Literal::from_str(digits).unwrap_or_else(|_| panic!("{text} is not a number literal"));
    quote!(#minus #literal)
}

/// A float as `{:?}` spells it (`0.0`, `1e-6`), optionally suffixed (`f64`).
pub fn float(value: f64, suffix: &str) -> TokenStream {
    number(&format!("{value:?}{suffix}"))
}

/// A string literal spelt exactly `source` (quotes and escapes included), for a literal whose escapes must stay
/// escapes in the file (`"\u{a0}"`) rather than become the characters they stand for.
pub fn string_spelt(source: &str) -> Literal {
    assert!(source.starts_with('"'), "{source} is not a string literal");
    Literal::from_str(source).unwrap_or_else(|_| panic!("{source} is not a string literal"))
}

/// A Rust type as the generated code declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RustType {
    /// A path without generics (`String`, `u64`, `crate::DecimalNumber`, `Fees`).
    Path(String),
    Option(Box<RustType>),
    Vec(Box<RustType>),
    /// `std::collections::BTreeMap<String, _>`.
    Map(Box<RustType>),
}

impl RustType {
    /// `T` of `Option<T>`.
    pub fn option_of(&self) -> Option<&RustType> {
        match self {
            RustType::Option(inner) => Some(inner),
            _ => None,
        }
    }

    /// `T` of `Vec<T>`.
    pub fn vec_of(&self) -> Option<&RustType> {
        match self {
            RustType::Vec(item) => Some(item),
            _ => None,
        }
    }

    pub fn is(&self, path: &str) -> bool {
        matches!(self, RustType::Path(p) if p == path)
    }
}

/// The type as it is written in Rust (`Option<crate::DecimalNumber>`), for schemars' `with = "…"`.
impl fmt::Display for RustType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RustType::Path(path) => f.write_str(path),
            RustType::Option(inner) => write!(f, "Option<{inner}>"),
            RustType::Vec(item) => write!(f, "Vec<{item}>"),
            RustType::Map(value) => write!(f, "std::collections::BTreeMap<String, {value}>"),
        }
    }
}

impl ToTokens for RustType {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match self {
            RustType::Path(path) => self::path(path),
            RustType::Option(inner) => quote!(Option<#inner>),
            RustType::Vec(item) => quote!(Vec<#item>),
            RustType::Map(value) => quote!(std::collections::BTreeMap<String, #value>),
        });
    }
}
