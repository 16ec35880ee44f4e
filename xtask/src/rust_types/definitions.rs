//! The type definitions of `types.rs`: structs, string enums, unions and aliases with their derives, the
//! constants and accessors of enums and unions, the `From` conversions of union variants and the
//! `every_component!` macro. Serde and schemars code comes from `serde_impls` / `schemars_impls`.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::model::{Discriminant, Field, Item, KindUnion, Model, RustType, StringEnum, Struct, Union};
use super::{decode, schemars_impls, serde_impls};
use crate::tokens::{doc_comment, ident};

/// The doc paragraph and `allow` of every union of objects, whose variants differ in size (a swap record is
/// larger than a plain one): they are held inline, as everywhere in the contract.
const LARGE_VARIANTS: &str = "\nVariants are held inline like every contract type (clippy's `large_enum_variant` is \
                              allowed: boxing would\nchange every constructor and `match` of a value that is \
                              decoded once and read).";

/// `types.rs`: every item with its impls, the accessors of members every variant of a union has, and
/// `every_component!`.
pub fn types_file(model: &Model) -> TokenStream {
    let items = model.items.iter().map(item);
    let accessors = shared_member_accessors(model);
    let every_component = every_component(&model.components);
    quote! {
        use crate::codec::Decode;
        use serde::{Deserialize, Serialize};
        #(#items)*
        #accessors
        #every_component
    }
}

