//! The fuzz targets' bodies (see `harness`), shared with the corpus replay test of the main workspace.
pub mod harness;
