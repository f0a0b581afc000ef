//! Tokens minted with real Ed25519 keys, checked as an edge checks them.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::SigningKey;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;
use toolgate_auth::{key_digest, AuthError, Authenticator};
use toolgate_runtime::Role;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn signing(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn jwks(keys: &[(&str, &SigningKey)]) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let keys: Vec<_> = keys
        .iter()
        .map(|(kid, k)| {
            json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": kid,
                   "x": b64.encode(k.verifying_key().as_bytes())})
        })
        .collect();
    json!({ "keys": keys }).to_string()
}

fn mint(key: &SigningKey, kid: &str, claims: serde_json::Value) -> String {
    let der = key.to_pkcs8_der().expect("PKCS#8");
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.into());
    encode(&header, &claims, &EncodingKey::from_ed_der(der.as_bytes())).expect("a token")
}

fn authenticator(dir: &std::path::Path) -> Authenticator {
    std::fs::write(dir.join("jwks.json"), jwks(&[("k1", &signing(1))])).expect("jwks");
    let text = format!(
        r#"
[[key]]
name = "gateway-eu"
sha256 = "{}"
roles = ["admin", "user", "none"]
set-enforcement = true

[jwt]
jwks = "jwks.json"
issuer = "https://idp.example"
audience = "toolgate"
roles = ["user", "none"]
consumer-claim = "azp"
role-claim = "toolgate_role"
approver-claim = "toolgate_approver"

[[key]]
name = "alice"
sha256 = "{}"
approves = true
"#,
        key_digest("s3cret-key-of-gateway-eu"),
        key_digest("alice-approves"),
    );
    Authenticator::from_toml(&text, dir).expect("credentials")
}

fn claims(extra: serde_json::Value) -> serde_json::Value {
    let mut c = json!({"iss": "https://idp.example", "aud": "toolgate", "sub": "agent-7",
                       "exp": now() + 300, "azp": "support-bot", "toolgate_role": "user"});
    if let (Some(c), Some(e)) = (c.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            c.insert(k.clone(), v.clone());
        }
    }
    c
}

fn invalid(a: &Authenticator, token: &str) -> String {
    match a.authenticate(Some(&format!("Bearer {token}"))) {
        Err(AuthError::Invalid(why)) => why,
        other => panic!("accepted or missing: {other:?}"),
    }
}

#[test]
fn an_api_key_is_known_by_its_digest_and_a_token_by_its_signature_and_claims() {
    let dir = tempfile_dir("ok");
    let a = authenticator(&dir);
    let c = a
        .authenticate(Some("Bearer s3cret-key-of-gateway-eu"))
        .expect("the key");
    assert_eq!(c.name, "gateway-eu");
    assert_eq!(c.roles, vec![Role::Admin, Role::User, Role::None]);
    assert!(c.set_enforcement);
    let token = mint(&signing(1), "k1", claims(json!({})));
    let c = a
        .authenticate(Some(&format!("Bearer {token}")))
        .expect("the token");
    assert_eq!(
        (
            c.name.as_str(),
            c.consumer.as_deref(),
            c.role,
            c.set_enforcement
        ),
        ("agent-7", Some("support-bot"), Some(Role::User), false)
    );
    assert_eq!(a.authenticate(None), Err(AuthError::Missing));
    assert_eq!(
        a.authenticate(Some("Basic YWxpY2U6cHc=")),
        Err(AuthError::Missing)
    );
    assert_eq!(
        invalid(&a, "s3cret-key-of-gateway-e"),
        "not a key this service knows"
    );
}

#[test]
fn an_approver_is_a_key_that_approves_or_a_token_whose_claim_is_true() {
    let dir = tempfile_dir("approver");
    let a = authenticator(&dir);
    let key = |k: &str| {
        a.authenticate(Some(&format!("Bearer {k}")))
            .expect("the key")
    };
    assert!(key("alice-approves").approves);
    assert!(!key("s3cret-key-of-gateway-eu").approves);
    let token = |extra| {
        let t = mint(&signing(1), "k1", claims(extra));
        a.authenticate(Some(&format!("Bearer {t}")))
    };
    assert!(
        token(json!({"toolgate_approver": true}))
            .expect("a token")
            .approves
    );
    assert!(
        !token(json!({"toolgate_approver": false}))
            .expect("a token")
            .approves
    );
    assert!(!token(json!({})).expect("a token").approves);
    // One claim, one value: a string or a list is neither yes nor no.
    for v in [json!("true"), json!([true]), json!(1)] {
        assert_eq!(
            token(json!({"toolgate_approver": v})),
            Err(AuthError::Invalid(
                "claim `toolgate_approver` is not true or false".into()
            ))
        );
    }
}

#[test]
fn expired_foreign_and_misaddressed_tokens_are_refused() {
    let dir = tempfile_dir("bad");
    let a = authenticator(&dir);
    let expired = mint(&signing(1), "k1", claims(json!({"exp": now() - 600})));
    assert_eq!(invalid(&a, &expired), "ExpiredSignature");
    let forged = mint(&signing(2), "k1", claims(json!({})));
    assert_eq!(invalid(&a, &forged), "InvalidSignature");
    let unknown_kid = mint(&signing(2), "k2", claims(json!({})));
    assert_eq!(
        invalid(&a, &unknown_kid),
        "no key of the JWKS matches its `kid`"
    );
    let issuer = mint(
        &signing(1),
        "k1",
        claims(json!({"iss": "https://evil.example"})),
    );
    assert_eq!(invalid(&a, &issuer), "InvalidIssuer");
    let audience = mint(&signing(1), "k1", claims(json!({"aud": "other-service"})));
    assert_eq!(invalid(&a, &audience), "InvalidAudience");
    let admin = mint(&signing(1), "k1", claims(json!({"toolgate_role": "admin"})));
    assert_eq!(
        invalid(&a, &admin),
        "role `admin` is not one this service accepts from tokens"
    );
    let mut tampered = mint(&signing(1), "k1", claims(json!({})));
    tampered.insert(tampered.len() / 2, 'A');
    assert!(!invalid(&a, &tampered).is_empty());
}

