'use strict';
// toolgate for Node.js: load a compiled tool-access table and decide, per
// tool, whether an agent is offered it and whether a call may run. Every
// answer comes from the Rust runtime (toolgate-runtime) through the native
// addon; this module maps values and errors, and decides nothing itself.

const native = require('./native.js');
const errors = require('./errors.js');

const { ArgumentError, fromNative, violationOf, CATALOGUE } = errors;

const NATIVE = Symbol('toolgate.native');
const RAW = Symbol('toolgate.raw');
const NAMES = Symbol('toolgate.names');
const INDEX = Symbol('toolgate.index');
const ENTRIES = Symbol('toolgate.entries');
const SCRATCH = Symbol('toolgate.scratch');

/** The gates in their fixed order, as reason codes (the catalogue's). */
const GATE_ORDER = Object.freeze(CATALOGUE.gates.map((g) => g.code));
/** Reason codes by host number (1 = the first gate; 0 = none). */
const REASON_BY_NUMBER = [null];
for (const g of CATALOGUE.gates) REASON_BY_NUMBER[g.number] = g.code;
const MESSAGES = new Map(CATALOGUE.gates.map((g) => [g.code, g.message]));

function call(f) {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

/** A string argument: a JS string that is well-formed UTF-16 (a lone
 * surrogate cannot be encoded as UTF-8 and is refused, never replaced). */
// With the u flag a surrogate pair is one code point: only a lone one matches
// (String#isWellFormed, which Node 18 lacks).
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function str(v, what) {
  if (typeof v !== 'string') {
    throw new ArgumentError(`${what}: expected a string, got ${v === null ? 'null' : typeof v}`);
  }
  if (LONE_SURROGATE.test(v)) {
    throw new ArgumentError(`${what}: a string that is not valid Unicode (a lone surrogate)`, { status: 'ERR_UTF8' });
  }
  return v;
}

function optStr(v, what) {
  return v === undefined || v === null ? null : str(v, what);
}

function strList(v, what) {
  if (!Array.isArray(v)) throw new ArgumentError(`${what}: expected an array of strings`);
  return v.map((x, i) => str(x, `${what}[${i}]`));
}

/** Bytes from a Buffer, a typed array, an ArrayBuffer or a string (UTF-8). */
function bytes(v, what) {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return Buffer.from(str(v, what), 'utf8');
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw new ArgumentError(`${what}: expected bytes (Buffer, Uint8Array) or a string`);
}

function path(v, what) {
  if (v instanceof URL) {
    if (v.protocol !== 'file:') throw new ArgumentError(`${what}: only file: URLs are paths`);
    return require('node:url').fileURLToPath(v);
  }
  return str(v, what);
}

function headers(h) {
  if (h === undefined || h === null) return null;
  const flat = [];
  const push = (k, v) => flat.push(str(k, 'header name'), str(v, 'header value'));
  if (typeof h[Symbol.iterator] === 'function' && typeof h !== 'string') {
    for (const pair of h) {
      if (!Array.isArray(pair) || pair.length !== 2) throw new ArgumentError('headers: expected [name, value] pairs');
      push(pair[0], pair[1]);
    }
    return flat;
  }
  if (typeof h !== 'object') throw new ArgumentError('headers: expected an object of name to string (or strings), or [name, value] pairs');
  for (const [k, v] of Object.entries(h)) {
    if (Array.isArray(v)) for (const x of v) push(k, x);
    else push(k, v);
  }
  return flat;
}

function classifyOptions(o = {}) {
  if (o === null || typeof o !== 'object') throw new ArgumentError('classify options: expected an object');
  const s = o.httpStatus;
  if (s !== undefined && s !== null && !(Number.isInteger(s) && s >= 0 && s <= 65535)) {
    throw new ArgumentError(`httpStatus ${s}: not an HTTP status`);
  }
  return {
    origin: optStr(o.origin, 'origin') ?? undefined,
    httpStatus: s ?? undefined,
    tool: optStr(o.tool, 'tool') ?? undefined,
    headers: headers(o.headers) ?? undefined,
  };
}

/** A call's arguments as JSON text: a plain object (what an MCP
 * `tools/call` carries), written as JSON.stringify writes it for the wire;
 * a number JSON cannot hold (NaN, Infinity) is refused, never sent as null. */
function argumentsJson(v) {
  const proto = v !== null && typeof v === 'object' ? Object.getPrototypeOf(v) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    const what = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? `a ${proto?.constructor?.name ?? 'non-plain object'}` : typeof v;
    throw new ArgumentError(`arguments: expected a plain object, got ${what}`);
  }
  let text;
  try {
    text = JSON.stringify(v, (_k, x) => {
      if (typeof x === 'number' && !Number.isFinite(x)) throw new ArgumentError(`arguments: ${x} is not a JSON number`);
      return x;
    });
  } catch (e) {
    if (e instanceof ArgumentError) throw e;
    throw new ArgumentError(`arguments: not JSON data (${e.message})`, { cause: e });
  }
  return str(text, 'arguments');
}

