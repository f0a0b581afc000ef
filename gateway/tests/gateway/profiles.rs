//! Who is offered and may call what: each consumer exactly its profile
//! (a refused call never reaches the server), the reference servers
//! listing exactly what they forward, the official Python client, stealth
//! with the decision log and metrics keeping the truth, and several
//! configurations served over one set of upstreams.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use rmcp::model::ProtocolVersion;
use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

#[test]
fn each_consumer_is_offered_and_may_call_exactly_its_profile_and_a_refused_call_never_reaches_the_server(
) {
    let dir = temp("gw-profiles");
    let log = dir.join("calls.log");
    let project = crm_project("gw-profiles-project");
    let cfg = config(&dir, &project, &crm_upstream_logged(&log), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let all = [
        "mcp_crm_customer-360_lookup",
        "mcp_crm_refund_issue",
        "mcp_crm_notes_append",
    ];
    runtime().block_on(async {
        for version in [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25] {
            let support = client(&gw.url, SUPPORT_KEY, version.clone()).await;
            assert_eq!(
                listed(&support).await,
                names(&["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"]),
                "{version:?}"
            );
            let billing = client(&gw.url, BILLING_KEY, version.clone()).await;
            assert_eq!(listed(&billing).await, names(&all), "{version:?}");
            for name in all {
                for (who, c) in [("support-bot", &support), ("billing-bot", &billing)] {
                    let offered = listed(c).await.contains(name);
                    let before = calls_seen(&log).len();
                    let answer = call(c, name).await;
                    let server_name = name.trim_start_matches("mcp_crm_");
                    assert_eq!(answer.is_ok(), offered, "{who} {name}: {answer:?}");
                    let after = calls_seen(&log);
                    if offered {
                        assert_eq!(
                            answer.unwrap(),
                            format!("[{{\"type\":\"text\",\"text\":\"{server_name}(7) done\"}}]")
                        );
                        assert_eq!(after.last().map(String::as_str), Some(server_name));
                    } else {
                        assert_eq!(after.len(), before, "{who} {name} reached the server");
                        let e = answer.unwrap_err();
                        assert_eq!(e["code"], -31001, "{e}");
                        assert_eq!(e["data"]["toolgate"]["kind"], "notInProfile", "{e}");
                        assert_eq!(e["data"]["toolgate"]["profile"], "support-readonly", "{e}");
                        assert_eq!(
                            e["data"]["tableDigest"].as_str().map(str::len),
                            Some(64),
                            "{e}"
                        );
                        // The runtime's classify (`toolgate classify`) reads the
                        // answer back as the same kind.
                        let answer = json!({"jsonrpc": "2.0", "id": 1, "error": e}).to_string();
                        let envelope = toolgate_runtime::Envelope::read(answer.as_bytes());
                        let outcome =
                            toolgate_runtime::classify_raw(&envelope.answer(None, None, None));
                        let v = serde_json::to_value(&outcome).unwrap();
                        assert_eq!(v["refusal"]["kind"], "notInProfile", "{v}");
                    }
                }
            }
            // A name no upstream lists and a name no registry could hold:
            // unknown tools, as MCP servers answer them.
            let e = call(&billing, "mcp_crm_nothing").await.unwrap_err();
            assert_eq!(
                (e["code"].as_i64(), e["message"].as_str()),
                (Some(-32602), Some("Unknown tool: mcp_crm_nothing"))
            );
            let e = call(&billing, "mcp_crm_a\nb").await.unwrap_err();
            assert_eq!(e["message"], "Unknown tool: mcp_crm_a\\u000ab");
            let _ = support.cancel().await;
            let _ = billing.cancel().await;
        }
    });
    assert!(
        !calls_seen(&log).contains(&"refund_issue".to_string())
            || calls_seen(&log)
                .iter()
                .filter(|c| *c == "refund_issue")
                .count()
                == 2,
        "refund_issue reached the server only from billing-bot: {:?}",
        calls_seen(&log)
    );
    drop(gw);
}

/// The reference servers behind the gateway, with the example policy
/// (policies/real-servers): for every registered tool and every caller, the
/// tool is listed exactly when a call of it is forwarded to its server.
#[test]
fn the_reference_servers_behind_the_gateway_list_exactly_what_they_forward() {
    let dir = temp("gw-real");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let o = Command::new("git")
        .current_dir(&repo)
        .args(["init", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "git must be installed");
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/real-servers");
    let bin_dir = mcp_bin();
    let exe = |n: &str| bin_dir.join(n).to_string_lossy().into_owned();
    let upstreams = format!(
        "[[upstream]]\nname = \"git\"\ncommand = [{:?}, \"--repository\", {:?}]\n\n\
         [[upstream]]\nname = \"time\"\ncommand = [{:?}, \"--local-timezone\", \"Etc/UTC\"]\n\n\
         [[upstream]]\nname = \"fetch\"\ncommand = [{:?}]\n",
        exe("mcp-server-git"),
        repo.to_string_lossy(),
        exe("mcp-server-time"),
        exe("mcp-server-fetch"),
    );
    let creds = credentials(&dir);
    let text = format!(
        "listen = \"127.0.0.1:0\"\nproject = {:?}\nregistry = {:?}\nconfiguration = \"developer-chat\"\n\
         [identity]\nauth = {:?}\n\n{upstreams}",
        project.to_string_lossy(),
        project.join("registry.toml").to_string_lossy(),
        creds.to_string_lossy(),
    );
    let cfg = dir.join("gateway.toml");
    std::fs::write(&cfg, text).unwrap();
    // review-bot is the policy's consumer; the two keys bound to crm
    // consumers are not this policy's, so this gateway takes a token for it.
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    // The tools: the entries before the prompts (fetch lists one).
    let registered: Vec<String> = std::fs::read_to_string(project.join("registry.toml"))
        .unwrap()
        .lines()
        .take_while(|l| *l != "[[prompt]]")
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect();
    assert_eq!(registered.len(), 15);
    runtime().block_on(async {
        let review = token(&idp(), "review-bot", now() + 300);
        let user = mint(
            &idp(),
            json!({"iss": "https://idp.example", "aud": "toolgate-gateway", "sub": "dev", "exp": now() + 300}),
        );
        let mut offered_counts = Vec::new();
        for (who, t) in [("admin", ADMIN_KEY.to_string()), ("user", user), ("review-bot", review)] {
            let c = client(&gw.url, &t, ProtocolVersion::V_2026_07_28).await;
            let offered = listed(&c).await;
            offered_counts.push((who, offered.len()));
            for name in &registered {
                let answer = call(&c, name).await;
                // Forwarded: the server answered (a result, or its own error
                // without toolgate's refusal in it).
                let forwarded = match &answer {
                    Ok(_) => true,
                    Err(e) => e["data"].get("toolgate").is_none() && e["code"] != -32602,
                };
                assert_eq!(forwarded, offered.contains(name), "{who} {name}: {answer:?}");
            }
            if who == "review-bot" {
                // A hidden remote tool (outside the profile, names visible to
                // admins only) answers word for word as a name nobody has.
                let hidden = call(&c, "mcp_git_git_commit").await.unwrap_err();
                let nobody = call(&c, "mcp_git_git_commiT").await.unwrap_err();
                let shown = |mut e: Value, name: &str| {
                    e["data"]["decisionId"] = Value::Null;
                    e.to_string().replace(name, "NAME")
                };
                assert_eq!(
                    shown(hidden.clone(), "mcp_git_git_commit"),
                    shown(nobody, "mcp_git_git_commiT"),
                    "{hidden}"
                );
                assert_eq!(hidden["code"], -32602);
            }
            let _ = c.cancel().await;
        }
        // Admins get all 15; users all but the admin-only git_reset; the
        // review bot its read-only profile (7 git tools and the 2 time tools).
        assert_eq!(
            offered_counts,
            vec![("admin", 15), ("user", 14), ("review-bot", 9)]
        );
    });
    drop(gw);
}

/// The official Python SDK (2.x) as the client: the same lists and answers.
#[test]
fn the_official_python_client_is_offered_and_refused_as_the_profile_says() {
    let dir = temp("gw-python");
    let project = crm_project("gw-python-project");
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let client = fixture("python_client.py");
    let o = Command::new(python())
        .arg(&client)
        .args([
            &gw.url,
            SUPPORT_KEY,
            "mcp_crm_refund_issue",
            "mcp_crm_notes_append",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        v,
        json!({
            "tools": ["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"],
            "calls": {
                "mcp_crm_refund_issue": {"code": -31001, "kind": "notInProfile"},
                "mcp_crm_notes_append": {"text": ["notes_append(7) done"]},
            }
        })
    );
    drop(gw);
}

/// Stealth mode answers a refused tool exactly as an unknown one; the
/// decision log and the metrics still say what was decided.
#[test]
fn stealth_hides_every_refusal_and_the_log_and_metrics_keep_the_truth() {
    let dir = temp("gw-stealth");
    let project = crm_project("gw-stealth-project");
    let log = dir.join("decisions.jsonl");
    let extra = format!(
        "stealth = true\ndecision-log = {:?}\n",
        log.to_string_lossy()
    );
    let cfg = config(&dir, &project, &crm_upstream(), &extra);
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2026_07_28).await;
        assert_eq!(listed(&c).await.len(), 2);
        let refused = call(&c, "mcp_crm_refund_issue").await.unwrap_err();
        let unknown = call(&c, "mcp_crm_no_such_tool").await.unwrap_err();
        assert_eq!(
            refused,
            json!({"code": -32602, "message": "Unknown tool: mcp_crm_refund_issue"})
        );
        assert_eq!(
            unknown,
            json!({"code": -32602, "message": "Unknown tool: mcp_crm_no_such_tool"})
        );
        let _ = c.cancel().await;
        let metrics = reqwest::get(format!("{}/metrics", gw.url.trim_end_matches("/mcp")))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_contains(&metrics, "toolgate_gateway_listed_tools 3\n");
        assert_contains(&metrics, "toolgate_gateway_unregistered_tools 0\n");
        assert_contains(
            &metrics,
            "toolgate_decisions_total{configuration=\"support-chat\",reason=\"notInProfile\",stage=\"call\"} 1\n",
        );
    });
    gw.stop();
    let records: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = records
        .iter()
        .find(|r| r["stage"] == "call" && r["input"]["resource"]["id"] == "mcp_crm_refund_issue")
        .expect("the refused call is logged");
    assert_eq!(call["result"]["decision"], false);
    assert_eq!(call["result"]["context"]["reason"], "notInProfile");
    assert_eq!(
        call["input"]["subject"]["properties"]["consumer"],
        "support-bot"
    );
    assert_eq!(call["path"], "mcp/tools/call");
    assert_eq!(call["table_digest"].as_str().map(str::len), Some(64));
    assert!(records.iter().any(|r| r["stage"] == "offer"));
}

