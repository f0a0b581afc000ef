'use strict';
// The Node API beyond the corpus: loading, errors and their classes,
// immutability, hidden names, strict run state, classification, the tool
// set, live tools, hot reload and signatures.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const toolgate = require('..');
const { CORPUS, REPO } = require('./corpus.js');
const {
  Table, TableHandle, RunState, LiveTool, ToolgateError, PolicyViolation, ConfigurationRefusal, RuntimeRefusal,
  ToolNotInProfile, ConfigurationExcluded, ConfigurationGroup, NotRegistered, ContentPolicyViolation, DefinitionChanged,
  LoadError, ArgumentError, UnknownConfigurationError, UnknownConsumerError, UnknownSkillError, RunStateError,
} = toolgate;

const DEMO = path.join(CORPUS, 'tables/demo.tgt');
const PROFILES = path.join(CORPUS, 'tables/mcp-profiles.tgt');
const EXCLUSIONS = path.join(CORPUS, 'tables/exclusions.tgt');
const GATEWAY = path.join(REPO, 'tests/fixtures/gateway');
const SIGNED = path.join(CORPUS, 'signed');

function demoDigest() {
  const cases = JSON.parse(fs.readFileSync(path.join(CORPUS, 'suites/tables.json'), 'utf8')).cases;
  return cases.find((c) => c.table === 'tables/demo.tgt').expect.digest;
}

test('a table loads from every source', () => {
  const data = fs.readFileSync(DEMO);
  const sources = [data, new Uint8Array(data), data.buffer.slice(data.byteOffset, data.byteOffset + data.length), DEMO, new URL(`file://${DEMO}`)];
  assert.deepEqual(new Set(sources.map((s) => Table.load(s).digest)), new Set([demoDigest()]));
  const t = Table.load(DEMO);
  assert.equal(t.size, 23);
  assert.equal(t.tools[0], 'get_page_content');
  assert.equal(t.toolId('load_skill'), 5);
  assert.equal(t.toolName(5), 'load_skill');
  assert.equal(t.toolId('nope'), null);
  assert.deepEqual(t.configurations, ['demo-chat', 'developer-chat']);
  assert.equal(t.skillLoader, 'load_skill');
  assert.throws(() => t.toolName(23), ArgumentError);
  assert.ok(Object.isFrozen(t.tools));
});

test('every defect throws LoadError and nothing loads', () => {
  const data = Buffer.from(fs.readFileSync(DEMO));
  const code = (f) => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof LoadError && e instanceof ToolgateError && e instanceof Error, String(e));
      return [e.code, e.status];
    }
    assert.fail('loaded');
  };
  assert.deepEqual(code(() => Table.load(Buffer.alloc(0))), ['notATable', 'ERR_LOAD_NOT_A_TABLE']);
  assert.deepEqual(code(() => Table.load(data.subarray(0, data.length - 1))), ['truncated', 'ERR_LOAD_TRUNCATED']);
  const flipped = Buffer.from(data);
  flipped[flipped.length - 3] ^= 1;
  assert.deepEqual(code(() => Table.load(flipped)), ['checksum', 'ERR_LOAD_CHECKSUM']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-node-'));
  assert.deepEqual(code(() => Table.load(dir)), ['notAFile', 'ERR_FILE_NOT_REGULAR']);
  assert.throws(() => Table.load(dir), { message: `table ${dir}: not a regular file (a directory)` });
  assert.deepEqual(code(() => Table.load(path.join(dir, 'missing.tgt'))), ['io', 'ERR_FILE_IO']);
  assert.deepEqual(code(() => Table.load('/dev/zero')), ['notAFile', 'ERR_FILE_NOT_REGULAR']);
  assert.throws(() => Table.load(42), ArgumentError);
  assert.throws(() => Table.load({}), ArgumentError);
  const e = (() => {
    try {
      Table.load(Buffer.alloc(0));
    } catch (x) {
      return x;
    }
  })();
  assert.equal(e.name, 'LoadError');
  assert.equal(e.statusNumber, toolgate.codes().statuses.find((s) => s.name === 'ERR_LOAD_NOT_A_TABLE').number);
});

