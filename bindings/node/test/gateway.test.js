'use strict';
// `toolgate gateway` driven by the official MCP TypeScript SDK's client over
// streamable HTTP on 127.0.0.1, in front of a server on the official Python
// SDK that lists its own names (cli/tests/fixtures/gateway/crm_server.py).
// Needs the toolgate binary (TOOLGATE_BIN) and the venv of the reference
// servers (TOOLGATE_MCP_BIN, made by .ci/run): without them this FAILS.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { McpError } = require('@modelcontextprotocol/sdk/types.js');

const ROOT = path.join(__dirname, '../../..');
const FIXTURES = path.join(ROOT, 'cli/tests/fixtures/gateway');

function need(name) {
  const v = process.env[name];
  assert.ok(v, `${name} is not set: the gateway test needs it (see .ci/run)`);
  return v;
}

function project(dir, bin, python) {
  execFileSync(bin, ['registry', 'import-mcp', '--server', 'crm', '-o', path.join(dir, 'registry.toml'),
    '--', python, path.join(FIXTURES, 'crm_server.py')]);
  fs.writeFileSync(path.join(dir, 'toolgate.toml'), 'registry = "registry.toml"\npolicies = ["policy.tg"]\n');
  fs.copyFileSync(path.join(FIXTURES, 'policy.tg'), path.join(dir, 'policy.tg'));
}

function startGateway(bin, config) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['gateway', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`no start within 60 s:\n${said}`)); }, 60_000);
    child.stderr.on('data', (chunk) => {
      said += chunk;
      const m = /toolgate gateway: listening on (\S+),/.exec(said);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`the gateway exited:\n${said}`)); });
  });
}

test('the TypeScript SDK client is offered and refused as its profile says', async () => {
  const bin = need('TOOLGATE_BIN');
  const python = path.join(need('TOOLGATE_MCP_BIN'), 'python');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-node-gateway-'));
  project(dir, bin, python);
  const key = 'support-key-from-node';
  const digest = crypto.createHash('sha256').update(key).digest('hex');
  fs.writeFileSync(path.join(dir, 'credentials.toml'),
    `[[key]]\nname = "support"\nsha256 = "${digest}"\nconsumer = "support-bot"\n`);
  fs.writeFileSync(path.join(dir, 'gateway.toml'),
    `listen = "127.0.0.1:0"\nproject = "."\nregistry = "registry.toml"\nconfiguration = "support-chat"\n` +
    `[identity]\nauth = "credentials.toml"\n[[upstream]]\nname = "crm"\n` +
    `command = [${JSON.stringify(python)}, ${JSON.stringify(path.join(FIXTURES, 'crm_server.py'))}]\n`);
  const { child, url } = await startGateway(bin, path.join(dir, 'gateway.toml'));
  try {
    const client = new Client({ name: 'node-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}`, 'X-Toolgate-Consumer': 'billing-bot' } },
    }));
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['mcp_crm_customer-360_lookup', 'mcp_crm_notes_append']);
    const ok = await client.callTool({ name: 'mcp_crm_notes_append', arguments: { id: '7' } });
    assert.deepEqual(ok.content, [{ type: 'text', text: 'notes_append(7) done' }]);
    await assert.rejects(client.callTool({ name: 'mcp_crm_refund_issue', arguments: { id: '7' } }), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -31001);
      assert.equal(e.data.toolgate.kind, 'notInProfile');
      assert.equal(e.data.toolgate.profile, 'support-readonly');
      return true;
    });
    await client.close();
  } finally {
    child.kill();
  }
});
