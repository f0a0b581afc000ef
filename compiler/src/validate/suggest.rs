//! "Did you mean" over very many names: [`SuggestIndex`] answers exactly what
//! [`toolgate_runtime::names::did_you_mean`] (the one "did you mean" rule) answers over the same candidates, in
//! milliseconds over a million names instead of seconds.
//!
//! # The rule it reproduces
//!
//! `did_you_mean(name, candidates)` lowercases both sides (`str::to_lowercase`
//! of the whole string), measures `strsim::damerau_levenshtein` (counted in
//! `char`s), keeps candidates within `cap = (chars(name) / 3).clamp(1, 3)`,
//! drops a candidate equal to `name` byte for byte (but not one that differs
//! only in case: that one is at distance 0 and wins), and answers the
//! smallest `(distance, candidate)`, candidates compared as `str` (bytes).
//!
//! # Design
//!
//! The index keeps the lowercased names sorted and deduplicated, concatenated
//! in one `String`. Sorted keys are an *implicit trie*: a key shares with its
//! predecessor the prefix they have in common, so a depth-first walk of the
//! trie is a walk of the list in order, keeping one dynamic-programming row
//! per character of the current prefix and recomputing only the rows past
//! the common prefix.
//!
//! Per lowercased key the index keeps the originals the tie-break can need:
//! the smallest original (`str` order), stored only when it differs from the
//! key, and the second smallest distinct original, needed only when the
//! smallest is the queried name itself. Any other original of the key loses
//! the tie-break to one of these two, so nothing else is stored.
//!
//! A lookup first tries distance 0 (a binary search for the lowercased name).
//! Otherwise it walks the trie once per bound `b = 1, 2, ..., cap`
//! (iterative deepening), stopping at the first bound that finds a key: a
//! near miss at distance 1 is found by the cheap bound-1 walk, and only a
//! name with no suggestion pays for the walk at the full cap. Within a walk
//! every key whose distance is at most the bound is found, and the smallest
//! `(distance, original)` over them is the answer.
//!
//! # The distance: unrestricted Damerau-Levenshtein, row by row
//!
//! strsim 0.11's `damerau_levenshtein` is the unrestricted ("true")
//! Damerau-Levenshtein distance (insertions, deletions, substitutions, and
//! transpositions of adjacent characters with arbitrary edits between them,
//! each at cost 1), computed with the Zhao–Sahni linear-space form of the
//! Lowrance–Wagner algorithm. The index computes the Lowrance–Wagner
//! recurrence directly, one row per character of the key (the trie path)
//! and one column per character of the query: with `H[i][j]` the distance
//! between the first `i` characters of the key `c` and the first `j` of the
//! query `q`,
//!
//! ```text
//! H[i][0] = i, H[0][j] = j
//! H[i][j] = min( H[i-1][j-1] + (c[i] != q[j]),
//!                H[i-1][j] + 1,  H[i][j-1] + 1,
//!                H[k-1][l-1] + (i-k-1) + 1 + (j-l-1) )   if k > 0 and l > 0
//! ```
//!
//! where `k < i` is the last row with `c[k] == q[j]` and `l < j` the last
//! column with `q[l] == c[i]`. The transposition term reads rows above the
//! previous one, which is why the walk keeps every row of the path (and, per
//! row, the last row matching each query column). The distance is symmetric,
//! so putting the key on the rows while strsim puts the name on the rows does
//! not change it; the tests compare the rows with strsim directly.
//!
//! # Why pruning is exact
//!
//! Let `μ(i) = min_j H[i][j]`, the minimum of row `i`. Then `μ(i) >= μ(i-1)`:
//!
//! * `μ(r+1) <= μ(r) + 1` for every `r`, because `H[r+1][j] <= H[r][j] + 1`.
//! * Every term of `H[i][j]` is at least `μ(i-1)`, by induction over `j`:
//!   `H[i][0] = i > i-1 >= μ(i-1)`; the diagonal and upper terms read row
//!   `i-1`; the left term is `H[i][j-1] + 1`, at least `μ(i-1)` by the
//!   induction; the transposition term is at least
//!   `μ(k-1) + (i-k) >= μ(i-1)` by the first point applied `i-k` times.
//!
//! So row minima never decrease down a trie path, and the distance of any
//! key below a prefix, `H[n][m] >= μ(n) >= μ(i)`, exceeds the bound whenever
//! row `i` does: the walk skips the whole subtree (a galloping search from
//! the current key for the end of the keys with that prefix). Pruning drops rows, it never alters a
//! kept one (no cell is clamped), so every distance the walk reports is the
//! exact Lowrance–Wagner value. The proptests check this against the linear
//! `did_you_mean` and against strsim on random names, Unicode, case
//! differences, transpositions and ties.
//!
//! # Cost
//!
//! A lookup costs one row (`chars(name) + 1` cells) per trie node whose
//! parent row stays within the bound, plus a galloping search per pruned
//! node; it does not grow with the number of keys outside that reach. Near
//! misses are found by the bound-1 walk (tens of microseconds over a million
//! generated names); the dearest lookups are names with no suggestion that
//! share a prefix with very many keys (`toolbox_search` against `tool<N>`:
//! about 11,000 rows, a few milliseconds). Building sorts the names once.
//!
//! `fst`'s Levenshtein automata and similar crates do not fit: they have no
//! transpositions (or only the restricted, "optimal string alignment" form),
//! which answers differently from strsim.

