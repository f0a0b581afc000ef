//! Approval grants (docs/approvals.md, "Grants"): a person's approval of
//! one call, bound to exactly what was asked: the tool, the SHA-256 of its
//! arguments' canonical JSON, the configuration, the consumer, the role and
//! the table that asked; plus who approved, an id and an expiry, signed
//! with Ed25519 (the keys `toolgate keygen` makes). The runtime only
//! verifies (`Context::check_grant`, feature `signature`); signing lives with the minter
//! (`toolgate_compiler::signing::sign_grant`), so a host that checks grants
//! never links a signing key's code. Single use is the enforcement point's:
//! it keeps the ids of the grants it accepted until they expire.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::Context;

/// Prefixed to a grant's canonical JSON to form the signed message, so a
/// signature made for anything else (a table) never verifies as a grant's.
pub const GRANT_CONTEXT: &[u8] = b"toolgate approval grant v1\0";

/// The largest signed grant read.
pub const MAX_GRANT_BYTES: usize = 16 << 10;

/// What a person is asked to approve: this call, under this table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalRequest {
    pub tool: String,
    /// `sha256:` and the hex SHA-256 of the arguments' canonical JSON
    /// ([`arguments_digest`]).
    pub arguments_digest: String,
    pub configuration: String,
    pub consumer: Option<String>,
    pub role: String,
    /// The hex digest of the table that asked.
    pub table_digest: String,
    /// The id the enforcement point gave the question.
    pub request_id: String,
}

/// A person's approval of one [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    pub request: ApprovalRequest,
    /// Who approved (an authenticated identity's name).
    pub approver: String,
    /// Unique per grant: what single use is kept by.
    pub grant_id: String,
    /// Unix seconds after which the grant is refused.
    pub expires_at: u64,
}

/// A grant with its signature: `{"grant": ..., "publicKey": HEX64,
/// "signature": HEX128}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignedGrant {
    pub grant: Grant,
    pub public_key: String,
    pub signature: String,
}

/// Why a grant does not let a call run: each its own code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantError {
    Malformed(String),
    UntrustedKey(String),
    BadSignature,
    Expired {
        expired_at: u64,
        now: u64,
    },
    OtherCall {
        /// `tool`, `arguments`, `configuration`, `consumer` or `role`.
        field: &'static str,
        granted: String,
        asked: String,
    },
    OtherTable {
        granted: String,
        current: String,
    },
    /// The table refuses the tool: no approval makes a refused tool run.
    Refused {
        tool: String,
    },
    /// Used already: a grant lets one call run.
    Replayed {
        grant_id: String,
    },
    /// The ledger of used grants is full: refused until some expire.
    LedgerFull,
}

impl std::fmt::Display for GrantError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantError::Malformed(m) => write!(f, "the grant is not a signed grant: {m}"),
            GrantError::UntrustedKey(k) => {
                write!(f, "the grant is signed by key {k}, which is not trusted to approve")
            }
            GrantError::BadSignature => f.write_str(
                "the grant's signature does not verify: it was altered after it was signed",
            ),
            GrantError::Expired { expired_at, now } => {
                write!(f, "the grant expired at {expired_at} (now {now})")
            }
            GrantError::OtherCall {
                field,
                granted,
                asked,
            } => write!(
                f,
                "the grant approves {field} `{granted}`, not this call's `{asked}`"
            ),
            GrantError::Refused { tool } => write!(
                f,
                "the policy refuses `{tool}` here: a grant approves only a tool that is offered"
            ),
            GrantError::Replayed { grant_id } => write!(
                f,
                "grant {grant_id} was already used: a grant lets one call run"
            ),
            GrantError::LedgerFull => write!(
                f,
                "{} used grants are remembered already: refused until some expire",
                GrantLedger::MAX
            ),
            GrantError::OtherTable { granted, current } => write!(
                f,
                "the grant was given under table {granted}, and table {current} decides now: approve again"
            ),
        }
    }
}

impl std::error::Error for GrantError {}

impl GrantError {
    /// The stable code (a refusal's `detail` names it).
    pub fn code(&self) -> &'static str {
        match self {
            GrantError::Malformed(_) => "grantMalformed",
            GrantError::UntrustedKey(_) => "grantUntrustedKey",
            GrantError::BadSignature => "grantBadSignature",
            GrantError::Expired { .. } => "grantExpired",
            GrantError::OtherCall {
                field: "arguments", ..
            } => "grantOtherArguments",
            GrantError::OtherCall {
                field: "consumer", ..
            } => "grantOtherConsumer",
            GrantError::OtherCall { .. } => "grantOtherCall",
            GrantError::OtherTable { .. } => "grantOtherTable",
            GrantError::Refused { .. } => "grantRefusedTool",
            GrantError::Replayed { .. } => "grantReplayed",
            GrantError::LedgerFull => "approvalsFull",
        }
    }
}

