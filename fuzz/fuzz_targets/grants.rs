//! Approval grants as a peer sends them: any bytes are read strictly (a
//! malformed grant is `grantMalformed`, a read one writes back the same),
//! and no bytes a fuzzer makes let a call that needs approval run (it
//! cannot sign with the trusted key).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgate_runtime::approval::SignedGrant;
use toolgate_runtime::{Role, Table, TrustedKeys};

const NOW: u64 = 1_800_000_000;

fn fixture() -> &'static (Table, TrustedKeys) {
    static F: OnceLock<(Table, TrustedKeys)> = OnceLock::new();
    F.get_or_init(|| {
        let reg = "[[tool]]\nname = \"refund\"\ngroup = \"g\"\n";
        let policy = "provider p { zone local } group g { class publicContent } configuration c { provider p groups [g] needs-approval [refund] }";
        let p = toolgate_compiler::project::Project::from_texts(("r.toml", reg), &[("p.tg", policy)]);
        let t = toolgate_compiler::lower::table(&p.check().model.unwrap()).unwrap();
        let key = toolgate_compiler::signing::generate().unwrap();
        (t, TrustedKeys::from_pem(&key.public_pem).unwrap())
    })
}

fuzz_target!(|data: &[u8]| {
    let (t, keys) = fixture();
    let ctx = t.context("c").unwrap().role(Role::User);
    let d = ctx.decide("refund");
    match SignedGrant::from_json(data) {
        Ok(g) => {
            let back = SignedGrant::from_json(&serde_json::to_vec(&g).unwrap()).unwrap();
            assert_eq!(back, g, "a read grant writes back the same");
            assert!(ctx.check_grant(&d, None, &g, keys, NOW).is_err(), "a forged grant was accepted");
        }
        Err(e) => assert_eq!(e.code(), "grantMalformed"),
    }
    let r = ctx.check_call_granted("refund", None, Some(data), Some(keys), NOW);
    let refused = r.expect_err("a fuzzed grant let a call run");
    assert_eq!(refused.refusal.kind, toolgate_runtime::RefusalKind::ApprovalRequired);
    assert!(refused.refusal.grant_error.is_some());
});
