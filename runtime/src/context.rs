//! Who is asking: a [`Context`] fixes the configuration, role, consumer
//! (and so its profile), run state and enforcement ([`Mode`]) a decision
//! depends on, and derives from them the context's part of every gate word
//! ([`GateData`]). [`Table::context`] starts one; the builder methods refine
//! it. Deciding with it is `decide.rs`'s; the lists over every tool are
//! `lists.rs`'s.

use std::borrow::Cow;

use serde::Serialize;

use crate::bits::BitSet;
use crate::run::{AllowList, Exclusions, RunState};
use crate::spec::{Unprofiled, Visibility};
use crate::table::Table;

/// Who the user is. No user counts as not admin (fail closed).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    User,
    None,
}

impl Role {
    pub fn is_admin(self) -> bool {
        self == Role::Admin
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::User => "user",
            Role::None => "none",
        }
    }
    pub const ALL: [Role; 3] = [Role::Admin, Role::User, Role::None];
}

/// Trust-zone enforcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Observe,
    Enforce,
}

impl Mode {
    /// Only `observe` observes, trimmed of ASCII white space as PHP's `trim`
    /// trims (space, tab, newline, carriage return, NUL, vertical tab) and in
    /// any ASCII case; anything else, empty, misspelt, padded with Unicode
    /// spaces (U+00A0, U+2003, U+3000) or unreadable, enforces.
    pub fn parse(setting: &str) -> Mode {
        let trimmed = setting.trim_matches([' ', '\t', '\n', '\r', '\0', '\x0B']);
        if trimmed.eq_ignore_ascii_case("observe") {
            Mode::Observe
        } else {
            Mode::Enforce
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Enforce => "enforce",
        }
    }
}

/// The consumer name readers of a table (diff, report, policy-test
/// coverage) use for "a consumer without a profile": [`Context::consumer`]
/// gives it what `consumers-without-profile` says. No policy name can be
/// `*`, and [`Context::known_consumer`] refuses it like any other name the
/// policy does not know, so no caller can claim it.
pub const UNPROFILED_CONSUMER: &str = "*";

/// Why a context could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextError {
    UnknownConfiguration {
        name: String,
        suggestion: Option<String>,
    },
    /// A consumer name the policy does not bind, where the policy does not
    /// admit unknown consumers, or a slip for one it binds
    /// ([`Table::check_consumer`]).
    UnknownConsumer {
        name: String,
        suggestion: Option<String>,
    },
}

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContextError::UnknownConfiguration { name, suggestion } => {
                write!(f, "unknown configuration `{}`", crate::names::shown(name))?;
                if let Some(s) = suggestion {
                    write!(f, "; did you mean `{s}`?")?;
                }
                Ok(())
            }
            ContextError::UnknownConsumer { name, suggestion } => {
                write!(
                    f,
                    "the policy knows no consumer `{}`",
                    crate::names::shown(name)
                )?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => write!(
                        f,
                        "; bind it to a profile (`consumer NAME {{ profile P }}`) or admit unknown consumers (`unknown-consumers admitted`)"
                    ),
                }
            }
        }
    }
}

impl std::error::Error for ContextError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProfileGate {
    /// Not an MCP consumer, or an unprofiled one under `unrestricted`.
    Open,
    Profile(u32),
    /// An unprofiled consumer under `consumers-without-profile refused`.
    Closed,
}

/// Everything a decision depends on besides the tool.
#[derive(Debug, Clone)]
pub struct Context<'t> {
    pub(crate) table: &'t Table,
    pub(crate) config: u32,
    pub(crate) role: Role,
    pub(crate) consumer: Option<String>,
    pub(crate) profile: ProfileGate,
    pub(crate) mode: Mode,
    /// Passes the group gate: allowed groups ∩ run allow-list, plus the loader.
    pub(crate) allowed: Cow<'t, BitSet>,
    /// Refused by the exclusion gate: configuration ∪ run.
    pub(crate) excluded: Cow<'t, BitSet>,
    pub(crate) run: Cow<'t, RunState>,
    /// `above[ceiling]`, the tools over the zone's ceiling.
    pub(crate) above: &'t BitSet,
    /// The configuration's zone and the name of its ceiling class, looked up
    /// once for every decision the context makes.
    pub(crate) zone: &'t str,
    pub(crate) ceiling: &'t str,
    /// `role`, `profile` and `mode` as data for [`Context::gate_masks`], so
    /// that a decision is loads and masks, not a branch per gate
    /// ([`Context::refresh`] keeps them in step with the three).
    pub(crate) gates: GateData<'t>,
}