/// `sha256:` and the hex SHA-256 of the canonical JSON of a call's
/// arguments (absent arguments are `{}`): the one digest a grant binds.
pub fn arguments_digest(arguments: Option<&Value>) -> String {
    let mut text = String::new();
    let empty = Value::Object(Default::default());
    crate::mcp::canonical_json(arguments.unwrap_or(&empty), &mut text);
    format!("sha256:{}", crate::format::sha256_hex(text.as_bytes()))
}

/// The message a grant's signature signs: [`GRANT_CONTEXT`] and the
/// canonical JSON of the grant.
pub fn grant_message(grant: &Grant) -> Vec<u8> {
    let mut text = String::new();
    let v = serde_json::to_value(grant).unwrap_or(Value::Null);
    crate::mcp::canonical_json(&v, &mut text);
    let mut m = GRANT_CONTEXT.to_vec();
    m.extend_from_slice(text.as_bytes());
    m
}

impl SignedGrant {
    /// Read a signed grant from its JSON, strictly (at most
    /// [`MAX_GRANT_BYTES`], no unknown member, a key of 32 bytes and a
    /// signature of 64 in hex).
    pub fn from_json(text: &[u8]) -> Result<SignedGrant, GrantError> {
        if text.len() > MAX_GRANT_BYTES {
            return Err(GrantError::Malformed(format!(
                "longer than {MAX_GRANT_BYTES} bytes"
            )));
        }
        let g: SignedGrant =
            serde_json::from_slice(text).map_err(|e| GrantError::Malformed(e.to_string()))?;
        hex_bytes::<32>(&g.public_key)?;
        hex_bytes::<64>(&g.signature)?;
        Ok(g)
    }

    /// The signing key's id (`ed25519:` and 16 hex digits), as tables' are named.
    pub fn key_id(&self) -> String {
        hex_bytes::<32>(&self.public_key)
            .map(|k| crate::format::key_id(&k))
            .unwrap_or_else(|_| "unreadable".into())
    }
}

fn hex_bytes<const N: usize>(text: &str) -> Result<[u8; N], GrantError> {
    let bad = || GrantError::Malformed(format!("not {} hex digits: {text:.20}", 2 * N));
    if text.len() != 2 * N || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// A call that may not run: its decision and its refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRefused<'n> {
    pub decision: crate::decide::Decision<'n>,
    pub refusal: crate::Refusal,
}

/// The ids of grants that let a call run, each kept until its grant
/// expires: single use, at most [`GrantLedger::MAX`] at once (full is
/// refused, never let through).
#[derive(Debug, Default)]
pub struct GrantLedger {
    // A B-tree, not a hash table: the process's ledger lives in a static
    // until exit, and a hash table's pointer points inside its allocation,
    // which leak checkers (valgrind, over the C ABI) report as possibly
    // lost; a B-tree's nodes are reachable from their start.
    used: Mutex<BTreeMap<String, u64>>,
}

impl GrantLedger {
    /// Used grants remembered at once.
    pub const MAX: usize = 65_536;

    /// Spend `grant` at `now`: `Ok` the first time, refused after.
    pub fn spend(&self, grant: &Grant, now: u64) -> Result<(), GrantError> {
        // A panic elsewhere while holding it leaves a map that is still a map.
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, expires| *expires >= now);
        if used.contains_key(&grant.grant_id) {
            return Err(GrantError::Replayed {
                grant_id: crate::names::shown(&grant.grant_id).into_owned(),
            });
        }
        if used.len() >= Self::MAX {
            return Err(GrantError::LedgerFull);
        }
        used.insert(grant.grant_id.clone(), grant.expires_at);
        Ok(())
    }

    /// This process's ledger: what every host and edge in it spends grants in.
    pub fn process() -> &'static GrantLedger {
        static LEDGER: OnceLock<GrantLedger> = OnceLock::new();
        LEDGER.get_or_init(GrantLedger::default)
    }
}

impl<'t> Context<'t> {
    /// The question a person is asked for a call of `tool` with
    /// `arguments` in this context, under the id `request_id`.
    pub fn approval_request(
        &self,
        tool: &str,
        arguments: Option<&Value>,
        request_id: &str,
    ) -> ApprovalRequest {
        ApprovalRequest {
            tool: tool.to_string(),
            arguments_digest: arguments_digest(arguments),
            configuration: self.configuration_name().to_string(),
            consumer: self.consumer_name().map(str::to_string),
            role: self.user_role().as_str().to_string(),
            table_digest: self.table().digest_hex(),
            request_id: request_id.to_string(),
        }
    }
}

