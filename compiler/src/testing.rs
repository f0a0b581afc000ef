//! Policy tests (`toolgate test`): cases in TOML files beside the policies
//! (`*.test.toml` in the project directory or its `tests/`), each asking the
//! compiled table one question. Coverage counts the rows of the decision
//! table (configuration x outcome) the cases exercised, out of the rows any
//! context can reach.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolgate_runtime::{Classified, Envelope, Reason, Role, RunState, Table, GATE_ORDER};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    case: Vec<toml::Spanned<Case>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    configuration: Option<String>,
    /// admin | user | none (default user).
    role: Option<String>,
    consumer: Option<String>,
    enforcement: Option<String>,
    /// A stored run state, as its JSON form (`allowedToolNames`, `excludedToolNames`).
    run: Option<toml::Value>,
    tool: Option<String>,
    /// `offered`, `observed` (offered, observed only), or a reason code; for
    /// `answer`: `success`, `toolFailure` or a refusal kind.
    expect: Option<String>,
    /// The exact unavailable list, in order: `"tool reason"` each.
    unavailable: Option<Vec<String>>,
    /// A gateway answer file (relative to the test file): a body, or `{"httpStatus","origin","body"}`.
    answer: Option<String>,
    origin: Option<String>,
    http_status: Option<u16>,
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub file: String,
    pub line: usize,
    pub name: String,
    pub passed: bool,
    pub expected: String,
    pub actual: String,
}

/// A row of the decision table: a configuration and an outcome (a gate's
/// reason, or `offered`).
pub type Row = (String, String);

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub reachable: usize,
    pub covered: usize,
    pub percent: f64,
    /// Reachable rows no case exercised.
    pub missed: Vec<Row>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub passed: usize,
    pub failed: usize,
    pub cases: Vec<CaseResult>,
    pub coverage: Option<Coverage>,
}

/// Test files of a project: `*.test.toml` in the directory and in `tests/`.
pub fn test_files(project: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [project.to_path_buf(), project.join("tests")] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(".test.toml"))
                })
                .collect();
            v.sort();
            out.extend(v);
        }
    }
    out
}

fn role(s: Option<&str>) -> Result<Role, String> {
    match s.unwrap_or("user") {
        "admin" => Ok(Role::Admin),
        "user" => Ok(Role::User),
        "none" => Ok(Role::None),
        other => Err(format!("unknown role `{other}` (admin, user or none)")),
    }
}

fn outcome_of(allowed: bool, observed: bool, reason: Option<Reason>) -> String {
    match (allowed, observed, reason) {
        (true, true, _) => "observed".into(),
        (true, false, _) => "offered".into(),
        (false, _, Some(r)) => r.code().into(),
        (false, _, None) => "refused".into(),
    }
}

/// Run every case of every file against `table`. `covered` collects rows.
pub fn run(table: &Table, files: &[PathBuf], covered: &mut BTreeSet<Row>) -> Report {
    let mut report = Report::default();
    for path in files {
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                report.cases.push(CaseResult {
                    file: shown,
                    line: 1,
                    name: "(file)".into(),
                    passed: false,
                    expected: "a readable test file".into(),
                    actual: e.to_string(),
                });
                continue;
            }
        };
        let file: File = match toml::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                let line = e
                    .span()
                    .map(|s| text[..s.start].matches('\n').count() + 1)
                    .unwrap_or(1);
                report.cases.push(CaseResult {
                    file: shown,
                    line,
                    name: "(file)".into(),
                    passed: false,
                    expected: "a valid test file".into(),
                    actual: e.message().to_string(),
                });
                continue;
            }
        };
        for spanned in &file.case {
            let line = text[..spanned.span().start].matches('\n').count() + 1;
            let case = spanned.get_ref();
            let (expected, actual) = match run_case(table, path, case, covered) {
                Ok(pair) => pair,
                Err(e) => ("a valid case".into(), e),
            };
            report.cases.push(CaseResult {
                file: shown.clone(),
                line,
                name: case.name.clone(),
                passed: expected == actual,
                expected,
                actual,
            });
        }
    }
    report.passed = report.cases.iter().filter(|c| c.passed).count();
    report.failed = report.cases.len() - report.passed;
    report
}

