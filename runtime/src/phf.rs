//! Tool name -> index by a minimal perfect hash, built by the compiler and
//! stored in the table (docs/table-format.md, "The name hash").
//!
//! Why our own and not a crate: the hash must be part of the file format, so
//! its function and layout must never change under us (`ptr_hash` and
//! `boomphf` do not promise a stable serialised form across releases, and a
//! table is read by runtimes of other builds), and the runtime is embedded by
//! C, PHP and Python hosts and stays lean. The scheme is PTHash's
//! (Pibiri and Trani, SIGIR 2021) in its simplest form, about a hundred lines:
//!
//! - every name is hashed once with [`hash`] (seeded, 64-bit, two folded
//!   multiplies for a name of up to 16 bytes);
//! - its bucket is `mulhi(h, buckets)`; buckets hold about [`BUCKET_LOAD`]
//!   names;
//! - its slot is `mulhi(fold(h ^ pilot * K, K2), n)`, where `pilot` is the bucket's
//!   stored `u32`; the compiler searches, bucket by bucket from the largest,
//!   the first pilot that puts all of a bucket's names in free slots. The
//!   slots are exactly `0..n`: the hash is minimal.
//!
//! The table stores the seed and the pilots (4 bytes per ~2.5 names). At load
//! the runtime places every name once: that check proves the pilots make a
//! perfect hash of this very table's names (and finds a duplicate name, two
//! names in one slot), and it fills the slot -> tool index array. A lookup
//! hashes the name, reads one pilot and one slot, and compares the name, so a
//! name the table does not hold is never taken for one it does.

/// The average bucket size: fewer, larger buckets store fewer pilots but
/// take longer to place. 2.5 places a million names in well under a second.
pub const BUCKET_LOAD: f64 = 2.5;

const K: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xc4ce_b9fe_1a85_ec53;

