//! The client: HTTP to a distribution endpoint (an OCI registry, as the
//! distribution spec names the server), under one deadline a call. What it
//! sends and checks is [`crate::artifact`]'s.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use crate::artifact::{
    build, check_table, describe, digest_of, parse_manifest, table_layer, Artifact, Pulled,
    MANIFEST_TYPES, MAX_MANIFEST_BYTES, MAX_TABLE_BYTES,
};
use crate::{Error, ErrorKind};

/// The default overall deadline of one push, pull or resolve, every request
/// of it included (a registry that trickles a byte at a time restarts a
/// read timeout forever; it cannot restart this).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);
/// The most of an error answer's body read for its message.
const MAX_ERROR_BODY_BYTES: usize = 4096;
/// The longest a connection's setup may take, within the deadline.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the registry may send nothing during a read, within the
/// deadline (a trickle restarts it; only the deadline bounds the whole).
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How to reach registries.
#[derive(Clone, PartialEq, Eq)]
pub struct DistributionOptions {
    /// Registries (`host:port`) spoken to over plain HTTP, for a registry on
    /// the local machine or a private network; every other one uses HTTPS.
    pub plain_http: Vec<String>,
    /// Basic credentials (user, password); anonymous when absent.
    pub basic_auth: Option<(String, String)>,
    /// The overall deadline of one push, pull or resolve ([`DEFAULT_DEADLINE`]).
    pub deadline: Duration,
}