/// One item: its definition, then its serde impls, conversions and schemars impl.
fn item(item: &Item) -> TokenStream {
    match item {
        Item::Alias { name, doc: text, ty } => {
            let (doc, name) = (text.as_deref().map(doc_comment), ident(name));
            quote!(#doc pub type #name = #ty;)
        }
        Item::Struct(s) => {
            let definition = structure(s);
            let decode = decode::structure(s);
            quote!(#definition #decode)
        }
        Item::Enum(e) => string_enum(e),
        Item::Union(u) => {
            let definition = union(u);
            let name = ident(&u.name);
            let serialize = serde_impls::serialize_each_variant(&name, u.variants.iter().map(|v| ident(&v.ident)));
            let decode = decode::union(u);
            let conversions = u.variants.iter().map(|v| {
                let (variant, ty) = (ident(&v.ident), ident(&v.ty));
                quote!(impl From<#ty> for #name { fn from(v: #ty) -> Self { Self::#variant(v) } })
            });
            let types = u.variants.iter().map(|v| RustType::Path(v.ty.clone()));
            let schema = schemars_impls::one_of(&u.name, types);
            quote!(#definition #serialize #decode #(#conversions)* #schema)
        }
        Item::KindUnion(k) => {
            let definition = kind_union(k);
            let name = ident(&k.name);
            let serialize = serde_impls::serialize_each_variant(&name, k.variants.iter().map(|v| ident(&v.ident)));
            let decode = decode::kind_union(k);
            let schema = schemars_impls::one_of(&k.name, k.variants.iter().map(|v| v.shape.rust_type()));
            quote!(#definition #serialize #decode #schema)
        }
    }
}

fn structure(s: &Struct) -> TokenStream {
    let name = ident(&s.name);
    let doc = s.doc.as_deref().map(doc_comment);
    // `Deserialize` is the table-driven decoder's (`decode::structure`); `deny_unknown_fields` is for schemars.
    let deny = s.deny_unknown_fields.then(|| quote!(#[serde(deny_unknown_fields)]));
    let fields = s.fields.iter().map(|f| field(s, f));
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
        #deny
        pub struct #name { #(#fields)* }
    }
}

fn field(owner: &Struct, f: &Field) -> TokenStream {
    let doc = f.doc.as_deref().map(doc_comment);
    let name = ident(&f.ident);
    let ty = f.declared();
    if f.part().is_some() {
        return quote!(#doc #[serde(flatten)] pub #name: #ty,);
    }
    let serde = serde_impls::member_attributes(f);
    let schemars = schemars_impls::member_attribute(owner.origin, f);
    quote!(#doc #serde #schemars pub #name: #ty,)
}

fn string_enum(e: &StringEnum) -> TokenStream {
    let name = ident(&e.name);
    let doc = e.doc.as_deref().map(doc_comment);
    let derive_default = e.default.is_some().then(|| quote!(Default,));
    let idents: Vec<_> = e.values.iter().map(|v| ident(&StringEnum::variant_ident(v))).collect();
    let variants = e.values.iter().zip(&idents).map(|(value, variant)| {
        let default = (e.default.as_ref() == Some(value)).then(|| quote!(#[default]));
        quote!(#default #[serde(rename = #value)] #variant,)
    });
    let values = &e.values;
    let decode = decode::string_enum(e);
    quote! {
        #doc
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, #derive_default Serialize)]
        #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
        pub enum #name { #(#variants)* }
        impl #name {
            /// Every value, in the schema's order.
            pub const ALL: &'static [Self] = &[#(Self::#idents),*];
            /// The value as it is written in JSON.
            pub fn as_str(self) -> &'static str { match self { #(Self::#idents => #values,)* } }
        }
        impl std::fmt::Display for #name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(self.as_str()) }
        }
        #decode
    }
}

/// The enum of a tag or presence union and what tells its variants apart.
fn union(u: &Union) -> TokenStream {
    let name = ident(&u.name);
    let told_apart = match &u.discriminant {
        Discriminant::Tag { property, .. } => format!(
            "\nTold apart by `{property}`, wherever it is in the object (read once); an unknown tag is named in the \
             error."
        ),
        Discriminant::Presence => {
            "\nTold apart by which member is present; the serde impls name the members when none or both are."
                .to_owned()
        }
    };
    let (doc, told_apart, large) =
        (u.doc.as_deref().map(doc_comment), doc_comment(&told_apart), doc_comment(LARGE_VARIANTS));
    let variants = u.variants.iter().map(|v| {
        let variant_doc = match &u.discriminant {
            Discriminant::Tag { property, .. } => format!("`{property}` = `{}`.", v.key),
            Discriminant::Presence => format!("Has `{}`.", v.key),
        };
        let (variant_doc, variant, ty) = (doc_comment(&variant_doc), ident(&v.ident), ident(&v.ty));
        quote!(#variant_doc #variant(#ty),)
    });
    let keys = u.variants.iter().map(|v| &v.key);
    let constants = match &u.discriminant {
        Discriminant::Tag { property, .. } => {
            let idents = u.variants.iter().map(|v| ident(&v.ident));
            let tags = keys.clone();
            quote! {
                /// The property that tells the variants apart.
                pub const TAG_PROPERTY: &'static str = #property;
                /// Every tag value, in the schema's order.
                pub const TAGS: &'static [&'static str] = &[#(#keys),*];
                /// The tag value of this variant.
                pub fn tag(&self) -> &'static str { match self { #(Self::#idents(_) => #tags,)* } }
            }
        }
        Discriminant::Presence => quote! {
            /// The members that tell the variants apart, in the schema's order.
            pub const MEMBERS: &'static [&'static str] = &[#(#keys),*];
        },
    };
    quote! {
        #doc
        #told_apart
        #large
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum #name { #(#variants)* }
        impl #name { #constants }
    }
}

fn kind_union(k: &KindUnion) -> TokenStream {
    let name = ident(&k.name);
    let (doc, told_apart) = (k.doc.as_deref().map(doc_comment), doc_comment("\nTold apart by JSON kind alone."));
    let variants = k.variants.iter().map(|v| {
        let kind_doc = doc_comment(&format!("A JSON {}.", v.kind));
        let (variant, ty) = (ident(&v.ident), v.shape.rust_type());
        quote!(#kind_doc #variant(#ty),)
    });
    quote! {
        #doc
        #told_apart
        #[derive(Debug, Clone, PartialEq)]
        pub enum #name { #(#variants)* }
    }
}

/// For every union of structs, an accessor per member that every variant has with the same Rust type
/// (`QuoteResponse::quote_id()`, `BridgeRecord::common()`), so that shared members are read without a `match`.
/// Tags are left out (each variant's tag has its own type; the union's `tag()` names it).
fn shared_member_accessors(model: &Model) -> TokenStream {
    let structs = model.structs();
    let fields_of = |ty: &str| -> Option<BTreeMap<&str, RustType>> {
        structs.get(ty).map(|s| s.fields.iter().map(|f| (f.ident.as_str(), f.declared())).collect())
    };
    let mut out = TokenStream::new();
    for u in model.unions() {
        let Some(first) = u.variants.first().and_then(|v| structs.get(v.ty.as_str())) else { continue };
        let variant_fields: Vec<_> = u.variants.iter().map(|v| fields_of(&v.ty)).collect();
        let shared: Vec<(&str, RustType)> = first
            .fields
            .iter()
            .map(|f| (f.ident.as_str(), f.declared()))
            .filter(|(field, _)| !matches!(*field, "tag" | "r#type" | "state"))
            .filter(|(field, ty)| {
                variant_fields.iter().all(|fields| fields.as_ref().is_some_and(|fs| fs.get(field) == Some(ty)))
            })
            .collect();
        if shared.is_empty() {
            continue;
        }
        let methods = shared.iter().map(|(field, ty)| accessor(u, field, ty));
        let (name, doc) = (ident(&u.name), doc_comment(&format!("The members every variant of [`{}`] has.", u.name)));
        out.extend(quote!(#doc impl #name { #(#methods)* }));
    }
    out
}

/// `pub fn member(&self) -> &T` over every variant of `u`, borrowing the member as its owner would lend it.
fn accessor(u: &Union, field: &str, ty: &RustType) -> TokenStream {
    let method_name = field.trim_start_matches("r#");
    let (method, member) = (format_ident!("{}", method_name), ident(field));
    let (ret, read): (TokenStream, fn(TokenStream) -> TokenStream) = match (ty.option_of(), ty.vec_of()) {
        _ if ty.is("String") => (quote!(&str), |m| quote!(#m.as_str())),
        (Some(inner), _) if inner.is("String") => (quote!(Option<&str>), |m| quote!(#m.as_deref())),
        (Some(inner), _) => (quote!(Option<&#inner>), |m| quote!(#m.as_ref())),
        (None, Some(item)) => (quote!(&[#item]), |m| quote!(#m.as_slice())),
        (None, None) => (quote!(&#ty), |m| quote!(&#m)),
    };
    let arms = u.variants.iter().map(|v| {
        let variant = ident(&v.ident);
        let value = read(quote!(v.#member));
        quote!(Self::#variant(v) => #value,)
    });
    let doc = doc_comment(&format!("`{method_name}` of whichever variant this is."));
    quote!(#doc pub fn #method(&self) -> #ret { match self { #(#arms)* } })
}

/// `every_component!`: calls a macro once for every component type.
fn every_component(components: &[String]) -> TokenStream {
    let types = components.iter().map(|c| ident(c));
    quote! {
        /// Calls `$callback!(Type, "ComponentName");` once for every generated component type, so that tests and
        /// tools can cover every type without writing the list again.
        #[macro_export]
        macro_rules! every_component {
            ($callback:ident) => {
                #($callback!(#types, #components);)*
            };
        }
    }
}
