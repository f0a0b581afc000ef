//! The policy of a table as plain JSON data (one implementation for every host).

use crate::table::Table;

impl Table {
    /// The policy as plain data, for hosts that show or export it (the C
    /// ABI's `toolgate_table_policy_json`, Python's `Table.policy()`):
    /// classes and ceilings as ranks, least sensitive first; `groups` null =
    /// every group; `allowList` = a new run's skill allow-list, null = none;
    /// `approval` (a configuration's and a profile's) = the tools a person
    /// approves call by call, as `{tools, groups, prefixes}`.
    pub fn policy_json(&self) -> serde_json::Value {
        let t = self;
        use crate::run::{AllowList, RunState};
        use crate::spec::{Unprofiled, Visibility};
        use serde_json::json;
        let spec = t.spec();
        let group = |g: u32| spec.groups[g as usize].name.as_str();
        let selectors = |s: &crate::spec::SelectorSpec| {
            json!({"tools": s.tools,
                   "groups": s.groups.iter().map(|&g| group(g)).collect::<Vec<_>>(),
                   "prefixes": s.prefixes})
        };
        let tools: Vec<_> = spec
        .tools
        .iter()
        .map(|x| {
            json!({"name": x.name, "group": group(x.group), "remote": x.remote, "enabled": x.enabled,
                   "adminOnly": x.admin_only, "class": x.class})
        })
        .collect();
        let configurations: Vec<_> = spec
        .configurations
        .iter()
        .map(|c| {
            let allow = match RunState::start(t, &c.name, &[]).map(|r| r.allowed) {
                Ok(AllowList::Only(names)) => json!(names),
                _ => serde_json::Value::Null,
            };
            json!({"name": c.name,
                   "groups": c.groups.as_ref().map(|gs| gs.iter().map(|&g| group(g)).collect::<Vec<_>>()),
                   "excluded": c.excluded, "ceiling": spec.zones[c.zone as usize].ceiling,
                   "allowList": allow, "approval": selectors(&c.approval)})
        })
        .collect();
        let profiles: Vec<_> = spec
            .profiles
            .iter()
            .map(|p| {
                json!({"name": p.name, "tools": p.tools,
                   "groups": p.groups.iter().map(|&g| group(g)).collect::<Vec<_>>(),
                   "prefixes": p.prefixes, "approval": selectors(&p.approval)})
            })
            .collect();
        let consumers: serde_json::Map<String, serde_json::Value> = spec
            .consumers
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    spec.profiles[c.profile as usize].name.clone().into(),
                )
            })
            .collect();
        json!({
            "classes": spec.classes,
            "observe": spec.observe,
            "remoteVisibility": match spec.remote_visibility {
                Visibility::Admins => "admins",
                Visibility::Everyone => "everyone",
                Visibility::Nobody => "nobody",
            },
            "unprofiled": match spec.unprofiled {
                Unprofiled::Unrestricted => "unrestricted",
                Unprofiled::Refused => "refused",
            },
            "unknownConsumers": if spec.unknown_consumers_admitted { "admitted" } else { "refused" },
            "skillLoader": spec.skill_loader,
            "tools": tools,
            "configurations": configurations,
            "profiles": profiles,
            "consumers": consumers,
        })
    }
}
