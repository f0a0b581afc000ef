//! [`Table`]: a [`TableSpec`] laid out for deciding. Per tool a few bits;
//! per configuration a bit set of allowed tools and one of excluded tools;
//! per class rank the tools above it; per profile the tools it holds.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;

use crate::bits::BitSet;
use crate::format::{self, LoadError};
use crate::phf::{HashError, NameHash, Pilots};
use crate::spec::*;

/// Most data classes a table may have (ranks fit the per-class bit sets).
pub const MAX_CLASSES: usize = 64;

#[derive(Debug, Clone)]
pub struct Table {
    pub(crate) spec: TableSpec,
    pub(crate) digest: [u8; 32],
    pub(crate) tool_index: NameIndex,
    pub(crate) group_index: HashMap<String, u32>,
    pub(crate) config_index: HashMap<String, u32>,
    pub(crate) consumer_index: HashMap<String, u32>,
    pub(crate) skill_index: HashMap<String, u32>,
    pub(crate) enabled: BitSet,
    pub(crate) admin_only: BitSet,
    pub(crate) remote: BitSet,
    /// The three sets above, word by word in one record: a decision reads
    /// one cache line for the table's own gates, not three.
    pub(crate) tool_words: Vec<ToolWord>,
    /// Each tool's class rank, one byte a tool (ranks are below
    /// [`MAX_CLASSES`]): a decision by name reads this, not the tool's spec.
    pub(crate) class_of: Vec<u8>,
    /// `above[c]`: tools whose class rank is above `c`.
    pub(crate) above: Vec<BitSet>,
    /// Each configuration's sets, built the first time a context or a diff
    /// asks for it ([`Table::config_row`]): a table of a million tools and a
    /// thousand configurations loads without 250 MB of sets nobody reads.
    configs: Vec<OnceLock<ConfigRow>>,
    /// Members of each group, as index lists: a configuration's allowed set
    /// is built from the tools of its groups, never from a pass over all tools.
    by_group: Vec<Vec<u32>>,
    pub(crate) profiles: Vec<BitSet>,
    /// Each configuration's and each profile's `needs-approval` tools;
    /// `None` for an empty list (every list, in a table of format 3).
    pub(crate) config_approvals: Vec<Option<BitSet>>,
    pub(crate) profile_approvals: Vec<Option<BitSet>>,
    /// Whether any list above is set: a decision of a table without
    /// approvals reads nothing more than before them.
    pub(crate) any_approvals: bool,
    pub(crate) loader: Option<u32>,
    /// The public key (its public key bytes) whose signature
    /// [`Table::load_verified`] checked; `None` for a table loaded without
    /// one. A handle that requires a signature takes only tables with a key
    /// it trusts ([`crate::TableHandle::install`]).
    pub(crate) verified_by: Option<[u8; 32]>,
}

#[derive(Debug, Clone)]
pub(crate) struct ConfigRow {
    /// Tools of the allowed groups, plus the skill loader.
    pub allowed: BitSet,
    /// A new run's, when the attached skills declare an allow-list:
    /// `allowed` narrowed by it (else a new run gets `allowed`).
    pub fresh_allowed: Option<BitSet>,
    /// A new run's state: the attached skills' allow-list, the exclusions.
    pub fresh_run: crate::run::state::RunState,
    pub excluded: BitSet,
    pub ceiling: u32,
}

fn corrupt(m: impl Into<String>) -> LoadError {
    LoadError::Corrupt(m.into())
}

/// Tool name -> index: the table's minimal perfect hash gives the one
/// candidate, and the name is compared ([`crate::phf`]).
#[derive(Debug, Clone)]
pub(crate) struct NameIndex(NameHash);

