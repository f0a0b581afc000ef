//! The artifact format: the media types and annotations, the manifest and
//! config a push writes, and the checks a pulled manifest and table pass
//! (docs/distribution.md). No HTTP here; [`crate::client`] carries it.

use std::collections::BTreeMap;

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{
    OciDescriptor, OciImageManifest, IMAGE_MANIFEST_LIST_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE,
    OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE,
};
use toolgate_runtime::format;
use toolgate_runtime::Table;

/// The manifest's `artifactType`.
pub const ARTIFACT_TYPE: &str = "application/vnd.toolgate.table.v1";
/// The config blob: `{"formatVersion":1,"tableDigest":"sha256:…","signedBy":…}`.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.toolgate.table.config.v1+json";
/// The one layer: the table file.
pub const TABLE_MEDIA_TYPE: &str = "application/vnd.toolgate.table.v1.tgt";
/// Manifest annotation: the table digest (sha256 of the payload, as in decision logs).
pub const ANNOTATION_TABLE_DIGEST: &str = "dev.toolgate.table.digest";
/// Manifest annotation: the signing key's id, on a signed table.
pub const ANNOTATION_KEY_ID: &str = "dev.toolgate.table.signed-by";
/// The largest table pulled (the CLI's limit on any table file).
pub const MAX_TABLE_BYTES: u64 = 256 * 1024 * 1024;
/// The largest manifest read. A toolgate manifest is under 1 KiB; the
/// distribution registry itself refuses manifests over 4 MiB, so no real
/// artifact comes near it.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// The manifest media types asked for: the image manifest a push writes,
/// and the others so that a registry's answer is the stored manifest, whose
/// digest is the one a HEAD reports.
pub(crate) const MANIFEST_TYPES: [&str; 4] = [
    OCI_IMAGE_MEDIA_TYPE,
    IMAGE_MANIFEST_MEDIA_TYPE,
    OCI_IMAGE_INDEX_MEDIA_TYPE,
    IMAGE_MANIFEST_LIST_MEDIA_TYPE,
];

/// A pushed or pulled artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The reference as given, normalised (`registry/repository:tag`).
    pub reference: String,
    /// The manifest digest (`sha256:…`): the artifact's identity.
    pub manifest_digest: String,
    /// The table digest (64 hex digits), as decisions and logs report it.
    pub table_digest: String,
    /// The signing key's id, when signed.
    pub signed_by: Option<String>,
}

/// A pulled artifact and its table file.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub artifact: Artifact,
    pub bytes: Vec<u8>,
}

/// The table's facts the artifact records; the table must load.
pub(crate) fn describe(table: &[u8]) -> Result<(String, Option<String>), String> {
    let loaded = Table::load(table).map_err(|e| e.to_string())?;
    let (_, block) = format::split_signature(table).map_err(|e| e.to_string())?;
    Ok((loaded.digest_hex(), block.map(|b| b.key_id())))
}

/// The config, the one layer and the manifest a push of `table` writes
/// (whose facts [`describe`] gave): no timestamps, so the same table gives
/// the same manifest.
pub(crate) fn build(
    table: &[u8],
    table_digest: &str,
    signed_by: Option<&str>,
) -> Result<(Config, ImageLayer, OciImageManifest), String> {
    // The table's own format (a table without approvals is format 3).
    let version = table.get(8..12).map_or(format::OLDEST_FORMAT_VERSION, |b| {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    });
    let mut config = serde_json::json!({
        "formatVersion": version,
        "tableDigest": format!("sha256:{table_digest}"),
    });
    if let Some(k) = signed_by {
        config["signedBy"] = serde_json::Value::String(k.to_string());
    }
    let config = Config::new(
        serde_json::to_vec(&config).map_err(|e| e.to_string())?,
        CONFIG_MEDIA_TYPE.to_string(),
        None,
    );
    let layer = ImageLayer::new(
        table.to_vec(),
        TABLE_MEDIA_TYPE.to_string(),
        Some(BTreeMap::from([(
            "org.opencontainers.image.title".to_string(),
            "policy.tgt".to_string(),
        )])),
    );
    let mut annotations = BTreeMap::from([(
        ANNOTATION_TABLE_DIGEST.to_string(),
        table_digest.to_string(),
    )]);
    if let Some(k) = signed_by {
        annotations.insert(ANNOTATION_KEY_ID.to_string(), k.to_string());
    }
    let mut manifest =
        OciImageManifest::build(std::slice::from_ref(&layer), &config, Some(annotations));
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
    manifest.artifact_type = Some(ARTIFACT_TYPE.to_string());
    Ok((config, layer, manifest))
}

