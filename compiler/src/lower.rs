//! Validated model -> decision table. This is where registry defaults and
//! policy overrides become effective facts: enabled = group enabled AND tool
//! state; class = declared, else group default, else the top class; a
//! configuration's zone = the least trusted of its provider's and fallbacks'.

use toolgate_runtime::format;
use toolgate_runtime::spec::*;
use toolgate_runtime::{LoadError, Table};

use crate::model::{self, Audience, Model};

/// Lower a model into the plain table description.
pub fn lower(m: &Model) -> TableSpec {
    let least = m.least_trusted_zone().unwrap_or(0);
    TableSpec {
        policy_digests: m.provenance.policies.clone(),
        registry_digest: m.provenance.registry.clone(),
        classes: m.classes.clone(),
        zones: m
            .zones
            .iter()
            .map(|z| ZoneSpec {
                name: z.name.clone(),
                ceiling: z.ceiling as u32,
            })
            .collect(),
        least_trusted_zone: least as u32,
        groups: m
            .groups
            .iter()
            .map(|g| GroupSpec {
                name: g.name.clone(),
                enabled: g.state != Some(false),
                default_class: g.default_class.map(|c| c as u32),
            })
            .collect(),
        tools: tools(m),
        skills: m
            .skills
            .iter()
            .map(|s| SkillSpec {
                name: s.name.clone(),
                tools: s.tools.clone(),
            })
            .collect(),
        configurations: configurations(m, least),
        profiles: m.profiles.iter().map(profile).collect(),
        consumers: m
            .consumers
            .iter()
            .map(|c| ConsumerSpec {
                name: c.name.clone(),
                profile: c.profile as u32,
            })
            .collect(),
        gateways: m
            .gateways
            .iter()
            .map(|g| GatewaySpec {
                name: g.name.clone(),
                rules: g.rules.clone(),
            })
            .collect(),
        observe: m.settings.enforcement == model::Enforcement::Observe,
        remote_visibility: match m.settings.remote_visibility {
            Audience::Admins => Visibility::Admins,
            Audience::Everyone => Visibility::Everyone,
            Audience::Nobody => Visibility::Nobody,
        },
        unprofiled: match m.settings.unprofiled {
            model::Unprofiled::Unrestricted => Unprofiled::Unrestricted,
            model::Unprofiled::Refused => Unprofiled::Refused,
        },
        unknown_consumers_admitted: m.settings.unknown_consumers
            == model::UnknownConsumers::Admitted,
        skill_loader: m.settings.skill_loader.clone(),
    }
}

fn tools(m: &Model) -> Vec<ToolSpec> {
    m.tools
        .iter()
        .enumerate()
        .map(|(i, t)| ToolSpec {
            name: t.name.clone(),
            group: t.group as u32,
            remote: t.remote,
            enabled: m.groups[t.group].state != Some(false) && t.state.unwrap_or(t.default_enabled),
            admin_only: t.admin_only,
            class: m.tool_class(i) as u32,
            descriptor_bytes: descriptor_bytes(t) as u32,
        })
        .collect()
}

/// The configurations, each with the zone its provider (and the provider's
/// fallbacks) may receive: the least trusted of them.
fn configurations(m: &Model, least: usize) -> Vec<ConfigurationSpec> {
    let provider_zone = |p: usize| m.providers[p].zone.unwrap_or(least);
    // Lower ceiling = less trusted.
    let less_trusted = |a: usize, b: usize| {
        if m.zones[b].ceiling < m.zones[a].ceiling {
            b
        } else {
            a
        }
    };
    m.configurations
        .iter()
        .map(|c| {
            // A missing provider counts as the least trusted zone.
            let zone = match c.provider {
                None => least,
                Some(p) => m.providers[p]
                    .fallback
                    .iter()
                    .fold(provider_zone(p), |z, &f| less_trusted(z, provider_zone(f))),
            };
            ConfigurationSpec {
                name: c.name.clone(),
                file: c.file.clone(),
                provider: c.provider.map(|p| m.providers[p].name.clone()),
                zone: zone as u32,
                groups: c
                    .groups
                    .as_ref()
                    .map(|g| g.iter().map(|&x| x as u32).collect()),
                excluded: c.excluded.clone(),
                skills: c.skills.iter().map(|&s| s as u32).collect(),
                approval: selectors(&c.approval),
            }
        })
        .collect()
}

fn profile(p: &model::Profile) -> ProfileSpec {
    let SelectorSpec {
        tools,
        groups,
        prefixes,
    } = selectors(&p.allow);
    ProfileSpec {
        name: p.name.clone(),
        file: p.file.clone(),
        tools,
        groups,
        prefixes,
        approval: selectors(&p.approval),
    }
}

/// A selector list as the table holds it.
fn selectors(list: &[model::Selector]) -> SelectorSpec {
    let mut spec = SelectorSpec::default();
    for s in list {
        match s {
            model::Selector::Tool(n) => spec.tools.push(n.clone()),
            model::Selector::Group(g) => spec.groups.push(*g as u32),
            model::Selector::Prefix(x) => spec.prefixes.push(x.clone()),
        }
    }
    spec
}

/// What a tool's descriptor costs in a prompt.
fn descriptor_bytes(t: &model::Tool) -> usize {
    crate::registry::descriptor_bytes(&t.name, t.description.as_deref(), t.input_schema.as_ref())
}

/// The compiled artifact: header + payload, byte-identical for the same input.
pub fn compile(m: &Model) -> Vec<u8> {
    encode(&lower(m))
}

/// The table file of a lowered model: its payload framed with its digest.
pub fn encode(spec: &TableSpec) -> Vec<u8> {
    format::encode_file(spec, None)
}

/// [`encode`] of the spec of a table [`lowered`] (or [`table`]) made,
/// reusing the name hash the table holds.
pub fn encode_lowered(table: &Table) -> Vec<u8> {
    table.encode_file()
}

/// The model lowered into a table to analyse, not to ship: its digest is
/// left unset, since the payload is not encoded (the no-effect lint reads
/// the table; `toolgate compile` then [`encode`]s its spec rather than
/// lowering the model again).
pub fn lowered(m: &Model) -> Result<Table, LoadError> {
    Table::from_spec(lower(m), [0; 32])
}

fn digest(payload: &[u8]) -> [u8; 32] {
    format::payload_digest(payload)
}

/// The in-memory table of a model, as the runtime would load it.
pub fn table(m: &Model) -> Result<Table, LoadError> {
    let spec = lower(m);
    let d = digest(&format::encode_payload(&spec));
    Table::from_spec(spec, d)
}
