//! The same decisions as Cedar policies and entities, for a side-by-side
//! benchmark and a second, independent oracle. Built from the compiled
//! table's plain description (`TableSpec`): effective states, class ranks,
//! each configuration's allowed groups, exclusions, new-run skill allow-list
//! and ceiling, each profile's tools (prefixes expanded). Cedar answers
//! allow or deny; it has no notion of "the first refusing gate", so only
//! `allowed` is compared.

use std::str::FromStr;

use cedar_policy::{Authorizer, Context, Decision, Entities, EntityUid, PolicySet, Request};
use serde_json::{json, Value};
use toolgate_runtime::spec::{TableSpec, Unprofiled};
use toolgate_runtime::{Role, Table};

pub const POLICIES: &str = r#"
permit(principal, action == Action::"offer", resource);

@id("toolDisabled")
forbid(principal, action, resource) unless { resource.enabled };

@id("requiresAdmin")
forbid(principal, action, resource) when { resource.admin_only && !principal.admin };

@id("notInProfile")
forbid(principal, action, resource) when {
  context.profile_gate == "closed" ||
  (context.profile_gate == "profile" && !(context.profile.tools.contains(resource)))
};

@id("configurationGroup")
forbid(principal, action, resource) when {
  resource.name != context.config.loader &&
  ((context.config.restricts && !(context.config.groups.contains(resource.group))) ||
   (context.config.skill_restricts && !(context.config.skill_tools.contains(resource))))
};

@id("configurationExcluded")
forbid(principal, action, resource) when { context.config.excluded.contains(resource) };

@id("trustZone")
forbid(principal, action, resource) when {
  resource.class > context.config.ceiling && (resource.remote || !context.observe)
};
"#;

fn uid(kind: &str, id: &str) -> Value {
    json!({"type": kind, "id": id})
}

/// An entity reference inside an attribute (without a schema, Cedar reads a
/// bare `{"type", "id"}` there as a record).
fn eref(kind: &str, id: &str) -> Value {
    json!({"__entity": {"type": kind, "id": id}})
}

fn euid(kind: &str, id: &str) -> EntityUid {
    EntityUid::from_str(&format!("{kind}::{}", json!(id))).expect("a valid entity uid")
}

/// The Cedar side of one table.
pub struct CedarWorld {
    pub policies: PolicySet,
    pub entities: Entities,
    pub authorizer: Authorizer,
    observe: bool,
    unprofiled_refused: bool,
}

impl CedarWorld {
    pub fn new(spec: &TableSpec) -> CedarWorld {
        let mut ents: Vec<Value> = Vec::new();
        for t in &spec.tools {
            ents.push(json!({
                "uid": uid("Tool", &t.name),
                "attrs": {
                    "name": t.name, "group": spec.groups[t.group as usize].name,
                    "enabled": t.enabled, "admin_only": t.admin_only, "remote": t.remote, "class": t.class,
                },
                "parents": [],
            }));
        }
        for c in &spec.configurations {
            // A new run's skill allow-list: the union of the attached skills' declarations.
            let declared: Vec<&Vec<String>> = c
                .skills
                .iter()
                .filter_map(|&s| spec.skills[s as usize].tools.as_ref())
                .collect();
            let skill_tools: Vec<Value> = declared
                .iter()
                .flat_map(|l| l.iter())
                .map(|n| eref("Tool", n))
                .collect();
            ents.push(json!({
                "uid": uid("Configuration", &c.name),
                "attrs": {
                    "restricts": c.groups.is_some(),
                    "groups": c.groups.as_ref().map(|g| g.iter().map(|&i| spec.groups[i as usize].name.clone()).collect::<Vec<_>>()).unwrap_or_default(),
                    "excluded": c.excluded.iter().map(|n| eref("Tool", n)).collect::<Vec<_>>(),
                    "skill_restricts": !declared.is_empty(),
                    "skill_tools": skill_tools,
                    "ceiling": spec.zones[c.zone as usize].ceiling,
                    "loader": spec.skill_loader,
                },
                "parents": [],
            }));
        }
        for p in &spec.profiles {
            let mut tools: Vec<Value> = Vec::new();
            for t in &spec.tools {
                let by_group = p.groups.contains(&t.group);
                if p.tools.contains(&t.name)
                    || by_group
                    || p.prefixes.iter().any(|x| t.name.starts_with(x.as_str()))
                {
                    tools.push(eref("Tool", &t.name));
                }
            }
            ents.push(
                json!({"uid": uid("Profile", &p.name), "attrs": {"tools": tools}, "parents": []}),
            );
        }
        ents.push(
            json!({"uid": uid("Profile", "__none__"), "attrs": {"tools": []}, "parents": []}),
        );
        for (id, admin) in [("admin", true), ("user", false), ("none", false)] {
            ents.push(json!({"uid": uid("User", id), "attrs": {"admin": admin}, "parents": []}));
        }
        CedarWorld {
            policies: PolicySet::from_str(POLICIES).expect("policies parse"),
            entities: Entities::from_json_value(Value::Array(ents), None).expect("entities load"),
            authorizer: Authorizer::new(),
            observe: spec.observe,
            unprofiled_refused: spec.unprofiled == Unprofiled::Refused,
        }
    }

