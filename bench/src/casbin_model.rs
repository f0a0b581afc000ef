//! The same decisions as a Casbin model and policy evaluated by the `casbin`
//! crate, for a side-by-side benchmark and a fourth oracle. Casbin matches a
//! request against policy lines with one expression (the matcher) and holds
//! facts as role links (`g`), resolved by its role manager. The translation:
//!
//! - one policy line per configuration (its name, the names of its role
//!   nodes, its ceiling as a node, whether it restricts groups or skills, the
//!   skill loader);
//! - every fact as a role link of the tool: `attr:enabled`, `attr:admin_only`,
//!   `attr:remote`, `group:G`, `excl:C`, `skill:C`, `prof:P` (profiles with
//!   prefixes and groups expanded), and `over:k` for every ceiling `k` below
//!   the tool's class rank (Casbin's policies are strings, so "class above the
//!   ceiling" becomes a link); a configuration's allowed groups as links
//!   `group:G -> allow:C`, so that `g(tool, allow:C)` holds through the
//!   tool's group (role inheritance).
//!
//! Like the Cedar translation it answers allow or deny only; the first
//! refusing gate is not compared. Timed the way Casbin's documentation
//! recommends for speed: an `Enforcer` and a `CachedEnforcer` (feature
//! `cached`, which also caches the role manager's link queries), each built
//! once from a `MemoryAdapter` loaded before the enforcer is made (one role
//! link build, not one per added rule).

use casbin::prelude::*;
use casbin::{Adapter, DefaultCache, MemoryAdapter};
use toolgate_runtime::spec::TableSpec;

use crate::peers::{config_facts, profile_gate, profile_tools, PeerContext, ProfileGate};

pub const MODEL: &str = r#"
[request_definition]
r = sub, cfg, prof, tool, obs

[policy_definition]
p = cfg, allow, excl, skill, over, restricts, skills, loader

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.cfg == p.cfg && g(r.tool, "attr:enabled") && (r.sub == "admin" || !g(r.tool, "attr:admin_only")) && (r.prof == "open" || (r.prof != "closed" && g(r.tool, r.prof))) && (r.tool == p.loader || ((p.restricts == "0" || g(r.tool, p.allow)) && (p.skills == "0" || g(r.tool, p.skill)))) && !g(r.tool, p.excl) && (!g(r.tool, p.over) || (!g(r.tool, "attr:remote") && r.obs == "1"))
"#;

fn s(x: impl Into<String>) -> String {
    x.into()
}

/// The policy lines (`p`) and role links (`g`) of one table.
pub fn rules(spec: &TableSpec) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let mut p = Vec::new();
    let mut g = Vec::new();
    for t in &spec.tools {
        let name = &t.name;
        for (on, attr) in [
            (t.enabled, "attr:enabled"),
            (t.admin_only, "attr:admin_only"),
            (t.remote, "attr:remote"),
        ] {
            if on {
                g.push(vec![name.clone(), s(attr)]);
            }
        }
        g.push(vec![
            name.clone(),
            format!("group:{}", spec.groups[t.group as usize].name),
        ]);
        for k in 0..t.class {
            g.push(vec![name.clone(), format!("over:{k}")]);
        }
    }
    for c in &spec.configurations {
        let f = config_facts(spec, c);
        for gname in &f.groups {
            g.push(vec![format!("group:{gname}"), format!("allow:{}", c.name)]);
        }
        for x in &f.excluded {
            g.push(vec![s(*x), format!("excl:{}", c.name)]);
        }
        for x in &f.skill_tools {
            g.push(vec![s(*x), format!("skill:{}", c.name)]);
        }
        p.push(vec![
            c.name.clone(),
            format!("allow:{}", c.name),
            format!("excl:{}", c.name),
            format!("skill:{}", c.name),
            format!("over:{}", f.ceiling),
            s(if f.restricts { "1" } else { "0" }),
            s(if f.skill_restricts { "1" } else { "0" }),
            spec.skill_loader.clone(),
        ]);
    }
    for (i, pr) in spec.profiles.iter().enumerate() {
        for t in profile_tools(spec, i) {
            g.push(vec![s(t), format!("prof:{}", pr.name)]);
        }
    }
    g.sort();
    g.dedup();
    (p, g)
}

/// One request: (role, configuration, profile gate, tool, observe).
pub type Req = (String, String, String, String, String);

/// The Casbin side of one table.
pub struct CasbinWorld {
    pub enforcer: Enforcer,
    pub cached: CachedEnforcer,
}

async fn adapter(p: &[Vec<String>], g: &[Vec<String>]) -> MemoryAdapter {
    let mut a = MemoryAdapter::default();
    Adapter::add_policies(&mut a, "p", "p", p.to_vec())
        .await
        .expect("policy lines load");
    Adapter::add_policies(&mut a, "g", "g", g.to_vec())
        .await
        .expect("role links load");
    a
}

impl CasbinWorld {
    /// Both enforcers; the cached one holds `cache` answers.
    pub fn new(spec: &TableSpec, cache: usize) -> CasbinWorld {
        let (p, g) = rules(spec);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let m = DefaultModel::from_str(MODEL)
                .await
                .expect("the model parses");
            let enforcer = Enforcer::new(m, adapter(&p, &g).await)
                .await
                .expect("the enforcer loads");
            let m = DefaultModel::from_str(MODEL)
                .await
                .expect("the model parses");
            let mut cached = CachedEnforcer::new(m, adapter(&p, &g).await)
                .await
                .expect("the cached enforcer loads");
            cached.set_cache(Box::new(DefaultCache::new(cache.max(200))));
            CasbinWorld { enforcer, cached }
        })
    }

    /// The request for a context and a tool.
    pub fn request(spec: &TableSpec, ctx: &PeerContext, tool: &str) -> Req {
        let prof = match profile_gate(spec, ctx.consumer) {
            ProfileGate::Open => s("open"),
            ProfileGate::Closed => s("closed"),
            ProfileGate::Profile(p) => format!("prof:{}", spec.profiles[p].name),
        };
        (
            s(ctx.role.as_str()),
            s(ctx.config),
            prof,
            s(tool),
            s(if ctx.observe { "1" } else { "0" }),
        )
    }

    /// One request per tool, for a context (built before anything is timed).
    pub fn requests(spec: &TableSpec, ctx: &PeerContext) -> Vec<Req> {
        spec.tools
            .iter()
            .map(|t| Self::request(spec, ctx, &t.name))
            .collect()
    }

    pub fn allowed(&self, r: &Req) -> bool {
        self.enforcer
            .enforce((&r.0, &r.1, &r.2, &r.3, &r.4))
            .expect("the matcher evaluates")
    }

    pub fn allowed_cached(&self, r: &Req) -> bool {
        self.cached
            .enforce((&r.0, &r.1, &r.2, &r.3, &r.4))
            .expect("the matcher evaluates")
    }
}
