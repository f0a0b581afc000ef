//! The lists: the gate over every registered tool at once. `offered` is
//! what a run is given; `unavailable` is what it is not, and why
//! (docs/gate-semantics.md §9, §10); the prompt section and tool sets.
//! All read the same per-word gate masks as [`Context::decide`].

use serde::Serialize;

use crate::context::Context;
use crate::live::LiveTool;
use crate::reason::{GateMasks, Reason, GATE_ORDER};

/// One refused tool, as the unavailable list reports it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unavailable<'a> {
    pub tool: &'a str,
    pub reason: Reason,
}

/// The heading of the system-prompt section.
pub const PROMPT_HEADING: &str =
    "Tools that exist but are not available in this conversation, and why:";

/// The heading of the system-prompt section of offered tools that a person
/// approves call by call (`needs-approval`).
pub const APPROVAL_HEADING: &str =
    "Tools you may call, but a person is asked to approve each call before it runs:";

impl<'t> Context<'t> {
    /// Indices of offered tools (allowed, observed-only included), registry order.
    pub fn offered_ids(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.for_each_offered_word(|offered, w| {
            out.extend(Self::bits(offered, w).map(|i| i as u32))
        });
        out
    }

    /// [`Context::offered_ids`] written into `out`, for hosts that own the
    /// memory (a JavaScript typed array): the number written, or `None`,
    /// writing nothing, when `out` is shorter than the table's tool count
    /// (a list is never cut short).
    pub fn offered_ids_into(&self, out: &mut [u32]) -> Option<usize> {
        if out.len() < self.table.tool_count() {
            return None;
        }
        let mut n = 0;
        self.for_each_offered_word(|offered, w| {
            for i in Self::bits(offered, w) {
                out[n] = i as u32;
                n += 1;
            }
        });
        Some(n)
    }

    /// For every 64-tool word `w`: the bits of its offered tools.
    fn for_each_offered_word(&self, mut f: impl FnMut(u64, usize)) {
        let n = self.table.tool_count();
        for w in 0..n.div_ceil(64) {
            let (m, _) = self.gate_masks(w);
            let refused = m.iter().fold(0, |a, b| a | b);
            f(crate::decide::valid_mask(n, w) & !refused, w);
        }
    }

