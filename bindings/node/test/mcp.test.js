'use strict';
// The MCP helpers end to end with the official SDK: a real McpServer in a
// child process (test/mcp_server.js) over stdio, spawned by the SDK's
// StdioClientTransport, against the policies/mcp-profiles table.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { McpError } = require('@modelcontextprotocol/sdk/types.js');

const toolgate = require('..');
const { governedClient } = require('../mcp.js');
const { CORPUS } = require('./corpus.js');

const { ToolNotInProfile, ConfigurationRefusal, PolicyViolation } = toolgate;
const PROFILES = path.join(CORPUS, 'tables/mcp-profiles.tgt');
const table = toolgate.Table.load(PROFILES);

async function connect(env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-mcp-'));
  const log = path.join(dir, 'calls.log');
  fs.writeFileSync(log, '');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(__dirname, 'mcp_server.js')],
    env: { PATH: process.env.PATH, CALL_LOG: log, ...env },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'toolgate-node-test', version: '1.0.0' });
  await client.connect(transport);
  const calls = () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { client, calls };
}

const supportBot = () => table.context('support-chat', { role: 'user', consumer: 'support-bot' });

test('a governed client decides before sending and classifies the answer', async () => {
  const { client, calls } = await connect();
  try {
    const gov = governedClient(client, supportBot());
    const listed = (await gov.listTools()).tools.map((t) => t.name);
    assert.deepEqual(listed, ['search_help_center', 'get_help_article', 'payment.status']);
    // The sketch of the docs, as written:
    let refused = null;
    try {
      await gov.callTool({ name: 'refund.issue', arguments: {} });
    } catch (e) {
      if (e instanceof ToolNotInProfile) {
        refused = e;
      } else {
        throw e;
      }
    }
    assert.ok(refused instanceof ToolNotInProfile && refused instanceof ConfigurationRefusal);
    assert.equal(refused.toolName, 'refund.issue');
    assert.equal(refused.profile, 'support-readonly');
    assert.equal(refused.decision.reason, 'notInProfile');
    // A hidden remote tool is refused as a name that does not exist.
    await assert.rejects(gov.callTool({ name: 'mcp_billing_invoice_list' }), toolgate.NotRegistered);
    assert.deepEqual(calls(), [], 'a refused call never reaches the server');
    const ok = await gov.callTool({ name: 'search_help_center', arguments: {} });
    assert.equal(ok.content[0].text, '3 articles found');
    // A tool failure is returned as is, never thrown.
    const failed = await gov.callTool({ name: 'get_help_article', arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal(failed.content[0].text, 'article not found');
    // Without a declared rule an isError denial is a tool failure ...
    assert.equal((await gov.callTool({ name: 'payment.status' })).isError, true);
    // ... and with the origin whose rule reads it (gateway fastmcp), the typed refusal.
    const viaFastmcp = governedClient(client, supportBot(), { origin: 'fastmcp' });
    await assert.rejects(viaFastmcp.callTool({ name: 'payment.status' }), (e) => e instanceof ToolNotInProfile && e.classification.outcome === 'refusal' && e.rule === 'authorization-failed');
    assert.deepEqual(calls(), ['search_help_center', 'get_help_article', 'payment.status', 'payment.status']);
    // Everything else is the client's own.
    assert.equal(gov.getServerVersion().name, 'toolgate-test');
    assert.throws(() => governedClient(client, {}), toolgate.ArgumentError);
    // The server name under the runtime's naming rule, its problem named.
    assert.throws(() => governedClient(client, supportBot(), { server: 'crm.v2' }), {
      name: 'ArgumentError',
      message: 'governedClient: server "crm.v2" is not an MCP server name ([A-Za-z0-9_-]{1,64}): it contains `.`, outside [a-zA-Z0-9_-]',
    });
    assert.throws(() => governedClient(client, supportBot(), { server: 'x'.repeat(65) }), /it is 65 characters long, over 64$/);
    assert.throws(() => governedClient(client, supportBot(), { server: 7 }), /: it is not a string$/);
  } finally {
    await client.close();
  }
});

test('a guarded server lists and answers only the context, with the runtime\'s error', async () => {
  const { client, calls } = await connect({ TOOLGATE_TABLE: PROFILES, TOOLGATE_CONFIGURATION: 'support-chat', TOOLGATE_CONSUMER: 'support-bot' });
  try {
    const listed = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(listed, ['search_help_center', 'get_help_article', 'payment.status']);
    const refusal = supportBot().refusal('refund.issue');
    await assert.rejects(client.callTool({ name: 'refund.issue', arguments: {} }), (e) => {
      assert.ok(e instanceof McpError);
      const want = toolgate.refusalError(refusal, { tableDigest: table.digest });
      assert.equal(e.code, -31001);
      assert.equal(e.code, want.code);
      assert.equal(e.message, `MCP error -31001: ${want.message}`);
      assert.deepEqual(e.data, want.data);
      assert.equal(e.data.toolgate.kind, 'notInProfile');
      return true;
    });
    // A remote tool this user may not see answers as an unknown tool.
    // (word for word what a name that does not exist gets, typed refusal included)
    await assert.rejects(client.callTool({ name: 'mcp_billing_invoice_list' }), (e) => {
      assert.equal(e.code, -32602);
      assert.equal(e.message, 'MCP error -32602: Unknown tool: mcp_billing_invoice_list');
      const unknown = toolgate.refusalError(supportBot().refusal('no_such_tool'), { tableDigest: table.digest });
      assert.equal(JSON.stringify(e.data), JSON.stringify(unknown.data).replaceAll('no_such_tool', 'mcp_billing_invoice_list'));
      return true;
    });
    assert.deepEqual(calls(), []);
    assert.equal((await client.callTool({ name: 'search_help_center' })).content[0].text, '3 articles found');
    assert.deepEqual(calls(), ['search_help_center']);
    // A governed client wider than the server (no consumer) reads the
    // server's refusal back as the typed error.
    const wide = governedClient(client, table.context('support-chat', { role: 'user' }));
    await assert.rejects(wide.callTool({ name: 'refund.issue' }), (e) => e instanceof ToolNotInProfile && e.classification !== null && e.decision === null);
    assert.deepEqual(calls(), ['search_help_center']);
  } finally {
    await client.close();
  }
});

test('a stealth server answers every refusal as an unknown tool', async () => {
  const { client } = await connect({ TOOLGATE_TABLE: PROFILES, TOOLGATE_CONFIGURATION: 'support-chat', TOOLGATE_CONSUMER: 'support-bot', TOOLGATE_STEALTH: '1' });
  try {
    await assert.rejects(client.callTool({ name: 'refund.issue' }), (e) => e.code === -32602 && e.message === 'MCP error -32602: Unknown tool: refund.issue');
    const wide = governedClient(client, table.context('support-chat', { role: 'user' }));
    await assert.rejects(wide.callTool({ name: 'refund.issue' }), (e) => e instanceof PolicyViolation && e.kind === 'notRegistered');
  } finally {
    await client.close();
  }
});