fn run_case(
    table: &Table,
    path: &Path,
    c: &Case,
    covered: &mut BTreeSet<Row>,
) -> Result<(String, String), String> {
    if let Some(answer) = &c.answer {
        let expected = c.expect.clone().ok_or("an `answer` case needs `expect`")?;
        let file = path.parent().unwrap_or(Path::new(".")).join(answer);
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let envelope = Envelope::read(&bytes);
        let a = envelope.answer(c.http_status, c.origin.as_deref(), c.tool.as_deref());
        let actual = match table.classify_raw(&a) {
            Classified::Success => "success".to_string(),
            Classified::ToolFailure { .. } => "toolFailure".to_string(),
            Classified::Refusal { refusal } => refusal.kind.code().to_string(),
        };
        return Ok((expected, actual));
    }
    let config = c
        .configuration
        .as_deref()
        .ok_or("a case needs `configuration`")?;
    let mut ctx = table
        .context(config)
        .map_err(|e| e.to_string())?
        .role(role(c.role.as_deref())?)
        .consumer(c.consumer.as_deref())
        .enforcement(c.enforcement.as_deref());
    if let Some(run) = &c.run {
        let json = serde_json::to_vec(run).map_err(|e| e.to_string())?;
        ctx = ctx.run(&RunState::from_bytes(&json));
    }
    if let Some(list) = &c.unavailable {
        let got = ctx.unavailable();
        for u in &got {
            covered.insert((config.to_string(), u.reason.code().to_string()));
        }
        if ctx.offered_count() > 0 {
            covered.insert((config.to_string(), "offered".into()));
        }
        let actual: Vec<String> = got
            .iter()
            .map(|u| format!("{} {}", u.tool, u.reason.code()))
            .collect();
        return Ok((list.join(", "), actual.join(", ")));
    }
    let tool = c
        .tool
        .as_deref()
        .ok_or("a case needs `tool`, `unavailable` or `answer`")?;
    let expected = c.expect.clone().ok_or("a `tool` case needs `expect`")?;
    let d = ctx.decide(tool);
    let actual = outcome_of(d.allowed, d.observed_only, d.reason);
    let row = if d.allowed {
        "offered".to_string()
    } else {
        actual.clone()
    };
    covered.insert((config.to_string(), row));
    Ok((expected, actual))
}

/// Every row some context reaches: every configuration x role x consumer x
/// mode x tool, plus `notRegistered` (always reachable by asking a name).
pub fn reachable(table: &Table) -> BTreeSet<Row> {
    let spec = table.spec();
    let mut consumers: Vec<Option<&str>> = vec![None, Some("*")];
    consumers.extend(spec.consumers.iter().map(|c| Some(c.name.as_str())));
    let mut rows = BTreeSet::new();
    for cfg in table.configuration_names() {
        rows.insert((cfg.to_string(), Reason::NotRegistered.code().to_string()));
        for role in Role::ALL {
            for consumer in &consumers {
                for mode in [None, Some("observe"), Some("enforce")] {
                    let Ok(ctx) = table.context(cfg) else {
                        continue;
                    };
                    let ctx = ctx.role(role).consumer(*consumer).enforcement(mode);
                    for d in ctx.decisions() {
                        let row = if d.allowed {
                            "offered".to_string()
                        } else {
                            d.reason.map(|r| r.code().to_string()).unwrap_or_default()
                        };
                        rows.insert((cfg.to_string(), row));
                    }
                }
            }
        }
    }
    rows
}

pub fn coverage(table: &Table, covered: &BTreeSet<Row>) -> Coverage {
    let reach = reachable(table);
    let hit = reach.intersection(covered).count();
    let order = |r: &Row| {
        (
            r.0.clone(),
            GATE_ORDER
                .iter()
                .position(|g| g.code() == r.1)
                .unwrap_or(99),
        )
    };
    let mut missed: Vec<Row> = reach.difference(covered).cloned().collect();
    missed.sort_by_key(order);
    Coverage {
        reachable: reach.len(),
        covered: hit,
        percent: percent(hit, reach.len()),
        missed,
    }
}

/// Covered rows as a percentage of reachable ones; nothing reachable is 100%.
fn percent(covered: usize, reachable: usize) -> f64 {
    if reachable == 0 {
        100.0
    } else {
        covered as f64 * 100.0 / reachable as f64
    }
}

impl Coverage {
    /// Add another project's coverage; its missed rows carry `prefix`.
    pub fn add(&mut self, other: Coverage, prefix: &str) {
        self.reachable += other.reachable;
        self.covered += other.covered;
        self.percent = percent(self.covered, self.reachable);
        self.missed.extend(
            other
                .missed
                .into_iter()
                .map(|(cfg, row)| (format!("{prefix}{cfg}"), row)),
        );
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Report {
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for c in self.cases.iter().filter(|c| !c.passed) {
            let _ = writeln!(
                out,
                "FAIL {}:{}: {}\n  expected: {}\n  actual:   {}",
                c.file, c.line, c.name, c.expected, c.actual
            );
        }
        let _ = writeln!(out, "{} passed, {} failed", self.passed, self.failed);
        if let Some(cov) = &self.coverage {
            let _ = writeln!(
                out,
                "coverage: {} of {} reachable rows (configuration x outcome), {:.1}%",
                cov.covered, cov.reachable, cov.percent
            );
            for (cfg, row) in &cov.missed {
                let _ = writeln!(out, "  not exercised: {cfg} {row}");
            }
        }
        out
    }

    /// JUnit XML: one test suite per file.
    pub fn junit(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"toolgate\" tests=\"{}\" failures=\"{}\">",
            self.cases.len(),
            self.failed
        );
        let files: Vec<&str> = self
            .cases
            .iter()
            .map(|c| c.file.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for f in files {
            let cases: Vec<&CaseResult> = self.cases.iter().filter(|c| c.file == f).collect();
            let failures = cases.iter().filter(|c| !c.passed).count();
            let _ = writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">",
                xml_escape(f),
                cases.len(),
                failures
            );
            for c in cases {
                let _ = write!(
                    out,
                    "    <testcase name=\"{}\" classname=\"{}:{}\"",
                    xml_escape(&c.name),
                    xml_escape(f),
                    c.line
                );
                if c.passed {
                    out.push_str("/>\n");
                } else {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"expected {}, got {}\"/>\n    </testcase>",
                        xml_escape(&c.expected),
                        xml_escape(&c.actual)
                    );
                }
            }
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}