    /// Names of offered tools, registry order.
    pub fn offered(&self) -> Vec<&'t str> {
        self.offered_ids()
            .into_iter()
            .map(|i| self.table.tool_name(i))
            .collect()
    }

    /// Number of offered tools, without building the list.
    pub fn offered_count(&self) -> usize {
        let n = self.table.tool_count();
        (0..n.div_ceil(64))
            .map(|w| {
                let (m, _) = self.gate_masks(w);
                let refused = m.iter().fold(0, |a, b| a | b);
                (crate::decide::valid_mask(n, w) & !refused).count_ones() as usize
            })
            .sum()
    }

    /// Every registered tool the gate refuses, in registry order, with the
    /// first refusing gate. Observe-mode trust-zone refusals of builtin tools
    /// are not refusals (those tools are offered). Remote tools are listed
    /// only where the visibility rule lets this user see their names.
    pub fn unavailable(&self) -> Vec<Unavailable<'t>> {
        let tools = &self.table.spec.tools;
        let mut out = Vec::with_capacity(self.unavailable_count());
        self.for_each_listed(false, |w| {
            w.fill(&mut out, |i, reason| Unavailable {
                tool: tools[i].name.as_str(),
                reason,
            })
        });
        out
    }

    /// The length of [`Context::unavailable`], without building it.
    pub fn unavailable_count(&self) -> usize {
        (0..self.table.tool_count().div_ceil(64))
            .map(|w| self.listed_word(w, false).1.count_ones() as usize)
            .sum()
    }

    /// Gate masks of word `w` and the refused tools of it that are listed
    /// (`all`: every refused tool, for hosts; else those whose names this
    /// user may see).
    #[inline]
    fn listed_word(&self, w: usize, all: bool) -> (GateMasks, u64) {
        let (m, _) = self.gate_masks(w);
        let mut refused = m.iter().fold(0, |a, b| a | b);
        if !all && !self.remote_names_visible() {
            refused &= !self.table.remote.words().get(w).copied().unwrap_or(0);
        }
        (m, refused)
    }

    /// The unavailable list as (tool index, reason): the same list without
    /// resolving names, 8 bytes an entry (the fastest form for hosts that
    /// keep their own tool array in registry order).
    pub fn unavailable_ids(&self) -> Vec<(u32, Reason)> {
        // At most one entry per tool: one allocation, no counting pass.
        let mut out = Vec::with_capacity(self.table.tool_count());
        self.for_each_listed(false, |w| w.fill(&mut out, |i, r| (i as u32, r)));
        out
    }

    /// The unavailable list written into `out` as `make(tool index,
    /// reason)`, in registry order, for hosts that own the memory (a
    /// JavaScript typed array): the number written, or `None`, writing
    /// nothing, when `out` is shorter than the table's tool count (a list is
    /// never cut short).
    pub fn unavailable_ids_into<T>(
        &self,
        out: &mut [T],
        make: impl Fn(u32, Reason) -> T,
    ) -> Option<usize> {
        if out.len() < self.table.tool_count() {
            return None;
        }
        let mut n = 0;
        self.for_each_listed(false, |w| n += w.fill_slice(&mut out[n..], &make));
        Some(n)
    }

    /// The allocation-free core of [`Context::unavailable`].
    pub fn for_each_unavailable(&self, mut f: impl FnMut(&'t str, Reason)) {
        let t = self.table;
        self.for_each_unavailable_id(|i, r| f(t.tool_name(i), r));
    }

    /// [`Context::for_each_unavailable`] by tool index.
    pub fn for_each_unavailable_id(&self, mut f: impl FnMut(u32, Reason)) {
        self.for_each_listed(false, |w| w.entries().for_each(|(i, r)| f(i as u32, r)))
    }

    /// Every refused tool by index, hidden names included: for hosts only.
    pub fn for_each_refused_id(&self, mut f: impl FnMut(u32, Reason)) {
        self.for_each_listed(true, |w| w.entries().for_each(|(i, r)| f(i as u32, r)))
    }

    /// Each 64-tool word that lists some tool, with the first refusing gate
    /// of each of its bits.
    fn for_each_listed(&self, all: bool, mut f: impl FnMut(&ListedWord)) {
        let t = self.table;
        for w in 0..t.tool_count().div_ceil(64) {
            let (m, refused) = self.listed_word(w, all);
            if refused != 0 {
                f(&ListedWord::new(&m, refused, w));
            }
        }
    }

    /// The unavailable list over the table's tools and then the host's live
    /// tools that the table does not know (in the order given).
    pub fn unavailable_with<'a>(&'a self, live: &'a [LiveTool]) -> Vec<Unavailable<'a>> {
        let mut out: Vec<Unavailable<'a>> = self.unavailable();
        let show_remote = self.remote_names_visible();
        for tool in live {
            if self.table.tool_id(tool.name()).is_some() || (tool.remote() && !show_remote) {
                continue;
            }
            let d = self.decide_live(tool);
            if let (false, Some(reason)) = (d.allowed, d.reason) {
                out.push(Unavailable {
                    tool: tool.name(),
                    reason,
                });
            }
        }
        out
    }

    /// The unavailable list as a system-prompt section, over the table's
    /// tools and then the host's live tools ([`Context::unavailable_with`]):
    /// the section a host renders when it registers tools at run time.
    pub fn unavailable_prompt_with(&self, live: &[LiveTool]) -> String {
        let mut out = render_prompt(
            self.unavailable_with(live)
                .iter()
                .map(|u| (u.tool, u.reason.code())),
        );
        out.push_str(&self.approval_prompt());
        out
    }

    /// The unavailable list as a system-prompt section, followed by the
    /// section of offered tools a person approves call by call, if any.
    pub fn unavailable_prompt(&self) -> String {
        let mut out = render_prompt(self.unavailable().iter().map(|u| (u.tool, u.reason.code())));
        out.push_str(&self.approval_prompt());
        out
    }

    /// Offered tools whose calls wait for a person's approval, registry order.
    pub fn approval_ids(&self) -> Vec<u32> {
        if !self.table.any_approvals {
            return Vec::new();
        }
        self.offered_ids()
            .into_iter()
            .filter(|&i| self.decision_for(i as usize).needs_approval)
            .collect()
    }

    /// The offered tools a person approves call by call, as a system-prompt
    /// section: the model may call them, and a person will be asked.
    /// Empty when there are none.
    pub fn approval_prompt(&self) -> String {
        let ids = self.approval_ids();
        if ids.is_empty() {
            return String::new();
        }
        let mut out = String::from(APPROVAL_HEADING);
        out.push('\n');
        for i in ids {
            out.push_str("- ");
            out.push_str(&crate::names::escape(
                &self.table.spec.tools[i as usize].name,
            ));
            out.push('\n');
        }
        out
    }
}

