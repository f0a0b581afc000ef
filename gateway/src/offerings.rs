//! What the upstreams serve besides tools: resources, resource templates
//! and prompts, and which server answers each (docs/gateway.md,
//! "Resources and prompts"). Rebuilt with the tools at every listing.
//!
//! - A prompt is named as a tool is (`mcp_SERVER_NAME`, the one function
//!   `registry import-mcp` uses), so two servers' prompts never collide.
//! - A resource keeps its URI (a client reads what the server wrote). A URI
//!   two servers list is withheld from both and routed to neither (not
//!   even through a template): the gateway never guesses which one meant it.
//! - A URI no server lists goes to the one server whose templates could
//!   have made it (the template's text before its first `{` is a prefix of
//!   the URI), and only when exactly one server's could; failing that, to
//!   the one upstream that serves resources at all, when only one does (a
//!   server may answer URIs it never lists: there is no one else to ask).
//!
//! Nothing here decides: the handler asks the runtime whether the caller
//! sees a server ([`toolgate_runtime::Context::sees_server`]) before it
//! lists or routes anything of it.

use std::collections::HashMap;

use rmcp::model::{Prompt, Resource, ResourceTemplate};

/// What one upstream listed.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
    /// Whether it declared the resources capability at all.
    pub serves_resources: bool,
}

/// A prompt as an upstream listed it, under the gateway's name.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedPrompt {
    pub server: String,
    /// The server's own name for it.
    pub own: String,
    /// The prompt, named as the gateway offers it.
    pub prompt: Prompt,
    /// [`toolgate_runtime::mcp::prompt_digest`] of its definition as listed.
    pub digest: String,
}

/// Every upstream's resources, templates and prompts.
#[derive(Debug, Clone, Default)]
pub struct Offerings {
    /// (server, resource), in the upstreams' order; ambiguous URIs left out.
    pub resources: Vec<(String, Resource)>,
    pub templates: Vec<(String, ResourceTemplate)>,
    /// The prompts, under the gateway's names, in the upstreams' order.
    pub prompts: Vec<OfferedPrompt>,
    by_uri: HashMap<String, String>,
    by_prompt: HashMap<String, usize>,
    /// URIs several servers list: routed to none of them.
    ambiguous: std::collections::HashSet<String>,
    /// The one upstream that serves resources, when only one does.
    only_resource_server: Option<String>,
}

impl Offerings {
    pub fn new(listed: Vec<(String, Listed)>) -> Offerings {
        let mut servers_of: HashMap<&str, Vec<&str>> = HashMap::new();
        for (s, l) in &listed {
            for r in &l.resources {
                let v = servers_of.entry(r.uri.as_str()).or_default();
                if !v.contains(&s.as_str()) {
                    v.push(s);
                }
            }
        }
        let mut o = Offerings {
            ambiguous: servers_of
                .iter()
                .filter(|(_, v)| v.len() > 1)
                .map(|(u, _)| u.to_string())
                .collect(),
            ..Offerings::default()
        };
        let mut serving = listed.iter().filter(|(_, l)| l.serves_resources);
        if let (Some((s, _)), None) = (serving.next(), serving.next()) {
            o.only_resource_server = Some(s.clone());
        }
        for (s, l) in &listed {
            for r in &l.resources {
                if servers_of.get(r.uri.as_str()).map(Vec::len) == Some(1)
                    && !o.by_uri.contains_key(&r.uri)
                {
                    o.by_uri.insert(r.uri.clone(), s.clone());
                    o.resources.push((s.clone(), r.clone()));
                }
            }
        }
        for (s, l) in listed {
            for t in l.templates {
                o.templates.push((s.clone(), t));
            }
            for mut p in l.prompts {
                let name = toolgate_runtime::names::remote_tool_name(&s, &p.name);
                if o.by_prompt.contains_key(&name) {
                    continue;
                }
                let digest = serde_json::to_value(&p)
                    .map(|v| toolgate_runtime::mcp::prompt_digest(&v))
                    .unwrap_or_default();
                let own = std::mem::replace(&mut p.name, name.clone());
                o.by_prompt.insert(name, o.prompts.len());
                o.prompts.push(OfferedPrompt {
                    server: s.clone(),
                    own,
                    prompt: p,
                    digest,
                });
            }
        }
        o
    }

    /// The server that answers `uri`, if exactly one does.
    pub fn server_of_uri(&self, uri: &str) -> Option<&str> {
        if let Some(s) = self.by_uri.get(uri) {
            return Some(s);
        }
        if self.ambiguous.contains(uri) {
            return None;
        }
        let mut found: Option<&str> = None;
        for (s, t) in &self.templates {
            let literal = t.uri_template.split('{').next().unwrap_or_default();
            if !literal.is_empty() && uri.starts_with(literal) {
                match found {
                    None => found = Some(s),
                    Some(f) if f == s => {}
                    Some(_) => return None,
                }
            }
        }
        found.or(self.only_resource_server.as_deref())
    }

    /// The server whose template is `template`, if exactly one lists it (a
    /// completion of a template argument goes there).
    pub fn server_of_template(&self, template: &str) -> Option<&str> {
        let mut of = self
            .templates
            .iter()
            .filter(|(_, t)| t.uri_template == template)
            .map(|(s, _)| s.as_str());
        let first = of.next()?;
        of.all(|s| s == first).then_some(first)
    }

    /// The prompt the gateway names `name`.
    pub fn prompt(&self, name: &str) -> Option<&OfferedPrompt> {
        self.by_prompt.get(name).map(|&i| &self.prompts[i])
    }
}

#[cfg(test)]
#[path = "offerings_tests.rs"]
mod tests;
