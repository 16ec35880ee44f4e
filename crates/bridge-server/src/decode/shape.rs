//! The decoder's view of a request schema. `cargo xtask regen` writes one static per request schema into
//! `src/generated/shapes.rs`; nothing here lists a field by hand.

/// One schema, as the decoder needs it.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// `type: string`, with its rules.
    String(StringRules),
    /// `DecimalString`: a string decoded as Effect's `BigDecimal`.
    Decimal,
    /// `DateString`: a string decoded as a JavaScript `Date`.
    Date,
    /// `type: number` / `integer` in a JSON body.
    Number(NumberRules),
    /// `type: number` / `integer` sent as a string (path and query parameters), read like JavaScript's `Number()`.
    NumberFromString(NumberRules),
    /// `type: boolean`.
    Boolean,
    /// A string `enum`: a union of literals.
    Literals(&'static [&'static str]),
    /// `type: array`.
    Array(&'static ArrayShape),
    /// An object component.
    Struct(&'static StructShape),
    /// A discriminated union of object components.
    Union(&'static UnionShape),
}

/// `minLength`, `maxLength` (in UTF-16 code units, like JavaScript), `pattern`, and `x-trim`.
#[derive(Debug, Clone, Copy)]
pub struct StringRules {
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<&'static str>,
    pub trim: bool,
}

/// `minimum`, `maximum`, and whether the schema is an `integer`.
#[derive(Debug, Clone, Copy)]
pub struct NumberRules {
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub integer: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct ArrayShape {
    pub items: Shape,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
}

/// An object; `fields` in declaration order (decode errors report the first failure in this order).
#[derive(Debug)]
pub struct StructShape {
    pub name: &'static str,
    pub fields: &'static [Field],
}

#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub required: bool,
    /// The schema's `default`, as JSON text, used when the member is absent.
    pub default: Option<&'static str>,
    pub shape: Shape,
}

/// A union told apart by `tag`; each variant declares the tag as a single literal.
#[derive(Debug)]
pub struct UnionShape {
    pub name: &'static str,
    pub tag: &'static str,
    pub variants: &'static [(&'static str, &'static StructShape)],
}

/// What an operation decodes, in the order the reference framework decodes it: path, body, query.
#[derive(Debug)]
pub struct OperationShapes {
    pub operation_id: &'static str,
    /// The schema's names of the path parameters, in the order they appear in the path: the router names them
    /// by position, and the decoder reads them under these names.
    pub path_names: &'static [&'static str],
    pub path: Option<&'static StructShape>,
    pub query: Option<&'static StructShape>,
    pub body: Option<BodyShape>,
}

#[derive(Debug)]
pub struct BodyShape {
    pub shape: Shape,
    /// `requestBody.required`: when false, an empty body decodes as `{}`.
    pub required: bool,
}