/// The context's part of every gate word, derived from its role, profile
/// gate and mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GateData<'t> {
    /// `!0` when admin-only tools are refused (the user is not an admin).
    pub(crate) admin_refused: u64,
    /// The words of the consumer's profile set; past them, `profile_rest`
    /// (`!0`: no profile gate; `0`: the consumer is refused everything).
    pub(crate) profile_words: &'t [u64],
    pub(crate) profile_rest: u64,
    /// `!0` when the trust zone is enforced for every tool; `0` when it is
    /// observed (then it refuses remote tools only).
    pub(crate) zone_enforced: u64,
    /// Whether remote tool names are hidden from this user
    /// (`remote-tools visible-to` does not include them).
    pub(crate) hide_remote: bool,
}

impl Table {
    /// Start a context for a configuration; refine it with the builder methods.
    pub fn context(&self, configuration: &str) -> Result<Context<'_>, ContextError> {
        let Some(&ci) = self.config_index.get(configuration) else {
            let suggestion = crate::names::did_you_mean(configuration, self.configuration_names())
                .map(str::to_string);
            return Err(ContextError::UnknownConfiguration {
                name: configuration.to_string(),
                suggestion,
            });
        };
        let row = self.config_row(ci as usize);
        // Both indices were range-checked at load (check_configurations, check_ranks).
        let zone = &self.spec.zones[self.spec.configurations[ci as usize].zone as usize];
        let mut ctx = Context {
            table: self,
            config: ci,
            role: Role::None,
            consumer: None,
            profile: ProfileGate::Open,
            mode: if self.spec.observe {
                Mode::Observe
            } else {
                Mode::Enforce
            },
            // Until a run is given, the context is a new run's: held to the
            // allow-list of the configuration's attached skills.
            allowed: Cow::Borrowed(row.fresh_allowed.as_ref().unwrap_or(&row.allowed)),
            excluded: Cow::Borrowed(&row.excluded),
            run: Cow::Borrowed(&row.fresh_run),
            above: &self.above[row.ceiling as usize],
            zone: &zone.name,
            ceiling: &self.spec.classes[zone.ceiling as usize],
            gates: GateData {
                admin_refused: 0,
                profile_words: &[],
                profile_rest: 0,
                zone_enforced: 0,
                hide_remote: false,
            },
        };
        ctx.refresh();
        Ok(ctx)
    }
}