impl NameIndex {
    /// Check stored pilots against the spec's names.
    fn new(spec: &TableSpec, pilots: Pilots) -> Result<NameIndex, LoadError> {
        let names = || spec.tools.iter().map(|t| t.name.as_str());
        match NameHash::check(pilots, names()) {
            Ok(h) => Ok(NameIndex(h)),
            Err(HashError::Duplicate(_, i)) => Err(twice(&spec.tools[i].name)),
            // Pilots of names that are not distinct are not stored at all:
            // name the duplicate when there is one.
            Err(HashError::NotPerfect) => Err(match duplicate(names()) {
                Some(name) => twice(name),
                None => corrupt("the name hash does not give every tool a slot of its own"),
            }),
        }
    }

    /// Build the pilots for the spec's names (the in-memory path).
    fn build(spec: &TableSpec) -> Result<NameIndex, LoadError> {
        let names = || spec.tools.iter().map(|t| t.name.as_str());
        match crate::phf::build(names()) {
            Some(p) => NameIndex::new(spec, p),
            None => Err(match duplicate(names()) {
                Some(name) => twice(name),
                None => corrupt("no name hash places these tool names"),
            }),
        }
    }

    #[inline]
    fn get(&self, spec: &TableSpec, name: &str) -> Option<u32> {
        self.0.get(name, |i| spec.tools[i as usize].name.as_str())
    }

    fn get_many<S: AsRef<str>>(&self, spec: &TableSpec, names: &[S], out: &mut Vec<Option<u32>>) {
        self.0
            .get_many(names, out, |i| spec.tools[i as usize].name.as_str())
    }
}

fn twice(name: &str) -> LoadError {
    corrupt(format!("tool `{name}` appears twice"))
}

/// The first name seen twice (error paths only).
fn duplicate<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = rustc_hash::FxHashSet::default();
    names.into_iter().find(|n| !seen.insert(*n))
}

