//! Who the caller is: identity comes from authentication only (an API key,
//! a JWT checked against a JWKS file or one fetched from a URL at start, a
//! trusted proxy's header from the proxy's address only), and every spoof
//! is refused; a caller naming no consumer meets
//! `consumers-without-profile`.

use std::collections::BTreeSet;

use ed25519_dalek::SigningKey;
use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

#[test]
fn identity_comes_from_authentication_and_every_spoof_is_refused() {
    let dir = temp("gw-identity");
    let project = crm_project("gw-identity-project");
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let url = gw.url.clone();
    runtime().block_on(async {
        let bearer = |t: &str| format!("Bearer {t}");
        // No token, a wrong key, an expired token, a token signed by another key.
        let expired = token(&idp(), "billing-bot", now() - 3600);
        let forged = token(&SigningKey::from_bytes(&[99; 32]), "billing-bot", now() + 300);
        for (what, auth, error) in [
            ("no token", None, "invalid_request"),
            ("a wrong key", Some(bearer("support-key-5b1f")), "invalid_token"),
            ("an expired token", Some(bearer(&expired)), "invalid_token"),
            ("a forged token", Some(bearer(&forged)), "invalid_token"),
        ] {
            let headers: Vec<(&str, &str)> = auth
                .as_deref()
                .map(|a| vec![("authorization", a)])
                .unwrap_or_default();
            let (status, www, body) = post(&url, &headers, list_request()).await;
            assert_eq!(status, 401, "{what}: {body}");
            let base = url.trim_end_matches("/mcp");
            assert_eq!(
                www,
                format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource\", error=\"{error}\""),
                "{what}"
            );
        }
        // The metadata document names the resource and the issuer.
        let meta: Value = reqwest::get(format!(
            "{}/.well-known/oauth-protected-resource",
            url.trim_end_matches("/mcp")
        ))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        assert_eq!(meta["resource"], url.as_str());
        assert_eq!(meta["authorization_servers"], json!(["https://idp.example"]));
        // A valid token for another consumer: that consumer's list, all three.
        let billing_jwt = token(&idp(), "billing-bot", now() + 300);
        let c = client(&url, &billing_jwt, ProtocolVersion::V_2026_07_28).await;
        assert_eq!(listed(&c).await.len(), 3);
        let _ = c.cancel().await;
        // A token naming a consumer the policy does not know: refused, never unscoped.
        let stranger = bearer(&token(&idp(), "billing-bott", now() + 300));
        let (status, _, body) = post(&url, &[("authorization", &stranger)], list_request()).await;
        assert_eq!(status, 403, "{body}");
        assert_contains(&body, "the policy knows no consumer `billing-bott`; did you mean `billing-bot`?");
        // Any other client of the same identity provider that can obtain the
        // audience: a genuinely other name is refused as well (the policy does
        // not say `unknown-consumers admitted`), never an unscoped consumer.
        let other = bearer(&token(&idp(), "zz-other-app", now() + 300));
        for request in [list_request(), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "mcp_crm_refund_issue", "arguments": {"id": "1"}}})] {
            let (status, _, body) = post(&url, &[("authorization", &other)], request).await;
            assert_eq!(status, 403, "{body}");
            assert_contains(&body, "the policy knows no consumer `zz-other-app`; bind it to a profile");
        }
        // Two Authorization headers: refused, whichever would come first.
        let (status, _, body) = post(
            &url,
            &[("authorization", &bearer(SUPPORT_KEY)), ("authorization", &bearer(BILLING_KEY))],
            list_request(),
        )
        .await;
        assert_eq!(status, 401, "{body}");
        assert_contains(&body, "the request carries `authorization` more than once");
        // A spoofed consumer header and clientInfo name change nothing.
        let support = bearer(SUPPORT_KEY);
        let (status, _, body) = post(
            &url,
            &[("authorization", &support), ("x-toolgate-consumer", "billing-bot")],
            list_request(),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let got: BTreeSet<String> = v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, names(&["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"]));
        // Marked for this caller only.
        assert_eq!(v["result"]["cacheScope"], "private", "{v}");
        assert_eq!(v["result"]["ttlMs"], 0, "{v}");
        // A foreign Origin (DNS rebinding from a web page) and a Host that is not ours.
        let (status, _, body) = post(
            &url,
            &[("authorization", &support), ("origin", "http://evil.example")],
            list_request(),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        let (status, _, body) = post(
            &url,
            &[("authorization", &support), ("host", "evil.example")],
            list_request(),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        // Mcp-Method / Mcp-Name headers that disagree with the body: refused,
        // never decided on the header.
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "mcp_crm_refund_issue", "arguments": {"id": "1"},
            "_meta": list_request()["params"]["_meta"].clone()}});
        let (status, _, body) = post(
            &url,
            &[
                ("authorization", &support),
                ("mcp-method", "tools/call"),
                ("mcp-name", "mcp_crm_notes_append"),
            ],
            call,
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert_contains(&body, "Mcp-Name");
    });
    drop(gw);
}