test('a consumer the policy does not know is a typed error, never a consumer without a profile', () => {
  const t = Table.load(PROFILES);
  // support-bot's profile refuses refund.issue.
  assert.equal(t.context('support-chat', { consumer: 'support-bot' }).decide('refund.issue').reason, 'notInProfile');
  for (const [name, suggestion] of [
    ['Support-bot', 'support-bot'], ['support-bot ', 'support-bot'], ['support_bot', 'support-bot'],
    ['support-bot\u200b', 'support-bot'], ['', null], ['support-bot\0', 'support-bot'], ['zz-other-app', null],
  ]) {
    assert.throws(() => t.context('support-chat', { consumer: name }), (e) => {
      assert.ok(e instanceof UnknownConsumerError && e instanceof ToolgateError, String(e));
      assert.equal(e.status, 'ERR_UNKNOWN_CONSUMER');
      assert.equal(e.consumerName, name);
      assert.equal(e.suggestion, suggestion);
      return true;
    }, JSON.stringify(name));
  }
  assert.throws(() => t.context('support-chat', { consumer: 'zz-other-app' }), {
    message: 'the policy knows no consumer `zz-other-app`; bind it to a profile (`consumer NAME { profile P }`) or admit unknown consumers (`unknown-consumers admitted`)',
  });
  // No consumer: not an MCP consumer, the profile gate does not apply.
  assert.equal(t.context('support-chat').decide('refund.issue').allowed, true);
});

test('context errors are typed', () => {
  const t = Table.load(DEMO);
  assert.throws(() => t.context('demo-chatt'), (e) => {
    assert.ok(e instanceof UnknownConfigurationError && e instanceof ToolgateError);
    assert.equal(e.configurationName, 'demo-chatt');
    assert.equal(e.suggestion, 'demo-chat');
    assert.equal(e.status, 'ERR_UNKNOWN_CONFIGURATION');
    assert.equal(e.message, 'unknown configuration `demo-chatt`; did you mean `demo-chat`?');
    return true;
  });
  assert.throws(() => t.context('demo-chat', { role: 'root' }), { name: 'ArgumentError', message: 'role "root": expected "admin", "user" or "none"' });
  assert.throws(() => t.context(42), ArgumentError);
  const ctx = t.context('demo-chat', { role: 'user' });
  assert.throws(() => ctx.decide(Buffer.from('read_source')), ArgumentError);
  assert.throws(() => ctx.decide(7), ArgumentError);
  // Not valid Unicode: an argument error, never a decision (nor U+FFFD's).
  assert.throws(() => ctx.decide('\ud800'), (e) => e instanceof ArgumentError && e.status === 'ERR_UTF8');
  assert.throws(() => t.context('demo-chat', { consumer: 'bot\udfff' }), ArgumentError);
});

test('decisions are immutable values, exact', () => {
  const ctx = Table.load(DEMO).context('demo-chat', { role: 'user' });
  const d = ctx.decide('get_page_content');
  assert.deepEqual(
    { tool: d.tool, allowed: d.allowed, reason: d.reason, observedOnly: d.observedOnly, class: d.class, zone: d.zone, ceiling: d.ceiling, hidden: d.hidden },
    { tool: 'get_page_content', allowed: true, reason: null, observedOnly: false, class: 'editorContent', zone: 'externalEu', ceiling: 'internalConfiguration', hidden: false },
  );
  assert.ok(Object.isFrozen(d));
  assert.throws(() => {
    'use strict';
    d.allowed = false;
  }, TypeError);
  assert.equal(ctx.decide('get_page_content'), d);
  const refused = ctx.decide('read_source');
  assert.equal(refused.reason, 'configurationGroup');
  assert.equal(refused.class, null);
  assert.deepEqual(refused.toJSON(), { tool: 'read_source', allowed: false, reason: 'configurationGroup', observedOnly: false });
  assert.equal(ctx.isAllowed('read_source'), false);
  assert.equal(ctx.isAllowed('get_page_content'), true);
  const unknown = ctx.decide('no_such_tool');
  assert.deepEqual(unknown.toJSON(), { tool: 'no_such_tool', allowed: false, reason: 'notRegistered', observedOnly: false });
  // A name that reads like a number is a name.
  assert.equal(ctx.decide('123').reason, 'notRegistered');
});

test('context properties and enforcement', () => {
  const t = Table.load(PROFILES);
  const ctx = t.context('support-chat-eu', { role: 'user', consumer: 'billing-bot', enforcement: ' OBSERVE\n' });
  assert.deepEqual([ctx.configuration, ctx.role, ctx.consumer, ctx.profile, ctx.mode], ['support-chat-eu', 'user', 'billing-bot', 'billing-agent', 'observe']);
  const d = ctx.decide('payment.status');
  assert.deepEqual([d.allowed, d.reason, d.observedOnly], [true, 'trustZone', true]);
  assert.equal(ctx.decide('mcp_billing_invoice_get').reason, 'trustZone');
  const strict = t.context('support-chat-eu', { role: 'user', enforcement: '\u00a0observe' });
  assert.equal(strict.mode, 'enforce');
  assert.equal(strict.isAllowed('payment.status'), false);
});

