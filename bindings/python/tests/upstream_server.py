"""The upstream MCP server of the proxy tests (stdio, FastMCP of the
official SDK): every tool of the mcp-profiles registry plus one the registry
does not know. Every call that reaches it is appended to $UPSTREAM_LOG (one
JSON line: tool, arguments), so a test sees exactly what was forwarded."""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.fastmcp import FastMCP

TOOLS = [
    "search_help_center",
    "get_help_article",
    "payment.status",
    "refund.issue",
    "mcp_crm_customer-360_lookup",
    "mcp_crm_customer-360_timeline",
    "mcp_crm_customer-360_contacts",
    "mcp_crm_case_create",
    "mcp_crm_contact_delete",
    "mcp_billing_invoice_list",
    "mcp_billing_invoice_get",
    "mcp_billing_refund_status",
    # Not in the registry: never offered, never forwarded.
    "mcp_crm_secret_export",
]

server = FastMCP("upstream")


def make(name: str) -> Any:
    def tool(query: str = "") -> str:
        log = os.environ.get("UPSTREAM_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"tool": name, "arguments": {"query": query}}) + "\n")
        return f"{name}: {query}"

    return tool


for n in TOOLS:
    server.add_tool(make(n), name=n, description=f"The {n} tool.")

if __name__ == "__main__":
    server.run("stdio")
