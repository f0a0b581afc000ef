//! Approval grants (docs/approvals.md, "Grants"): a signed grant lets
//! exactly the call it approves run, under the table that asked, until it
//! expires; every other grant is refused with its own code.

use serde_json::{json, Value};
use toolgate_compiler::signing;
use toolgate_reference::table;
use toolgate_runtime::approval::{arguments_digest, Grant, GrantError, SignedGrant};
use toolgate_runtime::{Context, Role, Table, TrustedKeys};

const REG: &str = "[[tool]]\nname = \"read\"\ngroup = \"g\"\n\
[[tool]]\nname = \"refund\"\ngroup = \"g\"\n\
[[tool]]\nname = \"wipe\"\ngroup = \"g\"\n";

const POLICY: &str = "provider p { zone local }
group g { class publicContent }
configuration c {
  provider p
  groups [g]
  exclude [wipe]
  needs-approval [refund]
}
configuration d {
  provider p
  groups [g]
  needs-approval [refund]
}
profile careful { allow [group g] }
consumer bot { profile careful }
consumer other { profile careful }
";

const NOW: u64 = 1_800_000_000;

struct Approver {
    pair: signing::KeyPair,
}

impl Approver {
    fn new() -> Approver {
        Approver {
            pair: signing::generate().unwrap(),
        }
    }
    fn sign(&self, grant: Grant) -> SignedGrant {
        let key = signing::read_secret_key(&self.pair.secret_pem).unwrap();
        signing::sign_grant(grant, &key)
    }
    fn trusted(&self) -> TrustedKeys {
        TrustedKeys::from_pem(&self.pair.public_pem).unwrap()
    }
}

fn ctx<'t>(t: &'t Table, config: &str, consumer: &str) -> Context<'t> {
    t.context(config)
        .unwrap()
        .role(Role::User)
        .known_consumer(Some(consumer))
        .unwrap()
}

fn args() -> Value {
    json!({"order": 17, "amount": "12.50"})
}

/// A grant of `refund` with `args()` for `bot` in `c`, under `t`.
fn grant(t: &Table) -> Grant {
    let c = ctx(t, "c", "bot");
    Grant {
        request: c.approval_request("refund", Some(&args()), "req-1"),
        approver: "alice".into(),
        grant_id: "g-1".into(),
        expires_at: NOW + 300,
    }
}

/// Check `g` for a call of `tool` by `consumer` in `config` (`call`).
fn check(
    t: &Table,
    (config, consumer, tool): (&str, &str, &str),
    a: &Value,
    g: &SignedGrant,
    keys: &TrustedKeys,
    now: u64,
) -> Result<(), GrantError> {
    let c = ctx(t, config, consumer);
    let d = c.decide(tool);
    c.check_grant(&d, Some(a), g, keys, now)
}

#[test]
fn the_arguments_digest_is_of_canonical_json() {
    // Member order and spacing do not change it; absent arguments are `{}`.
    let a: Value = serde_json::from_str(r#"{"b": 1, "a": [true, null]}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a":[true,null],"b":1}"#).unwrap();
    assert_eq!(arguments_digest(Some(&a)), arguments_digest(Some(&b)));
    assert_eq!(arguments_digest(None), arguments_digest(Some(&json!({}))));
    // sha256 of `{}`.
    assert_eq!(
        arguments_digest(None),
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
    assert_ne!(
        arguments_digest(Some(&a)),
        arguments_digest(Some(&json!({"b": 2, "a": [true, null]})))
    );
}

#[test]
fn the_question_names_the_call_and_the_table() {
    let t = table(REG, &[POLICY]);
    let r = ctx(&t, "c", "bot").approval_request("refund", Some(&args()), "req-1");
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({
            "tool": "refund",
            "argumentsDigest": arguments_digest(Some(&args())),
            "configuration": "c",
            "consumer": "bot",
            "role": "user",
            "tableDigest": t.digest_hex(),
            "requestId": "req-1",
        })
    );
}

#[test]
fn a_grant_lets_exactly_its_call_run() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let g = a.sign(grant(&t));
    assert_eq!(
        check(&t, ("c", "bot", "refund"), &args(), &g, &a.trusted(), NOW),
        Ok(())
    );
    // Up to and including its expiry second.
    assert_eq!(
        check(
            &t,
            ("c", "bot", "refund"),
            &args(),
            &g,
            &a.trusted(),
            NOW + 300
        ),
        Ok(())
    );
    // It survives the wire: written and read back, it still verifies.
    let text = serde_json::to_vec(&g).unwrap();
    let back = SignedGrant::from_json(&text).unwrap();
    assert_eq!(back, g);
    assert_eq!(
        check(
            &t,
            ("c", "bot", "refund"),
            &args(),
            &back,
            &a.trusted(),
            NOW
        ),
        Ok(())
    );
    assert_eq!(back.key_id(), a.pair.key_id);
}

