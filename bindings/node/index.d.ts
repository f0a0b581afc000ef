// The typed API of toolgate for Node.js (index.js over the native addon,
// whose own declarations napi generates into native.d.ts).

import type { Refusal, RefusalKind } from './errors';
export * from './errors';

// generated: types (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)
/** A reason code: the gates in their fixed order (catalogue `gates`). */
export type Reason =
  | 'notRegistered'
  | 'toolDisabled'
  | 'requiresAdmin'
  | 'notInProfile'
  | 'configurationGroup'
  | 'configurationExcluded'
  | 'trustZone';

export type Role = 'admin' | 'user' | 'none';
// end generated: types

/** Bytes: a Buffer, any typed array or DataView, or an ArrayBuffer. */
export type Bytes = Uint8Array | ArrayBufferView | ArrayBuffer;

/** One tool's answer (immutable). */
export class Decision {
  private constructor();
  readonly tool: string;
  readonly allowed: boolean;
  /** The first refusing gate; for an observed-only decision, "trustZone". */
  readonly reason: Reason | null;
  readonly observedOnly: boolean;
  /** Offered, and a person approves each call (`needs-approval`): a call
   * may not run without that (`checkCall` throws `ApprovalRequired`). */
  readonly needsApproval: boolean;
  /** Trust-zone facts: only when the trust-zone gate was reached (else null). */
  readonly class: string | null;
  readonly zone: string | null;
  readonly ceiling: string | null;
  /** A refused remote tool whose name this user may not see: shown to a
   * person or a model as an unregistered name (`Context.refusal`). */
  readonly hidden: boolean;
  /** The runtime's JSON (zone facts only when present). */
  toJSON(): { tool: string; allowed: boolean; reason: Reason | null; observedOnly: boolean; needsApproval?: true; class?: string; zone?: string; ceiling?: string };
}

export interface LiveToolOptions {
  remote?: boolean;
  enabled?: boolean;
  adminOnly?: boolean;
  class?: string | null;
}

/** A tool registered after the table was compiled (its name is checked by the runtime). */
export class LiveTool {
  constructor(name: string, group: string, options?: LiveToolOptions);
  static fromJson(text: string | Bytes): LiveTool;
  readonly name: string;
  readonly group: string;
  readonly remote: boolean;
  readonly enabled: boolean;
  readonly adminOnly: boolean;
  readonly class: string | null;
}

/** A run's skill allow-list and exclusions, stored with the run. */
export class RunState {
  constructor(names?: { allowedToolNames?: string[] | null; excludedToolNames?: string[] | null });
  static start(table: Table, configuration: string, skills?: string[]): RunState;
  /** Strict: throws RunStateError when it is not exactly a stored run. */
  static parse(data: string | Bytes): RunState;
  /** What cannot be read admits no tool. */
  static fromBytes(data: string | Bytes): RunState;
  static unreadable(): RunState;
  resume(live: RunState): RunState;
  /** The stored form (JSON text). */
  toJson(): string;
  toJSON(): { allowedToolNames?: string[] | false; excludedToolNames?: string[] | false };
  readonly isReadable: boolean;
  readonly allowedToolNames: string[] | false | null;
  readonly excludedToolNames: string[] | false;
  equals(other: unknown): boolean;
}

export interface ContextOptions {
  role?: Role;
  /** The MCP consumer asking (null: not an MCP consumer). */
  consumer?: string | null;
  /** A RunState or its stored form (read strictly). */
  run?: RunState | string | Bytes | null;
  /** The host's trust-zone setting ("observe" or anything else: enforce); null: the policy's. */
  enforcement?: string | null;
}

/** What a person is asked to approve: one call, under one table
 * (`Context.approvalRequest`). */
export interface ApprovalRequest {
  readonly tool: string;
  /** `sha256:` and the hex SHA-256 of the arguments' canonical JSON. */
  readonly argumentsDigest: string;
  readonly configuration: string;
  readonly consumer: string | null;
  readonly role: string;
  readonly tableDigest: string;
  readonly requestId: string;
}

/** A call checked with a person's approval grant (`Context.checkCall`). */
export interface CheckCallOptions {
  /** The signed grant's JSON (`{"grant", "publicKey", "signature"}`) an
   * approver minted for this very call. Text that is not a signed grant is
   * refused `grantMalformed`. */
  grant?: string | null;
  /** The keys trusted to approve: PEM public keys (`toolgate keygen`).
   * Without them no grant is trusted (`grantUntrustedKey`). */
  approverKeys?: string | null;
  /** The time of the check, Unix seconds; absent, null or 0: the system clock. */
  now?: number | null;
}

export interface UnavailableEntry {
  tool: string;
  reason: Reason;
}

export interface ToolSetEntry {
  name: string;
  reason: Reason;
  /** Host-facing form only: whether this user may be shown the name. */
  nameVisible?: boolean;
}

export interface ToolSet {
  audience: 'host' | 'model';
  configuration: string;
  consumer: string | null;
  profile: string | null;
  offered: string[];
  excluded: ToolSetEntry[];
  descriptorBytes: number;
  estimatedTokens: number;
}