test('refusals mask hidden remote names; the host keeps the truth', () => {
  const t = Table.load(PROFILES);
  const user = t.context('support-chat', { role: 'user', consumer: 'support-bot' });
  const d = user.decide('mcp_billing_invoice_list');
  assert.equal(d.reason, 'notInProfile');
  assert.equal(d.hidden, true);
  const hidden = user.refusal(d);
  const missing = user.refusal('no_such_tool');
  assert.equal(hidden.kind, 'notRegistered');
  assert.equal(JSON.stringify(hidden), JSON.stringify(missing).replaceAll('no_such_tool', 'mcp_billing_invoice_list'));
  assert.deepEqual(user.refusal('mcp_billing_invoice_list'), hidden);
  assert.ok(!user.unavailablePrompt().includes('mcp_billing_invoice_list'));
  assert.ok(!user.unavailable().some((u) => u.tool === 'mcp_billing_invoice_list'));
  const admin = t.context('support-chat', { role: 'admin', consumer: 'support-bot' });
  const shown = admin.refusal('mcp_billing_invoice_list');
  assert.equal(shown.kind, 'notInProfile');
  assert.equal(shown.profile, 'support-readonly');
  assert.equal(user.refusal('payment.status'), null);
  // A decision of the admin's context handed to the user's cannot unhide the name.
  assert.equal(user.refusal(admin.decide('mcp_billing_invoice_list')).kind, 'notRegistered');
  // A hidden tool's call throws NotRegistered, word for word an unknown name's.
  assert.throws(() => user.checkCall('mcp_billing_invoice_list'), (e) => e instanceof NotRegistered && e.decision.reason === 'notInProfile');
});

test('checkCall throws the kind class, with every field', () => {
  const ctx = Table.load(PROFILES).context('support-chat', { role: 'user', consumer: 'support-bot' });
  assert.equal(ctx.checkCall('payment.status').allowed, true);
  // The sketch of the docs, as written:
  let caught = null;
  try {
    ctx.checkCall('refund.issue');
  } catch (e) {
    if (e instanceof ToolNotInProfile) {
      caught = e;
    } else {
      throw e;
    }
  }
  assert.ok(caught instanceof ToolNotInProfile);
  assert.ok(caught instanceof ConfigurationRefusal && caught instanceof PolicyViolation && caught instanceof ToolgateError && caught instanceof Error);
  assert.ok(!(caught instanceof RuntimeRefusal));
  assert.equal(caught.name, 'ToolNotInProfile');
  assert.equal(caught.kind, 'notInProfile');
  assert.equal(caught.toolName, 'refund.issue');
  assert.equal(caught.profile, 'support-readonly');
  assert.equal(caught.consumer, 'support-bot');
  assert.equal(caught.configuration, null);
  assert.equal(caught.retryable, false);
  assert.equal(caught.action, 'stop');
  assert.equal(caught.refusal.kind, 'notInProfile');
  assert.equal(caught.decision.reason, 'notInProfile');
  assert.equal(caught.message, caught.modelText);
  assert.equal(
    caught.modelText,
    "The tool `refund.issue` cannot be used here: not in this consumer's access profile `support-readonly`. Retrying will not help; tell the user that a person must change the configuration.",
  );
  assert.match(caught.remediation, /^widen access profile `support-readonly` \(in .*policy\.tg\) to allow `refund\.issue`/);
  const ex = Table.load(EXCLUSIONS).context('editor-chat', { role: 'user' });
  assert.throws(() => ex.checkCall('delete_record'), (e) => e instanceof ConfigurationExcluded && e.configuration === 'editor-chat');
  assert.throws(() => ex.checkCall('nope'), NotRegistered);
});

