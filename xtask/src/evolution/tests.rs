//! The two commands against throw-away git repositories: exit statuses, the base chosen, the release policy.

use std::path::Path;
use std::process::Command;

use super::*;

const BASE_SCHEMA: &str = "\
openapi: 3.0.3
info: {title: fixture, version: 0.0.1}
paths:
  /quote:
    post:
      operationId: quote
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/QuoteRequest'}
      responses:
        '200': {description: ok}
components:
  schemas:
    QuoteRequest:
      type: object
      required: [amount]
      properties:
        amount: {type: string}
";

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn set_version(dir: &Path, version: &str) {
    write(
        dir,
        "Cargo.toml",
        &format!("[workspace]\n\n[package]\nname = \"bridge-contract\"\nversion = \"{version}\"\n"),
    );
    for name in ["bridge-server", "bridge-client"] {
        write(
            dir,
            &format!("crates/{name}/Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\nversion = \"{version}\"\n"),
        );
    }
}

/// A repository with one commit holding the base schema and version 0.1.0, tagged `v0.1.0` when `tag`.
fn repository(tag: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    write(dir.path(), "schema/openapi.yaml", BASE_SCHEMA);
    set_version(dir.path(), "0.1.0");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "first"]);
    if tag {
        git(dir.path(), &["tag", "-a", "v0.1.0", "-m", "0.1.0"]);
    }
    dir
}

fn breaking_args(base: &str, format: Format) -> BreakingArgs {
    BreakingArgs { base: Some(base.to_owned()), head: None, format, rules: false, published: false }
}

fn make_memo_required(dir: &Path) {
    let head = BASE_SCHEMA
        .replace("required: [amount]", "required: [amount, memo]")
        .replace("        amount: {type: string}\n", "        amount: {type: string}\n        memo: {type: string}\n");
    write(dir, "schema/openapi.yaml", &head);
}

#[test]
fn exit_status_0_when_nothing_breaks_and_1_when_something_does() {
    let repo = repository(true);
    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Text));
    assert_eq!(status, OK, "{out}");
    assert!(out.contains("no changes"), "{out}");

    make_memo_required(repo.path());
    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Text));
    assert_eq!(status, BREAKING, "{out}");
    assert!(out.contains("QuoteRequest.memo: required member added"), "{out}");

    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Json));
    assert_eq!(status, BREAKING);
    let json: Value = serde_json::from_str(&out).expect("--format json prints JSON");
    assert_eq!(json["breaking"], true);
    assert_eq!(json["changes"][0]["clients"], "breaking");
    assert_eq!(json["changes"][0]["servers"], "compatible");
    assert_eq!(json["changes"][0]["uses"][0]["side"], "client-to-server");

    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Markdown));
    assert_eq!(status, BREAKING);
    assert!(out.contains("### Breaking changes\n\n- `QuoteRequest.memo`: required member added; breaking for clients (client→server: quote)\n"), "{out}");
}

#[test]
fn exit_status_2_when_it_cannot_compare() {
    let repo = repository(true);
    let (status, out) = run_breaking(repo.path(), &breaking_args("v9.9.9", Format::Text));
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("`v9.9.9` is not a commit"), "{out}");

    write(repo.path(), "schema/openapi.yaml", "paths: [unclosed\n");
    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Text));
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("parsing"), "{out}");

    write(repo.path(), "schema/openapi.yaml", "openapi: 3.0.3\n");
    let (status, out) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Text));
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("not an OpenAPI document"), "{out}");

    std::fs::remove_dir_all(repo.path().join("schema")).unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "no schema"]);
    let args = BreakingArgs {
        base: Some("HEAD".into()),
        head: Some("v0.1.0".into()),
        format: Format::Text,
        rules: false,
        published: false,
    };
    let (status, out) = run_breaking(repo.path(), &args);
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("has no schema/openapi.yaml"), "{out}");
}

#[test]
fn two_revisions_can_be_compared() {
    let repo = repository(true);
    make_memo_required(repo.path());
    git(repo.path(), &["commit", "-q", "-am", "memo"]);
    write(repo.path(), "schema/openapi.yaml", BASE_SCHEMA); // the working tree no longer matters
    let args = BreakingArgs {
        base: Some("v0.1.0".into()),
        head: Some("HEAD".into()),
        format: Format::Text,
        rules: false,
        published: false,
    };
    let (status, out) = run_breaking(repo.path(), &args);
    assert_eq!(status, BREAKING, "{out}");
    assert!(out.contains("QuoteRequest.memo"), "{out}");
}

#[test]
fn release_check_needs_the_version_bump_and_the_changelog_entry() {
    let repo = repository(true);
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert_eq!(status, OK, "{out}");
    assert!(out.contains("base v0.1.0 ("), "{out}");
    assert!(out.contains("the newest v* tag reachable from HEAD"), "{out}");

    make_memo_required(repo.path());
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert_eq!(status, BREAKING, "{out}");
    assert!(
        out.contains(
            "bridge-contract, bridge-server, bridge-client: breaking changes since 0.1.0 need version 0.2.0 or later"
        ),
        "{out}"
    );
    assert!(out.contains("CHANGELOG.md is missing"), "{out}");

    set_version(repo.path(), "0.2.0");
    let changelog = "# Changelog\n\n## [Unreleased]\n\n- Quotes take a memo.\n\n## [0.1.0]\n\n- `QuoteRequest.memo` is not here yet\n";
    write(repo.path(), "CHANGELOG.md", changelog);
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert_eq!(status, BREAKING, "{out}");
    assert!(out.contains("does not name 1 breaking change(s)") && out.contains("`QuoteRequest.memo`"), "{out}");
    assert!(!out.contains("need version"), "{out}");

    let (_, markdown) = run_breaking(repo.path(), &breaking_args("v0.1.0", Format::Markdown));
    write(repo.path(), "CHANGELOG.md", &changelog.replace("- Quotes take a memo.\n", &markdown));
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert_eq!(status, OK, "{out}");
}