/** checkCall's arguments and options, read; null when none is given (the
 * plain check of a call). */
function grantInputs(args, options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw new ArgumentError('checkCall options: expected an object { grant, approverKeys, now }');
  }
  const o = options ?? {};
  const now = o.now ?? null;
  if (now !== null && !(Number.isSafeInteger(now) && now >= 0)) {
    throw new ArgumentError(`now: Unix seconds (a non-negative integer), got ${String(now)}`);
  }
  const inputs = {
    argumentsJson: args === undefined || args === null ? null : argumentsJson(args),
    grant: optStr(o.grant, 'grant'),
    approverKeys: optStr(o.approverKeys, 'approverKeys'),
    now,
  };
  const given = inputs.argumentsJson !== null || inputs.grant !== null || inputs.approverKeys !== null || now !== null;
  return given ? inputs : null;
}

function tableOf(t) {
  if (t === undefined || t === null) return null;
  if (!(t instanceof Table)) throw new ArgumentError('table: expected a Table');
  return t[NATIVE];
}

function classification(v) {
  if (v.outcome === 'refusal') v.refusal = Object.freeze(v.refusal);
  return Object.freeze(v);
}

/** Throw the typed refusal of a classification; return it otherwise. */
function raising(c) {
  if (c.outcome === 'refusal') throw violationOf(c.refusal, { classification: c });
  return c;
}

// ------------------------------------------------------------------ Decision

/** One tool's answer (immutable). */
class Decision {
  constructor(raw) {
    this.tool = raw.tool;
    this.allowed = raw.allowed;
    this.reason = raw.reason ?? null;
    this.observedOnly = raw.observedOnly;
    this.needsApproval = raw.needsApproval;
    this.class = raw.class ?? null;
    this.zone = raw.zone ?? null;
    this.ceiling = raw.ceiling ?? null;
    this.hidden = raw.hidden;
    Object.defineProperty(this, RAW, { value: raw });
    Object.freeze(this);
  }
  /** The runtime's JSON (zone facts only when the trust-zone gate was reached). */
  toJSON() {
    const o = { tool: this.tool, allowed: this.allowed, reason: this.reason, observedOnly: this.observedOnly };
    if (this.needsApproval) o.needsApproval = true;
    if (this.class !== null) {
      o.class = this.class;
      o.zone = this.zone;
      o.ceiling = this.ceiling;
    }
    return o;
  }
}

// ------------------------------------------------------------------ LiveTool

/** A tool the host registered after the table was compiled. Its name is
 * checked by the runtime as the registry checks one (ArgumentError). */