fn index_of<'a>(
    names: impl ExactSizeIterator<Item = &'a str>,
    what: &str,
) -> Result<HashMap<String, u32>, LoadError> {
    let mut m = HashMap::with_capacity_and_hasher(names.len(), Default::default());
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
        let (spec, digest, pilots) = format::decode_parts(bytes)?;
        check_ranks(&spec)?;
        let names = NameIndex::new(&spec, pilots)?;
        Table::from_parts(spec, digest, names)
    }

    /// The public key whose signature was verified when this table was
    /// loaded ([`Table::load_verified`]); `None` when none was.
    pub fn verified_by(&self) -> Option<&[u8; 32]> {
        self.verified_by.as_ref()
    }

    /// Build from a spec (the compiler's in-memory path; `load` ends here too).
    pub fn from_spec(spec: TableSpec, digest: [u8; 32]) -> Result<Table, LoadError> {
        check_ranks(&spec)?;
        let names = NameIndex::build(&spec)?;
        Table::from_parts(spec, digest, names)
    }

    fn from_parts(
        spec: TableSpec,
        digest: [u8; 32],
        tool_index: NameIndex,
    ) -> Result<Table, LoadError> {
        let group_index = index_of(spec.groups.iter().map(|g| g.name.as_str()), "group")?;
        let config_index = index_of(
            spec.configurations.iter().map(|c| c.name.as_str()),
            "configuration",
        )?;
        let consumer_index = index_of(spec.consumers.iter().map(|c| c.name.as_str()), "consumer")?;
        let skill_index = index_of(spec.skills.iter().map(|s| s.name.as_str()), "skill")?;
        let sets = ToolSets::new(&spec)?;
        let loader = tool_index.get(&spec, &spec.skill_loader);
        check_configurations(&spec)?;
        let configs = spec
            .configurations
            .iter()
            .map(|_| OnceLock::new())
            .collect();
        let (profiles, config_approvals, profile_approvals) =
            selector_sets(&spec, &tool_index, &sets.by_group)?;
        if spec
            .consumers
            .iter()
            .any(|c| c.profile as usize >= spec.profiles.len())
        {
            return Err(corrupt("a consumer's profile is out of range"));
        }
        // check_ranks and ToolSets bound every class below MAX_CLASSES.
        let class_of = spec.tools.iter().map(|t| t.class as u8).collect();
        let tool_words = ToolWord::interleave(&sets.enabled, &sets.admin_only, &sets.remote);
        Ok(Table {
            spec,
            digest,
            tool_index,
            group_index,
            config_index,
            consumer_index,
            skill_index,
            enabled: sets.enabled,
            admin_only: sets.admin_only,
            remote: sets.remote,
            tool_words,
            class_of,
            above: sets.above,
            configs,
            by_group: sets.by_group,
            profiles,
            any_approvals: config_approvals
                .iter()
                .chain(&profile_approvals)
                .any(Option::is_some),
            config_approvals,
            profile_approvals,
            loader,
            verified_by: None,
        })
    }

    /// The sets of configuration `ci` (an index below the configurations'
    /// count), built on first use; every reference in it was range-checked
    /// at load.
    pub(crate) fn config_row(&self, ci: usize) -> &ConfigRow {
        self.configs[ci].get_or_init(|| {
            config_row(
                &self.spec,
                &self.tool_index,
                &self.by_group,
                self.loader,
                &self.spec.configurations[ci],
            )
        })
    }

    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// The table file of this table's spec ([`format::encode_file`]), with
    /// the name hash the table already holds rather than a second build of
    /// it (the same pilots: both come from [`crate::phf::build`] over the
    /// spec's names).
    pub fn encode_file(&self) -> Vec<u8> {
        format::encode_file(&self.spec, Some(self.tool_index.0.pilots()))
    }

    /// The sha256 of the table's payload, as set by the compiler.
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    pub fn digest_hex(&self) -> String {
        format::hex(&self.digest)
    }

    pub fn tool_count(&self) -> usize {
        self.spec.tools.len()
    }

    /// Index of a registered tool.
    #[inline]
    pub fn tool_id(&self, name: &str) -> Option<u32> {
        self.tool_index.get(&self.spec, name)
    }

    /// [`Table::tool_id`] of many names, appended to `out` in order, with
    /// the lookups of a batch overlapped (a proxy filtering an upstream's
    /// `tools/list` asks for all its names at once).
    pub fn tool_ids<S: AsRef<str>>(&self, names: &[S], out: &mut Vec<Option<u32>>) {
        self.tool_index.get_many(&self.spec, names, out)
    }

    pub fn tool_name(&self, id: u32) -> &str {
        &self.spec.tools[id as usize].name
    }

    pub fn configuration_names(&self) -> impl Iterator<Item = &str> {
        self.spec.configurations.iter().map(|c| c.name.as_str())
    }

    /// The consumers the policy binds to a profile, in table order.
    pub fn consumer_names(&self) -> impl Iterator<Item = &str> {
        self.spec.consumers.iter().map(|c| c.name.as_str())
    }

    /// Whether the policy knows consumer `name` (docs/gate-semantics.md §4,
    /// "Who is a consumer"): a name a `consumer` block binds is `Ok`; any
    /// other is `Err`, unless the policy says `unknown-consumers admitted`
    /// and the name is no slip. A slip (empty, padded, holding a control,
    /// format or separator character, or a near miss of a bound consumer:
    /// `Support-bot`, `support_bot` for `support-bot`) is always `Err`: it
    /// would lose that consumer's profile without a word. `Err` carries the
    /// bound consumer it resembles, if any. Edges answer `Err` with
    /// `unknownConsumer` (403 at the gateway, 400 at the decision service),
    /// hosts with their typed `UnknownConsumer` error.
    pub fn check_consumer(&self, name: &str) -> Result<(), Option<&str>> {
        if self.consumer_index.contains_key(name) {
            return Ok(());
        }
        let near = crate::names::did_you_mean(name, self.consumer_names());
        let malformed =
            name.is_empty() || name.trim() != name || crate::names::first_invisible(name).is_some();
        if near.is_some() || malformed || !self.spec.unknown_consumers_admitted {
            Err(near)
        } else {
            Ok(())
        }
    }

    /// Whether the policy admits consumer names it does not bind
    /// (`unknown-consumers admitted`).
    pub fn admits_unknown_consumers(&self) -> bool {
        self.spec.unknown_consumers_admitted
    }

    /// What an MCP consumer without a profile gets
    /// (`consumers-without-profile`): `true` when it is refused.
    pub fn refuses_unprofiled(&self) -> bool {
        self.spec.unprofiled == crate::spec::Unprofiled::Refused
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
            .partition(|n| self.tool_index.get(&self.spec, n).is_some());
        Some((reg, stale))
    }

    pub fn zone_name(&self, zone: u32) -> &str {
        &self.spec.zones[zone as usize].name
    }

    pub fn class_name(&self, rank: u32) -> &str {
        &self.spec.classes[rank as usize]
    }
}

