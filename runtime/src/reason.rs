//! Reasons a tool is refused, and the fixed order of the gates that give them.

use serde::{Deserialize, Serialize};

/// Why a tool is not offered or a call may not run. The declaration order is
/// the gate order: the first refusing gate names the reason.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reason {
    /// The name is not in the registry.
    NotRegistered,
    /// The tool, or its group, is switched off.
    ToolDisabled,
    /// Admin-only tool, and the user is not an admin (no user counts as not admin).
    RequiresAdmin,
    /// The consumer's MCP access profile does not hold the tool.
    NotInProfile,
    /// Outside the configuration's allowed groups or the run's skill allow-list.
    ConfigurationGroup,
    /// The configuration (or the run, from its start) excludes the tool.
    ConfigurationExcluded,
    /// The tool's data class is above the ceiling of the provider's trust zone.
    TrustZone,
}

/// THE gate order. Cheapest and least revealing first; `notInProfile` sits
/// after `requiresAdmin` and before `configurationGroup`: it is an identity
/// gate (who is asking), decided per consumer and tool before any call, like
/// the admin gate, and a profile refusal must not reveal the configuration's
/// groups, exclusions or trust zone.
pub const GATE_ORDER: [Reason; 7] = [
    Reason::NotRegistered,
    Reason::ToolDisabled,
    Reason::RequiresAdmin,
    Reason::NotInProfile,
    Reason::ConfigurationGroup,
    Reason::ConfigurationExcluded,
    Reason::TrustZone,
];

/// For one 64-tool word, the tools each gate refuses, indexed by gate rank.
/// Sized by [`GATE_ORDER`]: adding a gate is one entry there (and its case in
/// [`Reason`]); every array of per-gate masks follows.
pub type GateMasks = [u64; GATE_ORDER.len()];

impl Reason {
    /// The stable code, as in JSON.
    pub fn code(self) -> &'static str {
        match self {
            Reason::NotRegistered => "notRegistered",
            Reason::ToolDisabled => "toolDisabled",
            Reason::RequiresAdmin => "requiresAdmin",
            Reason::NotInProfile => "notInProfile",
            Reason::ConfigurationGroup => "configurationGroup",
            Reason::ConfigurationExcluded => "configurationExcluded",
            Reason::TrustZone => "trustZone",
        }
    }

    pub fn from_code(code: &str) -> Option<Reason> {
        GATE_ORDER.iter().copied().find(|r| r.code() == code)
    }

    /// A short text for people and models. It speaks of this gate only: it
    /// never mentions a gate later in the order.
    pub fn message(self) -> &'static str {
        match self {
            Reason::NotRegistered => "no tool of this name is registered",
            Reason::ToolDisabled => "switched off by an administrator",
            Reason::RequiresAdmin => "only administrators may use it",
            Reason::NotInProfile => "not in this consumer's access profile",
            Reason::ConfigurationGroup => "not among the tools this configuration allows",
            Reason::ConfigurationExcluded => "excluded by this configuration",
            Reason::TrustZone => "its data is more sensitive than this provider may receive",
        }
    }

    /// Position in [`GATE_ORDER`].
    pub fn rank(self) -> usize {
        self as usize
    }

    /// The number hosts use (`TOOLGATE_REASON_*` of the C ABI, PHP's
    /// `Reason::fromNumber`): the rank plus one, so that 0 is "no reason".
    pub const fn number(self) -> u8 {
        self as u8 + 1
    }

    /// The reason of a host number; 0 and numbers past the gates are `None`.
    pub fn from_number(n: u8) -> Option<Reason> {
        GATE_ORDER.get(usize::from(n).checked_sub(1)?).copied()
    }

    /// The one-letter code of the conformance corpus' compact decisions
    /// (docs/conformance.md).
    pub fn letter(self) -> char {
        match self {
            Reason::NotRegistered => 'n',
            Reason::ToolDisabled => 'd',
            Reason::RequiresAdmin => 'a',
            Reason::NotInProfile => 'p',
            Reason::ConfigurationGroup => 'g',
            Reason::ConfigurationExcluded => 'x',
            Reason::TrustZone => 'z',
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_order_is_declaration_order() {
        for (i, r) in GATE_ORDER.iter().enumerate() {
            assert_eq!(r.rank(), i);
            assert_eq!(Reason::from_code(r.code()), Some(*r));
            assert_eq!(Reason::from_number(r.number()), Some(*r));
        }
        assert_eq!(Reason::from_number(0), None);
        assert_eq!(Reason::from_number(GATE_ORDER.len() as u8 + 1), None);
    }

    #[test]
    fn messages_never_name_a_later_gate() {
        let words = [
            (Reason::ToolDisabled, "switched off"),
            (Reason::RequiresAdmin, "only administrators"),
            (Reason::NotInProfile, "profile"),
            (Reason::ConfigurationGroup, "allows"),
            (Reason::ConfigurationExcluded, "excluded"),
            (Reason::TrustZone, "sensitive"),
        ];
        for r in GATE_ORDER {
            let m = r.message();
            for (later, word) in words {
                if later.rank() > r.rank() {
                    assert!(!m.contains(word), "{r}: {m:?} mentions {later}");
                }
            }
            assert!(!m.contains("zone") || r == Reason::TrustZone);
        }
    }
}
