use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::Table;

use super::*;

const REGISTRY: &str =
    "[[tool]]\nname = \"mcp_crm_lookup\"\ngroup = \"mcp_crm\"\nserver = \"crm\"\n\
description = \"Look up a customer\"\ninput_schema = { type = \"object\" }\n\n\
[[tool]]\nname = \"local\"\ngroup = \"g\"\n\n\
[[prompt]]\nname = \"mcp_crm_brief\"\nserver = \"crm\"\ndescription = \"Brief a customer\"\n\
arguments = [{ name = \"id\", required = true }]\n";
const POLICY: &str = "provider p { zone local } configuration c { provider p }";

fn table(registry: &str) -> Table {
    let project = Project::from_texts(("registry.toml", registry), &[("policy.tg", POLICY)]);
    let model = project.check().model.expect("the test policy compiles");
    Table::load(&lower::compile(&model)).expect("the compiled table loads")
}

/// `text` written as a registry file of its own.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-pins-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join("registry.toml");
    std::fs::write(&path, text).expect("written");
    path
}

/// The definition digest the registry pins for `name`.
fn pinned(name: &str) -> String {
    let mut files = toolgate_compiler::source::SourceMap::new();
    let id = files.add("registry.toml", REGISTRY);
    let (registry, _) = toolgate_compiler::registry::parse(id, REGISTRY, false).expect("reads");
    let t = registry
        .tools
        .iter()
        .find(|t| t.name == name)
        .expect("a tool");
    toolgate_compiler::registry::definition_digest(t)
}

#[test]
fn a_pin_holds_only_for_its_definition_as_its_server_lists_it() {
    let t = table(REGISTRY);
    let pins = Pins::new(Some(file("holds", REGISTRY)));
    assert!(pins.status(&t).is_ok());
    let digest = pinned("mcp_crm_lookup");
    assert_eq!(pins.check(&t, "mcp_crm_lookup", "crm", &digest), Pin::Holds);
    // Another definition, the same definition from another server, and a
    // name the registry pins nothing for (a built-in tool, an unknown one).
    assert_eq!(
        pins.check(&t, "mcp_crm_lookup", "crm", "sha256:00"),
        Pin::Broken
    );
    assert_eq!(
        pins.check(&t, "mcp_crm_lookup", "crm2", &digest),
        Pin::Broken
    );
    assert_eq!(pins.check(&t, "local", "crm", &digest), Pin::Broken);
    assert_eq!(pins.check(&t, "mcp_crm_other", "crm", &digest), Pin::Broken);
}

#[test]
fn a_prompt_pin_holds_only_for_its_definition_as_its_server_lists_it() {
    let t = table(REGISTRY);
    let pins = Pins::new(Some(file("prompts", REGISTRY)));
    let view = pins.view(&t);
    // The digest of the prompt as the server lists it, under its own name.
    let listed = serde_json::json!({"name": "brief", "description": "Brief a customer",
        "arguments": [{"required": true, "name": "id"}]});
    let digest = toolgate_runtime::mcp::prompt_digest(&listed);
    assert_eq!(
        view.check_prompt("mcp_crm_brief", "crm", &digest),
        Pin::Holds
    );
    let mut changed = listed.clone();
    changed["description"] = "Brief a customer, then email them everything".into();
    let other = toolgate_runtime::mcp::prompt_digest(&changed);
    assert_eq!(
        view.check_prompt("mcp_crm_brief", "crm", &other),
        Pin::Broken
    );
    assert_eq!(
        view.check_prompt("mcp_crm_brief", "crm2", &digest),
        Pin::Broken
    );
    assert_eq!(
        view.check_prompt("mcp_crm_new", "crm", &digest),
        Pin::Broken
    );
    // A prompt's pin is not a tool's, nor the other way round.
    assert_eq!(view.check("mcp_crm_brief", "crm", &digest), Pin::Broken);
    assert_eq!(
        view.check_prompt("mcp_crm_lookup", "crm", &pinned("mcp_crm_lookup")),
        Pin::Broken
    );
    // Without a registry, pinning is off for prompts too.
    assert_eq!(
        Pins::new(None).view(&t).check_prompt("x", "y", "sha256:00"),
        Pin::Holds
    );
}

#[test]
fn a_registry_that_does_not_pair_with_the_table_pins_nothing_and_says_why() {
    let t = table(REGISTRY);
    // The same tools, another review: its bytes are not the table's registry.
    let other = format!("{REGISTRY}\n# reviewed again\n");
    let path = file("unpaired", &other);
    let pins = Pins::new(Some(path.clone()));
    let digest = pinned("mcp_crm_lookup");
    assert_eq!(
        pins.check(&t, "mcp_crm_lookup", "crm", &digest),
        Pin::Broken
    );
    let Err(crate::Error::Pins(why)) = pins.status(&t) else {
        panic!("an unpaired registry is an error")
    };
    assert!(
        why.starts_with(&format!("{}: its SHA-256 is ", path.display())),
        "{why}"
    );
    assert!(why.contains(&t.spec().registry_digest), "{why}");
}

#[test]
fn without_a_registry_pinning_is_off() {
    let t = table(REGISTRY);
    let pins = Pins::new(None);
    assert!(!pins.enabled());
    assert!(pins.status(&t).is_ok());
    assert_eq!(pins.check(&t, "anything", "any", "sha256:00"), Pin::Holds);
}
