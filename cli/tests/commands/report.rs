//! `toolgate report`: the access report as one HTML file, to a file or to
//! standard output. What the page holds (every cell, the diff, the charts)
//! is tested with its crate, access-report/tests/report.rs, and in a real
//! browser, access-report/browser-tests/.

use crate::common::*;

#[test]
fn report_writes_one_page_to_a_file_or_to_standard_output_alike() {
    let dir = temp("report");
    let file = dir.join("demo.html");
    let o = run(&["report", "policies/demo", "-o", file.to_str().unwrap()]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str(), stderr(&o).as_str()),
        (Some(0), "", "")
    );
    let html = std::fs::read_to_string(&file).unwrap();
    assert_starts_with(&html, "<!DOCTYPE html>\n");
    assert_contains(
        &html,
        "<title>toolgate access report: policies/demo</title>",
    );
    assert_contains(
        &html,
        "<script type=\"application/json\" id=\"toolgate-data\">",
    );
    let o = run(&["report", "policies/demo"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), html, "the same page on standard output");
}

#[test]
fn a_revision_to_compare_with_needs_a_project_not_a_table() {
    let dir = temp("report-table");
    let table = dir.join("demo.tgt");
    let t = table.to_str().unwrap();
    assert_eq!(
        run(&["compile", "policies/demo", "-o", t]).status.code(),
        Some(0)
    );
    let o = run(&["report", t, "--diff", "HEAD~1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: --diff HEAD~1: no such file or directory (a git revision needs a project directory, not a table file)\n"
    );
}
