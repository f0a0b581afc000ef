'use strict';
// The Node paths of bench/scripts/hosts.sh: the binding (`ctx.decide`,
// `ctx.unavailable()`, `ctx.unavailablePacked()`) and the plain JavaScript
// gate (bindings/node/test/plain_gate.js, checked against the corpus) on the
// table hosts.sh generated.
//
// Usage: node node_bench.js TABLE.tgt N   (the runtime's answers in TABLE's
// .tools.tsv twin; HOSTS_QUICK=1 shortens the loops). Checks both against
// the runtime before timing (exit 1 on any difference), then prints ROW lines.

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const toolgate = require(path.join(ROOT, 'bindings/node'));
const { PlainGate } = require(path.join(ROOT, 'bindings/node/test/plain_gate.js'));

const QUICK = !['', '0', undefined].includes(process.env.HOSTS_QUICK);
const REPS = QUICK ? 5 : 7;
const ARGS = ['config0', 'user', 'k0', null, null];

const iters = (full) => Math.max(1, QUICK ? Math.floor(full / 20) : full);
const row = (p, op, n, ns, count) => console.log(`ROW path=${p} op=${op} n=${n} ns=${ns.toFixed(1)} iters=${count} reps=${REPS}`);
function fail(what) {
  console.error(`node_bench.js: ${what}`);
  process.exit(1);
}

/** Median over REPS runs of f (which does `ops` operations), ns per op, after one untimed warm-up run. */
function medianNs(f, ops) {
  f();
  const runs = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = process.hrtime.bigint();
    f();
    runs.push(Number(process.hrtime.bigint() - t0) / ops);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)];
}

let sink = 0;

function main() {
  const [tablePath, nText] = process.argv.slice(2);
  if (!tablePath || !tablePath.endsWith('.tgt')) fail('usage: node_bench.js TABLE.tgt N');
  const n = Number(nText);
  const rows = fs.readFileSync(tablePath.replace(/\.tgt$/, '.tools.tsv'), 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'));
  if (rows.length !== n || rows.some((r) => r.length !== 4)) fail(`${tablePath}: not ${n} lines of \`name allowed reason listed\``);
  const names = rows.map((r) => r[0]);
  const want = rows.map((r) => [r[1] === '1', r[2] === '-' ? null : r[2]]);
  const wantList = rows.filter((r) => r[3] === '1').map((r) => ({ tool: r[0], reason: r[2] }));

  const t = toolgate.Table.load(tablePath);
  const ctx = t.context('config0', { role: 'user', consumer: 'k0' });
  const gate = new PlainGate(t.policy());
  names.forEach((name, i) => {
    const d = ctx.decide(name);
    if (d.allowed !== want[i][0] || d.reason !== want[i][1]) fail(`${name}: the binding decides ${[d.allowed, d.reason]}, the runtime ${want[i]}`);
    const p = gate.decide(name, ...ARGS);
    if (p[0] !== want[i][0] || p[1] !== want[i][1]) fail(`${name}: the plain gate decides ${p}, the runtime ${want[i]}`);
  });
  const same = (a) => JSON.stringify(a) === JSON.stringify(wantList);
  if (!same(ctx.unavailable())) fail("the binding's unavailable list differs from the runtime's");
  const packed = Array.from(ctx.unavailablePacked(), (v) => ({ tool: names[v >>> 3], reason: toolgate.GATE_ORDER[(v & 7) - 1] }));
  if (!same(packed)) fail("the binding's packed unavailable list differs from the runtime's");
  if (!same(gate.unavailable(...ARGS))) fail("the plain gate's unavailable list differs from the runtime's");

  const seq = Array.from({ length: n }, (_, k) => names[((k + 1) * 7919) % n]); // bench/src/lib.rs walk()
  const timedDecide = (passes) => () => {
    for (let p = 0; p < passes; p++) for (const x of seq) sink ^= ctx.decide(x).allowed ? 1 : 0;
  };
  const timedPlain = (passes) => () => {
    for (let p = 0; p < passes; p++) for (const x of seq) sink ^= gate.decide(x, 'config0', 'user', 'k0', null, null)[0] ? 1 : 0;
  };
  const timedList = (k, f) => () => {
    for (let i = 0; i < k; i++) sink ^= f().length;
  };

  let passes = Math.ceil(iters(2_000_000) / n);
  row('node', 'decide', n, medianNs(timedDecide(passes), passes * n), passes * n);
  let k = iters(Math.floor(2_000_000 / n));
  row('node', 'unavailable', n, medianNs(timedList(k, () => ctx.unavailable()), k), k);
  row('node-packed', 'unavailable', n, medianNs(timedList(k, () => ctx.unavailablePacked()), k), k);
  passes = Math.ceil(iters(500_000) / n);
  row('plain-js', 'decide', n, medianNs(timedPlain(passes), passes * n), passes * n);
  k = iters(Math.max(5, Math.floor(200_000 / n)));
  row('plain-js', 'unavailable', n, medianNs(timedList(k, () => gate.unavailable(...ARGS)), k), k);

  // A chat host's request: a new context, then every registered tool (the
  // offered set and the unavailable list together), checked first. (The
  // 'unavailable' rows above ask the same context again: it keeps its list.)
  const offeredWant = rows.filter((r) => r[1] === '1').map((r) => r[0]);
  const request = () => {
    const c = t.context('config0', { role: 'user', consumer: 'k0' });
    return [c.offered(), c.unavailable()];
  };
  if (JSON.stringify(request()) !== JSON.stringify([offeredWant, wantList])) fail("a request's offered set or unavailable list differs from the runtime's");
  const policy = t.policy();
  const visible = policy.remoteVisibility === 'everyone'; // the context's role is a user
  const remote = new Map(policy.tools.map((x) => [x.name, x.remote]));
  const plainRequest = () => {
    const offered = [];
    const out = [];
    for (const name of names) {
      const [allowed, reason] = gate.decide(name, 'config0', 'user', 'k0', null, null);
      if (allowed) offered.push(name);
      else if (visible || !remote.get(name)) out.push({ tool: name, reason });
    }
    return [offered, out];
  };
  if (JSON.stringify(plainRequest()) !== JSON.stringify([offeredWant, wantList])) fail("the plain gate's request differs from the runtime's");
  const k2 = iters(Math.max(5, Math.floor(2_000_000 / n)));
  row('node', 'request', n, medianNs(timedList(k2, request), k2), k2);
  row('plain-js', 'request', n, medianNs(timedList(k, plainRequest), k), k);
  if (sink === 0.5) console.log(sink);
}

main();
