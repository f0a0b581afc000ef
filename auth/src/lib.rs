//! Who is asking, from what a caller proves, never from what it says: one
//! implementation for every network edge of toolgate (the decision service
//! and the MCP gateway).
//!
//! A caller presents `Authorization: Bearer TOKEN`, checked two ways, as
//! the operator's credentials file (TOML, [`Authenticator::from_toml`]) says:
//!
//! - **API keys**, stored as the SHA-256 of the key (hex), never the key:
//!   each names its caller and what it may assert.
//! - **JWTs** (OAuth 2.1 bearer tokens, as the MCP authorization
//!   specification describes): the signature checked against a JWKS file,
//!   the issuer, the audience and the expiry required and checked;
//!   claims named in the file give the caller's consumer and role.
//!
//! ```toml
//! [[key]]
//! name = "gateway-eu"
//! sha256 = "…64 hex digits…"        # printf %s "$KEY" | sha256sum
//! roles = ["user", "none"]          # the roles this caller may claim (default)
//! set-enforcement = false           # whether it may set context.enforcement
//! consumer = "review-bot"           # optional: the MCP consumer this key is
//! role = "user"                     # optional: the role it acts as (one of `roles`)
//! configuration = "review-chat"     # optional: the one configuration it may use
//! approves = false                  # whether it may approve others' pending calls (gateway)
//!
//! [jwt]
//! jwks = "jwks.json"                # relative to this file, or
//! # jwks-url = "https://idp.example/.well-known/jwks.json"   # fetched at start by the edge
//! issuer = "https://idp.example"
//! audience = "toolgate"
//! roles = ["user", "none"]
//! consumer-claim = "azp"            # optional: the token's consumer
//! role-claim = "toolgate_role"      # optional: the token's role (one of `roles`)
//! configuration-claim = "toolgate_configuration"   # optional: the token's one configuration
//! approver-claim = "toolgate_approver"  # optional: a boolean claim, true for an approver
//! ```

use std::collections::HashMap;
use std::path::Path;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use toolgate_runtime::Role;

/// The largest credentials or JWKS file read.
const MAX_FILE: u64 = 1 << 20;
/// The longest bearer token looked at (a JWT with many claims is a few KB).
pub const MAX_TOKEN_BYTES: usize = 16 << 10;

/// A caller that proved who it is, and what it may assert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The key's name, or the token's `sub`.
    pub name: String,
    /// The roles it may claim for a subject.
    pub roles: Vec<Role>,
    /// Whether it may set the trust-zone enforcement of a request.
    pub set_enforcement: bool,
    /// The MCP consumer the token names (its `consumer-claim`), if any.
    pub consumer: Option<String>,
    /// The role the token names (its `role-claim`), if any.
    pub role: Option<Role>,
    /// The one configuration it may be decided under (a key's
    /// `configuration`, a token's `configuration-claim`), if it is bound.
    pub configuration: Option<String>,
    /// Whether it may approve another caller's pending call (a key's
    /// `approves`, a token's `approver-claim` being `true`;
    /// docs/approvals.md, "Who approves").
    pub approves: bool,
}

/// Why a request is not authenticated: answered 401 with
/// `WWW-Authenticate: Bearer` and [`AuthError::code`] as its `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that is neither a known key nor a valid JWT.
    Invalid(String),
}

