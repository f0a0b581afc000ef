//! The C ABI's numbers. They are the runtime's ([`toolgate_runtime::host::codes`]),
//! written as literals because the header is generated from this file;
//! the assertions below stop the build when one drifts from the runtime.

use toolgate_runtime::host::codes::{packed, Status};
use toolgate_runtime::{Decision, Reason, Role};

/// The version of this ABI; bumped on any incompatible change.
pub const TOOLGATE_ABI_VERSION: u32 = 2;

/// Success.
pub const TOOLGATE_OK: i32 = 0;
/// A required pointer was NULL (or a NULL string had a non-zero length).
pub const TOOLGATE_ERR_NULL: i32 = 1;
/// A string argument was not valid UTF-8.
pub const TOOLGATE_ERR_UTF8: i32 = 2;
/// An argument was out of its domain (a role code, a malformed live-tool or
/// skills JSON, a live tool's name that breaks the naming rule, an HTTP
/// status, a length larger than any buffer).
pub const TOOLGATE_ERR_ARGUMENT: i32 = 3;
/// The configuration is not in the table.
pub const TOOLGATE_ERR_UNKNOWN_CONFIGURATION: i32 = 4;
/// A skill named at run start is not in the table.
pub const TOOLGATE_ERR_UNKNOWN_SKILL: i32 = 5;
/// A tool id is not below the table's tool count.
pub const TOOLGATE_ERR_OUT_OF_RANGE: i32 = 6;
/// A tool name is not registered (`toolgate_table_tool_id` only: a decision
/// for an unknown name is a `notRegistered` refusal, not an error).
pub const TOOLGATE_ERR_NOT_FOUND: i32 = 7;
/// A consumer name the policy does not know (not bound by a `consumer`
/// block, and the policy does not say `unknown-consumers admitted`; or a slip
/// for a bound one). Never a consumer without a profile.
pub const TOOLGATE_ERR_UNKNOWN_CONSUMER: i32 = 8;
/// Table load: not a toolgate table (bad magic bytes).
pub const TOOLGATE_ERR_LOAD_NOT_A_TABLE: i32 = 10;
/// Table load: another format version.
pub const TOOLGATE_ERR_LOAD_VERSION: i32 = 11;
/// Table load: shorter than its header says.
pub const TOOLGATE_ERR_LOAD_TRUNCATED: i32 = 12;
/// Table load: bytes after its end.
pub const TOOLGATE_ERR_LOAD_TRAILING_BYTES: i32 = 13;
/// Table load: checksum mismatch (damaged or altered).
pub const TOOLGATE_ERR_LOAD_CHECKSUM: i32 = 14;
/// Table load: checksum fine, content not a valid table.
pub const TOOLGATE_ERR_LOAD_CORRUPT: i32 = 15;
/// Table load with a required signature: the table is not signed.
pub const TOOLGATE_ERR_LOAD_UNSIGNED: i32 = 16;
/// Table load with a required signature: signed by a key not trusted.
pub const TOOLGATE_ERR_LOAD_UNTRUSTED_KEY: i32 = 17;
/// Table load with a required signature: the signature does not verify
/// (the table was altered after signing).
pub const TOOLGATE_ERR_LOAD_BAD_SIGNATURE: i32 = 18;
/// The trusted public keys are not Ed25519 public keys in PEM.
pub const TOOLGATE_ERR_KEYS: i32 = 19;
/// A file could not be opened or read (`toolgate_*_file`).
pub const TOOLGATE_ERR_FILE_IO: i32 = 20;
/// A path names a directory, a FIFO, a device or a socket, not a regular
/// file (refused before it is opened: it never blocks).
pub const TOOLGATE_ERR_FILE_NOT_REGULAR: i32 = 21;
/// A file larger than `TOOLGATE_MAX_FILE_BYTES`.
pub const TOOLGATE_ERR_FILE_TOO_LARGE: i32 = 22;
/// A Rust panic was caught at the boundary (a bug; the call had no effect).
pub const TOOLGATE_ERR_PANIC: i32 = 99;

