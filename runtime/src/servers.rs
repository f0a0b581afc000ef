//! What a caller may learn of an MCP server besides its tools: its
//! resources, resource templates and prompts (docs/gate-semantics.md,
//! "Resources and prompts"). The rule is the tools' own, so a server the
//! policy hides from a caller cannot be found through anything it serves:
//! a caller sees server `S` when the table offers it at least one tool of
//! `S` (a registered tool of group `mcp_S`). A server the registry holds no
//! tool of is one the policy does not know, and is seen by nobody.

use crate::context::Context;

impl Context<'_> {
    /// Whether this caller may see MCP server `server`'s resources and
    /// prompts: the table offers it at least one of the server's tools.
    pub fn sees_server(&self, server: &str) -> bool {
        let spec = self.table().spec();
        let Some(group) = spec
            .groups
            .iter()
            .position(|g| g.name.strip_prefix("mcp_") == Some(server))
        else {
            return false;
        };
        spec.tools
            .iter()
            .filter(|t| t.remote && t.group as usize == group)
            .any(|t| self.decide(&t.name).allowed)
    }
}

#[cfg(test)]
mod tests {
    use crate::Table;

    #[test]
    fn an_unknown_server_is_seen_by_nobody() {
        let t = Table::load(include_bytes!("../../conformance/tables/mcp-profiles.tgt")).unwrap();
        let ctx = t.context("support-chat").unwrap();
        assert!(!ctx.sees_server("no-such-server"));
        assert!(!ctx.sees_server(""));
    }
}