    /// The request context for a configuration, consumer and enforcement mode.
    pub fn context(
        &self,
        spec: &TableSpec,
        config: &str,
        consumer: Option<&str>,
        observe: Option<bool>,
    ) -> Context {
        let (gate, profile) = match consumer {
            None => ("open", "__none__".to_string()),
            Some(c) => match spec.consumers.iter().find(|x| x.name == c) {
                Some(b) => ("profile", spec.profiles[b.profile as usize].name.clone()),
                // A name the policy does not know is refused, not a consumer
                // without a profile (docs/gate-semantics.md §4): unless the
                // policy admits unknown names and it is no near miss.
                None if c != "*" && !unknown_admitted(spec, c) => {
                    ("closed", "__none__".to_string())
                }
                None if self.unprofiled_refused => ("closed", "__none__".to_string()),
                None => ("open", "__none__".to_string()),
            },
        };
        let v = json!({
            "config": {"__entity": uid("Configuration", config)},
            "profile": {"__entity": uid("Profile", &profile)},
            "profile_gate": gate,
            "observe": observe.unwrap_or(self.observe),
        });
        Context::from_json_value(v, None).expect("a valid context")
    }

    /// One request per tool, for a context.
    pub fn requests(&self, spec: &TableSpec, role: Role, ctx: &Context) -> Vec<Request> {
        spec.tools
            .iter()
            .map(|t| {
                Request::new(
                    euid("User", role.as_str()),
                    euid("Action", "offer"),
                    euid("Tool", &t.name),
                    ctx.clone(),
                    None,
                )
                .expect("a valid request")
            })
            .collect()
    }

    pub fn allowed(&self, request: &Request) -> bool {
        self.authorizer
            .is_authorized(request, &self.policies, &self.entities)
            .decision()
            == Decision::Allow
    }
}

/// Whether the policy admits the consumer name `c` it does not bind
/// (`unknown-consumers admitted`, a well-formed name, no near miss).
fn unknown_admitted(spec: &TableSpec, c: &str) -> bool {
    let near =
        toolgate_runtime::names::did_you_mean(c, spec.consumers.iter().map(|x| x.name.as_str()));
    let malformed =
        c.is_empty() || c.trim() != c || toolgate_runtime::names::first_invisible(c).is_some();
    spec.unknown_consumers_admitted && near.is_none() && !malformed
}

/// Check that Cedar and the table agree on every tool for every configuration,
/// role, consumer and enforcement mode. Returns the number of decisions compared.
pub fn check_agreement(table: &Table, max_configs: usize) -> Result<usize, String> {
    let spec = table.spec();
    let world = CedarWorld::new(spec);
    let mut consumers: Vec<Option<&str>> = vec![None, Some("__stranger__")];
    consumers.extend(spec.consumers.iter().map(|c| Some(c.name.as_str())));
    let mut n = 0;
    for cfg in table.configuration_names().take(max_configs) {
        for role in Role::ALL {
            for consumer in &consumers {
                for (mode, observe) in [
                    (None, None),
                    (Some("observe"), Some(true)),
                    (Some("enforce"), Some(false)),
                ] {
                    let ctx = table
                        .context(cfg)
                        .map_err(|e| e.to_string())?
                        .role(role)
                        .consumer(*consumer)
                        .enforcement(mode);
                    let cctx = world.context(spec, cfg, *consumer, observe);
                    for (i, req) in world.requests(spec, role, &cctx).iter().enumerate() {
                        let ours = ctx.decide_id(i as u32).allowed;
                        let theirs = world.allowed(req);
                        if ours != theirs {
                            return Err(format!("{cfg} {role:?} {consumer:?} {mode:?} {}: toolgate {ours}, cedar {theirs}", spec.tools[i].name));
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    Ok(n)
}