use std::borrow::Cow;

/// An index of candidate names answering [`SuggestIndex::did_you_mean`].
#[derive(Debug, Clone, Default)]
pub struct SuggestIndex {
    /// The lowercased names, sorted (bytes) and deduplicated, concatenated.
    keys: String,
    /// `keys[start(g)..ends[g]]` is key `g`.
    ends: Vec<usize>,
    /// The smallest original of key `g`, when it differs from the key.
    first: Vec<Option<Box<str>>>,
    /// `(g, original)`: the second smallest distinct original of key `g`,
    /// for the keys that have one, sorted by `g`.
    second: Vec<(usize, Box<str>)>,
}

/// `to_lowercase`, without allocating for names that are already lowercase
/// ASCII (almost every registered tool name).
fn lower(name: &str) -> Cow<'_, str> {
    if name
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.to_lowercase())
    }
}

/// The distance cap of `did_you_mean`: a third of the name's length in
/// characters, at least 1, at most 3.
fn cap(name: &str) -> usize {
    (name.chars().count() / 3).clamp(1, 3)
}

impl SuggestIndex {
    /// Index `names` (duplicates and any order are fine).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut pairs: Vec<(Cow<'a, str>, &'a str)> =
            names.into_iter().map(|n| (lower(n), n)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut index = SuggestIndex {
            keys: String::with_capacity(pairs.iter().map(|(k, _)| k.len()).sum()),
            ..SuggestIndex::default()
        };
        let mut i = 0;
        while i < pairs.len() {
            let key = &pairs[i].0;
            let mut end = i + 1;
            while end < pairs.len() && pairs[end].0 == *key {
                end += 1;
            }
            let g = index.ends.len();
            index.keys.push_str(key);
            index.ends.push(index.keys.len());
            // `pairs[i..end]` share the key; their originals are sorted and distinct.
            let smallest = pairs[i].1;
            index
                .first
                .push((smallest != key.as_ref()).then(|| smallest.into()));
            if let Some((_, next)) = pairs.get(i + 1).filter(|_| i + 1 < end) {
                index.second.push((g, (*next).into()));
            }
            i = end;
        }
        index
    }

