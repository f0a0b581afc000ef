//! `toolgate completions`: the shell scripts, from the argument definitions.

use crate::common::*;

#[test]
fn completions_come_from_the_argument_definitions() {
    let o = run(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    let bash = stdout(&o);
    assert_starts_with(&bash, "_toolgate() {\n");
    assert_contains(&bash, "complete -F _toolgate");
    assert_contains(&bash, "--enforcement");
    let o = run(&["completions", "zsh"]);
    assert!(stdout(&o).starts_with("#compdef toolgate\n"));
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}
