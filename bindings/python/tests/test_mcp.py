"""toolgate.mcp end to end: the SDK's real client, the proxy over streamable
HTTP on 127.0.0.1, and a real upstream server (tests/upstream_server.py) over
stdio that records every call it receives."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Optional

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import McpError

import toolgate
from conftest import CORPUS, HERE, SUPPORT_BOT, Compile
from toolgate.mcp import (
    CODE_NOT_IN_PROFILE,
    CODE_REFUSED,
    CODE_UNKNOWN_TOOL,
    CONSUMER_HEADER,
    GoverningProxy,
    refusal_from_error,
    serve_streamable_http,
)

UPSTREAM = HERE / "upstream_server.py"
TIMEOUT = 60  # seconds, for a whole scenario

BILLING_BOT = [
    "payment.status",
    "refund.issue",
    "mcp_crm_customer-360_lookup",
    "mcp_billing_invoice_list",
    "mcp_billing_invoice_get",
    "mcp_billing_refund_status",
]
# Remote tools a user of support-bot may not see (refused, and names hidden from users).
HIDDEN_FROM_SUPPORT_BOT = [
    "mcp_crm_case_create",
    "mcp_crm_contact_delete",
    "mcp_billing_invoice_list",
    "mcp_billing_invoice_get",
    "mcp_billing_refund_status",
]


def mcp_profiles() -> toolgate.Table:
    return toolgate.Table.load(CORPUS / "tables/mcp-profiles.tgt")


class Upstream:
    def __init__(self, log: Path) -> None:
        self.log = log

    def calls(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(line)["tool"] for line in self.log.read_text().splitlines()]


@asynccontextmanager
async def proxy_for(
    tables: Any, tmp: Path, **kw: Any
) -> AsyncIterator[tuple[str, Upstream, GoverningProxy]]:
    log = tmp / "upstream-calls.jsonl"
    env = dict(os.environ, UPSTREAM_LOG=str(log))
    params = StdioServerParameters(command=sys.executable, args=[str(UPSTREAM)], env=env)
    async with stdio_client(params) as (r, w), ClientSession(r, w) as upstream:
        await upstream.initialize()
        proxy = GoverningProxy(upstream, tables, "support-chat", role="user", **kw)
        async with serve_streamable_http(proxy) as url:
            yield url, Upstream(log), proxy


@asynccontextmanager
async def client(url: str, consumer: Optional[str]) -> AsyncIterator[ClientSession]:
    headers = {} if consumer is None else {CONSUMER_HEADER: consumer}
    async with create_mcp_http_client(headers=headers) as http, streamable_http_client(
        url, http_client=http
    ) as (r, w, _), ClientSession(r, w) as s:
        await s.initialize()
        yield s


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(TIMEOUT):
            await scenario()

    asyncio.run(bounded())


async def names(s: ClientSession) -> list[str]:
    return [t.name for t in (await s.list_tools()).tools]


async def refused(s: ClientSession, tool: str) -> Any:
    with pytest.raises(McpError) as e:
        await s.call_tool(tool, {"query": "x"})
    return e.value.error


def test_listing_allowed_calls_and_refusals(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path) as (url, up, _), client(url, "support-bot") as s:
            assert await names(s) == SUPPORT_BOT
            result = await s.call_tool("payment.status", {"query": "order 7"})
            assert result.isError is False
            assert [c.text for c in result.content] == ["payment.status: order 7"]  # type: ignore[union-attr]
            assert up.calls() == ["payment.status"]

            err = await refused(s, "refund.issue")
            assert err.code == CODE_NOT_IN_PROFILE
            assert err.message == "Access denied: `refund.issue` is not in this consumer's access profile"
            r = refusal_from_error(err)
            expected = mcp_profiles().context("support-chat", role="user", consumer="support-bot").refusal(
                "refund.issue"
            )
            assert r == expected
            assert r is not None and r.kind == "notInProfile" and r.profile == "support-readonly"
            assert err.data["profile"] == "support-readonly"

            # Upstream has it, the registry does not: never listed, never forwarded.
            err = await refused(s, "mcp_crm_secret_export")
            assert err.code == CODE_UNKNOWN_TOOL
            assert err.message == "Unknown tool: mcp_crm_secret_export"
            assert up.calls() == ["payment.status"]

    run(scenario)


def test_hidden_remote_names_never_appear(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path) as (url, up, _), client(url, "support-bot") as s:
            received = json.dumps((await s.list_tools()).model_dump(mode="json"))
            for hidden in HIDDEN_FROM_SUPPORT_BOT:
                assert hidden not in received
                err = await refused(s, hidden)
                # Word for word the answer for a name that does not exist.
                missing = await refused(s, "no_such_tool")
                assert err.code == missing.code == CODE_UNKNOWN_TOOL
                text = json.dumps(err.model_dump(mode="json"))
                assert text == json.dumps(missing.model_dump(mode="json")).replace("no_such_tool", hidden)
                assert json.loads(text)["data"]["toolgate"]["kind"] == "notRegistered"
                for other in HIDDEN_FROM_SUPPORT_BOT:
                    if other != hidden:
                        assert other not in text
            assert up.calls() == []

    run(scenario)


def test_profile_per_client(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path) as (url, up, _):
            async with client(url, "support-bot") as a, client(url, "billing-bot") as b, client(url, None) as c:
                assert await names(a) == SUPPORT_BOT
                assert await names(b) == BILLING_BOT
                # No consumer: the configuration alone (this user sees no disabled tool).
                assert await names(c) == [n for n in mcp_profiles().tools if n != "mcp_crm_contact_delete"]
                assert (await b.call_tool("refund.issue", {"query": "r1"})).isError is False
                err = await refused(a, "refund.issue")
                assert refusal_from_error(err).kind == "notInProfile"  # type: ignore[union-attr]
                err = await refused(b, "search_help_center")
                r = refusal_from_error(err)
                assert r is not None and r.profile == "billing-agent" and r.consumer == "billing-bot"
                assert up.calls() == ["refund.issue"]

    run(scenario)


def test_consumer_by_argument_and_by_client_info(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path, consumer="billing-bot") as (url, _, _):
            async with client(url, None) as s:
                assert await names(s) == BILLING_BOT
            async with client(url, "support-bot") as s:  # the header wins
                assert await names(s) == SUPPORT_BOT
        async with proxy_for(mcp_profiles(), tmp_path, consumer_from_client_info=True) as (url, _, _):
            async with create_mcp_http_client() as http, streamable_http_client(url, http_client=http) as (r, w, _):
                from mcp.types import Implementation

                async with ClientSession(r, w, client_info=Implementation(name="support-bot", version="1")) as s:
                    await s.initialize()
                    assert await names(s) == SUPPORT_BOT

    run(scenario)


def test_a_table_swapped_while_a_session_is_open(tmp_path: Path, compile_project: Compile) -> None:
    narrower = compile_project(
        "mcp-profiles",
        "policy.tg",
        'allow [mcp_crm_customer-360_*, group knowledge, "payment.status"]',
        "allow [mcp_crm_customer-360_*, group knowledge]",
    )
    handle = toolgate.TableHandle(mcp_profiles())

    async def scenario() -> None:
        async with proxy_for(handle, tmp_path) as (url, up, _), client(url, "support-bot") as s:
            assert await names(s) == SUPPORT_BOT
            assert (await s.call_tool("payment.status", {"query": "a"})).isError is False
            handle.swap(narrower)
            assert await names(s) == [n for n in SUPPORT_BOT if n != "payment.status"]
            err = await refused(s, "payment.status")
            assert refusal_from_error(err).kind == "notInProfile"  # type: ignore[union-attr]
            assert up.calls() == ["payment.status"]
            handle.swap(mcp_profiles())
            assert (await s.call_tool("payment.status", {"query": "b"})).isError is False
            assert up.calls() == ["payment.status", "payment.status"]

    run(scenario)


def test_configuration_gate_refusals(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path) as (url, up, proxy):
            proxy.role = "admin"  # admins see remote names: the true reason is shown
            async with client(url, None) as s:
                err = await refused(s, "mcp_crm_contact_delete")
                assert err.code == CODE_REFUSED
                r = refusal_from_error(err)
                assert r is not None and r.kind == "toolDisabled"
                assert err.message == r.model_text
            assert up.calls() == []

    run(scenario)


def classify_cli(toolgate_bin: Path, tmp: Path, error: Any, tool: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "error": error.model_dump(mode="json", exclude_none=True)}
    f = tmp / f"answer-{tool}.json"
    f.write_text(json.dumps(body))
    out = subprocess.run(
        [str(toolgate_bin), "classify", str(f), "--tool", tool], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def test_refusals_round_trip_through_toolgate_classify(tmp_path: Path, toolgate_bin: Path) -> None:
    errors: dict[str, Any] = {}

    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path) as (url, _, proxy):
            async with client(url, "support-bot") as s:
                errors["refund.issue"] = await refused(s, "refund.issue")
                errors["mcp_billing_invoice_list"] = await refused(s, "mcp_billing_invoice_list")
                errors["no_such_tool"] = await refused(s, "no_such_tool")
            proxy.role = "admin"
            async with client(url, None) as s:
                errors["mcp_crm_contact_delete"] = await refused(s, "mcp_crm_contact_delete")

    run(scenario)
    for tool, err in errors.items():
        ours = refusal_from_error(err)
        assert ours is not None
        theirs = classify_cli(toolgate_bin, tmp_path, err, tool)
        assert theirs["outcome"] == "refusal", tool
        got = theirs["refusal"]
        # The same through the binding's classifier (one implementation).
        assert toolgate.classify(json.dumps({"jsonrpc": "2.0", "id": 7, "error": err.model_dump(mode="json", exclude_none=True)}), tool=tool).to_dict() == theirs
        # toolgate's classifier reads its own refusal shape (`data.toolgate`)
        # back as the same kind, class, action and tool, for every gate.
        assert (got["kind"], got["class"], got["retryable"], got["action"], got["tool"]) == (
            ours.kind,
            ours.class_,
            ours.retryable,
            ours.action,
            ours.tool,
        ), tool
        assert got["profile"] == ours.profile
    assert refusal_from_error(errors["mcp_crm_contact_delete"]).kind == "toolDisabled"  # type: ignore[union-attr]
    assert refusal_from_error(errors["mcp_billing_invoice_list"]).kind == "notRegistered"  # type: ignore[union-attr]


def test_the_stdio_proxy_command(tmp_path: Path) -> None:
    table = CORPUS / "tables/mcp-profiles.tgt"
    log = tmp_path / "calls.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate.mcp", "--table", str(table), "--configuration", "support-chat",
              "--consumer", "support-bot", "--", sys.executable, str(UPSTREAM)],
        env=dict(os.environ, UPSTREAM_LOG=str(log)),
    )

    async def scenario() -> None:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert await names(s) == SUPPORT_BOT
            assert (await s.call_tool("get_help_article", {"query": "a1"})).isError is False
            err = await refused(s, "refund.issue")
            assert err.code == CODE_NOT_IN_PROFILE

    run(scenario)
    assert [json.loads(x)["tool"] for x in log.read_text().splitlines()] == ["get_help_article"]


def test_the_unavailable_prompt_is_the_librarys_and_odd_names_are_unknown(tmp_path: Path) -> None:
    t = mcp_profiles()
    group = next(x["group"] for x in t.policy()["tools"] if x["name"] == "refund.issue")
    live = [
        toolgate.LiveTool("new_admin_tool", group, admin_only=True),
        toolgate.LiveTool("mcp_live_hidden", group, remote=True, enabled=False),
    ]

    async def scenario() -> None:
        async with proxy_for(t, tmp_path, consumer="support-bot") as (url, up, proxy):
            ctx = t.context("support-chat", role="user", consumer="support-bot")
            assert proxy.unavailable_prompt() == ctx.unavailable_prompt()
            assert proxy.unavailable_prompt(live=live) == ctx.unavailable_prompt(live=live) == (
                "Tools that exist but are not available in this conversation, and why:\n"
                "- refund.issue: not in this consumer's access profile\n"
                "- new_admin_tool: only administrators may use it\n"
            )
            billing = t.context("support-chat", role="user", consumer="billing-bot")
            assert proxy.unavailable_prompt("billing-bot") == billing.unavailable_prompt()
            # In process (no JSON on the way), a name that is not valid
            # Unicode reaches the proxy: it names no tool, never forwarded.
            from mcp.shared.memory import create_connected_server_and_client_session

            async with create_connected_server_and_client_session(proxy.server) as s:
                err = await refused(s, "payment.status\ud800")
                assert (err.code, err.message) == (CODE_UNKNOWN_TOOL, "Unknown tool: payment.status\\ud800")
            assert up.calls() == []

    run(scenario)