impl AuthError {
    /// The OAuth error code (RFC 6750): `invalid_request` or `invalid_token`.
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::Missing => "invalid_request",
            AuthError::Invalid(_) => "invalid_token",
        }
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Missing => f.write_str("no bearer token (Authorization: Bearer TOKEN)"),
            AuthError::Invalid(why) => write!(f, "the bearer token is not accepted: {why}"),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct KeysFile {
    #[serde(default)]
    key: Vec<KeyEntry>,
    jwt: Option<JwtEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct KeyEntry {
    name: String,
    sha256: String,
    #[serde(default = "default_roles")]
    roles: Vec<String>,
    #[serde(default)]
    set_enforcement: bool,
    consumer: Option<String>,
    role: Option<String>,
    configuration: Option<String>,
    #[serde(default)]
    approves: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct JwtEntry {
    jwks: Option<String>,
    jwks_url: Option<String>,
    issuer: String,
    audience: String,
    #[serde(default = "default_roles")]
    roles: Vec<String>,
    #[serde(default)]
    set_enforcement: bool,
    consumer_claim: Option<String>,
    role_claim: Option<String>,
    configuration_claim: Option<String>,
    approver_claim: Option<String>,
}

fn default_roles() -> Vec<String> {
    vec!["user".into(), "none".into()]
}

fn roles_of(names: &[String], what: &str) -> Result<Vec<Role>, String> {
    names
        .iter()
        .map(|n| {
            Role::from_name(n)
                .ok_or_else(|| format!("{what}: role `{n}` is not admin, user or none"))
        })
        .collect()
}

struct Jwt {
    issuer: String,
    keys: JwkSet,
    validation: Validation,
    roles: Vec<Role>,
    set_enforcement: bool,
    consumer_claim: Option<String>,
    role_claim: Option<String>,
    configuration_claim: Option<String>,
    approver_claim: Option<String>,
}

/// The credentials an edge accepts.
pub struct Authenticator {
    /// SHA-256 of each key -> its caller.
    keys: HashMap<[u8; 32], Caller>,
    jwt: Option<Jwt>,
}

fn read(path: &Path) -> Result<String, String> {
    let bytes = toolgate_runtime::host::read_file(path, MAX_FILE).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))
}

fn hex32(s: &str) -> Option<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Why credentials could not be read. Each says what to fix, with the file
/// it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    /// The file cannot be read (missing, over the size bound, not UTF-8).
    #[error("{0}")]
    Read(String),
    /// The file reads, but a key, the JWT settings or the JWKS are wrong,
    /// or a `jwks-url` could not be fetched.
    #[error("{0}")]
    Invalid(String),
}

impl CredentialsError {
    /// A stable code for the kind: `unreadable` or `invalid`.
    pub fn code(&self) -> &'static str {
        match self {
            CredentialsError::Read(_) => "unreadable",
            CredentialsError::Invalid(_) => "invalid",
        }
    }
}

/// Why a `jwks-url` could not be fetched (the edge's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

impl Authenticator {
    /// The credentials file at `path` (a JWKS path in it is relative to it).
    pub fn from_file(path: &Path) -> Result<Authenticator, CredentialsError> {
        let text = read(path).map_err(CredentialsError::Read)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Authenticator::from_toml(&text, dir)
            .map_err(|e| CredentialsError::Invalid(format!("{}: {e}", path.display())))
    }

    /// Credentials from TOML text; `dir` is where a relative JWKS path starts.
    pub fn from_toml(text: &str, dir: &Path) -> Result<Authenticator, CredentialsError> {
        Authenticator::from_toml_fetching(text, dir, None)
    }

    /// [`Authenticator::from_file`], a `jwks-url` fetched by `fetch` (the
    /// edge's own HTTP client, bounded in time and size; the URL's text or why not).
    pub fn from_file_fetching(
        path: &Path,
        fetch: Fetch<'_>,
    ) -> Result<Authenticator, CredentialsError> {
        let text = read(path).map_err(CredentialsError::Read)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Authenticator::from_toml_fetching(&text, dir, Some(fetch))
            .map_err(|e| CredentialsError::Invalid(format!("{}: {e}", path.display())))
    }

    /// [`Authenticator::from_toml`] with a fetcher for `jwks-url`.
    pub fn from_toml_fetching(
        text: &str,
        dir: &Path,
        fetch: Option<Fetch<'_>>,
    ) -> Result<Authenticator, CredentialsError> {
        Authenticator::read_toml(text, dir, fetch).map_err(CredentialsError::Invalid)
    }

