//! Results: one line per check (`PASS area::name` / `FAIL area::name: reason`), the closing summary
//! `N passed, M failed`, and JUnit XML (one test suite per area) for CI systems.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

/// The outcome of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// `area::name`.
    pub name: String,
    /// `None`: passed; `Some(reason)`: failed.
    pub failure: Option<String>,
    pub duration: Duration,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// The part of the name before the first `::`.
    pub fn area(&self) -> &str {
        self.name.split("::").next().unwrap_or(&self.name)
    }

    /// `PASS area::name` or `FAIL area::name: reason` (the reason on one line).
    pub fn line(&self) -> String {
        match &self.failure {
            None => format!("PASS {}", self.name),
            Some(reason) => format!("FAIL {}: {}", self.name, one_line(reason)),
        }
    }
}

fn one_line(reason: &str) -> String {
    reason.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ")
}

/// Every result of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub results: Vec<CheckResult>,
    pub duration: Duration,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed()).count()
    }

    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed(), self.failed())
    }

    /// The result of the check named `name`.
    pub fn get(&self, name: &str) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.name == name)
    }

    /// The failed checks.
    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(|r| !r.passed())
    }

    /// Checks per area, in order of first appearance: `(area, passed, failed)`.
    pub fn per_area(&self) -> Vec<(String, usize, usize)> {
        let mut areas: Vec<(String, usize, usize)> = Vec::new();
        for r in &self.results {
            let i = match areas.iter().position(|(a, _, _)| a == r.area()) {
                Some(i) => i,
                None => {
                    areas.push((r.area().to_owned(), 0, 0));
                    areas.len() - 1
                }
            };
            if r.passed() {
                areas[i].1 += 1;
            } else {
                areas[i].2 += 1;
            }
        }
        areas
    }

    /// JUnit XML: one `testsuite` per area, one `testcase` per check (`classname` = area); a failed check is a
    /// `failure` whose message is the reason.
    pub fn junit(&self, target: &str) -> anyhow::Result<String> {
        let mut report = JunitReport::new("bridge-conformance");
        report.set_time(self.duration);
        for (area, _, _) in self.per_area() {
            let mut suite = TestSuite::new(area.as_str());
            suite.add_property(quick_junit::Property::new("base-url", target));
            let mut time = Duration::ZERO;
            for r in self.results.iter().filter(|r| r.area() == area) {
                let status = match &r.failure {
                    None => TestCaseStatus::success(),
                    Some(reason) => {
                        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        status.set_message(one_line(reason)).set_description(reason.as_str());
                        status
                    }
                };
                let mut case = TestCase::new(r.name.as_str(), status);
                case.set_classname(area.as_str()).set_time(r.duration);
                time += r.duration;
                suite.add_test_case(case);
            }
            suite.set_time(time);
            report.add_test_suite(suite);
        }
        Ok(report.to_string()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_summary_and_junit() {
        let report = Report {
            results: vec![
                CheckResult { name: "auth::a".into(), failure: None, duration: Duration::from_millis(3) },
                CheckResult {
                    name: "auth::b".into(),
                    failure: Some("first\nsecond".into()),
                    duration: Duration::from_millis(4),
                },
                CheckResult { name: "schema::c".into(), failure: None, duration: Duration::from_millis(5) },
            ],
            duration: Duration::from_millis(12),
        };
        assert_eq!(report.results[1].line(), "FAIL auth::b: first | second");
        assert_eq!(report.summary(), "2 passed, 1 failed");
        assert_eq!(report.per_area(), vec![("auth".into(), 1, 1), ("schema".into(), 1, 0)]);
        let xml = report.junit("http://x").unwrap();
        assert!(xml.contains(r#"<testsuite name="auth" tests="2""#), "{xml}");
        assert!(xml.contains(r#"<failure message="first | second""#), "{xml}");
    }
}