test('a call that needs approval throws ApprovalRequired (docs/approvals.md)', () => {
  const ctx = Table.load(path.join(CORPUS, 'tables/approvals.tgt')).context('support-desk', { role: 'user' });
  const d = ctx.decide('refund.issue');
  assert.deepEqual([d.allowed, d.reason, d.needsApproval], [true, null, true]);
  assert.deepEqual(d.toJSON().needsApproval, true);
  assert.equal(ctx.isAllowed('refund.issue'), false);
  assert.equal(ctx.isAllowed('payment.status'), true);
  assert.equal(ctx.decide('payment.status').needsApproval, false);
  assert.equal(ctx.refusal('refund.issue'), null);
  assert.throws(
    () => ctx.checkCall('refund.issue'),
    (e) =>
      e instanceof toolgate.ApprovalRequired &&
      e instanceof toolgate.ApprovalRefusal &&
      e instanceof PolicyViolation &&
      e.kind === 'approvalRequired' &&
      e.refusalClass === 'approval' &&
      e.action === 'askPerson' &&
      e.retryable === false &&
      e.configuration === 'support-desk' &&
      e.decision.needsApproval === true,
  );
  assert.equal(ctx.callRefusal('refund.issue').kind, 'approvalRequired');
  assert.equal(ctx.callRefusal('payment.status'), null);
  assert.equal(ctx.checkCall('payment.status').allowed, true);
});

test('a call with a grant names why it did not run (docs/approvals.md, "Grants")', () => {
  // Every outcome with real keys is the corpus' grants suite
  // (conformance.test.js, callGranted); no grant here is valid.
  const ctx = Table.load(path.join(CORPUS, 'tables/approvals.tgt')).context('support-desk', { role: 'user' });
  const keys = fs.readFileSync(path.join(SIGNED, 'trusted.pub'), 'utf8');
  const now = 1_800_000_000;
  const refusalOf = (f) => {
    let caught = null;
    assert.throws(f, (e) => ((caught = e), e instanceof toolgate.ApprovalRequired));
    return caught;
  };
  for (const options of [undefined, null, {}, { now }, { approverKeys: keys }, { now: 0 }]) {
    for (const args of [undefined, null, {}, { order: 17 }]) {
      const e = refusalOf(() => ctx.checkCall('refund.issue', args, options));
      assert.deepEqual([e.grantError, e.refusal.grantError, e.detail], [null, undefined, null]);
      assert.equal(e.decision, ctx.decide('refund.issue'));
    }
  }
  const malformed = refusalOf(() => ctx.checkCall('refund.issue', {}, { grant: 'not a grant', approverKeys: keys, now }));
  assert.deepEqual([malformed.grantError, malformed.refusal.grantError], ['grantMalformed', 'grantMalformed']);
  assert.equal(malformed.detail, 'the grant is not a signed grant: expected ident at line 1 column 2');
  assert.ok(Object.isFrozen(malformed.refusal));
  // Without approver keys no grant is read: nothing is trusted to approve.
  assert.equal(refusalOf(() => ctx.checkCall('refund.issue', null, { grant: 'not a grant', now })).grantError, 'grantUntrustedKey');
  // A tool that needs no approval runs, its grant not read; a refused one is
  // refused as ever, whatever the grant.
  assert.equal(ctx.checkCall('payment.status', { a: 1 }, { grant: 'not a grant', now }), ctx.decide('payment.status'));
  assert.throws(
    () => ctx.checkCall('account.close', null, { grant: 'not a grant', approverKeys: keys, now }),
    (e) => e instanceof toolgate.RequiresAdmin && e.grantError === null,
  );
  // What cannot be read is an error, never a check: for any tool.
  const bad = [
    [[1], {}, /^arguments: expected a plain object, got an array$/, 'ERR_ARGUMENT'],
    ['{}', {}, /^arguments: expected a plain object, got string$/, 'ERR_ARGUMENT'],
    [new Map(), {}, /^arguments: expected a plain object, got a Map$/, 'ERR_ARGUMENT'],
    [{ x: NaN }, {}, /^arguments: NaN is not a JSON number$/, 'ERR_ARGUMENT'],
    [{ x: 1n }, {}, /^arguments: not JSON data/, 'ERR_ARGUMENT'],
    [{ x: '\uD800' }, {}, /^arguments: /, 'ERR_ARGUMENT'],
    [null, { grant: '{}', approverKeys: 'not a key' }, /^approverKeys: /, 'ERR_KEYS'],
    [null, { approverKeys: Buffer.from(keys) }, /^approverKeys: expected a string, got object$/, 'ERR_ARGUMENT'],
    [null, { grant: {} }, /^grant: expected a string, got object$/, 'ERR_ARGUMENT'],
    [null, { now: -1 }, /^now: Unix seconds \(a non-negative integer\), got -1$/, 'ERR_ARGUMENT'],
    [null, { now: 1.5 }, /^now: /, 'ERR_ARGUMENT'],
    [null, 'options', /^checkCall options: expected an object/, 'ERR_ARGUMENT'],
  ];
  for (const tool of ['refund.issue', 'payment.status']) {
    for (const [args, options, message, status] of bad) {
      assert.throws(
        () => ctx.checkCall(tool, args, options),
        (e) => e instanceof ArgumentError && message.test(e.message) && e.status === status,
        `${tool} ${String(args)} ${JSON.stringify(options)}`,
      );
    }
  }
});

