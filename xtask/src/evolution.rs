//! `cargo xtask breaking` and `cargo xtask release-check`: read `schema/` at another revision with git, bundle
//! it like the working tree's (anchors and merge keys expanded), compare the two documents with
//! [`crate::breaking`], print the result and, for `release-check`, apply [`crate::release`]'s policy.
//!
//! Exit statuses: 0 nothing breaks (or the release policy holds), 1 something breaks (or the policy does not
//! hold), 2 the documents cannot be compared (unknown revision, no schema, unparsable document, git failed).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use serde_json::Value;

use crate::breaking::{self, report, Comparison};
use crate::{bundle, git, release};

const OK: u8 = 0;
const BREAKING: u8 = 1;
const CANNOT_COMPARE: u8 = 2;

/// The schema directory and the document the bundler starts from, relative to the workspace root.
const SCHEMA_DIR: &str = "schema";
const SCHEMA_FILE: &str = "schema/openapi.yaml";

/// `cargo xtask breaking --help`.
pub const BREAKING_HELP: &str = "\
Compares schema/ at a git revision with the working tree (or with --head), both bundled (YAML anchors and merge keys
expanded), and prints every change on one line: BREAKING or compatible; the audiences it breaks; its subject
(`Component.member`, `operationId.parameter`, `operationId.404`, `Enum.VALUE`, `operationId`); what changed; the
rule; the JSON pointer into the bundled document. Changes are grouped by operation, and by shared component with
the operations that use it.

Audiences: clients call the API and receive its webhook events (bridge-client, the bridge-contract types, webhook
receivers); servers implement it (the service, bridge-sandbox, implementations of bridge_server::BridgeApi).
A change that makes fewer messages valid breaks whoever sends them (a new required request member breaks clients);
one that makes more messages valid breaks whoever receives them (a new enum value in a response breaks clients,
whose generated enums are closed; a loosened request constraint breaks servers); retyping and removing break both.
docs/contributing.md, \"API evolution\", has the table of rules.

Exit status: 0 nothing breaks, 1 something breaks, 2 cannot compare (unknown revision, no or unparsable schema).

Examples:
  cargo xtask breaking --base v0.1.0                      # the working tree against the 0.1.0 release
  cargo xtask breaking --base main --head my-branch       # two revisions
  cargo xtask breaking --base v0.1.0 --format markdown    # lines for CHANGELOG.md
  cargo xtask breaking --base v0.1.0 --format json        # for machines
  cargo xtask breaking --base main --published            # the published documents (GET /openapi.json)
  cargo xtask breaking --rules                            # the rules and whom each breaks";

/// `cargo xtask release-check --help`.
pub const RELEASE_CHECK_HELP: &str = "\
Runs the comparison of `cargo xtask breaking` against the last release (the newest v* tag reachable from HEAD; in a
clone without tags, the commit CHANGELOG.md records for its newest release, `## [x.y.z]` ... `commit <hash>`; the
first commit when there is neither), prints the base it chose and the changes, and fails (exit 1) when something
breaks unless
  * the version of bridge-contract, bridge-server and bridge-client (one version for the three) was bumped past the
    base release's: the minor on 0.x (0.1.3 -> 0.2.0), the major from 1.0 on (1.4.2 -> 2.0.0); and
  * CHANGELOG.md names every breaking change: its subject appears above the base version's `## [x.y.z]` heading
    (`cargo xtask breaking --base <tag> --format markdown` prints lines that do).
The version may never go backwards. Exit 2 when it cannot check (not a git repository, unreadable manifests).";

#[derive(Args)]
pub struct BreakingArgs {
    /// The revision to compare with: a release tag (`v0.1.0`), a branch (`main`), a commit, `HEAD~3`.
    #[arg(long, value_name = "REV", required_unless_present = "rules")]
    base: Option<String>,
    /// Compare with this revision instead of the working tree.
    #[arg(long, value_name = "REV")]
    head: Option<String>,
    /// `text`: grouped by operation, for people. `json`: every change with its classification, for machines.
    /// `markdown`: lines to paste into CHANGELOG.md (breaking changes first).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print the rules (what each covers and whom it breaks) as a Markdown table, and compare nothing.
    #[arg(long, conflicts_with_all = ["base", "head"])]
    rules: bool,
    /// Compare the published documents instead of `schema/`: `src/generated/openapi.json` (what servers serve at
    /// `GET /openapi.json` and other teams generate clients from) as committed at each revision, and for the
    /// working tree as `cargo xtask regen` writes it now.
    #[arg(long)]
    published: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    Markdown,
}

