"""BENCHMARKS.md, "Peer gateways side by side": the same upstream reached
directly, through `toolgate gateway` and through mcp-proxy 0.13.0 (chained
HTTP -> stdio -> HTTP, its only way to proxy streamable HTTP), in one run,
measured with the official Python MCP SDK client (2.3):

- the latency of a `tools/call`, p50 and p99, the targets alternated call
  by call over one kept-alive session each;
- calls per second with 16 concurrent kept-alive clients (one session each);
- `tools/list` (every page) of the N tools;
- the gateway's CPU per call under load and its RSS idle and after the load.

    python peers.py TOOLGATE_BIN PROXY_VENV_BIN N CALLS

The upstream is this file too (`upstream PORT N`): a lowlevel server on the
official SDK over streamable HTTP (JSON answers) listing N tools. Every
server listens on 127.0.0.1; every process is stopped at the end.
"""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def upstream(port: int, n: int) -> None:
    import mcp.types as types
    import uvicorn
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    async def list_tools(ctx, params):
        return types.ListToolsResult(
            tools=[types.Tool(name=f"tool_{i:05}", description=f"Tool {i}", input_schema=SCHEMA) for i in range(n)]
        )

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} done")])

    server = Server("peer-upstream", on_list_tools=list_tools, on_call_tool=call_tool)
    manager = StreamableHTTPSessionManager(app=server, json_response=True)

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            async with manager.run():
                while True:
                    message = await receive()
                    if message["type"] == "lifespan.startup":
                        await send({"type": "lifespan.startup.complete"})
                    elif message["type"] == "lifespan.shutdown":
                        await send({"type": "lifespan.shutdown.complete"})
                        return
        await manager.handle_request(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on {port} within 60 s")


def cpu_seconds(pid: int) -> float:
    """User and system CPU of `pid` and its children, in seconds."""
    total = 0.0
    pids = [pid] + children(pid)
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def children(pid: int) -> list[int]:
    out = []
    try:
        for line in subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout.split():
            out.append(int(line))
            out.extend(children(int(line)))
    except ValueError:
        pass
    return out


def rss_mib(pid: int) -> float:
    """Resident memory of `pid` and its children, MiB."""
    total = 0
    for p in [pid] + children(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class Session:
    """One kept-alive SDK client session to `url`."""

    def __init__(self, url: str):
        self.url = url

    async def __aenter__(self):
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        self.http = httpx2.AsyncClient(timeout=60)
        await self.http.__aenter__()
        self.streams = streamable_http_client(self.url, http_client=self.http)
        read, write = (await self.streams.__aenter__())[:2]
        self.session = ClientSession(read, write)
        await self.session.__aenter__()
        await self.session.initialize()
        return self.session

    async def __aexit__(self, *exc):
        await self.session.__aexit__(*exc)
        await self.streams.__aexit__(*exc)
        await self.http.__aexit__(*exc)


def pct(v: list[float], q: float) -> float:
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] * 1e3


async def latency(targets: dict[str, tuple[str, str]], calls: int) -> dict[str, list[float]]:
    """Each target's call times, alternated call by call after 100 warm-ups."""
    from contextlib import AsyncExitStack

    times = {k: [] for k in targets}
    async with AsyncExitStack() as stack:
        sessions = {k: await stack.enter_async_context(Session(url)) for k, (url, _) in targets.items()}
        for i in range(calls + 100):
            for k, (_, tool) in targets.items():
                t = time.perf_counter()
                r = await sessions[k].call_tool(tool, {"id": "1"})
                dt = time.perf_counter() - t
                assert not r.is_error, (k, r)
                if i >= 100:
                    times[k].append(dt)
    return times


async def throughput(url: str, tool: str, clients: int, seconds: float) -> tuple[float, int]:
    """Calls per second with `clients` concurrent sessions for `seconds`,
    each session opened and warmed by one call first (the SDK client lists
    the tools once per session, to check results against their schemas)."""
    done = 0
    ready = 0
    go = asyncio.Event()
    started = stop = 0.0

    async def one() -> None:
        nonlocal done, ready, started, stop
        async with Session(url) as s:
            await s.call_tool(tool, {"id": "1"})
            ready += 1
            if ready == clients:
                started = time.monotonic()
                stop = started + seconds
                go.set()
            await go.wait()
            while time.monotonic() < stop:
                await s.call_tool(tool, {"id": "1"})
                done += 1

    await asyncio.gather(*(one() for _ in range(clients)))
    return done / (stop - started + max(0.0, time.monotonic() - stop)), done


async def list_all(url: str) -> tuple[float, int]:
    async with Session(url) as s:
        t = time.perf_counter()
        cursor, n = None, 0
        while True:
            from mcp import types

            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            r = await s.list_tools(params=params)
            n += len(r.tools)
            cursor = r.next_cursor
            if not cursor:
                return (time.perf_counter() - t) * 1e3, n


def main(toolgate: str, proxy_bin: str, n: int, calls: int) -> None:
    here = os.path.abspath(__file__)
    work = tempfile.mkdtemp(prefix="toolgate-peers-")
    procs: list[subprocess.Popen] = []
    try:
        up_port = free_port()
        up = subprocess.Popen([sys.executable, here, "upstream", str(up_port), str(n)])
        procs.append(up)
        wait_port(up_port, up, "the upstream")
        up_url = f"http://127.0.0.1:{up_port}/mcp"
        # toolgate: the upstream's tools imported, each enabled for users.
        project = os.path.join(work, "project")
        os.makedirs(project)
        subprocess.run(
            [toolgate, "registry", "import-mcp", "--server", "up", "--url", up_url, "-o", f"{project}/registry.toml"],
            check=True,
            capture_output=True,
        )
        policy = "remote-tools visible-to everyone\ngroup mcp_up { enabled  class publicContent }\n"
        policy += "".join(f"tool mcp_up_tool_{i:05} {{ enabled  not admin-only }}\n" for i in range(n))
        policy += "configuration chat {\n  groups [mcp_up]\n}\n"
        with open(f"{project}/policy.tg", "w") as f:
            f.write(policy)
        with open(f"{project}/toolgate.toml", "w") as f:
            f.write('registry = "registry.toml"\npolicies = ["policy.tg"]\n')
        gw_port = free_port()
        with open(f"{work}/gateway.toml", "w") as f:
            f.write(
                f'listen = "127.0.0.1:{gw_port}"\nproject = "{project}"\nregistry = "{project}/registry.toml"\n'
                f'configuration = "chat"\n[identity]\nrole = "user"\n[limits]\nlist-page-size = 1000\n'
                f'max-tools = {max(n, 1000)}\n[[upstream]]\nname = "up"\nurl = "{up_url}"\n'
            )
        gw = subprocess.Popen(
            [toolgate, "gateway", "--config", f"{work}/gateway.toml", "--no-watch"], stderr=subprocess.DEVNULL
        )
        procs.append(gw)
        wait_port(gw_port, gw, "toolgate gateway")
        # mcp-proxy: HTTP -> stdio (its server mode) -> HTTP (its client mode).
        px_port = free_port()
        px = subprocess.Popen(
            [
                f"{proxy_bin}/mcp-proxy", "--port", str(px_port), "--host", "127.0.0.1",
                "--", f"{proxy_bin}/mcp-proxy", "--transport", "streamablehttp", up_url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(px)
        wait_port(px_port, px, "mcp-proxy")
        targets = {
            "direct": (up_url, "tool_00002"),
            "toolgate": (f"http://127.0.0.1:{gw_port}/mcp", "mcp_up_tool_00002"),
            "mcp-proxy": (f"http://127.0.0.1:{px_port}/mcp", "tool_00002"),
        }
        # Ready when each answers a whole listing (a port may accept before
        # its server has listed its upstream); idle is measured after.
        lists = {k: asyncio.run(list_all(url)) for k, (url, _) in targets.items()}
        time.sleep(2)
        idle = {"toolgate": rss_mib(gw.pid), "mcp-proxy": rss_mib(px.pid)}
        times = asyncio.run(latency(targets, calls))
        load = {}
        for k, (url, tool) in targets.items():
            pid = {"toolgate": gw.pid, "mcp-proxy": px.pid}.get(k)
            before = cpu_seconds(pid) if pid else 0.0
            rate, done = asyncio.run(throughput(url, tool, 16, 10.0))
            cpu = (cpu_seconds(pid) - before) if pid else 0.0
            load[k] = (rate, done, cpu, rss_mib(pid) if pid else 0.0)
        d50, d99 = pct(times["direct"], 0.5), pct(times["direct"], 0.99)
        print(f"| N = {n}, {calls} calls each | p50 ms | p99 ms | added p50 / p99 ms | calls/s, 16 clients | of direct | CPU ms per call | RSS idle / loaded MiB | tools/list ms (all {n}) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for k in targets:
            p50, p99 = pct(times[k], 0.5), pct(times[k], 0.99)
            rate, done, cpu, rss = load[k]
            added = "" if k == "direct" else f"+{p50 - d50:.2f} / +{p99 - d99:.2f}"
            cpu_call = "" if k == "direct" else f"{cpu / done * 1e3:.2f}"
            mem = "" if k == "direct" else f"{idle[k]:.0f} / {rss:.0f}"
            ratio = rate / load["direct"][0]
            print(
                f"| {k} | {p50:.2f} | {p99:.2f} | {added} | {rate:,.0f} | {ratio:.2f}x | {cpu_call} | {mem} | {lists[k][0]:.1f} ({lists[k][1]}) |"
            )
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    if sys.argv[1] == "upstream":
        upstream(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