test('one class per refusal kind, from the catalogue', () => {
  const kinds = toolgate.codes().refusalKinds;
  assert.equal(kinds.length, 11);
  for (const k of kinds) {
    const C = toolgate[k.exception];
    assert.equal(typeof C, 'function', k.exception);
    assert.equal(C.name, k.exception);
    assert.equal(C.kind, k.code);
    assert.equal(toolgate.refusalClassOf(k.code), C);
    const bases = { runtime: RuntimeRefusal, approval: toolgate.ApprovalRefusal, configuration: ConfigurationRefusal };
    assert.equal(Object.getPrototypeOf(C), bases[k.class]);
  }
  assert.equal(toolgate.refusalClassOf('contentPolicy'), ContentPolicyViolation);
  assert.equal(toolgate.refusalClassOf('definitionChanged'), DefinitionChanged);
  assert.equal(Object.getPrototypeOf(ContentPolicyViolation), RuntimeRefusal);
  assert.equal(Object.getPrototypeOf(PolicyViolation), ToolgateError);
  for (const C of [LoadError, ArgumentError, UnknownConfigurationError, UnknownConsumerError, UnknownSkillError, RunStateError]) {
    assert.ok(C.prototype instanceof ToolgateError);
    assert.ok(!(C.prototype instanceof PolicyViolation));
  }
});

test('errors.d.ts is generated from the catalogue', () => {
  const { render } = require('../scripts/gen-errors-dts.js');
  const committed = fs.readFileSync(path.join(__dirname, '..', 'errors.d.ts'), 'utf8');
  assert.equal(committed, render(toolgate.codes()), 'errors.d.ts is stale: run `npm run gen:errors`');
  for (const k of toolgate.codes().refusalKinds) {
    const base = { runtime: 'RuntimeRefusal', approval: 'ApprovalRefusal' }[k.class] ?? 'ConfigurationRefusal';
    assert.ok(committed.includes(`export class ${k.exception} extends ${base} {`), k.exception);
  }
});

test('the gate order and messages come from the catalogue', () => {
  assert.deepEqual([...toolgate.GATE_ORDER], ['notRegistered', 'toolDisabled', 'requiresAdmin', 'notInProfile', 'configurationGroup', 'configurationExcluded', 'trustZone']);
  assert.equal(toolgate.reasonMessage('toolDisabled'), 'switched off by an administrator');
  assert.throws(() => toolgate.reasonMessage('quota'), ArgumentError);
  assert.equal(toolgate.MAX_FILE_BYTES, 256 * 1024 * 1024);
});

