//! The JSON of the readout commands (`explain`, `show tool`, `show config`,
//! and in bulk `show configs`, `show tools`, `show exclusions`),
//! typed so that their schemas (`toolgate schema`) are derived from what is
//! printed.

use serde::Serialize;
use toolgate_runtime::{GateOutcome, Reason, Trace};

/// One gate a tool went through, and how it went.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GateStep {
    pub gate: Reason,
    pub outcome: GateOutcome,
}

/// `toolgate explain --format json`: one tool's decision and the gates it
/// went through, in order, up to the first refusal. The trust-zone facts
/// are null unless the trust-zone gate was reached.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explained<'a> {
    pub tool: &'a str,
    pub allowed: bool,
    pub reason: Option<Reason>,
    pub observed_only: bool,
    pub class: Option<&'a str>,
    pub zone: Option<&'a str>,
    pub ceiling: Option<&'a str>,
    pub gates: Vec<GateStep>,
}

impl<'a> Explained<'a> {
    pub fn of(t: &Trace<'a>) -> Explained<'a> {
        let d = &t.decision;
        Explained {
            tool: d.tool,
            allowed: d.allowed,
            reason: d.reason,
            observed_only: d.observed_only,
            class: d.class,
            zone: d.zone,
            ceiling: d.ceiling,
            gates: t
                .gates
                .iter()
                .map(|&(gate, outcome)| GateStep { gate, outcome })
                .collect(),
        }
    }
}

/// Where a tool comes from.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolOrigin {
    Builtin,
    Remote,
}

/// `toolgate show tool NAME --format json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReadout<'a> {
    pub tool: &'a str,
    pub group: &'a str,
    pub origin: ToolOrigin,
    pub enabled: bool,
    pub admin_only: bool,
    /// The tool's data class.
    pub class: &'a str,
    /// The configurations that exclude it.
    pub excluded_by: Vec<&'a str>,
    /// Bytes of its descriptor (name, description, input schema).
    pub descriptor_bytes: u32,
}

/// `toolgate show config NAME --format json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadout<'a> {
    pub configuration: &'a str,
    /// The policy file that defines it.
    pub file: &'a str,
    /// null: no provider, so the least trusted zone.
    pub provider: Option<&'a str>,
    /// The effective trust zone and its data-class ceiling.
    pub zone: &'a str,
    pub ceiling: &'a str,
    /// null: every group.
    pub groups: Option<Vec<&'a str>>,
    /// Excluded tools that are registered.
    pub excluded: Vec<&'a str>,
    /// Excluded names that are no longer registered.
    pub no_longer_registered: Vec<&'a str>,
    pub skills: Vec<&'a str>,
}

/// `show configs --format json`: one entry per configuration.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRow<'t> {
    pub configuration: &'t str,
    pub file: &'t str,
    pub provider: Option<&'t str>,
    pub zone: &'t str,
    /// The allowed groups; `null` when every group is allowed.
    pub groups: Option<Vec<&'t str>>,
    /// How many registered tools it excludes.
    pub excluded: usize,
    /// How many of its exclusions name tools no longer registered.
    pub no_longer_registered: usize,
}

/// `show tools --format json`: one entry per registered tool.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRow<'t> {
    pub tool: &'t str,
    pub group: &'t str,
    pub excluded_by: Vec<&'t str>,
}

/// `show exclusions --format json`: one entry per configuration.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExclusionRow<'t> {
    pub configuration: &'t str,
    pub excluded: Vec<&'t str>,
    pub no_longer_registered: Vec<&'t str>,
}