impl<'t> Context<'t> {
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self.refresh();
        self
    }

    /// Derive [`GateData`] from the role, the profile gate and the mode.
    fn refresh(&mut self) {
        let all = |yes: bool| if yes { !0u64 } else { 0 };
        let (profile_words, profile_rest) = match self.profile {
            ProfileGate::Open => (&[][..], !0),
            ProfileGate::Profile(p) => (self.table.profiles[p as usize].words(), 0),
            ProfileGate::Closed => (&[][..], 0),
        };
        self.gates = GateData {
            admin_refused: all(!self.role.is_admin()),
            profile_words,
            profile_rest,
            zone_enforced: all(self.mode == Mode::Enforce),
            hide_remote: !self.remote_names_visible(),
        };
    }

    /// The MCP consumer asking, if any. A consumer bound to a profile is held
    /// to it. A name the policy does not bind is refused by every edge and
    /// host ([`Context::known_consumer`]); a reader that sets it here anyway
    /// gets a closed profile gate (every tool `notInProfile`), unless the
    /// policy admits unknown consumers and the name is no slip, or it is
    /// [`UNPROFILED_CONSUMER`]: then it gets what `consumers-without-profile`
    /// says.
    pub fn consumer(mut self, consumer: Option<&str>) -> Self {
        let t = self.table;
        self.consumer = consumer.map(str::to_string);
        self.profile = match consumer {
            None => ProfileGate::Open,
            Some(c) => match t.consumer_index.get(c) {
                Some(&i) => ProfileGate::Profile(t.spec.consumers[i as usize].profile),
                None if c != UNPROFILED_CONSUMER && t.check_consumer(c).is_err() => {
                    ProfileGate::Closed
                }
                None => match t.spec.unprofiled {
                    Unprofiled::Unrestricted => ProfileGate::Open,
                    Unprofiled::Refused => ProfileGate::Closed,
                },
            },
        };
        self.refresh();
        self
    }

    /// [`Context::consumer`], for a name taken from a caller: a name the
    /// policy does not know ([`Table::check_consumer`]) is an
    /// [`ContextError::UnknownConsumer`], never a consumer without a
    /// profile by accident. Every host and network edge sets consumers
    /// through this.
    pub fn known_consumer(self, consumer: Option<&str>) -> Result<Self, ContextError> {
        if let Some(c) = consumer {
            self.table
                .check_consumer(c)
                .map_err(|suggestion| ContextError::UnknownConsumer {
                    name: c.to_string(),
                    suggestion: suggestion.map(str::to_string),
                })?;
        }
        Ok(self.consumer(consumer))
    }

    /// The host's own enforcement setting, parsed by the same rule as the
    /// policy's (anything but `observe` enforces). `None` keeps the policy's.
    pub fn enforcement(mut self, setting: Option<&str>) -> Self {
        if let Some(s) = setting {
            self.mode = Mode::parse(s);
        }
        self.refresh();
        self
    }

    /// Hold the context to a run's stored allow-list and exclusions (instead
    /// of a new run's).
    pub fn run(mut self, run: &RunState) -> Self {
        let t = self.table;
        let n = t.tool_count();
        let row = t.config_row(self.config as usize);
        let mut allowed = row.allowed.clone();
        match &run.allowed {
            AllowList::Unrestricted => {}
            AllowList::Only(names) => {
                let mut list = BitSet::new(n);
                for name in names {
                    if let Some(i) = t.tool_id(name) {
                        list.insert(i as usize);
                    }
                }
                allowed.intersect_with(&list);
                if let Some(l) = t.loader {
                    allowed.insert(l as usize);
                }
            }
            // Cannot say what it allowed: nothing passes, the loader included.
            AllowList::Unreadable => allowed = BitSet::new(n),
        }
        let mut excluded = row.excluded.clone();
        match &run.excluded {
            Exclusions::Names(names) => {
                for name in names {
                    if let Some(i) = t.tool_id(name) {
                        excluded.insert(i as usize);
                    }
                }
            }
            Exclusions::Unreadable => excluded = BitSet::full(n),
        }
        self.allowed = Cow::Owned(allowed);
        self.excluded = Cow::Owned(excluded);
        self.run = Cow::Owned(run.clone());
        self
    }

    pub fn table(&self) -> &'t Table {
        self.table
    }
    pub fn configuration_name(&self) -> &'t str {
        &self.table.spec.configurations[self.config as usize].name
    }
    pub fn user_role(&self) -> Role {
        self.role
    }
    pub fn consumer_name(&self) -> Option<&str> {
        self.consumer.as_deref()
    }
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The profile the consumer is held to, if any.
    pub fn profile_name(&self) -> Option<&'t str> {
        match self.profile {
            ProfileGate::Profile(p) => Some(&self.table.spec.profiles[p as usize].name),
            _ => None,
        }
    }

    /// Whether remote tool names may be shown to this context's user.
    pub fn remote_names_visible(&self) -> bool {
        match self.table.spec.remote_visibility {
            Visibility::Admins => self.role.is_admin(),
            Visibility::Everyone => true,
            Visibility::Nobody => false,
        }
    }

    /// Whether this context's user may see the name of the tool with index
    /// `id`: builtin names always, remote ones as `remote-tools visible-to` says.
    pub fn name_visible(&self, id: u32) -> bool {
        !self.table.remote.contains(id as usize) || self.remote_names_visible()
    }
}