    fn read_toml(
        text: &str,
        dir: &Path,
        fetch: Option<Fetch<'_>>,
    ) -> Result<Authenticator, String> {
        let file: KeysFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut keys = HashMap::new();
        for k in file.key {
            let what = format!("key `{}`", k.name);
            let digest = hex32(&k.sha256).ok_or_else(|| {
                format!(
                    "{what}: sha256 is not 64 hex digits (the SHA-256 of the key, never the key)"
                )
            })?;
            let roles = roles_of(&k.roles, &what)?;
            let role = match &k.role {
                None => None,
                Some(r) => {
                    let role = roles_of(std::slice::from_ref(r), &what)?[0];
                    if !roles.contains(&role) {
                        return Err(format!(
                            "{what}: role `{r}` is not among its `roles` ({})",
                            k.roles.join(", ")
                        ));
                    }
                    Some(role)
                }
            };
            if k.consumer.as_deref() == Some("") {
                return Err(format!("{what}: `consumer` is empty"));
            }
            if k.configuration.as_deref() == Some("") {
                return Err(format!("{what}: `configuration` is empty"));
            }
            let caller = Caller {
                name: k.name.clone(),
                roles,
                set_enforcement: k.set_enforcement,
                consumer: k.consumer.clone(),
                role,
                configuration: k.configuration.clone(),
                approves: k.approves,
            };
            if keys.insert(digest, caller).is_some() {
                return Err(format!("{what}: the same key is listed twice"));
            }
        }
        let jwt = match file.jwt {
            None => None,
            Some(j) => {
                let (text, shown) = match (&j.jwks, &j.jwks_url) {
                    (Some(p), None) => {
                        let path = dir.join(p);
                        (read(&path)?, path.display().to_string())
                    }
                    (None, Some(url)) => {
                        let fetch = fetch.ok_or_else(|| {
                            format!(
                                "jwt: `jwks-url` is not fetched here; give `jwks = FILE` ({url})"
                            )
                        })?;
                        (fetch(url).map_err(|e| e.0)?, url.clone())
                    }
                    _ => {
                        return Err("jwt: give exactly one of `jwks` (a file) and `jwks-url`".into())
                    }
                };
                let set: JwkSet =
                    serde_json::from_str(&text).map_err(|e| format!("{shown}: not a JWKS: {e}"))?;
                if set.keys.is_empty() {
                    return Err(format!("{shown}: the JWKS holds no key"));
                }
                // Asymmetric algorithms only: a JWKS is public.
                let mut validation = Validation::new(Algorithm::RS256);
                validation.algorithms = vec![
                    Algorithm::RS256,
                    Algorithm::RS384,
                    Algorithm::RS512,
                    Algorithm::PS256,
                    Algorithm::ES256,
                    Algorithm::ES384,
                    Algorithm::EdDSA,
                ];
                validation.set_issuer(&[j.issuer.as_str()]);
                validation.set_audience(&[j.audience.as_str()]);
                validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
                // A token not valid yet is refused (RFC 7519 §4.1.5).
                validation.validate_nbf = true;
                validation.leeway = 30;
                Some(Jwt {
                    issuer: j.issuer.clone(),
                    keys: set,
                    validation,
                    roles: roles_of(&j.roles, "jwt")?,
                    set_enforcement: j.set_enforcement,
                    consumer_claim: j.consumer_claim,
                    role_claim: j.role_claim,
                    configuration_claim: j.configuration_claim,
                    approver_claim: j.approver_claim,
                })
            }
        };
        if keys.is_empty() && jwt.is_none() {
            return Err("no `[[key]]` and no `[jwt]`: nobody could be authenticated".into());
        }
        Ok(Authenticator { keys, jwt })
    }

    /// The issuer tokens must come from, when JWTs are accepted: the
    /// authorization server an MCP gateway names in its protected-resource
    /// metadata (RFC 9728).
    pub fn issuer(&self) -> Option<&str> {
        self.jwt.as_ref().map(|j| j.issuer.as_str())
    }

    /// The caller of a request, from its `Authorization` header value.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, AuthError> {
        let value = authorization.ok_or(AuthError::Missing)?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or(AuthError::Missing)?;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError::Invalid(format!(
                "longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(c) = self.keys.get(&digest) {
            return Ok(c.clone());
        }
        match &self.jwt {
            Some(j) if token.matches('.').count() == 2 => self.jwt_caller(j, token),
            _ => Err(AuthError::Invalid("not a key this service knows".into())),
        }
    }

