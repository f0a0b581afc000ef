//! The compiled table file: a fixed header, then the [`TableSpec`] in a
//! little-endian length-prefixed encoding. docs/table-format.md is the
//! reference. Loading fails closed: any doubt is a [`LoadError`].

use sha2::{Digest as _, Sha256};

use crate::spec::*;

pub const MAGIC: &[u8; 8] = b"TGTABLE\0";
/// The newest format: a table with `needs-approval` lists is written in it
/// (docs/table-format.md, "Approvals").
pub const FORMAT_VERSION: u32 = 4;
/// The oldest format read, and the one a table without approvals is
/// written in, so its bytes (and digest) are those of before.
pub const OLDEST_FORMAT_VERSION: u32 = 3;

/// The version `spec` is written in: 4 only when it holds approvals, so a
/// runtime that cannot enforce them refuses the table rather than offer
/// its tools without asking.
pub fn version_of(spec: &TableSpec) -> u32 {
    let approvals = spec.configurations.iter().any(|c| !c.approval.is_empty())
        || spec.profiles.iter().any(|p| !p.approval.is_empty());
    if approvals {
        FORMAT_VERSION
    } else {
        OLDEST_FORMAT_VERSION
    }
}
/// magic, version, payload length, digest, crc.
pub const HEADER_LEN: usize = 8 + 4 + 8 + 32 + 4;

