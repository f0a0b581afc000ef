'use strict';
// A small MCP server on the official SDK (McpServer over stdio) for
// mcp.test.js. Every call that reaches a tool is appended to $CALL_LOG.
// With TOOLGATE_TABLE set it is governed by guardServer for the context
// $TOOLGATE_CONFIGURATION / $TOOLGATE_CONSUMER (role user).

const fs = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');

const log = process.env.CALL_LOG;
const server = new McpServer({ name: 'toolgate-test', version: '1.0.0' });
const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });
const tool = (name, answer) =>
  server.registerTool(name, { description: `the ${name} tool` }, async () => {
    fs.appendFileSync(log, `${name}\n`);
    return answer;
  });

if (process.env.TOOLGATE_TABLE) {
  // Before the tools: the guard also wraps handlers registered later.
  const toolgate = require('../index.js');
  const { guardServer } = require('../mcp.js');
  const ctx = toolgate.Table.load(process.env.TOOLGATE_TABLE).context(process.env.TOOLGATE_CONFIGURATION, {
    role: 'user',
    consumer: process.env.TOOLGATE_CONSUMER,
  });
  guardServer(server, ctx, { stealth: process.env.TOOLGATE_STEALTH === '1' });
}

tool('search_help_center', text('3 articles found'));
tool('get_help_article', text('article not found', true));
tool('payment.status', text('Authorization failed: the token lacks payments:read', true));
tool('refund.issue', text('refunded'));
tool('mcp_billing_invoice_list', text('invoices'));

server.connect(new StdioServerTransport());
