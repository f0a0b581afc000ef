//! `toolgate registry`: importing an MCP `tools/list` answer.

use crate::common::*;

#[test]
fn import_mcp_reports_bad_names_and_keeps_good_ones() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-mcp", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("list.json");
    std::fs::write(&f, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"lookup","inputSchema":{"type":"object"}},{"name":"bad name!","inputSchema":{"type":"object"}}]}}"#).unwrap();
    let o = run(&[
        "registry",
        "import-mcp",
        "--server",
        "crm",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("name = \"mcp_crm_lookup\"")
            && out.contains("group = \"mcp_crm\"")
            && !out.contains("bad name"),
        "{out}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("TG4001") && err.contains("mcp_crm_bad name!"),
        "{err}"
    );
}
