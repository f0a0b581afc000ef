//! The effective-access matrix as the page reads it: per context (role,
//! consumer, enforcement mode) and configuration, one character per tool,
//! run-length encoded and deduplicated.

use std::collections::HashMap;

use serde::Serialize;
use toolgate_runtime::{Decision, Role, Table, GATE_ORDER};

/// Refused cells past which the refusal texts are left out of a report (a
/// text names its tool, so they do not compress): the cells still carry
/// their reason, and `toolgate decide --refusal` or the console give the
/// text of any one.
pub const REFUSAL_TEXT_LIMIT: usize = 200_000;

/// What the matrix covers.
#[derive(Debug, Clone, Copy)]
pub struct MatrixOptions {
    /// Leave out the refusal texts even below [`REFUSAL_TEXT_LIMIT`].
    pub refusal_texts: bool,
}

impl Default for MatrixOptions {
    fn default() -> Self {
        MatrixOptions {
            refusal_texts: true,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonInfo {
    /// The one-letter code the cells use (the runtime's `Reason::letter`).
    pub letter: char,
    pub code: &'static str,
    pub message: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigInfo {
    pub name: String,
    pub file: String,
    pub provider: Option<String>,
    pub zone: String,
    pub ceiling: String,
    /// `None`: every group.
    pub groups: Option<Vec<String>>,
    /// The readout of `show config`: excluded tools that are registered
    /// (tool indices) and excluded names no longer registered.
    pub excluded: Vec<u32>,
    pub no_longer_registered: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextInfo {
    pub role: &'static str,
    /// `None`: not an MCP consumer; `"*"`: a consumer no `consumer` block names.
    pub consumer: Option<String>,
    /// `None`: as the policy configures it.
    pub mode: Option<&'static str>,
    /// The mode in effect, per configuration the same (`observe`/`enforce`).
    pub effective_mode: &'static str,
}

/// The matrix of one table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Matrix {
    pub digest: String,
    pub reasons: Vec<ReasonInfo>,
    pub groups: Vec<String>,
    /// Per tool, in registry order: name, group index, remote (1) or builtin (0).
    pub tools: Vec<(String, u32, u8)>,
    /// Per tool, the configurations (indices) that exclude it: the readout of
    /// `show tool` (`excludedBy`); only tools some configuration excludes.
    pub excluded_by: Vec<(u32, Vec<u32>)>,
    pub configs: Vec<ConfigInfo>,
    pub consumers: Vec<String>,
    pub contexts: Vec<ContextInfo>,
    /// `cells[context][configuration]`: an index into `strings`.
    pub cells: Vec<Vec<u32>>,
    /// Rows of cell characters, each run-length encoded (a character, then
    /// its repeat count when above one: `+12x+3`) or as its differences
    /// from an earlier row (`@CTX,CFG;` then per changed cell the count of
    /// unchanged cells before it, when above zero, and its character:
    /// `@0,3;12a4a`), whichever is shorter. `+` offered, `~` offered
    /// only because the trust zone is observed, a reason's letter refused;
    /// upper case: refused and the name hidden from this user (`remote-tools
    /// visible-to`), so a person or a model is told `notRegistered`.
    pub strings: Vec<String>,
    /// The refusal a user or a model is shown, per refused cell, or `None`
    /// when left out (see [`REFUSAL_TEXT_LIMIT`]).
    pub refusals: Option<Refusals>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusals {
    /// (model text, remediation), deduplicated.
    pub texts: Vec<(String, String)>,
    /// `cells[context][configuration]`: flat pairs (tool index, text index).
    pub cells: Vec<Vec<Vec<u32>>>,
}

const MODES: [Option<&str>; 3] = [None, Some("observe"), Some("enforce")];

/// The cell character of one decision.
pub fn cell_char(d: &Decision<'_>) -> char {
    match (d.allowed, d.observed_only, d.reason) {
        // Offered, and a person approves each call (docs/approvals.md).
        (true, _, _) if d.needs_approval => '!',
        (true, true, _) => '~',
        (true, false, _) => '+',
        // `Decision::hidden`: what `Context::hides` reads.
        (false, _, Some(r)) if d.hidden => r.letter().to_ascii_uppercase(),
        (false, _, Some(r)) => r.letter(),
        // A refusal always names its gate; `?` would show that it did not.
        (false, _, None) => '?',
    }
}

pub(crate) fn rle(chars: impl Iterator<Item = char>) -> String {
    let mut out = String::new();
    let mut last: Option<(char, usize)> = None;
    let flush = |out: &mut String, c: char, n: usize| {
        out.push(c);
        if n > 1 {
            out.push_str(&n.to_string());
        }
    };
    for c in chars {
        match &mut last {
            Some((l, n)) if *l == c => *n += 1,
            _ => {
                if let Some((l, n)) = last {
                    flush(&mut out, l, n);
                }
                last = Some((c, 1));
            }
        }
    }
    if let Some((l, n)) = last {
        flush(&mut out, l, n);
    }
    out
}

/// `row` as its differences from `reference`, the row of context
/// `ctx_ref` and configuration `cfg_ref`: `@CTX,CFG;` then per changed
/// position the count of unchanged positions before it (when above zero)
/// and its character.
pub(crate) fn delta(ctx_ref: usize, cfg_ref: usize, reference: &[u8], row: &[u8]) -> String {
    let mut out = format!("@{ctx_ref},{cfg_ref};");
    let mut gap = 0usize;
    for (a, b) in reference.iter().zip(row) {
        if a == b {
            gap += 1;
        } else {
            if gap > 0 {
                out.push_str(&gap.to_string());
            }
            out.push(char::from(*b));
            gap = 0;
        }
    }
    out
}

/// The points of the decision space the page offers: every role, then no
/// consumer, a consumer without a profile (`*`) and each named one, then the
/// policy's mode, observe and enforce.
pub(crate) fn contexts(table: &Table) -> Vec<(Role, Option<String>, Option<&'static str>)> {
    let mut consumers: Vec<Option<String>> = vec![None, Some("*".into())];
    consumers.extend(table.consumer_names().map(|c| Some(c.to_string())));
    let mut out = Vec::new();
    for role in [Role::User, Role::Admin, Role::None] {
        for c in &consumers {
            for mode in MODES {
                out.push((role, c.clone(), mode));
            }
        }
    }
    out
}

/// The shortest text of a row of cells (`chars`, of context `i` in
/// configuration `k`): run-length encoded, or as the difference from the
/// row before it, from its consumer's base context (`base`) or from the
/// first context, whichever is shortest (the first of equals).
fn shortest_encoding(
    chars: &[u8],
    (i, k, base): (usize, usize, usize),
    raw_row: &[Vec<u8>],
    raw: &[Option<Vec<Vec<u8>>>],
) -> String {
    let mut best = rle(chars.iter().map(|&b| char::from(b)));
    let mut consider = |ctx_ref: usize, cfg_ref: usize, reference: &[u8]| {
        let d = delta(ctx_ref, cfg_ref, reference, chars);
        if d.len() < best.len() {
            best = d;
        }
    };
    if k > 0 {
        consider(i, k - 1, &raw_row[k - 1]);
    }
    if let Some(Some(r)) = raw.get(base).filter(|_| base != i) {
        consider(base, k, &r[k]);
    }
    if let Some(Some(r)) = raw.first().filter(|_| i > 0 && base != 0) {
        consider(0, k, &r[k]);
    }
    best
}

/// For each tool some configuration excludes (by tool index): those
/// configurations' indices.
fn excluded_by(table: &Table, cfg_index: &HashMap<&str, u32>) -> Vec<(u32, Vec<u32>)> {
    let mut excluded_by = Vec::new();
    for (i, t) in table.spec().tools.iter().enumerate() {
        let by: Vec<u32> = table
            .configurations_excluding(&t.name)
            .into_iter()
            .filter_map(|c| cfg_index.get(c).copied())
            .collect();
        if !by.is_empty() {
            excluded_by.push((i as u32, by));
        }
    }
    excluded_by
}

fn config_infos(table: &Table) -> Vec<ConfigInfo> {
    let spec = table.spec();
    spec.configurations
        .iter()
        .map(|c| {
            let (registered, stale) = table.exclusions_of(&c.name).unwrap_or_default();
            let zone = &spec.zones[c.zone as usize];
            ConfigInfo {
                name: c.name.clone(),
                file: c.file.clone(),
                provider: c.provider.clone(),
                zone: zone.name.clone(),
                ceiling: table.class_name(zone.ceiling).to_string(),
                groups: c.groups.as_ref().map(|g| {
                    g.iter()
                        .map(|&i| spec.groups[i as usize].name.clone())
                        .collect()
                }),
                excluded: registered.iter().filter_map(|n| table.tool_id(n)).collect(),
                no_longer_registered: stale.iter().map(|s| s.to_string()).collect(),
            }
        })
        .collect()
}

/// The matrix of `table`, every decision asked of the runtime.
pub fn matrix(table: &Table, opts: MatrixOptions) -> Matrix {
    let spec = table.spec();
    let configs: Vec<&str> = table.configuration_names().collect();
    let cfg_index: HashMap<&str, u32> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, i as u32))
        .collect();
    let points = contexts(table);
    let mut strings: Vec<String> = Vec::new();
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut cells = Vec::with_capacity(points.len());
    let mut refused_cells = 0usize;
    let mut contexts_out = Vec::with_capacity(points.len());
    // The rows of each consumer's base context (a user, the policy's mode),
    // to write the other contexts' rows as differences from them.
    let mut raw: Vec<Option<Vec<Vec<u8>>>> = Vec::with_capacity(points.len());
    for (i, (role, consumer, mode)) in points.iter().enumerate() {
        let mut row = Vec::with_capacity(configs.len());
        let mut raw_row: Vec<Vec<u8>> = Vec::with_capacity(configs.len());
        let mut effective = "enforce";
        // The same consumer as a user under the policy's mode.
        let base = points
            .iter()
            .position(|(r, c, m)| *r == Role::User && c == consumer && m.is_none())
            .unwrap_or(0);
        for (k, cfg) in configs.iter().enumerate() {
            let Ok(ctx) = table.context(cfg) else {
                continue;
            };
            let ctx = ctx
                .role(*role)
                .consumer(consumer.as_deref())
                .enforcement(*mode);
            effective = ctx.mode().as_str();
            let chars: Vec<u8> = ctx
                .decisions()
                .map(|d| {
                    if !d.allowed {
                        refused_cells += 1;
                    }
                    cell_char(&d) as u8
                })
                .collect();
            let best = shortest_encoding(&chars, (i, k, base), &raw_row, &raw);
            let next = strings.len() as u32;
            let idx = *seen.entry(best.clone()).or_insert_with(|| {
                strings.push(best);
                next
            });
            row.push(idx);
            raw_row.push(chars);
        }
        cells.push(row);
        raw.push((base == i).then_some(raw_row));
        contexts_out.push(ContextInfo {
            role: role.as_str(),
            consumer: consumer.clone(),
            mode: *mode,
            effective_mode: effective,
        });
    }
    drop(raw);
    let refusals = (opts.refusal_texts && refused_cells <= REFUSAL_TEXT_LIMIT)
        .then(|| refusal_texts(table, &points, &configs));
    let excluded_by = excluded_by(table, &cfg_index);
    let configs_out = config_infos(table);
    Matrix {
        digest: table.digest_hex(),
        reasons: GATE_ORDER
            .iter()
            .map(|r| ReasonInfo {
                letter: r.letter(),
                code: r.code(),
                message: r.message(),
            })
            .collect(),
        groups: spec.groups.iter().map(|g| g.name.clone()).collect(),
        tools: spec
            .tools
            .iter()
            .map(|t| (t.name.clone(), t.group, u8::from(t.remote)))
            .collect(),
        excluded_by,
        configs: configs_out,
        consumers: table.consumer_names().map(str::to_string).collect(),
        contexts: contexts_out,
        cells,
        strings,
        refusals,
    }
}

fn refusal_texts(
    table: &Table,
    points: &[(Role, Option<String>, Option<&'static str>)],
    configs: &[&str],
) -> Refusals {
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut seen: HashMap<(String, String), u32> = HashMap::new();
    let mut cells = Vec::with_capacity(points.len());
    for (role, consumer, mode) in points {
        let mut row = Vec::with_capacity(configs.len());
        for cfg in configs {
            let mut flat = Vec::new();
            if let Ok(ctx) = table.context(cfg) {
                let ctx = ctx
                    .role(*role)
                    .consumer(consumer.as_deref())
                    .enforcement(*mode);
                for (i, d) in ctx.decisions().enumerate() {
                    let Some(r) = ctx.refusal(&d) else { continue };
                    let key = (r.model_text, r.remediation);
                    let next = texts.len() as u32;
                    let t = *seen.entry(key.clone()).or_insert_with(|| {
                        texts.push(key);
                        next
                    });
                    flat.push(i as u32);
                    flat.push(t);
                }
            }
            row.push(flat);
        }
        cells.push(row);
    }
    Refusals { texts, cells }
}

#[cfg(test)]
mod tests {
    use super::rle;

    #[test]
    fn runs_are_a_character_and_a_count_above_one() {
        assert_eq!(rle("+++x+~~".chars()), "+3x+~2");
        assert_eq!(rle("".chars()), "");
        assert_eq!(rle("a".chars()), "a");
        assert_eq!(rle(std::iter::repeat_n('+', 12)), "+12");
    }

    #[test]
    fn a_delta_names_its_reference_and_the_changed_cells() {
        assert_eq!(super::delta(0, 3, b"++++x+", b"+a++x+"), "@0,3;1a");
        assert_eq!(super::delta(2, 0, b"++", b"ap"), "@2,0;ap");
        assert_eq!(super::delta(1, 1, b"++", b"++"), "@1,1;");
    }
}
