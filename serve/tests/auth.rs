//! The service with credentials: who asks comes from the bearer token,
//! never from the request (docs/authzen.md, "What is trusted"), over real
//! HTTP on 127.0.0.1 with tokens minted from real Ed25519 keys.

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use common::*;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::SigningKey;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use toolgate_auth::{key_digest, Authenticator};
use toolgate_serve::RequestLimits;

const KEY: &str = "pep-key-9d1c0e5b2a";
/// A key bound to configuration support-chat-eu.
const EU_KEY: &str = "pep-key-eu-41aa07";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn idp() -> SigningKey {
    SigningKey::from_bytes(&[11; 32])
}

fn mint(key: &SigningKey, claims: Value) -> String {
    let der = key.to_pkcs8_der().expect("PKCS#8");
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("idp-1".into());
    encode(&header, &claims, &EncodingKey::from_ed_der(der.as_bytes())).expect("a token")
}

fn token(consumer: &str, exp: u64) -> String {
    mint(
        &idp(),
        json!({"iss": "https://idp.example", "aud": "toolgate", "sub": "agent-7",
               "exp": exp, "azp": consumer}),
    )
}

async fn start_authenticated() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a directory");
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "idp-1",
                                 "x": b64.encode(idp().verifying_key().as_bytes())}]});
    std::fs::write(dir.path().join("jwks.json"), jwks.to_string()).expect("jwks");
    let creds = format!(
        "[[key]]\nname = \"trusted-pep\"\nsha256 = \"{}\"\nroles = [\"admin\", \"user\", \"none\"]\n\n\
         [[key]]\nname = \"eu-pep\"\nsha256 = \"{}\"\nconfiguration = \"support-chat-eu\"\n\n\
         [jwt]\njwks = \"jwks.json\"\nissuer = \"https://idp.example\"\naudience = \"toolgate\"\nconsumer-claim = \"azp\"\nconfiguration-claim = \"cfg\"\n",
        key_digest(KEY),
        key_digest(EU_KEY)
    );
    let path = dir.path().join("credentials.toml");
    std::fs::write(&path, creds).expect("credentials");
    let auth = Authenticator::from_file(&path).expect("credentials load");
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_auth(auth)
    })
    .await;
    (s, dir)
}

fn ask(subject: Value, tool: &str) -> Value {
    json!({"subject": subject, "action": {"name": "call"},
           "resource": {"type": "tool", "id": tool},
           "context": {"configuration": "support-chat"}})
}

