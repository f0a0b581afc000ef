"""IBM ContextForge 1.1.0 for the peer benchmark (peers.py): started and set
up the way its README and docs describe, then reached like the other targets.

- Started with its own CLI (`mcpgateway`: uvicorn, one worker, its default)
  on 127.0.0.1, with a SQLite database in the run's temporary folder, auth
  on, its admin UI and admin API off, and whatever could reach the network
  off (catalog, LLM chat, A2A, SSO and telemetry are off by default or
  here). The worker forks 4 helpers (2 jq and 2 schema-validation
  processes, its defaults): 5 processes.
- Fairness: `SSRF_ALLOW_LOCALHOST=true` (the upstream is on 127.0.0.1),
  `RATE_LIMITING_ENABLED=false`, `USE_STATEFUL_SESSIONS=true` (one upstream
  session per client session instead of one per call) and
  `MCP_LIST_PAGE_SIZE=1000` (the others page by 1,000 too). Stateful
  sessions without Redis keep their state in the worker's memory, which
  ContextForge supports with one worker only: hence one worker. (Under
  gunicorn with 2 workers, Redis and session affinity, as its production
  set-up has it, it served no more calls per second on these 2 cores, at
  more CPU per call.)
- Set up through its REST API, as the platform admin (`PLATFORM_ADMIN_*`,
  logged in with `/auth/email/login`): a non-admin user, a team with that
  user as a member (which grants the team-scoped `viewer` role), a custom
  team-scoped role `bench-caller` (`servers.use`, `tools.read`,
  `tools.execute`) assigned to the user on the team, the upstream registered
  as a gateway ("MCP server") owned by the team, and a virtual server of the
  team exposing all its tools. The caller then logs in and makes itself an
  API token scoped to the team (`POST /tokens`): every call is checked by
  ContextForge's RBAC and token scoping, as toolgate checks every call; an
  admin token would skip both.
- Its client speaks MCP 2026-07-28 to the upstream (the others 2025-11-25).

    python contextforge.py VENV_BIN UPSTREAM_URL N   (alone: starts it, sets
                                                      it up, prints, stops)
"""

import base64
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ADMIN = "admin@bench.example.com"
CALLER = "caller@bench.example.com"


def password() -> str:
    """Random and within its policy (`password_policy_service.py`): length,
    upper, lower, special; no run of three sequential digits or letters
    (case folded) nor of three repeated characters; no two-character
    pattern more than twice; ten different characters."""
    while True:
        pw = "Aa1!" + secrets.token_urlsafe(24)
        low = pw.lower()
        runs = any(
            ord(b) - ord(a) == ord(c) - ord(b) and abs(ord(b) - ord(a)) <= 1
            for a, b, c in zip(low, low[1:], low[2:])
        )
        patterns = any(pw.count(pw[i : i + 2]) > 2 for i in range(len(pw) - 1))
        if not runs and not patterns and len(set(pw)) >= 10:
            return pw


def environment(work: str, port: int) -> dict[str, str]:
    # Its settings are these: none from the caller's MCP*, DATABASE*, REDIS*, OTEL*.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP", "DATABASE", "REDIS", "OTEL"))}
    env.update(
        HOST="127.0.0.1",
        PORT=str(port),
        DATABASE_URL=f"sqlite:///{work}/contextforge.db",
        CACHE_TYPE="database",  # its default; named so that no Redis is looked for
        JWT_SECRET_KEY=secrets.token_urlsafe(48),
        AUTH_ENCRYPTION_SECRET=secrets.token_urlsafe(48),
        BASIC_AUTH_PASSWORD=password(),
        DEFAULT_USER_PASSWORD=password(),
        PLATFORM_ADMIN_EMAIL=ADMIN,
        PLATFORM_ADMIN_PASSWORD=password(),
        MCPGATEWAY_AUTO_INIT_SECRETS="false",  # else it writes a .env
        AUTH_REQUIRED="true",
        SSRF_ALLOW_LOCALHOST="true",
        RATE_LIMITING_ENABLED="false",
        USE_STATEFUL_SESSIONS="true",
        MCP_LIST_PAGE_SIZE="1000",
        MCPGATEWAY_UI_ENABLED="false",
        MCPGATEWAY_ADMIN_API_ENABLED="false",
        MCPGATEWAY_CATALOG_ENABLED="false",
        MCPGATEWAY_A2A_ENABLED="false",
        LLMCHAT_ENABLED="false",
        OTEL_ENABLE_OBSERVABILITY="false",
        OBSERVABILITY_ENABLED="false",
        LOG_LEVEL="ERROR",
    )
    return env