/// The `sha256:…` digest of `bytes`, as manifests and the registry name blobs.
pub(crate) fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", format::sha256_hex(bytes))
}

/// The manifest, as an image manifest (schema 2). An index (a manifest list)
/// is not a toolgate table artifact: a push never writes one.
pub(crate) fn parse_manifest(body: &[u8]) -> Result<OciImageManifest, String> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the manifest is not JSON ({e})"))?;
    if v["schemaVersion"] != serde_json::json!(2) {
        return Err(format!(
            "the manifest's schemaVersion is {}, expected 2",
            v["schemaVersion"]
        ));
    }
    match v["mediaType"].as_str() {
        None => {}
        Some(t) if t == OCI_IMAGE_MEDIA_TYPE || t == IMAGE_MANIFEST_MEDIA_TYPE => {}
        Some(t) => {
            return Err(format!(
                "the manifest's media type is `{t}`, expected `{OCI_IMAGE_MEDIA_TYPE}`"
            ))
        }
    }
    serde_json::from_value(v).map_err(|e| format!("the manifest is not an image manifest ({e})"))
}

/// The manifest's one table layer, checked against the artifact format.
pub(crate) fn table_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor, String> {
    let kind = manifest
        .artifact_type
        .as_deref()
        .unwrap_or(manifest.config.media_type.as_str());
    if kind != ARTIFACT_TYPE && manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "not a toolgate table artifact (artifact type `{kind}`, expected `{ARTIFACT_TYPE}`)"
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!(
            "a toolgate table artifact has one layer, this one has {}",
            manifest.layers.len()
        ));
    };
    if layer.media_type != TABLE_MEDIA_TYPE {
        return Err(format!(
            "the layer's media type is `{}`, expected `{TABLE_MEDIA_TYPE}`",
            layer.media_type
        ));
    }
    if layer.size < 0 || layer.size as u64 > MAX_TABLE_BYTES {
        return Err(format!(
            "the table layer is {} bytes, over the limit of {MAX_TABLE_BYTES} bytes",
            layer.size
        ));
    }
    Ok(layer)
}

/// The table `layer` of `manifest` pulled as `bytes`, checked: exactly the
/// declared length and sha256 digest (oci-client checked the layer digest
/// at the end of the stream; both are checked here too, so that no table is
/// used whose bytes are not exactly the ones the manifest names), a table
/// that loads, and the digest the manifest's annotation records. Its facts,
/// as [`describe`] gives them.
pub(crate) fn check_table(
    manifest: &OciImageManifest,
    layer: &OciDescriptor,
    bytes: &[u8],
) -> Result<(String, Option<String>), String> {
    // `table_layer` checked 0 <= size <= MAX_TABLE_BYTES.
    let declared = layer.size.max(0) as u64;
    if bytes.len() as u64 != declared {
        return Err(format!(
            "the table blob is {} bytes, the manifest declares {declared}",
            bytes.len()
        ));
    }
    if let Some(hex) = layer.digest.strip_prefix("sha256:") {
        let got = format::sha256_hex(bytes);
        if !got.eq_ignore_ascii_case(hex) {
            return Err(format!(
                "the table blob's digest is sha256:{got}, the manifest declares {}",
                layer.digest
            ));
        }
    }
    let (table_digest, signed_by) = describe(bytes)?;
    let recorded = manifest
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_TABLE_DIGEST));
    if recorded != Some(&table_digest) {
        return Err(format!(
            "the manifest's {ANNOTATION_TABLE_DIGEST} annotation is {}, the table's digest is {table_digest}",
            recorded.map_or("absent", |s| s.as_str())
        ));
    }
    Ok((table_digest, signed_by))
}
