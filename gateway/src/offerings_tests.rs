use super::*;

fn resource(uri: &str) -> Resource {
    serde_json::from_value(serde_json::json!({"uri": uri, "name": uri})).expect("a resource")
}

fn template(t: &str) -> ResourceTemplate {
    serde_json::from_value(serde_json::json!({"uriTemplate": t, "name": t})).expect("a template")
}

fn prompt(name: &str) -> Prompt {
    serde_json::from_value(serde_json::json!({"name": name})).expect("a prompt")
}

#[test]
fn a_uri_two_servers_list_is_withheld_and_read_as_nobodys() {
    let o = Offerings::new(vec![
        (
            "a".into(),
            Listed {
                resources: vec![resource("file:///x"), resource("file:///shared")],
                ..Default::default()
            },
        ),
        (
            "b".into(),
            Listed {
                resources: vec![resource("file:///shared")],
                ..Default::default()
            },
        ),
    ]);
    assert_eq!(o.server_of_uri("file:///x"), Some("a"));
    assert_eq!(o.server_of_uri("file:///shared"), None);
    let listed: Vec<&str> = o.resources.iter().map(|(_, r)| r.uri.as_str()).collect();
    assert_eq!(listed, ["file:///x"]);
}

#[test]
fn a_uri_nobody_lists_goes_to_the_one_server_whose_templates_make_it() {
    let o = Offerings::new(vec![
        (
            "a".into(),
            Listed {
                templates: vec![template("crm://customers/{id}")],
                ..Default::default()
            },
        ),
        (
            "b".into(),
            Listed {
                templates: vec![template("docs://{path}"), template("crm://{x}")],
                ..Default::default()
            },
        ),
    ]);
    assert_eq!(o.server_of_uri("docs://readme"), Some("b"));
    // Both servers' templates could make it: no guess.
    assert_eq!(o.server_of_uri("crm://customers/7"), None);
    assert_eq!(o.server_of_uri("other://x"), None);
}

#[test]
fn prompts_are_named_as_tools_are() {
    let o = Offerings::new(vec![
        (
            "crm".into(),
            Listed {
                prompts: vec![prompt("summary")],
                ..Default::default()
            },
        ),
        (
            "docs".into(),
            Listed {
                prompts: vec![prompt("summary")],
                ..Default::default()
            },
        ),
    ]);
    let of = |name: &str| o.prompt(name).map(|p| (p.server.as_str(), p.own.as_str()));
    assert_eq!(of("mcp_crm_summary"), Some(("crm", "summary")));
    assert_eq!(of("mcp_docs_summary"), Some(("docs", "summary")));
    assert_eq!(of("summary"), None);
    assert_eq!(o.prompts[0].prompt.name, "mcp_crm_summary");
    // The digest is of the definition as listed, whatever the name.
    assert_eq!(
        o.prompts[0].digest,
        toolgate_runtime::mcp::prompt_digest(&serde_json::json!({"name": "x"}))
    );
}

#[test]
fn a_uri_nobody_lists_or_templates_goes_to_the_only_resource_server() {
    let only = Offerings::new(vec![
        (
            "files".into(),
            Listed {
                resources: vec![resource("file:///listed")],
                serves_resources: true,
                ..Default::default()
            },
        ),
        ("tools-only".into(), Listed::default()),
    ]);
    assert_eq!(only.server_of_uri("test://never-listed"), Some("files"));
    let two = Offerings::new(vec![
        (
            "a".into(),
            Listed {
                serves_resources: true,
                ..Default::default()
            },
        ),
        (
            "b".into(),
            Listed {
                serves_resources: true,
                ..Default::default()
            },
        ),
    ]);
    assert_eq!(two.server_of_uri("test://never-listed"), None);
}

#[test]
fn a_template_is_completed_by_the_one_server_that_lists_it() {
    let o = Offerings::new(vec![
        (
            "a".into(),
            Listed {
                templates: vec![template("test://a/{id}"), template("test://both/{id}")],
                ..Default::default()
            },
        ),
        (
            "b".into(),
            Listed {
                templates: vec![template("test://both/{id}")],
                ..Default::default()
            },
        ),
    ]);
    assert_eq!(o.server_of_template("test://a/{id}"), Some("a"));
    assert_eq!(o.server_of_template("test://both/{id}"), None);
    assert_eq!(o.server_of_template("test://none/{id}"), None);
}

#[test]
fn a_uri_two_servers_list_is_not_routed_through_a_template_either() {
    let o = Offerings::new(vec![
        (
            "a".into(),
            Listed {
                resources: vec![resource("db://7")],
                templates: vec![template("db://{id}")],
                serves_resources: true,
                ..Default::default()
            },
        ),
        (
            "b".into(),
            Listed {
                resources: vec![resource("db://7")],
                serves_resources: true,
                ..Default::default()
            },
        ),
    ]);
    assert_eq!(o.server_of_uri("db://7"), None);
    assert_eq!(o.server_of_uri("db://8"), Some("a"));
}