/// The largest file `toolgate_*_file` reads: 256 MiB.
pub const TOOLGATE_MAX_FILE_BYTES: u64 = 268435456;

/// Roles (`toolgate_context_new`). No user counts as not admin.
pub const TOOLGATE_ROLE_NONE: i32 = 0;
pub const TOOLGATE_ROLE_USER: i32 = 1;
pub const TOOLGATE_ROLE_ADMIN: i32 = 2;

/// Reason codes of `toolgate_decision.reason`: 0 = none, else the gate, in
/// gate order (docs/conformance.md).
pub const TOOLGATE_REASON_NONE: u8 = 0;
pub const TOOLGATE_REASON_NOT_REGISTERED: u8 = 1;
pub const TOOLGATE_REASON_TOOL_DISABLED: u8 = 2;
pub const TOOLGATE_REASON_REQUIRES_ADMIN: u8 = 3;
pub const TOOLGATE_REASON_NOT_IN_PROFILE: u8 = 4;
pub const TOOLGATE_REASON_CONFIGURATION_GROUP: u8 = 5;
pub const TOOLGATE_REASON_CONFIGURATION_EXCLUDED: u8 = 6;
pub const TOOLGATE_REASON_TRUST_ZONE: u8 = 7;

/// The packed decision byte (`toolgate_decide_packed`,
/// `toolgate_decide_many_packed`): bit 0 allowed, bit 1 observed only,
/// bits 2 to 4 the `TOOLGATE_REASON_*` code, bit 5 needs approval.
/// `(b & MASK) >> SHIFT` is the reason.
pub const TOOLGATE_PACKED_ALLOWED: u8 = 1;
pub const TOOLGATE_PACKED_OBSERVED_ONLY: u8 = 2;
pub const TOOLGATE_PACKED_REASON_SHIFT: u8 = 2;
pub const TOOLGATE_PACKED_REASON_MASK: u8 = 28;
pub const TOOLGATE_PACKED_NEEDS_APPROVAL: u8 = 32;