#[test]
fn release_check_compares_with_the_first_commit_without_a_release_tag() {
    let repo = repository(false);
    make_memo_required(repo.path());
    git(repo.path(), &["commit", "-q", "-am", "memo"]);
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert!(out.contains("the first commit (no v* tag is reachable from HEAD, no release in CHANGELOG.md)"), "{out}");
    assert_eq!(status, BREAKING, "{out}");

    // The newest release by version, not by name: v0.10.0 is newer than v0.9.0.
    git(repo.path(), &["tag", "v0.9.0", "HEAD~1"]);
    git(repo.path(), &["tag", "vnext", "HEAD~1"]); // not a release: not a version
    git(repo.path(), &["tag", "v0.10.0", "HEAD"]);
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert!(out.contains("base v0.10.0 ("), "{out}");
    assert_eq!(status, OK, "{out}");
}

#[test]
fn a_clone_without_tags_finds_the_release_commit_changelog_md_records() {
    let repo = repository(false);
    make_memo_required(repo.path());
    set_version(repo.path(), "0.2.0");
    git(repo.path(), &["commit", "-q", "-am", "memo, released as 0.2.0"]);
    let head = Command::new("git").arg("-C").arg(repo.path()).args(["rev-parse", "HEAD"]).output().unwrap().stdout;
    let release = String::from_utf8(head).unwrap().trim()[..12].to_owned();
    let changelog = format!(
        "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-11-22\n\nRelease commit {release}.\n\n## [0.1.0]\n\ncommit 0000000\n"
    );
    write(repo.path(), "CHANGELOG.md", &changelog);
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert!(out.contains("the commit CHANGELOG.md records for release 0.2.0"), "{out}");
    // The memo came before the recorded release (the first commit would have called it breaking).
    assert_eq!(status, OK, "{out}");

    // A recorded commit that is not in this history cannot be the base: exit 2, saying why.
    write(repo.path(), "CHANGELOG.md", &changelog.replace(&release, "abcdef1234567"));
    let (status, out) = run_release_check(repo.path(), &ReleaseCheckArgs { base: None });
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("records release 0.2.0 at commit abcdef1234567"), "{out}");
}

#[test]
fn the_recorded_release_is_the_newest_version_heading_and_its_first_commit_word() {
    let text = "# Changelog\n\nSee `commit <hash>`.\n\n## [Unreleased]\n\n- commit abcdef0 is not a release\n\n\
                ## [0.2.0] - 2026-12-01\n\nThe release (tag `v0.2.0`, commit 417ce9d5c038f1).\n\n## [0.1.0]\n\ncommit 1234567\n";
    assert_eq!(git::recorded_release(text), Some(("0.2.0".to_owned(), "417ce9d5c038f1".to_owned())));
    // The newest release section names no commit: nothing is recorded (an older section is not used).
    assert_eq!(git::recorded_release("## [0.2.0]\n\nno hash\n\n## [0.1.0]\n\ncommit 1234567\n"), None);
    // Not hex, or too short.
    assert_eq!(git::recorded_release("## [0.2.0]\n\ncommit xyz1234 commit 12ab\n"), None);
    assert_eq!(git::recorded_release("## [Unreleased]\n\ncommit 1234567\n"), None);
}

/// `--published` compares `src/generated/openapi.json` as committed at the base with the working tree's published
/// form (made from its schema/ now), not the two schemas; a base without the file cannot be compared.
#[test]
fn published_compares_the_published_documents() {
    let repo = repository(true);
    let published_base =
        serde_json::to_string(&serde_norway::from_str::<serde_json::Value>(BASE_SCHEMA).unwrap()).unwrap();
    let args = BreakingArgs { published: true, ..breaking_args("v0.1.0", Format::Text) };
    let (status, out) = run_breaking(repo.path(), &args);
    assert_eq!(status, CANNOT_COMPARE, "{out}");
    assert!(out.contains("has no src/generated/openapi.json"), "{out}");

    write(repo.path(), "src/generated/openapi.json", &published_base);
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "published"]);
    // A request member of schema/ is retyped; the published document follows it.
    write(repo.path(), "schema/openapi.yaml", &BASE_SCHEMA.replace("amount: {type: string}", "amount: {type: number}"));
    let (status, out) =
        run_breaking(repo.path(), &BreakingArgs { published: true, ..breaking_args("HEAD", Format::Text) });
    assert_eq!(status, BREAKING, "{out}");
    assert!(out.contains("(the published documents, not schema/)"), "{out}");
    assert!(out.contains("QuoteRequest.amount") && out.contains("type-changed"), "{out}");
}