/// The folded multiply: the low and the high half of the 128-bit product,
/// xored. One multiply, and every output bit depends on every input bit.
#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// The high 64 bits of `a * b`: maps a uniform `a` onto `0..b` without a division.
#[inline]
fn mulhi(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// The little-endian word of `b[i..i + 8]` (the caller keeps `i + 8 <= b.len()`).
#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// The little-endian half word of `b[i..i + 4]`.
#[inline]
fn half(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[i..i + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// The name hash (part of the format; docs/table-format.md, "The name hash").
/// Two words `a`, `c` are read from the name: for 16 bytes or fewer, its
/// first and last 8 (4, for 4 to 7 bytes; bytes 0, len/2 and len-1 below 4),
/// overlapping; for longer names every 16-byte chunk but the last is folded
/// into the seed and `a`, `c` are the last 16 bytes. Then
/// `fold(fold(a ^ K ^ seed, c ^ K2 ^ len) ^ len, K)`. No loop and no copy for
/// the names tools have (most are 16 bytes or fewer, nearly all 32 or fewer).
#[inline]
pub fn hash(seed: u64, name: &[u8]) -> u64 {
    let len = name.len();
    let mut seed = seed;
    let (a, c) = if len <= 16 {
        if len >= 8 {
            (word(name, 0), word(name, len - 8))
        } else if len >= 4 {
            (half(name, 0), half(name, len - 4))
        } else if len > 0 {
            let b = |i: usize| u64::from(name[i]);
            ((b(0) << 16) | (b(len / 2) << 8) | b(len - 1), 0)
        } else {
            (0, 0)
        }
    } else {
        let mut i = 0;
        while len - i > 16 {
            seed = fold(word(name, i) ^ K ^ seed, word(name, i + 8) ^ K2);
            i += 16;
        }
        (word(name, len - 16), word(name, len - 8))
    };
    let len = len as u64;
    fold(fold(a ^ K ^ seed, c ^ K2 ^ len) ^ len, K)
}

/// Whether `a` and `b`, of one length `k` at most [`INLINE`], are the same
/// bytes: word loads, no call and no loop.
#[inline]
fn same_head(a: &[u8], b: &[u8]) -> bool {
    let k = a.len();
    debug_assert!(k == b.len() && k <= INLINE);
    if k >= 8 {
        word(a, 0) == word(b, 0)
            && word(a, k - 8) == word(b, k - 8)
            && (k <= 16 || word(a, 8) == word(b, 8))
    } else if k >= 4 {
        half(a, 0) == half(b, 0) && half(a, k - 4) == half(b, k - 4)
    } else {
        a == b
    }
}

/// How many buckets `n` names get.
pub fn bucket_count(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        ((n as f64 / BUCKET_LOAD).ceil() as usize).max(1)
    }
}

/// The stored part of a name hash: what the table file holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pilots {
    pub seed: u64,
    pub pilots: Vec<u32>,
}

impl Pilots {
    #[inline]
    fn bucket(&self, h: u64) -> usize {
        mulhi(h, self.pilots.len() as u64) as usize
    }

    /// The slot of a name hash `h` among `n`, or `None` when there are no buckets.
    #[inline]
    fn slot(&self, h: u64, n: usize) -> Option<usize> {
        let p = *self.pilots.get(self.bucket(h))?;
        Some(slot_of(h, p, n))
    }
}

#[inline]
fn slot_of(h: u64, pilot: u32, n: usize) -> usize {
    mulhi(fold(h ^ u64::from(pilot).wrapping_mul(K), K2), n as u64) as usize
}

/// Find pilots for `names` (all distinct). Deterministic: the same names in
/// the same order give the same pilots. `None` only when the names are not
/// distinct.
pub fn build<'a>(names: impl ExactSizeIterator<Item = &'a str> + Clone) -> Option<Pilots> {
    // A seed whose 64-bit hashes collide (or, vanishingly rarely, whose
    // pilot search runs too long) is replaced by the next.
    for seed in 0..16u64 {
        let seed = seed.wrapping_mul(K);
        let hashes: Vec<u64> = names.clone().map(|n| hash(seed, n.as_bytes())).collect();
        if let Some(p) = place(seed, &hashes) {
            return Some(p);
        }
    }
    None
}

fn place(seed: u64, hashes: &[u64]) -> Option<Pilots> {
    let n = hashes.len();
    let m = bucket_count(n);
    let mut stored = Pilots {
        seed,
        pilots: vec![0; m],
    };
    if n == 0 {
        return Some(stored);
    }
    // Names by bucket (a counting sort), then buckets largest first.
    let mut start = vec![0u32; m + 1];
    for &h in hashes {
        start[stored.bucket(h) + 1] += 1;
    }
    for b in 0..m {
        start[b + 1] += start[b];
    }
    let mut fill = start.clone();
    let mut members = vec![0u64; n];
    for &h in hashes {
        let b = stored.bucket(h);
        members[fill[b] as usize] = h;
        fill[b] += 1;
    }
    let mut order: Vec<u32> = (0..m as u32).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(start[b as usize + 1] - start[b as usize]));
    let mut taken = vec![0u64; n.div_ceil(64)];
    let is_taken = |t: &[u64], s: usize| t[s / 64] >> (s % 64) & 1 == 1;
    let mut slots: Vec<usize> = Vec::with_capacity(16);
    // The last names need about n tries each; far beyond that, reseed.
    let limit = (n as u64)
        .saturating_mul(64)
        .saturating_add(1 << 16)
        .min(u32::MAX as u64);
    for b in order {
        let keys = &members[start[b as usize] as usize..start[b as usize + 1] as usize];
        if keys.is_empty() {
            break;
        }
        let mut found = false;
        'pilot: for p in 0..limit as u32 {
            slots.clear();
            for &h in keys {
                let s = slot_of(h, p, n);
                if is_taken(&taken, s) || slots.contains(&s) {
                    continue 'pilot;
                }
                slots.push(s);
            }
            for &s in &slots {
                taken[s / 64] |= 1 << (s % 64);
            }
            stored.pilots[b as usize] = p;
            found = true;
            break;
        }
        if !found {
            return None;
        }
    }
    Some(stored)
}