/// A JWKS served over HTTP on 127.0.0.1 for a few requests (a bounded loop).
fn serve_jwks(body: String) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}/jwks.json")
}

#[test]
fn a_jwks_url_is_fetched_at_start_and_its_keys_check_the_tokens() {
    let dir = temp("gw-jwks-url");
    let project = crm_project("gw-jwks-url-project");
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let jwks = std::fs::read_to_string(dir.join("jwks.json")).unwrap();
    let url = serve_jwks(jwks);
    let creds = dir.join("credentials.toml");
    let text = std::fs::read_to_string(&creds)
        .unwrap()
        .replace("jwks = \"jwks.json\"", &format!("jwks-url = \"{url}\""));
    std::fs::write(&creds, text).unwrap();
    std::fs::remove_file(dir.join("jwks.json")).unwrap();
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        let c = client(
            &gw.url,
            &token(&idp(), "support-bot", now() + 300),
            ProtocolVersion::V_2026_07_28,
        )
        .await;
        assert_eq!(
            listed(&c).await,
            names(&["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"])
        );
        let _ = c.cancel().await;
    });
    drop(gw);
}

/// A front proxy's header is the identity only from the proxy's address.
#[test]
fn a_trusted_header_counts_only_from_the_proxy() {
    let project = crm_project("gw-header-project");
    for (from, want) in [("127.0.0.1", 200), ("10.9.9.9", 403)] {
        let dir = temp(&format!("gw-header-{want}"));
        let cfg = config(&dir, &project, &crm_upstream(), "");
        let text = std::fs::read_to_string(&cfg).unwrap();
        let at = text.find("[identity]").unwrap();
        let end = text.find("[limits]").unwrap();
        let text = format!(
            "{}[identity.trusted-header]\nconsumer = \"X-Forwarded-Consumer\"\nfrom = [\"{from}\"]\n\n{}",
            &text[..at],
            &text[end..]
        );
        std::fs::write(&cfg, text).unwrap();
        let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
        runtime().block_on(async {
            let (status, _, body) = post(
                &gw.url,
                &[("x-forwarded-consumer", "support-bot")],
                list_request(),
            )
            .await;
            assert_eq!(status, want, "{body}");
            if want == 200 {
                let v: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(
                    v["result"]["tools"].as_array().map(Vec::len),
                    Some(2),
                    "{v}"
                );
                // The header twice (a proxy that appends instead of
                // replacing): refused, never resolved by position.
                let (status, _, body) = post(
                    &gw.url,
                    &[
                        ("x-forwarded-consumer", "billing-bot"),
                        ("x-forwarded-consumer", "support-bot"),
                    ],
                    list_request(),
                )
                .await;
                assert_eq!(status, 403, "{body}");
                assert_contains(
                    &body,
                    "the request carries `x-forwarded-consumer` more than once",
                );
                // Without the header, no identity: refused, never unscoped.
                let (status, _, body) = post(&gw.url, &[], list_request()).await;
                assert_eq!(status, 403, "{body}");
                assert_contains(&body, "header `x-forwarded-consumer` is missing");
            } else {
                assert_contains(&body, "only through the authenticating proxy (10.9.9.9)");
            }
        });
        drop(gw);
    }
}

/// Under `consumers-without-profile refused`, an authenticated caller that
/// names no consumer (a key bound to none) is refused: it is a consumer
/// without a profile.
#[test]
fn a_caller_naming_no_consumer_meets_consumers_without_profile() {
    let dir = temp("gw-unprofiled");
    let project = crm_project("gw-unprofiled-project");
    std::fs::write(
        project.join("policy.tg"),
        format!("{CRM_POLICY}\nconsumers-without-profile refused\n"),
    )
    .unwrap();
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        let (status, _, body) =
            post(&gw.url, &[("authorization", &format!("Bearer {ADMIN_KEY}"))], list_request()).await;
        assert_eq!(status, 403, "{body}");
        assert_contains(&body, "this caller names no consumer, and the policy refuses consumers without a profile");
        // A token without the consumer claim likewise.
        let bare = mint(
            &idp(),
            json!({"iss": "https://idp.example", "aud": "toolgate-gateway", "sub": "dev", "exp": now() + 300}),
        );
        let (status, _, body) =
            post(&gw.url, &[("authorization", &format!("Bearer {bare}"))], list_request()).await;
        assert_eq!(status, 403, "{body}");
        // A bound consumer is served as before.
        let (status, _, body) =
            post(&gw.url, &[("authorization", &format!("Bearer {SUPPORT_KEY}"))], list_request()).await;
        assert_eq!(status, 200, "{body}");
    });
    drop(gw);
}
