//! Compiled tables as OCI artifacts: `toolgate push` and `toolgate pull`,
//! and the poll of `toolgate serve --oci`. Any OCI registry a company runs
//! distributes them; nothing here is a distribution channel of its own.
//! docs/distribution.md describes the artifact and the trust model.
//!
//! The artifact is an OCI image manifest with `artifactType`
//! [`ARTIFACT_TYPE`], a small JSON config ([`CONFIG_MEDIA_TYPE`]) and one
//! layer: the table file as `toolgate compile` wrote it ([`TABLE_MEDIA_TYPE`]),
//! signature block included. Its identity is the manifest digest; the table's
//! own digest is in an annotation. Pushing the same table gives the same
//! manifest (no timestamps), so the same digest.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
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

/// How to reach registries.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RegistryOptions {
    /// Registries (`host:port`) spoken to over plain HTTP, for a registry on
    /// the local machine or a private network; every other one uses HTTPS.
    pub plain_http: Vec<String>,
    /// Basic credentials (user, password); anonymous when absent.
    pub basic_auth: Option<(String, String)>,
}

impl std::fmt::Debug for RegistryOptions {
    // Never prints the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryOptions")
            .field("plain_http", &self.plain_http)
            .field("user", &self.basic_auth.as_ref().map(|(u, _)| u))
            .finish()
    }
}

/// The registry (`host:port`) a reference names: what `--plain-http` applies to.
pub fn registry_of(reference: &str) -> Result<String, String> {
    Ok(parse_reference(reference)?.resolve_registry().to_string())
}

/// `reference` pinned to `digest`: `REGISTRY/REPOSITORY@DIGEST`, the
/// artifact by its identity (what a tag names can move; this cannot).
pub fn pinned(reference: &str, digest: &str) -> Result<String, String> {
    let r = parse_reference(reference)?;
    Ok(format!("{}/{}@{digest}", r.registry(), r.repository()))
}

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

/// The client, for one or more calls.
pub struct Registry {
    client: Client,
    auth: RegistryAuth,
}

fn parse_reference(reference: &str) -> Result<Reference, String> {
    reference.parse::<Reference>().map_err(|e| {
        format!("`{reference}` is not an OCI reference ({e}); expected REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST")
    })
}

/// The table's facts the artifact records; the table must load.
fn describe(table: &[u8]) -> Result<(String, Option<String>), String> {
    let loaded = Table::load(table).map_err(|e| e.to_string())?;
    let (_, block) = format::split_signature(table).map_err(|e| e.to_string())?;
    Ok((loaded.digest_hex(), block.map(|b| b.key_id())))
}

impl Registry {
    pub fn new(options: &RegistryOptions) -> Registry {
        let protocol = if options.plain_http.is_empty() {
            ClientProtocol::Https
        } else {
            ClientProtocol::HttpsExcept(options.plain_http.clone())
        };
        let config = ClientConfig {
            protocol,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(30)),
            ..ClientConfig::default()
        };
        let auth = match &options.basic_auth {
            Some((user, password)) => RegistryAuth::Basic(user.clone(), password.clone()),
            None => RegistryAuth::Anonymous,
        };
        Registry {
            client: Client::new(config),
            auth,
        }
    }

    /// Publish a table file under `reference` (a tag). The table must load;
    /// its signature, if any, travels inside it.
    pub async fn push(&self, reference: &str, table: &[u8]) -> Result<Artifact, String> {
        let r = parse_reference(reference)?;
        let (table_digest, signed_by) = describe(table)?;
        let mut config = serde_json::json!({
            "formatVersion": format::FORMAT_VERSION,
            "tableDigest": format!("sha256:{table_digest}"),
        });
        if let Some(k) = &signed_by {
            config["signedBy"] = serde_json::Value::String(k.clone());
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
        let mut annotations =
            BTreeMap::from([(ANNOTATION_TABLE_DIGEST.to_string(), table_digest.clone())]);
        if let Some(k) = &signed_by {
            annotations.insert(ANNOTATION_KEY_ID.to_string(), k.clone());
        }
        let mut manifest =
            OciImageManifest::build(std::slice::from_ref(&layer), &config, Some(annotations));
        manifest.media_type = Some(oci_client::manifest::OCI_IMAGE_MEDIA_TYPE.to_string());
        manifest.artifact_type = Some(ARTIFACT_TYPE.to_string());
        let pushed = self
            .client
            .push(&r, &[layer], config, &self.auth, Some(manifest))
            .await
            .map_err(|e| format!("{reference}: push failed: {e}"))?;
        // The registry names the manifest it stored by its digest (the
        // Location of the manifest); ask it when the URL does not say.
        let manifest_digest = match pushed.manifest_url.rsplit_once("/manifests/") {
            Some((_, d)) if d.starts_with("sha256:") => d.to_string(),
            _ => self.resolve(reference).await?,
        };
        Ok(Artifact {
            reference: r.whole(),
            manifest_digest,
            table_digest,
            signed_by,
        })
    }

    /// The manifest digest `reference` names now (a HEAD request): what a
    /// poll compares before pulling anything.
    pub async fn resolve(&self, reference: &str) -> Result<String, String> {
        let r = parse_reference(reference)?;
        self.client
            .fetch_manifest_digest(&r, &self.auth)
            .await
            .map_err(|e| format!("{reference}: {e}"))
    }

    /// Fetch the artifact `reference` names and its table file. The
    /// manifest must be a toolgate table's, the layer's digest must match
    /// (the client checks it), and the table must load; whether its
    /// signature is required is the caller's rule.
    pub async fn pull(&self, reference: &str) -> Result<Pulled, String> {
        let r = parse_reference(reference)?;
        let (manifest, manifest_digest) = self
            .client
            .pull_image_manifest(&r, &self.auth)
            .await
            .map_err(|e| format!("{reference}: {e}"))?;
        let layer = table_layer(&manifest).map_err(|e| format!("{reference}: {e}"))?;
        let mut sink = Capped::default();
        self.client
            .pull_blob(&r, layer, &mut sink)
            .await
            .map_err(|e| format!("{reference}: pulling the table failed: {e}"))?;
        let bytes = sink.buf;
        let (table_digest, signed_by) =
            describe(&bytes).map_err(|e| format!("{reference}: {e}"))?;
        let recorded = manifest
            .annotations
            .as_ref()
            .and_then(|a| a.get(ANNOTATION_TABLE_DIGEST));
        if recorded != Some(&table_digest) {
            return Err(format!(
                "{reference}: the manifest's {ANNOTATION_TABLE_DIGEST} annotation is {}, the table's digest is {table_digest}",
                recorded.map_or("absent", |s| s.as_str())
            ));
        }
        Ok(Pulled {
            artifact: Artifact {
                reference: r.whole(),
                manifest_digest,
                table_digest,
                signed_by,
            },
            bytes,
        })
    }
}

/// The manifest's one table layer, checked against the artifact format.
fn table_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor, String> {
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

/// A blob sink that refuses more than [`MAX_TABLE_BYTES`]: a registry that
/// sends more than the manifest said cannot make a pull allocate without bound.
#[derive(Default)]
struct Capped {
    buf: Vec<u8>,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.buf.len() as u64 + data.len() as u64 > MAX_TABLE_BYTES {
            return Poll::Ready(Err(std::io::Error::other(format!(
                "the table blob is over the limit of {MAX_TABLE_BYTES} bytes"
            ))));
        }
        self.buf.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Run one registry call to completion from synchronous code (the CLI).
pub fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    Ok(rt.block_on(f))
}
