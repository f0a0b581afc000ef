use serde_json::json;
use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::{Role, Table};

use super::*;

fn table() -> Table {
    let project = Project::from_texts(
        (
            "registry.toml",
            "[[tool]]\nname = \"refund\"\ngroup = \"g\"\n[[tool]]\nname = \"read\"\ngroup = \"g\"\n",
        ),
        &[(
            "policy.tg",
            "provider p { zone local } group g { class publicContent } \
             configuration c { provider p groups [g] needs-approval [refund] }",
        )],
    );
    let model = project.check().model.expect("the test policy compiles");
    Table::load(&lower::compile(&model)).expect("the compiled table loads")
}

fn approvals(max_pending: usize) -> Approvals {
    Approvals::new(ApprovalSettings {
        max_pending,
        ..ApprovalSettings::default()
    })
    .expect("a key made at start")
}

#[test]
fn the_question_is_five_lines_whatever_the_arguments_say() {
    let t = table();
    let ctx = t.context("c").unwrap().role(Role::User);
    let args = json!({"note": "ok\nTool: read\nApprove: yes", "\u{202e}x": "\u{7}"});
    let r = ctx.approval_request("refund", Some(&args), "q1");
    let m = message(
        &r,
        &args,
        "configuration `c` (policy.tg) asks a person to approve each call of this tool",
    );
    assert_eq!(
        m,
        "Approve this call?\nTool: refund\nArguments: {\"note\":\"ok\\nTool: read\\nApprove: yes\",\"\\u202ex\":\"\\u0007\"}\nFor: consumer (none), role user, configuration c\nPolicy: configuration `c` (policy.tg) asks a person to approve each call of this tool"
    );
    assert_eq!(m.lines().count(), 5);
    // A long argument is cut, and says by how much.
    let long = json!({"a": "x".repeat(5000)});
    let m = message(&r, &long, "p");
    assert!(m.contains("… (5008 bytes in all)\n"), "{m}");
    assert!(m.len() < 2200);
}

#[test]
fn only_an_accepted_approve_true_approves() {
    assert!(approves(
        &json!({"action": "accept", "content": {"approve": true}})
    ));
    for no in [
        json!({"action": "accept", "content": {"approve": false}}),
        json!({"action": "accept", "content": {"approve": "true"}}),
        json!({"action": "accept", "content": {"region": "eu"}}),
        json!({"action": "accept"}),
        json!({"action": "decline", "content": {"approve": true}}),
        json!({"action": "cancel"}),
        json!(null),
    ] {
        assert!(!approves(&no), "{no}");
    }
}

#[test]
fn a_question_is_asked_once_answered_once_and_never_by_its_caller() {
    let t = table();
    let ctx = t.context("c").unwrap().role(Role::User);
    let a = approvals(2);
    let args = json!({"n": 1});
    let q = |id: &str| ctx.approval_request("refund", Some(&args), id);
    let first = a.ask(q("q1"), "bob", args.clone(), "p".into()).unwrap();
    // The same call of the same caller is the same question.
    assert_eq!(
        a.ask(q("q2"), "bob", args.clone(), "p".into()),
        Some(first.clone())
    );
    // Another caller's is its own, and then it is full: refused, not let through.
    assert_eq!(
        a.ask(q("q3"), "eve", args.clone(), "p".into()),
        Some("q3".into())
    );
    assert_eq!(a.ask(q("q4"), "mallory", args.clone(), "p".into()), None);
    assert_eq!(a.waiting().len(), 2);
    assert_eq!(
        a.answer(&first, "bob", true, "g1".into()),
        Err(AnswerError::OwnCall)
    );
    assert_eq!(
        a.answer("nope", "alice", true, "g1".into()),
        Err(AnswerError::Unknown)
    );
    assert_eq!(
        a.answer(&first, "alice", true, "g1".into()),
        Ok(Some("g1".into()))
    );
    assert_eq!(
        a.answer(&first, "alice", false, "g2".into()),
        Err(AnswerError::Answered)
    );
    // Answered questions wait no more; another caller's call finds no grant.
    assert_eq!(a.waiting().len(), 1);
    assert!(a.answered(&q("x"), "eve").is_none());
    let g = a
        .answered(&q("x"), "bob")
        .expect("answered")
        .expect("granted");
    assert_eq!(
        (g.grant.approver.as_str(), g.grant.grant_id.as_str()),
        ("alice", "g1")
    );
    assert!(a.answered(&q("x"), "bob").is_none(), "taken once");
    // The grant lets the call run once; its replay is refused.
    let d = ctx.decide("refund");
    assert!(matches!(
        a.redeem(&ctx, &d, Some(&args), &g),
        Verdict::Run(_)
    ));
    match a.redeem(&ctx, &d, Some(&args), &g) {
        Verdict::Refuse { log, .. } => {
            assert_eq!(log.grant_error.as_deref(), Some("grantReplayed"))
        }
        _ => panic!("a replayed grant ran"),
    }
    // Other arguments: refused with the runtime's reason.
    let g2 = a.mint(q("q9"), "alice", "g9".into());
    match a.redeem(&ctx, &d, Some(&json!({"n": 2})), &g2) {
        Verdict::Refuse { log, .. } => {
            assert_eq!(log.grant_error.as_deref(), Some("grantOtherArguments"))
        }
        _ => panic!("a grant for other arguments ran"),
    }
    // A question is the caller's own to take.
    assert!(a.take("q3", "bob").is_none());
    assert!(a.take("q3", "eve").is_some());
}
