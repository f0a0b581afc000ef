-- wrk script for bench/scripts/peers.py: each request is one JSON-RPC
-- `tools/call` over MCP streamable HTTP, on a session that the harness opened
-- beforehand (`initialize`, then `notifications/initialized`).
--
--   MCP_TOOL=name MCP_SESSION=id MCP_VERSION=2025-11-25 MCP_AUTH='Bearer ...' \
--     wrk -t2 -c16 -d10s --latency -s bench/scripts/mcp_call.lua URL
--
-- MCP_SESSION and MCP_AUTH may be empty (no such header). With MCP_VERSION
-- 2026-07-28 or later there is no session to open: each request carries the
-- Mcp-Method and Mcp-Name headers and the protocol envelope in `_meta`. Request ids are
-- unique per thread, as JSON-RPC wants on one session. Every answer is
-- checked: a 200 whose body (JSON, or SSE events) holds a `result` that is
-- not `isError: true` is good; anything else is bad. The counts are printed
-- at the end as "good answers: N" and "bad answers: N".

local function env(name, required)
  local v = os.getenv(name) or ""
  if required and v == "" then error(name .. " is not set") end
  return v
end

local tool = env("MCP_TOOL", true)
local session = env("MCP_SESSION")
local auth = env("MCP_AUTH")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = env("MCP_VERSION", true)
if session ~= "" then wrk.headers["Mcp-Session-Id"] = session end
if auth ~= "" then wrk.headers["Authorization"] = auth end

local threads = {}
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("tid", next_thread)
  table.insert(threads, thread)
end

local prefix, n = "", 0
good, bad = 0, 0

function init(args)
  prefix = '{"jsonrpc":"2.0","id":"' .. tid .. '-'
end

-- On 2026-07-28 there is no session: each request names its method and
-- tool in headers and carries the protocol envelope in `_meta`.
local version = env("MCP_VERSION", true)
local meta = ""
if version >= "2026-07-28" then
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = tool
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. version
    .. '","io.modelcontextprotocol/clientCapabilities":{}}'
end

local rest = '","method":"tools/call","params":{"name":"' .. tool .. '","arguments":{"id":"1"}' .. meta .. '}}'

function request()
  n = n + 1
  return wrk.format(nil, nil, nil, prefix .. n .. rest)
end

function response(status, headers, body)
  if status == 200 and body:find('"result"', 1, true) and not body:find('"isError"%s*:%s*true') then
    good = good + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local g, b = 0, 0
  for _, t in ipairs(threads) do
    g = g + t:get("good")
    b = b + t:get("bad")
  end
  io.write(string.format("good answers: %d\nbad answers: %d\n", g, b))
end
