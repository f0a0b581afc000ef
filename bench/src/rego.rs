//! The same decisions as a Rego policy evaluated by Regorus, for a
//! side-by-side benchmark and a third oracle. The table's facts go in as
//! Rego data (objects keyed by name, so that every membership test is an
//! index, not a scan); the policy is compiled once to Regorus's bytecode (the
//! RVM, `Compiler::compile_from_policy`) and run on one reused `RegoVM`
//! (`set_input` + `execute`), as Regorus's own "hot" benchmark does. Rego
//! answers allow or deny here, like the Cedar translation: the first refusing
//! gate is not compared (Rego could name it with an `else` chain; the
//! translation keeps to what is compared).

use std::sync::Arc;

use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use regorus::{Engine, Value};
use serde_json::{json, Map, Value as Json};
use toolgate_runtime::spec::TableSpec;
use toolgate_runtime::Role;

use crate::peers::{config_facts, profile_gate, profile_tools, PeerContext, ProfileGate};

/// The gates, in toolgate's order: disabled, admin-only, the consumer's
/// profile, the configuration's groups and a new run's skill allow-list (the
/// skill loader exempt), the configuration's exclusions, the trust zone
/// (remote tools refused over the ceiling even under observe).
pub const POLICY: &str = r#"
package toolgate

import rego.v1

default allow := false

allow if ok(input.tool)

unavailable contains name if {
	some name, _ in data.tools
	not ok(name)
}

ok(name) if {
	t := data.tools[name]
	c := data.configs[input.config]
	t.enabled
	admin_ok(t)
	profile_ok(name)
	groups_ok(name, t, c)
	not c.excluded[name]
	zone_ok(t, c)
}

admin_ok(t) if not t.admin_only

admin_ok(t) if input.admin

profile_ok(name) if input.profile_gate == "open"

profile_ok(name) if {
	input.profile_gate == "profile"
	data.profiles[input.profile][name]
}

groups_ok(name, t, c) if name == data.loader

groups_ok(name, t, c) if {
	in_groups(t, c)
	in_skills(name, c)
}

in_groups(t, c) if not c.restricts

in_groups(t, c) if c.groups[t.group]

in_skills(name, c) if not c.skill_restricts

in_skills(name, c) if c.skill_tools[name]

zone_ok(t, c) if t.class <= c.ceiling

zone_ok(t, c) if {
	not t.remote
	input.observe
}
"#;

pub const ALLOW: &str = "data.toolgate.allow";
pub const UNAVAILABLE: &str = "data.toolgate.unavailable";

fn set(names: impl IntoIterator<Item = impl Into<String>>) -> Json {
    Json::Object(names.into_iter().map(|n| (n.into(), json!(true))).collect())
}

/// The table's facts as Rego data.
pub fn data(spec: &TableSpec) -> Json {
    let mut tools = Map::new();
    for t in &spec.tools {
        tools.insert(
            t.name.clone(),
            json!({
                "group": spec.groups[t.group as usize].name, "enabled": t.enabled,
                "admin_only": t.admin_only, "remote": t.remote, "class": t.class,
            }),
        );
    }
    let mut configs = Map::new();
    for c in &spec.configurations {
        let f = config_facts(spec, c);
        configs.insert(
            c.name.clone(),
            json!({
                "restricts": f.restricts, "groups": set(f.groups),
                "excluded": set(f.excluded), "skill_restricts": f.skill_restricts,
                "skill_tools": set(f.skill_tools), "ceiling": f.ceiling,
            }),
        );
    }
    let profiles: Map<String, Json> = (0..spec.profiles.len())
        .map(|p| (spec.profiles[p].name.clone(), set(profile_tools(spec, p))))
        .collect();
    json!({"tools": tools, "configs": configs, "profiles": profiles, "loader": spec.skill_loader})
}

/// The Rego side of one table: the compiled program on one VM.
pub struct RegoWorld {
    vm: RegoVM,
}

impl RegoWorld {
    pub fn new(spec: &TableSpec) -> RegoWorld {
        let data = Value::from_json_str(&data(spec).to_string()).expect("data converts");
        let mut engine = Engine::new();
        engine
            .add_policy("toolgate.rego".into(), POLICY.into())
            .expect("the policy parses");
        engine.add_data(data.clone()).expect("data loads");
        let compiled = engine
            .compile_with_entrypoint(&ALLOW.into())
            .expect("the policy compiles");
        let program: Arc<Program> = Compiler::compile_from_policy(&compiled, &[ALLOW, UNAVAILABLE])
            .expect("the policy compiles to RVM bytecode");
        let mut vm = RegoVM::new();
        vm.load_program(program);
        // No instruction limit (the VM's default stops at 25,000, which the
        // set rule passes from a few hundred tools), as Regorus's benchmark
        // runs it without limits.
        vm.set_max_instructions(usize::MAX);
        vm.set_data(data).expect("data loads into the VM");
        RegoWorld { vm }
    }

    /// The input for one context; `tool` names the asked tool (the list's
    /// input has none).
    pub fn input(&self, spec: &TableSpec, ctx: &PeerContext, tool: Option<&str>) -> Value {
        let (gate, profile) = match profile_gate(spec, ctx.consumer) {
            ProfileGate::Open => ("open", ""),
            ProfileGate::Closed => ("closed", ""),
            ProfileGate::Profile(p) => ("profile", spec.profiles[p].name.as_str()),
        };
        let mut v = json!({
            "config": ctx.config, "admin": ctx.role == Role::Admin,
            "profile_gate": gate, "profile": profile, "observe": ctx.observe,
        });
        if let Some(t) = tool {
            v["tool"] = json!(t);
        }
        Value::from_json_str(&v.to_string()).expect("input converts")
    }

    /// One input per tool, for a context (built before anything is timed).
    pub fn inputs(&self, spec: &TableSpec, ctx: &PeerContext) -> Vec<Value> {
        spec.tools
            .iter()
            .map(|t| self.input(spec, ctx, Some(&t.name)))
            .collect()
    }

    /// One decision: `data.toolgate.allow` for the input.
    pub fn allowed(&mut self, input: &Value) -> bool {
        self.vm.set_input(input.clone());
        let v = self
            .vm
            .execute_entry_point_by_name(ALLOW)
            .expect("allow evaluates");
        v == Value::from(true)
    }

    /// The whole unavailable set in one evaluation (`data.toolgate.unavailable`),
    /// the names in the set's order.
    pub fn unavailable(&mut self, input: &Value) -> Vec<String> {
        self.vm.set_input(input.clone());
        let v = self
            .vm
            .execute_entry_point_by_name(UNAVAILABLE)
            .expect("unavailable evaluates");
        v.as_set()
            .expect("a set")
            .iter()
            .map(|n| n.as_string().expect("a name").to_string())
            .collect()
    }
}