// Every literal above is the runtime's number: a drift stops the build.
const _: () = {
    assert!(TOOLGATE_OK == Status::Ok.number());
    assert!(TOOLGATE_ERR_NULL == Status::Null.number());
    assert!(TOOLGATE_ERR_UTF8 == Status::Utf8.number());
    assert!(TOOLGATE_ERR_ARGUMENT == Status::Argument.number());
    assert!(TOOLGATE_ERR_UNKNOWN_CONFIGURATION == Status::UnknownConfiguration.number());
    assert!(TOOLGATE_ERR_UNKNOWN_SKILL == Status::UnknownSkill.number());
    assert!(TOOLGATE_ERR_OUT_OF_RANGE == Status::OutOfRange.number());
    assert!(TOOLGATE_ERR_NOT_FOUND == Status::NotFound.number());
    assert!(TOOLGATE_ERR_UNKNOWN_CONSUMER == Status::UnknownConsumer.number());
    assert!(TOOLGATE_ERR_LOAD_NOT_A_TABLE == Status::LoadNotATable.number());
    assert!(TOOLGATE_ERR_LOAD_VERSION == Status::LoadVersion.number());
    assert!(TOOLGATE_ERR_LOAD_TRUNCATED == Status::LoadTruncated.number());
    assert!(TOOLGATE_ERR_LOAD_TRAILING_BYTES == Status::LoadTrailingBytes.number());
    assert!(TOOLGATE_ERR_LOAD_CHECKSUM == Status::LoadChecksum.number());
    assert!(TOOLGATE_ERR_LOAD_CORRUPT == Status::LoadCorrupt.number());
    assert!(TOOLGATE_ERR_LOAD_UNSIGNED == Status::LoadUnsigned.number());
    assert!(TOOLGATE_ERR_LOAD_UNTRUSTED_KEY == Status::LoadUntrustedKey.number());
    assert!(TOOLGATE_ERR_LOAD_BAD_SIGNATURE == Status::LoadBadSignature.number());
    assert!(TOOLGATE_ERR_KEYS == Status::Keys.number());
    assert!(TOOLGATE_ERR_FILE_IO == Status::FileIo.number());
    assert!(TOOLGATE_ERR_FILE_NOT_REGULAR == Status::FileNotRegular.number());
    assert!(TOOLGATE_ERR_FILE_TOO_LARGE == Status::FileTooLarge.number());
    assert!(TOOLGATE_ERR_PANIC == Status::Panic.number());
    assert!(TOOLGATE_MAX_FILE_BYTES == toolgate_runtime::host::MAX_FILE_BYTES);
    assert!(TOOLGATE_ROLE_NONE == Role::None.number());
    assert!(TOOLGATE_ROLE_USER == Role::User.number());
    assert!(TOOLGATE_ROLE_ADMIN == Role::Admin.number());
    assert!(TOOLGATE_REASON_NOT_REGISTERED == Reason::NotRegistered.number());
    assert!(TOOLGATE_REASON_TOOL_DISABLED == Reason::ToolDisabled.number());
    assert!(TOOLGATE_REASON_REQUIRES_ADMIN == Reason::RequiresAdmin.number());
    assert!(TOOLGATE_REASON_NOT_IN_PROFILE == Reason::NotInProfile.number());
    assert!(TOOLGATE_REASON_CONFIGURATION_GROUP == Reason::ConfigurationGroup.number());
    assert!(TOOLGATE_REASON_CONFIGURATION_EXCLUDED == Reason::ConfigurationExcluded.number());
    assert!(TOOLGATE_REASON_TRUST_ZONE == Reason::TrustZone.number());
    // The last reason constant is the last gate: a new gate without its
    // constant stops the build here.
    assert!(TOOLGATE_REASON_TRUST_ZONE as usize == toolgate_runtime::GATE_ORDER.len());
    assert!(TOOLGATE_PACKED_ALLOWED == packed::ALLOWED);
    assert!(TOOLGATE_PACKED_OBSERVED_ONLY == packed::OBSERVED_ONLY);
    assert!(TOOLGATE_PACKED_REASON_SHIFT as u32 == packed::REASON_SHIFT);
    assert!(
        TOOLGATE_PACKED_REASON_MASK as u32
            == ((1u32 << packed::REASON_BITS) - 1) << packed::REASON_SHIFT
    );
    assert!(TOOLGATE_PACKED_NEEDS_APPROVAL == packed::NEEDS_APPROVAL);
};

/// One decision. `allowed`, `observed_only` and `needs_approval` are 0 or
/// 1; `reason` is a `TOOLGATE_REASON_*` code (`TOOLGATE_REASON_TRUST_ZONE`
/// with `allowed` = 1 and `observed_only` = 1: offered because the trust
/// zone is observed). `needs_approval` = 1 (with `allowed` = 1): offered,
/// and a person approves each call, so a call may not run without that
/// (`toolgate_call_refusal_json` gives its `approvalRequired` refusal;
/// `toolgate_check_call_granted` lets it run with a person's grant).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct toolgate_decision {
    pub allowed: u8,
    pub observed_only: u8,
    pub reason: u8,
    pub needs_approval: u8,
}

pub(crate) const REFUSED: toolgate_decision = toolgate_decision {
    allowed: 0,
    observed_only: 0,
    reason: TOOLGATE_REASON_NONE,
    needs_approval: 0,
};

pub(crate) fn decision_of(d: &Decision<'_>) -> toolgate_decision {
    toolgate_decision {
        allowed: d.allowed as u8,
        observed_only: d.observed_only as u8,
        reason: d.reason.map_or(TOOLGATE_REASON_NONE, Reason::number),
        needs_approval: d.needs_approval as u8,
    }
}

/// The ABI version of the library (`TOOLGATE_ABI_VERSION` it was built with).
#[no_mangle]
pub extern "C" fn toolgate_abi_version() -> u32 {
    TOOLGATE_ABI_VERSION
}
