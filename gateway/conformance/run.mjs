// The official MCP conformance suite (server mode, active suite) against
// the reference server-everything, directly and through `toolgate gateway`,
// then what the suite cannot reach (the gateway renames tools and prompts)
// through the mapped names with the official TypeScript client.
//
// Run by .ci/run as `node run.mjs` after `npm ci` (the machine's Node, 20
// or later: node20.mjs gives the suite what it needs of Node 22), with
// TOOLGATE_BIN naming the binary. Fails (never skips) when a
// part is missing, a scenario that passes directly fails through the
// gateway, or a relayed answer differs from the direct one.
//
// Every process listens on 127.0.0.1; every wait is bounded.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");

/// Scenarios that call a bare tool or prompt name of the suite's own test
/// server (`test_simple_text`, ...): the gateway offers a server's tools as
/// `mcp_SERVER_NAME`, so it answers those names as unknown. Listed in
/// docs/gateway.md ("Conformance"); their intent is checked below through
/// the mapped names.
const RENAMED = new Map([
  ["tools-call-simple-text", "calls `test_simple_text`; checked as `mcp_everything_echo`"],
  ["tools-call-error", "calls `test_error_handling`; checked as `mcp_everything_get-sum` with bad arguments"],
]);

const TIMEOUT_MS = 60_000;

function fail(message) {
  console.error(`gateway conformance: ${message}`);
  process.exit(1);
}

if (Number(process.versions.node.split(".")[0]) < 20) {
  fail(`Node ${process.versions.node}: the suite needs Node 20 or later`);
}
const toolgate = process.env.TOOLGATE_BIN;
if (!toolgate || !existsSync(toolgate)) {
  fail("TOOLGATE_BIN does not name the toolgate binary (build it with `cargo build -p toolgate`)");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/// Start `argv`, resolve with the first match of `pattern` on its stderr.
function start(argv, env, pattern, what) {
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let seen = "";
  const found = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${TIMEOUT_MS} ms:\n${seen}`)), TIMEOUT_MS);
    const look = (chunk) => {
      seen += chunk;
      const m = seen.match(pattern);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stderr.on("data", look);
    child.stdout.on("data", look);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready:\n${seen}`));
    });
  });
  return { child, found };
}