/// A checked name hash: the pilots, and what each slot holds.
#[derive(Debug, Clone, Default)]
pub struct NameHash {
    pilots: Pilots,
    slots: Vec<Slot>,
}

/// Bytes of a name kept in its slot: a hit on a name this long or shorter
/// is decided by the slot's cache line alone.
const INLINE: usize = 24;

/// One slot: its tool's index and the head of its name, in one aligned
/// 32-byte record, so that a lookup touches the pilot and this line (and the
/// tool's full name only when it is longer than [`INLINE`] bytes).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    tool: u32,
    len: u32,
    head: [u8; INLINE],
}

impl Slot {
    fn new(tool: usize, name: &str) -> Slot {
        let mut head = [0u8; INLINE];
        let k = name.len().min(INLINE);
        head[..k].copy_from_slice(&name.as_bytes()[..k]);
        Slot {
            tool: tool as u32,
            len: name.len() as u32,
            head,
        }
    }
}

/// Why stored pilots do not make a perfect hash of a table's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashError {
    /// Two tools share a name (indices of the earlier and the later).
    Duplicate(usize, usize),
    /// The pilots do not place every name in its own slot.
    NotPerfect,
}

impl NameHash {
    /// Place every name with `pilots`: each must land in its own slot.
    pub fn check<'a>(
        pilots: Pilots,
        names: impl ExactSizeIterator<Item = &'a str> + Clone,
    ) -> Result<NameHash, HashError> {
        let n = names.len();
        if (n == 0) != pilots.pilots.is_empty() {
            return Err(HashError::NotPerfect);
        }
        const FREE: u32 = u32::MAX;
        let mut slots = vec![
            Slot {
                tool: FREE,
                ..Slot::default()
            };
            n
        ];
        // In batches: first every name's slot (the pilot reads do not wait
        // on each other), then the slots' checks and writes (nor do these),
        // so a million names pay overlapping cache misses, not one at a time.
        const BATCH: usize = 32;
        let mut batch: Vec<(usize, &str)> = Vec::with_capacity(BATCH);
        let mut named = names.clone();
        let mut first = 0;
        loop {
            batch.clear();
            for name in named.by_ref().take(BATCH) {
                let s = pilots
                    .slot(hash(pilots.seed, name.as_bytes()), n)
                    .ok_or(HashError::NotPerfect)?;
                batch.push((s, name));
            }
            if batch.is_empty() {
                break;
            }
            for (k, &(s, name)) in batch.iter().enumerate() {
                let i = first + k;
                match slots[s].tool {
                    FREE => slots[s] = Slot::new(i, name),
                    j => {
                        return Err(match names.clone().nth(j as usize) {
                            Some(other) if other == name => HashError::Duplicate(j as usize, i),
                            _ => HashError::NotPerfect,
                        })
                    }
                }
            }
            first += batch.len();
        }
        Ok(NameHash { pilots, slots })
    }

    /// The stored part.
    pub fn pilots(&self) -> &Pilots {
        &self.pilots
    }

    /// The index of the tool named `name`. `full(i)` gives tool `i`'s whole
    /// name, read only when the name is longer than what its slot holds.
    #[inline]
    pub fn get<'a>(&self, name: &str, full: impl FnOnce(u32) -> &'a str) -> Option<u32> {
        self.confirm(self.candidate(name)?, name, full)
    }

    /// The indices of many names, written to `out` in order: each batch's
    /// slots are found first (its pilot reads do not wait on each other),
    /// then compared (nor do its slot reads), so a batch's cache misses
    /// overlap instead of coming one after another. The same answers as
    /// [`NameHash::get`] name by name.
    pub fn get_many<'a, S: AsRef<str>>(
        &self,
        names: &[S],
        out: &mut Vec<Option<u32>>,
        full: impl Fn(u32) -> &'a str,
    ) {
        const BATCH: usize = 32;
        let mut slots = [None; BATCH];
        for batch in names.chunks(BATCH) {
            for (s, name) in slots.iter_mut().zip(batch) {
                *s = self.candidate(name.as_ref());
            }
            out.extend(
                slots
                    .iter()
                    .zip(batch)
                    .map(|(&s, name)| self.confirm(s?, name.as_ref(), &full)),
            );
        }
    }

    /// The one slot `name` can be in (`None`: the table has no names).
    #[inline]
    fn candidate(&self, name: &str) -> Option<usize> {
        self.pilots
            .slot(hash(self.pilots.seed, name.as_bytes()), self.slots.len())
    }

    /// Whether slot `s` holds `name`: its tool's index if so.
    #[inline]
    fn confirm<'a>(&self, s: usize, name: &str, full: impl FnOnce(u32) -> &'a str) -> Option<u32> {
        let slot = self.slots.get(s)?;
        let b = name.as_bytes();
        if slot.len as usize != b.len() {
            return None;
        }
        let k = b.len().min(INLINE);
        if !same_head(&slot.head[..k], &b[..k]) {
            return None;
        }
        (b.len() <= INLINE || full(slot.tool).as_bytes()[INLINE..] == b[INLINE..])
            .then_some(slot.tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("mcp_srv{}_tool{i}", i % 97))
            .collect()
    }

    #[test]
    fn every_name_gets_its_own_slot_and_strangers_only_a_candidate() {
        for n in [0, 1, 2, 3, 64, 65, 1000, 20_000] {
            let v = names(n);
            let p = build(v.iter().map(String::as_str)).expect("distinct names");
            assert_eq!(p.pilots.len(), bucket_count(n));
            let h = NameHash::check(p, v.iter().map(String::as_str)).expect("perfect");
            let full = |i: u32| v[i as usize].as_str();
            for (i, name) in v.iter().enumerate() {
                assert_eq!(h.get(name, full), Some(i as u32), "{name}");
            }
            for stranger in ["not_a_tool", "mcp_srv1_tool1x", "mcp_srv1_tool", ""] {
                assert_eq!(h.get(stranger, full), None, "{stranger}");
            }
        }
    }

    #[test]
    fn many_at_once_answer_as_one_at_a_time() {
        let v = names(1000);
        let p = build(v.iter().map(String::as_str)).expect("distinct names");
        let h = NameHash::check(p, v.iter().map(String::as_str)).expect("perfect");
        let full = |i: u32| v[i as usize].as_str();
        // Known names, strangers and near misses mixed, across batch edges.
        let mut asked: Vec<String> = Vec::new();
        for (i, name) in v.iter().enumerate().step_by(7) {
            asked.push(name.clone());
            if i % 3 == 0 {
                asked.push(format!("{name}x"));
            }
        }
        asked.extend(["".to_string(), "not_a_tool".to_string()]);
        let mut out = Vec::new();
        h.get_many(&asked, &mut out, full);
        let one_by_one: Vec<Option<u32>> = asked.iter().map(|a| h.get(a, full)).collect();
        assert_eq!(out, one_by_one);
        assert_eq!(out.iter().filter(|o| o.is_some()).count(), 143);
        assert_eq!(out[0], Some(0));
        assert_eq!(out[1], None);
        let empty = NameHash::check(Pilots::default(), std::iter::empty()).expect("empty");
        let mut out = Vec::new();
        empty.get_many(&["a", "b"], &mut out, |_| "");
        assert_eq!(out, [None, None]);
    }

    #[test]
    fn long_names_are_compared_past_the_slot() {
        let head = "a_name_longer_than_twenty_four_bytes_";
        let v: Vec<String> = (0..300).map(|i| format!("{head}{i:03}")).collect();
        let p = build(v.iter().map(String::as_str)).expect("distinct");
        let h = NameHash::check(p, v.iter().map(String::as_str)).expect("perfect");
        let full = |i: u32| v[i as usize].as_str();
        for (i, name) in v.iter().enumerate() {
            assert_eq!(h.get(name, full), Some(i as u32));
        }
        // Same length and head, another tail: never taken for a tool.
        for i in 0..300 {
            assert_eq!(h.get(&format!("{head}x{:02}", i % 100), full), None);
        }
    }

    #[test]
    fn the_same_names_give_the_same_pilots() {
        let v = names(5000);
        let a = build(v.iter().map(String::as_str));
        let b = build(v.iter().map(String::as_str));
        assert_eq!(a, b);
    }

    #[test]
    fn duplicates_and_foreign_pilots_are_refused() {
        assert_eq!(build(["a", "b", "a"].iter().copied()), None);
        // The pilots of a, b, c place a and b in their own slots; a second a
        // lands on the first.
        let abc = build(["a", "b", "c"].iter().copied()).expect("distinct");
        assert_eq!(
            NameHash::check(abc, ["a", "b", "a"].iter().copied()).unwrap_err(),
            HashError::Duplicate(0, 2)
        );
        // Pilots of other names do not place these (two land in one slot).
        let other: Vec<String> = names(200);
        let mine: Vec<String> = (0..200).map(|i| format!("x{i}")).collect();
        let p = build(other.iter().map(String::as_str)).expect("distinct");
        assert_eq!(
            NameHash::check(p, mine.iter().map(String::as_str)).unwrap_err(),
            HashError::NotPerfect
        );
        assert_eq!(
            NameHash::check(Pilots::default(), ["a"].iter().copied()).unwrap_err(),
            HashError::NotPerfect
        );
    }

    #[test]
    fn the_hash_is_the_documented_function() {
        // Pinned: a change here changes every table (bump the format version).
        let fold = |a: u64, b: u64| {
            let p = u128::from(a) * u128::from(b);
            (p as u64) ^ ((p >> 64) as u64)
        };
        let fin =
            |seed: u64, a: u64, c: u64, len: u64| fold(fold(a ^ K ^ seed, c ^ K2 ^ len) ^ len, K);
        assert_eq!(hash(0, b""), fin(0, 0, 0, 0));
        assert_eq!(hash(7, b"ab"), fin(7, (97 << 16) | (98 << 8) | 98, 0, 2));
        assert_eq!(hash(0, b"grep"), fin(0, 0x7065_7267, 0x7065_7267, 4));
        let w = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        let name = b"delete_record";
        assert_eq!(hash(0, name), fin(0, w(&name[..8]), w(&name[5..]), 13));
        let long = b"mcp_server_twelve_tool_number_00042"; // 35 bytes
        let seed = fold(w(&long[..8]) ^ K, w(&long[8..16]) ^ K2);
        let seed = fold(w(&long[16..24]) ^ K ^ seed, w(&long[24..32]) ^ K2);
        assert_eq!(
            hash(0, long),
            fin(seed, w(&long[19..27]), w(&long[27..]), 35)
        );
        assert_eq!(hash(0, b"delete_record"), 0x00df_aab4_06d0_d428);
        assert_ne!(hash(0, b"ab"), hash(0, b"ab\0"));
        assert_ne!(hash(0, b"a"), hash(K, b"a"));
    }

    #[test]
    fn heads_differ_at_every_byte() {
        for k in 0..=INLINE {
            let a: Vec<u8> = (0..k as u8).map(|i| b'a' + i).collect();
            assert!(same_head(&a, &a.clone()), "{k}");
            for i in 0..k {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same_head(&a, &b), "length {k}, byte {i}");
            }
        }
    }
}
