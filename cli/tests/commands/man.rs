//! `toolgate man`: the man pages, from the argument definitions.

use crate::common::*;

#[test]
fn man_pages_come_from_the_argument_definitions() {
    let page = stdout(&run(&["man"]));
    assert!(page.contains(&format!(
        ".TH toolgate 1  \"toolgate {} (table formats {} to {})\"",
        env!("CARGO_PKG_VERSION"),
        toolgate_runtime::format::OLDEST_FORMAT_VERSION,
        toolgate_runtime::format::FORMAT_VERSION
    )));
    let dir = temp("man");
    let o = run(&["man", "-o", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let decide = std::fs::read_to_string(dir.join("toolgate-decide.1")).unwrap();
    assert_contains(&decide, ".TH toolgate-decide 1");
    assert_contains(&decide, "toolgate decide");
    assert!(dir.join("toolgate-check.1").is_file());
}