#[cfg(feature = "signature")]
impl Context<'_> {
    /// Whether `grant` approves this call of `d.tool` with `arguments`, now
    /// (Unix seconds `now`): signed by a trusted key, unexpired, and bound
    /// to this very tool, arguments, configuration, consumer, role and
    /// table. A table swapped since the approval voids it: the person
    /// approved under the old policy. Single use is the caller's to keep.
    pub fn check_grant(
        &self,
        d: &crate::decide::Decision<'_>,
        arguments: Option<&Value>,
        grant: &SignedGrant,
        keys: &crate::signature::TrustedKeys,
        now: u64,
    ) -> Result<(), GrantError> {
        use ed25519_dalek::{Signature, VerifyingKey};
        if !d.allowed {
            return Err(GrantError::Refused {
                tool: crate::names::shown(d.tool).into_owned(),
            });
        }
        let public = hex_bytes::<32>(&grant.public_key)?;
        let signature = hex_bytes::<64>(&grant.signature)?;
        if !keys.contains(&public) {
            return Err(GrantError::UntrustedKey(crate::format::key_id(&public)));
        }
        let key = VerifyingKey::from_bytes(&public).map_err(|_| GrantError::BadSignature)?;
        key.verify_strict(
            &grant_message(&grant.grant),
            &Signature::from_bytes(&signature),
        )
        .map_err(|_| GrantError::BadSignature)?;
        let g = &grant.grant;
        if now > g.expires_at {
            return Err(GrantError::Expired {
                expired_at: g.expires_at,
                now,
            });
        }
        let asked = self.approval_request(d.tool, arguments, &g.request.request_id);
        let r = &g.request;
        let other = |field: &'static str, granted: &str, asked: &str| GrantError::OtherCall {
            field,
            granted: crate::names::shown(granted).into_owned(),
            asked: crate::names::shown(asked).into_owned(),
        };
        if r.table_digest != asked.table_digest {
            return Err(GrantError::OtherTable {
                granted: r.table_digest.clone(),
                current: asked.table_digest,
            });
        }
        let pairs = [
            ("tool", &r.tool, &asked.tool),
            ("arguments", &r.arguments_digest, &asked.arguments_digest),
            ("configuration", &r.configuration, &asked.configuration),
            ("role", &r.role, &asked.role),
        ];
        for (field, granted, now_asked) in pairs {
            if granted != now_asked {
                return Err(other(field, granted, now_asked));
            }
        }
        if r.consumer != asked.consumer {
            return Err(other(
                "consumer",
                r.consumer.as_deref().unwrap_or("(none)"),
                asked.consumer.as_deref().unwrap_or("(none)"),
            ));
        }
        Ok(())
    }
}

#[cfg(feature = "signature")]
impl<'t> Context<'t> {
    /// Whether a call of `tool` with `arguments` may run, given the signed
    /// grant `grant` (JSON) when the tool needs approval: the decision, or
    /// the refusal. A refused tool is refused as always; a tool that needs
    /// approval runs only with a grant [`Context::check_grant`] accepts
    /// (trusted `keys`, `now` in Unix seconds), spent in the process's
    /// [`GrantLedger`]; otherwise `approvalRequired`, its `grantError`
    /// naming why a grant given did not let it run. The one check every
    /// host's `check_call` with a grant makes.
    pub fn check_call_granted<'n>(
        &self,
        tool: &'n str,
        arguments: Option<&Value>,
        grant: Option<&[u8]>,
        keys: Option<&crate::signature::TrustedKeys>,
        now: u64,
    ) -> Result<crate::decide::Decision<'n>, Box<CallRefused<'n>>>
    where
        't: 'n,
    {
        self.check_call_granted_in(GrantLedger::process(), tool, arguments, grant, keys, now)
    }

    /// [`Context::check_call_granted`], spending in `ledger` instead of the
    /// process's: for an enforcement point that keeps its own, and for a
    /// test that replays the same grants more than once in one process
    /// (tests/conformance.rs generates and then replays the corpus).
    pub fn check_call_granted_in<'n>(
        &self,
        ledger: &GrantLedger,
        tool: &'n str,
        arguments: Option<&Value>,
        grant: Option<&[u8]>,
        keys: Option<&crate::signature::TrustedKeys>,
        now: u64,
    ) -> Result<crate::decide::Decision<'n>, Box<CallRefused<'n>>>
    where
        't: 'n,
    {
        let d = self.decide(tool);
        let refused = |e: Option<GrantError>| {
            let mut r = self.call_refusal(&d)?;
            if let Some(e) = e {
                r.grant_error = Some(e.code().to_string());
                r.detail = Some(e.to_string());
            }
            Some(r)
        };
        if !d.allowed || !d.needs_approval {
            return match refused(None) {
                Some(refusal) => Err(Box::new(CallRefused {
                    decision: d,
                    refusal,
                })),
                None => Ok(d),
            };
        }
        let checked = match (grant, keys) {
            (None, _) => Err(None),
            (Some(_), None) => Err(Some(GrantError::UntrustedKey(
                "(no approver keys given)".into(),
            ))),
            (Some(text), Some(keys)) => SignedGrant::from_json(text)
                .and_then(|g| {
                    self.check_grant(&d, arguments, &g, keys, now)?;
                    ledger.spend(&g.grant, now)
                })
                .map_err(Some),
        };
        match checked {
            Ok(()) => Ok(d),
            // An offered tool always has its call refusal; never let
            // through for want of one.
            Err(e) => Err(Box::new(CallRefused {
                decision: d,
                refusal: refused(e).unwrap_or_else(|| {
                    crate::Refusal::new(crate::RefusalKind::ApprovalRequired, Default::default())
                }),
            })),
        }
    }
}
