"""BENCHMARKS.md, "Peer gateways side by side": the same upstream reached
directly, through `toolgate gateway` (twice: `toolgate` speaks 2026-07-28
to the upstream, so a plain call takes its direct path, in a session or not;
`toolgate-2025` speaks the default 2025-11-25), through mcp-proxy 0.13.0 (chained
HTTP -> stdio -> HTTP, its only way to proxy streamable HTTP) and through
IBM ContextForge 1.1.0 (a virtual server of a registered gateway, called by
a non-admin user with a team-scoped API token; see contextforge.py), in one
run, measured with the official Python MCP SDK client (2.3) and with wrk:

- the latency of a `tools/call`, p50 and p99, the targets alternated call
  by call over one kept-alive SDK session each;
- calls per second with 16 concurrent kept-alive SDK clients (one session
  each): direct and toolgate's two in 12 rounds of 5 s windows, the
  targets alternated within each round on sessions opened once, each
  reporting its median window and its median ratio to direct's window of
  the same round (the client's own rate moves between windows by up to a
  fifth, and a paired ratio cancels what moves slowly); the peers in one
  10 s window;
- calls per second and latency p50 / p99 with wrk (`mcp_call.lua`): 2
  threads, 16 kept-alive connections, 10 s (an answer may take up to
  30 s), all on one session that the harness opened with a plain
  `initialize` (protocol 2025-11-25); every answer is checked to be a
  result, non-2xx counted, and one call made first by the harness must
  be a successful result;
- the same wrk run on protocol 2026-07-28 (no session; each request names
  its method and tool in headers and carries the protocol in `_meta`), for
  the targets that answer a plain call on it, and the 16 SDK clients again
  on it (each opened with the client's `server/discover`);
- a control, in the same rounds as direct and toolgate's two: direct
  beside a busy loop that spins toolgate's CPU per call at toolgate's rate
  (from a 5 s window), since on two cores the 16 clients' one Python
  process is the bottleneck and any process beside it slows it; with each
  target, how often per call the clients' thread was preempted;
- the 16 SDK clients again with the client alone on one core and every
  server on the other (`own_core`: 8 alternated rounds per revision, the
  peers one 10 s window), as a load generator runs apart from what it
  loads;
- each gateway's CPU while idle (5 s, nothing asked), since the others
  idle beside the one under load on the same cores;
- `tools/list` (every page) of the N tools;
- the gateway's CPU per call under both loads (while the calls run, not
  while the sessions open, list and close) and its memory idle and after
  the loads (the larger of after each): RSS summed over its processes, and PSS (shared pages split
  among the processes sharing them), since ContextForge forks helpers that
  share its worker's pages, which RSS would count again in each.

    python peers.py TOOLGATE_BIN PROXY_VENV_BIN CONTEXTFORGE_VENV_BIN N CALLS

Each target's tool is `tool_00002` under its name there, unless it is not
on the target's first `tools/list` page (the SDK client would list that page
again before every call): then the page's first tool, all tools being alike.

The upstream is this file too (`upstream PORT N`): a lowlevel server on the
official SDK over streamable HTTP (JSON answers) listing N tools. Every
server listens on 127.0.0.1, each in its own process group; every process
is stopped at the end, also on an error or SIGTERM.
"""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import NamedTuple

import contextforge

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

    # A tool's input schema without listing them all, as the SDK's MCPServer
    # gives it: otherwise each `tools/call` on protocol 2026-07-28 (which
    # ContextForge's client speaks) lists every tool to check its Mcp-Param
    # headers, at N = 10,000 some 0.3 s of the upstream's CPU per call.
    names = {f"tool_{i:05}" for i in range(n)}
    server = Server(
        "peer-upstream",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: SCHEMA if name in names else None,
    )
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


def busy(spin: float, period: float) -> None:
    """A control for the shared cores: spin `spin` seconds every `period`
    seconds on an absolute schedule (so sleeping late does not lower the
    rate), as a gateway spends its CPU per call at its rate of calls."""
    wake = time.monotonic()
    while True:
        end = time.monotonic() + spin
        while time.monotonic() < end:
            pass
        wake += period
        pause = wake - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        else:
            wake = time.monotonic()


