//! [`Table`]: a [`TableSpec`] laid out for deciding. Per tool a few bits;
//! per configuration a bit set of allowed tools and one of excluded tools;
//! per class rank the tools above it; per profile the tools it holds.

use std::collections::HashMap;

use crate::bits::BitSet;
use crate::format::{self, LoadError};
use crate::spec::*;

/// Most data classes a table may have (ranks fit the per-class bit sets).
pub const MAX_CLASSES: usize = 64;

#[derive(Debug, Clone)]
pub struct Table {
    pub(crate) spec: TableSpec,
    pub(crate) digest: [u8; 32],
    pub(crate) tool_index: HashMap<String, u32>,
    pub(crate) group_index: HashMap<String, u32>,
    pub(crate) config_index: HashMap<String, u32>,
    pub(crate) consumer_index: HashMap<String, u32>,
    pub(crate) skill_index: HashMap<String, u32>,
    pub(crate) enabled: BitSet,
    pub(crate) admin_only: BitSet,
    pub(crate) remote: BitSet,
    /// `above[c]`: tools whose class rank is above `c`.
    pub(crate) above: Vec<BitSet>,
    pub(crate) configs: Vec<ConfigRow>,
    pub(crate) profiles: Vec<BitSet>,
    pub(crate) loader: Option<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct ConfigRow {
    /// Tools of the allowed groups, plus the skill loader.
    pub allowed: BitSet,
    /// A new run's: `allowed` narrowed by the attached skills' allow-list.
    pub fresh_allowed: BitSet,
    /// A new run's state: the attached skills' allow-list, the exclusions.
    pub fresh_run: crate::run::RunState,
    pub excluded: BitSet,
    pub ceiling: u32,
}

fn corrupt(m: impl Into<String>) -> LoadError {
    LoadError::Corrupt(m.into())
}

fn index_of<'a>(
    names: impl Iterator<Item = &'a str>,
    what: &str,
) -> Result<HashMap<String, u32>, LoadError> {
    let mut m = HashMap::new();
    for (i, n) in names.enumerate() {
        if m.insert(n.to_string(), i as u32).is_some() {
            return Err(corrupt(format!("{what} `{n}` appears twice")));
        }
    }
    Ok(m)
}

impl Table {
    /// Load a compiled table file. Fails closed on any doubt.
    pub fn load(bytes: &[u8]) -> Result<Table, LoadError> {
        let (spec, digest) = format::decode(bytes)?;
        Table::from_spec(spec, digest)
    }