    /// The number of distinct lowercased names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No names at all.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn key(&self, g: usize) -> &str {
        let start = if g == 0 { 0 } else { self.ends[g - 1] };
        &self.keys[start..self.ends[g]]
    }

    /// The smallest original of key `g` other than `name`.
    fn original(&self, g: usize, name: &str) -> Option<&str> {
        let smallest = self.first[g].as_deref().unwrap_or_else(|| self.key(g));
        if smallest != name {
            return Some(smallest);
        }
        self.second
            .binary_search_by_key(&g, |(h, _)| *h)
            .ok()
            .map(|s| self.second[s].1.as_ref())
    }

    /// The first key after `from` that does not start with `prefix`, for a
    /// key `from` that does (keys starting with a prefix are contiguous).
    /// Galloping from `from`: pruned subtrees are mostly small, and a plain
    /// binary search over the rest of a million keys costs a cache miss per
    /// step.
    fn skip_prefix(&self, from: usize, prefix: &str) -> usize {
        let n = self.ends.len();
        let (mut lo, mut step) = (from + 1, 1);
        // Invariant: every key before `lo` starts with `prefix`.
        let mut hi = loop {
            let probe = from.saturating_add(step);
            if probe >= n {
                break n;
            }
            if !self.key(probe).starts_with(prefix) {
                break probe;
            }
            lo = probe + 1;
            step = step.saturating_mul(2);
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key(mid).starts_with(prefix) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Exactly `toolgate_runtime::names::did_you_mean(name, names)` for the indexed names.
    pub fn did_you_mean(&self, name: &str) -> Option<String> {
        let lowered = lower(name);
        // Distance 0: the same name in another case.
        let exact = {
            let (mut lo, mut hi) = (0, self.ends.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if self.key(mid) < lowered.as_ref() {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            (lo < self.ends.len() && self.key(lo) == lowered.as_ref()).then_some(lo)
        };
        if let Some(found) = exact.and_then(|g| self.original(g, name)) {
            return Some(found.to_string());
        }
        let query: Vec<char> = lowered.chars().collect();
        let mut walk = Walk::new(&query);
        (1..=cap(name)).find_map(|bound| {
            walk.run(self, name, bound)
                .map(|(_, original)| original.to_string())
        })
    }
}

/// The state of one trie walk: the rows of the current path.
struct Walk<'q> {
    query: &'q [char],
    /// Row `i` is `rows[i * (m + 1)..][..m + 1]`, `m` the query's length.
    rows: Vec<u32>,
    /// `last[i * m + j]`: the last row `r <= i` (1-based, 0 for none) whose
    /// key character equals `query[j]`.
    last: Vec<u32>,
    /// The current prefix and, per character, the byte length up to it.
    prefix: String,
    ends: Vec<usize>,
}

impl<'q> Walk<'q> {
    fn new(query: &'q [char]) -> Self {
        Walk {
            query,
            rows: Vec::new(),
            last: Vec::new(),
            prefix: String::new(),
            ends: Vec::new(),
        }
    }

    /// Go back to the empty prefix.
    fn reset(&mut self) {
        let m = self.query.len();
        self.rows.clear();
        self.rows.extend(0..=m as u32);
        self.last.clear();
        self.last.resize(m, 0);
        self.prefix.clear();
        self.ends.clear();
    }

    /// Keep only the first `depth` characters of the prefix.
    fn truncate(&mut self, depth: usize) {
        let m = self.query.len();
        self.rows.truncate((depth + 1) * (m + 1));
        self.last.truncate((depth + 1) * m);
        self.ends.truncate(depth);
        self.prefix.truncate(self.ends.last().copied().unwrap_or(0));
    }

    /// Append the row of character `c` below the current prefix; its minimum.
    fn push(&mut self, c: char) -> u32 {
        let q = self.query;
        let (m, w) = (q.len(), q.len() + 1);
        let i = self.ends.len() + 1; // the new row
        let above = (i - 1) * w;
        let mut min = i as u32;
        self.rows.push(i as u32);
        // The last column (1-based) of this row whose query character is `c`.
        let mut l = 0usize;
        for j in 1..=m {
            let qj = q[j - 1];
            let same = qj == c;
            let mut v = (self.rows[above + j - 1] + u32::from(!same))
                .min(self.rows[above + j] + 1)
                .min(self.rows[i * w + j - 1] + 1);
            let k = self.last[(i - 1) * m + j - 1] as usize;
            if k > 0 && l > 0 {
                let t = self.rows[(k - 1) * w + l - 1] as usize + (i - k - 1) + 1 + (j - l - 1);
                v = v.min(t as u32);
            }
            if same {
                l = j;
            }
            min = min.min(v);
            self.rows.push(v);
        }
        for (j, &qj) in q.iter().enumerate() {
            let r = if qj == c {
                i as u32
            } else {
                self.last[(i - 1) * m + j]
            };
            self.last.push(r);
        }
        self.prefix.push(c);
        self.ends.push(self.prefix.len());
        min
    }

    /// The distance between the current prefix and the whole query.
    fn distance(&self) -> u32 {
        let w = self.query.len() + 1;
        self.rows[self.ends.len() * w + w - 1]
    }

    /// The smallest `(distance, original)` over keys within `bound` of the
    /// query, distance 0 excluded (the caller answered it).
    fn run<'i>(
        &mut self,
        index: &'i SuggestIndex,
        name: &str,
        bound: usize,
    ) -> Option<(u32, &'i str)> {
        let mut bound = bound as u32;
        let mut best: Option<(u32, &'i str)> = None;
        self.reset();
        let mut g = 0;
        'keys: while g < index.len() {
            let key = index.key(g);
            // Keep the part of the path that is a prefix of this key.
            let common = self
                .prefix
                .bytes()
                .zip(key.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let depth = self.ends.partition_point(|&e| e <= common);
            self.truncate(depth);
            let rest = &key[self.prefix.len()..];
            for c in rest.chars() {
                if self.push(c) > bound {
                    let skip = index.skip_prefix(g, &self.prefix);
                    self.truncate(self.ends.len() - 1);
                    g = skip;
                    continue 'keys;
                }
            }
            let d = self.distance();
            if d > 0 && d <= bound {
                if let Some(original) = index.original(g, name) {
                    if best.is_none_or(|b| (d, original) < b) {
                        best = Some((d, original));
                        bound = d;
                    }
                }
            }
            g += 1;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use toolgate_runtime::names::did_you_mean;

    /// The distance of the walk's rows, for comparison with strsim.
    fn row_distance(key: &str, query: &str) -> u32 {
        let q: Vec<char> = query.chars().collect();
        let mut walk = Walk::new(&q);
        walk.reset();
        for c in key.chars() {
            walk.push(c);
        }
        walk.distance()
    }

    /// The minimum of every row, top to bottom.
    fn row_minima(key: &str, query: &str) -> Vec<u32> {
        let q: Vec<char> = query.chars().collect();
        let mut walk = Walk::new(&q);
        walk.reset();
        key.chars().map(|c| walk.push(c)).collect()
    }

    fn both(names: &[&str], name: &str) -> (Option<String>, Option<String>) {
        (
            SuggestIndex::new(names.iter().copied()).did_you_mean(name),
            did_you_mean(name, names.iter().copied()).map(str::to_string),
        )
    }

    #[test]
    fn suggest_matches_the_diagnostics_examples() {
        let names = ["delete_record", "read_source", "get_env_raw"];
        let index = SuggestIndex::new(names);
        assert_eq!(
            index.did_you_mean("delete_recrod"),
            Some("delete_record".into())
        );
        assert_eq!(index.did_you_mean("read_sourc"), Some("read_source".into()));
        assert_eq!(index.did_you_mean("shell_exec"), None);
        assert_eq!(
            SuggestIndex::new(["ac", "zz"]).did_you_mean("ab"),
            Some("ac".into())
        );
        assert_eq!(SuggestIndex::new(["xy"]).did_you_mean("ab"), None);
    }

    #[test]
    fn suggest_cap_is_a_third_of_the_length() {
        // "abcdef": cap 2; "abcdefghi": cap 3; long names stay at 3.
        let index = SuggestIndex::new(["abcdXY", "abcdefgXYZ", "abcdefghijklmnoWXYZ"]);
        assert_eq!(index.did_you_mean("abcdef"), Some("abcdXY".into()));
        assert_eq!(index.did_you_mean("abcde"), None); // cap 1, distance 2
                                                       // h->x, i->y, insert z: 3 edits, within the cap of 3.
        assert_eq!(index.did_you_mean("abcdefghi"), Some("abcdefgXYZ".into()));
        assert_eq!(index.did_you_mean("abcdefghijklmnopqrs"), None); // 4 edits, cap 3
        assert_eq!(
            index.did_you_mean("abcdefghijklmnoWXY"),
            Some("abcdefghijklmnoWXYZ".into())
        );
    }

    #[test]
    fn suggest_skip_prefix_finds_the_end_of_every_subtree() {
        let names: Vec<String> = (0..1500).map(|i| format!("t{i}")).collect();
        let index = SuggestIndex::new(names.iter().map(String::as_str));
        for g in 0..index.len() {
            for len in 1..=index.key(g).len() {
                let prefix = &index.key(g)[..len];
                let end = index.skip_prefix(g, prefix);
                let expected = (g..index.len())
                    .find(|&h| !index.key(h).starts_with(prefix))
                    .unwrap_or(index.len());
                assert_eq!(end, expected, "{prefix} from {g}");
            }
        }
    }

    #[test]
    fn suggest_empty_and_tiny() {
        let empty = SuggestIndex::new([]);
        assert!(empty.is_empty());
        assert_eq!(empty.did_you_mean("tool"), None);
        assert_eq!(empty.did_you_mean(""), None);
        // The empty name has cap 1: one-character names are suggested.
        let index = SuggestIndex::new(["", "b", "a", "ab"]);
        assert_eq!(index.len(), 4);
        assert_eq!(index.did_you_mean(""), Some("a".into()));
        assert_eq!(index.did_you_mean("x"), Some("".into()));
        assert_eq!(index.did_you_mean("a"), Some("".into()));
    }

    #[test]
    fn suggest_case_differences() {
        // The same name in another case is at distance 0 and wins.
        let index = SuggestIndex::new(["Read_File", "read_file", "READ_FILE", "read_fil"]);
        assert_eq!(index.did_you_mean("read_file"), Some("READ_FILE".into()));
        assert_eq!(index.did_you_mean("READ_FILE"), Some("Read_File".into()));
        // Only the name itself, byte for byte, is left out.
        let alone = SuggestIndex::new(["read_file", "read_fil"]);
        assert_eq!(alone.did_you_mean("read_file"), Some("read_fil".into()));
        assert_eq!(alone.did_you_mean("Read_File"), Some("read_file".into()));
        // Distances are measured on lowercased text.
        assert_eq!(
            SuggestIndex::new(["SHELL_EXEC"]).did_you_mean("shell_exce"),
            Some("SHELL_EXEC".into())
        );
    }

    #[test]
    fn suggest_ties_break_on_the_original_name() {
        // Three at distance 1; the smallest original (bytes: uppercase first) wins.
        let index = SuggestIndex::new(["tool_b", "Tool_c", "tool_a", "tool_bb"]);
        assert_eq!(index.did_you_mean("tool_x"), Some("Tool_c".into()));
        // A closer name beats a smaller one.
        let index = SuggestIndex::new(["aaaaaa_x", "zzzzzz"]);
        assert_eq!(index.did_you_mean("zzzzzy"), Some("zzzzzz".into()));
    }

    #[test]
    fn suggest_counts_unrestricted_transpositions() {
        // "ca" -> "abc" is 2 in true Damerau-Levenshtein (3 in optimal string
        // alignment); strsim and the index agree on 2.
        assert_eq!(strsim::damerau_levenshtein("ca", "abc"), 2);
        assert_eq!(row_distance("ca", "abc"), 2);
        assert_eq!(row_distance("abc", "ca"), 2);
        // A name of 6 characters has cap 2: `xyzwca` reaches `xyzwabc`
        // (one transposition with an insertion between), a name of 5 does not.
        let index = SuggestIndex::new(["xyzwabc", "zzzzzzzzz"]);
        assert_eq!(index.did_you_mean("xyzwca"), Some("xyzwabc".into()));
        assert_eq!(
            both(&["xyzwabc"], "xyzwca"),
            (Some("xyzwabc".into()), Some("xyzwabc".into()))
        );
        assert_eq!(both(&["xyzabc"], "xyzca"), (None, None));
        assert_eq!(
            SuggestIndex::new(["delete_record"]).did_you_mean("delete_recrod"),
            Some("delete_record".into())
        );
    }

    #[test]
    fn suggest_unicode_is_counted_in_chars() {
        // "é" is one character (two bytes); "ß" lowercases to itself; final
        // sigma lowercases by context, the same way on both sides.
        let index = SuggestIndex::new(["café_menu", "straße", "ΟΔΟΣ"]);
        assert_eq!(index.did_you_mean("cafe_menu"), Some("café_menu".into()));
        // No case folding beyond `to_lowercase`: ß -> ss is two edits (cap 2).
        assert_eq!(index.did_you_mean("strasse"), Some("straße".into()));
        assert_eq!(index.did_you_mean("strase"), Some("straße".into()));
        assert_eq!(index.did_you_mean("strassen"), None);
        assert_eq!(index.did_you_mean("οδος"), Some("ΟΔΟΣ".into()));
    }

    #[test]
    fn suggest_agrees_with_linear_on_a_generated_registry() {
        let names: Vec<String> = (0..20_000)
            .map(|i| {
                if i % 7 == 0 {
                    format!("mcp_srv{}_tool{i}", i % 13)
                } else {
                    format!("tool{i}")
                }
            })
            .collect();
        let index = SuggestIndex::new(names.iter().map(String::as_str));
        for q in [
            "tool1234",
            "tol1234",
            "toll1234",
            "otol1234",
            "tool12345",
            "TOOL19999",
            "mcp_srv3_tool7",
            "mcp_srv3_tool70",
            "mcp_srv_tool70",
            "shell_exec",
            "tool",
            "t",
            "",
            "tool99999",
            "mcp_srv12_tool1000",
        ] {
            assert_eq!(
                index.did_you_mean(q),
                did_you_mean(q, names.iter().map(String::as_str)).map(str::to_string),
                "{q}"
            );
        }
    }

    #[test]
    fn suggest_exhaustive_over_a_small_alphabet() {
        // Every name of up to 4 characters over {a, b, A, é} against a fixed
        // set: every transposition, case difference and tie of that space.
        let alphabet = ['a', 'b', 'A', 'é'];
        let mut all = vec![String::new()];
        let mut level = vec![String::new()];
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(level.iter().cloned());
        }
        let sets: [&[&str]; 4] = [
            &["ab", "ba", "Ab", "aab", "bbaa"],
            &["abab", "baba", "ABAB", "aé", "éa", "b"],
            &["", "a", "A", "aaaa", "bébé"],
            &["abé", "béa", "éab", "ÉAB", "aaé"],
        ];
        for set in sets {
            let index = SuggestIndex::new(set.iter().copied());
            for q in &all {
                assert_eq!(
                    index.did_you_mean(q),
                    did_you_mean(q, set.iter().copied()).map(str::to_string),
                    "{q} in {set:?}"
                );
            }
        }
    }

    /// Names from a small alphabet with case pairs and multi-byte, case-
    /// changing characters, so that collisions, ties and transpositions are
    /// common.
    fn name() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop::sample::select(vec![
                'a', 'b', 'c', 'A', 'B', '_', 'é', 'É', 'ß', 'Σ', 'σ', 'ς', 'İ', 'K', '\u{212A}',
                '日',
            ]),
            0..9,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    /// A near miss of `s`: one or two edits, transpositions and case flips
    /// included.
    fn mutate(s: &str, ops: &[(u8, usize, char)]) -> String {
        let mut cs: Vec<char> = s.chars().collect();
        for &(op, at, c) in ops {
            let n = cs.len();
            match op % 5 {
                0 if n > 1 => {
                    let i = at % (n - 1);
                    cs.swap(i, i + 1);
                }
                1 if n > 0 => {
                    cs.remove(at % n);
                }
                2 => cs.insert(at % (n + 1), c),
                3 if n > 0 => cs[at % n] = c,
                _ if n > 0 => {
                    let i = at % n;
                    let flipped: Vec<char> = if cs[i].is_uppercase() {
                        cs[i].to_lowercase().collect()
                    } else {
                        cs[i].to_uppercase().collect()
                    };
                    cs.splice(i..=i, flipped);
                }
                _ => {}
            }
        }
        cs.into_iter().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn suggest_rows_equal_strsim(a in name(), b in name()) {
            let (la, lb) = (a.to_lowercase(), b.to_lowercase());
            prop_assert_eq!(row_distance(&la, &lb) as usize, strsim::damerau_levenshtein(&lb, &la));
            prop_assert_eq!(row_distance(&a, &b) as usize, strsim::damerau_levenshtein(&b, &a));
            // The pruning lemma: row minima never decrease.
            let minima = row_minima(&a, &b);
            prop_assert!(minima.windows(2).all(|w| w[0] <= w[1]), "{:?}", minima);
        }

        #[test]
        fn suggest_index_equals_linear(
            names in proptest::collection::vec(name(), 0..24),
            picks in proptest::collection::vec(
                (any::<prop::sample::Index>(),
                 proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['a', 'B', 'é', 'Σ', 'x'])), 0..3)),
                0..8),
            free in proptest::collection::vec(name(), 0..4),
        ) {
            let index = SuggestIndex::new(names.iter().map(String::as_str));
            let mut queries: Vec<String> = free;
            for (pick, ops) in &picks {
                if !names.is_empty() {
                    let base = &names[pick.index(names.len())];
                    queries.push(base.clone());
                    queries.push(mutate(base, ops));
                }
            }
            for q in &queries {
                prop_assert_eq!(
                    index.did_you_mean(q),
                    did_you_mean(q, names.iter().map(String::as_str)).map(str::to_string),
                    "query {:?} over {:?}", q, names
                );
            }
        }

        #[test]
        fn suggest_index_equals_linear_on_tool_names(
            ids in proptest::collection::vec((0u32..3000, any::<bool>(), 0u8..4), 1..200),
            ops in proptest::collection::vec((any::<prop::sample::Index>(), proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['1', '_', 'o', 'T'])), 0..4)), 1..10),
        ) {
            let names: Vec<String> = ids
                .iter()
                .map(|&(i, remote, s)| if remote { format!("mcp_srv{s}_tool{i}") } else if s == 0 { format!("Tool{i}") } else { format!("tool{i}") })
                .collect();
            let index = SuggestIndex::new(names.iter().map(String::as_str));
            for (pick, edits) in &ops {
                let q = mutate(&names[pick.index(names.len())], edits);
                prop_assert_eq!(
                    index.did_you_mean(&q),
                    did_you_mean(&q, names.iter().map(String::as_str)).map(str::to_string),
                    "query {:?}", q
                );
            }
        }
    }
}