/// The optional signature block after the payload (docs/table-format.md).
pub const SIGNATURE_MAGIC: &[u8; 8] = b"TGSIG\0\0\0";
/// The one signature algorithm: Ed25519 (RFC 8032, strict verification).
pub const SIGNATURE_ED25519: u32 = 1;
/// magic, algorithm, public key, signature.
pub const SIGNATURE_LEN: usize = 8 + 4 + 32 + 64;
/// Prefixed to the header to form the signed message, so that a signature
/// made for anything else never verifies as a table's.
pub const SIGNATURE_CONTEXT: &[u8] = b"toolgate table signature v1\0";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Not a toolgate table (wrong magic).
    NotATable,
    /// A table of another format version.
    Version { found: u32, supported: u32 },
    /// Shorter than its header says.
    Truncated { expected: u64, found: u64 },
    /// Longer than its header says.
    TrailingBytes { extra: u64 },
    /// The checksum does not match: the file was altered or damaged.
    Checksum { stored: u32, computed: u32 },
    /// The checksum matched but the payload's sha256 is not the digest in
    /// the header: the payload was edited and the checksum fixed up.
    Digest,
    /// The checksum matched but the content does not make a valid table.
    Corrupt(String),
    /// A signature is required and the table carries none.
    Unsigned,
    /// Signed, but by a key that is not among the trusted ones.
    UntrustedKey { key_id: String },
    /// Signed by a trusted key, but the signature does not verify: the
    /// header (and with it the payload's digest) was altered after signing.
    BadSignature { key_id: String },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotATable => write!(f, "not a toolgate table (bad magic bytes)"),
            LoadError::Version { found, supported } => write!(
                f,
                "table format version {found} is not supported (this runtime reads versions {OLDEST_FORMAT_VERSION} to {supported}); recompile the policy with a matching toolgate"
            ),
            LoadError::Truncated { expected, found } => {
                write!(f, "table is truncated: {found} bytes, header says {expected}")
            }
            LoadError::TrailingBytes { extra } => {
                write!(f, "table has {extra} bytes after its end")
            }
            LoadError::Checksum { stored, computed } => write!(
                f,
                "table checksum mismatch (stored {stored:08x}, computed {computed:08x}): the file is damaged or was altered"
            ),
            LoadError::Digest => write!(
                f,
                "table digest mismatch: the payload's sha256 is not the digest in the header; the file was altered after compilation, recompile it"
            ),
            LoadError::Corrupt(m) => write!(f, "table is corrupt: {m}"),
            LoadError::Unsigned => write!(
                f,
                "table is not signed, and a signature by a trusted key is required; sign it with `toolgate compile --sign KEY`"
            ),
            LoadError::UntrustedKey { key_id } => write!(
                f,
                "table is signed by key {key_id}, which is not trusted; sign it with a trusted key or add its public key to the trusted keys"
            ),
            LoadError::BadSignature { key_id } => write!(
                f,
                "table signature by key {key_id} does not verify: the table was altered after it was signed; recompile and sign it again"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Encode a spec. `digest` is the sha256 of the payload, computed by the
/// caller (the compiler), stored in the header and covered by the checksum.
pub fn encode_payload(spec: &TableSpec) -> Vec<u8> {
    payload_after(Vec::new(), spec, None)
}

/// The whole table file of `spec`: header and payload, the payload written
/// after room left for the header, which is then filled in, so a table of
/// tens of megabytes is not copied into a second buffer to be framed.
/// `names`: the spec's name hash when the caller has it (a [`crate::Table`]
/// built from the spec holds the very pilots [`crate::phf::build`] gives
/// for its names), else it is built here. The same bytes as
/// [`frame_version`] of [`encode_payload`].
pub fn encode_file(spec: &TableSpec, names: Option<&crate::phf::Pilots>) -> Vec<u8> {
    let mut buf = payload_after(vec![0; HEADER_LEN], spec, names);
    let (header, payload) = buf.split_at_mut(HEADER_LEN);
    write_header(header, payload, payload_digest(payload), version_of(spec));
    buf
}

/// `buf` with the payload of `spec` appended (`names` as in [`encode_file`]).
fn payload_after(buf: Vec<u8>, spec: &TableSpec, names: Option<&crate::phf::Pilots>) -> Vec<u8> {
    // Most of a large table is its tools (a length, the name, 13 bytes)
    // and the pilots (4 bytes each, fewer than the tools): reserved at
    // once, not grown by doubling through copies of the whole buffer.
    let tools: usize = spec.tools.iter().map(|t| t.name.len() + 21).sum();
    let mut buf = buf;
    buf.reserve(tools + 4096);
    let mut w = Writer { buf };
    w.strs2(&spec.policy_digests);
    w.str(&spec.registry_digest);
    w.list(&spec.classes, |w, c| w.str(c));
    w.list(&spec.zones, |w, z| {
        w.str(&z.name);
        w.u32(z.ceiling);
    });
    w.u32(spec.least_trusted_zone);
    w.list(&spec.groups, |w, g| {
        w.str(&g.name);
        w.bool(g.enabled);
        w.opt_u32(g.default_class);
    });
    w.list(&spec.tools, |w, t| {
        w.str(&t.name);
        w.u32(t.group);
        w.u8((t.remote as u8) | (t.enabled as u8) << 1 | (t.admin_only as u8) << 2);
        w.u32(t.class);
        w.u32(t.descriptor_bytes);
    });
    w.list(&spec.skills, |w, s| {
        w.str(&s.name);
        match &s.tools {
            None => w.u8(0),
            Some(t) => {
                w.u8(1);
                w.list(t, |w, n| w.str(n));
            }
        }
    });
    w.list(&spec.configurations, |w, c| {
        w.str(&c.name);
        w.str(&c.file);
        match &c.provider {
            None => w.u8(0),
            Some(p) => {
                w.u8(1);
                w.str(p);
            }
        }
        w.u32(c.zone);
        match &c.groups {
            None => w.u8(0),
            Some(g) => {
                w.u8(1);
                w.list(g, |w, x| w.u32(*x));
            }
        }
        w.list(&c.excluded, |w, n| w.str(n));
        w.list(&c.skills, |w, x| w.u32(*x));
    });
    w.list(&spec.profiles, |w, p| {
        w.str(&p.name);
        w.str(&p.file);
        w.list(&p.tools, |w, n| w.str(n));
        w.list(&p.groups, |w, x| w.u32(*x));
        w.list(&p.prefixes, |w, n| w.str(n));
    });
    w.list(&spec.consumers, |w, c| {
        w.str(&c.name);
        w.u32(c.profile);
    });
    w.list(&spec.gateways, |w, g| {
        w.str(&g.name);
        w.list(&g.rules, |w, r| {
            w.str(&r.name);
            w.opt_i64(r.http_status);
            w.opt_i64(r.error_code);
            w.opt_str(r.message.as_deref());
            w.strs2(&r.data);
            w.opt_str(r.result_text.as_deref());
            w.strs2(&r.headers);
            w.opt_str(r.body.as_deref());
            w.opt_str(r.remediation.as_deref());
            w.u8(r.outcome as u8);
        });
    });
    w.bool(spec.observe);
    w.u8(spec.remote_visibility as u8);
    // Bit 0: `consumers-without-profile refused`; bit 1: `unknown-consumers
    // admitted` (a table written before the bit existed reads as refused).
    w.u8(spec.unprofiled as u8 | (spec.unknown_consumers_admitted as u8) << 1);
    w.str(&spec.skill_loader);
    // The name hash (docs/table-format.md). Names that are not distinct have
    // none: the loader refuses such a table as corrupt either way.
    let built;
    let names = match names {
        Some(n) => n,
        None => {
            built =
                crate::phf::build(spec.tools.iter().map(|t| t.name.as_str())).unwrap_or_default();
            &built
        }
    };
    w.u64(names.seed);
    w.list(&names.pilots, |w, p| w.u32(*p));
    if version_of(spec) >= 4 {
        // Format 4: each configuration's, then each profile's approvals.
        for c in &spec.configurations {
            w.selectors(&c.approval);
        }
        for p in &spec.profiles {
            w.selectors(&p.approval);
        }
    }
    w.buf
}

/// The table digest: sha256 of the payload.
pub fn payload_digest(payload: &[u8]) -> [u8; 32] {
    Sha256::digest(payload).into()
}

/// Lowercase hex of bytes (digests in logs, tables and policy provenance).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The sha256 of `bytes` in lowercase hex: the one sha256 helper (the
/// compiler's source digests and SARIF fingerprints use it too).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&payload_digest(bytes))
}

