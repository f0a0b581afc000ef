//! `toolgate explain`: gate by gate, up to the first refusal.

use crate::common::*;

#[test]
fn explain_goes_gate_by_gate_and_stops_at_the_first_refusal() {
    let out = stdout(&run(&with_configuration(
        &["explain"],
        "policies/exclusions",
        "editor-chat",
        &["delete_record", "no_such_tool"],
    )));
    assert_eq!(
        out,
        "delete_record: refused, configurationExcluded (excluded by this configuration)\n  pass    notRegistered\n  pass    toolDisabled\n  pass    requiresAdmin\n  pass    notInProfile\n  pass    configurationGroup\n  REFUSE  configurationExcluded\nno_such_tool: refused, notRegistered (no tool of this name is registered)\n  REFUSE  notRegistered\n"
    );
}
