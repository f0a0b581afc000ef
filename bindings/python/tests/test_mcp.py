"""toolgate.mcp end to end on the MCP SDK 2.x: the SDK's real client, the
proxy over streamable HTTP on 127.0.0.1, and a real upstream server
(tests/upstream_server.py, server `crm`) over stdio that records every call
it receives."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Optional

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

import toolgate
from conftest import CORPUS, HERE, Compile
from toolgate.mcp import (
    CODE_CONFIGURATION_REFUSAL,
    CODE_UNKNOWN_TOOL,
    GoverningProxy,
    UpstreamError,
    refusal_from_error,
    serve_streamable_http,
    session,
)

UPSTREAM = HERE / "upstream_server.py"
TIMEOUT = 60  # seconds, for a whole scenario
HEADER = "x-toolgate-consumer"

# What the crm server's tools are offered to each consumer (support-chat, users).
SUPPORT_BOT = ["mcp_crm_customer-360_lookup", "mcp_crm_customer-360_timeline", "mcp_crm_customer-360_contacts"]
BILLING_BOT = ["mcp_crm_customer-360_lookup"]
NO_CONSUMER = SUPPORT_BOT + ["mcp_crm_case_create"]
# crm tools a user of support-bot may not see (refused, names hidden from users).
HIDDEN_FROM_SUPPORT_BOT = ["mcp_crm_case_create", "mcp_crm_contact_delete"]


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
async def upstream_session(tmp: Path, **env: str) -> AsyncIterator[tuple[ClientSession, Upstream]]:
    log = tmp / "upstream-calls.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=[str(UPSTREAM)], env=dict(os.environ, UPSTREAM_LOG=str(log), **env)
    )
    async with stdio_client(params) as (r, w), ClientSession(r, w) as upstream:
        await upstream.initialize()
        yield upstream, Upstream(log)


@asynccontextmanager
async def proxy_for(
    tables: Any, tmp: Path, env: Optional[dict[str, str]] = None, **kw: Any
) -> AsyncIterator[tuple[str, Upstream, GoverningProxy]]:
    async with upstream_session(tmp, **(env or {})) as (upstream, up):
        proxy = GoverningProxy(upstream, tables, "support-chat", server="crm", role="user", **kw)
        async with serve_streamable_http(proxy) as url:
            yield url, up, proxy


@asynccontextmanager
async def client(url: str, headers: Optional[dict[str, str]] = None) -> AsyncIterator[ClientSession]:
    async with create_mcp_http_client(headers=headers or {}) as http, streamable_http_client(
        url, http_client=http
    ) as (r, w, *_), ClientSession(r, w) as s:
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
    with pytest.raises(MCPError) as e:
        await s.call_tool(tool, {"query": "x"})
    return e.value.error


def test_listing_mapped_names_allowed_calls_and_refusals(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot") as (url, up, _), client(url) as s:
            assert await names(s) == SUPPORT_BOT
            result = await s.call_tool("mcp_crm_customer-360_lookup", {"query": "C-1"})
            assert result.is_error is False
            # The upstream received its own name.
            assert [c.text for c in result.content] == ["customer-360_lookup: C-1"]  # type: ignore[union-attr]
            assert up.calls() == ["customer-360_lookup"]

            # A registered tool of the profile's refusal: the runtime's error.
            t = mcp_profiles()
            ctx = t.context("support-chat", role="user", consumer="support-bot")
            err = await refused(s, "refund.issue")
            assert err.code == CODE_CONFIGURATION_REFUSAL == -31001
            expected = toolgate.refusal_error(ctx.refusal("refund.issue"), table_digest=t.digest)
            assert err.model_dump(mode="json", exclude_none=True) == expected
            r = refusal_from_error(err)
            assert r == ctx.refusal("refund.issue")
            assert r is not None and r.kind == "notInProfile" and r.profile == "support-readonly"
            assert err.message == r.model_text

            # The upstream's own name is not a registry name; a tool the
            # registry does not know is never listed nor forwarded.
            for other in ("customer-360_lookup", "mcp_crm_secret_export", "secret_export"):
                err = await refused(s, other)
                assert (err.code, err.message) == (CODE_UNKNOWN_TOOL, f"Unknown tool: {other}")
            assert up.calls() == ["customer-360_lookup"]

    run(scenario)


def test_hidden_remote_names_never_appear(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot") as (url, up, _), client(url) as s:
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
            assert up.calls() == []

    run(scenario)


def test_stealth_answers_every_refusal_as_unknown(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot", stealth=True) as (url, up, _), client(
            url
        ) as s:
            for tool in ("refund.issue", "mcp_crm_case_create", "no_such_tool"):
                err = await refused(s, tool)
                assert err.model_dump(mode="json", exclude_none=True) == toolgate.unknown_tool_error(tool)
            assert up.calls() == []

    run(scenario)


def test_identity_comes_from_the_host_never_the_client(tmp_path: Path) -> None:
    tokens = {"Bearer s3cret-support": "support-bot", "Bearer s3cret-billing": "billing-bot", "Bearer who": "nobody"}

    def authenticate(headers: Any) -> Optional[str]:
        return tokens.get(headers.get("authorization", ""))

    async def scenario() -> None:
        # The operator's consumer: a client's header changes nothing.
        async with proxy_for(mcp_profiles(), tmp_path, consumer="billing-bot") as (url, _, _):
            async with client(url, {HEADER: "support-bot"}) as s:
                assert await names(s) == BILLING_BOT
            from mcp.types import Implementation

            async with create_mcp_http_client() as http, streamable_http_client(url, http_client=http) as (r, w, *_):
                async with ClientSession(r, w, client_info=Implementation(name="support-bot", version="1")) as s:
                    await s.initialize()
                    assert await names(s) == BILLING_BOT
        # No identity configured: the configuration alone, whatever the client says.
        async with proxy_for(mcp_profiles(), tmp_path) as (url, _, _), client(url, {HEADER: "support-bot"}) as s:
            assert await names(s) == NO_CONSUMER
        # An authenticated token names the consumer.
        async with proxy_for(mcp_profiles(), tmp_path, authenticate=authenticate) as (url, up, _):
            async with client(url, {"Authorization": "Bearer s3cret-support", HEADER: "billing-bot"}) as a:
                assert await names(a) == SUPPORT_BOT
            async with client(url, {"Authorization": "Bearer s3cret-billing"}) as b:
                assert await names(b) == BILLING_BOT
            for bad in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer who"}, {HEADER: "support-bot"}):
                async with client(url, bad) as c:
                    with pytest.raises(MCPError) as e:
                        await c.list_tools()
                    assert e.value.error.code == CODE_CONFIGURATION_REFUSAL
                    err = await refused(c, "mcp_crm_customer-360_lookup")
                    assert err.code == CODE_CONFIGURATION_REFUSAL
            assert up.calls() == []
        # The header the host trusts (set by its authenticating edge).
        async with proxy_for(mcp_profiles(), tmp_path, trusted_consumer_header="X-Toolgate-Consumer") as (url, _, _):
            async with client(url, {HEADER: "support-bot"}) as s:
                assert await names(s) == SUPPORT_BOT
            async with client(url, {HEADER: "nobody"}) as s, client(url) as t:
                for c in (s, t):
                    with pytest.raises(MCPError) as e:
                        await c.list_tools()
                    assert e.value.error.code == CODE_CONFIGURATION_REFUSAL

    run(scenario)

    async def construction() -> None:
        async with upstream_session(tmp_path) as (upstream, _):
            with pytest.raises(toolgate.ArgumentError, match="not a consumer"):
                GoverningProxy(upstream, mcp_profiles(), "support-chat", server="crm", consumer="nobody")
            with pytest.raises(toolgate.ArgumentError, match="one place"):
                GoverningProxy(
                    upstream, mcp_profiles(), "support-chat", server="crm", consumer="support-bot",
                    trusted_consumer_header=HEADER,
                )
            with pytest.raises(toolgate.ArgumentError):
                GoverningProxy(upstream, mcp_profiles(), "support-chat", server="c.rm")

    run(construction)


def test_a_table_swapped_while_a_session_is_open(tmp_path: Path, compile_project: Compile) -> None:
    narrower = compile_project(
        "mcp-profiles",
        "policy.tg",
        'allow [mcp_crm_customer-360_*, group knowledge, "payment.status"]',
        'allow [mcp_crm_customer-360_lookup, group knowledge, "payment.status"]',
    )
    handle = toolgate.TableHandle(mcp_profiles())

    async def scenario() -> None:
        async with proxy_for(handle, tmp_path, consumer="support-bot") as (url, up, _), client(url) as s:
            assert await names(s) == SUPPORT_BOT
            assert (await s.call_tool("mcp_crm_customer-360_timeline", {"query": "a"})).is_error is False
            handle.swap(narrower)
            assert await names(s) == ["mcp_crm_customer-360_lookup"]
            err = await refused(s, "mcp_crm_customer-360_timeline")
            # A remote tool this user may not see: refused as a missing name.
            assert refusal_from_error(err).kind == "notRegistered"  # type: ignore[union-attr]
            handle.swap(mcp_profiles())
            assert (await s.call_tool("mcp_crm_customer-360_timeline", {"query": "b"})).is_error is False
            assert up.calls() == ["customer-360_timeline", "customer-360_timeline"]

    run(scenario)


def test_pinned_definitions(tmp_path: Path) -> None:
    reviewed = {}

    async def pins() -> None:
        async with upstream_session(tmp_path) as (upstream, _):
            for t in (await upstream.list_tools()).tools:
                reviewed[toolgate.registry_name("crm", t.name)] = toolgate.definition_digest(
                    t.model_dump(mode="json", by_alias=True, exclude_none=True)
                )

    run(pins)
    pin_file = tmp_path / "pins.json"
    pin_file.write_text(json.dumps(reviewed))

    async def scenario() -> None:
        # The reviewed definitions: everything as before.
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot", pins=reviewed) as (url, _, _), client(
            url
        ) as s:
            assert await names(s) == SUPPORT_BOT
        # The server changed a description: withheld, and its call refused.
        async with proxy_for(
            mcp_profiles(), tmp_path, {"UPSTREAM_CHANGED": "1"}, consumer="support-bot", pins=str(pin_file)
        ) as (url, up, _), client(url) as s:
            assert await names(s) == SUPPORT_BOT[1:]
            err = await refused(s, "mcp_crm_customer-360_lookup")
            assert err.code == CODE_CONFIGURATION_REFUSAL
            r = refusal_from_error(err)
            assert r is not None and r.kind == "definitionChanged" and r.tool == "mcp_crm_customer-360_lookup"
            assert toolgate.classify(
                json.dumps({"jsonrpc": "2.0", "id": 1, "error": err.model_dump(mode="json", exclude_none=True)})
            ).refusal.kind == "definitionChanged"  # type: ignore[union-attr]
            assert up.calls() == []
        # A tool the review never pinned: withheld and refused (fail closed).
        unpinned = {k: v for k, v in reviewed.items() if k != "mcp_crm_customer-360_lookup"}
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot", pins=unpinned) as (url, up, _), client(
            url
        ) as s:
            assert await names(s) == SUPPORT_BOT[1:]
            r = refusal_from_error(await refused(s, "mcp_crm_customer-360_lookup"))
            assert r is not None and r.kind == "definitionChanged" and r.tool == "mcp_crm_customer-360_lookup"
            assert (await s.call_tool("mcp_crm_customer-360_timeline", {"query": "a"})).is_error is False
            assert up.calls() == ["customer-360_timeline"]

    run(scenario)


class PagingUpstream:
    """A stand-in upstream whose listing pages forever, or repeats a cursor."""

    def __init__(self, repeat: bool) -> None:
        self.repeat = repeat
        self.pages = 0

    async def list_tools(self, *, params: Any = None) -> Any:
        from mcp import types

        self.pages += 1
        cursor = "same" if self.repeat else f"page-{self.pages}"
        return types.ListToolsResult(tools=[], next_cursor=cursor)


def test_bounded_pagination() -> None:
    async def scenario() -> None:
        forever = PagingUpstream(repeat=False)
        proxy = GoverningProxy(forever, mcp_profiles(), "support-chat", server="crm", max_pages=7)  # type: ignore[arg-type]
        with pytest.raises(UpstreamError, match="more than 7 pages"):
            await proxy.upstream_tools()
        assert forever.pages == 7
        again = PagingUpstream(repeat=True)
        proxy = GoverningProxy(again, mcp_profiles(), "support-chat", server="crm")  # type: ignore[arg-type]
        with pytest.raises(UpstreamError, match="repeated the cursor"):
            await proxy.upstream_tools()
        assert again.pages == 2

    run(scenario)


def test_the_page_walk_is_the_runtimes() -> None:
    """``toolgate.PageWalk``: the runtime's one walk, with its words."""
    walk = toolgate.PageWalk(3, 5)
    assert walk.next(2, "a") == "a"
    assert walk.next(2, "") is None  # an empty cursor ends the list, as MCP says
    assert (walk.pages, walk.items) == (2, 4)
    walk = toolgate.PageWalk(3, 5)
    with pytest.raises(ValueError, match="^listed more than 5 items$"):
        walk.next(6, None)
    walk = toolgate.PageWalk(100, 5)
    walk.next(0, "a")
    with pytest.raises(ValueError, match='^repeated the cursor "a" \\(page 2 has the `nextCursor` page 1 had\\)'):
        walk.next(0, "a")


