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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub file: String,
    pub line: usize,
    pub name: String,
    pub passed: bool,
    pub expected: String,
    pub actual: String,
    /// How long the case took (JUnit's `time`; not in the JSON report, which
    /// stays the same from run to run).
    #[serde(skip)]
    pub seconds: f64,
}

/// A test file that cannot be run as written: unreadable, not a test file,
/// or a case that asks nothing answerable (an unknown expectation, role or
/// configuration). It is an error of the test file (exit code 2 from
/// `toolgate test`), never a failing policy test.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestFileError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The case's name, when the error is in one case.
    pub case: Option<String>,
    pub message: String,
    pub help: Option<String>,
}

impl std::fmt::Display for TestFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if let Some(c) = &self.case {
            write!(f, "case `{c}`: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// What a `tool` case may expect: `offered`, `observed`, `needsApproval`
/// (offered, and a person approves each call), `refused`, a
/// gate's reason code, or `unknownConsumer` (the case's consumer is one the
/// policy does not know: every edge and host refuses the caller before any
/// tool is decided).
fn tool_expectations() -> Vec<&'static str> {
    let mut v = vec!["offered", "observed", "needsApproval", "refused"];
    v.extend(GATE_ORDER.iter().map(|r| r.code()));
    v.push(UNKNOWN_CONSUMER);
    v
}

/// The outcome of a case whose consumer the policy does not know.
const UNKNOWN_CONSUMER: &str = "unknownConsumer";

/// What an `answer` case may expect: `success`, `toolFailure` or a refusal kind.
fn answer_expectations() -> Vec<&'static str> {
    let mut v = vec!["success", "toolFailure"];
    v.extend(toolgate_runtime::RefusalKind::all().map(|k| k.code()));
    v
}

/// An expectation that is not among `known`: the message and a did-you-mean.
fn unknown_expectation(expect: &str, known: &[&'static str], what: &str) -> (String, String) {
    let help = match toolgate_runtime::names::did_you_mean(expect, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? ({what}: {})", known.join(", ")),
        None => format!("{what}: {}", known.join(", ")),
    };
    (format!("unknown expectation `{expect}`"), help)
}

/// A row of the decision table: a configuration and an outcome (a gate's
/// reason, or `offered`).
pub type Row = (String, String);

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub reachable: usize,
    pub covered: usize,
    pub percent: f64,
    /// Reachable rows no case exercised.
    pub missed: Vec<Row>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub passed: usize,
    pub failed: usize,
    pub cases: Vec<CaseResult>,
    /// Test files that could not be run as written (not counted as failures).
    pub errors: Vec<TestFileError>,
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
        let error =
            |text: &str, at: usize, case: Option<&str>, message: String, help: Option<String>| {
                let line = text[..at].matches('\n').count() + 1;
                let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
                TestFileError {
                    file: shown.clone(),
                    line,
                    column,
                    case: case.map(str::to_string),
                    message,
                    help,
                }
            };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                report.errors.push(error("", 0, None, e.to_string(), None));
                continue;
            }
        };
        let file: File = match toml::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start);
                report.errors.push(error(
                    &text,
                    at,
                    None,
                    e.message().to_string(),
                    Some("a test file holds `[[case]]` tables (docs/ci.md#policy-tests)".into()),
                ));
                continue;
            }
        };
        for spanned in &file.case {
            let case = spanned.get_ref();
            let at = spanned.span().start;
            if let Err((message, help)) = check_case(case) {
                // Point at the `expect` value when that is what is wrong.
                let at = text[at..]
                    .find("expect")
                    .filter(|_| message.starts_with("unknown expectation"))
                    .map_or(at, |i| at + i);
                report
                    .errors
                    .push(error(&text, at, Some(&case.name), message, Some(help)));
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            let started = std::time::Instant::now();
            match run_case(table, path, case, covered) {
                Ok((expected, actual)) => report.cases.push(CaseResult {
                    file: shown.clone(),
                    line,
                    name: case.name.clone(),
                    passed: expected == actual,
                    expected,
                    actual,
                    seconds: started.elapsed().as_secs_f64(),
                }),
                Err(message) => {
                    report
                        .errors
                        .push(error(&text, at, Some(&case.name), message, None))
                }
            }
        }
    }
    report.passed = report.cases.iter().filter(|c| c.passed).count();
    report.failed = report.cases.len() - report.passed;
    report
}

