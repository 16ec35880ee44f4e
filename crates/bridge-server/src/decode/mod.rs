//! Request decoding: every 400 the server answers comes from here.
//!
//! * [`shape`]: what the decoder knows of a request schema (the tables are generated from the document);
//! * [`engine`]: the reference framework's rules, issue for issue;
//! * [`parts`]: turning an HTTP request into the three parts the engine decodes (path parameters, body by
//!   content type, query), in the framework's order: path, then body, then query.

pub mod engine;
pub mod parts;
mod pattern;
pub mod render;
pub mod shape;

pub use engine::ErrorsMode;