#[derive(Args)]
pub struct ReleaseCheckArgs {
    /// Check against this revision instead of the last release (the newest `v*` tag reachable from HEAD; the
    /// first commit when there is none).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
}

pub fn breaking(root: &Path, args: &BreakingArgs) -> ExitCode {
    let (status, out) = run_breaking(root, args);
    print!("{out}");
    ExitCode::from(status)
}

pub fn release_check(root: &Path, args: &ReleaseCheckArgs) -> ExitCode {
    let (status, out) = run_release_check(root, args);
    print!("{out}");
    ExitCode::from(status)
}

/// `cargo xtask breaking`: (exit status, what to print on stdout).
fn run_breaking(root: &Path, args: &BreakingArgs) -> (u8, String) {
    let Some(base) = args.base.as_deref().filter(|_| !args.rules) else {
        return (OK, report::rules_table());
    };
    let compared = (|| {
        let base = git::resolve(root, base)?;
        let head = args.head.as_deref().map(|rev| git::resolve(root, rev)).transpose()?;
        let cmp = if args.published {
            crate::publish::compare_published(root, &base, head.as_ref())?
        } else {
            compare(root, &base, head.as_ref())?
        };
        Ok::<_, anyhow::Error>((base, head, cmp))
    })();
    let (base, head, cmp) = match compared {
        Ok(c) => c,
        Err(e) => return (CANNOT_COMPARE, format!("xtask breaking: cannot compare: {e:#}\n")),
    };
    let head_name = head.as_ref().map(git::Commit::describe).unwrap_or_else(|| "the working tree".to_owned());
    let head_name =
        if args.published { format!("{head_name} (the published documents, not schema/)") } else { head_name };
    let out = match args.format {
        Format::Text => report::text(&cmp, &base.describe(), &head_name),
        Format::Json => report::json(&cmp, &base.describe(), &head_name),
        Format::Markdown => report::markdown(&cmp, &base.name),
    };
    (if cmp.is_breaking() { BREAKING } else { OK }, out)
}

/// `cargo xtask release-check`: (exit status, what to print on stdout).
fn run_release_check(root: &Path, args: &ReleaseCheckArgs) -> (u8, String) {
    let mut out = String::new();
    match release_problems(root, args, &mut out) {
        Ok(problems) if problems.is_empty() => {
            out.push_str("release-check: ok\n");
            (OK, out)
        }
        Ok(problems) => {
            out.push_str(&format!("release-check: {} problem(s):\n", problems.len()));
            for p in problems {
                out.push_str(&format!("  - {p}\n"));
            }
            (BREAKING, out)
        }
        Err(e) => {
            out.push_str(&format!("release-check: cannot check: {e:#}\n"));
            (CANNOT_COMPARE, out)
        }
    }
}