def test_dns_rebinding_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot") as (url, up, _):
            assert url.startswith("http://127.0.0.1:")
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            async with httpx2.AsyncClient() as http:
                evil_origin = await http.post(url, headers=dict(h, Origin="http://evil.example"), content=body)
                assert evil_origin.status_code == 403
                evil_host = await http.post(url, headers=dict(h, Host="evil.example"), content=body)
                assert evil_host.status_code == 421
            async with client(url, {"Origin": url.rsplit("/", 1)[0]}) as s:
                assert await names(s) == SUPPORT_BOT
            assert up.calls() == []
        with pytest.raises(toolgate.ArgumentError, match="allowed_hosts"):
            async with serve_streamable_http(GoverningProxy(PagingUpstream(False), mcp_profiles(), "support-chat", server="crm"), host="0.0.0.0"):  # type: ignore[arg-type]
                pass

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
        async with proxy_for(mcp_profiles(), tmp_path, consumer="support-bot") as (url, _, proxy):
            async with client(url) as s:
                errors["refund.issue"] = await refused(s, "refund.issue")
                errors["mcp_crm_case_create"] = await refused(s, "mcp_crm_case_create")
                errors["no_such_tool"] = await refused(s, "no_such_tool")
            proxy.role = "admin"  # admins see remote names: the true reason is shown
            async with client(url) as s:
                errors["mcp_crm_contact_delete"] = await refused(s, "mcp_crm_contact_delete")
        async with proxy_for(mcp_profiles(), tmp_path) as (url, _, proxy):
            proxy.configuration = "support-chat-eu"
            async with client(url) as s:
                errors["payment.status"] = await refused(s, "payment.status")

    run(scenario)
    assert errors["refund.issue"].code == errors["mcp_crm_contact_delete"].code == -31001
    assert errors["payment.status"].code == -31001  # trustZone: the configuration class
    for tool, err in errors.items():
        ours = refusal_from_error(err)
        assert ours is not None
        theirs = classify_cli(toolgate_bin, tmp_path, err, tool)
        assert theirs["outcome"] == "refusal", tool
        got = theirs["refusal"]
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "error": err.model_dump(mode="json", exclude_none=True)})
        assert toolgate.classify(body, tool=tool).to_dict() == theirs
        # toolgate's classifier reads its own refusal shape (`data.toolgate`)
        # back as the same kind, class, action and tool, for every gate.
        assert (got["kind"], got["class"], got["retryable"], got["action"], got["tool"]) == (
            ours.kind, ours.class_, ours.retryable, ours.action, ours.tool,
        ), tool
        assert got["profile"] == ours.profile
    assert refusal_from_error(errors["mcp_crm_contact_delete"]).kind == "toolDisabled"  # type: ignore[union-attr]
    assert refusal_from_error(errors["mcp_crm_case_create"]).kind == "notRegistered"  # type: ignore[union-attr]
    assert refusal_from_error(errors["payment.status"]).kind == "trustZone"  # type: ignore[union-attr]