/// One configuration's bit sets, read-only: for analyses over the whole
/// decision space (the compiler's no-effect lint) that must read the very
/// sets the gates read.
#[derive(Debug, Clone, Copy)]
pub struct ConfigSets<'t> {
    /// Tools of the allowed groups, plus the skill loader.
    pub allowed: &'t BitSet,
    /// What a new run passes: `allowed` narrowed by the attached skills'
    /// allow-list when one declares one, else `allowed`.
    pub new_run_allowed: &'t BitSet,
    /// Whether a new run is held to an allow-list (some attached skill declares one).
    pub new_run_listed: bool,
    pub excluded: &'t BitSet,
    /// Rank of the highest class the configuration's zone may receive.
    pub ceiling: u32,
}

impl Table {
    /// The tools whose effective state is enabled (the `toolDisabled` gate passes).
    pub fn enabled_tools(&self) -> &BitSet {
        &self.enabled
    }

    /// The tools whose class is above rank `ceiling` (empty past the ladder).
    pub fn tools_above(&self, ceiling: u32) -> Option<&BitSet> {
        self.above.get(ceiling as usize)
    }

    /// The bit sets of configuration `index` (in table order), handed to
    /// `f`; `None` past the configurations. A row no context has built yet
    /// is built for `f` and dropped after it, not kept: a pass over every
    /// configuration (the compiler's no-effect lint) would otherwise leave
    /// every row cached in the table, three sets of a bit a tool each
    /// (375 MB at a million tools and 1,000 configurations), each page of
    /// them new to the process.
    pub fn with_configuration_sets<R>(
        &self,
        index: usize,
        f: impl FnOnce(ConfigSets<'_>) -> R,
    ) -> Option<R> {
        let built;
        let row = match self.configs.get(index)?.get() {
            Some(row) => row,
            None => {
                built = config_row(
                    &self.spec,
                    &self.tool_index,
                    &self.by_group,
                    self.loader,
                    &self.spec.configurations[index],
                );
                &built
            }
        };
        Some(f(ConfigSets {
            allowed: &row.allowed,
            new_run_allowed: row.fresh_allowed.as_ref().unwrap_or(&row.allowed),
            new_run_listed: row.fresh_allowed.is_some(),
            excluded: &row.excluded,
            ceiling: row.ceiling,
        }))
    }

    /// The skill loader's index, when it is registered.
    pub fn skill_loader_id(&self) -> Option<u32> {
        self.loader
    }
}

impl Table {
    /// For two tables over the same tools in the same order (check once with
    /// [`Table::same_tools`]; only the counts are checked here): the 64-tool
    /// words in which some decision of `config` may differ between them, for
    /// any role, enforcement mode or consumer, leaving the profile gate aside
    /// (see [`Table::changed_profile_words`]). `None` when the tool lists
    /// differ or a table lacks the configuration. A word not listed holds
    /// only tools whose every gate mask is identical: their decisions are
    /// equal, so a diff may skip them.
    pub fn changed_words(&self, other: &Table, config: &str) -> Option<Vec<usize>> {
        if self.tool_count() != other.tool_count() {
            return None;
        }
        let (ia, ib) = (
            *self.config_index.get(config)? as usize,
            *other.config_index.get(config)? as usize,
        );
        let (a, b) = (self.config_row(ia), other.config_row(ib));
        let (pa, pb) = (
            self.config_approvals.get(ia).and_then(Option::as_ref),
            other.config_approvals.get(ib).and_then(Option::as_ref),
        );
        let (aa, ba) = (
            a.fresh_allowed.as_ref().unwrap_or(&a.allowed),
            b.fresh_allowed.as_ref().unwrap_or(&b.allowed),
        );
        let (av, bv) = (
            &self.above[a.ceiling as usize],
            &other.above[b.ceiling as usize],
        );
        let observe_differs = self.spec.observe != other.spec.observe;
        let words = self.tool_count().div_ceil(64);
        let w = |s: &BitSet, i: usize| s.words().get(i).copied().unwrap_or(0);
        let ow = |s: Option<&BitSet>, i: usize| s.map_or(0, |s| w(s, i));
        Some(
            (0..words)
                .filter(|&i| {
                    ow(pa, i) != ow(pb, i)
                        || w(&self.enabled, i) != w(&other.enabled, i)
                        || w(&self.admin_only, i) != w(&other.admin_only, i)
                        || w(&self.remote, i) != w(&other.remote, i)
                        || w(aa, i) != w(ba, i)
                        || w(&a.excluded, i) != w(&b.excluded, i)
                        || w(av, i) != w(bv, i)
                        || (observe_differs && (w(av, i) | w(bv, i)) != 0)
                })
                .collect(),
        )
    }

