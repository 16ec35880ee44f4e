//! Printing a [`Comparison`]: grouped text for people, JSON for machines, Markdown for CHANGELOG.md.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::model::{Change, Comparison, Group, Rule, Side, Use};

/// How many operations a header or a Markdown line names before it says "and N more".
const NAMED_USES: usize = 6;

/// As [`NAMED_USES`], for a CHANGELOG line.
const NAMED_USES_MARKDOWN: usize = 3;

/// A change on one line: classification, audiences, rule, subject, what changed, JSON path and the uses
/// ` (client→server: quoteBridge; server→client: getBridge, listUserEvents)` (the form of the fixtures'
/// `expected.txt`).
#[cfg(test)]
pub fn line(change: &Change) -> String {
    let uses =
        if change.uses.is_empty() { String::new() } else { format!(" ({})", describe_uses(&change.uses, usize::MAX)) };
    format!(
        "{:<10} {:<15} {}: {} [{}] at {}{uses}",
        if change.is_breaking() { "BREAKING" } else { "compatible" },
        change.breaks.label(),
        change.subject,
        change.detail,
        change.rule.id(),
        change.path,
    )
}

fn describe_uses(uses: &[Use], limit: usize) -> String {
    let mut parts = Vec::new();
    for side in Side::BOTH {
        let labels: BTreeSet<String> = uses.iter().filter(|u| u.side == side).map(|u| u.operation.label()).collect();
        if labels.is_empty() {
            continue;
        }
        let mut named: Vec<String> = labels.iter().take(limit).cloned().collect();
        if labels.len() > named.len() {
            named.push(format!("and {} more", labels.len() - named.len()));
        }
        parts.push(format!("{}: {}", side.arrow(), named.join(", ")));
    }
    parts.join("; ")
}

fn summary(cmp: &Comparison) -> String {
    if cmp.changes.is_empty() {
        return "no changes".to_owned();
    }
    let breaking: Vec<&Change> = cmp.breaking().collect();
    let clients = breaking.iter().filter(|c| c.breaks.clients).count();
    let servers = breaking.iter().filter(|c| c.breaks.servers).count();
    format!(
        "{} change(s): {} breaking (for clients {clients}, for servers {servers}), {} compatible",
        cmp.changes.len(),
        breaking.len(),
        cmp.changes.len() - breaking.len()
    )
}

/// The report for people: a summary line, then the changes grouped by operation (and by shared component, with
/// the operations that use it), one line each: classification, audiences, subject, what changed, rule, JSON path.
pub fn text(cmp: &Comparison, base: &str, head: &str) -> String {
    let mut out = format!("schema/ at {base} → {head}: {}\n", summary(cmp));
    let mut current: Option<&Group> = None;
    for (i, change) in cmp.changes.iter().enumerate() {
        if current != Some(&change.group) {
            current = Some(&change.group);
            let uses: Vec<Use> =
                cmp.changes[i..].iter().take_while(|c| c.group == change.group).flat_map(|c| c.uses.clone()).collect();
            let header = match &change.group {
                Group::Operation(op) => op.title(),
                Group::Component { name, .. } => {
                    let used = describe_uses(&uses, NAMED_USES);
                    if used.is_empty() {
                        name.clone()
                    } else {
                        format!("{name} — used {used}")
                    }
                }
                Group::Document => "the document".to_owned(),
            };
            let _ = writeln!(out, "\n{header}");
        }
        let _ = writeln!(
            out,
            "  {:<10} {:<15} {}: {}  [{}]  {}",
            if change.is_breaking() { "BREAKING" } else { "compatible" },
            change.breaks.label(),
            change.subject,
            change.detail,
            change.rule.id(),
            change.path
        );
    }
    out
}

#[derive(Serialize)]
struct JsonReport<'a> {
    base: &'a str,
    head: &'a str,
    breaking: bool,
    counts: Counts,
    changes: Vec<JsonChange<'a>>,
}

#[derive(Serialize)]
struct Counts {
    changes: usize,
    breaking: usize,
    breaking_for_clients: usize,
    breaking_for_servers: usize,
}

