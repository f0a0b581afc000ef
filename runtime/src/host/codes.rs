//! Every number and name a host exposes, once. The C ABI's `TOOLGATE_*`
//! constants are checked against these at compile time, PHP's and Python's
//! tests check theirs against [`catalogue`](crate::host::catalogue) read from
//! the library they load.

use crate::context::Role;
use crate::decide::Decision;
use crate::format::LoadError;
use crate::reason::{Reason, GATE_ORDER};

// ------------------------------------------------------------------- roles

impl Role {
    /// The role's number at the C ABI (`TOOLGATE_ROLE_*`).
    pub const fn number(self) -> i32 {
        match self {
            Role::None => 0,
            Role::User => 1,
            Role::Admin => 2,
        }
    }

    /// The role of a number; anything else is `None` (an argument error,
    /// never a guess).
    pub fn from_number(n: i32) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.number() == n)
    }

    /// The role of its name (`admin`, `user`, `none`, exactly).
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

// ---------------------------------------------------------------- statuses

/// The status of a host call: 0 is success, anything else an error, never
/// an allow. Numbers are the C ABI's `TOOLGATE_OK` / `TOOLGATE_ERR_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Status {
    Ok = 0,
    /// A required pointer was NULL (or a NULL string had a non-zero length).
    Null = 1,
    /// A string argument was not valid UTF-8 (or, in Python, not encodable).
    Utf8 = 2,
    /// An argument out of its domain: a role, a live tool, a length, JSON.
    Argument = 3,
    UnknownConfiguration = 4,
    UnknownSkill = 5,
    /// A tool id not below the table's tool count.
    OutOfRange = 6,
    /// A name that is not registered, where a registered one is required.
    NotFound = 7,
    /// A consumer name the policy does not know
    /// ([`crate::Table::check_consumer`]).
    UnknownConsumer = 8,
    LoadNotATable = 10,
    LoadVersion = 11,
    LoadTruncated = 12,
    LoadTrailingBytes = 13,
    LoadChecksum = 14,
    LoadCorrupt = 15,
    LoadUnsigned = 16,
    LoadUntrustedKey = 17,
    LoadBadSignature = 18,
    /// The trusted keys are not Ed25519 public keys in PEM.
    Keys = 19,
    /// A file could not be opened or read.
    FileIo = 20,
    /// A path names something other than a regular file (a directory, a
    /// FIFO, a device, a socket).
    FileNotRegular = 21,
    /// A file larger than [`crate::host::MAX_FILE_BYTES`].
    FileTooLarge = 22,
    /// A Rust panic caught at a host boundary (a bug; the call had no effect).
    Panic = 99,
}

impl Status {
    pub const ALL: [Status; 23] = [
        Status::Ok,
        Status::Null,
        Status::Utf8,
        Status::Argument,
        Status::UnknownConfiguration,
        Status::UnknownSkill,
        Status::OutOfRange,
        Status::NotFound,
        Status::UnknownConsumer,
        Status::LoadNotATable,
        Status::LoadVersion,
        Status::LoadTruncated,
        Status::LoadTrailingBytes,
        Status::LoadChecksum,
        Status::LoadCorrupt,
        Status::LoadUnsigned,
        Status::LoadUntrustedKey,
        Status::LoadBadSignature,
        Status::Keys,
        Status::FileIo,
        Status::FileNotRegular,
        Status::FileTooLarge,
        Status::Panic,
    ];

    pub const fn number(self) -> i32 {
        self as i32
    }

    /// The name after `TOOLGATE_` in C (`ERR_LOAD_CHECKSUM`).
    pub fn c_name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Null => "ERR_NULL",
            Status::Utf8 => "ERR_UTF8",
            Status::Argument => "ERR_ARGUMENT",
            Status::UnknownConfiguration => "ERR_UNKNOWN_CONFIGURATION",
            Status::UnknownSkill => "ERR_UNKNOWN_SKILL",
            Status::OutOfRange => "ERR_OUT_OF_RANGE",
            Status::NotFound => "ERR_NOT_FOUND",
            Status::UnknownConsumer => "ERR_UNKNOWN_CONSUMER",
            Status::LoadNotATable => "ERR_LOAD_NOT_A_TABLE",
            Status::LoadVersion => "ERR_LOAD_VERSION",
            Status::LoadTruncated => "ERR_LOAD_TRUNCATED",
            Status::LoadTrailingBytes => "ERR_LOAD_TRAILING_BYTES",
            Status::LoadChecksum => "ERR_LOAD_CHECKSUM",
            Status::LoadCorrupt => "ERR_LOAD_CORRUPT",
            Status::LoadUnsigned => "ERR_LOAD_UNSIGNED",
            Status::LoadUntrustedKey => "ERR_LOAD_UNTRUSTED_KEY",
            Status::LoadBadSignature => "ERR_LOAD_BAD_SIGNATURE",
            Status::Keys => "ERR_KEYS",
            Status::FileIo => "ERR_FILE_IO",
            Status::FileNotRegular => "ERR_FILE_NOT_REGULAR",
            Status::FileTooLarge => "ERR_FILE_TOO_LARGE",
            Status::Panic => "ERR_PANIC",
        }
    }

    /// The camelCase code of a load or file error, as the conformance
    /// corpus, Python's `LoadError.code` and PHP's `LoadException::code()`
    /// name it; `None` for the other statuses.
    pub fn load_code(self) -> Option<&'static str> {
        Some(match self {
            Status::LoadNotATable => "notATable",
            Status::LoadVersion => "version",
            Status::LoadTruncated => "truncated",
            Status::LoadTrailingBytes => "trailingBytes",
            Status::LoadChecksum => "checksum",
            Status::LoadCorrupt => "corrupt",
            Status::LoadUnsigned => "unsigned",
            Status::LoadUntrustedKey => "untrustedKey",
            Status::LoadBadSignature => "badSignature",
            Status::FileIo => "io",
            Status::FileNotRegular => "notAFile",
            Status::FileTooLarge => "tooLarge",
            _ => return None,
        })
    }

    /// Whether the status is a table-load or file error (a host's load exception).
    pub fn is_load(self) -> bool {
        self.load_code().is_some()
    }
}