    fn jwt_caller(&self, j: &Jwt, token: &str) -> Result<Caller, AuthError> {
        let bad = |e: String| AuthError::Invalid(e);
        let header = jsonwebtoken::decode_header(token).map_err(|e| bad(e.to_string()))?;
        let jwk = match &header.kid {
            Some(kid) => j.keys.find(kid),
            None if j.keys.keys.len() == 1 => j.keys.keys.first(),
            None => None,
        }
        .ok_or_else(|| bad("no key of the JWKS matches its `kid`".into()))?;
        let key = DecodingKey::from_jwk(jwk).map_err(|e| bad(e.to_string()))?;
        // The token's algorithm must be one of the accepted (asymmetric)
        // ones; the library then checks it against the key's family.
        if !j.validation.algorithms.contains(&header.alg) {
            return Err(bad(format!("algorithm {:?} is not accepted", header.alg)));
        }
        let mut validation = j.validation.clone();
        validation.algorithms = vec![header.alg];
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &key,
            &validation,
        )
        .map_err(|e| bad(e.to_string()))?;
        let claims = data.claims;
        unique_claims(token).map_err(bad)?;
        // One issuer, as RFC 7519 §4.1.1 has it: an array is not one.
        if !matches!(claims.get("iss"), Some(serde_json::Value::String(_))) {
            return Err(bad("claim `iss` is not a string".into()));
        }
        let text = |name: &Option<String>| -> Result<Option<String>, AuthError> {
            match name {
                None => Ok(None),
                Some(n) => match claims.get(n) {
                    None => Ok(None),
                    Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(bad(format!("claim `{n}` is not a string"))),
                },
            }
        };
        let role = match text(&j.role_claim)? {
            None => None,
            Some(r) => {
                let role = Role::from_name(&r)
                    .ok_or_else(|| bad(format!("role `{r}` is not admin, user or none")))?;
                if !j.roles.contains(&role) {
                    return Err(bad(format!(
                        "role `{r}` is not one this service accepts from tokens"
                    )));
                }
                Some(role)
            }
        };
        Ok(Caller {
            name: claims
                .get("sub")
                .and_then(|s| s.as_str())
                .unwrap_or_default()
                .to_string(),
            roles: j.roles.clone(),
            set_enforcement: j.set_enforcement,
            consumer: text(&j.consumer_claim)?,
            role,
            configuration: text(&j.configuration_claim)?,
            // One claim, one value: `true` approves, `false` or absent does
            // not, anything else is refused rather than read as either.
            approves: match &j.approver_claim {
                None => false,
                Some(n) => match claims.get(n) {
                    None | Some(serde_json::Value::Bool(false)) => false,
                    Some(serde_json::Value::Bool(true)) => true,
                    Some(_) => return Err(bad(format!("claim `{n}` is not true or false"))),
                },
            },
        })
    }
}

/// Refuse a token whose payload names a claim twice: JSON parsers keep the
/// first or the last of two, so a duplicated `azp` or `role` would mean
/// what the last reader picks. Called after the signature is verified.
fn unique_claims(token: &str) -> Result<(), String> {
    use base64::Engine;
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Unique;
    impl<'de> Visitor<'de> for Unique {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object of claims")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(name) = m.next_key::<String>()? {
                if !seen.insert(name.clone()) {
                    return Err(serde::de::Error::custom(format!(
                        "claim `{}` is given twice",
                        toolgate_runtime::names::shown(&name)
                    )));
                }
                m.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let payload = token.split('.').nth(1).unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| format!("the payload is not base64url: {e}"))?;
    serde_json::Deserializer::from_slice(&bytes)
        .deserialize_map(Unique)
        .map_err(|e| e.to_string())
}

/// How an edge fetches a `jwks-url`: the document's text, or why not.
pub type Fetch<'a> = &'a dyn Fn(&str) -> Result<String, FetchError>;

/// The SHA-256 of a key, hex: what the credentials file stores for it.
pub fn key_digest(key: &str) -> String {
    toolgate_runtime::format::sha256_hex(key.as_bytes())
}
