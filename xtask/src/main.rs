//! `cargo xtask`: everything generated from `schema/` is made and checked here.
//!
//! * `cargo xtask regen` rewrites every generated artifact (formatted, each with a header naming this command).
//! * `cargo xtask check` writes nothing and fails, listing each problem, when the schema is not valid OpenAPI
//!   3.0, breaks a house rule (`lint.rs`), or anything generated is stale.
//! * `cargo xtask breaking --base <rev>` classifies every schema change since a revision (`breaking.rs`);
//!   `cargo xtask release-check` applies the release policy to the changes since the last release
//!   (`evolution.rs`, `release.rs`).
//!
//! Layout follows rust-analyzer's xtask codegen: each generator returns `(path, contents)` pairs and
//! `codegen::ensure_file_contents` writes them or, in check mode, reports them.

mod breaking;
mod bundle;
mod client;
mod codegen;
mod domain;
mod evolution;
mod git;
mod lint;
mod operations;
mod release;
mod rust_types;
#[path = "../../build_support/schema_hash.rs"]
mod schema_hash;
mod server;
mod validate;

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
    let check = match &cli.command {
        Command::Regen => false,
        Command::Check => true,
        Command::Breaking(args) => return evolution::breaking(&root, args),
        Command::ReleaseCheck(args) => return evolution::release_check(&root, args),
    };
    match run(&root, check) {
        Ok(problems) if problems.is_empty() => {
            eprintln!("xtask: {}", if check { "everything generated is current" } else { "regenerated" });
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

/// Runs the pipeline; returns the problems found (empty means success).
fn run(root: &Path, check: bool) -> anyhow::Result<Vec<String>> {
    let doc = bundle::load(&root.join("schema/openapi.yaml"))?;
    let json = bundle::to_json_value(&doc)?;
    let mut problems = validate::problems(&json);
    problems.extend(lint::problems(&json, &doc));
    if !problems.is_empty() {
        problems.push("fix the schema first; nothing was generated".to_owned());
        return Ok(problems);
    }
    let fingerprint = schema_hash::schema_fingerprint(&root.join("schema"))?;
    let mut files = vec![(PathBuf::from("src/generated/openapi.json"), bundle::to_json_text(&doc)?)];
    files.extend(rust_types::generate(&doc, &fingerprint)?);
    files.extend(operations::generate(&doc)?);
    files.extend(server::generate(&doc)?);
    files.extend(client::generate(&doc, &json)?);
    for (rel, contents) in files {
        if let Some(problem) = codegen::ensure_file_contents(root, &rel, &contents, check)? {
            problems.push(problem);
        }
    }
    Ok(problems)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}
