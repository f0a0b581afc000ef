//! `toolgate snapshot`: the examples' snapshots are up to date, and
//! `--check` detects drift.

use crate::common::*;

#[test]
fn snapshots_of_the_examples_are_up_to_date_and_check_detects_drift() {
    for p in EXAMPLES {
        let o = run(&["snapshot", "--check", p]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{p}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let d = scratch_example("snap", "exclusions");
    let f = d.join("configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, text.replacen("exclude [delete_record]\n", "", 1)).unwrap();
    let o = toolgate(&d, &["snapshot", "--check", "."]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("+ editor-chat user delete_record offered")
            && err.contains("- editor-chat user delete_record refused configurationExcluded"),
        "{err}"
    );
}