#[test]
fn a_grant_for_another_call_is_refused_with_the_field_that_differs() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let keys = a.trusted();
    let g = a.sign(grant(&t));
    let other_args = json!({"order": 17, "amount": "1250.00"});
    let e = check(&t, ("c", "bot", "refund"), &other_args, &g, &keys, NOW).unwrap_err();
    assert_eq!(e.code(), "grantOtherArguments");
    assert_eq!(
        e,
        GrantError::OtherCall {
            field: "arguments",
            granted: arguments_digest(Some(&args())),
            asked: arguments_digest(Some(&other_args)),
        }
    );
    let e = check(&t, ("c", "other", "refund"), &args(), &g, &keys, NOW).unwrap_err();
    assert_eq!(
        (e.code(), e.to_string()),
        (
            "grantOtherConsumer",
            "the grant approves consumer `bot`, not this call's `other`".to_string()
        )
    );
    let e = check(&t, ("d", "bot", "refund"), &args(), &g, &keys, NOW).unwrap_err();
    assert_eq!(
        (e.code(), e.to_string()),
        (
            "grantOtherCall",
            "the grant approves configuration `c`, not this call's `d`".to_string()
        )
    );
    let e = check(&t, ("c", "bot", "read"), &args(), &g, &keys, NOW).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the grant approves tool `refund`, not this call's `read`"
    );
    // Another role: the same consumer as an administrator.
    let c = t
        .context("c")
        .unwrap()
        .role(Role::Admin)
        .known_consumer(Some("bot"))
        .unwrap();
    let e = c
        .check_grant(&c.decide("refund"), Some(&args()), &g, &keys, NOW)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the grant approves role `user`, not this call's `admin`"
    );
}

#[test]
fn a_table_swapped_while_the_call_waits_voids_the_grant() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let g = a.sign(grant(&t));
    // The administrator narrows nothing about `refund`, yet the person
    // approved under the old policy: approve again.
    let newer = table(
        REG,
        &[&format!(
            "{POLICY}\nconfiguration e {{ provider p\n groups [g] }}\n"
        )],
    );
    assert_ne!(newer.digest_hex(), t.digest_hex());
    let e = check(
        &newer,
        ("c", "bot", "refund"),
        &args(),
        &g,
        &a.trusted(),
        NOW,
    )
    .unwrap_err();
    assert_eq!(
        e,
        GrantError::OtherTable {
            granted: t.digest_hex(),
            current: newer.digest_hex()
        }
    );
    assert_eq!(e.code(), "grantOtherTable");
}

#[test]
fn an_expired_grant_is_refused() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let g = a.sign(grant(&t));
    let e = check(
        &t,
        ("c", "bot", "refund"),
        &args(),
        &g,
        &a.trusted(),
        NOW + 301,
    )
    .unwrap_err();
    assert_eq!(
        e,
        GrantError::Expired {
            expired_at: NOW + 300,
            now: NOW + 301
        }
    );
    assert_eq!(e.code(), "grantExpired");
}

#[test]
fn a_foreign_forged_or_altered_grant_is_refused() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let mallory = Approver::new();
    // Signed by a key nobody trusts.
    let g = mallory.sign(grant(&t));
    let e = check(&t, ("c", "bot", "refund"), &args(), &g, &a.trusted(), NOW).unwrap_err();
    assert_eq!(e, GrantError::UntrustedKey(mallory.pair.key_id.clone()));
    assert_eq!(e.code(), "grantUntrustedKey");
    // A trusted key's name on another key's signature.
    let mut forged = mallory.sign(grant(&t));
    forged.public_key = a.sign(grant(&t)).public_key;
    let e = check(
        &t,
        ("c", "bot", "refund"),
        &args(),
        &forged,
        &a.trusted(),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e, GrantError::BadSignature);
    // Altered after signing: a later expiry, other arguments.
    let mut later = a.sign(grant(&t));
    later.grant.expires_at += 3600;
    let e = check(
        &t,
        ("c", "bot", "refund"),
        &args(),
        &later,
        &a.trusted(),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e.code(), "grantBadSignature");
    let mut moved = a.sign(grant(&t));
    moved.grant.request.arguments_digest = arguments_digest(Some(&json!({"amount": "9999"})));
    let e = check(
        &t,
        ("c", "bot", "refund"),
        &json!({"amount": "9999"}),
        &moved,
        &a.trusted(),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e, GrantError::BadSignature);
    // A signature of zeros.
    let mut unsigned = a.sign(grant(&t));
    unsigned.signature = "0".repeat(128);
    let e = check(
        &t,
        ("c", "bot", "refund"),
        &args(),
        &unsigned,
        &a.trusted(),
        NOW,
    )
    .unwrap_err();
    assert_eq!(e, GrantError::BadSignature);
}