test('offered, unavailable, prompt and the tool set', () => {
  const t = Table.load(PROFILES);
  const ctx = t.context('support-chat', { role: 'user', consumer: 'support-bot' });
  assert.deepEqual(ctx.offered(), ['search_help_center', 'get_help_article', 'payment.status', 'mcp_crm_customer-360_lookup', 'mcp_crm_customer-360_timeline', 'mcp_crm_customer-360_contacts']);
  assert.equal(ctx.offeredCount(), 6);
  const un = ctx.unavailable();
  assert.equal(un.length, ctx.unavailableCount());
  assert.deepEqual(un[0], { tool: 'refund.issue', reason: 'notInProfile' });
  assert.ok(ctx.unavailablePrompt().includes('- refund.issue: not in this consumer\'s access profile'));
  const packed = ctx.unavailablePacked();
  assert.ok(packed instanceof Uint32Array && packed.length === un.length);
  assert.equal(t.tools[packed[0] >>> 3], 'refund.issue');
  // The caller's own copy: writing it changes no later answer of any context.
  const kept = Array.from(packed);
  packed.fill(0);
  assert.deepEqual(Array.from(ctx.unavailablePacked()), kept);
  assert.deepEqual(ctx.unavailable().map((u) => u.tool), kept.map((v) => t.tools[v >>> 3]));
  assert.notEqual(ctx.unavailablePacked(), ctx.unavailablePacked());
  // offered() shares the table's buffer with the list: each answer is the
  // caller's own array, and interleaving contexts and forms changes none.
  const offered = ctx.offered();
  offered.length = 0;
  const admin = t.context('support-chat', { role: 'admin' });
  assert.deepEqual(admin.offered(), admin.decisions().filter((d) => d.allowed).map((d) => d.tool));
  ctx.unavailablePacked();
  assert.deepEqual(ctx.offered(), ctx.decisions().filter((d) => d.allowed).map((d) => d.tool));
  assert.ok(admin.offered().length > ctx.offered().length);
  const host = ctx.toolSet();
  assert.equal(host.audience, 'host');
  assert.deepEqual(host.offered, ctx.offered());
  const billing = host.excluded.find((x) => x.name === 'mcp_billing_invoice_list');
  assert.deepEqual(billing, { name: 'mcp_billing_invoice_list', reason: 'notInProfile', nameVisible: false });
  assert.deepEqual(host.excluded.find((x) => x.name === 'refund.issue'), { name: 'refund.issue', reason: 'notInProfile', nameVisible: true });
  const model = ctx.toolSet({ audience: 'model' });
  assert.equal(model.audience, 'model');
  assert.ok(!model.excluded.some((x) => x.name === 'mcp_billing_invoice_list'));
  assert.deepEqual(model.excluded.find((x) => x.name === 'refund.issue'), { name: 'refund.issue', reason: 'notInProfile' });
  assert.equal(model.excluded.length, host.excluded.filter((x) => x.nameVisible).length);
  assert.ok(host.descriptorBytes > 0 && host.estimatedTokens > 0);
  assert.throws(() => ctx.toolSet({ audience: 'people' }), ArgumentError);
});

test('a context keeps its unavailable list; a swap gives new contexts their own', () => {
  const t = Table.load(PROFILES);
  const ctx = t.context('support-chat', { role: 'user', consumer: 'support-bot' });
  const first = ctx.unavailable();
  assert.ok(Object.isFrozen(first) && first.every((u) => Object.isFrozen(u)));
  assert.equal(ctx.unavailable(), first, 'the same array again');
  assert.throws(() => first.push({ tool: 'x', reason: 'toolDisabled' }), TypeError);
  // Exactly the runtime's list: the packed form, entry by entry.
  assert.deepEqual(first.map((u) => [u.tool, u.reason]), Array.from(ctx.unavailablePacked(), (v) => [t.tools[v >>> 3], toolgate.GATE_ORDER[(v & 7) - 1]]));
  // Another context of the same table, with other answers, has its own list;
  // an entry shared by the table is only shared for the same reason.
  const admin = t.context('support-chat', { role: 'admin' });
  const adminList = admin.unavailable();
  assert.notEqual(adminList, first);
  assert.deepEqual(adminList.map((u) => [u.tool, u.reason]), Array.from(admin.unavailablePacked(), (v) => [t.tools[v >>> 3], toolgate.GATE_ORDER[(v & 7) - 1]]));
  assert.deepEqual(ctx.unavailable().map((u) => [u.tool, u.reason]), first.map((u) => [u.tool, u.reason]));
  // A live tail makes a new array and leaves the kept list as it was.
  const live = new LiveTool('late_tool', 'nowhere', { class: 'publicContent' });
  const withLive = ctx.unavailable({ live: [live] });
  assert.equal(withLive.length, first.length + 1);
  // (The consumer's profile is the first gate to refuse it here.)
  assert.deepEqual(withLive.at(-1), { tool: 'late_tool', reason: 'notInProfile' });
  assert.equal(ctx.unavailable().length, first.length);
  // After a swap, a context of the current table answers from that table.
  const h = new TableHandle(t);
  const before = h.current().context('support-chat', { role: 'user', consumer: 'support-bot' }).unavailable();
  h.swap(Table.load(DEMO));
  const after = h.current().context('demo-chat', { role: 'user' });
  assert.deepEqual(after.unavailable().map((u) => [u.tool, u.reason]), Array.from(after.unavailablePacked(), (v) => [h.current().tools[v >>> 3], toolgate.GATE_ORDER[(v & 7) - 1]]));
  assert.notDeepEqual(after.unavailable(), before);
});