impl Default for DistributionOptions {
    fn default() -> DistributionOptions {
        DistributionOptions {
            plain_http: Vec::new(),
            basic_auth: None,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

impl std::fmt::Debug for DistributionOptions {
    // Never prints the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributionOptions")
            .field("plain_http", &self.plain_http)
            .field("user", &self.basic_auth.as_ref().map(|(u, _)| u))
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// The registry (`host:port`) a reference names: what `--plain-http` applies to.
pub fn host_of(reference: &str) -> Result<String, Error> {
    Ok(parse_reference(reference)
        .map_err(Error::other)?
        .resolve_registry()
        .to_string())
}

/// `reference` pinned to `digest`: `REGISTRY/REPOSITORY@DIGEST`, the
/// artifact by its identity (what a tag names can move; this cannot).
pub fn pinned(reference: &str, digest: &str) -> Result<String, Error> {
    let r = parse_reference(reference).map_err(Error::other)?;
    Ok(format!("{}/{}@{digest}", r.registry(), r.repository()))
}

/// The client, for one or more calls.
pub struct Distribution {
    client: Client,
    /// The manifest requests, read under [`MAX_MANIFEST_BYTES`].
    http: reqwest::Client,
    auth: RegistryAuth,
    options: DistributionOptions,
}

fn parse_reference(reference: &str) -> Result<Reference, String> {
    reference.parse::<Reference>().map_err(|e| {
        format!("`{reference}` is not an OCI reference ({e}); expected REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST")
    })
}

impl Distribution {
    pub fn new(options: &DistributionOptions) -> Distribution {
        let protocol = if options.plain_http.is_empty() {
            ClientProtocol::Https
        } else {
            ClientProtocol::HttpsExcept(options.plain_http.clone())
        };
        // Not capped at the deadline: a timer as long as the deadline races
        // it and can end the call as an untyped transport error, and the
        // deadline, which starts first, already ends anything longer.
        let connect_timeout = CONNECT_TIMEOUT;
        let read_timeout = READ_TIMEOUT;
        let config = ClientConfig {
            protocol,
            connect_timeout: Some(connect_timeout),
            read_timeout: Some(read_timeout),
            ..ClientConfig::default()
        };
        let auth = match &options.basic_auth {
            Some((user, password)) => RegistryAuth::Basic(user.clone(), password.clone()),
            None => RegistryAuth::Anonymous,
        };
        // The timeouts oci-client's own client has; a builder that fails
        // leaves the default client, as oci-client does with its own.
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .read_timeout(read_timeout)
            .user_agent(concat!("toolgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Distribution {
            client: Client::new(config),
            http,
            auth,
            options: options.clone(),
        }
    }

    /// Run `call` under the deadline: past it, the call is dropped (its
    /// connections closed) and the error says so.
    async fn bounded<T>(
        &self,
        reference: &str,
        what: &str,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        match tokio::time::timeout(self.options.deadline, call).await {
            Ok(r) => r,
            Err(_) => Err(Error {
                kind: ErrorKind::Timeout,
                message: format!(
                    "{reference}: the {what} did not finish within {} (the registry stalled or is too slow; the deadline is --registry-timeout)",
                    seconds(self.options.deadline)
                ),
            }),
        }
    }

    /// Publish a table file under `reference` (a tag). The table must load;
    /// its signature, if any, travels inside it.
    pub async fn push(&self, reference: &str, table: &[u8]) -> Result<Artifact, Error> {
        let r = parse_reference(reference).map_err(Error::other)?;
        let (table_digest, signed_by) = describe(table).map_err(Error::other)?;
        self.bounded(
            reference,
            "push",
            self.push_unbounded(reference, &r, table, table_digest, signed_by),
        )
        .await
    }

    async fn push_unbounded(
        &self,
        reference: &str,
        r: &Reference,
        table: &[u8],
        table_digest: String,
        signed_by: Option<String>,
    ) -> Result<Artifact, Error> {
        let (config, layer, manifest) =
            build(table, &table_digest, signed_by.as_deref()).map_err(Error::other)?;
        let pushed = match self
            .client
            .push(r, &[layer], config, &self.auth, Some(manifest))
            .await
        {
            Ok(p) => p,
            Err(e) => {
                let hint = self.oci_hint(r, &e).await;
                return Err(Error::other(format!(
                    "{reference}: push failed: {}{hint}",
                    chain(&e)
                )));
            }
        };
        // The registry names the manifest it stored by its digest (the
        // Location of the manifest); ask it when the URL does not say.
        let manifest_digest = match pushed.manifest_url.rsplit_once("/manifests/") {
            Some((_, d)) if d.starts_with("sha256:") => d.to_string(),
            _ => self.resolve_unbounded(reference, r).await?,
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
    pub async fn resolve(&self, reference: &str) -> Result<String, Error> {
        let r = parse_reference(reference).map_err(Error::other)?;
        self.bounded(reference, "resolve", self.resolve_unbounded(reference, &r))
            .await
    }

    async fn resolve_unbounded(&self, reference: &str, r: &Reference) -> Result<String, Error> {
        let url = self.manifest_url(r);
        let res = self
            .send(
                reference,
                r,
                self.http
                    .head(&url)
                    .header("Accept", MANIFEST_TYPES.join(", ")),
            )
            .await?;
        if !res.status().is_success() {
            return Err(Error::other(format!(
                "{reference}: the registry answered {} to HEAD {url}",
                res.status()
            )));
        }
        match digest_header(res.headers()) {
            Some(d) => {
                if let Some(pinned) = r.digest() {
                    if d != pinned {
                        return Err(Error::other(format!(
                            "{reference}: the registry names the manifest {d}, not the digest asked for"
                        )));
                    }
                }
                Ok(d)
            }
            // No digest header: the manifest's own digest, read under the cap.
            None => Ok(self.manifest(reference, r).await?.1),
        }
    }

    /// Fetch the artifact `reference` names and its table file. The
    /// manifest must be a toolgate table's (and at most
    /// [`MAX_MANIFEST_BYTES`]), the layer's digest must match (the client
    /// checks it), and the table must load; whether its signature is
    /// required is the caller's rule. The whole pull is under the deadline.
    pub async fn pull(&self, reference: &str) -> Result<Pulled, Error> {
        let r = parse_reference(reference).map_err(Error::other)?;
        self.bounded(reference, "pull", self.pull_unbounded(reference, &r))
            .await
    }

    async fn pull_unbounded(&self, reference: &str, r: &Reference) -> Result<Pulled, Error> {
        let (body, manifest_digest) = self.manifest(reference, r).await?;
        let manifest =
            parse_manifest(&body).map_err(|e| Error::other(format!("{reference}: {e}")))?;
        let layer =
            table_layer(&manifest).map_err(|e| Error::other(format!("{reference}: {e}")))?;
        // `table_layer` checked 0 <= size <= MAX_TABLE_BYTES.
        let declared = layer.size.max(0) as u64;
        let mut sink = BlobSink::new(declared);
        if let Err(e) = self.client.pull_blob(r, layer, &mut sink).await {
            if sink.over {
                return Err(Error::other(format!(
                    "{reference}: the registry sent more than the {declared} bytes the manifest declares for the table blob {}; the pull stopped there",
                    layer.digest
                )));
            }
            let hint = self.oci_hint(r, &e).await;
            return Err(Error::other(format!(
                "{reference}: pulling the table failed: {}{hint}",
                chain(&e)
            )));
        }
        let bytes = sink.buf;
        let (table_digest, signed_by) = check_table(&manifest, layer, &bytes)
            .map_err(|e| Error::other(format!("{reference}: {e}")))?;
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

    /// One poll of `reference` under one deadline: the digest it names now
    /// (a HEAD request), and the artifact pulled by that digest when
    /// `wanted(digest)` says so. The deadline covers both.
    pub async fn poll(
        &self,
        reference: &str,
        wanted: impl FnOnce(&str) -> bool,
    ) -> Result<(String, Option<Pulled>), Error> {
        let r = parse_reference(reference).map_err(Error::other)?;
        self.bounded(reference, "poll", async {
            let digest = self.resolve_unbounded(reference, &r).await?;
            if !wanted(&digest) {
                return Ok((digest, None));
            }
            let by_digest = pinned(reference, &digest)?;
            let pinned_ref = parse_reference(&by_digest).map_err(Error::other)?;
            let pulled = self.pull_unbounded(&by_digest, &pinned_ref).await?;
            Ok((digest, Some(pulled)))
        })
        .await
    }

    /// The overall deadline of each call.
    pub fn deadline(&self) -> Duration {
        self.options.deadline
    }

    /// `http` or `https` for `registry`, as `--plain-http` says.
    fn scheme(&self, registry: &str) -> &'static str {
        if self.options.plain_http.iter().any(|h| h == registry) {
            "http"
        } else {
            "https"
        }
    }

    fn manifest_url(&self, r: &Reference) -> String {
        let registry = r.resolve_registry();
        format!(
            "{}://{registry}/v2/{}/manifests/{}{}",
            self.scheme(registry),
            r.repository(),
            r.digest().or(r.tag()).unwrap_or("latest"),
            r.namespace()
                .map(|ns| format!("?ns={ns}"))
                .unwrap_or_default()
        )
    }

    /// Send `request` with the registry's credentials: a bearer token when
    /// the registry asks for one (oci-client's exchange, also cached for the
    /// blob pull), else basic credentials when given.
    async fn send(
        &self,
        reference: &str,
        r: &Reference,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, Error> {
        let token = match self
            .client
            .auth(r, &self.auth, RegistryOperation::Pull)
            .await
        {
            Ok(t) => t,
            Err(e) => {
                let hint = self.oci_hint(r, &e).await;
                let what = match e {
                    OciDistributionError::RequestError(_) => "cannot reach the registry",
                    _ => "authenticating to the registry failed",
                };
                return Err(Error::other(format!(
                    "{reference}: {what}: {}{hint}",
                    chain(&e)
                )));
            }
        };
        let request = match (token, &self.options.basic_auth) {
            (Some(token), _) => request.bearer_auth(token),
            (None, Some((user, password))) => request.basic_auth(user, Some(password)),
            (None, None) => request,
        };
        match request.send().await {
            Ok(res) => Ok(res),
            Err(e) => {
                let hint = self.hint(r, &e).await;
                Err(Error::other(format!("{reference}: {}{hint}", chain(&e))))
            }
        }
    }

    /// The manifest's bytes and digest, read under [`MAX_MANIFEST_BYTES`]:
    /// a declared length over it is refused before the body is read, and a
    /// body that passes it (chunked, or longer than declared) is cut off
    /// there. The digest is the bytes' own, checked against what was asked
    /// for and what the registry says.
    async fn manifest(&self, reference: &str, r: &Reference) -> Result<(Vec<u8>, String), Error> {
        let url = self.manifest_url(r);
        let mut res = self
            .send(
                reference,
                r,
                self.http
                    .get(&url)
                    .header("Accept", MANIFEST_TYPES.join(", ")),
            )
            .await?;
        let status = res.status();
        if !status.is_success() {
            return Err(Error::other(format!(
                "{reference}: the registry answered {status}{}",
                error_detail(&mut res).await
            )));
        }
        if let Some(n) = res.content_length() {
            if n > MAX_MANIFEST_BYTES {
                return Err(Error::other(format!(
                    "{reference}: the manifest is {n} bytes (Content-Length), over the limit of {MAX_MANIFEST_BYTES} bytes"
                )));
            }
        }
        let header_digest = digest_header(res.headers());
        let mut body = Vec::new();
        // Each chunk is a read the registry answered; the deadline bounds how many.
        loop {
            let chunk = match res.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    return Err(Error::other(format!(
                        "{reference}: reading the manifest failed: {}",
                        chain(&e)
                    )))
                }
            };
            if body.len() as u64 + chunk.len() as u64 > MAX_MANIFEST_BYTES {
                return Err(Error::other(format!(
                    "{reference}: the manifest is over the limit of {MAX_MANIFEST_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let digest = digest_of(&body);
        for (what, claimed) in [
            ("the reference", r.digest().map(str::to_string)),
            ("the registry's Docker-Content-Digest", header_digest),
        ] {
            if let Some(claimed) = claimed {
                if claimed != digest {
                    return Err(Error::other(format!(
                        "{reference}: the manifest's digest is {digest}, {what} says {claimed}"
                    )));
                }
            }
        }
        Ok((body, digest))
    }

    /// [`Distribution::hint`] for an error oci-client returned.
    async fn oci_hint(&self, r: &Reference, e: &OciDistributionError) -> String {
        match e {
            OciDistributionError::RequestError(e) => self.hint(r, e).await,
            _ => String::new(),
        }
    }

    /// What to do about a connection that failed over HTTPS to a registry
    /// that speaks plain HTTP (the TLS handshake meets an HTTP answer, and
    /// the transport error alone does not say so): a plain `GET /v2/`, no
    /// credentials, a short wait, tells; anything else gets no hint.
    async fn hint(&self, r: &Reference, e: &reqwest::Error) -> String {
        let registry = r.resolve_registry();
        if self.scheme(registry) != "https" || !e.is_connect() {
            return String::new();
        }
        let probe = self
            .http
            .get(format!("http://{registry}/v2/"))
            .timeout(Duration::from_secs(5).min(self.options.deadline))
            .send()
            .await;
        match probe {
            Ok(_) => format!(
                "; {registry} answers plain HTTP, not HTTPS: pass --plain-http if it is on this machine or a private network"
            ),
            Err(_) => String::new(),
        }
    }
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// An error and its causes, `: `-separated (a transport error's own text
/// names only the URL; its cause says what went wrong).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    // Causes nest a few deep; the bound only guards against a cycle.
    for _ in 0..16 {
        let Some(cause) = next else { break };
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

/// A `Docker-Content-Digest` that is a sha256 digest, or nothing.
fn digest_header(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let value = headers.get("Docker-Content-Digest")?.to_str().ok()?;
    let hex = value.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| value.to_string())
}

/// The registry's explanation of an error answer (the OCI error envelope,
/// `{"errors":[{"code":…,"message":…}]}`), from at most
/// [`MAX_ERROR_BODY_BYTES`] of its body.
async fn error_detail(res: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY_BYTES {
        match res.chunk().await {
            Ok(Some(c)) => {
                body.extend_from_slice(&c[..c.len().min(MAX_ERROR_BODY_BYTES - body.len())])
            }
            _ => break,
        }
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return String::new();
    };
    let errors: Vec<String> = v["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .take(4)
        .map(|e| {
            format!(
                "{}: {}",
                e["code"].as_str().unwrap_or("?"),
                e["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    if errors.is_empty() {
        String::new()
    } else {
        format!(" ({})", errors.join("; "))
    }
}

/// A blob sink that holds at most the size the manifest declares (itself at
/// most [`MAX_TABLE_BYTES`]): the first write that would pass it fails, so
/// the pull stops reading there, and the buffer's capacity never exceeds
/// it. A registry that sends more than the manifest said makes a pull hold
/// the declared size and one read of the stream, never more.
struct BlobSink {
    buf: Vec<u8>,
    /// The declared size.
    limit: u64,
    /// A write was refused for passing `limit`.
    over: bool,
}

impl BlobSink {
    fn new(limit: u64) -> BlobSink {
        BlobSink {
            buf: Vec::new(),
            limit: limit.min(MAX_TABLE_BYTES),
            over: false,
        }
    }
}

impl tokio::io::AsyncWrite for BlobSink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let len = self.buf.len();
        if len as u64 + data.len() as u64 > self.limit {
            self.over = true;
            return Poll::Ready(Err(std::io::Error::other(format!(
                "the table blob is longer than the {} bytes its manifest declares",
                self.limit
            ))));
        }
        // Grow by doubling, but never past the declared size (which the
        // check above bounds `needed` by, so it fits in usize).
        let needed = len + data.len();
        if needed > self.buf.capacity() {
            let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
            let grown = needed.max(self.buf.capacity().saturating_mul(2)).min(limit);
            self.buf.reserve_exact(grown - len);
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn the_blob_sink_holds_the_declared_size_and_no_more() {
        let declared = 100_000u64;
        let mut sink = BlobSink::new(declared);
        let chunk = vec![7u8; 4096];
        let mut written = 0u64;
        while written + chunk.len() as u64 <= declared {
            sink.write_all(&chunk)
                .await
                .expect("within the declared size");
            written += chunk.len() as u64;
            assert!(
                sink.buf.capacity() as u64 <= declared,
                "{}",
                sink.buf.capacity()
            );
        }
        let rest = (declared - written) as usize;
        sink.write_all(&chunk[..rest])
            .await
            .expect("the last bytes");
        assert_eq!(sink.buf.len() as u64, declared);
        assert!(
            sink.buf.capacity() as u64 <= declared,
            "{}",
            sink.buf.capacity()
        );
        assert!(!sink.over);
        // One byte more than declared: refused, and not kept.
        let e = sink
            .write_all(&[1])
            .await
            .expect_err("past the declared size");
        assert_eq!(
            e.to_string(),
            "the table blob is longer than the 100000 bytes its manifest declares"
        );
        assert!(sink.over);
        assert_eq!(sink.buf.len() as u64, declared);
        // A chunk that passes the size is refused whole, from the start.
        let mut sink = BlobSink::new(10);
        assert!(sink.write_all(&[0; 11]).await.is_err());
        assert!(sink.over && sink.buf.is_empty());
        // A declared size over the cap is held to the cap.
        assert_eq!(BlobSink::new(u64::MAX).limit, MAX_TABLE_BYTES);
    }
}
