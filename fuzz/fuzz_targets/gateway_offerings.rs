//! What upstreams list besides tools, as the gateway aggregates it: each
//! line `SERVER<TAB>JSON` is one upstream's `{"resources": [...],
//! "resourceTemplates": [...], "prompts": [...], "serves": bool}`; a line
//! without a tab is a URI a client asks for. The aggregation keeps its
//! promises (docs/gateway.md, "Resources and prompts"): a listed URI is
//! answered by the server that listed it and by no other, a URI two servers
//! list is in no list and routed nowhere, prompt names are unique and each
//! routes back to its server's own name, a template completes only at the
//! one server that lists it, and any URI a client sends routes to a server
//! that is one of the upstreams or to none. Only a panic or a broken
//! promise fails.
#![no_main]
use std::collections::{HashMap, HashSet};

use libfuzzer_sys::fuzz_target;
use rmcp::model::{Prompt, Resource, ResourceTemplate};
use toolgate_gateway::offerings::{Listed, Offerings};

/// The list under `key` (none when absent), or `None` when it is not one.
macro_rules! items {
    ($v:expr, $key:literal, $t:ty) => {
        match $v.get($key) {
            None => Some(Vec::new()),
            Some(x) => serde_json::from_value::<Vec<$t>>(x.clone()).ok(),
        }
    };
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut listed = Vec::new();
    let mut asked = Vec::new();
    for line in text.lines().take(64) {
        match line.split_once('\t') {
            Some((server, json)) => {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
                    return;
                };
                let (Some(resources), Some(templates), Some(prompts)) = (
                    items!(v, "resources", Resource),
                    items!(v, "resourceTemplates", ResourceTemplate),
                    items!(v, "prompts", Prompt),
                ) else {
                    return;
                };
                let serves = v.get("serves").and_then(|s| s.as_bool()).unwrap_or(true);
                listed.push((
                    server.to_string(),
                    Listed {
                        resources,
                        templates,
                        prompts,
                        serves_resources: serves,
                    },
                ));
            }
            None => asked.push(line.to_string()),
        }
    }
    let servers: HashSet<String> = listed.iter().map(|(s, _)| s.clone()).collect();
    let mut listers: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (s, l) in &listed {
        for r in &l.resources {
            listers
                .entry(r.uri.as_str())
                .or_default()
                .insert(s.as_str());
        }
    }
    let o = Offerings::new(listed.clone());
    // Every listed resource: one server listed it, and that one answers it.
    let mut seen = HashSet::new();
    for (s, r) in &o.resources {
        assert!(seen.insert(r.uri.clone()), "{} listed twice", r.uri);
        assert_eq!(
            listers[r.uri.as_str()].len(),
            1,
            "{} of several servers listed",
            r.uri
        );
        assert_eq!(
            o.server_of_uri(&r.uri),
            Some(s.as_str()),
            "{} routed elsewhere",
            r.uri
        );
    }
    // A URI several servers list: in no list, routed nowhere.
    for (uri, of) in &listers {
        if of.len() > 1 {
            assert!(!seen.contains(*uri));
            assert_eq!(o.server_of_uri(uri), None, "{uri} of {of:?} was routed");
        }
    }
    // Prompts: unique names, each back to its server's own name.
    let mut names = HashSet::new();
    for offered in &o.prompts {
        let p = &offered.prompt;
        assert!(names.insert(p.name.clone()), "prompt {} twice", p.name);
        assert_eq!(o.prompt(&p.name), Some(offered));
        assert_eq!(
            p.name,
            toolgate_runtime::names::remote_tool_name(&offered.server, &offered.own)
        );
    }
    // A template completes only at the one server that lists it.
    for (s, t) in &o.templates {
        let of: HashSet<&str> = listed
            .iter()
            .filter(|(_, l)| l.templates.iter().any(|x| x.uri_template == t.uri_template))
            .map(|(s, _)| s.as_str())
            .collect();
        let want = (of.len() == 1).then_some(s.as_str());
        assert_eq!(o.server_of_template(&t.uri_template), want);
    }
    // Anything a client asks routes to an upstream or to none.
    for uri in &asked {
        if let Some(s) = o.server_of_uri(uri) {
            assert!(servers.contains(s), "{uri} routed to {s}, no upstream");
            if let Some(of) = listers.get(uri.as_str()) {
                assert!(of.contains(s), "{uri} listed by {of:?}, routed to {s}");
            }
        }
    }
});