def command(venv_bin: str, port: int) -> list[str]:
    """Its CLI: uvicorn with one worker, its default."""
    return [os.path.join(os.path.abspath(venv_bin), "mcpgateway"), "--host", "127.0.0.1", "--port", str(port)]


def wait_ready(base: str, proc: subprocess.Popen, log: str, seconds: float = 180) -> None:
    """Until /health answers (the first start migrates a new database)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log, errors="replace") as f:
                tail = f.read()[-3000:]
            raise SystemExit(f"ContextForge exited with {proc.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"ContextForge did not answer /health within {seconds:.0f} s")


def api(base: str, method: str, path: str, token: str | None = None, body=None, timeout: float = 600):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(f"{base}/v1{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raise SystemExit(f"ContextForge {method} {path}: {e.code} {e.read()[:500]!r}") from None


def login(base: str, email: str, pw: str) -> str:
    return api(base, "POST", "/auth/email/login", body={"email": email, "password": pw})["access_token"]


def setup(base: str, env: dict[str, str], upstream_url: str, n: int) -> dict:
    """The team, caller, role, gateway, virtual server and the caller's token.
    Returns the virtual server's MCP URL, the token, the tool names by their
    upstream names and the seconds the gateway registration took."""
    admin = login(base, ADMIN, env["PLATFORM_ADMIN_PASSWORD"])
    caller_pw = password()
    api(base, "POST", "/auth/email/admin/users", admin,
        {"email": CALLER, "password": caller_pw, "full_name": "Benchmark caller", "is_admin": False})
    team = api(base, "POST", "/teams/", admin, {"name": "bench", "visibility": "private"})["id"]
    api(base, "POST", f"/teams/{team}/members", admin, {"email": CALLER, "role": "member"})
    role = api(base, "POST", "/rbac/roles", admin, {
        "name": "bench-caller",
        "description": "calls the benchmark's tools",
        "scope": "team",
        "permissions": ["servers.use", "tools.read", "tools.execute"],
    })["id"]
    api(base, "POST", f"/rbac/users/{CALLER}/roles", admin, {"role_id": role, "scope": "team", "scope_id": team})
    t = time.monotonic()
    gateway = api(base, "POST", "/gateways", admin, {
        "name": "up", "url": upstream_url, "transport": "STREAMABLEHTTP", "team_id": team, "visibility": "team",
    })["id"]
    registered = time.monotonic() - t
    tools = api(base, "GET", f"/tools?limit=0&gateway_id={gateway}", admin)
    if len(tools) != n:
        raise SystemExit(f"ContextForge imported {len(tools)} of the upstream's {n} tools")
    server = api(base, "POST", "/servers", admin, {
        "server": {"name": "bench", "associated_tools": [x["id"] for x in tools]},
        "team_id": team,
        "visibility": "team",
    })["id"]
    caller = login(base, CALLER, caller_pw)
    token = api(base, "POST", "/tokens", caller, {"name": "bench", "expires_in_days": 1, "team_id": team})
    claims = json.loads(_b64(token["access_token"].split(".")[1]))
    assert claims["user"]["is_admin"] is False and claims["teams"] == [team], claims
    return {
        "url": f"{base}/servers/{server}/mcp",
        "token": token["access_token"],
        "names": {x["originalName"]: x["name"] for x in tools},
        "register_s": registered,
    }


def _b64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


if __name__ == "__main__":
    from peers import free_port, stop

    venv_bin, upstream_url, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    work = tempfile.mkdtemp(prefix="toolgate-contextforge-")
    port = free_port()
    proc = None
    try:
        env = environment(work, port)
        log = os.path.join(work, "contextforge.log")
        with open(log, "wb") as f:
            proc = subprocess.Popen(command(venv_bin, port), cwd=work, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        wait_ready(f"http://127.0.0.1:{port}", proc, log)
        done = setup(f"http://127.0.0.1:{port}", env, upstream_url, n)
        print(json.dumps({k: v for k, v in done.items() if k != "names"}, indent=2))
    finally:
        if proc:
            stop(proc)
        subprocess.run(["rm", "-rf", work])
