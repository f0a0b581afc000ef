"""MCP, governed (extra ``toolgate[mcp]``), on the official MCP Python SDK 2.x
(``mcp``): a governing proxy in front of one upstream server, and a governed
client session.

The MCP contract is the runtime's (``toolgate_runtime::mcp``, through the
native module; nothing of it is re-implemented here):

- **Names**: the upstream lists its own names (``customer-360_lookup``); the
  registry holds ``mcp_SERVER_NAME`` (what ``toolgate registry import-mcp
  --server SERVER`` writes). The proxy is given ``server=`` and maps both
  ways with the runtime's ``NameMap``: clients see and call registry names,
  the upstream receives its own. A listed name that breaks MCP's naming rule,
  or two that give one registry name, is never offered.
- **Refusals**: a refused ``tools/call`` is answered with the runtime's
  ``refusal_error`` and never forwarded:

  =============================  =======  ===================================
  refusal                        code     message
  =============================  =======  ===================================
  ``notRegistered``, a hidden     -32602   ``Unknown tool: NAME`` (as MCP
  remote tool, every refusal in            servers say; no data in stealth)
  ``stealth`` mode
  configuration class             -31001   the refusal's model text
  runtime class                   -31002   the refusal's model text
  =============================  =======  ===================================

  ``error.data.toolgate`` is the typed refusal (not in stealth mode), which
  ``toolgate classify`` and ``toolgate.classify`` read back as the same kind.
- **Pins**: ``pins={registry_name: digest}`` (``definition_digest`` of the
  reviewed definition, or a JSON file of that object): a listed tool whose
  definition's digest differs is not listed, and its call is refused with
  ``definitionChanged`` (``DefinitionChanged``). With pins given, a tool
  without a pin is withheld and refused the same way (fail closed, as the
  gateway does); without ``pins=`` no definition is checked.

Who the client is (its consumer, hence its access profile) is the host's to
say, never the client's:

- ``consumer="support-bot"``: every client of this proxy is that consumer
  (checked against the table at construction: an unknown consumer raises);
- ``authenticate=fn``: ``fn(headers) -> consumer`` is called per request
  with the HTTP request's headers (a mapping, empty on stdio) and checks a
  credential (a bearer token, an mTLS header set by the host's edge). It
  returns the consumer, or ``None``/raises to refuse;
- ``trusted_consumer_header="x-toolgate-consumer"``: the host names a
  header that something it trusts (its authenticating gateway) sets;
- none of them: no consumer, the configuration alone.

At most one of the three may be given. ``clientInfo.name`` and any header
the host did not name are never read. A consumer the table does not know
(from ``authenticate`` or the trusted header), or no identity where one is
required, is refused (code -31001, no tool listed, nothing forwarded),
never an unscoped consumer.

The upstream is paged through the runtime's one page walk (``PageWalk``,
the gateway's and ``registry import-mcp``'s too): at most ``max_pages``
pages (default 100) and ``max_tools`` tools (default 100,000); a cursor seen
twice stops it with an error, and every upstream step has a ``timeout``
(seconds, default 30).

:func:`serve_streamable_http` serves the proxy over streamable HTTP on
127.0.0.1 by default, with the SDK's DNS rebinding protection on (the Host
and Origin headers are checked: 421 and 403).

:class:`GovernedSession` (:func:`session`) is the other side: a client
session whose ``call`` decides against the table before sending (a refused
call raises the kind's exception, ``ToolNotInProfile``, ..., and never
reaches the server) and classifies the server's or gateway's answer with the
table's rules (a gateway's denial raises; a tool failure, ``isError: true``,
is returned).

Run as a stdio proxy (one client, consumer by argument)::

    python -m toolgate.mcp --table policy.tgt --configuration support-chat \\
        --role user --server crm --consumer support-bot -- python upstream_server.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Optional, Sequence, Union

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from . import (
    CODE_CONFIGURATION_REFUSAL,
    CODE_RUNTIME_REFUSAL,
    CODE_UNKNOWN_TOOL,
    ArgumentError,
    Context,
    LiveTool,
    NameMap,
    PageWalk,
    Refusal,
    RunState,
    Table,
    TableHandle,
    ToolgateError,
    definition_digest,
    refusal_error,
    registry_name,
    unknown_tool_error,
)
from ._errors import _refused

__all__ = [
    "CODE_CONFIGURATION_REFUSAL",
    "CODE_RUNTIME_REFUSAL",
    "CODE_UNKNOWN_TOOL",
    "GoverningProxy",
    "GovernedSession",
    "UpstreamError",
    "load_pins",
    "refusal_from_error",
    "serve_streamable_http",
    "session",
]

logger = logging.getLogger("toolgate.mcp")

#: A host's check of a request's credentials: headers -> consumer (None refuses).
Authenticate = Callable[[Mapping[str, str]], Optional[str]]

INTERNAL_ERROR = -32603


class UpstreamError(ToolgateError):
    """The upstream did not answer as MCP requires: too many pages, a cursor
    seen twice, a timeout. Nothing is listed or forwarded on it."""


def refusal_from_error(error: Union[types.ErrorData, MCPError, Mapping[str, Any]]) -> Optional[Refusal]:
    """The typed refusal a toolgate gateway put in a JSON-RPC error
    (``data.toolgate``), if any."""
    if isinstance(error, MCPError):
        error = error.error
    data = error.get("data") if isinstance(error, Mapping) else error.data
    if isinstance(data, dict) and isinstance(data.get("toolgate"), dict):
        return Refusal.from_json(json.dumps(data["toolgate"]))
    return None


def _rpc_error(e: Mapping[str, Any]) -> MCPError:
    return MCPError(code=e["code"], message=e["message"], data=e.get("data"))


def load_pins(pins: Union[None, Mapping[str, str], str, "os.PathLike[str]"]) -> Optional[dict[str, str]]:
    """Pins as a dict: a mapping as given, or a JSON file holding one
    (``{"mcp_crm_customer-360_lookup": "sha256:..."}``); ``None`` when
    pinning is off."""
    if pins is None:
        return None
    if isinstance(pins, Mapping):
        out = dict(pins)
    else:
        out = json.loads(Path(pins).read_text())
    if not isinstance(out, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in out.items()):
        raise ArgumentError("pins: expected an object of registry name -> definition digest")
    return out


def _definition(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


class GoverningProxy:
    """An MCP server (``self.server``) that governs one upstream session,
    whose tools are server ``server``'s in the registry."""

    def __init__(
        self,
        upstream: ClientSession,
        tables: Union[Table, TableHandle],
        configuration: str,
        *,
        server: str,
        role: str = "user",
        consumer: Optional[str] = None,
        authenticate: Optional[Authenticate] = None,
        trusted_consumer_header: Optional[str] = None,
        run: Optional[RunState] = None,
        enforcement: Optional[str] = None,
        pins: Union[None, Mapping[str, str], str, "os.PathLike[str]"] = None,
        stealth: bool = False,
        max_pages: int = 100,
        max_tools: int = 100_000,
        timeout: float = 30.0,
        name: str = "toolgate-proxy",
    ) -> None:
        given = [x for x in (consumer, authenticate, trusted_consumer_header) if x is not None]
        if len(given) > 1:
            raise ArgumentError(
                "who the client is comes from one place: give consumer=, authenticate= or trusted_consumer_header=, not several"
            )
        if max_pages < 1 or max_tools < 1:
            raise ArgumentError("max_pages and max_tools must be at least 1")
        # The runtime's naming rule for the server name (NameMap checks it).
        NameMap([(server, [])])
        self.upstream = upstream
        self.tables = tables
        self.configuration = configuration
        self.server_name = server
        self.role = role
        self.consumer = consumer
        self.authenticate = authenticate
        self.trusted_consumer_header = trusted_consumer_header.lower() if trusted_consumer_header else None
        self.run = run
        self.enforcement = enforcement
        self.pins = load_pins(pins)
        self.stealth = stealth
        self.max_pages = max_pages
        self.max_tools = max_tools
        self.timeout = timeout
        self.server: Server[Any] = Server(name, on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        # Fail early: an unknown configuration, role or consumer raises here.
        self._check_consumer(consumer, at_construction=True)
        self.context(consumer)

    # -- who is asking

    def table(self) -> Table:
        t = self.tables
        return t.current() if isinstance(t, TableHandle) else t

    def context(self, consumer: Optional[str]) -> Context:
        return self.table().context(
            self.configuration,
            role=self.role,  # type: ignore[arg-type]
            consumer=consumer,
            run=self.run,
            enforcement=self.enforcement,
        )

    def _check_consumer(self, consumer: Optional[str], *, at_construction: bool = False) -> None:
        if consumer is None or consumer in self.table().consumers:
            return
        if at_construction:
            raise ArgumentError(f"consumer {consumer!r} is not a consumer of the table (the consumers are {self.table().consumers!r})")
        raise MCPError(
            code=CODE_CONFIGURATION_REFUSAL,
            message="This client is not a consumer the policy knows: no tool is available. A person must bind it to an access profile.",
        )

    def request_consumer(self, ctx: Any) -> Optional[str]:
        """The consumer of the request being handled, by the host's rule
        (never the client's say); raises ``MCPError`` to refuse."""
        if self.authenticate is None and self.trusted_consumer_header is None:
            return self.consumer
        request = getattr(ctx, "request", None)
        headers: Mapping[str, str] = getattr(request, "headers", None) or {}
        if self.authenticate is not None:
            try:
                consumer = self.authenticate(headers)
            except Exception as e:  # the host's check refused
                logger.warning("toolgate: authentication refused a request: %s", e)
                consumer = None
        else:
            assert self.trusted_consumer_header is not None
            consumer = headers.get(self.trusted_consumer_header)
        if consumer is None:
            raise MCPError(
                code=CODE_CONFIGURATION_REFUSAL,
                message="This client is not authenticated as a consumer: no tool is available.",
            )
        self._check_consumer(consumer)
        return consumer

    def unavailable_prompt(self, consumer: Optional[str] = None, live: Optional[list[LiveTool]] = None) -> str:
        """The unavailable-tools section for a client's system prompt ("" when
        none): the library's rendering for ``consumer`` (default: the proxy's
        ``consumer``) over the table's tools, then ``live``."""
        who = consumer if consumer is not None else self.consumer
        return self.context(who).unavailable_prompt(live=live)

    # -- the upstream

    async def upstream_tools(self) -> list[types.Tool]:
        """Every tool the upstream lists, within the runtime's one page walk
        (``PageWalk``): at most ``max_pages`` pages and ``max_tools`` tools,
        each page within ``timeout``, no cursor twice; past a bound,
        ``UpstreamError``."""
        tools: list[types.Tool] = []
        walk = PageWalk(self.max_pages, self.max_tools)
        cursor: Optional[str] = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                with anyio.fail_after(self.timeout):
                    page = await self.upstream.list_tools(params=params)
            except TimeoutError:
                raise UpstreamError(f"the upstream did not list its tools within {self.timeout}s") from None
            tools.extend(page.tools)
            try:
                cursor = walk.next(len(page.tools), page.next_cursor)
            except ValueError as e:
                raise UpstreamError(f"the upstream {e}: listing stopped") from None
            if cursor is None:
                return tools

    async def _mapped(self) -> tuple[NameMap, dict[str, types.Tool]]:
        """The upstream's tools by registry name (the runtime's NameMap)."""
        listed = await self.upstream_tools()
        names = NameMap([(self.server_name, [t.name for t in listed])])
        for p in names.problems:
            logger.warning("toolgate: %s", p)
        by_name: dict[str, types.Tool] = {}
        for t in listed:
            reg = registry_name(self.server_name, t.name)
            if names.route(reg) == (self.server_name, t.name):
                by_name[reg] = t
        return names, by_name

    def _pin_refusal(self, reg: str, tool: types.Tool, consumer: Optional[str]) -> Optional[Refusal]:
        if self.pins is None:
            return None
        # A tool the review never pinned is not a reviewed definition.
        pin = self.pins.get(reg)
        if pin is not None and definition_digest(_definition(tool)) == pin:
            return None
        return Refusal.of_kind("definitionChanged", tool=reg, consumer=consumer, origin="toolgate.mcp")

    # -- handlers

    async def _list_tools(self, ctx: Any, params: Optional[types.PaginatedRequestParams]) -> types.ListToolsResult:
        consumer = self.request_consumer(ctx)
        context = self.context(consumer)
        offered = set(context.offered())
        try:
            _, by_name = await self._mapped()
        except UpstreamError as e:
            raise MCPError(code=INTERNAL_ERROR, message=str(e)) from None
        tools = []
        for reg, t in by_name.items():
            if reg not in offered:
                continue
            if self._pin_refusal(reg, t, consumer) is not None:
                logger.warning("toolgate withheld %s: its definition is not the pinned one", reg)
                continue
            tools.append(t.model_copy(update={"name": reg}))
        return types.ListToolsResult(tools=tools)

    def _refuse(self, refusal: Refusal, name: str, context: Context, consumer: Optional[str], why: str) -> MCPError:
        logger.warning(
            "toolgate refused tools/call %r: %s (configuration %s, consumer %s)",
            name,
            why,
            context.configuration,
            consumer,
            extra={"toolgate_tool": name, "toolgate_reason": why, "toolgate_consumer": consumer},
        )
        return _rpc_error(refusal_error(refusal, table_digest=self.table().digest, stealth=self.stealth))

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        consumer = self.request_consumer(ctx)
        context = self.context(consumer)
        try:
            decision = context.decide(name)
        except ArgumentError:
            # Not valid Unicode: no tool has that name; never forwarded.
            shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
            logger.warning("toolgate refused tools/call of a name that is not valid Unicode: %s", shown)
            raise _rpc_error(unknown_tool_error(shown)) from None
        if not decision.allowed:
            refusal = context.refusal(decision)
            assert refusal is not None, "a refused decision has a refusal"
            raise self._refuse(refusal, name, context, consumer, str(decision.reason))
        try:
            names, by_name = await self._mapped()
        except UpstreamError as e:
            raise MCPError(code=INTERNAL_ERROR, message=str(e)) from None
        route = names.route(name)
        if route is None or route[0] != self.server_name:
            # In the registry, allowed, but this upstream does not list it.
            raise _rpc_error(unknown_tool_error(name))
        changed = self._pin_refusal(name, by_name[name], consumer)
        if changed is not None:
            raise self._refuse(changed, name, context, consumer, "definitionChanged")
        try:
            with anyio.fail_after(self.timeout):
                result = await self.upstream.call_tool(route[1], params.arguments)
        except TimeoutError:
            raise MCPError(code=INTERNAL_ERROR, message=f"the upstream did not answer within {self.timeout}s") from None
        assert isinstance(result, types.CallToolResult)
        return result


LOOPBACK = ("127.0.0.1", "localhost", "::1")


@contextlib.asynccontextmanager
async def serve_streamable_http(
    proxy: GoverningProxy,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    allowed_hosts: Optional[Sequence[str]] = None,
    allowed_origins: Optional[Sequence[str]] = None,
) -> AsyncIterator[str]:
    """Serve the proxy over streamable HTTP (uvicorn, in this event loop);
    yields its URL. ``port=0`` picks a free port.

    DNS rebinding protection (the SDK's transport security settings) is
    always on: the Host header must be one of ``allowed_hosts`` (default: the
    loopback names with any port, when bound to loopback; required
    otherwise) and an Origin header, when sent, one of ``allowed_origins``
    (default: ``http://`` and the allowed hosts). Others get 421 and 403."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    if allowed_hosts is None:
        if host not in LOOPBACK:
            raise ArgumentError(f"serving on {host!r}: name the Host values clients use (allowed_hosts=)")
        allowed_hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    if allowed_origins is None:
        allowed_origins = [f"http://{h}" for h in allowed_hosts]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed_hosts),
        allowed_origins=list(allowed_origins),
    )
    app = proxy.server.streamable_http_app(host=host, transport_security=security)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        with anyio.fail_after(30):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("the proxy's HTTP server stopped while starting")
                await asyncio.sleep(0.005)
        bound = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{host}:{bound}/mcp"
    finally:
        server.should_exit = True
        await task


# ---------------------------------------------------------------- client


ContextSource = Union[Context, Callable[[], Context]]


class GovernedSession:
    """A client session to an MCP server or gateway, governed by the table.

    ``call(name, arguments)`` takes the registry name: the context decides
    first (a refusal raises the kind's exception and nothing is sent); the
    call goes out under the server's own name (with ``server=``, mapped by
    the runtime's ``NameMap`` over the server's listing; without, as given,
    for a gateway that lists registry names); the answer is classified with
    the table's rules for ``origin`` (a refusal raises; success and a tool
    failure are returned)."""

    def __init__(
        self,
        client: ClientSession,
        context: ContextSource,
        *,
        server: Optional[str] = None,
        origin: Optional[str] = None,
        timeout: float = 30.0,
        max_pages: int = 100,
        max_tools: int = 100_000,
    ) -> None:
        self.client = client
        self._context = context
        self.server = server
        self.origin = origin
        self.timeout = timeout
        self.max_pages = max_pages
        self.max_tools = max_tools
        self._names: Optional[NameMap] = None

    def context(self) -> Context:
        c = self._context
        return c if isinstance(c, Context) else c()

    async def list_tools(self) -> list[types.Tool]:
        """The server's tools the table offers, under their registry names."""
        offered = set(self.context().offered())
        tools: list[types.Tool] = []
        walk = PageWalk(self.max_pages, self.max_tools)
        cursor: Optional[str] = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            with anyio.fail_after(self.timeout):
                page = await self.client.list_tools(params=params)
            tools.extend(page.tools)
            try:
                cursor = walk.next(len(page.tools), page.next_cursor)
            except ValueError as e:
                raise UpstreamError(f"the server {e}: listing stopped") from None
            if cursor is None:
                break
        if self.server is None:
            return [t for t in tools if t.name in offered]
        self._names = NameMap([(self.server, [t.name for t in tools])])
        out = []
        for t in tools:
            reg = registry_name(self.server, t.name)
            if reg in offered and self._names.route(reg) == (self.server, t.name):
                out.append(t.model_copy(update={"name": reg}))
        return out

    async def _wire_name(self, name: str) -> str:
        if self.server is None:
            return name
        if self._names is None:
            await self.list_tools()
        assert self._names is not None
        route = self._names.route(name)
        if route is None:
            # Allowed by the table, but this server does not list it.
            raise _refused(Refusal.of_kind("notRegistered", tool=name, origin=self.origin))
        return route[1]

    async def call(self, name: str, arguments: Optional[dict[str, Any]] = None) -> types.CallToolResult:
        self.context().check_call(name)
        wire = await self._wire_name(name)
        table = self.context().table
        try:
            with anyio.fail_after(self.timeout):
                result = await self.client.call_tool(wire, arguments)
        except MCPError as e:
            body = {"jsonrpc": "2.0", "id": 0, "error": e.error.model_dump(mode="json", by_alias=True, exclude_none=True)}
            table.classify_or_raise(json.dumps(body), origin=self.origin, tool=name)
            raise  # an error the rules call success: not a result either
        assert isinstance(result, types.CallToolResult)
        body = {"jsonrpc": "2.0", "id": 0, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
        table.classify_or_raise(json.dumps(body), origin=self.origin, tool=name)
        return result

    # The SDK's spelling.
    call_tool = call


@contextlib.asynccontextmanager
async def session(
    context: ContextSource,
    url: Optional[str] = None,
    *,
    client: Optional[ClientSession] = None,
    headers: Optional[dict[str, str]] = None,
    server: Optional[str] = None,
    origin: Optional[str] = None,
    timeout: float = 30.0,
) -> AsyncIterator[GovernedSession]:
    """A governed session: over a streamable-HTTP ``url`` (initialized here,
    with ``headers``), or over an open ``client`` session."""
    if (url is None) == (client is None):
        raise ArgumentError("session: give a url or an open client session, not both")
    if client is not None:
        yield GovernedSession(client, context, server=server, origin=origin, timeout=timeout)
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    assert url is not None
    async with create_mcp_http_client(headers=headers) as http, streamable_http_client(url, http_client=http) as (
        r,
        w,
    ), ClientSession(r, w) as s:
        with anyio.fail_after(timeout):
            await s.initialize()
        yield GovernedSession(s, context, server=server, origin=origin, timeout=timeout)


async def _stdio_main(args: argparse.Namespace) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.server.stdio import stdio_server

    tables = TableHandle(Table.load(args.table))
    # The upstream inherits this process's environment.
    params = StdioServerParameters(command=args.upstream[0], args=args.upstream[1:], env=dict(os.environ))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as upstream:
        with anyio.fail_after(args.timeout):
            await upstream.initialize()
        proxy = GoverningProxy(
            upstream,
            tables,
            args.configuration,
            server=args.server,
            role=args.role,
            consumer=args.consumer,
            enforcement=args.enforcement,
            pins=args.pins,
            stealth=args.stealth,
            timeout=args.timeout,
        )
        async with stdio_server() as (read, write):
            await proxy.server.run(read, write, proxy.server.create_initialization_options())


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m toolgate.mcp", description="A governing MCP proxy over stdio.")
    p.add_argument("--table", required=True, help="a compiled table (toolgate compile ... -o FILE)")
    p.add_argument("--configuration", required=True)
    p.add_argument("--server", required=True, help="the upstream's server name in the registry (mcp_SERVER_NAME)")
    p.add_argument("--role", default="user", choices=["admin", "user", "none"])
    p.add_argument("--consumer", default=None, help="the MCP consumer this client is")
    p.add_argument("--enforcement", default=None)
    p.add_argument("--pins", default=None, help="a JSON file of registry name -> definition digest")
    p.add_argument("--stealth", action="store_true", help="answer every refusal as an unknown tool")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds for each upstream step")
    p.add_argument("upstream", nargs="+", help="the upstream server's command (after --)")
    args = p.parse_args(argv)
    asyncio.run(_stdio_main(args))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