/// Wrap a payload in the header of format [`OLDEST_FORMAT_VERSION`].
pub fn frame(payload: &[u8], digest: [u8; 32]) -> Vec<u8> {
    frame_version(payload, digest, OLDEST_FORMAT_VERSION)
}

/// Wrap a payload of format `version` ([`version_of`] its spec) in the header.
pub fn frame_version(payload: &[u8], digest: [u8; 32], version: u32) -> Vec<u8> {
    let mut out = vec![0; HEADER_LEN];
    write_header(&mut out, payload, digest, version);
    out.extend_from_slice(payload);
    out
}

/// Fill `header` (exactly [`HEADER_LEN`] bytes) for `payload`: magic,
/// version, length, digest, and the CRC of those after the magic and of the payload.
fn write_header(header: &mut [u8], payload: &[u8], digest: [u8; 32], version: u32) {
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&version.to_le_bytes());
    header[12..20].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    header[20..52].copy_from_slice(&digest);
    let mut h = crc32fast::Hasher::new();
    h.update(&header[8..52]);
    h.update(payload);
    header[52..HEADER_LEN].copy_from_slice(&h.finalize().to_le_bytes());
}

/// A table's signature block: who signed, and the Ed25519 signature over
/// [`signed_message`] of the table's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureBlock {
    pub public_key: [u8; 32],
    pub signature: [u8; 64],
}

impl SignatureBlock {
    /// The block as it follows the payload.
    pub fn encode(&self) -> [u8; SIGNATURE_LEN] {
        let mut out = [0u8; SIGNATURE_LEN];
        out[..8].copy_from_slice(SIGNATURE_MAGIC);
        out[8..12].copy_from_slice(&SIGNATURE_ED25519.to_le_bytes());
        out[12..44].copy_from_slice(&self.public_key);
        out[44..].copy_from_slice(&self.signature);
        out
    }

    /// The signer's key id (see [`key_id`]).
    pub fn key_id(&self) -> String {
        key_id(&self.public_key)
    }
}

/// A key's short id, as messages, `toolgate keygen` and the docs show it:
/// `ed25519:` and the first 16 hex digits of the sha256 of the raw public key.
pub fn key_id(public_key: &[u8; 32]) -> String {
    format!("ed25519:{}", &sha256_hex(public_key)[..16])
}

