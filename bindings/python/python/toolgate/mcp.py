"""A governing MCP proxy (extra ``toolgate[mcp]``), on the official MCP
Python SDK (``mcp``).

The proxy holds one session to an upstream MCP server and serves downstream
clients:

- ``tools/list`` returns only the upstream tools the table offers to that
  client (its consumer comes from the ``X-Toolgate-Consumer`` HTTP header,
  else the proxy's ``consumer`` argument, else, when
  ``consumer_from_client_info`` is set, the client's ``clientInfo.name``);
- ``tools/call`` of any other tool is answered with a JSON-RPC error that
  carries the typed refusal (``error.data.toolgate``: kind, class,
  retryable, action, modelText, remediation, ...) and is never forwarded;
- a remote tool whose name the user may not see is refused word for word as
  a name that does not exist (``Context.refusal`` masks it), and is never
  listed;
- a name that is not valid Unicode (a lone surrogate from a JSON escape)
  names no tool: ``Unknown tool``, never forwarded;
- :meth:`GoverningProxy.unavailable_prompt` is the system-prompt section of
  what that client may not use, rendered by the library
  (``Context.unavailable_prompt``, with the host's live tools), never here.

Error shapes (so that ``toolgate classify`` recognises what the proxy
answers, docs/refusals.md):

=========================  =======  ==========================================
refusal kind               code     message
=========================  =======  ==========================================
``notRegistered``          -32602   ``Unknown tool: NAME`` (as MCP servers say)
``notInProfile``           -32003   ``Access denied: ...`` (``data.profile``)
any other gate             -32010   the refusal's model text
=========================  =======  ==========================================

The first two classify to the same kind; the built-in classifier has no
rule that yields the configuration gates' kinds (``toolDisabled`` ...
``trustZone``), so those classify as the generic ``policy`` refusal (the
same class, not retryable, never success); the exact kind is in
``error.data.toolgate`` (:func:`refusal_from_error`).

Every request takes the table of that moment (``TableHandle.current()``):
a swapped table governs open sessions from their next request on.

Run as a stdio proxy (one client, consumer by argument)::

    python -m toolgate.mcp --table policy.tgt --configuration support-chat \\
        --role user --consumer support-bot -- python upstream_server.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from typing import Any, AsyncIterator, Optional, Union

import mcp.types as types
from mcp import ClientSession
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError

from . import ArgumentError, Context, LiveTool, Refusal, RunState, Table, TableHandle

__all__ = [
    "CONSUMER_HEADER",
    "CODE_NOT_IN_PROFILE",
    "CODE_REFUSED",
    "CODE_UNKNOWN_TOOL",
    "GoverningProxy",
    "error_for",
    "refusal_from_error",
    "serve_streamable_http",
]

logger = logging.getLogger("toolgate.mcp")

CONSUMER_HEADER = "x-toolgate-consumer"
CODE_UNKNOWN_TOOL = -32602
CODE_NOT_IN_PROFILE = -32003
CODE_REFUSED = -32010


def error_for(refusal: Refusal) -> types.ErrorData:
    """The JSON-RPC error of a refused ``tools/call``."""
    data: dict[str, Any] = {"toolgate": refusal.to_dict()}
    if refusal.kind == "notRegistered":
        return types.ErrorData(code=CODE_UNKNOWN_TOOL, message=f"Unknown tool: {refusal.tool}", data=data)
    if refusal.kind == "notInProfile":
        if refusal.profile is not None:
            data["profile"] = refusal.profile
        return types.ErrorData(
            code=CODE_NOT_IN_PROFILE,
            message=f"Access denied: `{refusal.tool}` is not in this consumer's access profile",
            data=data,
        )
    return types.ErrorData(code=CODE_REFUSED, message=refusal.model_text, data=data)


def refusal_from_error(error: types.ErrorData) -> Optional[Refusal]:
    """The typed refusal a toolgate proxy put in a JSON-RPC error, if any."""
    import json

    data = error.data
    if isinstance(data, dict) and isinstance(data.get("toolgate"), dict):
        return Refusal.from_json(json.dumps(data["toolgate"]))
    return None


class GoverningProxy:
    """An MCP server (``self.server``) that governs one upstream session."""

    def __init__(
        self,
        upstream: ClientSession,
        tables: Union[Table, TableHandle],
        configuration: str,
        *,
        role: str = "user",
        consumer: Optional[str] = None,
        consumer_from_client_info: bool = False,
        run: Optional[RunState] = None,
        enforcement: Optional[str] = None,
        name: str = "toolgate-proxy",
    ) -> None:
        self.upstream = upstream
        self.tables = tables
        self.configuration = configuration
        self.role = role
        self.consumer = consumer
        self.consumer_from_client_info = consumer_from_client_info
        self.run = run
        self.enforcement = enforcement
        self.server: Server[Any, Any] = Server(name)
        self.server.request_handlers[types.ListToolsRequest] = self._list_tools
        self.server.request_handlers[types.CallToolRequest] = self._call_tool
        # Fail early: an unknown configuration or role raises here, not per request.
        self.context(self.consumer)

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

    def request_consumer(self) -> Optional[str]:
        """The consumer of the request being handled."""
        ctx = self.server.request_context
        request = ctx.request
        headers = getattr(request, "headers", None)
        if headers is not None:
            value = headers.get(CONSUMER_HEADER)
            if value is not None:
                return str(value)
        if self.consumer is not None:
            return self.consumer
        if self.consumer_from_client_info:
            params = ctx.session.client_params
            if params is not None:
                return params.clientInfo.name
        return None

    def unavailable_prompt(
        self, consumer: Optional[str] = None, live: Optional[list[LiveTool]] = None
    ) -> str:
        """The unavailable-tools section for a client's system prompt ("" when
        none): the library's rendering for ``consumer`` (default: the proxy's
        ``consumer``) over the table's tools, then ``live``."""
        who = consumer if consumer is not None else self.consumer
        return self.context(who).unavailable_prompt(live=live)

    # -- handlers

    async def _upstream_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: Optional[str] = None
        while True:
            page = await self.upstream.list_tools(cursor=cursor) if cursor else await self.upstream.list_tools()
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                return tools

    async def _list_tools(self, req: types.ListToolsRequest) -> types.ServerResult:
        ctx = self.context(self.request_consumer())
        offered = set(ctx.offered())
        tools = [t for t in await self._upstream_tools() if str.__str__(t.name) in offered]
        return types.ServerResult(types.ListToolsResult(tools=tools))

    async def _call_tool(self, req: types.CallToolRequest) -> types.ServerResult:
        name = req.params.name
        consumer = self.request_consumer()
        ctx = self.context(consumer)
        try:
            decision = ctx.decide(name)
        except ArgumentError:
            # Not valid Unicode: no tool has that name; never forwarded.
            shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
            logger.warning("toolgate refused tools/call of a name that is not valid Unicode: %s", shown)
            raise McpError(types.ErrorData(code=CODE_UNKNOWN_TOOL, message=f"Unknown tool: {shown}")) from None
        if not decision.allowed:
            refusal = ctx.refusal(decision)
            assert refusal is not None, "a refused decision has a refusal"
            logger.warning(
                "toolgate refused tools/call %r: %s (configuration %s, consumer %s)",
                name,
                decision.reason,
                ctx.configuration,
                consumer,
                extra={"toolgate_tool": name, "toolgate_reason": decision.reason, "toolgate_consumer": consumer},
            )
            raise McpError(error_for(refusal))
        result = await self.upstream.call_tool(name, req.params.arguments)
        return types.ServerResult(result)