/** Who is asking, fixed. Every answer is the runtime's. */
export class Context {
  private constructor();
  readonly table: Table;
  decide(name: string): Decision;
  isAllowed(name: string): boolean;
  /** The decision when the call may run; otherwise throws the refusal
   * kind's class (e.g. ToolNotInProfile), carrying the decision and the
   * typed refusal. A tool a person approves call by call runs only with
   * `options.grant`, the signed grant of this very call (`args`); otherwise
   * ApprovalRequired, whose `grantError` names why a grant given did not fit
   * (docs/approvals.md, "Grants"). */
  checkCall(name: string, args?: Record<string, unknown> | null, options?: CheckCallOptions | null): Decision;
  /** What a person is asked to approve for a call of `name` with `args`;
   * an approver signs it (`toolgate approve REQUEST.json`) and the grant
   * lets this very call run once through checkCall. */
  approvalRequest(name: string, args?: Record<string, unknown> | null, requestId?: string): ApprovalRequest;
  decideLive(tool: LiveTool): Decision;
  refusal(target: string | Decision | LiveTool): Refusal | null;
  /** The typed refusal of a call (null when it may run): a refused tool's,
   * or `approvalRequired` for a tool a person approves call by call. */
  callRefusal(target: string | Decision): Refusal | null;
  decisions(): Decision[];
  offered(): string[];
  offeredCount(): number;
  /** The registered tools refused, and why, in registry order (hidden remote
   * names left out), then the refused `live` tools. Without `live`, one
   * frozen array made on the first call and returned again on every later
   * call (a context's list never changes); with `live`, a new array. */
  unavailable(options?: { live?: LiveTool[] | null }): readonly Readonly<UnavailableEntry>[];
  /** One `id << 3 | reason number` per unavailable registered tool, in
   * registry order: a new array of the caller's own on every call. */
  unavailablePacked(): Uint32Array;
  unavailableCount(): number;
  unavailablePrompt(options?: { live?: LiveTool[] | null }): string;
  toolSet(options?: { audience?: 'host' | 'model' }): ToolSet;
  readonly configuration: string;
  readonly role: Role;
  readonly consumer: string | null;
  readonly profile: string | null;
  readonly mode: 'observe' | 'enforce';
}

export interface AnswerOptions {
  origin?: string | null;
  httpStatus?: number | null;
  /** The tool called, when known (it wins over one the answer names). */
  tool?: string | null;
  /** Header fields: name to value (or values), or [name, value] pairs (a Headers object). */
  headers?: Record<string, string | string[]> | Iterable<[string, string]> | null;
}

export type Classification =
  | { readonly outcome: 'success' }
  | { readonly outcome: 'toolFailure'; readonly text: string }
  | { readonly outcome: 'refusal'; readonly refusal: Refusal };

/** A compiled table, loaded (fails closed: any defect throws LoadError). */
export class Table {
  private constructor();
  static load(source: string | URL | Bytes, options?: { trustedKeys?: string | null }): Table;
  context(configuration: string, options?: ContextOptions): Context;
  readonly digest: string;
  readonly verifiedBy: string | null;
  readonly tools: readonly string[];
  readonly size: number;
  readonly configurations: string[];
  readonly consumers: string[];
  readonly skills: string[];
  readonly skillLoader: string;
  toolId(name: string): number | null;
  toolName(id: number): string;
  policy(): any;
  classify(answer: string | Bytes, options?: AnswerOptions): Classification;
  /** classify, throwing the refusal kind's class; success and tool failures are returned. */
  raiseForAnswer(answer: string | Bytes, options?: AnswerOptions): Classification;
}

/** Hot reload: tables swapped atomically; a table that fails never replaces the current one. */
export class TableHandle {
  constructor(table: Table, options?: { trustedKeys?: string | null });
  current(): Table;
  swap(table: Table): Table;
  reload(source: string | URL | Bytes): Table;
  readonly trustedKeyIds: string[] | null;
  context(configuration: string, options?: ContextOptions): Context;
}

export function classify(answer: string | Bytes, options?: AnswerOptions & { table?: Table | null }): Classification;
export function classifyEnvelope(data: string | Bytes, options?: AnswerOptions & { table?: Table | null }): Classification;
export function classifyFile(path: string | URL, options?: AnswerOptions & { table?: Table | null }): Classification;
/** classify, throwing the refusal kind's class for a refusal: success and tool failures never throw. */
export function raiseForAnswer(answer: string | Bytes, options?: AnswerOptions & { table?: Table | null }): Classification;
export const classifyOrThrow: typeof raiseForAnswer;

export interface RpcError {
  code: number;
  message: string;
  data?: { toolgate: Refusal; decisionId?: string; tableDigest?: string };
}
/** The JSON-RPC error of a refused MCP tools/call (the runtime's `mcp::refusal_error`). */
export function refusalError(
  refusal: Refusal | import('./errors').PolicyViolation,
  options?: { decisionId?: string | null; tableDigest?: string | null; stealth?: boolean },
): RpcError;
export function unknownToolError(name: string): RpcError;
export function mcpRevision(): string;

/** Every code the library exposes (the runtime's host::catalogue). */
export function codes(): {
  gates: { code: Reason; number: number; letter: string; message: string }[];
  refusalKinds: { code: RefusalKind; class: 'configuration' | 'runtime' | 'approval'; retryable: boolean; action: string; message: string; exception: string }[];
  roles: { name: Role; number: number }[];
  statuses: { name: string; number: number; code?: string }[];
  packed: { allowed: number; observedOnly: number; reasonShift: number; reasonBits: number; needsApproval: number };
  maxFileBytes: number;
};
export function reasonMessage(code: Reason): string;
export const GATE_ORDER: readonly Reason[];
export const MAX_FILE_BYTES: number;
