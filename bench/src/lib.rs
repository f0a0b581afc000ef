//! A deterministic workload generator: realistic registries and policies of
//! any size (groups, admin-only and remote tools, exclusions, zones and
//! fallback chains, skills, profiles), from a seed.

use std::collections::{BTreeSet, HashMap};

/// splitmix64: a tiny deterministic stream; the workload must not depend on a
/// random crate's version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The default ladder, from the one place it is defined.
const CLASSES: [&str; 6] = toolgate_compiler::model::DEFAULT_CLASSES;
const ZONES: [&str; 4] = ["local", "privateHosted", "externalEu", "externalGlobal"];

/// A generated project: the registry (TOML) and one policy file.
pub struct Workload {
    pub registry: String,
    pub policy: String,
    pub tool_names: Vec<String>,
    pub configurations: Vec<String>,
}

impl Workload {
    /// Write the workload as a project: `toolgate.toml`, `registry.toml`, `policy.tg`.
    pub fn write_project(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(
            dir.join("toolgate.toml"),
            "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
        )?;
        std::fs::write(dir.join("registry.toml"), &self.registry)?;
        std::fs::write(dir.join("policy.tg"), &self.policy)
    }
}

/// The registry's tools as drawn from `r`: the registry text, and each
/// tool's name and group (`load_skill` first, in group `skills`).
struct Tools {
    registry: String,
    names: Vec<String>,
    groups: Vec<String>,
}

/// `tools` tools over `groups` groups, the first `remote_groups` of them
/// remote servers.
fn registry(r: &mut Rng, tools: usize, groups: usize, remote_groups: usize) -> Tools {
    let mut registry = String::with_capacity(tools * 80);
    let mut tool_names = Vec::with_capacity(tools);
    let mut tool_groups: Vec<String> = Vec::with_capacity(tools);
    registry.push_str("[[tool]]\nname = \"load_skill\"\ngroup = \"skills\"\n");
    tool_names.push("load_skill".to_string());
    tool_groups.push("skills".into());
    for i in 1..tools {
        let g = r.below(groups);
        if g < remote_groups {
            let name = format!("mcp_srv{g}_tool{i}");
            registry.push_str(&format!(
                "[[tool]]\nname = \"{name}\"\ngroup = \"mcp_srv{g}\"\nserver = \"srv{g}\"\nenabled = {}\nadmin_only = {}\nclass = \"{}\"\n",
                r.chance(80),
                r.chance(30),
                CLASSES[r.below(6)]
            ));
            tool_names.push(name);
            tool_groups.push(format!("mcp_srv{g}"));
        } else {
            let name = format!("tool{i}");
            registry.push_str(&format!(
                "[[tool]]\nname = \"{name}\"\ngroup = \"group{g}\"\n"
            ));
            if r.chance(5) {
                registry.push_str("admin_only = true\n");
            }
            if r.chance(3) {
                registry.push_str("enabled = false\n");
            }
            if r.chance(20) {
                registry.push_str(&format!("class = \"{}\"\n", CLASSES[r.below(6)]));
            }
            tool_names.push(name);
            tool_groups.push(format!("group{g}"));
        }
    }
    Tools {
        registry,
        names: tool_names,
        groups: tool_groups,
    }
}

/// Groups in order of first appearance, and each group's tools ascending
/// (looked up per configuration: a scan of every tool per configuration
/// was a billion steps at a million tools × 1k configurations).
fn group_members(tool_groups: &[String]) -> (Vec<String>, HashMap<&str, Vec<usize>>) {
    let mut all_groups: Vec<String> = Vec::new();
    let mut members: HashMap<&str, Vec<usize>> = Default::default();
    for (i, g) in tool_groups.iter().enumerate() {
        let m = members.entry(g.as_str()).or_default();
        if m.is_empty() {
            all_groups.push(g.clone());
        }
        m.push(i);
    }
    (all_groups, members)
}

/// The policy's group, provider and skill declarations; how many providers
/// and skills there are.
fn declarations(
    r: &mut Rng,
    p: &mut String,
    all_groups: &[String],
    tool_names: &[String],
    (tools, configs): (usize, usize),
) -> (usize, usize) {
    p.push_str("enforcement observe\n");
    for g in all_groups {
        if g.starts_with("group") {
            let state = if r.chance(3) { " disabled" } else { "" };
            p.push_str(&format!(
                "group {g} {{ class {}{state} }}\n",
                CLASSES[r.below(6)]
            ));
        }
    }
    let providers = (configs / 5).max(3);
    for i in 0..providers {
        p.push_str(&format!("provider p{i} {{ zone {}", ZONES[r.below(4)]));
        if r.chance(30) {
            p.push_str(&format!(" fallback [p{}]", (i + 1) % providers));
        }
        p.push_str(" }\n");
    }
    let skills = (configs / 10).max(2);
    for i in 0..skills {
        let list: Vec<&str> = (0..5)
            .map(|_| tool_names[r.below(tools)].as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        p.push_str(&format!("skill s{i} {{ tools [{}] }}\n", list.join(", ")));
    }
    (providers, skills)
}

/// What a configuration draws from: the tools, their groups, and how many
/// providers and skills were declared.
struct Pool<'a> {
    tools: usize,
    tool_names: &'a [String],
    all_groups: &'a [String],
    members: &'a HashMap<&'a str, Vec<usize>>,
    providers: usize,
    skills: usize,
}

