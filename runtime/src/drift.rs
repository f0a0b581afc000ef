//! Profile drift. A consumer's access profile in the policy is a copy of
//! what its gateway enforces, and copies drift. Set against what the gateway
//! really lists for that consumer (an MCP `tools/list` answer captured for
//! it) and against the decisions logged for it, the differences are the
//! tools the gateway offers that the profile refuses, and the reverse. The
//! profile's answer is the table's own profile gate (`Context::gate_masks`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::log::Counted;
use crate::reason::Reason;
use crate::table::Table;

/// A tool and how many logged decisions name it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seen {
    pub tool: String,
    pub decisions: usize,
}

/// The differences between a profile and its gateway, names sorted.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    pub consumer: String,
    /// The profile the consumer is bound to (`None`: unbound, so what
    /// `consumers-without-profile` says applies).
    pub profile: Option<String>,
    /// Listed by the gateway, refused by the profile.
    pub listed_but_refused: Vec<String>,
    /// Allowed by the profile, among the compared tools, but not listed.
    pub allowed_but_not_listed: Vec<String>,
    /// Listed by the gateway, unknown to the registry.
    pub listed_unregistered: Vec<String>,
    /// Logged: refused `notInProfile` for this consumer, yet listed.
    pub refused_in_log_but_listed: Vec<Seen>,
    /// Logged: allowed for this consumer, yet not listed (the gateway will
    /// refuse those calls, or hides the tool).
    pub allowed_in_log_but_not_listed: Vec<Seen>,
}

impl Drift {
    /// No difference found.
    pub fn is_empty(&self) -> bool {
        self.listed_but_refused.is_empty()
            && self.allowed_but_not_listed.is_empty()
            && self.listed_unregistered.is_empty()
            && self.refused_in_log_but_listed.is_empty()
            && self.allowed_in_log_but_not_listed.is_empty()
    }
}

/// Why drift cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriftError {
    /// The table has no configuration to build a context from (the profile
    /// gate does not depend on which one).
    NoConfiguration,
}

impl std::fmt::Display for DriftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the table has no configuration, so no context to ask the profile gate")
    }
}

impl std::error::Error for DriftError {}

impl Table {
    /// Compare `consumer`'s profile with `listed` (registry names of what
    /// the gateway lists for it) over `compared` (the tool ids the lists
    /// cover: one server's tools, or all), and with `log` (records of any
    /// consumer; only this one's are read).
    pub fn profile_drift(
        &self,
        consumer: &str,
        listed: &[String],
        compared: &[u32],
        log: &[Counted],
    ) -> Result<Drift, DriftError> {
        let config = self
            .configuration_names()
            .next()
            .ok_or(DriftError::NoConfiguration)?;
        let ctx = self
            .context(config)
            .map_err(|_| DriftError::NoConfiguration)?
            .consumer(Some(consumer));
        let gate = Reason::NotInProfile.rank();
        let refuses = |id: u32| {
            let i = id as usize;
            (ctx.gate_masks(i / 64).0[gate] >> (i % 64)) & 1 == 1
        };
        let listed_set: std::collections::HashSet<&str> =
            listed.iter().map(String::as_str).collect();
        let is_listed = |name: &str| listed_set.contains(name);
        let mut listed_but_refused = Vec::new();
        let mut listed_unregistered = Vec::new();
        for name in listed {
            match self.tool_id(name) {
                Some(id) if refuses(id) => listed_but_refused.push(name.clone()),
                Some(_) => {}
                None => listed_unregistered.push(name.clone()),
            }
        }
        let mut allowed_but_not_listed: Vec<String> = compared
            .iter()
            .filter(|&&id| !refuses(id))
            .map(|&id| self.tool_name(id))
            .filter(|n| !is_listed(n))
            .map(str::to_string)
            .collect();
        let mut refused_seen: BTreeMap<&str, usize> = BTreeMap::new();
        let mut allowed_seen: BTreeMap<&str, usize> = BTreeMap::new();
        for r in log
            .iter()
            .filter(|r| r.consumer.as_deref() == Some(consumer))
        {
            let known = self
                .tool_id(&r.tool)
                .is_some_and(|id| compared.contains(&id));
            if r.allowed && known && !is_listed(&r.tool) {
                *allowed_seen.entry(&r.tool).or_default() += 1;
            } else if !r.allowed
                && r.reason.as_deref() == Some(Reason::NotInProfile.code())
                && is_listed(&r.tool)
            {
                *refused_seen.entry(&r.tool).or_default() += 1;
            }
        }
        let seen = |m: BTreeMap<&str, usize>| {
            m.into_iter()
                .map(|(tool, decisions)| Seen {
                    tool: tool.to_string(),
                    decisions,
                })
                .collect()
        };
        for v in [
            &mut listed_but_refused,
            &mut listed_unregistered,
            &mut allowed_but_not_listed,
        ] {
            v.sort();
            v.dedup();
        }
        Ok(Drift {
            consumer: consumer.to_string(),
            profile: ctx.profile_name().map(str::to_string),
            listed_but_refused,
            allowed_but_not_listed,
            listed_unregistered,
            refused_in_log_but_listed: seen(refused_seen),
            allowed_in_log_but_not_listed: seen(allowed_seen),
        })
    }

    /// The tool ids of server `server`'s remote tools (group `mcp_<server>`).
    pub fn server_tools(&self, server: &str) -> Vec<u32> {
        let group = format!("mcp_{server}");
        let spec = self.spec();
        (0..spec.tools.len() as u32)
            .filter(|&i| {
                let t = &spec.tools[i as usize];
                t.remote && spec.groups[t.group as usize].name == group
            })
            .collect()
    }
}