def preemptions() -> int:
    """How often this process's main thread (the clients' event loop) has
    been preempted: its involuntary context switches."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("nonvoluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise SystemExit("/proc/self/status has no nonvoluntary_ctxt_switches")


def preempted_per_call(windows: dict) -> str:
    """Each target's preemptions of the clients' thread per call."""
    return ", ".join(f"{k} {sum(w[3] for w in v) / max(1, sum(w[1] for w in v)):.2f}" for k, v in windows.items())


def pin(pids: list[int], cpus: set[int], with_children: bool = True) -> None:
    """Every thread of `pids` (and of their children) onto `cpus` (threads
    started later inherit it from the thread that starts them)."""
    for pid in pids:
        for p in [pid] + (children(pid) if with_children else []):
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{p}/task")]
            except OSError:
                continue
            for tid in tids:
                try:
                    os.sched_setaffinity(tid, cpus)
                except OSError:  # a thread that has just ended
                    pass


def memory_mib(pid: int) -> tuple[float, float, int]:
    """RSS and PSS of `pid` and its children, MiB, and how many processes."""
    rss = pss = 0
    pids = [pid] + children(pid)
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss / 1024, pss / 1024, len(pids)


class Target(NamedTuple):
    url: str
    tool: str
    headers: dict[str, str]
    pid: int | None  # the gateway's process (group leader), None for direct
    # `pid` is a stopped busy loop (`busy`), run only during this target's
    # windows: direct, beside a process spending what a gateway spends.
    busy: bool = False


class Session:
    """One kept-alive SDK client to `url`: a session opened with
    `initialize` (2025-11-25), or with `modern` the client's
    `server/discover` (2026-07-28, no session)."""

    def __init__(self, url: str, headers: dict[str, str], modern: bool = False):
        self.url = url
        self.headers = headers
        self.modern = modern

    async def __aenter__(self):
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        self.http = httpx2.AsyncClient(timeout=60, headers=self.headers)
        await self.http.__aenter__()
        self.streams = streamable_http_client(self.url, http_client=self.http)
        read, write = (await self.streams.__aenter__())[:2]
        self.session = ClientSession(read, write)
        await self.session.__aenter__()
        if self.modern:
            await self.session.discover()
        else:
            await self.session.initialize()
        return self.session

    async def __aexit__(self, *exc):
        await self.session.__aexit__(*exc)
        await self.streams.__aexit__(*exc)
        await self.http.__aexit__(*exc)


def pct(v: list[float], q: float) -> float:
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] * 1e3


async def latency(targets: dict[str, Target], calls: int) -> dict[str, list[float]]:
    """Each target's call times, alternated call by call after 100 warm-ups."""
    from contextlib import AsyncExitStack

    times = {k: [] for k in targets}
    async with AsyncExitStack() as stack:
        sessions = {k: await stack.enter_async_context(Session(t.url, t.headers)) for k, t in targets.items()}
        for i in range(calls + 100):
            for k, t in targets.items():
                start = time.perf_counter()
                r = await sessions[k].call_tool(t.tool, {"id": "1"})
                dt = time.perf_counter() - start
                assert not r.is_error, (k, r)
                if i >= 100:
                    times[k].append(dt)
    return times


async def throughput(t: Target, clients: int, seconds: float, modern: bool = False) -> tuple[float, int, float]:
    """Calls per second with `clients` concurrent sessions for `seconds`,
    each session opened and warmed by one call first (the SDK client lists
    the tools once per session, to check results against their schemas),
    and the gateway's CPU seconds from the moment all are warm until the
    last call ends (not the sessions' opening, listing and closing): one
    window of [`alternated`]."""
    return (await alternated({"t": t}, clients, 1, seconds, modern))["t"][0][:3]