/// Run `argv` to its end within the timeout: its output.
function run(argv, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${argv.join(" ")} did not finish within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${argv.join(" ")} exited ${code}:\n${err}${out}`));
    });
  });
}

/// Each scenario of one suite run: passed as the suite itself counts it
/// (its `expected-failures` rule): a check succeeded and none failed or
/// warned; an INFO check (a JSON answer where SSE is optional) is neither.
async function suite(url, dir) {
  const bin = join(modules, "@modelcontextprotocol/conformance/dist/index.js");
  // The suite exits non-zero when a scenario fails; the results are read.
  await run([process.execPath, "--import", join(here, "node20.mjs"), bin, "server", "--url", url, "-o", dir]).catch(() => {});
  const results = new Map();
  for (const entry of readdirSync(dir)) {
    const m = entry.match(/^server-(.+)-\d{4}-\d\d-\d\dT/);
    if (!m) continue;
    const checks = JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8"));
    const bad = checks.some((c) => c.status === "FAILURE" || c.status === "WARNING");
    results.set(m[1], !bad && checks.some((c) => c.status === "SUCCESS"));
  }
  if (results.size === 0) fail(`the suite wrote no results for ${url}`);
  return results;
}

function equal(a, b, what) {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  if (x !== y) fail(`${what}: through the gateway\n  ${y}\ndirectly\n  ${x}`);
}

async function connect(url) {
  const client = new Client({ name: "toolgate-conformance", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/// Wait for `predicate` over `items` (filled by a notification handler).
async function waitFor(items, predicate, what) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (items.some(predicate)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`${what}: not received within 15 s (got ${JSON.stringify(items)})`);
}

const children = [];
process.on("exit", () => children.forEach((c) => c.kill()));

const work = mkdtempSync(join(tmpdir(), "toolgate-conformance-"));
const port = await freePort();
const everything = start(
  [process.execPath, "--import", join(here, "loopback.mjs"), join(modules, "@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"],
  { PORT: String(port) },
  /listening on port/,
  "server-everything",
);
children.push(everything.child);
await everything.found.catch((e) => fail(e.message));
const direct = `http://127.0.0.1:${port}/mcp`;

// The project's registry is what `registry import-mcp` reads from this server.
const imported = await run([toolgate, "registry", "import-mcp", "--server", "everything", "--url", direct]).catch((e) => fail(e.message));
if (process.env.UPDATE_REGISTRY === "1") writeFileSync(join(here, "project/registry.toml"), imported);
if (imported !== readFileSync(join(here, "project/registry.toml"), "utf8")) {
  fail("project/registry.toml is not what `toolgate registry import-mcp --server everything` reads from this server-everything: import it again (UPDATE_REGISTRY=1 node run.mjs writes it)");
}

const config = join(work, "gateway.toml");
writeFileSync(
  config,
  `listen = "127.0.0.1:0"
project = ${JSON.stringify(join(here, "project"))}
registry = ${JSON.stringify(join(here, "project/registry.toml"))}
configuration = "conformance"

[identity]
role = "user"

[[upstream]]
name = "everything"
url = ${JSON.stringify(direct)}
`,
);
const gateway = start([toolgate, "gateway", "--config", config], {}, /listening on (http:\/\/[^,\s]+)/, "toolgate gateway");
children.push(gateway.child);
const via = (await gateway.found.catch((e) => fail(e.message)))[1];

const directly = await suite(direct, join(work, "direct"));
const through = await suite(via, join(work, "via"));

const rows = [];
let broken = 0;
for (const [scenario, passed] of [...directly].sort()) {
  const relayed = through.get(scenario) ?? false;
  let note = "";
  if (passed && !relayed) {
    if (RENAMED.has(scenario)) note = `renamed: ${RENAMED.get(scenario)}`;
    else {
      note = "FAILS THROUGH THE GATEWAY";
      broken += 1;
    }
  } else if (!passed) {
    note = "fails directly: reported, not required";
  }
  rows.push(`| ${scenario} | ${passed ? "pass" : "fail"} | ${relayed ? "pass" : "fail"} | ${note} |`);
}
console.log("| scenario | direct | through toolgate | note |\n|---|---|---|---|\n" + rows.join("\n"));
const passedDirectly = [...directly.values()].filter(Boolean).length;
const passedThrough = [...through.values()].filter(Boolean).length;
console.log(`\n${passedDirectly} of ${directly.size} scenarios pass directly, ${passedThrough} through the gateway`);
if (broken > 0) fail(`${broken} scenario(s) pass directly and fail through the gateway`);

// The renamed scenarios' intent, and what the suite does not check, with
// the official client on both sides of the comparison.
const a = await connect(direct);
const b = await connect(via);

// A text result, relayed as it is.
const echo = { message: "conformance" };
const echoed = await b.callTool({ name: "mcp_everything_echo", arguments: echo });
equal(await a.callTool({ name: "echo", arguments: echo }), echoed, "tools/call echo");
equal(echoed.content, [{ type: "text", text: "Echo: conformance" }], "echo's content");

// A tool's own error (bad arguments): a result with isError, relayed as it is.
const bad = { a: "not a number" };
const failed = await b.callTool({ name: "mcp_everything_get-sum", arguments: bad });
equal(await a.callTool({ name: "get-sum", arguments: bad }), failed, "tools/call get-sum with bad arguments");
if (failed.isError !== true) fail(`get-sum with bad arguments: isError is ${failed.isError}`);

// A prompt under its mapped name, a resource by its URI, a completion.
const prompts = await b.listPrompts();
const simple = prompts.prompts.find((p) => p.name === "mcp_everything_simple-prompt");
if (!simple) fail(`prompts/list has no mcp_everything_simple-prompt: ${JSON.stringify(prompts.prompts.map((p) => p.name))}`);
equal(await a.getPrompt({ name: "simple-prompt" }), await b.getPrompt({ name: "mcp_everything_simple-prompt" }), "prompts/get");
const resources = await b.listResources();
if (resources.resources.length === 0) fail("resources/list through the gateway is empty");
const uri = resources.resources[0].uri;
equal(await a.readResource({ uri }), await b.readResource({ uri }), `resources/read ${uri}`);
if (!prompts.prompts.some((p) => p.name === "mcp_everything_completable-prompt")) {
  fail("prompts/list has no mcp_everything_completable-prompt");
}
const argument = { name: "department", value: "S" };
const completed = await b.complete({ ref: { type: "ref/prompt", name: "mcp_everything_completable-prompt" }, argument });
equal(await a.complete({ ref: { type: "ref/prompt", name: "completable-prompt" }, argument }), completed, "completion/complete");
equal(completed.completion.values, ["Sales", "Support"], "the completion's values");

// Progress: the client's token on each notification, in order.
const progress = [];
await b.callTool(
  { name: "mcp_everything_trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
equal(progress, [1, 2, 3], "progress notifications");

// Log messages of a server the caller sees, after it set its level.
const logs = [];
b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await b.setLoggingLevel("debug");
await b.callTool({ name: "mcp_everything_toggle-simulated-logging", arguments: {} });
await waitFor(logs, (l) => typeof l.data === "string" && l.data.includes("message"), "a log message");

// A subscribed resource's updates.
const updates = [];
b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
await b.subscribeResource({ uri });
await b.callTool({ name: "mcp_everything_toggle-subscriber-updates", arguments: {} });
await waitFor(updates, (u) => u === uri, `notifications/resources/updated for ${uri}`);
await b.unsubscribeResource({ uri });

await a.close();
await b.close();
console.log("the renamed scenarios' intent, prompts, resources, completion, progress, logs and subscriptions: relayed as they are");
process.exit(0);
