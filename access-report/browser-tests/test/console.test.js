'use strict';
// `toolgate serve --console` on 127.0.0.1: the matrix of the served table,
// the simulation answered by the runtime, authentication, reloads.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

test('the console shows the served table and simulates with the runtime', async () => {
  const tableFile = path.join(h.OUT, 'console-demo.tgt');
  fs.copyFileSync(h.table('policies/demo'), tableFile);
  const s = await h.serve(['--table', tableFile, '--console']);
  const b = await h.browser();
  try {
    const { page, problems, requests } = await h.open(b, s.url + '/console', { width: 1400, height: 2000 }, s.url + '/console/v1/');
    await page.waitForSelector('.c[data-tool]', { timeout: 15000 });
    const USER = { role: 'user', consumer: null, mode: null };
    const cells = await h.pageCells(page);
    for (const cfg of ['demo-chat', 'developer-chat']) {
      const want = h.cliCells(tableFile, cfg, USER);
      for (const tool of Object.keys(want)) assert.equal(cells[tool + '\u0000' + cfg], want[tool], tool + ' in ' + cfg);
    }
    // A cell's detail hands the cell to the simulation.
    await page.click('.c[data-tool="get_env_raw"][data-config="developer-chat"]');
    await page.click('#detail-simulate');
    await page.waitForSelector('#s-summary', { timeout: 15000 });
    let explain = await page.$$eval('[data-explain] li', (ls) => ls.map((l) => [l.dataset.gate, l.dataset.outcome]));
    let want = JSON.parse(h.toolgate(['explain', '--table', tableFile, '-c', 'developer-chat', 'get_env_raw', '--format', 'json']));
    assert.deepEqual(explain, want[0].gates.map((g) => [g.gate, g.outcome]));

    // The form: admin, observe, two tools.
    await page.selectOption('#s-config', 'demo-chat');
    await page.selectOption('#s-role', 'admin');
    await page.selectOption('#s-enforcement', 'observe');
    await page.fill('#s-tools', 'read_source, mcp_deepwiki_ask_question');
    await page.click('#s-go');
    await page.waitForFunction(() => { const s = document.getElementById('s-summary'); return s && s.textContent.includes('observe'); }, null, { timeout: 15000 });
    const args = ['--table', tableFile, '-c', 'demo-chat', '--admin', '--enforcement', 'observe'];
    explain = await page.$$eval('[data-explain]', (ss) => ss.map((s) => [s.dataset.explain, [...s.querySelectorAll('li')].map((l) => l.dataset.gate + ' ' + l.dataset.outcome)]));
    want = JSON.parse(h.toolgate(['explain'].concat(args, ['read_source', 'mcp_deepwiki_ask_question', '--format', 'json'])));
    assert.deepEqual(explain, want.map((x) => [x.tool, x.gates.map((g) => g.gate + ' ' + g.outcome)]));
    const un = await page.$$eval('#s-unavailable li', (ls) => ls.map((l) => l.textContent));
    const wantUn = JSON.parse(h.toolgate(['unavailable'].concat(args, ['--format', 'json'])));
    assert.deepEqual(un, wantUn.map((u) => u.tool + ' ' + u.reason));
    const prompt = await page.$eval('#s-prompt', (p) => p.textContent);
    assert.equal(prompt, h.toolgate(['unavailable'].concat(args, ['--format', 'prompt'])));
    const decisions = await page.$$eval('#s-decisions tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    const wantD = JSON.parse(h.toolgate(['simulate'].concat(args, ['--format', 'json'])));
    assert.deepEqual(decisions, wantD.map((d) => [d.tool, d.allowed ? (d.observedOnly ? 'observed' : 'yes') : 'no', d.reason || '-']));

    // A stored run, and an input error answered as one.
    await page.fill('#s-run', '{"allowedToolNames": ["search_pages"], "excludedToolNames": []}');
    await page.fill('#s-tools', 'search_pages, list_pages');
    await page.click('#s-go');
    await page.waitForSelector('[data-explain="list_pages"]', { timeout: 15000 });
    const runFile = path.join(h.OUT, 'console-run.json');
    fs.writeFileSync(runFile, '{"allowedToolNames": ["search_pages"], "excludedToolNames": []}');
    want = JSON.parse(h.toolgate(['explain'].concat(args, ['--run', runFile, 'search_pages', 'list_pages', '--format', 'json'])));
    explain = await page.$$eval('[data-explain]', (ss) => ss.map((s) => [s.dataset.explain, [...s.querySelectorAll('li')].map((l) => l.dataset.gate + ' ' + l.dataset.outcome)]));
    assert.deepEqual(explain, want.map((x) => [x.tool, x.gates.map((g) => g.gate + ' ' + g.outcome)]));
    await page.fill('#s-run', '');
    await page.selectOption('#s-config', 'demo-chat');
    await page.evaluate(() => { /* an unknown configuration, as a caller could send it */ });
    const r = await page.evaluate(async () => (await fetch('/console/v1/simulate', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"configuration": "demo-chta"}' })).json());
    assert.deepEqual(r, { error: { status: 400, code: 'badRequest', message: '`configuration`: unknown configuration `demo-chta`; did you mean `demo-chat`?' } });

    // A reload: the served file changes, the console follows.
    const old = await page.$eval('#meta', (m) => m.textContent);
    const changed = path.join(h.OUT, 'console-changed');
    fs.rmSync(changed, { recursive: true, force: true });
    fs.cpSync(path.join(h.ROOT, 'policies', 'demo'), changed, { recursive: true });
    const p = path.join(changed, 'policy.tg');
    fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replace('groups [content, editing, skills]', 'groups [content, editing, skills, code]'));
    h.toolgate(['compile', changed, '-o', tableFile + '.new']);
    fs.renameSync(tableFile + '.new', tableFile);
    await page.waitForSelector('#reloaded', { timeout: 20000 });
    const now = await page.$eval('#meta', (m) => m.textContent);
    assert.notEqual(now, old);
    assert.ok(now.includes(JSON.parse(h.toolgate(['show', 'configs', '--table', tableFile, '--format', 'json'])).length + ' configurations'));
    for (const u of requests) assert.ok(u === s.url + '/console' || u.startsWith(s.url + '/console/v1/'), u);
    // The one error: the browser's note of the 400 the bad request above was answered.
    assert.deepEqual(problems, ['console error: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  } finally {
    await b.close();
    await s.stop();
  }
});

test('the console is under the service\'s authentication', async () => {
  const key = 'console-test-key-' + crypto.randomBytes(8).toString('hex');
  const userKey = 'console-user-key-' + crypto.randomBytes(8).toString('hex');
  const sha = (k) => crypto.createHash('sha256').update(k).digest('hex');
  const auth = path.join(h.OUT, 'console-auth.toml');
  fs.writeFileSync(auth, `[[key]]\nname = "admin"\nsha256 = "${sha(key)}"\nroles = ["admin", "user", "none"]\n\n[[key]]\nname = "user"\nsha256 = "${sha(userKey)}"\n`);
  const s = await h.serve(['--project', 'policies/demo', '--console', '--auth', auth, '--no-watch']);
  const b = await h.browser();
  try {
    assert.equal((await fetch(s.url + '/console/v1/report')).status, 401);
    assert.equal((await fetch(s.url + '/console/v1/report', { headers: { Authorization: 'Bearer ' + userKey } })).status, 403);
    const ok = await fetch(s.url + '/console/v1/report', { headers: { Authorization: 'Bearer ' + key } });
    assert.equal(ok.status, 200);
    const page0 = await fetch(s.url + '/console');
    assert.equal(page0.status, 200);
    assert.match(page0.headers.get('content-security-policy'), /^default-src 'none'; .*connect-src 'self'.*frame-ancestors 'none'$/);
    const { page, problems } = await h.open(b, s.url + '/console', null, s.url + '/console/v1/');
    await page.waitForSelector('#token', { timeout: 15000 });
    await page.fill('#token', 'wrong');
    // The wrong token's 401 draws the prompt again: the right one goes into
    // the new prompt, once the first is gone.
    const first = await page.$('#token');
    await page.click('#token-go');
    await page.waitForFunction((e) => !e.isConnected, first, { timeout: 15000 });
    await page.waitForSelector('#token', { timeout: 15000 });
    await page.fill('#token', key);
    await page.click('#token-go');
    await page.waitForSelector('.c[data-tool]', { timeout: 15000 });
    // The 401s the page was answered are the browser's console errors: the only ones.
    assert.ok(problems.every((p) => /401/.test(p)), problems.join('\n'));
  } finally {
    await b.close();
    await s.stop();
  }
});

test('the console refuses a non-loopback address without --auth', () => {
  const r = h.toolgateStatus(['serve', '--project', 'policies/demo', '--console', '--addr', '0.0.0.0:0', '--allow-unauthenticated']);
  assert.equal(r.code, 2);
  assert.match(r.err, /refusing to serve the console on 0\.0\.0\.0:0: not a loopback address/);
});