async def alternated(targets: dict[str, Target], clients: int, rounds: int, seconds: float, modern: bool = False):
    """`rounds` windows of `seconds` for each target, the targets taken in
    turn within a round (the order reversed every other round), on
    `clients` sessions per target opened and warmed once: each window's
    calls per second, calls, the gateway's CPU seconds and how often the
    clients' thread was preempted (taken off its core while it could run)."""
    from contextlib import AsyncExitStack

    async def window(t: Target, sessions) -> tuple[float, int, float, int]:
        done = 0
        if t.busy:
            os.kill(t.pid, signal.SIGCONT)
        preempted = -preemptions()
        cpu = -cpu_seconds(t.pid) if t.pid else 0.0
        started = time.monotonic()
        stop = started + seconds

        async def one(s) -> None:
            nonlocal done
            while time.monotonic() < stop:
                r = await s.call_tool(t.tool, {"id": "1"})
                assert not r.is_error, r
                done += 1

        await asyncio.gather(*(one(s) for s in sessions))
        ended = time.monotonic()
        cpu += cpu_seconds(t.pid) if t.pid else 0.0
        preempted += preemptions()
        if t.busy:
            os.kill(t.pid, signal.SIGSTOP)
        return done / (ended - started), done, cpu, preempted

    windows = {k: [] for k in targets}
    async with AsyncExitStack() as stack:
        sessions = {}
        for k, t in targets.items():
            sessions[k] = [await stack.enter_async_context(Session(t.url, t.headers, modern)) for _ in range(clients)]
            await asyncio.gather(*(s.call_tool(t.tool, {"id": "1"}) for s in sessions[k]))
        for r in range(rounds):
            order = list(targets) if r % 2 == 0 else list(reversed(targets))
            for k in order:
                windows[k].append(await window(targets[k], sessions[k]))
    return windows


async def first_page(t: Target) -> list[str]:
    """The tools of the first `tools/list` page: the SDK client lists that
    page again before each call to a tool it has not seen listed."""
    async with Session(t.url, t.headers) as s:
        return [x.name for x in (await s.list_tools()).tools]


async def list_all(t: Target) -> tuple[float, int]:
    from mcp import types

    async with Session(t.url, t.headers) as s:
        start = time.perf_counter()
        cursor, n = None, 0
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            r = await s.list_tools(params=params)
            n += len(r.tools)
            cursor = r.next_cursor
            if not cursor:
                return (time.perf_counter() - start) * 1e3, n


# wrk: a plain HTTP client, so the gateway rather than the client is the limit.
WRK = ["wrk", "-t2", "-c16", "-d10s", "--timeout", "30s", "--latency"]
HANDSHAKE_VERSION = "2025-11-25"  # what the SDK client's `initialize` asks for


def rpc(url: str, headers: dict[str, str], message: dict) -> tuple[int, str, str, dict | None]:
    """One JSON-RPC POST: status, content type, Mcp-Session-Id and the
    answer (from a JSON body or the last SSE `data:` event), if any."""
    req = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        status, ctype, sid, body = r.status, r.headers.get("Content-Type", ""), r.headers.get("Mcp-Session-Id", ""), r.read()
    answer = None
    if "text/event-stream" in ctype:
        for line in body.decode().splitlines():
            if line.startswith("data:") and line[5:].strip():
                answer = json.loads(line[5:])
    elif body.strip():
        answer = json.loads(body)
    return status, ctype.split(";")[0], sid, answer


