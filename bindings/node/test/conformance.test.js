'use strict';
// The Node host: every case of the conformance corpus (conformance/,
// docs/conformance.md) through the package's public API, and the plain
// JavaScript gate (plain_gate.js) on every context case it models.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const toolgate = require('..');
const { PlainGate } = require('./plain_gate.js');
const { CORPUS } = require('./corpus.js');

const MANIFEST = JSON.parse(fs.readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8'));
assert.equal(MANIFEST.format, 'toolgate-conformance/1');

// Reason letters from the library's catalogue (the manifest's gates are the same list).
const LETTERS = Object.fromEntries(toolgate.codes().gates.map((g) => [g.code, g.letter]));

const CASES = [];
for (const suite of MANIFEST.suites) {
  const data = JSON.parse(fs.readFileSync(path.join(CORPUS, suite.path), 'utf8'));
  assert.equal(data.format, 'toolgate-conformance/1');
  assert.equal(data.cases.length, suite.cases, suite.path);
  for (const c of data.cases) CASES.push(c);
}

const tables = new Map();
function table(rel) {
  let t = tables.get(rel);
  if (t === undefined) {
    t = toolgate.Table.load(path.join(CORPUS, rel));
    tables.set(rel, t);
  }
  return t;
}

function letter(d) {
  if (d.allowed && d.needsApproval) return d.observedOnly ? 'B' : 'A';
  if (d.allowed) return d.observedOnly ? 'O' : 'Y';
  return LETTERS[d.reason];
}

function liveTool(x) {
  return new toolgate.LiveTool(x.name, x.group, { remote: x.remote, enabled: x.enabled, adminOnly: x.adminOnly, class: x.class });
}

function rejected(x) {
  let byArgs = null;
  let byJson = null;
  assert.throws(() => liveTool(x), (e) => ((byArgs = e), e instanceof toolgate.ArgumentError));
  assert.throws(() => toolgate.LiveTool.fromJson(JSON.stringify(x)), (e) => ((byJson = e), e instanceof toolgate.ArgumentError));
  assert.equal(byJson.message, byArgs.message);
  return byArgs.message;
}

function expectContext(c) {
  const t = table(c.table);
  const x = c.context;
  const run = x.run === null ? null : toolgate.RunState.fromBytes(x.run);
  let ctx;
  try {
    ctx = t.context(x.configuration, { role: x.role, consumer: x.consumer, run, enforcement: x.enforcement });
  } catch (e) {
    if (e instanceof toolgate.UnknownConfigurationError) return { error: { code: 'unknownConfiguration', message: e.message } };
    if (e instanceof toolgate.UnknownConsumerError) return { error: { code: 'unknownConsumer', message: e.message } };
    throw e;
  }
  const e = {};
  const decisions = ctx.decisions();
  e.decisionsById = decisions.map(letter).join('');
  // By id and by name agree.
  t.tools.forEach((n, i) => assert.equal(ctx.decide(n), decisions[i]));
  e.decisions = (c.decide ?? []).map((n) => ctx.decide(n).toJSON());
  e.refusals = (c.refuse ?? []).map((n) => ctx.refusal(n));
  const live = (c.live ?? []).map(liveTool);
  e.live = live.map((tool) => {
    const d = ctx.decideLive(tool);
    const a = { allowed: d.allowed, reason: d.reason, observedOnly: d.observedOnly };
    if (c.refuseLive) {
      a.refusal = ctx.refusal(d);
      assert.deepEqual(ctx.refusal(tool), a.refusal);
    }
    return a;
  });
  if ('liveRejected' in c) e.liveRejected = c.liveRejected.map(rejected);
  const compact = c.compact === true;
  if (live.length > 0) {
    const withLive = ctx.unavailable({ live });
    if (compact) e.unavailableWithLiveTail = withLive.slice(ctx.unavailableCount());
    else {
      e.unavailableWithLive = withLive;
      e.promptWithLive = ctx.unavailablePrompt({ live });
    }
  }
  if (compact) {
    const marks = new Array(t.size).fill('.');
    for (const u of ctx.unavailable()) marks[t.toolId(u.tool)] = LETTERS[u.reason];
    e.unavailableById = marks.join('');
  } else {
    e.offered = ctx.offered();
    e.unavailable = ctx.unavailable();
    e.prompt = ctx.unavailablePrompt();
  }
  return e;
}

/** Calls checked with grants, in order, in this process's ledger of used
 * grants (each case's grant ids are its own). */
function expectCallGranted(c) {
  const x = c.context;
  const ctx = table(c.table).context(x.configuration, { role: x.role, consumer: x.consumer, enforcement: x.enforcement });
  const calls = c.calls.map((call) => {
    const args = call.argumentsJson === null ? null : JSON.parse(call.argumentsJson);
    const options = { grant: call.grant, approverKeys: call.approverKeys, now: call.now };
    const approvalRequest = { ...ctx.approvalRequest(call.tool, args, 'request-1') };
    try {
      const d = ctx.checkCall(call.tool, args, options);
      return { decision: d.toJSON(), refusal: null, approvalRequest };
    } catch (e) {
      if (!(e instanceof toolgate.PolicyViolation)) throw e;
      assert.equal(e.constructor, toolgate.refusalClassOf(e.kind));
      assert.equal(e.grantError, e.refusal.grantError ?? null);
      return { decision: e.decision.toJSON(), refusal: { ...e.refusal }, approvalRequest };
    }
  });
  return { calls };
}

function expectCase(c) {
  switch (c.kind) {
    case 'load': {
      const source = 'table' in c ? path.join(CORPUS, c.table) : Buffer.from(c.bytesHex, 'hex');
      try {
        const t = toolgate.Table.load(source);
        return { ok: true, digest: t.digest, tools: [...t.tools], configurations: t.configurations };
      } catch (e) {
        if (e instanceof toolgate.LoadError) return { ok: false, error: e.code, message: e.message };
        throw e;
      }
    }
    case 'context':
      return expectContext(c);
    case 'classify': {
      const a = c.answer;
      const body = 'bodyHex' in a ? Buffer.from(a.bodyHex, 'hex') : Buffer.from(a.body, 'utf8');
      const t = c.table === null ? null : table(c.table);
      return JSON.parse(JSON.stringify(toolgate.classify(body, { origin: a.origin, httpStatus: a.httpStatus, tool: a.tool, table: t })));
    }
    case 'callGranted':
      return expectCallGranted(c);
    case 'runStart':
      try {
        return { ok: true, run: toolgate.RunState.start(table(c.table), c.configuration, c.skills).toJson() };
      } catch (e) {
        if (e instanceof toolgate.UnknownConfigurationError) return { ok: false, error: 'unknownConfiguration', message: e.message };
        if (e instanceof toolgate.UnknownSkillError) return { ok: false, error: 'unknownSkill', message: e.message };
        throw e;
      }
    case 'runRead':
      return { run: toolgate.RunState.fromBytes(c.stored).toJson() };
    case 'runResume':
      return { run: toolgate.RunState.fromBytes(c.stored).resume(toolgate.RunState.fromBytes(c.live)).toJson() };
    default:
      throw new Error(`unknown case kind ${c.kind}`);
  }
}

test('the corpus is whole', () => {
  assert.equal(CASES.length, MANIFEST.suites.reduce((s, x) => s + x.cases, 0));
  assert.equal(CASES.length, 3875);
  assert.deepEqual(
    new Set(CASES.map((c) => c.kind)),
    new Set(['load', 'context', 'classify', 'runStart', 'runRead', 'runResume', 'callGranted']),
  );
});

test('the manifest gates are the library catalogue', () => {
  assert.deepEqual(MANIFEST.gates, toolgate.codes().gates);
});

test('every case of the corpus', () => {
  let passed = 0;
  const failed = [];
  for (const c of CASES) {
    try {
      assert.deepEqual(expectCase(c), c.expect);
      passed++;
    } catch (e) {
      failed.push(`${c.id}: ${e.message.split('\n').slice(0, 12).join('\n')}`);
    }
  }
  assert.deepEqual(failed.slice(0, 5), [], `${failed.length} of ${CASES.length} cases failed`);
  assert.equal(passed, 3875);
});

test('the plain JavaScript gate agrees with the corpus on every context case', () => {
  let checked = 0;
  const gates = new Map();
  for (const c of CASES) {
    if (c.kind !== 'context' || 'error' in c.expect) continue;
    const t = table(c.table);
    let gate = gates.get(c.table);
    if (gate === undefined) gates.set(c.table, (gate = new PlainGate(t.policy())));
    const x = c.context;
    const run = x.run === null ? null : JSON.parse(toolgate.RunState.fromBytes(x.run).toJson());
    const args = [x.configuration, x.role, x.consumer, run, x.enforcement];
    const byId = t.tools.map((n) => {
      const [allowed, reason, observed] = gate.decide(n, ...args);
      if (!allowed) return LETTERS[reason];
      const approval = gate.needsApproval(n, x.configuration, x.consumer);
      return approval ? (observed ? 'B' : 'A') : observed ? 'O' : 'Y';
    });
    assert.equal(byId.join(''), c.expect.decisionsById, c.id);
    const listed = gate.unavailable(...args);
    if ('unavailable' in c.expect) assert.deepEqual(listed, c.expect.unavailable, c.id);
    else {
      const marks = new Array(t.size).fill('.');
      for (const u of listed) marks[t.toolId(u.tool)] = LETTERS[u.reason];
      assert.equal(marks.join(''), c.expect.unavailableById, c.id);
    }
    checked++;
  }
  assert.ok(checked > 2500, `${checked} context cases`);
});
