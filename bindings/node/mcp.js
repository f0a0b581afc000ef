'use strict';
// toolgate with the official MCP TypeScript SDK (@modelcontextprotocol/sdk).
//
// - governedClient(client, ctx): a Client whose callTool decides against the
//   table before sending (a refused call throws the kind's class and never
//   reaches the server) and classifies the server's answer with the
//   table's rules (a gateway denial throws the typed error; a tool failure,
//   `isError: true`, is returned as is); listTools lists only offered tools.
// - guardServer(server, ctx): for a server built on the SDK (McpServer or
//   Server), tools/list filtered by the context and a call outside it
//   refused with the JSON-RPC error of the runtime (mcp::refusal_error).
//
// Nothing here decides: every answer is the table's (Context.decide,
// Context.refusal, Table.classify, refusalError).

const native = require('./native.js');
const toolgate = require('./index.js');
const { violationOf } = require('./errors.js');

const { Context, ArgumentError } = toolgate;

function registryName(server, name) {
  if (typeof name !== 'string') throw new ArgumentError('tool name: expected a string');
  return server === null ? name : native.remoteToolName(server, name);
}

function checkOptions(ctx, server, what) {
  if (!(ctx instanceof Context)) throw new ArgumentError(`${what}: expected a toolgate Context`);
  if (server === null) return;
  // The runtime's naming rule, the one the gateway and the registry apply.
  const problem = typeof server === 'string' ? native.remoteNameProblem(server) : 'it is not a string';
  if (problem !== null) {
    throw new ArgumentError(`${what}: server ${JSON.stringify(server)} is not an MCP server name ([A-Za-z0-9_-]{1,64}): ${problem}`);
  }
}

// The SDK's own local errors (no answer was received): not a gateway's.
function isLocal(e) {
  if (e.code === -32001 && e.data && typeof e.data.timeout === 'number') return true;
  return e.code === -32000 && e.data === undefined && /^MCP error -32000: Connection closed$/.test(e.message);
}

/** The JSON-RPC error the SDK received, as it was on the wire. */
function wireError(e) {
  const prefix = `MCP error ${e.code}: `;
  const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  const error = { code: e.code, message };
  if (e.data !== undefined) error.data = e.data;
  return error;
}

/**
 * A governed view of an SDK `Client`: `callTool` and `listTools` go through
 * the table; every other member is the client's own.
 *
 * @param client an SDK Client (connected or not)
 * @param ctx a toolgate Context (who is asking)
 * @param options `server`: the registry's server name of this client's
 *   server (tool `x` is `mcp_<server>_x` in the registry); `origin`: the
 *   gateway whose declared rules classify its answers.
 */
function governedClient(client, ctx, { server = null, origin = null } = {}) {
  checkOptions(ctx, server, 'governedClient');
  if (client === null || typeof client !== 'object' || typeof client.callTool !== 'function') {
    throw new ArgumentError('governedClient: expected an MCP SDK Client');
  }
  const table = ctx.table;
  async function callTool(params, resultSchema, options) {
    const name = params && params.name;
    const tool = registryName(server, name);
    // Decided before anything is sent: a refused call throws here.
    ctx.checkCall(tool);
    let body;
    let result;
    try {
      result = await client.callTool(params, resultSchema, options);
      body = { jsonrpc: '2.0', id: 0, result };
    } catch (e) {
      if (!(e instanceof Error) || !Number.isSafeInteger(e.code) || isLocal(e)) throw e;
      body = { jsonrpc: '2.0', id: 0, error: wireError(e) };
    }
    const c = table.classify(JSON.stringify(body), { tool, origin });
    if (c.outcome === 'refusal') throw violationOf(c.refusal, { classification: c });
    return result;
  }
  async function listTools(params, options) {
    const listed = await client.listTools(params, options);
    return { ...listed, tools: listed.tools.filter((t) => ctx.decide(registryName(server, t.name)).allowed) };
  }
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'callTool') return callTool;
      if (prop === 'listTools') return listTools;
      if (prop === 'toolgateContext') return ctx;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** A JSON-RPC error a Protocol answers with exactly: code, message, data. */
function rpcThrowable(rpc) {
  const e = new Error(rpc.message);
  e.code = rpc.code;
  if (rpc.data !== undefined) e.data = rpc.data;
  return e;
}

const GUARDED = Symbol('toolgate.guarded');

/**
 * Govern a server built on the SDK (`McpServer` or low-level `Server`):
 * `tools/list` answers only the tools the context offers, and a
 * `tools/call` outside it is answered with the runtime's JSON-RPC error
 * (`refusalError`: -31001 / -31002 by class with the typed refusal in
 * `data.toolgate`, an unknown tool's -32602 for a name that does not exist
 * or that this user may not see; `stealth`: every refusal as unknown) and
 * never reaches the tool. Call it before or after the tools are
 * registered.
 *
 * @param server an SDK McpServer or Server
 * @param ctx a toolgate Context, or a function of the request's `extra`
 *   (session, auth info) returning one, for per-caller contexts
 */
function guardServer(server, ctx, { server: serverName = null, stealth = false } = {}) {
  const low = server && typeof server.server === 'object' && server.server !== null && typeof server.server.setRequestHandler === 'function' ? server.server : server;
  if (!low || typeof low.setRequestHandler !== 'function' || !(low._requestHandlers instanceof Map)) {
    throw new ArgumentError('guardServer: expected an MCP SDK McpServer or Server');
  }
  const contextOf = typeof ctx === 'function' ? ctx : () => ctx;
  if (typeof ctx !== 'function') checkOptions(ctx, serverName, 'guardServer');
  if (typeof stealth !== 'boolean') throw new ArgumentError('guardServer: stealth is a boolean');
  const handlers = low._requestHandlers;
  const current = (extra) => {
    const c = contextOf(extra);
    if (!(c instanceof Context)) throw new ArgumentError('guardServer: the context function did not return a Context');
    return c;
  };
  const wrap = (method, h) => {
    if (h[GUARDED]) return h;
    let g;
    if (method === 'tools/list') {
      g = async (request, extra) => {
        const c = current(extra);
        const listed = await h(request, extra);
        return { ...listed, tools: (listed.tools ?? []).filter((t) => c.decide(registryName(serverName, t.name)).allowed) };
      };
    } else {
      g = async (request, extra) => {
        const c = current(extra);
        const name = request && request.params ? request.params.name : undefined;
        const d = typeof name === 'string' ? c.decide(registryName(serverName, name)) : null;
        if (d === null) throw rpcThrowable(native.unknownToolError(String(name)));
        if (!d.allowed) {
          const refusal = c.refusal(d);
          throw rpcThrowable(toolgate.refusalError(refusal, { tableDigest: c.table.digest, stealth }));
        }
        return h(request, extra);
      };
    }
    g[GUARDED] = true;
    return g;
  };
  const guard = () => {
    for (const m of ['tools/list', 'tools/call']) {
      const h = handlers.get(m);
      if (h !== undefined) handlers.set(m, wrap(m, h));
    }
  };
  // Handlers registered later (McpServer registers them with its first tool).
  const set = low.setRequestHandler;
  low.setRequestHandler = function (...args) {
    const r = set.apply(this, args);
    guard();
    return r;
  };
  guard();
  return server;
}

module.exports = { governedClient, guardServer, remoteToolName: (server, name) => native.remoteToolName(server, name) };