#[test]
fn no_grant_makes_a_refused_tool_run() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let mut g = grant(&t);
    g.request = ctx(&t, "c", "bot").approval_request("wipe", Some(&args()), "req-2");
    let g = a.sign(g);
    let e = check(&t, ("c", "bot", "wipe"), &args(), &g, &a.trusted(), NOW).unwrap_err();
    assert_eq!(
        e,
        GrantError::Refused {
            tool: "wipe".into()
        }
    );
    assert_eq!(e.code(), "grantRefusedTool");
}

#[test]
fn a_malformed_grant_is_refused_as_malformed() {
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let good = serde_json::to_value(a.sign(grant(&t))).unwrap();
    let mut cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"null".to_vec(),
        b"{\"grant\": 1}".to_vec(),
        vec![b' '; toolgate_runtime::approval::MAX_GRANT_BYTES + 1],
    ];
    let mut extra = good.clone();
    extra["grant"]["admin"] = json!(true);
    cases.push(serde_json::to_vec(&extra).unwrap());
    let mut short = good.clone();
    short["publicKey"] = json!("abcd");
    cases.push(serde_json::to_vec(&short).unwrap());
    let mut not_hex = good.clone();
    not_hex["signature"] = json!("z".repeat(128));
    cases.push(serde_json::to_vec(&not_hex).unwrap());
    for case in cases {
        let e = SignedGrant::from_json(&case).unwrap_err();
        assert_eq!(
            e.code(),
            "grantMalformed",
            "{}",
            String::from_utf8_lossy(&case[..case.len().min(60)])
        );
    }
    assert!(SignedGrant::from_json(&serde_json::to_vec(&good).unwrap()).is_ok());
}

#[test]
fn check_call_granted_is_the_one_check_with_a_grant_and_spends_it_once() {
    use toolgate_runtime::RefusalKind;
    let t = table(REG, &[POLICY]);
    let a = Approver::new();
    let keys = a.trusted();
    let c = ctx(&t, "c", "bot");
    let mut g = grant(&t);
    g.grant_id = "spent-once".into();
    let text = serde_json::to_vec(&a.sign(g)).unwrap();
    let args = args();
    let call = |grant: Option<&[u8]>, keys: Option<&TrustedKeys>| {
        c.check_call_granted("refund", Some(&args), grant, keys, NOW)
            .map(|d| d.tool)
            .map_err(|r| (r.refusal.kind, r.refusal.grant_error))
    };
    // A tool that needs no approval runs without one; a refused tool is refused as always.
    assert!(c.check_call_granted("read", None, None, None, NOW).is_ok());
    let wipe = c
        .check_call_granted("wipe", None, Some(&text), Some(&keys), NOW)
        .unwrap_err();
    assert_eq!(wipe.refusal.grant_error, None);
    assert_ne!(wipe.refusal.kind, RefusalKind::ApprovalRequired);
    // No grant; a grant and no keys to check it with; a malformed one.
    assert_eq!(
        call(None, Some(&keys)),
        Err((RefusalKind::ApprovalRequired, None))
    );
    assert_eq!(
        call(Some(&text), None),
        Err((
            RefusalKind::ApprovalRequired,
            Some("grantUntrustedKey".into())
        ))
    );
    assert_eq!(
        call(Some(b"{"), Some(&keys)),
        Err((RefusalKind::ApprovalRequired, Some("grantMalformed".into())))
    );
    // The grant: once.
    assert_eq!(call(Some(&text), Some(&keys)), Ok("refund"));
    let replay = c
        .check_call_granted("refund", Some(&args), Some(&text), Some(&keys), NOW)
        .unwrap_err();
    assert_eq!(
        (
            replay.refusal.grant_error.as_deref(),
            replay.refusal.detail.as_deref()
        ),
        (
            Some("grantReplayed"),
            Some("grant spent-once was already used: a grant lets one call run")
        )
    );
}