/// The message a table's signature signs: [`SIGNATURE_CONTEXT`] and the
/// table's header. The header holds the payload's sha256, which every load
/// verifies, so the signature covers every payload byte.
pub fn signed_message(table: &[u8]) -> Vec<u8> {
    let header = &table[..HEADER_LEN.min(table.len())];
    let mut m = Vec::with_capacity(SIGNATURE_CONTEXT.len() + header.len());
    m.extend_from_slice(SIGNATURE_CONTEXT);
    m.extend_from_slice(header);
    m
}

/// Split a file into the table (header and payload) and its signature
/// block, if it has one. Only the framing is checked here: [`decode`]
/// checks the table, and verification (feature `signature`) the signature.
pub fn split_signature(bytes: &[u8]) -> Result<(&[u8], Option<SignatureBlock>), LoadError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Ok((bytes, None));
    }
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[12..20]);
    let end = (HEADER_LEN as u64).saturating_add(u64::from_le_bytes(len8));
    if (bytes.len() as u64) <= end {
        return Ok((bytes, None));
    }
    // end < bytes.len(), so it fits a usize.
    let (table, rest) = bytes.split_at(end as usize);
    if rest.len() < 8 || &rest[..8] != SIGNATURE_MAGIC {
        return Err(LoadError::TrailingBytes {
            extra: rest.len() as u64,
        });
    }
    if rest.len() != SIGNATURE_LEN {
        return Err(LoadError::Corrupt(format!(
            "the signature block is {} bytes, expected {SIGNATURE_LEN}",
            rest.len()
        )));
    }
    let algorithm = u32::from_le_bytes([rest[8], rest[9], rest[10], rest[11]]);
    if algorithm != SIGNATURE_ED25519 {
        return Err(LoadError::Corrupt(format!(
            "signature algorithm {algorithm} is not supported (this runtime knows 1, Ed25519)"
        )));
    }
    let mut public_key = [0u8; 32];
    public_key.copy_from_slice(&rest[12..44]);
    let mut signature = [0u8; 64];
    signature.copy_from_slice(&rest[44..]);
    Ok((
        table,
        Some(SignatureBlock {
            public_key,
            signature,
        }),
    ))
}

/// Check the header and checksum; decode the payload. Returns the spec and
/// the digest from the header. A signature block, if any, is checked for
/// its framing only: verifying it is [`crate::Table::load_verified`]'s job.
pub fn decode(bytes: &[u8]) -> Result<(TableSpec, [u8; 32]), LoadError> {
    decode_parts(bytes).map(|(spec, digest, _)| (spec, digest))
}