class LiveTool {
  constructor(name, group, { remote = false, enabled = true, adminOnly = false, class: cls = null } = {}) {
    const spec = call(() =>
      native.liveToolCheck({
        name: str(name, 'live tool name'),
        group: str(group, 'live tool group'),
        remote: bool(remote, 'remote'),
        enabled: bool(enabled, 'enabled'),
        adminOnly: bool(adminOnly, 'adminOnly'),
        class: optStr(cls, 'live tool class') ?? undefined,
      }),
    );
    LiveTool.#init(this, spec);
  }
  static #init(t, spec) {
    Object.defineProperty(t, RAW, { value: spec });
    t.name = spec.name;
    t.group = spec.group;
    t.remote = spec.remote;
    t.enabled = spec.enabled;
    t.adminOnly = spec.adminOnly;
    t.class = spec.class ?? null;
    Object.freeze(t);
  }
  /** From its JSON object `{name, group, remote, enabled, adminOnly, class}`. */
  static fromJson(text) {
    const spec = call(() => native.liveToolFromJson(bytes(text, 'live tool')));
    const t = Object.create(LiveTool.prototype);
    LiveTool.#init(t, spec);
    return t;
  }
}

function bool(v, what) {
  if (typeof v !== 'boolean') throw new ArgumentError(`${what}: expected a boolean`);
  return v;
}

function liveSpecs(live) {
  if (live === undefined || live === null) return null;
  if (!Array.isArray(live)) throw new ArgumentError('live: expected an array of LiveTool');
  return live.map((t) => {
    if (!(t instanceof LiveTool)) throw new ArgumentError('live: expected an array of LiveTool');
    return t[RAW];
  });
}

// ------------------------------------------------------------------ RunState

/** A run's skill allow-list and exclusions, stored with the run and read back strictly. */
class RunState {
  constructor({ allowedToolNames = null, excludedToolNames = null } = {}) {
    const a = allowedToolNames === null ? null : strList(allowedToolNames, 'allowedToolNames');
    const x = excludedToolNames === null ? null : strList(excludedToolNames, 'excludedToolNames');
    this[NATIVE] = call(() => new native.NativeRunState(a, x));
  }
  static #wrap(n) {
    const r = Object.create(RunState.prototype);
    r[NATIVE] = n;
    return r;
  }
  /** Resolve at run start: the configuration's attached skills plus `skills`. */
  static start(table, configuration, skills = []) {
    const t = tableOf(table);
    if (t === null) throw new ArgumentError('table: expected a Table');
    return RunState.#wrap(call(() => native.NativeRunState.start(t, str(configuration, 'configuration'), strList(skills, 'skills'))));
  }
  /** Read the stored form strictly (RunStateError when it is not exactly a stored run). */
  static parse(data) {
    return RunState.#wrap(call(() => native.NativeRunState.parse(bytes(data, 'run'))));
  }
  /** Read the stored form; what cannot be read admits no tool (never throws for content). */
  static fromBytes(data) {
    return RunState.#wrap(call(() => native.NativeRunState.fromBytes(bytes(data, 'run'))));
  }
  /** The state that admits nothing. */
  static unreadable() {
    return RunState.#wrap(native.NativeRunState.unreadable());
  }
  /** On resume: `this` is stored, `live` resolved now (never wider than either). */
  resume(live) {
    if (!(live instanceof RunState)) throw new ArgumentError('resume: expected a RunState');
    return RunState.#wrap(this[NATIVE].resume(live[NATIVE]));
  }
  /** The stored form (JSON text). */
  toJson() {
    return this[NATIVE].toJson();
  }
  toJSON() {
    return JSON.parse(this[NATIVE].toJson());
  }
  get isReadable() {
    return this[NATIVE].isReadable;
  }
  /** null: no allow-list; names; false: unreadable (admits nothing). */
  get allowedToolNames() {
    return this[NATIVE].allowedToolNames;
  }
  /** Names; false: unreadable (admits nothing). */
  get excludedToolNames() {
    return this[NATIVE].excludedToolNames;
  }
  equals(other) {
    return other instanceof RunState && this[NATIVE].equals(other[NATIVE]);
  }
}

// RunStateError#state, defined here rather than in errors.js (which index.js
// imports) so that the two modules do not import each other.
Object.defineProperty(errors.RunStateError.prototype, 'state', {
  configurable: true,
  enumerable: false,
  /** The RunState to use instead (it admits nothing of the part that is unreadable). */
  get() {
    return RunState.fromBytes(this.storedState ?? '');
  },
});

function runOf(run) {
  if (run === undefined || run === null) return null;
  if (run instanceof RunState) return run[NATIVE];
  return RunState.parse(run)[NATIVE];
}