/// The listed tools of one 64-tool word and their first refusing gates, as
/// one disjoint mask per gate: building it is a pass over the gates, not a
/// branch per gate or per tool; a word whose every listed tool one gate
/// refuses (a whole group outside the configuration, say) stops after that
/// gate.
struct ListedWord {
    listed: u64,
    base: usize,
    /// The listed tools each gate refuses first, by gate rank (disjoint).
    by_gate: GateMasks,
    /// The gate that refuses the most listed tools of the word: the list is
    /// written with it, then the few other tools' entries are rewritten.
    major: Reason,
}

/// For each byte value, how many bits it sets and their positions, ascending.
const BYTE_BITS: [(u8, [u8; 8]); 256] = {
    let mut t = [(0u8, [0u8; 8]); 256];
    let mut v = 0;
    while v < 256 {
        let mut b = 0;
        while b < 8 {
            if v >> b & 1 == 1 {
                t[v].1[t[v].0 as usize] = b as u8;
                t[v].0 += 1;
            }
            b += 1;
        }
        v += 1;
    }
    t
};

// A rank is read back from three bit-sliced masks and looked up in eight
// entries: a ninth gate stops the build here.
const _: () = assert!(GATE_ORDER.len() <= 8);

/// [`GATE_ORDER`] by rank, padded to eight so a 3-bit rank needs no bounds check.
const BY_RANK: [Reason; 8] = {
    let mut t = [Reason::NotRegistered; 8];
    let mut i = 0;
    while i < GATE_ORDER.len() {
        t[i] = GATE_ORDER[i];
        i += 1;
    }
    t
};

impl ListedWord {
    #[inline]
    fn new(m: &GateMasks, listed: u64, w: usize) -> ListedWord {
        let mut by_gate: GateMasks = [0; GATE_ORDER.len()];
        let (mut major, mut most) = (GATE_ORDER[0], 0);
        let mut left = listed;
        for g in GATE_ORDER {
            let mine = m[g.rank()] & left;
            by_gate[g.rank()] = mine;
            if mine.count_ones() > most {
                (major, most) = (g, mine.count_ones());
            }
            left &= !mine;
            if left == 0 {
                break;
            }
        }
        ListedWord {
            listed,
            base: w * 64,
            by_gate,
            major,
        }
    }

    /// (tool index, reason) of every listed tool, ascending.
    #[inline]
    fn entries(&self) -> impl ExactSizeIterator<Item = (usize, Reason)> + '_ {
        let bits = crate::bits::BitIter {
            word: self.listed,
            base: 0,
        };
        // Each bit's gate rank, bit-sliced over three masks: reading it back
        // is shifts, not a search over the gates per tool.
        let mut rank_bits = [0u64; 3];
        for g in GATE_ORDER {
            for (k, r) in rank_bits.iter_mut().enumerate() {
                if g.rank() >> k & 1 == 1 {
                    *r |= self.by_gate[g.rank()];
                }
            }
        }
        let [r0, r1, r2] = rank_bits;
        let base = self.base;
        bits.map(move |b| {
            let rank = (r0 >> b & 1) | (r1 >> b & 1) << 1 | (r2 >> b & 1) << 2;
            (base + b, BY_RANK[rank as usize])
        })
    }

    /// Append the entries to `out`, made by `make`: every entry with the
    /// word's major gate first (no per-entry rank), then the entries of the
    /// other gates rewritten in place (at the count of listed tools below
    /// them). Most words have one or two gates.
    #[inline]
    fn fill<T>(&self, out: &mut Vec<T>, make: impl Fn(usize, Reason) -> T) {
        let start = out.len();
        let major = self.major;
        // A byte at a time: the set bits of each byte value are a table row,
        // and extending from a slice has no capacity check per entry.
        for k in 0..8 {
            let byte = (self.listed >> (8 * k)) as u8;
            if byte != 0 {
                let base = self.base + 8 * k;
                let row = &BYTE_BITS[byte as usize];
                out.extend(
                    row.1[..row.0 as usize]
                        .iter()
                        .map(|&b| make(base + b as usize, major)),
                );
            }
        }
        self.for_each_minor(|below, i, g| {
            if let Some(d) = out.get_mut(start + below) {
                *d = make(i, g);
            }
        });
    }

    /// Each listed tool a gate other than the major one refuses first: its
    /// position among the word's listed tools, its index and that gate.
    #[inline]
    fn for_each_minor(&self, mut put: impl FnMut(usize, usize, Reason)) {
        for g in GATE_ORDER {
            let mine = self.by_gate[g.rank()];
            if g == self.major || mine == 0 {
                continue;
            }
            for b in (crate::bits::BitIter {
                word: mine,
                base: 0,
            }) {
                let below = (self.listed & ((1u64 << b) - 1)).count_ones() as usize;
                put(below, self.base + b, g);
            }
        }
    }

    /// [`ListedWord::fill`] into the front of `out`, which holds at least
    /// the word's listed tools (at most 64): the number written.
    #[inline]
    fn fill_slice<T>(&self, out: &mut [T], make: impl Fn(u32, Reason) -> T) -> usize {
        let count = self.listed.count_ones() as usize;
        let out = &mut out[..count];
        let major = self.major;
        let mut at = 0;
        for k in 0..8 {
            let byte = (self.listed >> (8 * k)) as u8;
            if byte != 0 {
                let base = (self.base + 8 * k) as u32;
                let (n, bits) = &BYTE_BITS[byte as usize];
                let n = *n as usize;
                for (d, &b) in out[at..at + n].iter_mut().zip(&bits[..n]) {
                    *d = make(base + u32::from(b), major);
                }
                at += n;
            }
        }
        // `below` counts listed tools under one of them: less than `count`.
        self.for_each_minor(|below, i, g| out[below] = make(i as u32, g));
        count
    }
}