/// One gateway serves several configurations, each at `/mcp/NAME`, over one
/// set of upstream processes; the decision log carries the configuration,
/// and an unknown one is a 404 with a did-you-mean for an authenticated caller.
#[test]
fn one_gateway_serves_several_configurations_over_one_set_of_upstreams() {
    let dir = temp("gw-configs");
    let project = crm_project("gw-configs-project");
    std::fs::write(
        project.join("policy.tg"),
        format!("{CRM_POLICY}\nconfiguration billing-chat {{\n  groups [mcp_crm]\n  exclude [mcp_crm_refund_issue]\n}}\n"),
    )
    .unwrap();
    let log = dir.join("calls.log");
    let decisions = dir.join("decisions.jsonl");
    let upstream = crm_upstream_logged(&log);
    let extra = format!(
        "configurations = [\"billing-chat\", \"support-chat\"]\ndecision-log = {:?}",
        decisions.to_string_lossy()
    );
    let cfg = config(&dir, &project, &upstream, &extra);
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let base = gw.url.clone();
    runtime().block_on(async {
        let support = client(&base, BILLING_KEY, ProtocolVersion::V_2026_07_28).await;
        assert_eq!(listed(&support).await.len(), 3);
        let billing = client(&format!("{base}/billing-chat"), BILLING_KEY, ProtocolVersion::V_2026_07_28).await;
        assert_eq!(
            listed(&billing).await,
            names(&["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"])
        );
        let refused = call(&billing, "mcp_crm_refund_issue").await.expect_err("excluded here");
        assert_eq!(refused["data"]["toolgate"]["kind"], json!("configurationExcluded"), "{refused}");
        assert!(call(&support, "mcp_crm_refund_issue").await.is_ok());
        let _ = support.cancel().await;
        let _ = billing.cancel().await;
        let (status, _, body) = post(
            &format!("{base}/billing-chatt"),
            &[("authorization", &format!("Bearer {BILLING_KEY}"))],
            list_request(),
        )
        .await;
        assert_eq!(status, 404, "{body}");
        assert_contains(&body, "this gateway serves no configuration `billing-chatt`; did you mean `/mcp/billing-chat`?");
        // Without a credential, no configuration name is learnt.
        let (status, _, body) = post(&format!("{base}/billing-chatt"), &[], list_request()).await;
        assert_eq!(status, 401, "{body}");
        assert!(!body.contains("billing-chat"), "{body}");
        // A key bound to billing-chat is decided under it at `/mcp` too,
        // and only there: another configuration's endpoint is refused.
        let bound = client(&base, BOUND_KEY, ProtocolVersion::V_2026_07_28).await;
        assert_eq!(
            listed(&bound).await,
            names(&["mcp_crm_customer-360_lookup", "mcp_crm_notes_append"])
        );
        let refused = call(&bound, "mcp_crm_refund_issue").await.expect_err("excluded");
        assert_eq!(refused["data"]["toolgate"]["kind"], json!("configurationExcluded"), "{refused}");
        let _ = bound.cancel().await;
        let at_own = client(&format!("{base}/billing-chat"), BOUND_KEY, ProtocolVersion::V_2025_11_25).await;
        assert_eq!(listed(&at_own).await.len(), 2);
        let _ = at_own.cancel().await;
        for (key, url, want) in [
            (
                BOUND_KEY,
                format!("{base}/support-chat"),
                "these credentials are bound to configuration `billing-chat`; this endpoint serves `support-chat` (use `/mcp`)",
            ),
            (
                ELSEWHERE_KEY,
                base.clone(),
                "these credentials are bound to configuration `nowhere-chat`, which this gateway does not serve",
            ),
        ] {
            let (status, _, body) =
                post(&url, &[("authorization", &format!("Bearer {key}"))], list_request()).await;
            assert_eq!(status, 403, "{body}");
            assert_eq!(
                serde_json::from_str::<Value>(&body).unwrap(),
                json!({"error": "configurationNotBound", "message": want})
            );
        }
    });
    gw.stop();
    // One upstream process for both configurations.
    assert_eq!(calls_seen(&log).iter().filter(|l| *l == "start").count(), 1);
    let configurations: BTreeSet<String> = std::fs::read_to_string(&decisions)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["input"]["context"]["configuration"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(configurations, names(&["billing-chat", "support-chat"]));
}
