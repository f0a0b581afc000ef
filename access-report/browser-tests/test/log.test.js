'use strict';
// The denial charts from both log formats: the runtime's records
// (`toolgate simulate --log`) and the service's (`toolgate serve --decision-log`).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

function runtimeLog() {
  const log = path.join(h.OUT, 'runtime-log.jsonl');
  fs.rmSync(log, { force: true });
  for (const c of ['demo-chat', 'developer-chat']) {
    h.toolgate(['simulate', '-p', 'policies/demo', '-c', c, '--format', 'json', '--log', log]);
    h.toolgate(['simulate', '-p', 'policies/demo', '-c', c, '--admin', '--format', 'json', '--log', log]);
  }
  return log;
}

async function serviceLog() {
  const log = path.join(h.OUT, 'service-log.jsonl');
  fs.rmSync(log, { force: true });
  const s = await h.serve(['--project', 'policies/demo', '--decision-log', log, '--no-watch']);
  try {
    for (const [cfg, tool] of [['demo-chat', 'read_source'], ['demo-chat', 'search_pages'], ['developer-chat', 'get_env_raw'], ['demo-chat', 'get_env_raw']]) {
      const r = await fetch(s.url + '/access/v1/evaluation', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ subject: { type: 'user', id: 'alice' }, action: { name: 'call' }, resource: { type: 'tool', id: tool }, context: { configuration: cfg } }),
      });
      assert.equal(r.status, 200);
    }
  } finally {
    await s.stop();
  }
  return log;
}

async function check(b, server, log, name) {
  const stats = JSON.parse(h.toolgate(['stats', log, '--format', 'json']));
  assert.ok(stats.refused > 0, name + ' has refusals');
  const file = h.report('log-' + name, ['policies/demo', '--decision-log', log]);
  const { page, problems } = await h.open(b, server.url(file));
  await page.click('#tab-denials');
  const reasons = await page.$$eval('#chart-reason rect', (rs) => Object.fromEntries(rs.map((r) => [r.dataset.reason, Number(r.dataset.count)])));
  assert.deepEqual(reasons, stats.byReason);
  const perCfg = await page.$$eval('#chart-config rect', (rs) => rs.map((r) => [r.dataset.label, r.dataset.reason, Number(r.dataset.count)]));
  const want = [];
  for (const [cfg, m] of Object.entries(stats.byConfiguration)) for (const [k, n] of Object.entries(m)) want.push([cfg, k, n]);
  assert.deepEqual(perCfg.slice().sort(), want.sort());
  const overTime = await page.$$eval('#chart-time rect', (rs) => rs.reduce((a, r) => a + Number(r.dataset.count), 0));
  assert.equal(overTime, stats.refused);
  const counts = await page.$$eval('#log-counts b', (bs) => bs.map((x) => Number(x.textContent)));
  assert.deepEqual(counts, [stats.decisions, stats.refused, stats.observedOnly]);
  assert.deepEqual(problems, []);
  await page.close();
}

test('denials per reason, per configuration and over time, from both log formats', async () => {
  const logs = [[runtimeLog(), 'runtime'], [await serviceLog(), 'service']];
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    for (const [log, name] of logs) await check(b, server, log, name);
  } finally {
    await b.close();
    await server.close();
  }
  const bad = path.join(h.OUT, 'bad-log.jsonl');
  fs.writeFileSync(bad, fs.readFileSync(logs[0][0], 'utf8').split('\n')[0] + '\n{"not": "a record"}\n');
  const r = h.toolgateStatus(['report', 'policies/demo', '--decision-log', bad, '-o', path.join(h.OUT, 'never.html')]);
  assert.equal(r.code, 2);
  assert.match(r.err, /bad-log\.jsonl:line 2: not a decision record/);
});