fn release_problems(root: &Path, args: &ReleaseCheckArgs, out: &mut String) -> anyhow::Result<Vec<String>> {
    let (base, why) = match &args.base {
        Some(rev) => {
            let c = git::resolve(root, rev)?;
            let why = format!("{}, given with --base", c.describe());
            (c, why)
        }
        None => {
            let b = git::last_release(root)?;
            (b.commit().clone(), b.describe())
        }
    };
    out.push_str(&format!("release-check: base {why}\n"));
    if git::is_shallow(root) {
        out.push_str("release-check: warning: this is a shallow clone, so older release tags may be missing (`git fetch --unshallow --tags`)\n");
    }
    let cmp = compare(root, &base, None)?;
    out.push_str(&report::text(&cmp, &base.describe(), "the working tree"));
    out.push('\n');

    let workspace_now = read(root, "Cargo.toml")?;
    let workspace_then = git::file_at(root, &base, "Cargo.toml")?.unwrap_or_default();
    let mut base_versions = Vec::new();
    let mut head_versions = Vec::new();
    for (name, manifest) in release::RELEASED {
        let now = release::package_version(&read(root, manifest)?, &workspace_now)
            .with_context(|| format!("reading the version of {name}"))?;
        let then = match git::file_at(root, &base, manifest)? {
            Some(text) => Some(
                release::package_version(&text, &workspace_then)
                    .with_context(|| format!("reading the version of {name} at {}", base.describe()))?,
            ),
            None => None,
        };
        out.push_str(&format!(
            "release-check: {name} {} at the base, {now} now\n",
            then.as_ref().map(ToString::to_string).unwrap_or_else(|| "absent".to_owned())
        ));
        base_versions.push((name, then));
        head_versions.push((name, now));
    }
    let mut problems = release::version_problems(&base_versions, &head_versions, cmp.is_breaking());

    if cmp.is_breaking() {
        match std::fs::read_to_string(root.join("CHANGELOG.md")) {
            Err(_) => problems.push("CHANGELOG.md is missing; it must name every breaking change".to_owned()),
            Ok(changelog) => {
                let base_version = base_versions.iter().find_map(|(_, v)| v.clone());
                let newer = base_version.as_ref().and_then(|v| release::newer_than(&changelog, v));
                let text = match (newer, &base_version) {
                    (Some(text), _) => text,
                    (None, Some(v)) => {
                        out.push_str(&format!(
                            "release-check: CHANGELOG.md has no `## [{v}]` heading; all of it counts\n"
                        ));
                        &changelog
                    }
                    (None, None) => &changelog,
                };
                let unnamed = release::unnamed(&cmp.changes, text);
                if !unnamed.is_empty() {
                    let names: Vec<String> = unnamed.iter().map(|c| format!("`{}`", c.subject)).collect();
                    problems.push(format!(
                        "CHANGELOG.md does not name {} breaking change(s) in its sections newer than the base release: {}; \
                         `cargo xtask breaking --base {} --format markdown` prints lines to paste under `## [Unreleased]`",
                        unnamed.len(),
                        names.join(", "),
                        base.name
                    ));
                }
            }
        }
    }
    Ok(problems)
}

fn read(root: &Path, rel: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(root.join(rel)).with_context(|| format!("reading {rel}"))
}

/// Compares `schema/` at `base` with `head` (a revision, or the working tree when `None`).
fn compare(root: &Path, base: &git::Commit, head: Option<&git::Commit>) -> anyhow::Result<Comparison> {
    let started = Instant::now();
    let base_doc = document_at(root, base)?;
    let head_doc = match head {
        Some(commit) => document_at(root, commit)?,
        None => checked(bundle::to_json_value(&bundle::load(&root.join(SCHEMA_FILE))?)?, "the working tree")?,
    };
    let cmp = breaking::compare(&base_doc, &head_doc);
    eprintln!(
        "xtask: compared schema/ at {} with {} in {} ms",
        base.describe(),
        head.map(git::Commit::describe).unwrap_or_else(|| "the working tree".into()),
        started.elapsed().as_millis()
    );
    Ok(cmp)
}

/// The bundled document at a revision: every file under `schema/` at that commit is written to a temporary
/// directory, and the bundler reads it there exactly as it reads the working tree.
fn document_at(root: &Path, commit: &git::Commit) -> anyhow::Result<Value> {
    let files = git::files_at(root, commit, SCHEMA_DIR)?;
    if !files.iter().any(|(path, _)| path == SCHEMA_FILE) {
        bail!("{} has no {SCHEMA_FILE}", commit.describe());
    }
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    for (path, contents) in &files {
        let target = dir.path().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, contents)?;
    }
    let doc = bundle::load(&dir.path().join(SCHEMA_FILE))
        .with_context(|| format!("{SCHEMA_FILE} at {}", commit.describe()))?;
    checked(bundle::to_json_value(&doc)?, &commit.describe())
}

fn checked(doc: Value, what: &str) -> anyhow::Result<Value> {
    if !doc.get("paths").is_some_and(Value::is_object) {
        bail!("{SCHEMA_FILE} in {what} is not an OpenAPI document (no `paths`)");
    }
    Ok(doc)
}

#[cfg(test)]
mod tests;