/// The configuration `name`: a provider, most often some groups, a few
/// exclusions, sometimes a skill.
fn configuration(r: &mut Rng, p: &mut String, name: &str, pool: &Pool) {
    p.push_str(&format!(
        "configuration {name} {{ provider p{}",
        r.below(pool.providers)
    ));
    let mut chosen: Option<BTreeSet<&str>> = None;
    if r.chance(80) {
        let n = 1 + r.below(pool.all_groups.len().min(12));
        let list: BTreeSet<&str> = (0..n)
            .map(|_| pool.all_groups[r.below(pool.all_groups.len())].as_str())
            .collect();
        p.push_str(&format!(
            " groups [{}]",
            list.iter().copied().collect::<Vec<_>>().join(", ")
        ));
        chosen = Some(list);
    }
    // Exclusions name tools the configuration would otherwise offer (an
    // administrator excludes from what a configuration has).
    let candidates: Vec<usize> = match &chosen {
        None => (0..pool.tools).collect(),
        Some(gs) => {
            let mut c: Vec<usize> = gs
                .iter()
                .flat_map(|g| pool.members[g].iter().copied())
                .collect();
            c.sort_unstable();
            c
        }
    };
    let ex: BTreeSet<&str> = if candidates.is_empty() {
        Default::default()
    } else {
        (0..r.below(6))
            .map(|_| pool.tool_names[candidates[r.below(candidates.len())]].as_str())
            .collect()
    };
    if !ex.is_empty() {
        p.push_str(&format!(
            " exclude [{}]",
            ex.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if r.chance(20) {
        p.push_str(&format!(" skills [s{}]", r.below(pool.skills)));
    }
    p.push_str(" }\n");
}

/// `tools` tools in about `tools / 40` groups (a tenth of them remote
/// servers), `configs` configurations.
pub fn generate(tools: usize, configs: usize, seed: u64) -> Workload {
    let mut r = Rng(seed);
    let groups = (tools / 40).max(2);
    let remote_groups = (groups / 10).max(1);
    let t = registry(&mut r, tools, groups, remote_groups);
    let (all_groups, members) = group_members(&t.groups);
    let mut p = String::with_capacity(configs * 200 + groups * 40);
    let (providers, skills) = declarations(&mut r, &mut p, &all_groups, &t.names, (tools, configs));
    let pool = Pool {
        tools,
        tool_names: &t.names,
        all_groups: &all_groups,
        members: &members,
        providers,
        skills,
    };
    let mut configurations = Vec::with_capacity(configs);
    for i in 0..configs {
        let name = format!("config{i}");
        configuration(&mut r, &mut p, &name, &pool);
        configurations.push(name);
    }
    let profiles = (configs / 10).max(2);
    for i in 0..profiles {
        let a = t.names[r.below(tools)].as_str();
        let g = all_groups[r.below(all_groups.len())].as_str();
        p.push_str(&format!("profile pr{i} {{ allow [{a}, group {g}, mcp_srv0_*] }}\nconsumer k{i} {{ profile pr{i} }}\n"));
    }
    Workload {
        registry: t.registry,
        policy: p,
        tool_names: t.names,
        configurations,
    }
}

#[cfg(feature = "cedar")]
pub mod cedar;

#[cfg(any(feature = "regorus", feature = "casbin"))]
pub mod peers;

#[cfg(feature = "regorus")]
pub mod rego;

#[cfg(feature = "casbin")]
pub mod casbin_model;

/// The tool counts a bench runs: `TOOLGATE_SIZES=1000,1000000` (commas),
/// else `default`. Keeps a run on a shared machine short.
pub fn sizes(default: &[usize]) -> Vec<usize> {
    std::env::var("TOOLGATE_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

/// The same registry as JSON (`{"tool": [...]}`), from the generator's TOML
/// (one `key = value` a line, strings and booleans only).
pub fn registry_json(toml: &str) -> String {
    let mut out = String::with_capacity(toml.len() + toml.len() / 4);
    out.push_str("{\"tool\": [");
    let mut first_tool = true;
    let mut first_key = true;
    for line in toml.lines() {
        if line == "[[tool]]" {
            if !first_tool {
                out.push('}');
                out.push(',');
            }
            out.push('{');
            first_tool = false;
            first_key = true;
        } else if let Some((k, v)) = line.split_once(" = ") {
            if !first_key {
                out.push(',');
            }
            first_key = false;
            out.push('"');
            out.push_str(k);
            out.push_str("\":");
            out.push_str(v);
        }
    }
    if !first_tool {
        out.push('}');
    }
    out.push_str("]}\n");
    out
}

/// A bench's subject: `generate(tools, 10, 42)`, its model and its loaded
/// table; decisions are timed for configuration `config0`, a non-admin user
/// and MCP consumer `k0` ([`Subject::context`], [`Subject::reference`]).
pub struct Subject {
    pub w: Workload,
    pub m: toolgate_compiler::model::Model,
    pub table: toolgate_runtime::Table,
}

impl Subject {
    pub fn new(tools: usize) -> Subject {
        let w = generate(tools, 10, 42);
        let m = toolgate_reference::model(&w.registry, &[&w.policy]);
        let table = toolgate_runtime::Table::load(&toolgate_compiler::lower::compile(&m))
            .expect("a generated table loads");
        Subject { w, m, table }
    }

    /// [`Subject::new`] with every 16th tool, up to 64, needing a person's
    /// approval in `config0` (`needs-approval`): a format 4 table, to set
    /// beside the format 3 one.
    pub fn with_approvals(tools: usize) -> Subject {
        let mut w = generate(tools, 10, 42);
        let listed: Vec<&str> = w
            .tool_names
            .iter()
            .step_by(16)
            .take(64)
            .map(String::as_str)
            .collect();
        let list = format!(" needs-approval [{}] }}\n", listed.join(", "));
        let start = w.policy.find("configuration config0 {").expect("config0");
        let end = start + w.policy[start..].find(" }\n").expect("config0 ends");
        w.policy.replace_range(end..end + 3, &list);
        let m = toolgate_reference::model(&w.registry, &[&w.policy]);
        let table = toolgate_runtime::Table::load(&toolgate_compiler::lower::compile(&m))
            .expect("a generated table loads");
        Subject { w, m, table }
    }

    /// The timed context.
    pub fn context(&self) -> toolgate_runtime::Context<'_> {
        self.table
            .context(&self.w.configurations[0])
            .expect("config0")
            .role(toolgate_runtime::Role::User)
            .consumer(Some("k0"))
    }

    /// The same context for the naive reference interpreter.
    pub fn reference(&self) -> toolgate_reference::RefCtx {
        toolgate_reference::RefCtx {
            config: self.w.configurations[0].clone(),
            role: toolgate_runtime::Role::User,
            consumer: Some("k0".into()),
            enforcement: None,
            run: None,
        }
    }
}

/// The benches' walk through `n` tools: a stride of 7919, which defeats the
/// cache on purpose, in the order the tools are asked.
pub fn walk(n: usize) -> Vec<usize> {
    let step = 7919 % n.max(1);
    let mut i = 0usize;
    (0..n)
        .map(|_| {
            i += step;
            if i >= n {
                i -= n;
            }
            i
        })
        .collect()
}

/// Cycles through what a bench asks, laid out in the order it is asked: the
/// asked item is read sequentially (a host has the tool call's name in hand),
/// while what it names is reached at the walk's stride. No division in the
/// timed loop.
pub struct Cycle<T> {
    items: Vec<T>,
    k: usize,
}

impl<T> Cycle<T> {
    pub fn new(items: Vec<T>) -> Cycle<T> {
        assert!(!items.is_empty(), "a cycle needs an item");
        Cycle { items, k: 0 }
    }

    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> &T {
        let k = self.k;
        self.k = if k + 1 == self.items.len() { 0 } else { k + 1 };
        &self.items[k]
    }
}

/// The walk's tool indices, as `u32` ids.
pub fn id_cycle(n: usize) -> Cycle<u32> {
    Cycle::new(walk(n).into_iter().map(|i| i as u32).collect())
}

/// The walk's tool names, their bytes in one buffer in the order asked.
pub struct AskedNames {
    text: String,
    ends: Vec<usize>,
}

impl AskedNames {
    pub fn new(names: &[String]) -> AskedNames {
        let order = walk(names.len());
        let mut text = String::with_capacity(order.iter().map(|&i| names[i].len()).sum());
        let ends = order
            .iter()
            .map(|&i| {
                text.push_str(&names[i]);
                text.len()
            })
            .collect();
        AskedNames { text, ends }
    }

    /// The names in the order asked, in batches of `size` (for `decide_many`).
    pub fn batches(&self, size: usize) -> Vec<Vec<&str>> {
        let mut start = 0;
        let names: Vec<&str> = self
            .ends
            .iter()
            .map(|&end| {
                let name = &self.text[start..end];
                start = end;
                name
            })
            .collect();
        names.chunks(size.max(1)).map(<[&str]>::to_vec).collect()
    }

    /// Each call gives the next name asked, cycling.
    pub fn cycle<'a>(&'a self) -> impl FnMut() -> &'a str + 'a {
        let mut k = 0usize;
        move || {
            let start = if k == 0 { 0 } else { self.ends[k - 1] };
            let end = self.ends[k];
            k = if k + 1 == self.ends.len() { 0 } else { k + 1 };
            &self.text[start..end]
        }
    }
}

/// The process's peak resident set (`VmHWM`), in MiB; 0 where `/proc` has none.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}