@contextlib.asynccontextmanager
async def serve_streamable_http(
    proxy: GoverningProxy, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[str]:
    """Serve the proxy over streamable HTTP (uvicorn, in this event loop);
    yields its URL. ``port=0`` picks a free port."""
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=proxy.server)

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        await manager.handle_request(scope, receive, send)

    app = Starlette(routes=[Mount("/mcp", app=handle)], lifespan=lambda _: manager.run())
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the proxy's HTTP server stopped while starting")
            await asyncio.sleep(0.005)
        bound = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{host}:{bound}/mcp/"
    finally:
        server.should_exit = True
        await task


async def _stdio_main(args: argparse.Namespace) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.server.stdio import stdio_server

    tables = TableHandle(Table.load(args.table))
    # The upstream inherits this process's environment.
    params = StdioServerParameters(command=args.upstream[0], args=args.upstream[1:], env=dict(os.environ))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as upstream:
        await upstream.initialize()
        proxy = GoverningProxy(
            upstream,
            tables,
            args.configuration,
            role=args.role,
            consumer=args.consumer,
            enforcement=args.enforcement,
        )
        async with stdio_server() as (read, write):
            await proxy.server.run(read, write, proxy.server.create_initialization_options())


def main(argv: Optional[list[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m toolgate.mcp", description="A governing MCP proxy over stdio.")
    p.add_argument("--table", required=True, help="a compiled table (toolgate compile ... -o FILE)")
    p.add_argument("--configuration", required=True)
    p.add_argument("--role", default="user", choices=["admin", "user", "none"])
    p.add_argument("--consumer", default=None, help="the MCP consumer this client is")
    p.add_argument("--enforcement", default=None)
    p.add_argument("upstream", nargs="+", help="the upstream server's command (after --)")
    args = p.parse_args(argv)
    asyncio.run(_stdio_main(args))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