def wrk_session(t: Target) -> tuple[str, str, str]:
    """A session opened the plain way, checked with one call: its id, its
    protocol version and the content type of a `tools/call` answer."""
    _, _, sid, init = rpc(t.url, t.headers, {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": {"name": "wrk", "version": "1"}},
    })
    version = init["result"]["protocolVersion"]
    headers = {**t.headers, "MCP-Protocol-Version": version}
    if sid:
        headers["Mcp-Session-Id"] = sid
    rpc(t.url, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    status, ctype, _, answer = rpc(t.url, headers, {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": t.tool, "arguments": {"id": "1"}},
    })
    if status != 200 or not answer or "result" not in answer or answer["result"].get("isError"):
        raise SystemExit(f"a plain tools/call to {t.url} did not answer a result: {status} {answer}")
    return sid, version, ctype


MODERN = "2026-07-28"  # no session: a request carries the protocol in `_meta`


def modern_call(t: Target) -> str | None:
    """One plain `tools/call` on 2026-07-28: the answer's content type if it
    is a result, None if the target does not speak that revision."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {**t.headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": t.tool}
    try:
        status, ctype, _, answer = rpc(t.url, headers, {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": t.tool, "arguments": {"id": "1"}, "_meta": meta},
        })
    except (OSError, ValueError):
        return None
    if status != 200 or not answer or "result" not in answer or answer["result"].get("isError"):
        return None
    return ctype


def wrk(t: Target, lua: str, modern: bool = False) -> dict | None:
    """wrk against `t` (see WRK and mcp_call.lua): its numbers, parsed, and
    the gateway's CPU seconds while it ran. `modern`: on 2026-07-28, with no
    session (None when the target does not answer that revision)."""
    if modern:
        ctype = modern_call(t)
        if ctype is None:
            return None
        sid, version = "", MODERN
    else:
        sid, version, ctype = wrk_session(t)
    env = dict(os.environ, MCP_TOOL=t.tool, MCP_SESSION=sid, MCP_VERSION=version, MCP_AUTH=t.headers.get("Authorization", ""))
    cpu = cpu_seconds(t.pid) if t.pid else 0.0
    out = subprocess.run([*WRK, "-s", lua, t.url], env=env, capture_output=True, text=True, timeout=120)
    cpu = (cpu_seconds(t.pid) - cpu) if t.pid else 0.0
    if out.returncode != 0:
        raise SystemExit(f"wrk failed on {t.url}: {out.stderr or out.stdout}")
    r = {"version": version, "ctype": ctype, "session": bool(sid), "non2xx": 0, "errors": 0, "cpu": cpu}
    for line in out.stdout.splitlines():
        w = line.split()
        if line.startswith("Requests/sec:"):
            r["rate"] = float(w[1])
        elif len(w) == 2 and w[0] in ("50%", "99%"):
            r[w[0]] = wrk_ms(w[1])
        elif "requests in" in line:
            r["requests"] = int(w[0])
        elif line.startswith("  Non-2xx or 3xx responses:"):
            r["non2xx"] = int(w[-1])
        elif line.startswith("  Socket errors:"):
            r["errors"] = sum(int(x.strip(",")) for x in w[3::2])
        elif line.startswith(("good answers:", "bad answers:")):
            r[w[0]] = int(w[2])
    return r


def wrk_ms(v: str) -> float:
    for unit, ms in (("us", 1e-3), ("ms", 1.0), ("s", 1e3), ("m", 6e4), ("h", 3.6e6)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * ms
    raise ValueError(v)


def idle_cores(pids: dict[str, int], seconds: float) -> dict[str, float]:
    """The cores each of `pids` (with its children) uses while nobody asks
    any of them anything, over the same `seconds`."""
    before = {k: cpu_seconds(p) for k, p in pids.items()}
    time.sleep(seconds)
    return {k: (cpu_seconds(p) - before[k]) / seconds for k, p in pids.items()}


def stop(proc: subprocess.Popen) -> None:
    """`proc`'s whole process group (mcp-proxy's chain, ContextForge's
    helpers): SIGTERM, then SIGKILL after 10 s (a server with open sessions
    may wait for them). A stopped one (the busy loop) is woken to take it."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
            os.killpg(proc.pid, signal.SIGCONT)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            pass
    try:  # what outlived its leader
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(toolgate: str, proxy_bin: str, cf_bin: str, n: int, calls: int) -> None:
    began = time.monotonic()
    here = os.path.abspath(__file__)
    lua = os.path.join(os.path.dirname(here), "mcp_call.lua")
    work = tempfile.mkdtemp(prefix="toolgate-peers-")
    procs: list[subprocess.Popen] = []

    def spawn(argv: list[str], **kw) -> subprocess.Popen:
        p = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, **kw)
        procs.append(p)
        return p

    try:
        up_port = free_port()
        up = spawn([sys.executable, here, "upstream", str(up_port), str(n)])
        wait_port(up_port, up, "the upstream")
        up_url = f"http://127.0.0.1:{up_port}/mcp"
        # ContextForge first: its first start migrates a new database (~20 s).
        cf_port = free_port()
        cf_work = os.path.join(work, "contextforge")
        os.makedirs(cf_work)
        cf_env = contextforge.environment(cf_work, cf_port)
        cf_log = os.path.join(cf_work, "contextforge.log")
        with open(cf_log, "wb") as f:
            cf = spawn(contextforge.command(cf_bin, cf_port), cwd=cf_work, env=cf_env, stdout=f, stderr=subprocess.STDOUT)
        cf_started = time.monotonic()
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
        # Two gateways: toward the upstream on 2026-07-28 (a plain call then
        # takes the direct path: docs/gateway.md) and on 2025-11-25 (the
        # default, `initialize` and a session). Each relists the upstream
        # every hour, not every 60 s (the default), so not within a run
        # (some 12 min): a relisting of 10k tools costs the upstream about a
        # second of CPU, which would land in some targets' timed windows and
        # not others', and holds two listings in the gateway's memory.
        gws = {}
        for key, protocol in (("toolgate", "2026-07-28"), ("toolgate-2025", "2025-11-25")):
            gw_port = free_port()
            with open(f"{work}/{key}.toml", "w") as f:
                f.write(
                    f'listen = "127.0.0.1:{gw_port}"\nproject = "{project}"\nregistry = "{project}/registry.toml"\n'
                    f'configuration = "chat"\n[identity]\nrole = "user"\n[limits]\nlist-page-size = 1000\n'
                    f'relist-interval-ms = 3600000\nmax-tools = {max(n, 1000)}\n[[upstream]]\nname = "up"\nprotocol = "{protocol}"\nurl = "{up_url}"\n'
                )
            gw = spawn([toolgate, "gateway", "--config", f"{work}/{key}.toml", "--no-watch"], stderr=subprocess.DEVNULL)
            wait_port(gw_port, gw, "toolgate gateway")
            gws[key] = (gw_port, gw)
        # mcp-proxy: HTTP -> stdio (its server mode) -> HTTP (its client mode).
        px_port = free_port()
        px = spawn(
            [
                f"{proxy_bin}/mcp-proxy", "--port", str(px_port), "--host", "127.0.0.1",
                "--", f"{proxy_bin}/mcp-proxy", "--transport", "streamablehttp", up_url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(px_port, px, "mcp-proxy")
        cf_base = f"http://127.0.0.1:{cf_port}"
        contextforge.wait_ready(cf_base, cf, cf_log)
        cf_ready = time.monotonic() - cf_started
        cfs = contextforge.setup(cf_base, cf_env, up_url, n)
        targets = {
            "direct": Target(up_url, "tool_00002", {}, None),
            **{
                key: Target(f"http://127.0.0.1:{port}/mcp", "mcp_up_tool_00002", {}, gw.pid)
                for key, (port, gw) in gws.items()
            },
            "mcp-proxy": Target(f"http://127.0.0.1:{px_port}/mcp", "tool_00002", {}, px.pid),
            "ContextForge": Target(cfs["url"], cfs["names"]["tool_00002"], {"Authorization": f"Bearer {cfs['token']}"}, cf.pid),
        }
        # Ready when each answers a whole listing (a port may accept before
        # its server has listed its upstream); idle is measured after.
        lists = {k: asyncio.run(list_all(t)) for k, t in targets.items()}
        for k, (_, count) in lists.items():
            assert count == n, f"{k} listed {count} of {n} tools"
        notes = []
        for k, t in targets.items():
            page = asyncio.run(first_page(t))
            if t.tool not in page:
                notes.append(f"{k} lists {t.tool} past its first page: calls {page[0]} instead")
                targets[k] = t._replace(tool=page[0])
        time.sleep(2)
        idle = {k: memory_mib(t.pid) for k, t in targets.items() if t.pid}
        times = asyncio.run(latency(targets, calls))
        load, wrks, loaded, modern = {}, {}, {}, {}
        idle_cpu = idle_cores({k: t.pid for k, t in targets.items() if t.pid}, 5.0)
        for k, t in targets.items():
            if k not in ALTERNATED:
                load[k] = asyncio.run(throughput(t, 16, 10.0))
            after_sdk = memory_mib(t.pid) if t.pid else None
            wrks[k] = wrk(t, lua)
            modern[k] = wrk(t, lua, modern=True)
            if modern[k] is not None and k in ALTERNATED:
                modern[k]["sdk"] = None
            elif modern[k] is not None:
                try:
                    modern[k]["sdk"] = asyncio.run(throughput(t, 16, 10.0, modern=True))
                except Exception as e:  # a target the SDK client cannot discover
                    modern[k]["sdk"] = None
                    print(f"{k}: the SDK client on {MODERN} failed: {e!r}")
            if t.pid:
                after_wrk = memory_mib(t.pid)
                loaded[k] = (max(after_sdk[0], after_wrk[0]), max(after_sdk[1], after_wrk[1]), after_wrk[2])
        # The SDK client's rate moves between windows by up to a fifth (its
        # 16 clients share one Python process with the harness), more than
        # between targets on one path: direct and toolgate's two are
        # measured in alternated rounds, each ratio taken within a round.
        paired = {k: targets[k] for k in ALTERNATED}
        # The control: direct beside a busy loop spending what `toolgate`
        # spends (its CPU per call at its rate, from a 5 s window), paired
        # in the same rounds, so what the shared cores cost the client is
        # read apart from what the gateway does.
        cal_rate, cal_done, cal_cpu = asyncio.run(throughput(targets["toolgate"], 16, 5.0))
        loop = spawn([sys.executable, here, "busy", str(cal_cpu / max(1, cal_done)), str(1 / cal_rate)])
        os.kill(loop.pid, signal.SIGSTOP)
        control = Target(up_url, "tool_00002", {}, loop.pid, busy=True)
        windows = asyncio.run(alternated({**paired, BUSY: control}, 16, ROUNDS, 5.0))
        modern_paired = {k: t for k, t in paired.items() if modern.get(k) is not None}
        modern_windows = {}
        if "direct" in modern_paired:
            modern_windows = asyncio.run(alternated(modern_paired, 16, ROUNDS, 5.0, modern=True))
        ratios = {k: median_ratio(v, windows["direct"]) for k, v in windows.items()}
        load.update({k: median_window(v) for k, v in windows.items()})
        own, own_preempted = own_core([up.pid] + [t.pid for t in targets.values() if t.pid], paired, modern_paired, targets)
        for k, v in modern_windows.items():
            modern[k]["sdk"] = median_window(v)
            modern[k]["sdk_ratio"] = median_ratio(v, modern_windows["direct"])
        for k, t in paired.items():
            if t.pid:
                now = memory_mib(t.pid)
                loaded[k] = (max(loaded[k][0], now[0]), max(loaded[k][1], now[1]), loaded[k][2])
        report(n, calls, targets, times, load, ratios, wrks, lists, idle, loaded)
        rate, done, cpu = load[BUSY]
        print(
            f"{BUSY} (spinning {cal_cpu / max(1, cal_done) * 1e3:.2f} ms every {1e3 / cal_rate:.2f} ms, "
            f"toolgate's CPU per call at its rate): {rate:,.0f} calls/s, {ratios[BUSY]:.2f}x of direct, "
            f"the loop at {cpu / (ROUNDS * 5.0):.2f} cores (toolgate {load['toolgate'][2] / (ROUNDS * 5.0):.2f})"
        )
        print(f"the clients' thread preempted per call, shared cores, 2025-11-25: {preempted_per_call(windows)}")
        report_modern(n, modern)
        report_own(n, own, own_preempted)
        print("idle CPU, cores (5 s, nothing asked): " + ", ".join(f"{k} {v:.2f}" for k, v in idle_cpu.items()))
        for note in notes:
            print(note)
        print(
            f"ContextForge: ready within {cf_ready:.0f} s of its start (new SQLite database), registration of the "
            f"{n}-tool upstream {cfs['register_s']:.1f} s; whole run {time.monotonic() - began:.0f} s."
        )
    finally:
        for p in procs:
            stop(p)
        subprocess.run(["rm", "-rf", work])


ALTERNATED = ("direct", "toolgate", "toolgate-2025")
ROUNDS = 12
BUSY = "direct + busy loop"
OWN_ROUNDS = 8


def own_core(servers: list[int], paired: dict, modern_paired: dict, targets: dict) -> tuple[dict, dict[str, str]]:
    """The SDK client's load again with the client alone on one core and
    every server (the upstream, each gateway, their threads and children)
    on another, as a load generator runs apart from what it loads: direct
    and toolgate's two in alternated rounds on both revisions, the peers in
    one 10 s window; and per revision how often per call the clients'
    thread was preempted. Every affinity is given back after."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("the own-core load needs two cores: run on a machine with two or more")
    own: dict = {}
    preempted: dict[str, str] = {}
    pin([os.getpid()], {cpus[0]}, with_children=False)
    pin(servers, {cpus[1]})
    try:
        for revision, modern, ts in (("2025-11-25", False, paired), (MODERN, True, modern_paired)):
            if "direct" not in ts:
                continue
            windows = asyncio.run(alternated(ts, 16, OWN_ROUNDS, 5.0, modern=modern))
            preempted[revision] = preempted_per_call(windows)
            for k, v in windows.items():
                own.setdefault(k, {})[revision] = (median_window(v), median_ratio(v, windows["direct"]))
        for k, t in targets.items():
            if k not in ALTERNATED:
                w = asyncio.run(throughput(t, 16, 10.0))
                own.setdefault(k, {})["2025-11-25"] = (w, w[0] / own["direct"]["2025-11-25"][0][0])
    finally:
        pin([os.getpid()], set(cpus), with_children=False)
        pin(servers, set(cpus))
    return own, preempted


def report_own(n: int, own: dict, preempted: dict[str, str]) -> None:
    """The SDK client's load with the client on its own core."""
    print()
    print(
        f"| N = {n}, 16 SDK clients on one core, the servers on another | calls/s 2025-11-25 | of direct "
        f"| calls/s {MODERN} | of direct | CPU ms per call, 2025-11-25 / {MODERN} |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for k, by in own.items():
        cells, cpus = [], []
        for revision in ("2025-11-25", MODERN):
            if revision not in by:
                cells += ["—", ""]
                cpus.append("—")
                continue
            (rate, done, cpu), ratio = by[revision]
            cells += [f"{rate:,.0f}", f"{ratio:.2f}x"]
            cpus.append(f"{cpu / max(1, done) * 1e3:.2f}")
        print(f"| {k} | " + " | ".join(cells) + f" | {'' if k == 'direct' else ' / '.join(cpus)} |")
    for revision, line in preempted.items():
        print(f"the clients' thread preempted per call, own core, {revision}: {line}")


def median_window(windows: list[tuple]) -> tuple[float, int, float]:
    """The median window's rate, with the calls and CPU of all windows (CPU
    per call over every call timed)."""
    rates = sorted(w[0] for w in windows)
    return rates[len(rates) // 2], sum(w[1] for w in windows), sum(w[2] for w in windows)


def median_ratio(windows: list[tuple], base: list[tuple]) -> float:
    """The median over rounds of a window's rate over direct's in the same round."""
    ratios = sorted(w[0] / b[0] for w, b in zip(windows, base))
    return ratios[len(ratios) // 2]


def report(n, calls, targets, times, load, ratios, wrks, lists, idle, loaded) -> None:
    d50, d99 = pct(times["direct"], 0.5), pct(times["direct"], 0.99)
    print(
        f"| N = {n}, {calls} calls each | p50 ms | p99 ms | added p50 / p99 ms | calls/s, 16 clients | of direct "
        f"| wrk calls/s, 16 conns | of direct | wrk p50 / p99 ms | CPU ms per call, SDK / wrk "
        f"| RSS idle / loaded MiB | PSS idle / loaded MiB | tools/list ms (all {n}) |"
    )
    print("| --- |" + " ---: |" * 12)
    for k in targets:
        p50, p99 = pct(times[k], 0.5), pct(times[k], 0.99)
        rate, done, cpu = load[k]
        w = wrks[k]
        added = "" if k == "direct" else f"{p50 - d50:+.2f} / {p99 - d99:+.2f}"
        cpu_call = "" if k == "direct" else f"{cpu / done * 1e3:.2f} / {w['cpu'] / max(1, w['requests']) * 1e3:.2f}"
        rss = pss = ""
        if k in idle:
            rss = f"{idle[k][0]:.0f} / {loaded[k][0]:.0f}"
            pss = f"{idle[k][1]:.0f} / {loaded[k][1]:.0f}"
        print(
            f"| {k} | {p50:.2f} | {p99:.2f} | {added} | {rate:,.0f} | {ratios.get(k, rate / load['direct'][0]):.2f}x "
            f"| {w['rate']:,.0f} | {w['rate'] / wrks['direct']['rate']:.2f}x | {w['50%']:.2f} / {w['99%']:.2f} "
            f"| {cpu_call} | {rss} | {pss} | {lists[k][0]:.1f} ({lists[k][1]}) |"
        )
    print()
    print(f"wrk ({' '.join(WRK)}, one session each, opened with protocol {HANDSHAKE_VERSION}):")
    for k, w in wrks.items():
        print(wrk_line(k, w) + f"; protocol {w['version']}{'' if w['session'] else ', no session id'}")
    print("processes: " + ", ".join(f"{k} {loaded[k][2]}" for k in loaded))


def wrk_line(k: str, w: dict) -> str:
    """One wrk run's counts: every answer checked, the errors counted."""
    return (
        f"  {k}: {w['requests']:,} calls, {w.get('good', 0):,} good answers, {w.get('bad', 0)} bad, "
        f"{w['non2xx']} non-2xx, {w['errors']} socket errors; answers {w['ctype']}"
    )


def report_modern(n: int, modern: dict) -> None:
    """The wrk runs on 2026-07-28 (no session), beside direct's."""
    base = modern.get("direct")
    print()
    print(
        f"| N = {n}, on {MODERN} (no session) | wrk calls/s | of direct | wrk p50 / p99 ms "
        f"| SDK calls/s, 16 clients | of direct | CPU ms per call, wrk / SDK |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k, w in modern.items():
        if w is None:
            print(f"| {k} | does not answer a {MODERN} call | | | | | |")
            continue
        ratio = f"{w['rate'] / base['rate']:.2f}x" if base else ""
        wrk_cpu = f"{w['cpu'] / max(1, w['requests']) * 1e3:.2f}"
        if w["sdk"] is None:
            sdk, sdk_ratio, sdk_cpu = "failed", "", "—"
        else:
            rate, done, cpu = w["sdk"]
            sdk, sdk_cpu = f"{rate:,.0f}", f"{cpu / max(1, done) * 1e3:.2f}"
            ratio_of = w.get("sdk_ratio") or (rate / base["sdk"][0] if base and base["sdk"] else None)
            sdk_ratio = f"{ratio_of:.2f}x" if ratio_of else ""
        cpus = "" if k == "direct" else f"{wrk_cpu} / {sdk_cpu}"
        print(
            f"| {k} | {w['rate']:,.0f} | {ratio} | {w['50%']:.2f} / {w['99%']:.2f} "
            f"| {sdk} | {sdk_ratio} | {cpus} |"
        )
    for k, w in modern.items():
        if w is not None:
            print(wrk_line(k, w))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    if sys.argv[1] == "upstream":
        upstream(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "busy":
        busy(float(sys.argv[2]), float(sys.argv[3]))
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
