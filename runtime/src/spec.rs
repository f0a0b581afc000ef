//! [`TableSpec`]: the decision table as plain data. The compiler lowers a
//! policy into one; the file format encodes exactly one; [`crate::Table`] is
//! built from one. Every fact here is already resolved: effective states,
//! class ranks, zones after fallback. Indices refer to the vectors here.

/// Who sees remote tool names in the unavailable list and in explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    Admins = 0,
    Everyone = 1,
    Nobody = 2,
}

/// What a consumer that no `consumer` block binds to a profile gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unprofiled {
    Unrestricted = 0,
    Refused = 1,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    /// (file, sha256 hex) of every policy source.
    pub policy_digests: Vec<(String, String)>,
    /// sha256 hex of the registry.
    pub registry_digest: String,
    /// Data classes, least to most sensitive. At most 64.
    pub classes: Vec<String>,
    pub zones: Vec<ZoneSpec>,
    /// The zone an unknown zone counts as (lowest ceiling).
    pub least_trusted_zone: u32,
    pub groups: Vec<GroupSpec>,
    /// Registry order.
    pub tools: Vec<ToolSpec>,
    pub skills: Vec<SkillSpec>,
    pub configurations: Vec<ConfigurationSpec>,
    pub profiles: Vec<ProfileSpec>,
    pub consumers: Vec<ConsumerSpec>,
    pub gateways: Vec<GatewaySpec>,
    /// The policy's trust-zone mode: `true` observes.
    pub observe: bool,
    pub remote_visibility: Visibility,
    pub unprofiled: Unprofiled,
    /// `unknown-consumers admitted`: a consumer name no `consumer` block
    /// binds is taken as a consumer without a profile. `false` (the
    /// default): such a name is refused ([`crate::Table::check_consumer`]).
    pub unknown_consumers_admitted: bool,
    /// Name of the skill-loading tool, exempt from group gate and allow-list.
    pub skill_loader: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneSpec {
    pub name: String,
    /// Rank of the highest class the zone may receive.
    pub ceiling: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    pub name: String,
    pub enabled: bool,
    pub default_class: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub group: u32,
    pub remote: bool,
    /// Effective: group enabled AND (policy state, else registry default).
    pub enabled: bool,
    pub admin_only: bool,
    /// Effective class rank: declared, else group default, else the top class.
    pub class: u32,
    /// Bytes of the tool's descriptor (name, description, input schema as JSON).
    pub descriptor_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSpec {
    pub name: String,
    /// `None`: declares no allow-list.
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigurationSpec {
    pub name: String,
    /// Policy file that defines it.
    pub file: String,
    pub provider: Option<String>,
    /// Effective zone: least trusted of the provider's and its fallbacks'.
    pub zone: u32,
    /// `None`: every group.
    pub groups: Option<Vec<u32>>,
    /// Names as written, stale ones included.
    pub excluded: Vec<String>,
    pub skills: Vec<u32>,
    /// `needs-approval`: a call of these tools waits for a person's grant.
    pub approval: SelectorSpec,
}

/// Tools by name, by group and by name prefix (`mcp_billing_*` stored as
/// `mcp_billing_`): a `needs-approval` list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectorSpec {
    pub tools: Vec<String>,
    pub groups: Vec<u32>,
    pub prefixes: Vec<String>,
}

impl SelectorSpec {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.groups.is_empty() && self.prefixes.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSpec {
    pub name: String,
    pub file: String,
    /// Tools named one by one.
    pub tools: Vec<String>,
    pub groups: Vec<u32>,
    /// `mcp_billing_*` is stored as `mcp_billing_`.
    pub prefixes: Vec<String>,
    /// `needs-approval`: a call of these tools waits for a person's grant.
    pub approval: SelectorSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerSpec {
    pub name: String,
    pub profile: u32,
}

/// A gateway's declared denial rules, tried in order before the built-in ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySpec {
    pub name: String,
    pub rules: Vec<RuleSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub name: String,
    pub http_status: Option<i64>,
    pub error_code: Option<i64>,
    /// Glob (`*` any run of characters, `{tool}`/`{profile}` captures,
    /// `runtime::pattern`) over the error message.
    pub message: Option<String>,
    /// (field of `error.data`, glob over its string value).
    pub data: Vec<(String, String)>,
    /// Glob over the text of an `isError` result.
    pub result_text: Option<String>,
    /// (HTTP header name, glob over its value); the name is compared
    /// without regard to ASCII case, and any one value of it may match.
    pub headers: Vec<(String, String)>,
    /// Glob over the raw body text (plain text, HTML, empty, any JSON).
    pub body: Option<String>,
    /// The remediation of the refusals this rule recognises (`{tool}` and
    /// `{profile}` filled in); `None`: the built-in text of the kind.
    pub remediation: Option<String>,
    pub outcome: RuleOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOutcome {
    NotInProfile = 0,
    ContentPolicy = 1,
    Policy = 2,
    ToolFailure = 3,
    NotRegistered = 4,
}

impl TableSpec {
    /// The run allow-list of `skills` (indices): the union of their
    /// declarations, unrestricted when none declares one.
    pub fn allow_list_of(&self, skills: &[u32]) -> crate::run::state::AllowList {
        use crate::run::state::AllowList;
        let mut allowed = AllowList::Unrestricted;
        for &s in skills {
            if let Some(tools) = self.skills.get(s as usize).and_then(|s| s.tools.as_ref()) {
                let mut list = match allowed {
                    AllowList::Only(l) => l,
                    _ => Vec::new(),
                };
                for t in tools {
                    if !list.contains(t) {
                        list.push(t.clone());
                    }
                }
                allowed = AllowList::Only(list);
            }
        }
        allowed
    }
}
