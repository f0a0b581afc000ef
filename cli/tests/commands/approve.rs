//! `toolgate approve`: the signed grant of an approval request, which
//! `toolgate serve --approver-key` lets the call run with, once.

use std::process::Stdio;

use serde_json::{json, Value};
use sha2::Digest;

use crate::common::serve::{body_json, serve};
use crate::common::*;

#[test]
fn a_grant_toolgate_approve_signs_lets_the_call_serve_decides_run_once() {
    let dir = temp("approve");
    let o = bin()
        .args(["keygen", "-o"])
        .arg(dir.join("approver"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = dir.join("t.tgt");
    let o = bin()
        .args(["compile", "policies/approvals", "-o"])
        .arg(&table)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = serve(&[
        "--table".as_ref(),
        table.as_os_str(),
        "--approver-key".as_ref(),
        dir.join("approver.pub").as_os_str(),
        "--default-configuration".as_ref(),
        "support-desk".as_ref(),
    ]);
    let digest = s.line.trim().rsplit(' ').next().unwrap().to_string();
    assert_eq!(digest.len(), 64, "{}", s.line);
    // What a host's ApprovalRequired carries: the call, under this table.
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let request = json!({
        "tool": "refund.issue",
        "argumentsDigest": format!("sha256:{}", hex(&sha2::Sha256::digest(br#"{"order":17}"#))),
        "configuration": "support-desk",
        "consumer": null,
        "role": "user",
        "tableDigest": digest,
        "requestId": "q-1",
    });
    std::fs::write(dir.join("request.json"), request.to_string()).unwrap();
    let o = bin()
        .args(["approve"])
        .arg(dir.join("request.json"))
        .arg("--key")
        .arg(dir.join("approver.key"))
        .args(["--approver", "alice", "--id", "g-cli-1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let grant: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (
            &grant["grant"]["request"],
            &grant["grant"]["approver"],
            &grant["grant"]["grantId"]
        ),
        (&request, &json!("alice"), &json!("g-cli-1"))
    );
    let call = json!({"subject": {"type": "user", "id": "u"}, "action": {"name": "call"},
                      "resource": {"type": "tool", "id": "refund.issue"},
                      "context": {"arguments": {"order": 17}, "grant": grant}})
    .to_string();
    let first = body_json(&s.evaluate("", &call));
    assert_eq!(
        (&first["decision"], &first["context"]["approval"]["outcome"]),
        (&json!(true), &json!("granted")),
        "{first}"
    );
    let again = body_json(&s.evaluate("", &call));
    assert_eq!(
        (
            &again["decision"],
            &again["context"]["approval"]["grantError"]
        ),
        (&json!(false), &json!("grantReplayed")),
        "{again}"
    );
    s.stop();
    // Not a request: a usage error naming what one holds.
    let mut child = bin()
        .args(["approve", "-", "--key"])
        .arg(dir.join("approver.key"))
        .args(["--approver", "alice"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"tool": "refund.issue"}"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &stderr(&o),
        "-: not an approval request (missing field `argumentsDigest`",
    );
}
