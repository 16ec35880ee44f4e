//! The release policy `cargo xtask release-check` enforces (docs/contributing.md, "API evolution"):
//!
//! * the released crates ([`RELEASED`]) share one version (they are generated from one schema and released
//!   together);
//! * a breaking change since the base release needs the version bumped past it: the minor on 0.x (0.1.3 →
//!   0.2.0), the major from 1.0 on (1.4.2 → 2.0.0); the version never goes backwards;
//! * CHANGELOG.md names every breaking change: the subject of each (`Component.member`, `operationId.status`,
//!   `Enum.VALUE`, `operationId`, as `cargo xtask breaking` prints it) appears in the part of CHANGELOG.md above
//!   the base version's `## [x.y.z]` heading (`## [Unreleased]` and any newer release).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{anyhow, Context};
use semver::Version;

use crate::breaking::Change;

/// The crates released together: (package name, manifest path relative to the workspace root).
pub const RELEASED: [(&str, &str); 3] = [
    ("bridge-contract", "Cargo.toml"),
    ("bridge-server", "crates/bridge-server/Cargo.toml"),
    ("bridge-client", "crates/bridge-client/Cargo.toml"),
];

/// The package version a manifest declares, following `version.workspace = true` to `workspace_manifest`.
pub fn package_version(manifest: &str, workspace_manifest: &str) -> anyhow::Result<Version> {
    let table: toml::Table = toml::from_str(manifest).context("parsing a Cargo.toml")?;
    let version = table.get("package").and_then(|p| p.get("version")).ok_or_else(|| anyhow!("no [package] version"))?;
    let text = match version {
        toml::Value::String(v) => v.clone(),
        toml::Value::Table(t) if t.get("workspace").and_then(toml::Value::as_bool) == Some(true) => {
            let workspace: toml::Table =
                toml::from_str(workspace_manifest).context("parsing the workspace Cargo.toml")?;
            workspace
                .get("workspace")
                .and_then(|w| w.get("package"))
                .and_then(|p| p.get("version"))
                .and_then(toml::Value::as_str)
                .ok_or_else(|| {
                    anyhow!("version.workspace = true, but the workspace has no [workspace.package] version")
                })?
                .to_owned()
        }
        other => return Err(anyhow!("unexpected package version {other}")),
    };
    Version::parse(&text).with_context(|| format!("version `{text}` is not semver"))
}

/// The lowest version a release with breaking changes since `base` may have.
pub fn next_breaking(base: &Version) -> Version {
    if base.major == 0 {
        Version::new(0, base.minor + 1, 0)
    } else {
        Version::new(base.major + 1, 0, 0)
    }
}

/// Problems with the head versions of the released crates, given their base versions (`None`: the crate did
/// not exist at the base) and whether anything breaks.
pub fn version_problems(base: &[(&str, Option<Version>)], head: &[(&str, Version)], breaking: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let versions: BTreeSet<String> = head.iter().map(|(_, v)| v.to_string()).collect();
    if versions.len() > 1 {
        let list: Vec<String> = head.iter().map(|(name, v)| format!("{name} {v}")).collect();
        problems.push(format!("the released crates must share one version; they have {}", list.join(", ")));
    }
    // One message per kind of problem and pair of versions, naming every crate it concerns.
    let mut grouped: BTreeMap<(bool, String, String), Vec<&str>> = BTreeMap::new();
    for ((name, base), (_, head)) in base.iter().zip(head) {
        let Some(base) = base else { continue };
        let core = |v: &Version| (v.major, v.minor, v.patch);
        if core(head) < core(base) {
            grouped.entry((false, base.to_string(), head.to_string())).or_default().push(name);
        } else if breaking && core(head) < core(&next_breaking(base)) {
            grouped.entry((true, base.to_string(), head.to_string())).or_default().push(name);
        }
    }
    for ((too_low_for_breaking, base, head), names) in grouped {
        let names = names.join(", ");
        if too_low_for_breaking {
            let needed = next_breaking(&Version::parse(&base).expect("parsed before"));
            problems.push(format!(
                "{names}: breaking changes since {base} need version {needed} or later (0.x bumps the minor, 1.x+ \
                 the major); it is {head}. Set `version = \"{needed}\"` in {} and in the `bridge-contract` \
                 requirement of bridge-server and bridge-client",
                RELEASED.map(|(_, manifest)| manifest).join(", ")
            ));
        } else {
            problems.push(format!("{names}: version {head} is older than {base}, the base release's"));
        }
    }
    problems
}

