//! `toolgate test`: policy tests and table coverage.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{load_table, project_name, project_paths, Res};
use crate::io::{write_err, write_out};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TestFormat {
    Text,
    Json,
    Junit,
}

#[derive(Args)]
pub struct TestArgs {
    /// Project directories. Default: the current directory.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: TestFormat,
    /// Report which rows of the decision table (configuration x outcome) the tests exercised.
    #[arg(long)]
    coverage: bool,
    #[command(flatten)]
    out: super::OutputArg,
    /// Fail when coverage is below this percentage (implies --coverage).
    #[arg(long)]
    threshold: Option<f64>,
}

pub fn test(a: TestArgs) -> Res {
    a.out.apply();
    use toolgate_review::policy_tests;
    let paths = project_paths(&a.paths)?;
    let want_coverage = a.coverage || a.threshold.is_some();
    let mut report = policy_tests::Report::default();
    // Nothing covered of nothing reachable yet: 100%, as `coverage` says.
    let mut cov = policy_tests::Coverage {
        percent: 100.0,
        ..policy_tests::Coverage::default()
    };
    let bar = crate::progress::Progress::new(paths.len() as u64, "test");
    for p in &paths {
        bar.label(&format!("test {}", project_name(p)));
        let table = load_table(p, None)?;
        let files = policy_tests::test_files(p);
        let mut covered = std::collections::BTreeSet::new();
        let r = policy_tests::run(&table, &files, &mut covered);
        report.passed += r.passed;
        report.failed += r.failed;
        report.cases.extend(r.cases);
        report.errors.extend(r.errors);
        if want_coverage {
            let prefix = if paths.len() > 1 {
                format!("{}: ", project_name(p))
            } else {
                String::new()
            };
            cov.add(policy_tests::coverage(&table, &covered), &prefix);
        }
        bar.tick();
    }
    drop(bar);
    if want_coverage {
        report.coverage = Some(cov.clone());
    }
    match a.format {
        TestFormat::Text => write_out(&report.text()),
        TestFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&report)?)),
        TestFormat::Junit => write_out(&report.junit(a.threshold)),
    }
    let under = a.threshold.is_some_and(|t| cov.percent < t);
    if under && a.format == TestFormat::Text {
        write_err(&format!(
            "coverage {:.1}% is below the threshold {:.1}%\n",
            cov.percent,
            a.threshold.unwrap_or(0.0)
        ));
    }
    // A test file that cannot be run is an input error, not a failing test.
    if !report.errors.is_empty() {
        return Ok(2);
    }
    Ok(u8::from(report.failed > 0 || under))
}
