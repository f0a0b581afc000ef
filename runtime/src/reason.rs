//! Reasons a tool is refused, and the fixed order of the gates that give them.

use serde::{Deserialize, Serialize};

/// The gates, one row each, in THE gate order (the first refusing gate
/// names the reason): the variant and its doc, the stable code (JSON), the
/// corpus letter (docs/conformance.md), the exception a host raises (Python
/// and TypeScript; PHP adds `Exception`), the short text for people and
/// models, which speaks of its own gate only, and the facts a refusal by the
/// gate carries ([`Fact`]). Everything a host or a schema
/// knows of a gate follows from this table: [`Reason`], [`GATE_ORDER`], the
/// numbers (`Reason::number`, the C ABI's `TOOLGATE_REASON_*` asserted
/// against them), the packed layouts (`host::codes::packed`, checked at
/// compile time to hold every gate), the catalogue hosts generate their
/// exception classes from, and the JSON Schemas (derived from the enum).
macro_rules! gates {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $letter:literal, $exception:literal, $message:literal, [$($fact:ident),*]; )*) => {
        /// Why a tool is not offered or a call may not run. The declaration order is
        /// the gate order: the first refusing gate names the reason.
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub enum Reason {
            $( $(#[$doc])* $variant, )*
        }

        /// THE gate order: the rows of the gate table, in order.
        pub const GATE_ORDER: [Reason; [$($code),*].len()] = [$(Reason::$variant),*];

        /// The gate table's rows, indexed by rank.
        const ROWS: [Row; GATE_ORDER.len()] = [
            $(Row { code: $code, letter: $letter, exception: $exception, message: $message, facts: &[$(Fact::$fact),*] }),*
        ];
    };
}

// Cheapest and least revealing first; `notInProfile` sits after
// `requiresAdmin` and before `configurationGroup`: it is an identity gate
// (who is asking), decided per consumer and tool before any call, like the
// admin gate, and a profile refusal must not reveal the configuration's
// groups, exclusions or trust zone (docs/gate-semantics.md, the gate order).
gates! {
    /// The name is not in the registry.
    NotRegistered = "notRegistered", 'n', "NotRegistered",
        "no tool of this name is registered", [];
    /// The tool, or its group, is switched off.
    ToolDisabled = "toolDisabled", 'd', "ToolDisabled",
        "switched off by an administrator", [];
    /// Admin-only tool, and the user is not an admin (no user counts as not admin).
    RequiresAdmin = "requiresAdmin", 'a', "RequiresAdmin",
        "only administrators may use it", [];
    /// The consumer's MCP access profile does not hold the tool.
    NotInProfile = "notInProfile", 'p', "ToolNotInProfile",
        "not in this consumer's access profile", [Profile];
    /// Outside the configuration's allowed groups or the run's skill allow-list.
    ConfigurationGroup = "configurationGroup", 'g', "ConfigurationGroup",
        "not among the tools this configuration allows",
        [Configuration, ConfigurationFile, Group];
    /// The configuration (or the run, from its start) excludes the tool.
    ConfigurationExcluded = "configurationExcluded", 'x', "ConfigurationExcluded",
        "excluded by this configuration", [Configuration, ConfigurationFile];
    /// The tool's data class is above the ceiling of the provider's trust zone.
    TrustZone = "trustZone", 'z', "TrustZone",
        "its data is more sensitive than this provider may receive",
        [Configuration, Class, Ceiling];
}

/// One row of the gate table.
struct Row {
    code: &'static str,
    letter: char,
    exception: &'static str,
    message: &'static str,
    facts: &'static [Fact],
}

/// What a refusal by a gate tells besides the tool and the consumer: the
/// rule that refused and where it is written (`Context::refusal` fills each
/// one the gate's row names, and nothing else; docs/refusals.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// The consumer's access profile and the policy file that defines it.
    Profile,
    /// The configuration.
    Configuration,
    /// The policy file that defines the configuration.
    ConfigurationFile,
    /// The tool's group.
    Group,
    /// The tool's data class.
    Class,
    /// The ceiling of the provider's trust zone.
    Ceiling,
}

impl Reason {
    fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The stable code, as in JSON.
    pub fn code(self) -> &'static str {
        self.row().code
    }

    /// A short text for people and models. It speaks of this gate only: it
    /// never mentions a gate later in the order.
    pub fn message(self) -> &'static str {
        self.row().message
    }

    /// The one-letter code of the conformance corpus' compact decisions
    /// (docs/conformance.md).
    pub fn letter(self) -> char {
        self.row().letter
    }

    /// The name of the exception a host raises for a refusal by this gate
    /// (`RefusalKind::exception_name`).
    pub fn exception_name(self) -> &'static str {
        self.row().exception
    }

    /// The facts a refusal by this gate carries (the row's last column).
    pub fn facts(self) -> &'static [Fact] {
        self.row().facts
    }
}

// A host number is a byte (`Reason::number`), and every number and 0 must
// fit the packed layouts' reason bits (`host::codes::packed`, checked there).
const _: () = assert!(GATE_ORDER.len() < u8::MAX as usize);

/// For one 64-tool word, the tools each gate refuses, indexed by gate rank.
/// Sized by [`GATE_ORDER`]: adding a gate is one row of the gate table;
/// every array of per-gate masks follows.
pub type GateMasks = [u64; GATE_ORDER.len()];

impl Reason {
    pub fn from_code(code: &str) -> Option<Reason> {
        GATE_ORDER.iter().copied().find(|r| r.code() == code)
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
        let letters: std::collections::BTreeSet<char> =
            GATE_ORDER.iter().map(|r| r.letter()).collect();
        let exceptions: std::collections::BTreeSet<&str> =
            GATE_ORDER.iter().map(|r| r.exception_name()).collect();
        assert_eq!(
            (letters.len(), exceptions.len()),
            (GATE_ORDER.len(), GATE_ORDER.len())
        );
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
