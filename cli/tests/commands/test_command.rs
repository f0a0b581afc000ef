//! `toolgate test`: the policy tests of the examples, with coverage, and
//! what a failing test or a broken test file reports.

use crate::common::*;

#[test]
fn policy_tests_of_the_examples_pass_with_full_coverage() {
    let o = run(&[
        "test",
        "--coverage",
        "--threshold",
        "100",
        "--format",
        "json",
        "policies/demo",
        "policies/exclusions",
        "policies/trust-zones",
        "policies/mcp-profiles",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["failed"], 0, "{}", stdout(&o));
    assert!(v["passed"].as_u64().unwrap() >= 40);
    let cov = &v["coverage"];
    assert_eq!(
        cov["covered"], cov["reachable"],
        "missed: {}",
        cov["missed"]
    );
    assert_eq!(o.status.code(), Some(0));
}

/// The exclusions example without its policy tests, in a scratch directory.
fn exclusions_without_tests(name: &str) -> std::path::PathBuf {
    let d = scratch_example(name, "exclusions");
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with(".test.toml") {
            std::fs::remove_file(p).unwrap();
        }
    }
    d
}

#[test]
fn a_failing_policy_test_names_file_line_expected_and_actual() {
    let d = exclusions_without_tests("failing");
    std::fs::write(
        d.join("wrong.test.toml"),
        "[[case]]\nname = \"right\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"configurationExcluded\"\n\n[[case]]\nname = \"wrong\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"offered\"\n",
    )
    .unwrap();
    let o = toolgate(&d, &["test", "--coverage", "--threshold", "50"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_contains(
        &out,
        "FAIL ./wrong.test.toml:7: wrong\n  expected: offered\n  actual:   configurationExcluded\n",
    );
    assert_contains(&out, "1 passed, 1 failed\ncoverage: 1 of 15 reachable rows");
    let junit = stdout(&toolgate(&d, &["test", "--format", "junit"]));
    assert_contains(
        &junit,
        "<testcase name=\"wrong\" classname=\"./wrong.test.toml\" time=\"",
    );
    assert_contains(&junit, "<failure message=\"expected offered, got configurationExcluded\">./wrong.test.toml:7: wrong\nexpected: offered\nactual:   configurationExcluded</failure>");
    // Under --threshold, the coverage is a test case of its own.
    let junit = stdout(&toolgate(
        &d,
        &["test", "--format", "junit", "--threshold", "50"],
    ));
    assert_contains(&junit, "<testcase name=\"threshold\" classname=\"coverage\">\n            <failure message=\"coverage 6.7% is below the threshold 50.0%\">not exercised: editor-chat notRegistered\n");
}

#[test]
fn an_unknown_expectation_is_a_test_file_error_not_a_failing_test() {
    let d = exclusions_without_tests("expectation");
    std::fs::write(
        d.join("t.test.toml"),
        "[[case]]\nname = \"typo\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"configurationExclude\"\n\n[[case]]\nname = \"answer\"\nanswer = \"a.json\"\nexpect = \"not_in_profile\"\n",
    )
    .unwrap();
    let o = toolgate(&d, &["test"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stdout(&o),
        "error: ./t.test.toml:5:1: case `typo`: unknown expectation `configurationExclude`\n  help: did you mean `configurationExcluded`? (a `tool` case expects: offered, observed, needsApproval, refused, notRegistered, toolDisabled, requiresAdmin, notInProfile, configurationGroup, configurationExcluded, trustZone, unknownConsumer)\n\
error: ./t.test.toml:10:1: case `answer`: unknown expectation `not_in_profile`\n  help: did you mean `notInProfile`? (an `answer` case expects: success, toolFailure, notRegistered, toolDisabled, requiresAdmin, notInProfile, configurationGroup, configurationExcluded, trustZone, contentPolicy, policy, definitionChanged, approvalRequired)\n\
0 passed, 0 failed\n2 test-file errors (not run)\n"
    );
}