// ------------------------------------------------------------------- Context

/** Who is asking (configuration, role, consumer, run, enforcement), fixed. */
class Context {
  #n;
  #table;
  #index;
  // Decisions by tool id, made as they are asked (the array only once a
  // context decides: a context made for its lists never pays for it).
  #cache = null;
  #unavailable = null;
  constructor(n, table, index) {
    this.#n = n;
    this.#table = table;
    this.#index = index;
  }

  get table() {
    return this.#table;
  }

  #made(id) {
    const d = new Decision(this.#n.decideId(id));
    (this.#cache ??= new Array(this.#index.size))[id] = d;
    return d;
  }

  /** The decision for one tool name (a name the table does not hold: notRegistered). */
  decide(name) {
    if (typeof name === 'string') {
      const id = this.#index.get(name);
      if (id !== undefined) return this.#cache?.[id] ?? this.#made(id);
    }
    const n = str(name, 'tool name');
    return new Decision(call(() => this.#n.decide(n)));
  }

  /** Whether a call of `name` may run (observe-only counts as allowed; a
   * tool a person approves call by call does not, until approved). */
  isAllowed(name) {
    const d = this.decide(name);
    return d.allowed && !d.needsApproval;
  }

  /** The check a host runs when a call executes: the decision when the call
   * may run, else it throws the refusal kind's class (ToolNotInProfile, ...),
   * which carries the decision and the typed refusal. A tool a person
   * approves call by call runs only with `options.grant`, the signed grant
   * of this very call (`args`), checked by the runtime
   * (`Context::check_call_granted`); otherwise ApprovalRequired, whose
   * `grantError` names why a grant given did not fit. */
  checkCall(name, args, options) {
    const inputs = grantInputs(args, options);
    const d = this.decide(name);
    if (inputs === null) {
      if (d.allowed && !d.needsApproval) return d;
      throw violationOf(this.callRefusal(d), { decision: d });
    }
    // Every input is read (and an unreadable one refused) whatever the tool.
    const r = call(() => this.#n.checkCallGranted(d.tool, inputs.argumentsJson, inputs.grant, inputs.approverKeys, inputs.now));
    if (r === null) return d;
    throw violationOf(Object.freeze(r), { decision: d });
  }

  /** What a person is asked to approve for a call of `name` with `args`
   * (as checkCall takes them): `{tool, argumentsDigest, configuration,
   * consumer, role, tableDigest, requestId}`, the runtime's
   * ApprovalRequest. Show it to an approver, who signs it (`toolgate
   * approve REQUEST.json`); the grant then lets this very call run once
   * through checkCall. `requestId` is the host's id of the question. */
  approvalRequest(name, args, requestId = '') {
    const tool = str(name, 'name');
    const argsJson = args === undefined || args === null ? null : argumentsJson(args);
    const id = str(requestId, 'requestId');
    return Object.freeze(call(() => this.#n.approvalRequest(tool, argsJson, id)));
  }

  /** The typed refusal of a call of a tool name or under a Decision (null
   * when the call may run): the refusal of a refused tool, or
   * `approvalRequired` for an offered tool a person approves call by call. */
  callRefusal(target) {
    if (typeof target === 'string') return this.callRefusal(this.decide(target));
    if (!(target instanceof Decision)) throw new ArgumentError('callRefusal: expected a tool name or a Decision');
    const r = call(() => this.#n.callRefusal(target[RAW]));
    return r === null ? null : Object.freeze(r);
  }

  /** The decision for a LiveTool. */
  decideLive(tool) {
    if (!(tool instanceof LiveTool)) throw new ArgumentError('decideLive: expected a LiveTool');
    return new Decision(call(() => this.#n.decideLive(tool[RAW])));
  }

  /** The typed refusal (null when allowed) for a tool name, a Decision or a
   * LiveTool. Its texts reach a model: a remote tool whose name this user
   * may not see is refused exactly as an unregistered name. */
  refusal(target) {
    let r;
    if (target instanceof Decision) r = call(() => this.#n.refusal(target[RAW]));
    else if (target instanceof LiveTool) r = call(() => this.#n.refusalLive(target[RAW]));
    else if (typeof target === 'string') return this.refusal(this.decide(target));
    else throw new ArgumentError('refusal: expected a tool name, a Decision or a LiveTool');
    return r === null ? null : Object.freeze(r);
  }

  /** Every registered tool's decision, in registry order. */
  decisions() {
    const out = new Array(this.#index.size);
    for (let i = 0; i < out.length; i++) out[i] = this.#cache?.[i] ?? this.#made(i);
    return out;
  }

  /** The tools the model is offered, in registry order. */
  offered() {
    // Into the table's own buffer, as the list: no typed array is made and
    // finalized per call.
    const table = this.#table;
    const names = table[NAMES];
    const ids = table[SCRATCH];
    const count = this.#n.offeredIdsInto(ids);
    const out = new Array(count);
    for (let i = 0; i < count; i++) out[i] = names[ids[i]];
    return out;
  }

  offeredCount() {
    return this.#n.offeredCount();
  }

  /** The tools that exist but are refused, and why: `{tool, reason}` in
   * registry order, then the refused `live` tools the table does not know.
   * Remote names this user may not see are left out. */
  unavailable({ live = null } = {}) {
    const listed = this.#unavailable ?? this.#listed();
    const specs = liveSpecs(live);
    if (specs === null) return listed;
    const out = listed.slice();
    for (const u of call(() => this.#n.unavailableLiveTail(specs))) out.push(u);
    return out;
  }

  /** The table's part of the list, made once per context: a context never
   * changes (its table, configuration, role, consumer, run and enforcement
   * are fixed when it is made; a TableHandle swap gives new contexts), so the
   * frozen array is the answer for the context's whole life. Its entries are
   * frozen `{tool, reason}` objects kept by the table per tool, shared by the
   * contexts that refuse the tool for the same reason. */
  #listed() {
    const table = this.#table;
    const names = table[NAMES];
    const entries = table[ENTRIES];
    const packed = table[SCRATCH];
    const count = this.#n.unavailableIdsInto(packed);
    const out = new Array(count);
    for (let i = 0; i < count; i++) {
      const v = packed[i];
      const id = v >>> 3;
      const reason = REASON_BY_NUMBER[v & 7];
      let e = entries[id];
      if (e === undefined || e.reason !== reason) {
        e = Object.freeze({ tool: names[id], reason });
        entries[id] = e;
      }
      out[i] = e;
    }
    this.#unavailable = Object.freeze(out);
    return this.#unavailable;
  }

  /** The unavailable registered tools as the addon gives them, one
   * `id << 3 | reason number` each (registry order): no object per entry. */
  unavailablePacked() {
    const scratch = this.#table[SCRATCH];
    return scratch.slice(0, this.#n.unavailableIdsInto(scratch));
  }

  unavailableCount() {
    return this.#n.unavailableCount();
  }

  /** The unavailable list as a system-prompt section ("" when nothing is refused). */
  unavailablePrompt({ live = null } = {}) {
    const specs = liveSpecs(live);
    return call(() => this.#n.unavailablePrompt(specs));
  }

  /** Discovery: `offered`, `excluded` ({name, reason}), descriptor cost.
   * `audience: "host"` (default) lists every refused tool with
   * `nameVisible`; `"model"` leaves out the names this user may not see. */
  toolSet({ audience = 'host' } = {}) {
    return call(() => this.#n.toolSet(str(audience, 'audience')));
  }

  get configuration() {
    return this.#n.configuration;
  }
  get role() {
    return this.#n.role;
  }
  get consumer() {
    return this.#n.consumer;
  }
  /** The access profile the consumer is held to, if any. */
  get profile() {
    return this.#n.profile;
  }
  /** Trust-zone enforcement: "observe" or "enforce". */
  get mode() {
    return this.#n.mode;
  }
}

// --------------------------------------------------------------------- Table

/** A compiled table, loaded (fails closed: any defect throws LoadError). */
class Table {
  constructor(n) {
    if (!(n instanceof native.NativeTable)) throw new ArgumentError('Table: use Table.load(bytes | path)');
    this[NATIVE] = n;
    const names = Object.freeze(n.tools);
    this[NAMES] = names;
    this[INDEX] = new Map(names.map((x, i) => [x, i]));
    // The unavailable list's entries by tool id, made as contexts list them.
    this[ENTRIES] = new Array(names.length).fill(undefined);
    // Where the addon writes a context's packed list (one entry per tool at
    // most); JavaScript owns it, callers get a copy or objects.
    this[SCRATCH] = new Uint32Array(names.length);
  }

  /** Load a table from bytes (Buffer, Uint8Array, ArrayBuffer) or a file
   * path (string or file: URL, read by the runtime's host file rule). With
   * `trustedKeys` (PEM public keys), only a table signed by one of them. */
  static load(source, { trustedKeys = null } = {}) {
    const keys = optStr(trustedKeys, 'trustedKeys');
    if (typeof source === 'string' || source instanceof URL) {
      const p = path(source, 'table');
      return new Table(call(() => native.NativeTable.loadFile(p, keys)));
    }
    if (source instanceof Uint8Array || ArrayBuffer.isView(source) || source instanceof ArrayBuffer) {
      const b = bytes(source, 'table');
      return new Table(call(() => native.NativeTable.load(b, keys)));
    }
    throw new ArgumentError('Table.load: expected bytes or a path');
  }

  /** A context: who is asking. `run` is a RunState or its stored form (read strictly). */
  context(configuration, { role = 'none', consumer = null, run = null, enforcement = null } = {}) {
    const c = str(configuration, 'configuration');
    const r = str(role, 'role');
    const k = optStr(consumer, 'consumer');
    const e = optStr(enforcement, 'enforcement');
    const rs = runOf(run);
    const n = call(() => this[NATIVE].context(c, r, k, rs, e));
    return new Context(n, this, this[INDEX]);
  }

  /** The sha256 of the table's payload, hex. */
  get digest() {
    return this[NATIVE].digest;
  }
  /** The id of the key the table was verified with (loaded with trustedKeys). */
  get verifiedBy() {
    return this[NATIVE].verifiedBy;
  }
  /** Every registered tool, in registry order (tool ids are positions). */
  get tools() {
    return this[NAMES];
  }
  get size() {
    return this[NAMES].length;
  }
  get configurations() {
    return this[NATIVE].configurations;
  }
  get consumers() {
    return this[NATIVE].consumers;
  }
  get skills() {
    return this[NATIVE].skills;
  }
  get skillLoader() {
    return this[NATIVE].skillLoader;
  }
  /** The id of a registered name, else null. */
  toolId(name) {
    return this[INDEX].get(str(name, 'tool name')) ?? null;
  }
  toolName(id) {
    const n = this[NAMES][id];
    if (!Number.isInteger(id) || n === undefined) throw new ArgumentError(`no tool with id ${id}`, { status: 'ERR_OUT_OF_RANGE' });
    return n;
  }
  /** The gate-relevant policy as plain data (the input of a hand-written gate). */
  policy() {
    return this[NATIVE].policy();
  }
  /** Classify a gateway answer with this table's rules for its origin. */
  classify(answer, options = {}) {
    const b = bytes(answer, 'answer');
    const o = classifyOptions(options);
    return classification(call(() => this[NATIVE].classify(b, o)));
  }
  /** classify, throwing the refusal kind's class for a refusal; success and
   * tool failures (`isError: true`) are returned, never thrown. */
  raiseForAnswer(answer, options = {}) {
    return raising(this.classify(answer, options));
  }
}

// ------------------------------------------------------------------- handles

/** Hot reload: swap tables atomically. A table that fails to load (or, with
 * trusted keys, is not verified by one of them) never replaces the current one. */
class TableHandle {
  #n;
  #current;
  constructor(table, { trustedKeys = null } = {}) {
    const t = tableOf(table);
    if (t === null) throw new ArgumentError('TableHandle: expected a Table');
    const keys = optStr(trustedKeys, 'trustedKeys');
    this.#n = call(() => new native.NativeTableHandle(t, keys));
    this.#current = table;
  }
  /** The table to decide with now. */
  current() {
    if (!this.#n.isCurrent(this.#current[NATIVE])) this.#current = new Table(this.#n.current());
    return this.#current;
  }
  /** Put `table` in place; the old one. */
  swap(table) {
    const t = tableOf(table);
    if (t === null) throw new ArgumentError('swap: expected a Table');
    const old = this.current();
    call(() => this.#n.swap(t));
    this.#current = table;
    return old;
  }
  /** Load bytes or a path and swap it in; on any error the current table stays. */
  reload(source) {
    const old = this.current();
    if (typeof source === 'string' || source instanceof URL) {
      const p = path(source, 'table');
      call(() => this.#n.reloadFile(p));
    } else {
      const b = bytes(source, 'table');
      call(() => this.#n.reload(b));
    }
    this.current();
    return old;
  }
  get trustedKeyIds() {
    return this.#n.trustedKeyIds;
  }
  /** A context of the current table. */
  context(configuration, options) {
    return this.current().context(configuration, options);
  }
}

// ------------------------------------------------------------ free functions

/** Classify a gateway answer's raw body (bytes or string), parsed strictly:
 * anything unreadable or ambiguous that no rule recognises is a refusal. */
function classify(answer, options = {}) {
  const b = bytes(answer, 'answer');
  const t = tableOf(options && options.table);
  const o = classifyOptions(options);
  return classification(call(() => native.classify(b, o, t)));
}

/** Classify an answer file's bytes as `toolgate classify` reads them (an envelope or a bare body). */
function classifyEnvelope(data, options = {}) {
  const b = bytes(data, 'answer');
  const t = tableOf(options && options.table);
  const o = classifyOptions(options);
  return classification(call(() => native.classifyEnvelope(b, o, t)));
}

/** classifyEnvelope of a file (the runtime's host file rule). */
function classifyFile(p, options = {}) {
  const f = path(p, 'answer');
  const t = tableOf(options && options.table);
  const o = classifyOptions(options);
  return classification(call(() => native.classifyFile(f, o, t)));
}

/** classify, throwing the refusal kind's class for a refusal: success and
 * tool failures (`isError: true`) never throw. */
function raiseForAnswer(answer, options = {}) {
  return raising(classify(answer, options));
}

/** The JSON-RPC error object of a refused MCP `tools/call`
 * (toolgate_runtime::mcp::refusal_error). */
function refusalError(refusal, { decisionId = null, tableDigest = null, stealth = false } = {}) {
  if (refusal === null || typeof refusal !== 'object') throw new ArgumentError('refusalError: expected a refusal');
  const r = refusal instanceof errors.PolicyViolation ? refusal.refusal : refusal;
  return call(() =>
    native.refusalError({ ...r }, { decisionId: optStr(decisionId, 'decisionId') ?? undefined, tableDigest: optStr(tableDigest, 'tableDigest') ?? undefined }, bool(stealth, 'stealth')),
  );
}

/** The JSON-RPC error of a call of a tool nobody has. */
function unknownToolError(name) {
  return native.unknownToolError(str(name, 'tool name'));
}

/** Every code the library exposes (the runtime's host::catalogue). */
function codes() {
  return native.codes();
}

/** The human text of a reason code, as the prompt shows it. */
function reasonMessage(code) {
  const m = typeof code === 'string' ? MESSAGES.get(code) : undefined;
  if (m === undefined) throw new ArgumentError(`unknown reason ${JSON.stringify(code)}`);
  return m;
}

module.exports = {
  Table,
  Context,
  Decision,
  LiveTool,
  RunState,
  TableHandle,
  classify,
  classifyEnvelope,
  classifyFile,
  raiseForAnswer,
  classifyOrThrow: raiseForAnswer,
  refusalError,
  unknownToolError,
  mcpRevision: native.mcpRevision,
  codes,
  reasonMessage,
  GATE_ORDER,
  MAX_FILE_BYTES: CATALOGUE.maxFileBytes,
  ...Object.fromEntries(Object.entries(errors).filter(([k]) => !['CATALOGUE', 'fromNative', 'violationOf'].includes(k))),
};
