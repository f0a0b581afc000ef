'use strict';
// A new context's unavailable list from Node against the plain JavaScript gate
// (bindings/node/test/plain_gate.js) on one table, each list checked equal to the
// plain gate's first: BENCHMARKS.md, "Node: a new context's list".
//
//   node bench/hosts/node_fresh_list.js TABLE.tgt [CONFIGURATION [CONSUMER]]
// (the release addon built in bindings/node: npx napi build --release)
const path = require('node:path').resolve(__dirname, '../../bindings/node');
const tg = require(path);
const { PlainGate } = require(path + '/test/plain_gate.js');
const [tablePath, cfg = 'config0', consumer = null] = process.argv.slice(2);
const t = tg.Table.load(tablePath);
const gate = new PlainGate(t.policy());
const ARGS = [cfg, 'user', consumer, null, null];
const ctx = () => t.context(cfg, { role: 'user', consumer });
const want = JSON.stringify(gate.unavailable(...ARGS));
if (JSON.stringify(ctx().unavailable()) !== want) { console.error('differs'); process.exit(1); }
const names = t.tools;
const packedAsObjects = Array.from(ctx().unavailablePacked(), (v) => ({ tool: names[v >>> 3], reason: tg.GATE_ORDER[(v & 7) - 1] }));
if (JSON.stringify(packedAsObjects) !== want) { console.error('packed differs'); process.exit(1); }
function med(f, k) { f(); const r = []; for (let j = 0; j < 9; j++) { const t0 = process.hrtime.bigint(); for (let i = 0; i < k; i++) f(); r.push(Number(process.hrtime.bigint() - t0) / k / 1000); } r.sort((a, b) => a - b); return r[4]; }
let s = 0;
const plain = med(() => { s ^= gate.unavailable(...ARGS).length; }, 10);
const fresh = med(() => { s ^= ctx().unavailable().length; }, 200);
const freshPacked = med(() => { s ^= ctx().unavailablePacked().length; }, 200);
const c = ctx(); c.unavailable();
const kept = med(() => { s ^= c.unavailable().length; }, 2000);
console.log(`${names.length} tools, ${JSON.parse(want).length} listed: plain JS ${plain.toFixed(1)} us; new context + unavailable() ${fresh.toFixed(1)} us (${(plain / fresh).toFixed(1)}x); new context + unavailablePacked() ${freshPacked.toFixed(1)} us (${(plain / freshPacked).toFixed(1)}x); kept ${kept.toFixed(3)} us (${(plain / kept).toFixed(0)}x)`);
if (s === 0.5) console.log(s);