/// Render (name, reason code) pairs for a system prompt: a heading, then one
/// `- name: text` line per tool; an unknown code is shown raw; an empty list
/// renders as nothing at all. Names are escaped ([`crate::names::escape`]):
/// a newline in a name cannot add a line to the prompt.
pub fn render_prompt<'a>(items: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (name, code) in items {
        if out.is_empty() {
            out.push_str(PROMPT_HEADING);
            out.push('\n');
        }
        let text = Reason::from_code(code).map(Reason::message).unwrap_or(code);
        out.push_str("- ");
        out.push_str(&crate::names::escape(name));
        out.push_str(": ");
        out.push_str(text);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_is_empty_for_an_empty_list_and_raw_for_unknown_codes() {
        assert_eq!(render_prompt(std::iter::empty()), "");
        assert_eq!(
            render_prompt([("a", "toolDisabled"), ("b", "quotaExceeded")]),
            format!(
                "{PROMPT_HEADING}\n- a: switched off by an administrator\n- b: quotaExceeded\n"
            )
        );
    }
}

/// One tool a tool set held back, for the host (see [`ToolSet::excluded`]).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excluded<'a> {
    pub tool: &'a str,
    pub reason: Reason,
    /// Whether this user may be shown the name (`remote-tools visible-to`).
    pub name_visible: bool,
}

/// Bytes of descriptor per estimated prompt token: the usual rule of thumb
/// for English text and JSON under BPE tokenizers. An estimate, documented
/// as such; providers add their own framing per tool.
pub const BYTES_PER_TOKEN: u64 = 4;

/// What a consumer is given (discovery), what it is not and why, and what the
/// offered descriptors cost in the prompt.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSet<'a> {
    /// Always `host`: this is what a host program reads, not what a model sees.
    pub audience: &'static str,
    pub configuration: &'a str,
    pub consumer: Option<String>,
    pub profile: Option<&'a str>,
    pub offered: Vec<&'a str>,
    /// What was held back and why: every refused tool, each saying whether
    /// its name may be shown to this user. For the host's own diagnostics
    /// only; render for people or models only the entries with `nameVisible`.
    pub excluded: Vec<Excluded<'a>>,
    /// Bytes of the offered tools' descriptors (name, description, input schema).
    pub descriptor_bytes: u64,
    /// `descriptor_bytes` / [`BYTES_PER_TOKEN`], rounded up per tool.
    pub estimated_tokens: u64,
}

impl<'t> Context<'t> {
    /// The offered set with its accounting and what was held back.
    pub fn tool_set(&self) -> ToolSet<'t> {
        let ids = self.offered_ids();
        let spec = &self.table.spec;
        let bytes: Vec<u64> = ids
            .iter()
            .map(|&i| u64::from(spec.tools[i as usize].descriptor_bytes))
            .collect();
        let mut excluded = Vec::new();
        self.for_each_refused_id(|i, reason| {
            excluded.push(Excluded {
                tool: self.table.tool_name(i),
                reason,
                name_visible: self.name_visible(i),
            })
        });
        ToolSet {
            audience: "host",
            configuration: self.configuration_name(),
            consumer: self.consumer.clone(),
            profile: self.profile_name(),
            offered: ids.iter().map(|&i| self.table.tool_name(i)).collect(),
            excluded,
            descriptor_bytes: bytes.iter().sum(),
            estimated_tokens: bytes.iter().map(|b| b.div_ceil(BYTES_PER_TOKEN)).sum(),
        }
    }
}
