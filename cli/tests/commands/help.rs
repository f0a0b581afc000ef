//! `toolgate help` and `--help`: every subcommand explained.

use crate::common::*;

#[test]
fn help_explains_each_subcommand() {
    let out = stdout(&run(&["--help"]));
    for cmd in [
        "check",
        "compile",
        "registry",
        "decide",
        "explain",
        "unavailable",
        "simulate",
        "show",
        "run",
        "stats",
        "report",
    ] {
        assert!(
            out.contains(&format!("  {cmd} ")),
            "{cmd} missing from --help:\n{out}"
        );
    }
}