def test_the_stdio_proxy_command(tmp_path: Path) -> None:
    table = CORPUS / "tables/mcp-profiles.tgt"
    log = tmp_path / "calls.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate.mcp", "--table", str(table), "--configuration", "support-chat", "--server", "crm",
              "--consumer", "support-bot", "--", sys.executable, str(UPSTREAM)],
        env=dict(os.environ, UPSTREAM_LOG=str(log)),
    )

    async def scenario() -> None:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert await names(s) == SUPPORT_BOT
            assert (await s.call_tool("mcp_crm_customer-360_contacts", {"query": "a1"})).is_error is False
            err = await refused(s, "refund.issue")
            assert err.code == CODE_CONFIGURATION_REFUSAL

    run(scenario)
    assert [json.loads(x)["tool"] for x in log.read_text().splitlines()] == ["customer-360_contacts"]


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
            assert proxy.unavailable_prompt(live=live) == ctx.unavailable_prompt(live=live)
            billing = t.context("support-chat", role="user", consumer="billing-bot")
            assert proxy.unavailable_prompt("billing-bot") == billing.unavailable_prompt()
            # In process (no JSON on the way), a name that is not valid
            # Unicode reaches the proxy: it names no tool, never forwarded.
            from mcp.client._memory import InMemoryTransport

            async with InMemoryTransport(proxy.server) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                err = await refused(s, "mcp_crm_customer-360_lookup\ud800")
                assert (err.code, err.message) == (
                    CODE_UNKNOWN_TOOL, "Unknown tool: mcp_crm_customer-360_lookup\\ud800",
                )
            assert up.calls() == []

    run(scenario)