/// [`decode`], and the stored name hash (not yet checked against the names:
/// [`crate::Table::load`] does that).
pub fn decode_parts(bytes: &[u8]) -> Result<(TableSpec, [u8; 32], crate::phf::Pilots), LoadError> {
    let (bytes, _signature) = split_signature(bytes)?;
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(LoadError::NotATable);
    }
    if bytes.len() < 12 {
        return Err(LoadError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(LoadError::Version {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(LoadError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[12..20]);
    let len = u64::from_le_bytes(len8);
    let expected = (HEADER_LEN as u64).saturating_add(len);
    if (bytes.len() as u64) < expected {
        return Err(LoadError::Truncated {
            expected,
            found: bytes.len() as u64,
        });
    }
    if (bytes.len() as u64) > expected {
        return Err(LoadError::TrailingBytes {
            extra: bytes.len() as u64 - expected,
        });
    }
    let mut digest = [0u8; 32];
    digest.copy_from_slice(&bytes[20..52]);
    let stored = u32::from_le_bytes([bytes[52], bytes[53], bytes[54], bytes[55]]);
    let payload = &bytes[HEADER_LEN..];
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[8..52]);
    h.update(payload);
    let computed = h.finalize();
    if computed != stored {
        return Err(LoadError::Checksum { stored, computed });
    }
    // The CRC catches damage; the digest catches an edited payload whose CRC
    // was fixed up (decision logs record the digest as the audited policy's).
    if payload_digest(payload) != digest {
        return Err(LoadError::Digest);
    }
    let mut r = Reader {
        buf: payload,
        pos: 0,
    };
    let mut spec = r.spec().map_err(LoadError::Corrupt)?;
    let names = r.name_hash().map_err(LoadError::Corrupt)?;
    if version >= 4 {
        r.approvals(&mut spec).map_err(LoadError::Corrupt)?;
        if version_of(&spec) != version {
            return Err(LoadError::Corrupt(
                "a format 4 table without approvals (it is written in format 3)".into(),
            ));
        }
    }
    if r.pos != payload.len() {
        return Err(LoadError::Corrupt(
            "bytes left after the last section".into(),
        ));
    }
    Ok((spec, digest, names))
}

struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    fn opt_u32(&mut self, v: Option<u32>) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                self.u32(x);
            }
        }
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                self.i64(x);
            }
        }
    }
    fn opt_str(&mut self, v: Option<&str>) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                self.str(x);
            }
        }
    }
    fn list<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.u32(items.len() as u32);
        for i in items {
            f(self, i);
        }
    }
    fn strs2(&mut self, items: &[(String, String)]) {
        self.list(items, |w, (a, b)| {
            w.str(a);
            w.str(b);
        });
    }
    fn selectors(&mut self, s: &SelectorSpec) {
        self.list(&s.tools, |w, n| w.str(n));
        self.list(&s.groups, |w, x| w.u32(*x));
        self.list(&s.prefixes, |w, n| w.str(n));
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

type R<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| format!("unexpected end of payload at byte {}", self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> R<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(format!("bad boolean {x} at byte {}", self.pos - 1)),
        }
    }
    fn u32(&mut self) -> R<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i64(&mut self) -> R<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }
    fn u64(&mut self) -> R<u64> {
        Ok(self.i64()? as u64)
    }
    fn name_hash(&mut self) -> R<crate::phf::Pilots> {
        Ok(crate::phf::Pilots {
            seed: self.u64()?,
            pilots: self.list(4, |r| r.u32())?,
        })
    }
    fn str(&mut self) -> R<String> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| format!("invalid UTF-8 in a name at byte {}", self.pos - n))
    }
    fn tag(&mut self) -> R<bool> {
        self.bool()
    }
    fn opt_u32(&mut self) -> R<Option<u32>> {
        Ok(if self.tag()? { Some(self.u32()?) } else { None })
    }
    fn opt_i64(&mut self) -> R<Option<i64>> {
        Ok(if self.tag()? { Some(self.i64()?) } else { None })
    }
    fn opt_str(&mut self) -> R<Option<String>> {
        Ok(if self.tag()? { Some(self.str()?) } else { None })
    }
    /// A count, bounded by the bytes left (each item takes at least `min` bytes),
    /// so a corrupt count cannot make us allocate without bound.
    fn list<T>(&mut self, min: usize, mut f: impl FnMut(&mut Self) -> R<T>) -> R<Vec<T>> {
        let n = self.u32()? as usize;
        let left = self.buf.len() - self.pos;
        if n.saturating_mul(min.max(1)) > left {
            return Err(format!("list of {n} items cannot fit in {left} bytes"));
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(self)?);
        }
        Ok(out)
    }
    fn strs2(&mut self) -> R<Vec<(String, String)>> {
        self.list(8, |r| Ok((r.str()?, r.str()?)))
    }

    fn tool(&mut self) -> R<ToolSpec> {
        let name = self.str()?;
        let group = self.u32()?;
        let flags = self.u8()?;
        if flags > 7 {
            return Err(format!("bad tool flags {flags}"));
        }
        Ok(ToolSpec {
            name,
            group,
            remote: flags & 1 != 0,
            enabled: flags & 2 != 0,
            admin_only: flags & 4 != 0,
            class: self.u32()?,
            descriptor_bytes: self.u32()?,
        })
    }

    fn configuration(&mut self) -> R<ConfigurationSpec> {
        Ok(ConfigurationSpec {
            name: self.str()?,
            file: self.str()?,
            provider: self.opt_str()?,
            zone: self.u32()?,
            groups: if self.tag()? {
                Some(self.list(4, |r| r.u32())?)
            } else {
                None
            },
            excluded: self.list(4, |r| r.str())?,
            skills: self.list(4, |r| r.u32())?,
            approval: SelectorSpec::default(),
        })
    }

    fn selectors(&mut self) -> R<SelectorSpec> {
        Ok(SelectorSpec {
            tools: self.list(4, |r| r.str())?,
            groups: self.list(4, |r| r.u32())?,
            prefixes: self.list(4, |r| r.str())?,
        })
    }

    /// Format 4's approvals: each configuration's, then each profile's.
    fn approvals(&mut self, spec: &mut TableSpec) -> R<()> {
        for c in &mut spec.configurations {
            c.approval = self.selectors()?;
        }
        for p in &mut spec.profiles {
            p.approval = self.selectors()?;
        }
        Ok(())
    }

    fn gateway(&mut self) -> R<GatewaySpec> {
        Ok(GatewaySpec {
            name: self.str()?,
            rules: self.list(19, |r| {
                Ok(RuleSpec {
                    name: r.str()?,
                    http_status: r.opt_i64()?,
                    error_code: r.opt_i64()?,
                    message: r.opt_str()?,
                    data: r.strs2()?,
                    result_text: r.opt_str()?,
                    headers: r.strs2()?,
                    body: r.opt_str()?,
                    remediation: r.opt_str()?,
                    outcome: match r.u8()? {
                        0 => RuleOutcome::NotInProfile,
                        1 => RuleOutcome::ContentPolicy,
                        2 => RuleOutcome::Policy,
                        3 => RuleOutcome::ToolFailure,
                        4 => RuleOutcome::NotRegistered,
                        x => return Err(format!("bad rule outcome {x}")),
                    },
                })
            })?,
        })
    }

    fn spec(&mut self) -> R<TableSpec> {
        let policy_digests = self.strs2()?;
        let registry_digest = self.str()?;
        let classes = self.list(4, |r| r.str())?;
        let zones = self.list(8, |r| {
            Ok(ZoneSpec {
                name: r.str()?,
                ceiling: r.u32()?,
            })
        })?;
        let least_trusted_zone = self.u32()?;
        let groups = self.list(6, |r| {
            Ok(GroupSpec {
                name: r.str()?,
                enabled: r.bool()?,
                default_class: r.opt_u32()?,
            })
        })?;
        let tools = self.list(17, Reader::tool)?;
        let skills = self.list(5, |r| {
            Ok(SkillSpec {
                name: r.str()?,
                tools: if r.tag()? {
                    Some(r.list(4, |r| r.str())?)
                } else {
                    None
                },
            })
        })?;
        let configurations = self.list(22, Reader::configuration)?;
        let profiles = self.list(20, |r| {
            Ok(ProfileSpec {
                name: r.str()?,
                file: r.str()?,
                tools: r.list(4, |r| r.str())?,
                groups: r.list(4, |r| r.u32())?,
                prefixes: r.list(4, |r| r.str())?,
                approval: SelectorSpec::default(),
            })
        })?;
        let consumers = self.list(8, |r| {
            Ok(ConsumerSpec {
                name: r.str()?,
                profile: r.u32()?,
            })
        })?;
        let gateways = self.list(8, Reader::gateway)?;
        let observe = self.bool()?;
        let remote_visibility = match self.u8()? {
            0 => Visibility::Admins,
            1 => Visibility::Everyone,
            2 => Visibility::Nobody,
            x => return Err(format!("bad visibility {x}")),
        };
        let consumers_byte = self.u8()?;
        if consumers_byte > 3 {
            return Err(format!("bad consumers setting {consumers_byte}"));
        }
        let unprofiled = if consumers_byte & 1 == 0 {
            Unprofiled::Unrestricted
        } else {
            Unprofiled::Refused
        };
        let unknown_consumers_admitted = consumers_byte & 2 != 0;
        let skill_loader = self.str()?;
        Ok(TableSpec {
            policy_digests,
            registry_digest,
            classes,
            zones,
            least_trusted_zone,
            groups,
            tools,
            skills,
            configurations,
            profiles,
            consumers,
            gateways,
            observe,
            remote_visibility,
            unprofiled,
            unknown_consumers_admitted,
            skill_loader,
        })
    }
}