    /// Build from a spec (the compiler's in-memory path; `load` ends here too).
    pub fn from_spec(spec: TableSpec, digest: [u8; 32]) -> Result<Table, LoadError> {
        let n = spec.tools.len();
        let nc = spec.classes.len();
        if nc == 0 || nc > MAX_CLASSES {
            return Err(corrupt(format!(
                "{nc} data classes (1 to {MAX_CLASSES} allowed)"
            )));
        }
        if spec.zones.is_empty() || spec.least_trusted_zone as usize >= spec.zones.len() {
            return Err(corrupt(
                "no zones, or the least trusted zone is out of range",
            ));
        }
        if spec.zones.iter().any(|z| z.ceiling as usize >= nc) {
            return Err(corrupt("a zone's ceiling is not a class"));
        }
        if spec
            .groups
            .iter()
            .any(|g| g.default_class.is_some_and(|c| c as usize >= nc))
        {
            return Err(corrupt("a group's default class is not a class"));
        }
        let tool_index = index_of(spec.tools.iter().map(|t| t.name.as_str()), "tool")?;
        let group_index = index_of(spec.groups.iter().map(|g| g.name.as_str()), "group")?;
        let config_index = index_of(
            spec.configurations.iter().map(|c| c.name.as_str()),
            "configuration",
        )?;
        let consumer_index = index_of(spec.consumers.iter().map(|c| c.name.as_str()), "consumer")?;
        let skill_index = index_of(spec.skills.iter().map(|s| s.name.as_str()), "skill")?;

        let mut enabled = BitSet::new(n);
        let mut admin_only = BitSet::new(n);
        let mut remote = BitSet::new(n);
        let mut by_group: Vec<BitSet> = vec![BitSet::new(n); spec.groups.len()];
        let mut by_class: Vec<BitSet> = vec![BitSet::new(n); nc];
        for (i, t) in spec.tools.iter().enumerate() {
            if t.group as usize >= spec.groups.len() || t.class as usize >= nc {
                return Err(corrupt(format!(
                    "tool `{}` has a group or class out of range",
                    t.name
                )));
            }
            if t.enabled {
                enabled.insert(i);
            }
            if t.admin_only {
                admin_only.insert(i);
            }
            if t.remote {
                remote.insert(i);
            }
            by_group[t.group as usize].insert(i);
            by_class[t.class as usize].insert(i);
        }
        // above[c] = union of by_class[c+1..]
        let mut above = vec![BitSet::new(n); nc];
        for c in (0..nc.saturating_sub(1)).rev() {
            let mut s = above[c + 1].clone();
            s.union_with(&by_class[c + 1]);
            above[c] = s;
        }
        let loader = tool_index.get(&spec.skill_loader).copied();
        let mut configs = Vec::with_capacity(spec.configurations.len());
        for c in &spec.configurations {
            let zone = spec.zones.get(c.zone as usize).ok_or_else(|| {
                corrupt(format!(
                    "configuration `{}` has a zone out of range",
                    c.name
                ))
            })?;
            let mut allowed = match &c.groups {
                None => BitSet::full(n),
                Some(gs) => {
                    let mut a = BitSet::new(n);
                    for &g in gs {
                        let set = by_group.get(g as usize).ok_or_else(|| {
                            corrupt(format!(
                                "configuration `{}` names a group out of range",
                                c.name
                            ))
                        })?;
                        a.union_with(set);
                    }
                    a
                }
            };
            if let Some(l) = loader {
                allowed.insert(l as usize);
            }
            let mut excluded = BitSet::new(n);
            for name in &c.excluded {
                if let Some(&i) = tool_index.get(name) {
                    excluded.insert(i as usize);
                }
            }
            if c.skills.iter().any(|&s| s as usize >= spec.skills.len()) {
                return Err(corrupt(format!(
                    "configuration `{}` names a skill out of range",
                    c.name
                )));
            }
            let fresh_run = crate::run::RunState {
                allowed: crate::run::allow_list_of(&spec, &c.skills),
                excluded: crate::run::Exclusions::Names(c.excluded.clone()),
            };
            let mut fresh_allowed = allowed.clone();
            if let crate::run::AllowList::Only(names) = &fresh_run.allowed {
                let mut list = BitSet::new(n);
                for name in names {
                    if let Some(&i) = tool_index.get(name) {
                        list.insert(i as usize);
                    }
                }
                fresh_allowed.intersect_with(&list);
                if let Some(l) = loader {
                    fresh_allowed.insert(l as usize);
                }
            }
            configs.push(ConfigRow {
                allowed,
                fresh_allowed,
                fresh_run,
                excluded,
                ceiling: zone.ceiling,
            });
        }
        let mut profiles = Vec::with_capacity(spec.profiles.len());
        for p in &spec.profiles {
            let mut set = BitSet::new(n);
            for name in &p.tools {
                if let Some(&i) = tool_index.get(name) {
                    set.insert(i as usize);
                }
            }
            for &g in &p.groups {
                let gs = by_group.get(g as usize).ok_or_else(|| {
                    corrupt(format!("profile `{}` names a group out of range", p.name))
                })?;
                set.union_with(gs);
            }
            if !p.prefixes.is_empty() {
                for (i, t) in spec.tools.iter().enumerate() {
                    if p.prefixes
                        .iter()
                        .any(|pre| t.name.starts_with(pre.as_str()))
                    {
                        set.insert(i);
                    }
                }
            }
            profiles.push(set);
        }
        if spec
            .consumers
            .iter()
            .any(|c| c.profile as usize >= spec.profiles.len())
        {
            return Err(corrupt("a consumer's profile is out of range"));
        }
        Ok(Table {
            spec,
            digest,
            tool_index,
            group_index,
            config_index,
            consumer_index,
            skill_index,
            enabled,
            admin_only,
            remote,
            above,
            configs,
            profiles,
            loader,
        })
    }

    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// The sha256 of the table's payload, as set by the compiler.
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    pub fn digest_hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn tool_count(&self) -> usize {
        self.spec.tools.len()
    }

    /// Index of a registered tool.
    #[inline]
    pub fn tool_id(&self, name: &str) -> Option<u32> {
        self.tool_index.get(name).copied()
    }

    pub fn tool_name(&self, id: u32) -> &str {
        &self.spec.tools[id as usize].name
    }

    pub fn configuration_names(&self) -> impl Iterator<Item = &str> {
        self.spec.configurations.iter().map(|c| c.name.as_str())
    }

    pub fn configuration(&self, name: &str) -> Option<&ConfigurationSpec> {
        self.config_index
            .get(name)
            .map(|&i| &self.spec.configurations[i as usize])
    }

    /// The active configurations that exclude `tool` (the exclusion readout).
    pub fn configurations_excluding(&self, tool: &str) -> Vec<&str> {
        self.spec
            .configurations
            .iter()
            .filter(|c| c.excluded.iter().any(|e| e == tool))
            .map(|c| c.name.as_str())
            .collect()
    }

    /// A configuration's exclusions, split into (registered, no longer registered).
    pub fn exclusions_of(&self, config: &str) -> Option<(Vec<&str>, Vec<&str>)> {
        let c = self.configuration(config)?;
        let (reg, stale): (Vec<&str>, Vec<&str>) = c
            .excluded
            .iter()
            .map(String::as_str)
            .partition(|n| self.tool_index.contains_key(*n));
        Some((reg, stale))
    }

    pub fn zone_name(&self, zone: u32) -> &str {
        &self.spec.zones[zone as usize].name
    }

    pub fn class_name(&self, rank: u32) -> &str {
        &self.spec.classes[rank as usize]
    }
}
