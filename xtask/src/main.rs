//! `cargo xtask`: everything generated from `schema/` is made and checked here.
//!
//! * `cargo xtask regen` rewrites every generated artifact (formatted, each with a header naming this command).
//! * `cargo xtask check` writes nothing and fails, listing each problem, when the schema is not valid OpenAPI
//!   3.0, breaks a house rule (`lint.rs`), anything generated is stale, or a crate's module graph has a cycle or
//!   an import from a higher layer (`layering.rs`).
//! * `cargo xtask breaking --base <rev>` classifies every schema change since a revision (`breaking.rs`);
//!   `cargo xtask release-check` applies the release policy to the changes since the last release
//!   (`evolution.rs`, `release.rs`).
//!
//! The document itself is written twice (`publish.rs`): its source form, which the Rust generators read, and the
//! published form that servers serve at `GET /openapi.json`, the same contract restated where other languages'
//! generators cannot read a construct.
//!
//! Layout follows rust-analyzer's xtask codegen: each generator returns `(path, contents)` pairs;
//! `codegen::ensure_file_contents` writes them (regen) and `codegen::check_file_contents` only compares them
//! (check). `cargo test -p xtask` runs the check too (`tests.rs`), and the generators on small fixture documents
//! (`tests/generators.rs`).

mod breaking;
mod bundle;
mod client;
mod codegen;
mod evolution;
mod git;
mod layering;
mod lint;
mod operations;
mod publish;
mod release;
mod rust_types;
mod schema;
#[path = "../../build_support/schema_hash.rs"]
mod schema_hash;
mod server;
mod tokens;
mod validate;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Generate and check everything derived from schema/openapi.yaml")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate and lint the schema, then rewrite every generated file.
    Regen,
    /// Validate and lint the schema and fail if any generated file is stale. Writes nothing.
    Check,
    /// Classify every schema change since a revision as breaking or compatible, for clients and for servers.
    #[command(long_about = evolution::BREAKING_HELP)]
    Breaking(evolution::BreakingArgs),
    /// Check that the version and CHANGELOG.md follow the breaking changes since the last release (CI runs it).
    #[command(long_about = evolution::RELEASE_CHECK_HELP)]
    ReleaseCheck(evolution::ReleaseCheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = workspace_root();
    let (outcome, done) = match &cli.command {
        Command::Regen => (regen(&root), "regenerated"),
        Command::Check => (check(&root), "everything generated is current; the module graphs are clean"),
        Command::Breaking(args) => return evolution::breaking(&root, args),
        Command::ReleaseCheck(args) => return evolution::release_check(&root, args),
    };
    match outcome {
        Ok(problems) if problems.is_empty() => {
            eprintln!("xtask: {done}");
            ExitCode::SUCCESS
        }
        Ok(problems) => {
            eprintln!("xtask: {} problem(s):", problems.len());
            for p in &problems {
                eprintln!("  - {p}");
            }
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Every generated file of the workspace, or the problems of a schema that is not valid or breaks a house rule.
enum Generated {
    Files(Vec<(PathBuf, String)>),
    InvalidSchema(Vec<String>),
}

/// Validates and lints the schema and runs every generator. Reads `schema/`; writes nothing.
fn generate(root: &Path) -> anyhow::Result<Generated> {
    let doc = bundle::load(&root.join("schema/openapi.yaml"))?;
    let json = bundle::to_json_value(&doc)?;
    let mut problems = validate::problems(&json);
    problems.extend(lint::problems(&json, &doc));
    if !problems.is_empty() {
        problems.push("fix the schema first; nothing was generated".to_owned());
        return Ok(Generated::InvalidSchema(problems));
    }
    let fingerprint = schema_hash::schema_fingerprint(&root.join("schema"))?;
    let mut files = match publish::generate(&doc)? {
        Generated::Files(documents) => documents,
        invalid => return Ok(invalid),
    };
    files.extend(rust_types::generate(&doc, &fingerprint)?);
    files.extend(operations::generate(&doc)?);
    files.extend(server::generate(&doc)?);
    files.extend(client::generate(&doc, &json)?);
    Ok(Generated::Files(files))
}

/// `cargo xtask check`: the problems found (none: the schema is valid, every generated file is current and the
/// module graphs are as `layering.rs` wants them). Writes nothing.
fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = check_generated(root)?;
    problems.extend(layering::problems(root)?);
    Ok(problems)
}

/// The schema's problems, or the generated files that are stale. Writes nothing.
fn check_generated(root: &Path) -> anyhow::Result<Vec<String>> {
    match generate(root)? {
        Generated::InvalidSchema(problems) => Ok(problems),
        Generated::Files(files) => {
            Ok(files.iter().filter_map(|(rel, contents)| codegen::check_file_contents(root, rel, contents)).collect())
        }
    }
}

/// `cargo xtask regen`: writes every generated file that differs; the problems of an invalid schema instead.
fn regen(root: &Path) -> anyhow::Result<Vec<String>> {
    match generate(root)? {
        Generated::InvalidSchema(problems) => Ok(problems),
        Generated::Files(files) => {
            for (rel, contents) in &files {
                codegen::ensure_file_contents(root, rel, contents)?;
            }
            Ok(Vec::new())
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}
