'use strict';
// `toolgate gateway` driven by the official MCP TypeScript SDK's client over
// streamable HTTP on 127.0.0.1, in front of a server on the official Python
// SDK that lists its own names (gateway/tests/fixtures/crm_server.py).
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
const FIXTURES = path.join(ROOT, 'gateway/tests/fixtures');

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

// A tool a person approves call by call (docs/approvals.md): the gateway
// asks the TypeScript client's user through elicitation on the call's own
// stream; an accepted `{approve: true}` lets the call run, a decline is
// refused `-31003` as declined and the call never runs.
test('the TypeScript SDK client approves or declines a call that needs approval', async () => {
  const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
  const bin = need('TOOLGATE_BIN');
  const python = path.join(need('TOOLGATE_MCP_BIN'), 'python');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-node-approval-'));
  project(dir, bin, python);
  const policy = fs.readFileSync(path.join(dir, 'policy.tg'), 'utf8').replace(
    'configuration support-chat {\n  groups [mcp_crm]\n}',
    'configuration support-chat {\n  groups [mcp_crm]\n  needs-approval [mcp_crm_refund_issue]\n}');
  assert.ok(policy.includes('needs-approval'), 'the fixture policy changed shape');
  fs.writeFileSync(path.join(dir, 'policy.tg'), policy);
  const key = 'billing-key-from-node';
  const digest = crypto.createHash('sha256').update(key).digest('hex');
  fs.writeFileSync(path.join(dir, 'credentials.toml'),
    `[[key]]\nname = "billing"\nsha256 = "${digest}"\nconsumer = "billing-bot"\n`);
  const log = path.join(dir, 'calls.log');
  fs.writeFileSync(path.join(dir, 'gateway.toml'),
    `listen = "127.0.0.1:0"\nproject = "."\nregistry = "registry.toml"\nconfiguration = "support-chat"\n` +
    `[identity]\nauth = "credentials.toml"\n[[upstream]]\nname = "crm"\n` +
    `command = [${JSON.stringify(python)}, ${JSON.stringify(path.join(FIXTURES, 'crm_server.py'))}]\n` +
    `env = { CRM_CALL_LOG = { value = ${JSON.stringify(log)} } }\n`);
  const { child, url } = await startGateway(bin, path.join(dir, 'gateway.toml'));
  const refunds = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l === 'refund_issue').length : 0);
  try {
    for (const answer of ['approve', 'decline']) {
      const asked = [];
      const client = new Client({ name: 'node-approver', version: '1' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return answer === 'approve' ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }));
      const call = client.callTool({ name: 'mcp_crm_refund_issue', arguments: { id: '7', amount: '12.50' } });
      if (answer === 'approve') {
        const ok = await call;
        assert.deepEqual(ok.content, [{ type: 'text', text: 'refund_issue(7) done' }]);
      } else {
        await assert.rejects(call, (e) => {
          assert.ok(e instanceof McpError, String(e));
          assert.equal(e.code, -31003);
          assert.equal(e.data.approval.outcome, 'declined');
          assert.equal(e.data.toolgate.kind, 'approvalRequired');
          return true;
        });
      }
      assert.deepEqual(asked, ['Approve this call?\nTool: mcp_crm_refund_issue\nArguments: {"amount":"12.50","id":"7"}\n' +
        'For: consumer billing-bot, role user, configuration support-chat\n' +
        'Policy: configuration `support-chat` (policy.tg) asks a person to approve each call of this tool']);
      await client.close();
    }
    assert.equal(refunds(), 1, 'only the approved call ran');
  } finally {
    child.kill();
  }
});
