//! The validated model: every name resolved, every fact kept as written
//! (overrides separate from registry defaults). `lower` compiles it into a
//! decision table; the reference interpreter in tests/ reads it directly.

pub use crate::syntax::ast::{Audience, Enforcement, UnknownConsumers, Unprofiled};

/// The ladder and zones a policy gets when it declares none (nr_llm's).
pub const DEFAULT_CLASSES: [&str; 6] = [
    "publicContent",
    "editorContent",
    "sourceCode",
    "internalConfiguration",
    "systemDiagnostics",
    "secretAdjacent",
];
pub const DEFAULT_ZONES: [(&str, &str); 4] = [
    ("local", "secretAdjacent"),
    ("privateHosted", "systemDiagnostics"),
    ("externalEu", "internalConfiguration"),
    ("externalGlobal", "editorContent"),
];
pub const DEFAULT_SKILL_LOADER: &str = "load_skill";

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Least to most sensitive.
    pub classes: Vec<String>,
    pub zones: Vec<Zone>,
    pub groups: Vec<Group>,
    /// Registry order.
    pub tools: Vec<Tool>,
    pub providers: Vec<Provider>,
    pub skills: Vec<Skill>,
    pub configurations: Vec<Configuration>,
    pub profiles: Vec<Profile>,
    pub consumers: Vec<Consumer>,
    pub gateways: Vec<Gateway>,
    pub settings: Settings,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub enforcement: Enforcement,
    pub remote_visibility: Audience,
    pub unprofiled: Unprofiled,
    pub unknown_consumers: UnknownConsumers,
    pub skill_loader: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            // No `enforcement` line: enforce (fail closed).
            enforcement: Enforcement::Enforce,
            remote_visibility: Audience::Admins,
            unprofiled: Unprofiled::Unrestricted,
            unknown_consumers: UnknownConsumers::Refused,
            skill_loader: DEFAULT_SKILL_LOADER.to_string(),
        }
    }
}

/// Where the model came from: digests of every input, for the table header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Provenance {
    /// (file name, sha256 hex) of each policy file, in manifest order.
    pub policies: Vec<(String, String)>,
    /// sha256 hex of the registry file.
    pub registry: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    pub name: String,
    /// Index into `classes`.
    pub ceiling: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    /// `Some(false)`: the policy disables the group. A group is enabled unless disabled.
    pub state: Option<bool>,
    pub default_class: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    /// Index into `groups`.
    pub group: usize,
    pub remote: bool,
    pub server: Option<String>,
    /// The registry's `enabled` (enabled by default).
    pub default_enabled: bool,
    /// The policy's `enabled` / `disabled`, if any.
    pub state: Option<bool>,
    /// Registry `admin_only`, unless the policy says `admin-only` / `not admin-only`.
    pub admin_only: bool,
    /// Declared class (the policy's over the registry's), index into `classes`.
    pub class: Option<usize>,
    pub description: Option<String>,
    pub input_schema: Option<crate::registry::JsonText>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    pub name: String,
    /// `None`: no zone given, the least trusted zone applies.
    pub zone: Option<usize>,
    /// Indices into `providers`.
    pub fallback: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// `None`: the skill declares no allow-list. `Some([])`: it allows no tool.
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configuration {
    pub name: String,
    /// The policy file that defines it (for remediation texts).
    pub file: String,
    pub provider: Option<usize>,
    /// `None`: every group.
    pub groups: Option<Vec<usize>>,
    /// Names as written, stale ones included (they are shown, and still
    /// exclude a tool of that name that the host registers live).
    pub excluded: Vec<String>,
    pub skills: Vec<usize>,
    /// `needs-approval`: a call of these tools waits for a person's grant.
    pub approval: Vec<Selector>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Tool(String),
    Group(usize),
    Prefix(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub name: String,
    /// The policy file that defines it (for remediation texts).
    pub file: String,
    pub allow: Vec<Selector>,
    /// `needs-approval`: a call of these tools waits for a person's grant.
    pub approval: Vec<Selector>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    pub name: String,
    pub profile: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gateway {
    pub name: String,
    pub rules: Vec<GatewayRule>,
}

/// A declared denial rule, in the table's own form (nothing to lower).
pub type GatewayRule = toolgate_runtime::spec::RuleSpec;

impl Model {
    pub fn tool_index(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.name == name)
    }
    pub fn configuration_index(&self, name: &str) -> Option<usize> {
        self.configurations.iter().position(|c| c.name == name)
    }
    pub fn top_class(&self) -> usize {
        self.classes.len().saturating_sub(1)
    }
    /// The zone an unknown or missing zone counts as: the lowest ceiling.
    pub fn least_trusted_zone(&self) -> Option<usize> {
        (0..self.zones.len())
            .rev()
            .min_by_key(|&z| self.zones[z].ceiling)
    }
    /// A tool's class: declared, else its group's default, else the top class.
    pub fn tool_class(&self, tool: usize) -> usize {
        let t = &self.tools[tool];
        t.class
            .or(self.groups[t.group].default_class)
            .unwrap_or_else(|| self.top_class())
    }
}
