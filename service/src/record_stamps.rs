//! What a decision record is stamped with: a unique id and its time (RFC 3339),
//! small enough to need no dependency.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Random-looking, unique identifiers in the text form of a UUID (version 4
/// bits set): SipHash, keyed from the operating system's randomness once per
/// generator, of a counter. Unique within a generator (distinct inputs), and
/// unpredictable across processes (the keys are random).
pub struct IdGen {
    keys: RandomState,
    counter: AtomicU64,
}

impl Default for IdGen {
    fn default() -> Self {
        IdGen {
            keys: RandomState::new(),
            counter: AtomicU64::new(0),
        }
    }
}

impl IdGen {
    pub fn next_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let half = |salt: u8| {
            let mut h = self.keys.build_hasher();
            h.write_u64(n);
            h.write_u8(salt);
            h.finish()
        };
        let (hi, lo) = (half(0), half(1));
        // Version 4, variant 10xx.
        let hi = (hi & !0xF000) | 0x4000;
        let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `t` in RFC 3339, UTC, with nanoseconds: `2026-11-30T19:08:52.123456789Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_nanos()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc_with_nanoseconds() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000000Z");
        let t = UNIX_EPOCH + Duration::new(951_782_400 + 86_399, 5);
        assert_eq!(rfc3339(t), "2000-02-29T23:59:59.000000005Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_065_732);
        assert_eq!(rfc3339(t), "2026-11-30T19:08:52.000000000Z");
    }

    #[test]
    fn ids_are_uuid_v4_shaped_and_distinct() {
        let g = IdGen::default();
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| g.next_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(100) {
            let b = id.as_bytes();
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!((b[8], b[13], b[18], b[23]), (b'-', b'-', b'-', b'-'));
            assert_eq!(b[14], b'4', "{id}");
            assert!(matches!(b[19], b'8' | b'9' | b'a' | b'b'), "{id}");
        }
    }
}
