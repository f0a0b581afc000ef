//! The gate. [`Context::decide`] answers for one tool, in the context
//! `context.rs` builds. Every answer comes from [`Context::gate_masks`]: for
//! one 64-tool word, the tools each gate refuses. A single decision reads one
//! bit of those words; a list over all tools reads every word. One
//! implementation.

use serde::Serialize;

use crate::bits::{BitIter, BitSet};
use crate::context::Context;
use crate::reason::{GateMasks, Reason, GATE_ORDER};

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
    /// Offered, and a call of it waits for a person's approval
    /// (`needs-approval` of the configuration or the consumer's profile,
    /// after every refusing gate; observe mode never skips it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_approval: bool,
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

impl<'t> Context<'t> {
    /// For word `w` of the tool indices: the tools each gate refuses, by gate
    /// rank, before the "first gate wins" rule; and the tools over the ceiling.
    /// Low level: `diff` compares these words to skip unchanged tools.
    #[inline(always)]
    pub fn gate_masks(&self, w: usize) -> (GateMasks, u64) {
        let (m, above, _) = self.gate_masks_within(w, valid_mask(self.table.tool_count(), w));
        (m, above)
    }

    /// [`Context::gate_masks`] restricted to `valid`, the tools of the word
    /// the caller asks about (one decision's tool is registered: it passes
    /// `!0` and skips computing the word's registered tools).
    #[inline(always)]
    fn gate_masks_within(&self, w: usize, valid: u64) -> (GateMasks, u64, u64) {
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
        (m, above & valid, tw.remote)
    }

    /// The first refusing gate for tool index `i`, and whether it is over the ceiling.
    #[inline]
    fn first_refusal(&self, i: usize) -> (Option<Reason>, bool) {
        let (reason, above, _) = self.first_refusal_remote(i);
        (reason, above)
    }

    /// [`Context::first_refusal`], and whether the tool is remote: the bit
    /// of the tool word the gates have just read, so that a decision's
    /// `hidden` flag costs no read of the separate `remote` set.
    #[inline(always)]
    fn first_refusal_remote(&self, i: usize) -> (Option<Reason>, bool, bool) {
        let (m, above, remote) = self.gate_masks_within(i / 64, !0);
        let (reason, above) = Self::first_of(&m, above, i % 64);
        (reason, above, remote >> (i % 64) & 1 == 1)
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
        let (reason, above, remote) = self.first_refusal_remote(i);
        let spec = &self.table.spec;
        let hidden = self.hidden(reason, remote);
        let approval = self.needs_approval(i);
        self.decision(
            &spec.tools[i].name,
            reason,
            above,
            spec.tools[i].class,
            hidden,
            approval,
        )
    }

    /// Whether table tool `i` waits for a person's approval in this
    /// context (when it is offered at all).
    #[inline]
    fn needs_approval(&self, i: usize) -> bool {
        let t = self.table;
        if !t.any_approvals {
            return false;
        }
        let listed = |s: Option<&Option<crate::bits::BitSet>>| {
            s.and_then(Option::as_ref).is_some_and(|s| s.contains(i))
        };
        listed(t.config_approvals.get(self.config as usize))
            || match self.profile {
                crate::context::ProfileGate::Profile(p) => {
                    listed(t.profile_approvals.get(p as usize))
                }
                _ => false,
            }
    }

    /// Whether a tool refused by `reason` (if any), remote or not, is hidden
    /// from this user. `remote` is the tool word's bit, already in a
    /// register; reading the `remote` set again cost about 2 ns of a
    /// decision by name at 10k tools. `&`, not `&&`: no branch on
    /// the refusal, which the branch predictor cannot guess.
    #[inline(always)]
    fn hidden(&self, reason: Option<Reason>, remote: bool) -> bool {
        reason.is_some() & self.gates.hide_remote & remote
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
        approval: bool,
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
            needs_approval: approval && reason.is_none(),
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
    /// Always inlined: with the `hidden` and `needs_approval` flags it grew
    /// past what LLVM inlines on its own, and the call (the decision
    /// returned through memory, the context's words read again each time)
    /// cost about 4 ns of a decision by name at 10k tools.
    #[inline(always)]
    fn decide_found<'n>(&self, tool: &'n str, id: Option<u32>) -> Decision<'n>
    where
        't: 'n,
    {
        match id {
            Some(i) => {
                // The name is the caller's: only the gate words and the class
                // byte are read, not the tool's spec.
                let (reason, above, remote) = self.first_refusal_remote(i as usize);
                let class = self.table.class_of[i as usize];
                let hidden = self.hidden(reason, remote);
                let approval = self.needs_approval(i as usize);
                self.decision(tool, reason, above, u32::from(class), hidden, approval)
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

    /// Whether a call of tool `id` may run now: offered, and no person's
    /// approval awaited (`needs-approval`; a grant is the enforcement
    /// point's to check).
    pub fn may_call(&self, id: u32) -> bool {
        self.is_offered(id) && !self.needs_approval(id as usize)
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
    /// or an input resumes a run: the same decision, as a result. An offered
    /// tool whose calls a person approves is `Err` too: its refusal
    /// ([`Context::call_refusal`]) is `approvalRequired`.
    pub fn check_call<'n>(&self, tool: &'n str) -> Result<Decision<'n>, Decision<'n>>
    where
        't: 'n,
    {
        let d = self.decide(tool);
        if d.allowed && !d.needs_approval {
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
        needs_approval: false,
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