#[test]
fn a_credentials_file_that_lets_nobody_in_or_stores_a_key_in_clear_is_an_error() {
    let dir = tempfile_dir("files");
    assert_eq!(
        Authenticator::from_toml("", &dir).err(),
        Some(toolgate_auth::CredentialsError::Invalid(
            "no `[[key]]` and no `[jwt]`: nobody could be authenticated".into()
        ))
    );
    let e = Authenticator::from_toml(
        "[[key]]\nname = \"a\"\nsha256 = \"my-key-in-clear\"\n",
        &dir,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert_eq!(
        e,
        "key `a`: sha256 is not 64 hex digits (the SHA-256 of the key, never the key)"
    );
    let e = Authenticator::from_toml(
        &format!(
            "[[key]]\nname = \"a\"\nsha256 = \"{}\"\nroles = [\"root\"]\n",
            key_digest("k")
        ),
        &dir,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert_eq!(e, "key `a`: role `root` is not admin, user or none");
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolgate-auth-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a directory");
    d
}

#[test]
fn an_api_key_may_be_bound_to_a_consumer_and_a_role_of_its_roles() {
    let dir = tempfile_dir("bound");
    let text = format!(
        "[[key]]\nname = \"review\"\nsha256 = \"{}\"\nconsumer = \"review-bot\"\nrole = \"user\"\n",
        key_digest("review-key")
    );
    let a = Authenticator::from_toml(&text, &dir).expect("credentials");
    let c = a.authenticate(Some("Bearer review-key")).expect("the key");
    assert_eq!(
        (c.consumer.as_deref(), c.role, c.roles),
        (
            Some("review-bot"),
            Some(Role::User),
            vec![Role::User, Role::None]
        )
    );
    let e = Authenticator::from_toml(
        &format!(
            "[[key]]\nname = \"a\"\nsha256 = \"{}\"\nrole = \"admin\"\n",
            key_digest("k")
        ),
        &dir,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert_eq!(
        e,
        "key `a`: role `admin` is not among its `roles` (user, none)"
    );
    let e = Authenticator::from_toml(
        &format!(
            "[[key]]\nname = \"a\"\nsha256 = \"{}\"\nconsumer = \"\"\n",
            key_digest("k")
        ),
        &dir,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert_eq!(e, "key `a`: `consumer` is empty");
}

/// A token signed over exactly `payload` (raw JSON text, so a claim may
/// be written twice), EdDSA with `kid`.
fn mint_raw(key: &SigningKey, kid: &str, payload: &str) -> String {
    use ed25519_dalek::Signer;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(json!({"alg": "EdDSA", "typ": "JWT", "kid": kid}).to_string());
    let body = b64.encode(payload);
    let signing_input = format!("{header}.{body}");
    let sig = key.sign(signing_input.as_bytes());
    format!("{signing_input}.{}", b64.encode(sig.to_bytes()))
}

#[test]
fn a_token_not_yet_valid_an_issuer_array_and_a_claim_named_twice_are_refused() {
    let dir = tempfile_dir("claims");
    let a = authenticator(&dir);
    // A well-formed raw token is accepted: the raw signing is right.
    let exp = now() + 300;
    let ok = mint_raw(
        &signing(1),
        "k1",
        &format!(
            r#"{{"iss":"https://idp.example","aud":"toolgate","sub":"agent-7","exp":{exp},"azp":"support-bot"}}"#
        ),
    );
    assert_eq!(
        a.authenticate(Some(&format!("Bearer {ok}")))
            .expect("accepted")
            .consumer
            .as_deref(),
        Some("support-bot")
    );
    // nbf an hour ahead (past the 30 s leeway): not valid yet.
    let early = mint(&signing(1), "k1", claims(json!({"nbf": now() + 3600})));
    assert_eq!(invalid(&a, &early), "ImmatureSignature");
    let early = mint(&signing(1), "k1", claims(json!({"nbf": now() - 10})));
    assert!(a.authenticate(Some(&format!("Bearer {early}"))).is_ok());
    // iss as an array that holds the issuer: not one issuer.
    let issuers = mint(
        &signing(1),
        "k1",
        claims(json!({"iss": ["https://idp.example", "https://evil.example"]})),
    );
    assert_eq!(invalid(&a, &issuers), "claim `iss` is not a string");
    // The consumer claim twice: the first would be the proxy's, the last the client's.
    let twice = mint_raw(
        &signing(1),
        "k1",
        &format!(
            r#"{{"iss":"https://idp.example","aud":"toolgate","sub":"agent-7","exp":{exp},"azp":"support-bot","azp":"billing-bot"}}"#
        ),
    );
    assert_eq!(
        invalid(&a, &twice),
        "claim `azp` is given twice at line 1 column 104"
    );
}