test('stored runs are read strictly', () => {
  const t = Table.load(DEMO);
  const run = RunState.start(t, 'demo-chat');
  assert.ok(run.isReadable);
  assert.equal(RunState.parse(run.toJson()).toJson(), run.toJson());
  assert.deepEqual(JSON.parse(JSON.stringify(run)), JSON.parse(run.toJson()));
  assert.throws(() => RunState.parse('{"allowedToolNames": [], "allowedToolNames": []}'), (e) => {
    assert.ok(e instanceof RunStateError && e instanceof ToolgateError);
    assert.equal(e.state.isReadable, false);
    return true;
  });
  assert.throws(() => RunState.parse('{"extra": 1}'), RunStateError);
  const bad = RunState.fromBytes('not json');
  assert.equal(bad.allowedToolNames, false);
  assert.equal(bad.excludedToolNames, false);
  // An unreadable run admits nothing, the skill loader included.
  const ctx = t.context('demo-chat', { role: 'user', run: bad });
  assert.equal(ctx.offered().length, 0);
  assert.equal(ctx.decide('load_skill').allowed, false);
  // A stored form handed to the context is read strictly.
  assert.throws(() => t.context('demo-chat', { run: '{"x": 1}' }), RunStateError);
  assert.throws(() => RunState.start(t, 'demo-chat', ['no-such-skill']), (e) => e instanceof UnknownSkillError && e.skillName === 'no-such-skill');
  assert.throws(() => RunState.start(t, 'nope'), UnknownConfigurationError);
  const narrowed = new RunState({ allowedToolNames: ['get_page_content'], excludedToolNames: [] });
  assert.deepEqual(narrowed.allowedToolNames, ['get_page_content']);
  const resumed = run.resume(narrowed);
  assert.ok(resumed.equals(resumed) && !resumed.equals(run));
  assert.throws(() => new RunState({ allowedToolNames: 'get_page_content' }), ArgumentError);
});

test('live tools are checked by the runtime and decided by the table', () => {
  const t = Table.load(DEMO);
  const ctx = t.context('demo-chat', { role: 'user' });
  const live = new LiveTool('late_tool', 'nowhere', { class: 'publicContent' });
  assert.ok(Object.isFrozen(live));
  const d = ctx.decideLive(live);
  assert.deepEqual([d.allowed, d.reason], [false, 'configurationGroup']);
  assert.equal(ctx.refusal(live).kind, 'configurationGroup');
  assert.throws(() => ctx.unavailable({ live }), ArgumentError);
  assert.deepEqual(ctx.unavailable({ live: [live] }).at(-1), { tool: 'late_tool', reason: 'configurationGroup' });
  assert.ok(ctx.unavailablePrompt({ live: [live] }).includes('- late_tool: '));
  assert.throws(() => new LiveTool('bad\nname', 'g'), (e) => e instanceof ArgumentError && e.message.includes('bad\\u000aname'));
  assert.throws(() => LiveTool.fromJson('{"name": "x", "group": "g"}'), ArgumentError);
  assert.throws(() => new LiveTool('x', 'g', { remote: 'yes' }), ArgumentError);
  assert.deepEqual(LiveTool.fromJson('{"name":"x","group":"g","remote":false,"enabled":true,"adminOnly":false,"class":null}').name, 'x');
});