    /// The words in which the profile gate of `consumer` (`None`: not an MCP
    /// consumer) may differ between two tables over the same tools.
    pub fn changed_profile_words(&self, other: &Table, consumer: Option<&str>) -> Vec<usize> {
        let gate = |t: &Table| -> Option<Option<u32>> {
            let c = consumer?;
            Some(match t.consumer_index.get(c) {
                Some(&i) => Some(t.spec.consumers[i as usize].profile),
                None if t.spec.unprofiled == Unprofiled::Refused => None,
                None => return None,
            })
        };
        let word = |t: &Table, g: Option<Option<u32>>, i: usize| -> u64 {
            match g {
                None => !0,
                Some(None) => 0,
                Some(Some(p)) => t.profiles[p as usize].words().get(i).copied().unwrap_or(0),
            }
        };
        // The profile's approvals, for a consumer bound to one.
        let approvals = |t: &Table, g: Option<Option<u32>>, i: usize| -> u64 {
            match g {
                Some(Some(p)) => t.profile_approvals[p as usize]
                    .as_ref()
                    .and_then(|s| s.words().get(i).copied())
                    .unwrap_or(0),
                _ => 0,
            }
        };
        let (ga, gb) = (gate(self), gate(other));
        (0..self.tool_count().div_ceil(64))
            .filter(|&i| {
                word(self, ga, i) != word(other, gb, i)
                    || approvals(self, ga, i) != approvals(other, gb, i)
            })
            .collect()
    }

    /// Whether both tables hold the same tools in the same order.
    pub fn same_tools(&self, other: &Table) -> bool {
        self.spec.tools.len() == other.spec.tools.len()
            && self
                .spec
                .tools
                .iter()
                .zip(&other.spec.tools)
                .all(|(a, b)| a.name == b.name)
    }
}

/// The class, zone and group ranks a spec refers to are in range.
fn check_ranks(spec: &TableSpec) -> Result<(), LoadError> {
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
    Ok(())
}

/// Per-tool bit sets, and the members of each group.
/// Word `w` of the enabled, admin-only and remote sets, in one aligned
/// 32-byte record (two to a cache line).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct ToolWord {
    pub enabled: u64,
    pub admin_only: u64,
    pub remote: u64,
}

impl ToolWord {
    fn interleave(enabled: &BitSet, admin_only: &BitSet, remote: &BitSet) -> Vec<ToolWord> {
        let (e, a, r) = (enabled.words(), admin_only.words(), remote.words());
        e.iter()
            .zip(a)
            .zip(r)
            .map(|((&enabled, &admin_only), &remote)| ToolWord {
                enabled,
                admin_only,
                remote,
            })
            .collect()
    }
}