async fn post(s: &Running, bearer: Option<&str>, body: &Value) -> (u16, Value, Option<String>) {
    let mut r = s
        .client
        .post(format!("{}/access/v1/evaluation", s.base))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(b) = bearer {
        r = r.header("authorization", format!("Bearer {b}"));
    }
    let r = r.send().await.expect("request");
    let status = r.status().as_u16();
    let challenge = r
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let v = serde_json::from_str(&r.text().await.unwrap_or_default()).unwrap_or(Value::Null);
    (status, v, challenge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_valid_token_nothing_is_decided() {
    let (s, _dir) = start_authenticated().await;
    let body = ask(json!({"type": "user", "id": "alice"}), "get_help_article");
    let (status, v, challenge) = post(&s, None, &body).await;
    assert_eq!(
        (status, &v["error"]["code"]),
        (401, &json!("unauthenticated"))
    );
    assert_eq!(
        challenge.as_deref(),
        Some("Bearer realm=\"toolgate\", error=\"invalid_request\", error_description=\"no bearer token (Authorization: Bearer TOKEN)\"")
    );
    let (status, _, challenge) = post(&s, Some("pep-key-9d1c0e5b2b"), &body).await;
    assert_eq!(status, 401);
    assert!(challenge
        .unwrap_or_default()
        .contains("error=\"invalid_token\""));
    let (status, v, _) = post(&s, Some(&token("support-bot", now() - 600)), &body).await;
    assert_eq!(status, 401);
    assert_eq!(
        v["error"]["message"],
        "the bearer token is not accepted: ExpiredSignature"
    );
    let forged = mint(
        &SigningKey::from_bytes(&[12; 32]),
        json!({"iss": "https://idp.example", "aud": "toolgate", "sub": "x", "exp": now() + 300}),
    );
    let (status, v, _) = post(&s, Some(&forged), &body).await;
    assert_eq!(
        (status, &v["error"]["message"]),
        (
            401,
            &json!("the bearer token is not accepted: InvalidSignature")
        )
    );
    // Health, readiness and metrics need no token.
    assert_eq!(s.get("/health").await.status, 200);
    assert_eq!(s.get("/ready").await.status, 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_not_the_request_says_which_consumer_asks() {
    let (s, _dir) = start_authenticated().await;
    let support = token("support-bot", now() + 300);
    // No consumer in the request: the token's, held to its profile.
    let (status, v, _) = post(
        &s,
        Some(&support),
        &ask(json!({"type": "user", "id": "alice"}), "refund.issue"),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["context"]["reason"], json!("notInProfile"));
    // Another consumer's name in the request: refused, never that profile.
    let other = json!({"type": "user", "id": "alice", "properties": {"consumer": "billing-bot"}});
    let (status, v, _) = post(&s, Some(&support), &ask(other, "refund.issue")).await;
    assert_eq!(
        (status, &v["error"]["code"]),
        (403, &json!("consumerNotAllowed")),
        "{v}"
    );
    // A token may not claim admin (its roles are user and none)...
    let admin = json!({"type": "user", "id": "alice", "properties": {"role": "admin"}});
    let (status, v, _) = post(&s, Some(&support), &ask(admin.clone(), "get_help_article")).await;
    assert_eq!(
        (status, &v["error"]["code"]),
        (403, &json!("roleNotAllowed"))
    );
    // ...and the API key the operator allowed it may.
    let (status, v, _) = post(&s, Some(KEY), &ask(admin, "get_help_article")).await;
    assert_eq!(status, 200, "{v}");
    s.stop().await;
}

/// A caller bound to a configuration (a key's `configuration`, a token's
/// `configuration-claim`) asks under it: a request that names none is
/// decided under it, one that names another is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credentials_not_the_request_say_which_configuration_asks() {
    let (s, _dir) = start_authenticated().await;
    let alice = json!({"type": "user", "id": "alice"});
    // payment.status is above support-chat-eu's ceiling, offered in support-chat.
    let mut unnamed = ask(alice.clone(), "payment.status");
    unnamed["context"] = json!({});
    let bound_token = mint(
        &idp(),
        json!({"iss": "https://idp.example", "aud": "toolgate", "sub": "agent-7",
               "exp": now() + 300, "cfg": "support-chat-eu"}),
    );
    for bearer in [EU_KEY, bound_token.as_str()] {
        let (status, v, _) = post(&s, Some(bearer), &unnamed).await;
        assert_eq!(
            (status, &v["decision"], &v["context"]["reason"]),
            (200, &json!(false), &json!("trustZone")),
            "{v}"
        );
        let (status, v, _) = post(&s, Some(bearer), &ask(alice.clone(), "get_help_article")).await;
        assert_eq!(
            (status, &v["error"]["code"], &v["error"]["message"]),
            (
                403,
                &json!("configurationNotAllowed"),
                &json!("this caller is bound to configuration `support-chat-eu` and may not ask under `support-chat`")
            ),
            "{v}"
        );
        let mut own = ask(alice.clone(), "get_help_article");
        own["context"]["configuration"] = json!("support-chat-eu");
        let (status, v, _) = post(&s, Some(bearer), &own).await;
        assert_eq!(status, 200, "{v}");
    }
    // An unbound key names its configuration as the request does.
    let (status, v, _) = post(&s, Some(KEY), &ask(alice, "get_help_article")).await;
    assert_eq!(status, 200, "{v}");
    s.stop().await;
}