#[derive(Serialize)]
struct JsonChange<'a> {
    classification: &'static str,
    clients: &'static str,
    servers: &'static str,
    effect: &'static str,
    #[serde(flatten)]
    change: &'a Change,
}

/// The report for machines: every change with its classification per audience, rule, subject, JSON path,
/// group (operation or component) and the operations that use it.
pub fn json(cmp: &Comparison, base: &str, head: &str) -> String {
    let word = |breaks: bool| if breaks { "breaking" } else { "compatible" };
    let report = JsonReport {
        base,
        head,
        breaking: cmp.is_breaking(),
        counts: Counts {
            changes: cmp.changes.len(),
            breaking: cmp.breaking().count(),
            breaking_for_clients: cmp.breaking().filter(|c| c.breaks.clients).count(),
            breaking_for_servers: cmp.breaking().filter(|c| c.breaks.servers).count(),
        },
        changes: cmp
            .changes
            .iter()
            .map(|change| JsonChange {
                classification: word(change.is_breaking()),
                clients: word(change.breaks.clients),
                servers: word(change.breaks.servers),
                effect: change.rule.effect().name(),
                change,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&report).expect("a report serialises");
    text.push('\n');
    text
}

/// Lines to paste into CHANGELOG.md: breaking changes, then the other changes (reworded descriptions are only
/// counted). Every breaking line names its subject in backticks, which is what `cargo xtask release-check`
/// looks for.
pub fn markdown(cmp: &Comparison, base: &str) -> String {
    let mut out = String::new();
    let line = |c: &Change| {
        let used = describe_uses(&c.uses, NAMED_USES_MARKDOWN);
        let used = if used.is_empty() { String::new() } else { format!(" ({used})") };
        if c.is_breaking() {
            format!("- `{}`: {}; breaking for {}{used}\n", c.subject, c.detail, c.breaks.label().replace('+', " and "))
        } else {
            format!("- `{}`: {}{used}\n", c.subject, c.detail)
        }
    };
    let breaking: Vec<&Change> = cmp.breaking().collect();
    let other: Vec<&Change> =
        cmp.changes.iter().filter(|c| !c.is_breaking() && c.rule != Rule::DescriptionChanged).collect();
    let reworded = cmp.changes.iter().filter(|c| c.rule == Rule::DescriptionChanged).count();
    let _ =
        writeln!(out, "<!-- schema changes since {base}: `cargo xtask breaking --base {base} --format markdown` -->");
    if !breaking.is_empty() {
        out.push_str("### Breaking changes\n\n");
        breaking.iter().for_each(|c| out.push_str(&line(c)));
        out.push('\n');
    }
    if !other.is_empty() {
        out.push_str("### Compatible changes\n\n");
        other.iter().for_each(|c| out.push_str(&line(c)));
        out.push('\n');
    }
    if reworded > 0 {
        let _ = writeln!(out, "<!-- and {reworded} reworded description(s) -->");
    }
    if cmp.changes.is_empty() {
        out.push_str("<!-- no schema changes -->\n");
    }
    out
}

/// The rules as a Markdown table: what each covers and whom it breaks in requests (client → server) and in
/// responses and events (server → client). docs/contributing.md contains it verbatim (a test checks);
/// `cargo xtask breaking --rules` prints it.
pub fn rules_table() -> String {
    let mut out = String::from(
        "| rule | the change | in requests (client → server) | in responses and events (server → client) |\n|---|---|---|---|\n",
    );
    for rule in Rule::ALL {
        let cell = |side: Side| {
            if !rule.found().includes(side) {
                return if rule.found() == super::Found::Nowhere { "compatible" } else { "—" };
            }
            let breaks = rule.effect().breaks(side);
            match (breaks.clients, breaks.servers) {
                (true, true) => "breaks both",
                (true, false) => "breaks clients",
                (false, true) => "breaks servers",
                (false, false) => "compatible",
            }
        };
        let meaning = rule.meaning().split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(out, "| `{}` | {meaning} | {} | {} |", rule.id(), cell(Side::Request), cell(Side::Response));
    }
    out
}