struct ToolSets {
    enabled: BitSet,
    admin_only: BitSet,
    remote: BitSet,
    by_group: Vec<Vec<u32>>,
    /// `above[c]`: the tools whose class is above rank `c`.
    above: Vec<BitSet>,
}

impl ToolSets {
    fn new(spec: &TableSpec) -> Result<ToolSets, LoadError> {
        let n = spec.tools.len();
        let nc = spec.classes.len();
        let mut enabled = BitSet::new(n);
        let mut admin_only = BitSet::new(n);
        let mut remote = BitSet::new(n);
        // Members of each group, as index lists: a configuration's allowed set is
        // built from the tools of its groups, never from a pass over all tools.
        let mut by_group: Vec<Vec<u32>> = vec![Vec::new(); spec.groups.len()];
        let mut by_class: Vec<BitSet> = vec![BitSet::new(n); nc];
        for (i, t) in spec.tools.iter().enumerate() {
            // The compiler never writes such a name: a table holding one was
            // not made by it, and its names would reach prompts and terminals.
            if let Some((_, c)) = crate::names::first_invisible(&t.name) {
                return Err(corrupt(format!(
                    "tool name `{}` holds the control or format character U+{:04X}",
                    crate::names::escape(&t.name),
                    c as u32
                )));
            }
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
            by_group[t.group as usize].push(i as u32);
            by_class[t.class as usize].insert(i);
        }
        // above[c] = union of by_class[c+1..]
        let mut above = vec![BitSet::new(n); nc];
        for c in (0..nc.saturating_sub(1)).rev() {
            let mut s = above[c + 1].clone();
            s.union_with(&by_class[c + 1]);
            above[c] = s;
        }
        Ok(ToolSets {
            enabled,
            admin_only,
            remote,
            by_group,
            above,
        })
    }
}

/// Every reference a configuration makes is in range (at load: the sets
/// themselves are built on first use, and must not fail then).
fn check_configurations(spec: &TableSpec) -> Result<(), LoadError> {
    for c in &spec.configurations {
        let bad = if c.zone as usize >= spec.zones.len() {
            Some("has a zone")
        } else if c
            .groups
            .as_ref()
            .is_some_and(|gs| gs.iter().any(|&g| g as usize >= spec.groups.len()))
        {
            Some("names a group")
        } else if c.skills.iter().any(|&s| s as usize >= spec.skills.len()) {
            Some("names a skill")
        } else {
            None
        };
        if let Some(what) = bad {
            return Err(corrupt(format!(
                "configuration `{}` {what} out of range",
                c.name
            )));
        }
    }
    Ok(())
}

/// A configuration's allowed and excluded tools, and a new run's
/// (its references were checked by [`check_configurations`]).
fn config_row(
    spec: &TableSpec,
    tool_index: &NameIndex,
    by_group: &[Vec<u32>],
    loader: Option<u32>,
    c: &ConfigurationSpec,
) -> ConfigRow {
    let n = spec.tools.len();
    let mut allowed = match &c.groups {
        None => BitSet::full(n),
        Some(gs) => {
            let mut a = BitSet::new(n);
            for members in gs.iter().filter_map(|&g| by_group.get(g as usize)) {
                for &i in members {
                    a.insert(i as usize);
                }
            }
            a
        }
    };
    if let Some(l) = loader {
        allowed.insert(l as usize);
    }
    let mut excluded = BitSet::new(n);
    for name in &c.excluded {
        if let Some(i) = tool_index.get(spec, name) {
            excluded.insert(i as usize);
        }
    }
    // The configuration's exclusions apply through `excluded` (and the
    // live gate) already; a new run adds none of its own.
    let fresh_run = crate::run::state::RunState {
        allowed: spec.allow_list_of(&c.skills),
        excluded: crate::run::state::Exclusions::Names(Vec::new()),
    };
    let fresh_allowed = match &fresh_run.allowed {
        crate::run::state::AllowList::Only(names) => {
            let mut list = BitSet::new(n);
            for name in names {
                if let Some(i) = tool_index.get(spec, name) {
                    list.insert(i as usize);
                }
            }
            let mut fresh = allowed.clone();
            fresh.intersect_with(&list);
            if let Some(l) = loader {
                fresh.insert(l as usize);
            }
            Some(fresh)
        }
        _ => None,
    };
    ConfigRow {
        allowed,
        fresh_allowed,
        fresh_run,
        excluded,
        // check_configurations kept the zone in range.
        ceiling: spec.zones.get(c.zone as usize).map_or(0, |z| z.ceiling),
    }
}

