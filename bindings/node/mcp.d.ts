// toolgate with the official MCP TypeScript SDK (@modelcontextprotocol/sdk).
import type { Context } from './index';

/** A governed view of an SDK Client: callTool decides against the table
 * before sending (a refused call throws the kind's class and never reaches
 * the server) and classifies the answer with the table's rules (a gateway
 * denial throws; a tool failure is returned as is); listTools lists only
 * offered tools. Every other member is the client's own. */
export function governedClient<C extends { callTool: (...args: any[]) => Promise<any>; listTools: (...args: any[]) => Promise<any> }>(
  client: C,
  ctx: Context,
  options?: { server?: string | null; origin?: string | null },
): C & { readonly toolgateContext: Context };

/** Govern an SDK McpServer or Server: tools/list filtered by the context, a
 * call outside it answered with the runtime's JSON-RPC refusal error. */
export function guardServer<S extends object>(
  server: S,
  ctx: Context | ((extra: any) => Context),
  options?: { server?: string | null; stealth?: boolean },
): S;

/** The registry name of a server's tool (`mcp_<server>_<name>`). */
export function remoteToolName(server: string, name: string): string;
