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
    /// No `v*` tag is reachable from HEAD: the first commit.
    FirstCommit(Commit),
}

impl ReleaseBase {
    pub fn commit(&self) -> &Commit {
        match self {
            ReleaseBase::Tag(c) | ReleaseBase::FirstCommit(c) => c,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            ReleaseBase::Tag(c) => {
                format!("{}, the newest v* tag reachable from HEAD", c.describe())
            }
            ReleaseBase::FirstCommit(c) => {
                format!("{}, the first commit (no v* tag is reachable from HEAD)", c.describe())
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

/// The last release: the newest `v<semver>` tag (by version order) reachable from HEAD, else the first commit.
pub fn last_release(root: &Path) -> anyhow::Result<ReleaseBase> {
    let tags = git_stdout(root, &["tag", "--merged", "HEAD", "--list", "v*", "--sort=-version:refname"])?;
    let release = |tag: &&str| tag.strip_prefix('v').is_some_and(|v| semver::Version::parse(v).is_ok());
    if let Some(tag) = tags.lines().map(str::trim).find(release) {
        return Ok(ReleaseBase::Tag(resolve(root, tag)?));
    }
    let roots = git_stdout(root, &["rev-list", "--max-parents=0", "HEAD"])?;
    // With several root commits (merged histories), the oldest is listed last.
    let Some(first) = roots.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        bail!("HEAD has no commits");
    };
    Ok(ReleaseBase::FirstCommit(resolve(root, first)?))
}

/// Whether the repository is a shallow clone (then older tags and commits may be missing).
pub fn is_shallow(root: &Path) -> bool {
    git_stdout(root, &["rev-parse", "--is-shallow-repository"]).map(|s| s.trim() == "true").unwrap_or(false)
}
