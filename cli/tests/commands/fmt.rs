//! `toolgate fmt`: never writes outside the project.

use crate::common::*;
use crate::projects::scratch_manifest;

#[test]
fn fmt_never_writes_outside_the_project() {
    let outside = std::env::temp_dir().join(format!("toolgate-fmt-out-{}.tg", std::process::id()));
    let ugly = "configuration editor-chat {exclude [delete_record]}\n";
    std::fs::write(&outside, ugly).unwrap();
    let dir = scratch_manifest(
        "fmtout",
        &format!(
            "registry = \"registry.toml\"\npolicies = [{:?}]\nallow-outside-project = true\n",
            outside.display().to_string()
        ),
    );
    let o = run(&["fmt", "-w", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("outside the project"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), ugly);
}