/// A case's expectation is one the case kind can produce.
fn check_case(c: &Case) -> Result<(), (String, String)> {
    let Some(expect) = &c.expect else {
        return Ok(());
    };
    let (known, what) = if c.answer.is_some() {
        (answer_expectations(), "an `answer` case expects")
    } else {
        (tool_expectations(), "a `tool` case expects")
    };
    if known.contains(&expect.as_str()) {
        Ok(())
    } else {
        Err(unknown_expectation(expect, &known, what))
    }
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
    let ctx = table
        .context(config)
        .map_err(|e| e.to_string())?
        .role(role(c.role.as_deref())?);
    let mut ctx = match ctx.known_consumer(c.consumer.as_deref()) {
        Ok(ctx) => ctx.enforcement(c.enforcement.as_deref()),
        Err(_) if c.tool.is_some() && c.unavailable.is_none() => {
            let expected = c.expect.clone().ok_or("a `tool` case needs `expect`")?;
            return Ok((expected, UNKNOWN_CONSUMER.to_string()));
        }
        Err(e) => return Err(e.to_string()),
    };
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
    // Offered, and a person approves each call: its own outcome.
    let actual = if d.allowed && d.needs_approval {
        "needsApproval".to_string()
    } else {
        outcome_of(d.allowed, d.observed_only, d.reason)
    };
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
    let mut consumers: Vec<Option<&str>> = vec![None, Some(toolgate_runtime::UNPROFILED_CONSUMER)];
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

impl Report {
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for e in &self.errors {
            let _ = writeln!(out, "error: {e}");
        }
        for c in self.cases.iter().filter(|c| !c.passed) {
            let _ = writeln!(
                out,
                "FAIL {}:{}: {}\n  expected: {}\n  actual:   {}",
                c.file, c.line, c.name, c.expected, c.actual
            );
        }
        let _ = writeln!(out, "{} passed, {} failed", self.passed, self.failed);
        if !self.errors.is_empty() {
            let n = self.errors.len();
            let _ = writeln!(
                out,
                "{n} test-file error{} (not run)",
                if n == 1 { "" } else { "s" }
            );
        }
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

    /// JUnit XML (quick-junit): a test suite per test file, a test case per
    /// case (classname: the file; name: the case), its time, a failure with
    /// the expected and actual outcomes, an error for each test-file error,
    /// and, under `threshold`, a `coverage` suite whose case fails when the
    /// coverage is below it.
    pub fn junit(&self, threshold: Option<f64>) -> String {
        use quick_junit::{NonSuccessKind, Report as JReport, TestCase, TestCaseStatus, TestSuite};
        let mut report = JReport::new("toolgate");
        let mut files: Vec<&str> = self.cases.iter().map(|c| c.file.as_str()).collect();
        files.extend(self.errors.iter().map(|e| e.file.as_str()));
        let files: BTreeSet<&str> = files.into_iter().collect();
        for f in files {
            let mut suite = TestSuite::new(f);
            for c in self.cases.iter().filter(|c| c.file == f) {
                let status = if c.passed {
                    TestCaseStatus::success()
                } else {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(format!("expected {}, got {}", c.expected, c.actual));
                    s.set_description(format!(
                        "{}:{}: {}\nexpected: {}\nactual:   {}",
                        c.file, c.line, c.name, c.expected, c.actual
                    ));
                    s
                };
                let mut case = TestCase::new(c.name.as_str(), status);
                case.set_classname(f);
                case.set_time(std::time::Duration::from_secs_f64(c.seconds));
                suite.add_test_case(case);
            }
            for e in self.errors.iter().filter(|e| e.file == f) {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(e.message.as_str());
                s.set_description(e.to_string());
                let mut case = TestCase::new(e.case.as_deref().unwrap_or("(test file)"), s);
                case.set_classname(f);
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        if let (Some(t), Some(cov)) = (threshold, &self.coverage) {
            let status = if cov.percent >= t {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!(
                    "coverage {:.1}% is below the threshold {t:.1}%",
                    cov.percent
                ));
                let missed: Vec<String> = cov
                    .missed
                    .iter()
                    .map(|(cfg, row)| format!("not exercised: {cfg} {row}"))
                    .collect();
                s.set_description(missed.join("\n"));
                s
            };
            let mut suite = TestSuite::new("coverage");
            let mut case = TestCase::new("threshold", status);
            case.set_classname("coverage");
            suite.add_test_case(case);
            report.add_test_suite(suite);
        }
        report
            .to_string()
            .unwrap_or_else(|e| format!("<!-- cannot write JUnit XML: {e} -->\n"))
    }
}
