//! The gate. A [`Context`] fixes who is asking (configuration, role,
//! consumer, run state, enforcement); [`Context::decide`] answers for one
//! tool. Every answer comes from [`Context::gate_masks`]: for one 64-tool
//! word, the tools each gate refuses. A single decision reads one bit of
//! those words; a list over all tools reads every word. One implementation.

use std::borrow::Cow;

use serde::Serialize;

use crate::bits::{BitIter, BitSet};
use crate::reason::{GateMasks, Reason, GATE_ORDER};
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
    gates: GateData<'t>,
}

/// The context's part of every gate word, derived from its role, profile
/// gate and mode.
#[derive(Debug, Clone, Copy)]
struct GateData<'t> {
    /// `!0` when admin-only tools are refused (the user is not an admin).
    admin_refused: u64,
    /// The words of the consumer's profile set; past them, `profile_rest`
    /// (`!0`: no profile gate; `0`: the consumer is refused everything).
    profile_words: &'t [u64],
    profile_rest: u64,
    /// `!0` when the trust zone is enforced for every tool; `0` when it is
    /// observed (then it refuses remote tools only).
    zone_enforced: u64,
    /// Whether remote tool names are hidden from this user
    /// (`remote-tools visible-to` does not include them).
    hide_remote: bool,
}

/// One tool's answer.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision<'a> {
    pub tool: &'a str,
    pub allowed: bool,
    pub reason: Option<Reason>,
    /// Offered only because the trust zone is observed: logged, not enforced.
    pub observed_only: bool,
    /// Trust-zone facts, present only when the trust-zone gate was reached
    /// (an earlier refusal reveals nothing about zones).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<&'a str>,
    /// A refused remote tool whose name this user may not see (`remote-tools
    /// visible-to`): a person or a model is shown exactly what an
    /// unregistered name gets ([`Context::shown`]). Hosts keep the true
    /// reason above; not serialised (the host-facing JSON is the true one).
    #[serde(skip)]
    pub hidden: bool,
}

/// How one gate went, for `explain`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GateOutcome {
    Passed,
    Refused,
    /// The trust-zone gate would refuse, but it is observed.
    Observed,
}