/// Each profile's tools, and each configuration's and profile's approvals:
/// named tools, their groups' members, and their prefixes'.
type SelectorSets = (Vec<BitSet>, Vec<Option<BitSet>>, Vec<Option<BitSet>>);

fn selector_sets(
    spec: &TableSpec,
    tool_index: &NameIndex,
    by_group: &[Vec<u32>],
) -> Result<SelectorSets, LoadError> {
    let n = spec.tools.len();
    // The tools of each distinct prefix selector, found once: by a scan
    // when there are few distinct prefixes (the usual `mcp_<server>_*`),
    // else by ranges of the sorted names.
    let approvals = spec
        .configurations
        .iter()
        .map(|c| (c.name.as_str(), &c.approval))
        .chain(spec.profiles.iter().map(|p| (p.name.as_str(), &p.approval)));
    let mut distinct: Vec<&str> = spec
        .profiles
        .iter()
        .flat_map(|p| p.prefixes.iter().map(String::as_str))
        .chain(
            approvals
                .clone()
                .flat_map(|(_, a)| a.prefixes.iter().map(String::as_str)),
        )
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut by_prefix: HashMap<&str, Vec<u32>> = HashMap::default();
    if distinct.len() <= 16 {
        for pre in &distinct {
            let members = spec
                .tools
                .iter()
                .enumerate()
                .filter(|(_, t)| t.name.starts_with(pre))
                .map(|(i, _)| i as u32)
                .collect();
            by_prefix.insert(pre, members);
        }
    } else {
        let mut sorted: Vec<(&str, u32)> = spec
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i as u32))
            .collect();
        sorted.sort_unstable();
        for pre in &distinct {
            let from = sorted.partition_point(|(name, _)| name < pre);
            let members = sorted[from..]
                .iter()
                .take_while(|(name, _)| name.starts_with(pre))
                .map(|(_, i)| *i)
                .collect();
            by_prefix.insert(pre, members);
        }
    }
    let set_of = |what: &str, tools: &[String], groups: &[u32], prefixes: &[String]| {
        let mut set = BitSet::new(n);
        for name in tools {
            if let Some(i) = tool_index.get(spec, name) {
                set.insert(i as usize);
            }
        }
        for &g in groups {
            let members = by_group
                .get(g as usize)
                .ok_or_else(|| corrupt(format!("{what} names a group out of range")))?;
            for &i in members {
                set.insert(i as usize);
            }
        }
        for pre in prefixes {
            for &i in by_prefix
                .get(pre.as_str())
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                set.insert(i as usize);
            }
        }
        Ok::<_, LoadError>(set)
    };
    let mut profiles = Vec::with_capacity(spec.profiles.len());
    for p in &spec.profiles {
        let what = format!("profile `{}`", p.name);
        profiles.push(set_of(&what, &p.tools, &p.groups, &p.prefixes)?);
    }
    let approval = |(name, a): (&str, &SelectorSpec)| -> Result<Option<BitSet>, LoadError> {
        if a.is_empty() {
            return Ok(None);
        }
        let what = format!("the approvals of `{name}`");
        set_of(&what, &a.tools, &a.groups, &a.prefixes).map(Some)
    };
    let mut all = approvals.map(approval).collect::<Result<Vec<_>, _>>()?;
    let of_profiles = all.split_off(spec.configurations.len());
    Ok((profiles, all, of_profiles))
}