impl LoadError {
    /// The host status of a load error.
    pub fn status(&self) -> Status {
        match self {
            LoadError::NotATable => Status::LoadNotATable,
            LoadError::Version { .. } => Status::LoadVersion,
            LoadError::Truncated { .. } => Status::LoadTruncated,
            LoadError::TrailingBytes { .. } => Status::LoadTrailingBytes,
            LoadError::Checksum { .. } => Status::LoadChecksum,
            // An edited payload whose CRC was fixed up: hosts see a checksum error.
            LoadError::Digest => Status::LoadChecksum,
            LoadError::Corrupt(_) => Status::LoadCorrupt,
            LoadError::Unsigned => Status::LoadUnsigned,
            LoadError::UntrustedKey { .. } => Status::LoadUntrustedKey,
            LoadError::BadSignature { .. } => Status::LoadBadSignature,
        }
    }
}

// ------------------------------------------------------ the packed decision

/// One decision in one byte, as the C ABI's `toolgate_decide_packed` and
/// `toolgate_decide_many_packed` give it: bit 0 allowed, bit 1 observed
/// only, bits 2 to 4 the reason number ([`Reason::number`], 0 = none), bit
/// 5 needs approval (offered, and a person approves each call).
pub mod packed {
    use super::*;

    pub const ALLOWED: u8 = 1;
    pub const OBSERVED_ONLY: u8 = 1 << 1;
    pub const REASON_SHIFT: u32 = 2;
    pub const REASON_BITS: u32 = 3;
    pub const REASON_MASK: u8 = ((1 << REASON_BITS) - 1) << REASON_SHIFT;
    pub const NEEDS_APPROVAL: u8 = 1 << 5;
    const _: () = assert!(NEEDS_APPROVAL & (ALLOWED | OBSERVED_ONLY | REASON_MASK) == 0);

    // Every reason number (1 to the number of gates) and 0 fit in the
    // reason bits, and the byte holds them: a new gate past the seventh
    // stops the build here.
    const _: () = assert!(GATE_ORDER.len() < (1 << REASON_BITS));
    const _: () = assert!(REASON_SHIFT + REASON_BITS <= 8);

    /// The byte of `(allowed, observed_only, reason number)`.
    #[inline]
    pub const fn pack(allowed: bool, observed_only: bool, reason: u8) -> u8 {
        allowed as u8 | (observed_only as u8) << 1 | reason << REASON_SHIFT
    }

    /// The byte of a decision.
    #[inline]
    pub fn of(d: &Decision<'_>) -> u8 {
        pack(
            d.allowed,
            d.observed_only,
            d.reason.map_or(0, Reason::number),
        ) | if d.needs_approval { NEEDS_APPROVAL } else { 0 }
    }

    /// `(allowed, observed_only, reason)` of a byte; `None` for a byte no
    /// decision packs to (a reason number past the gates, a bit no
    /// decision sets). Whether it needs approval: `b & NEEDS_APPROVAL`.
    pub fn unpack(b: u8) -> Option<(bool, bool, Option<Reason>)> {
        if b & !(ALLOWED | OBSERVED_ONLY | REASON_MASK | NEEDS_APPROVAL) != 0 {
            return None;
        }
        let n = (b & REASON_MASK) >> REASON_SHIFT;
        let reason = match n {
            0 => None,
            n => Some(Reason::from_number(n)?),
        };
        Some((b & ALLOWED != 0, b & OBSERVED_ONLY != 0, reason))
    }
}

// ------------------------------------------------------- load error codes

/// The stable code a host reports for a load error: the conformance corpus'
/// `error` field, Python's `LoadError.code` and PHP's exceptions use these
/// names.
impl crate::LoadError {
    /// The error's code, in camelCase, as hosts and the conformance corpus name it.
    pub fn code(&self) -> &'static str {
        // Every load error's status has a load code (`Status::load_code`).
        self.status().load_code().unwrap_or("corrupt")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_and_role_has_one_number() {
        let mut seen = std::collections::HashSet::new();
        for s in Status::ALL {
            assert!(seen.insert(s.number()), "{s:?}");
        }
        for r in Role::ALL {
            assert_eq!(Role::from_number(r.number()), Some(r));
            assert_eq!(Role::from_name(r.as_str()), Some(r));
        }
        assert_eq!(Role::from_number(3), None);
        assert_eq!(Role::from_name("Admin"), None);
    }

    #[test]
    fn the_packed_byte_round_trips_every_decision_shape() {
        for r in GATE_ORDER {
            let b = packed::pack(false, false, r.number());
            assert_eq!(packed::unpack(b), Some((false, false, Some(r))));
        }
        let observed = packed::pack(true, true, Reason::TrustZone.number());
        assert_eq!(observed, 0b11111);
        assert_eq!(
            packed::unpack(observed),
            Some((true, true, Some(Reason::TrustZone)))
        );
        assert_eq!(packed::unpack(1), Some((true, false, None)));
    }
}