# ---------------------------------------------------------------- the governed client


def test_the_governed_session_decides_before_sending_and_classifies_answers(tmp_path: Path) -> None:
    t = mcp_profiles()

    async def scenario() -> None:
        # The server is the upstream itself (its own names): server="crm" maps them.
        async with upstream_session(tmp_path) as (upstream, up):
            ctx = t.context("support-chat", role="user", consumer="support-bot")
            async with session(ctx, client=upstream, server="crm") as s:
                assert [x.name for x in await s.list_tools()] == SUPPORT_BOT
                ok = await s.call("mcp_crm_customer-360_lookup", {"query": "C-7"})
                assert ok.is_error is False
                failed = await s.call("mcp_crm_customer-360_timeline", {"query": "fail"})
                assert failed.is_error is True  # a tool failure is returned, never raised
                with pytest.raises(toolgate.ToolNotInProfile):
                    await s.call("refund.issue", {"query": "r"})
                with pytest.raises(toolgate.NotRegistered):
                    await s.call("mcp_crm_case_create", {"query": "r"})
            assert up.calls() == ["customer-360_lookup", "customer-360_timeline"]
        # Through the governing proxy as a gateway that refuses what this
        # client's own table allows: the gateway's denial raises, typed.
        async with proxy_for(t, tmp_path, consumer="billing-bot") as (url, up, proxy):
            wide = t.context("support-chat", role="user")
            # A user of the gateway: the remote name is hidden, refused as missing.
            async with session(wide, url) as s:
                with pytest.raises(toolgate.NotRegistered):
                    await s.call("mcp_crm_customer-360_timeline", {"query": "x"})
            proxy.role = "admin"  # the gateway shows admins the true reason
            async with session(wide, url) as s:
                with pytest.raises(toolgate.ToolNotInProfile) as e:
                    await s.call("mcp_crm_customer-360_timeline", {"query": "x"})
                assert e.value.decision is None and e.value.profile == "billing-agent"
                assert (await s.call("mcp_crm_customer-360_lookup", {"query": "y"})).is_error is False
            # (The same log as the first upstream's.)
            assert up.calls() == ["customer-360_lookup", "customer-360_timeline", "customer-360_lookup"]

    run(scenario)