/// The gates a tool went through, in order, up to the first refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trace<'a> {
    pub decision: Decision<'a>,
    pub gates: Vec<(Reason, GateOutcome)>,
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

    /// For word `w` of the tool indices: the tools each gate refuses, by gate
    /// rank, before the "first gate wins" rule; and the tools over the ceiling.
    /// Low level: `diff` compares these words to skip unchanged tools.
    #[inline(always)]
    pub fn gate_masks(&self, w: usize) -> (GateMasks, u64) {
        self.gate_masks_within(w, valid_mask(self.table.tool_count(), w))
    }

    /// [`Context::gate_masks`] restricted to `valid`, the tools of the word
    /// the caller asks about (one decision's tool is registered: it passes
    /// `!0` and skips computing the word's registered tools).
    #[inline(always)]
    fn gate_masks_within(&self, w: usize, valid: u64) -> (GateMasks, u64) {
        let t = self.table;
        let g = &self.gates;
        let word = |b: &BitSet| b.words().get(w).copied().unwrap_or(0);
        let tw = t.tool_words.get(w).copied().unwrap_or_default();
        let above = word(self.above);
        let mut m: GateMasks = [0; GATE_ORDER.len()];
        for gate in GATE_ORDER {
            m[gate.rank()] = valid
                & match gate {
                    Reason::NotRegistered => 0,
                    Reason::ToolDisabled => !tw.enabled,
                    Reason::RequiresAdmin => tw.admin_only & g.admin_refused,
                    Reason::NotInProfile => {
                        !g.profile_words.get(w).copied().unwrap_or(g.profile_rest)
                    }
                    Reason::ConfigurationGroup => !word(&self.allowed),
                    Reason::ConfigurationExcluded => word(&self.excluded),
                    // Remote tools are enforced in both modes.
                    Reason::TrustZone => above & (tw.remote | g.zone_enforced),
                };
        }
        (m, above & valid)
    }

    /// The first refusing gate for tool index `i`, and whether it is over the ceiling.
    #[inline]
    fn first_refusal(&self, i: usize) -> (Option<Reason>, bool) {
        let (m, above) = self.gate_masks_within(i / 64, !0);
        Self::first_of(&m, above, i % 64)
    }

    /// The first refusing gate of bit `b` of a word's masks, and whether it
    /// is over the ceiling.
    #[inline(always)]
    fn first_of(m: &GateMasks, above: u64, b: usize) -> (Option<Reason>, bool) {
        // The tool's bit of every gate, as one small word by rank: the first
        // refusing gate is its lowest set bit (no search, no branch per gate).
        let hits = GATE_ORDER
            .iter()
            .fold(0u32, |h, g| h | ((m[g.rank()] >> b & 1) as u32) << g.rank());
        let reason = GATE_ORDER.get(hits.trailing_zeros() as usize).copied();
        (reason, above >> b & 1 == 1)
    }

    pub(crate) fn decision_for(&self, i: usize) -> Decision<'t> {
        let (reason, above) = self.first_refusal(i);
        let spec = &self.table.spec;
        let hidden = self.hidden_id(i, reason);
        self.decision(
            &spec.tools[i].name,
            reason,
            above,
            spec.tools[i].class,
            hidden,
        )
    }

    /// Whether table tool `i`, refused by `reason` (if any), is hidden from this user.
    #[inline]
    fn hidden_id(&self, i: usize, reason: Option<Reason>) -> bool {
        reason.is_some() && self.gates.hide_remote && self.table.remote.contains(i)
    }

    /// A decision from the first refusing gate: trust-zone facts only when
    /// that gate was reached, so an earlier refusal reveals nothing of zones.
    #[inline]
    pub(crate) fn decision<'n>(
        &self,
        tool: &'n str,
        reason: Option<Reason>,
        above: bool,
        class: u32,
        hidden: bool,
    ) -> Decision<'n>
    where
        't: 'n,
    {
        let reached_zone = matches!(reason, None | Some(Reason::TrustZone));
        Decision {
            tool,
            allowed: reason.is_none(),
            reason: reason.or(if above { Some(Reason::TrustZone) } else { None }),
            observed_only: reason.is_none() && above,
            class: reached_zone.then(|| self.table.class_name(class)),
            zone: reached_zone.then_some(self.zone),
            ceiling: reached_zone.then_some(self.ceiling),
            hidden,
        }
    }

    /// Decide for a tool by name. A name the table does not hold is `notRegistered`.
    #[inline]
    pub fn decide<'n>(&self, tool: &'n str) -> Decision<'n>
    where
        't: 'n,
    {
        self.decide_found(tool, self.table.tool_id(tool))
    }

    /// The decision for `tool`, whose index (if registered) is `id`.
    #[inline]
    fn decide_found<'n>(&self, tool: &'n str, id: Option<u32>) -> Decision<'n>
    where
        't: 'n,
    {
        match id {
            Some(i) => {
                // The name is the caller's: only the gate words and the class
                // byte are read, not the tool's spec.
                let (reason, above) = self.first_refusal(i as usize);
                let class = self.table.class_of[i as usize];
                let hidden = self.hidden_id(i as usize, reason);
                self.decision(tool, reason, above, u32::from(class), hidden)
            }
            None => not_registered(tool),
        }
    }

    /// [`Context::decide`] for many names, in order: the same decisions,
    /// with the table's name lookups of a batch overlapped
    /// ([`Table::tool_ids`]). For a host that decides a whole list at once.
    pub fn decide_many<'n, S: AsRef<str> + ?Sized>(&self, names: &'n [&'n S]) -> Vec<Decision<'n>>
    where
        't: 'n,
    {
        let mut ids = Vec::with_capacity(names.len());
        self.table.tool_ids(names, &mut ids);
        names
            .iter()
            .zip(ids)
            .map(|(n, id)| self.decide_found(n.as_ref(), id))
            .collect()
    }

    /// Decide by tool index (the hot path: no hashing).
    #[inline]
    pub fn decide_id(&self, id: u32) -> Decision<'t> {
        self.decision_for(id as usize)
    }

    /// Whether tool index `id` is offered. The cheapest question.
    #[inline]
    pub fn is_offered(&self, id: u32) -> bool {
        self.first_refusal(id as usize).0.is_none()
    }

    /// Gate by gate for one name, up to the first refusal.
    pub fn trace<'n>(&self, tool: &'n str) -> Trace<'n>
    where
        't: 'n,
    {
        let decision = self.decide(tool);
        let mut gates = Vec::new();
        for gate in GATE_ORDER {
            match decision.reason {
                Some(r) if r == gate && !decision.allowed => {
                    gates.push((gate, GateOutcome::Refused));
                    break;
                }
                Some(r) if r == gate && decision.observed_only => {
                    gates.push((gate, GateOutcome::Observed));
                }
                _ => gates.push((gate, GateOutcome::Passed)),
            }
        }
        Trace { decision, gates }
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

    /// Whether `d` names a registered remote tool this user may not see and
    /// that is refused: what a person or a model is shown of it must be word
    /// for word what an unregistered name gets. An offered tool is never
    /// hidden (the user has it), so this agrees with `offered`.
    pub fn hides(&self, d: &Decision<'_>) -> bool {
        d.hidden && !d.allowed
    }

    /// The decision as shown to a person or a model: [`Context::hides`]
    /// turns it into `notRegistered`. Hosts and audit logs keep the true
    /// decision ([`Context::decide`]); every front end that renders for a
    /// user calls this, so none can leak a hidden name by building its own.
    pub fn shown<'n>(&self, d: Decision<'n>) -> Decision<'n> {
        if self.hides(&d) {
            not_registered(d.tool)
        } else {
            d
        }
    }

    /// Decisions for any names, for showing to the user ([`Context::shown`]).
    pub fn explain<'n, S: AsRef<str> + ?Sized>(&self, names: &'n [&'n S]) -> Vec<Decision<'n>>
    where
        't: 'n,
    {
        self.decide_many(names)
            .into_iter()
            .map(|d| self.shown(d))
            .collect()
    }

    /// Gate by gate for one name as shown to the user: a hidden name stops
    /// at `notRegistered`, as a missing one does.
    pub fn shown_trace<'n>(&self, tool: &'n str) -> Trace<'n>
    where
        't: 'n,
    {
        let d = self.shown(self.decide(tool));
        if d.reason == Some(Reason::NotRegistered) {
            Trace {
                decision: d,
                gates: vec![(Reason::NotRegistered, GateOutcome::Refused)],
            }
        } else {
            self.trace(tool)
        }
    }

    /// The check a host runs when a call executes, and again when an approval
    /// or an input resumes a run: the same decision, as a result.
    pub fn check_call<'n>(&self, tool: &'n str) -> Result<Decision<'n>, Decision<'n>>
    where
        't: 'n,
    {
        let d = self.decide(tool);
        if d.allowed {
            Ok(d)
        } else {
            Err(d)
        }
    }

    /// Iterate the decisions of every registered tool, in registry order.
    pub fn decisions(&self) -> impl Iterator<Item = Decision<'t>> + '_ {
        (0..self.table.tool_count()).map(move |i| self.decision_for(i))
    }

    /// Set bits of one word.
    pub(crate) fn bits(word: u64, w: usize) -> BitIter {
        BitIter { word, base: w * 64 }
    }
}

pub(crate) fn not_registered(tool: &str) -> Decision<'_> {
    Decision {
        tool,
        allowed: false,
        reason: Some(Reason::NotRegistered),
        observed_only: false,
        class: None,
        zone: None,
        ceiling: None,
        hidden: false,
    }
}

/// The bits of word `w` that are tools.
#[inline]
pub(crate) fn valid_mask(n: usize, w: usize) -> u64 {
    let start = w * 64;
    if start >= n {
        0
    } else if n - start >= 64 {
        !0
    } else {
        (1u64 << (n - start)) - 1
    }
}
