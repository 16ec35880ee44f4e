//! Reading other revisions of this repository through the `git` command line (read-only: nothing here changes
//! the repository, the index or the working tree).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};

/// A revision resolved to its commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// What the user or the release rule named (`v0.1.0`, `main~3`, a hash).
    pub name: String,
    /// The full commit hash.
    pub hash: String,
}

impl Commit {
    /// `v0.1.0 (417ce9d)`, or just the short hash when the name is the hash.
    pub fn describe(&self) -> String {
        let short = &self.hash[..self.hash.len().min(9)];
        if self.hash.starts_with(&self.name) {
            short.to_owned()
        } else {
            format!("{} ({short})", self.name)
        }
    }
}

/// Why a base revision was chosen for the release check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseBase {
    /// The newest `v*` tag reachable from HEAD, by version order.
    Tag(Commit),
    /// No `v*` tag is reachable from HEAD (a clone without tags, as CI's may be): the commit that `CHANGELOG.md`
    /// records for its newest release (`## [0.1.0] - date` followed by `... commit <hash> ...` in that section).
    Changelog { version: String, commit: Commit },
    /// Neither a `v*` tag nor a release recorded in `CHANGELOG.md`: the first commit.
    FirstCommit(Commit),
}

impl ReleaseBase {
    pub fn commit(&self) -> &Commit {
        match self {
            ReleaseBase::Tag(c) | ReleaseBase::FirstCommit(c) | ReleaseBase::Changelog { commit: c, .. } => c,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            ReleaseBase::Tag(c) => {
                format!("{}, the newest v* tag reachable from HEAD", c.describe())
            }
            ReleaseBase::Changelog { version, commit } => format!(
                "{}, the commit CHANGELOG.md records for release {version} (no v* tag is reachable from HEAD)",
                commit.describe()
            ),
            ReleaseBase::FirstCommit(c) => {
                format!(
                    "{}, the first commit (no v* tag is reachable from HEAD, no release in CHANGELOG.md)",
                    c.describe()
                )
            }
        }
    }
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .with_context(|| format!("running `git {}` (is git installed?)", args.join(" ")))
}

fn git_stdout(root: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = git(root, args)?;
    if !out.status.success() {
        bail!("`git {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    String::from_utf8(out.stdout)
        .with_context(|| format!("`git {}` printed something that is not UTF-8", args.join(" ")))
}

/// Resolves `rev` (a tag, branch, hash, `HEAD~2`...) to a commit.
pub fn resolve(root: &Path, rev: &str) -> anyhow::Result<Commit> {
    if rev.starts_with('-') {
        bail!("`{rev}` is not a revision");
    }
    let out = git(root, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])?;
    if !out.status.success() {
        bail!("`{rev}` is not a commit of this repository (try a tag such as v0.1.0, a branch, or a hash)");
    }
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(Commit { name: rev.to_owned(), hash })
}

/// The files under `dir` (a path relative to the repository root) at `commit`, as (path, contents).
pub fn files_at(root: &Path, commit: &Commit, dir: &str) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let listing = git_stdout(root, &["ls-tree", "-r", "--name-only", "-z", &commit.hash, "--", dir])?;
    let mut files = Vec::new();
    for path in listing.split('\0').filter(|p| !p.is_empty()) {
        let out = git(root, &["show", &format!("{}:{path}", commit.hash)])?;
        if !out.status.success() {
            bail!("reading {path} at {}: {}", commit.describe(), String::from_utf8_lossy(&out.stderr).trim());
        }
        files.push((path.to_owned(), out.stdout));
    }
    Ok(files)
}

/// One file at `commit`, or `None` when it does not exist there.
pub fn file_at(root: &Path, commit: &Commit, path: &str) -> anyhow::Result<Option<String>> {
    let out = git(root, &["show", &format!("{}:{path}", commit.hash)])?;
    if !out.status.success() {
        return Ok(None);
    }
    Ok(Some(String::from_utf8(out.stdout).with_context(|| format!("{path} at {} is not UTF-8", commit.describe()))?))
}

/// The last release: the newest `v<semver>` tag (by version order) reachable from HEAD; else the commit that
/// `CHANGELOG.md` (in the working tree) records for its newest release, when that commit is an ancestor of HEAD;
/// else the first commit.
pub fn last_release(root: &Path) -> anyhow::Result<ReleaseBase> {
    let tags = git_stdout(root, &["tag", "--merged", "HEAD", "--list", "v*", "--sort=-version:refname"])?;
    let release = |tag: &&str| tag.strip_prefix('v').is_some_and(|v| semver::Version::parse(v).is_ok());
    if let Some(tag) = tags.lines().map(str::trim).find(release) {
        return Ok(ReleaseBase::Tag(resolve(root, tag)?));
    }
    let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap_or_default();
    if let Some((version, hash)) = recorded_release(&changelog) {
        let commit = resolve(root, &hash)
            .with_context(|| format!("CHANGELOG.md records release {version} at commit {hash}, which is unknown"))?;
        let ancestor = git(root, &["merge-base", "--is-ancestor", &commit.hash, "HEAD"])?;
        if !ancestor.status.success() {
            bail!("CHANGELOG.md records release {version} at commit {hash}, which is not an ancestor of HEAD");
        }
        return Ok(ReleaseBase::Changelog { version, commit });
    }
    let roots = git_stdout(root, &["rev-list", "--max-parents=0", "HEAD"])?;
    // With several root commits (merged histories), the oldest is listed last.
    let Some(first) = roots.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        bail!("HEAD has no commits");
    };
    Ok(ReleaseBase::FirstCommit(resolve(root, first)?))
}

/// The newest release `CHANGELOG.md` records, as (version, commit): the first `## [x.y.z]` heading (a version,
/// not `Unreleased`) and the first `commit <hex>` (7 to 40 hex digits) in its section.
pub fn recorded_release(changelog: &str) -> Option<(String, String)> {
    let mut lines = changelog.lines().skip_while(|line| {
        let version = line.strip_prefix("## [").and_then(|rest| rest.split_once(']')).map(|(v, _)| v);
        version.is_none_or(|v| semver::Version::parse(v).is_err())
    });
    let heading = lines.next()?;
    let version = heading.strip_prefix("## [")?.split_once(']')?.0.to_owned();
    let section = lines.take_while(|line| !line.starts_with("## "));
    for line in section {
        let mut words = line.split(|c: char| !c.is_ascii_alphanumeric());
        while let Some(word) = words.next() {
            if word == "commit" {
                if let Some(hash) = words.find(|w| !w.is_empty()) {
                    if (7..=40).contains(&hash.len()) && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                        return Some((version, hash.to_owned()));
                    }
                }
            }
        }
    }
    None
}

/// Whether the repository is a shallow clone (then older tags and commits may be missing).
pub fn is_shallow(root: &Path) -> bool {
    git_stdout(root, &["rev-parse", "--is-shallow-repository"]).map(|s| s.trim() == "true").unwrap_or(false)
}
