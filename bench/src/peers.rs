//! What the Rego and Casbin translations share: the table's plain description
//! (`TableSpec`) read the way `cedar.rs` reads it (effective states, class
//! ranks, each configuration's allowed groups, exclusions, new-run skill
//! allow-list and ceiling, each profile's tools with prefixes expanded), and
//! the agreement space (every configuration, role, consumer and enforcement
//! mode). Like Cedar, the peers answer allow or deny only: "the first refusing
//! gate" is not compared.

use toolgate_runtime::spec::{ConfigurationSpec, TableSpec, Unprofiled};
use toolgate_runtime::{Role, Table};

/// How a consumer's profile gates a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileGate {
    /// No consumer, or an unknown one where unprofiled consumers are allowed.
    Open,
    /// A known consumer: its profile (index into `spec.profiles`).
    Profile(usize),
    /// An unknown consumer where unprofiled consumers are refused.
    Closed,
}

pub fn profile_gate(spec: &TableSpec, consumer: Option<&str>) -> ProfileGate {
    match consumer {
        None => ProfileGate::Open,
        Some(c) => match spec.consumers.iter().find(|x| x.name == c) {
            Some(b) => ProfileGate::Profile(b.profile as usize),
            None if spec.unprofiled == Unprofiled::Refused => ProfileGate::Closed,
            None => ProfileGate::Open,
        },
    }
}

/// One configuration's facts.
pub struct ConfigFacts<'a> {
    pub name: &'a str,
    pub restricts: bool,
    pub groups: Vec<&'a str>,
    pub excluded: Vec<&'a str>,
    pub skill_restricts: bool,
    pub skill_tools: Vec<&'a str>,
    pub ceiling: u32,
}

pub fn config_facts<'a>(spec: &'a TableSpec, c: &'a ConfigurationSpec) -> ConfigFacts<'a> {
    // A new run's skill allow-list: the union of the attached skills' declarations.
    let declared: Vec<&Vec<String>> = c
        .skills
        .iter()
        .filter_map(|&s| spec.skills[s as usize].tools.as_ref())
        .collect();
    ConfigFacts {
        name: &c.name,
        restricts: c.groups.is_some(),
        groups: c
            .groups
            .iter()
            .flatten()
            .map(|&i| spec.groups[i as usize].name.as_str())
            .collect(),
        excluded: c.excluded.iter().map(String::as_str).collect(),
        skill_restricts: !declared.is_empty(),
        skill_tools: declared
            .iter()
            .flat_map(|l| l.iter())
            .map(String::as_str)
            .collect(),
        ceiling: spec.zones[c.zone as usize].ceiling,
    }
}

/// A profile's tools, prefixes and groups expanded, in table order.
pub fn profile_tools(spec: &TableSpec, profile: usize) -> Vec<&str> {
    let p = &spec.profiles[profile];
    spec.tools
        .iter()
        .filter(|t| {
            p.tools.contains(&t.name)
                || p.groups.contains(&t.group)
                || p.prefixes.iter().any(|x| t.name.starts_with(x.as_str()))
        })
        .map(|t| t.name.as_str())
        .collect()
}

/// One context of the agreement space.
pub struct PeerContext<'a> {
    pub config: &'a str,
    pub role: Role,
    pub consumer: Option<&'a str>,
    pub mode: Option<&'static str>,
    /// The enforcement the context runs under (the table's own if no mode).
    pub observe: bool,
}

/// Check that a peer agrees with the table on every tool for every
/// configuration (the first `max_configs`), role, consumer (none, a stranger,
/// each declared one) and enforcement mode. `peer` answers whether the tool
/// (its index) is allowed in the context. Returns the number of decisions
/// compared.
pub fn check_agreement(
    table: &Table,
    max_configs: usize,
    mut peer: impl FnMut(&PeerContext, usize) -> bool,
    engine: &str,
) -> Result<usize, String> {
    let spec = table.spec();
    let mut consumers: Vec<Option<&str>> = vec![None, Some("__stranger__")];
    consumers.extend(spec.consumers.iter().map(|c| Some(c.name.as_str())));
    let mut n = 0;
    for cfg in table.configuration_names().take(max_configs) {
        for role in Role::ALL {
            for consumer in &consumers {
                for (mode, observe) in [
                    (None, spec.observe),
                    (Some("observe"), true),
                    (Some("enforce"), false),
                ] {
                    let ctx = table
                        .context(cfg)
                        .map_err(|e| e.to_string())?
                        .role(role)
                        .consumer(*consumer)
                        .enforcement(mode);
                    let pctx = PeerContext {
                        config: cfg,
                        role,
                        consumer: *consumer,
                        mode,
                        observe,
                    };
                    for i in 0..spec.tools.len() {
                        let ours = ctx.decide_id(i as u32).allowed;
                        let theirs = peer(&pctx, i);
                        if ours != theirs {
                            return Err(format!(
                                "{cfg} {role:?} {consumer:?} {mode:?} {}: toolgate {ours}, {engine} {theirs}",
                                spec.tools[i].name
                            ));
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    Ok(n)
}

/// The timed context of the benches as a peer context: `config0`, a user,
/// consumer `k0`, the table's enforcement.
pub fn timed_context<'a>(spec: &TableSpec, config: &'a str) -> PeerContext<'a> {
    PeerContext {
        config,
        role: Role::User,
        consumer: Some("k0"),
        mode: None,
        observe: spec.observe,
    }
}