/// The sections of CHANGELOG.md newer than `base`: from the first `## ` heading (`## [Unreleased]`) to the
/// `## [base]` heading (`## base` and `## [vbase]` also match); the preamble above the first section does not
/// count. `None` when there is no such heading.
pub fn newer_than<'c>(changelog: &'c str, base: &Version) -> Option<&'c str> {
    let mut offset = 0;
    let mut first_section = None;
    for line in changelog.split_inclusive('\n') {
        if let Some(rest) = line.trim_end().strip_prefix("## ") {
            let start = *first_section.get_or_insert(offset);
            let title = rest.trim().trim_start_matches('[');
            let title = title.strip_prefix('v').unwrap_or(title);
            let version = title.split([']', ' ']).next().unwrap_or_default();
            if version == base.to_string() {
                return Some(&changelog[start..offset]);
            }
        }
        offset += line.len();
    }
    None
}

/// The breaking changes whose subject does not appear in `text`.
pub fn unnamed<'c>(changes: &'c [Change], text: &str) -> Vec<&'c Change> {
    changes.iter().filter(|c| c.is_breaking() && !text.contains(&c.subject)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn a_breaking_change_bumps_the_minor_before_1_0_and_the_major_after() {
        assert_eq!(next_breaking(&v("0.1.0")), v("0.2.0"));
        assert_eq!(next_breaking(&v("0.1.7")), v("0.2.0"));
        assert_eq!(next_breaking(&v("1.4.2")), v("2.0.0"));
        assert_eq!(next_breaking(&v("3.0.0-rc.1")), v("4.0.0"));
    }

    #[test]
    fn versions_are_checked_against_the_base_release() {
        let base = [("a", Some(v("0.1.0"))), ("b", Some(v("0.1.0"))), ("new", None)];
        let bumped = [("a", v("0.2.0")), ("b", v("0.2.0")), ("new", v("0.2.0"))];
        let same = [("a", v("0.1.0")), ("b", v("0.1.0")), ("new", v("0.1.0"))];
        let patch = [("a", v("0.1.1")), ("b", v("0.1.1")), ("new", v("0.1.1"))];
        assert!(version_problems(&base, &bumped, true).is_empty());
        assert!(version_problems(&base, &same, false).is_empty());
        assert!(version_problems(&base, &patch, false).is_empty());
        // A pre-release of the next minor is enough.
        let pre = [("a", v("0.2.0-alpha.1")), ("b", v("0.2.0-alpha.1")), ("new", v("0.2.0-alpha.1"))];
        assert!(version_problems(&base, &pre, true).is_empty());
        let problems = version_problems(&base, &patch, true);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("a, b: breaking changes since 0.1.0 need version 0.2.0 or later"),
            "{problems:?}"
        );
        assert!(problems[0].contains("it is 0.1.1") && problems[0].contains("`version = \"0.2.0\"`"), "{problems:?}");
        let older = [("a", v("0.0.9")), ("b", v("0.0.9")), ("new", v("0.0.9"))];
        assert!(version_problems(&base, &older, false)[0].contains("older than 0.1.0"));
        let split = [("a", v("0.2.0")), ("b", v("0.1.0")), ("new", v("0.2.0"))];
        assert!(version_problems(&base, &split, false)[0].contains("share one version"));
    }

    #[test]
    fn the_version_of_a_manifest_may_come_from_the_workspace() {
        let workspace = "[workspace]\nmembers = []\n[workspace.package]\nversion = \"1.2.3\"\n";
        assert_eq!(package_version("[package]\nname = \"a\"\nversion = \"0.4.0\"\n", workspace).unwrap(), v("0.4.0"));
        assert_eq!(
            package_version("[package]\nname = \"a\"\nversion.workspace = true\n", workspace).unwrap(),
            v("1.2.3")
        );
        assert!(package_version("[package]\nname = \"a\"\n", workspace).is_err());
    }

    #[test]
    fn only_the_sections_above_the_base_release_count() {
        let changelog = "# Changelog\n\nSubjects look like `X.y`.\n\n## [Unreleased]\n\n- `A.b` removed\n\n## [0.2.0] - 2026-01-01\n\n- `C.d`\n\n## [0.1.0] - 2025-01-01\n\n- `E.f`\n";
        let newer = newer_than(changelog, &v("0.1.0")).unwrap();
        assert!(newer.starts_with("## [Unreleased]"), "the preamble does not count: {newer:?}");
        assert!(
            newer.contains("`A.b`") && newer.contains("`C.d`") && !newer.contains("`E.f`") && !newer.contains("`X.y`")
        );
        let newer = newer_than(changelog, &v("0.2.0")).unwrap();
        assert!(newer.contains("`A.b`") && !newer.contains("`C.d`"));
        assert_eq!(newer_than("## v0.3.0\n", &v("0.3.0")), Some(""));
        assert_eq!(newer_than(changelog, &v("0.0.1")), None);
    }
}