test('classification: gateway fixtures, strict bodies, raiseForAnswer', () => {
  const t = Table.load(PROFILES);
  const success = fs.readFileSync(path.join(GATEWAY, 'success.json'));
  assert.deepEqual(toolgate.classifyEnvelope(success), { outcome: 'success' });
  const failure = toolgate.classifyFile(path.join(GATEWAY, 'tool-failure-isError.json'));
  assert.equal(failure.outcome, 'toolFailure');
  // A tool failure and a success are returned, never thrown.
  assert.equal(toolgate.raiseForAnswer('{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}').outcome, 'toolFailure');
  assert.equal(toolgate.classifyOrThrow('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}').outcome, 'success');
  const mule = toolgate.classifyFile(path.join(GATEWAY, 'G-mulesoft-flex-403.json'), { table: t });
  assert.equal(mule.refusal.kind, 'notInProfile');
  assert.throws(() => toolgate.raiseForAnswer(fs.readFileSync(path.join(GATEWAY, 'C-contextforge-plugin-violation.json')), {}), PolicyViolation);
  const plugin = JSON.parse(fs.readFileSync(path.join(GATEWAY, 'C-contextforge-plugin-violation.json'), 'utf8'));
  assert.throws(
    () => t.raiseForAnswer(JSON.stringify(plugin.body), { httpStatus: plugin.httpStatus, origin: plugin.origin }),
    (e) => e instanceof ContentPolicyViolation && e instanceof RuntimeRefusal && e.retryable === true && e.action === 'rephrase' && e.classification.outcome === 'refusal',
  );
  // Ambiguous or unreadable answers are refusals, never success.
  for (const body of ['', 'not json', '{"jsonrpc":"2.0","id":1,"result":{},"error":null}', '{"a":1,"a":2}']) {
    assert.throws(() => toolgate.raiseForAnswer(body), toolgate.PolicyRefused, body);
  }
  // A transport denial seen only in a header.
  const scope = toolgate.classify('', { httpStatus: 403, headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="refund"' } });
  assert.equal(scope.refusal.kind, 'notInProfile');
  const pairs = toolgate.classify('', { httpStatus: 403, headers: new Headers({ 'WWW-Authenticate': 'Bearer error="insufficient_scope"' }) });
  assert.equal(pairs.refusal.kind, 'notInProfile');
  assert.throws(() => toolgate.classify('x', { httpStatus: 70000 }), ArgumentError);
  assert.throws(() => toolgate.classify(42), ArgumentError);
  assert.throws(() => toolgate.classify('x', { table: {} }), ArgumentError);
});

test('the MCP refusal error is the runtime\'s', () => {
  const ctx = Table.load(PROFILES).context('support-chat', { role: 'user', consumer: 'support-bot' });
  const r = ctx.refusal('refund.issue');
  const e = toolgate.refusalError(r, { tableDigest: 'abc' });
  assert.equal(e.code, -31001);
  assert.equal(e.message, r.modelText);
  assert.equal(e.data.toolgate.kind, 'notInProfile');
  assert.equal(e.data.tableDigest, 'abc');
  assert.deepEqual(toolgate.refusalError(r, { stealth: true }), { code: -32602, message: 'Unknown tool: refund.issue' });
  assert.deepEqual(toolgate.refusalError(ctx.refusal('nope')).code, -32602);
  assert.deepEqual(toolgate.unknownToolError('a\nb'), { code: -32602, message: 'Unknown tool: a\\u000ab' });
  assert.throws(() => toolgate.refusalError({ kind: 'quota' }), ArgumentError);
});

test('hot reload keeps the current table on a failed reload', () => {
  const demo = Table.load(DEMO);
  const h = new TableHandle(demo);
  assert.equal(h.current(), demo);
  assert.equal(h.trustedKeyIds, null);
  assert.throws(() => h.reload(Buffer.from('garbage')), LoadError);
  assert.equal(h.current(), demo);
  const old = h.reload(PROFILES);
  assert.equal(old, demo);
  assert.notEqual(h.current().digest, demo.digest);
  assert.equal(h.current(), h.current());
  assert.equal(h.swap(demo).digest, Table.load(PROFILES).digest);
  assert.equal(h.context('demo-chat', { role: 'user' }).decide('read_source').reason, 'configurationGroup');
});

test('signatures: conformance/signed replayed through the handle', () => {
  const trusted = fs.readFileSync(path.join(SIGNED, 'trusted.pub'), 'utf8');
  const expect = JSON.parse(fs.readFileSync(path.join(SIGNED, 'expect.json'), 'utf8'));
  let checked = 0;
  for (const [name, x] of Object.entries(expect)) {
    const file = path.join(SIGNED, name);
    if (x.ok) assert.equal(Table.load(file, { trustedKeys: trusted }).digest, x.digest, name);
    else assert.throws(() => Table.load(file, { trustedKeys: trusted }), (e) => e instanceof LoadError && e.code === x.error && e.message === x.message, name);
    checked++;
  }
  assert.ok(checked >= 3);
  const first = Table.load(path.join(SIGNED, 'signed.tgt'), { trustedKeys: trusted });
  assert.ok(first.verifiedBy);
  const h = new TableHandle(first, { trustedKeys: trusted });
  assert.equal(h.trustedKeyIds.length, 1);
  for (const [name, code] of [['unsigned.tgt', 'unsigned'], ['untrusted.tgt', 'untrustedKey']]) {
    assert.throws(() => h.reload(fs.readFileSync(path.join(SIGNED, name))), (e) => e instanceof LoadError && e.code === code);
    assert.equal(h.current(), first);
  }
  // An unverified table cannot be swapped in, nor start a verified handle.
  assert.throws(() => h.swap(Table.load(DEMO)), (e) => e instanceof LoadError && e.code === 'unsigned');
  assert.throws(() => new TableHandle(Table.load(DEMO), { trustedKeys: trusted }), LoadError);
  assert.throws(() => new TableHandle(first, { trustedKeys: 'not a key' }), (e) => e instanceof ArgumentError && e.status === 'ERR_KEYS');
});
