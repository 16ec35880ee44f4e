//! The schemars side of `types.rs` (feature `schemars`): the `schemars(...)` attribute of a member, which says
//! exactly what the schema says (its constraints, and optional or nullable as the source has it, where schemars
//! would call every `Option` nullable), and the `JsonSchema` impl of a union (`oneOf` its variants).

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::model::{Field, Origin, RustType, Shape};
use crate::tokens::{float, ident, number, unsuffixed};

/// `#[cfg_attr(feature = "schemars", schemars(...))]` of a (non-flattened) member, or nothing.
pub fn member_attribute(origin: Origin, f: &Field) -> TokenStream {
    let Some(shape) = f.shape() else { return TokenStream::new() };
    let mut attributes: Vec<TokenStream> = match origin {
        Origin::Component => rules(shape).iter().map(Rule::extend).collect(),
        Origin::Parameters => Vec::new(),
    };
    if !f.required {
        let with = shape.rust_type().to_string();
        attributes.push(quote!(with = #with));
    } else if let Shape::Nullable(inner) = shape {
        let with = format!("crate::codec::Nullable<{}>", inner.rust_type());
        attributes.push(quote!(with = #with));
    }
    if attributes.is_empty() {
        return TokenStream::new();
    }
    quote!(#[cfg_attr(feature = "schemars", schemars(#(#attributes),*))])
}

/// `JsonSchema` of a union: `oneOf` the schemas of its variants' types.
pub fn one_of(name: &str, types: impl Iterator<Item = RustType>) -> TokenStream {
    let union = ident(name);
    quote! {
        #[cfg(feature = "schemars")]
        impl schemars::JsonSchema for #union {
            fn schema_name() -> std::borrow::Cow<'static, str> { #name.into() }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "oneOf": [#(generator.subschema_for::<#types>()),*] })
            }
        }
    }
}

/// A constraint of the schema as schemars states it.
enum Rule {
    MinLength(u64),
    MaxLength(u64),
    Pattern(String),
    /// The bound's literal (`0`, `0.5`, `100i64`: an integer maximum is an `i64`, as a bound near
    /// JavaScript's largest integer does not fit the `i32` an unsuffixed literal becomes in `json!`).
    Minimum(TokenStream),
    Maximum(TokenStream),
    /// `minItems` / `maxItems`.
    Items {
        min: Option<u64>,
        max: Option<u64>,
    },
    /// The constraints of an array's items.
    Inner(Vec<Rule>),
}

fn rules(shape: &Shape) -> Vec<Rule> {
    let mut out = Vec::new();
    match shape {
        Shape::String { min_length, max_length, pattern } => {
            out.extend(min_length.map(Rule::MinLength));
            out.extend(max_length.map(Rule::MaxLength));
            out.extend(pattern.clone().map(Rule::Pattern));
        }
        Shape::Number { minimum, maximum } => {
            out.extend(minimum.map(|lo| Rule::Minimum(float(lo, ""))));
            out.extend(maximum.map(|hi| Rule::Maximum(float(hi, ""))));
        }
        Shape::Integer { minimum, maximum } => {
            out.extend(minimum.map(|lo| Rule::Minimum(number(&(lo as i64).to_string()))));
            out.extend(maximum.map(|hi| Rule::Maximum(number(&format!("{}i64", hi as i64)))));
        }
        Shape::Array { items, min_items, max_items } => {
            if min_items.is_some() || max_items.is_some() {
                out.push(Rule::Items { min: *min_items, max: *max_items });
            }
            let inner = rules(items);
            if !inner.is_empty() {
                out.push(Rule::Inner(inner));
            }
        }
        Shape::Nullable(inner) => out = rules(inner),
        Shape::Named(_) | Shape::Tag(_) | Shape::Boolean | Shape::Map(_) => {}
    }
    out
}

impl Rule {
    /// The rule as a member's attribute: the schema's keyword (`extend("minLength" = 1)`).
    fn extend(&self) -> TokenStream {
        let keyword = match self {
            Rule::MinLength(_) => "minLength",
            Rule::MaxLength(_) => "maxLength",
            Rule::Pattern(_) => "pattern",
            Rule::Minimum(_) => "minimum",
            Rule::Maximum(_) => "maximum",
            Rule::Items { min, max } => {
                let min = min.map(unsuffixed).map(|m| quote!(min = #m));
                let max = max.map(unsuffixed).map(|m| quote!(max = #m));
                let bounds = min.into_iter().chain(max);
                return quote!(length(#(#bounds),*));
            }
            Rule::Inner(rules) => {
                let rules = rules.iter().map(Rule::validation);
                return quote!(inner(#(#rules),*));
            }
        };
        let value = self.value();
        quote!(extend(#keyword = #value))
    }

    /// The rule as a validation attribute, which `inner(...)` takes (`length(min = 1)`).
    fn validation(&self) -> TokenStream {
        let (attribute, argument) = match self {
            Rule::MinLength(_) => ("length", "min"),
            Rule::MaxLength(_) => ("length", "max"),
            Rule::Pattern(_) => ("regex", "pattern"),
            Rule::Minimum(_) => ("range", "min"),
            Rule::Maximum(_) => ("range", "max"),
            Rule::Items { .. } | Rule::Inner(_) => return self.extend(),
        };
        let (attribute, argument, value) = (ident(attribute), ident(argument), self.value());
        quote!(#attribute(#argument = #value))
    }

    /// The bound of a single-value rule, as the generated code writes it.
    fn value(&self) -> TokenStream {
        match self {
            Rule::MinLength(n) | Rule::MaxLength(n) => unsuffixed(*n).into_token_stream(),
            Rule::Pattern(pattern) => pattern.into_token_stream(),
            Rule::Minimum(v) | Rule::Maximum(v) => v.clone(),
            Rule::Items { .. } | Rule::Inner(_) => TokenStream::new(),
        }
    }
}