def test_the_readme_sketch_runs_as_written(tmp_path: Path) -> None:
    """The typed-refusal sketch of bindings/python/README.md ("Refusals as
    exceptions"; names adapted only), against the real langgraph and the real
    MCP SDK: the graph raises the typed exception, the tool set names what is
    excluded, and the governed session refuses before sending."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    sys.path.insert(0, str(HERE.parent / "examples"))
    from langgraph_agent import build_graph, tool_named

    class FakeModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    t = mcp_profiles()
    ctx = t.context("support-chat", role="user", consumer="support-bot")
    log = logging.getLogger("sketch")
    from toolgate import PolicyViolation, ToolExclusion, ToolNotInProfile

    async def rephrase_and_retry(exc: PolicyViolation) -> None:
        raise AssertionError("a configuration refusal is never retried")

    async def main(graph: Any, state: Any) -> None:
        try:
            await graph.ainvoke(state)
        except ToolNotInProfile as exc:          # configuration problem: stop, don't retry
            log.error("not provisioned: %s (profile %s)", exc.tool_name, exc.profile)
            raise
        except PolicyViolation as exc:           # runtime problem: recoverable
            return await rephrase_and_retry(exc)

    graph = build_graph(
        t, "support-chat", [tool_named(n, lambda **_: "ok") for n in t.tools],
        FakeModel(messages=iter([AIMessage("", tool_calls=[{"name": "refund.issue", "args": {}, "id": "c1"}])])),
        consumer="support-bot", raise_on={"notInProfile"},
    )
    state = {"messages": [HumanMessage("refund invoice 7")]}

    async def scenario() -> None:
        with pytest.raises(ToolNotInProfile):
            await main(graph, state)

        tools = ctx.tool_set()
        assert tools.excluded[0] == ToolExclusion(name="refund.issue", reason="notInProfile")
        async with proxy_for(t, tmp_path, consumer="support-bot") as (url, up, _):
            async with session(ctx, url) as s:
                with pytest.raises(ToolNotInProfile):
                    await s.call("refund.issue", {"invoiceNumber": "7", "reason": "r"})  # -> ToolNotInProfile
            assert up.calls() == []

    run(scenario)
