'use strict';
// The filters, the readouts, the keyboard, the network and the
// Content-Security-Policy of a report.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

const USER = { role: 'user', consumer: null, mode: null };

async function visibleTools(page) {
  return page.$$eval('.row.t .name', (ns) => ns.map((n) => n.textContent));
}

test('the filters: a name, a group, a decision, only refused, and the group rows', async () => {
  const tableFile = h.table('policies/demo');
  const file = h.report('filters-demo', [tableFile]);
  const tools = JSON.parse(h.toolgate(['show', 'tools', '--table', tableFile, '--format', 'json']));
  const configs = JSON.parse(h.toolgate(['show', 'configs', '--table', tableFile, '--format', 'json'])).map((c) => c.configuration);
  const cli = {};
  for (const c of configs) cli[c] = h.cliCells(tableFile, c, USER);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems } = await h.open(b, server.url(file), { width: 1400, height: 3000 });
    const sorted = (xs) => xs.slice().sort();
    const groupsInOrder = [...new Set(tools.map((t) => t.group))];
    const rowOrder = groupsInOrder.flatMap((g) => tools.filter((t) => t.group === g).map((t) => t.tool));
    assert.deepEqual(await visibleTools(page), rowOrder);

    await page.fill('#f-name', 'page');
    assert.deepEqual(sorted(await visibleTools(page)), sorted(tools.filter((t) => t.tool.includes('page')).map((t) => t.tool)));
    await page.fill('#f-name', '');

    const g = 'code';
    await page.selectOption('#f-group', String(groupsInOrder.indexOf(g)));
    assert.deepEqual(await visibleTools(page), tools.filter((t) => t.group === g).map((t) => t.tool));
    await page.selectOption('#f-group', '-1');

    await page.check('#f-refused');
    const refusedSomewhere = tools.map((t) => t.tool).filter((t) => configs.some((c) => cli[c][t] !== 'offered' && cli[c][t] !== 'observed'));
    assert.ok(refusedSomewhere.length > 0 && refusedSomewhere.length < tools.length);
    assert.deepEqual(sorted(await visibleTools(page)), sorted(refusedSomewhere));
    await page.uncheck('#f-refused');

    await page.selectOption('#f-reason', 'configurationGroup');
    const byGroup = tools.map((t) => t.tool).filter((t) => configs.some((c) => cli[c][t].split('/')[0] === 'configurationGroup'));
    assert.ok(byGroup.length > 0);
    assert.deepEqual(sorted(await visibleTools(page)), sorted(byGroup));
    await page.selectOption('#f-reason', '');

    // Collapsed, a group row counts the offered tools per configuration.
    await page.click('#collapse-all');
    assert.deepEqual(await visibleTools(page), []);
    const agg = await page.$$eval('.row.g .c', (cs) => cs.map((c) => [c.dataset.group, c.dataset.config, Number(c.dataset.offered)]));
    assert.equal(agg.length, groupsInOrder.length * configs.length);
    for (const [group, cfg, n] of agg) {
      const want = tools.filter((t) => t.group === group && cli[cfg][t.tool].split('/')[0].match(/^(offered|observed)$/)).length;
      assert.equal(n, want, `${group} in ${cfg}`);
    }
    assert.deepEqual(problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

test('the readouts: exclusions with the stale names apart, excluded-by, the unavailable list', async () => {
  const tableFile = h.table('policies/exclusions');
  const file = h.report('readouts-exclusions', [tableFile]);
  const configs = JSON.parse(h.toolgate(['show', 'exclusions', '--table', tableFile, '--format', 'json']));
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems } = await h.open(b, server.url(file));
    await page.click('#tab-readouts');
    const items = (id) => page.$$eval('#' + id + ' li', (ls) => ls.map((l) => l.textContent));
    for (let i = 0; i < configs.length; i++) {
      const c = configs[i];
      await page.selectOption('#r-config', String(i));
      assert.deepEqual(await items('r-excluded'), c.excluded, c.configuration);
      assert.deepEqual(await items('r-stale'), c.noLongerRegistered, c.configuration);
      for (const [ctxIndex, args] of [['0', []], ['1', ['--enforcement', 'observe']]]) {
        await page.selectOption('#r-context', ctxIndex);
        const un = JSON.parse(h.toolgate(['unavailable', '--table', tableFile, '-c', c.configuration, '--format', 'json'].concat(args)));
        assert.deepEqual(await items('r-unavailable'), un.map((u) => u.tool + ' ' + u.reason), c.configuration + ' ' + args);
      }
    }
    const tools = JSON.parse(h.toolgate(['show', 'tools', '--table', tableFile, '--format', 'json']));
    const excluded = tools.filter((t) => t.excludedBy.length);
    const rows = await page.$$eval('#r-tools tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepEqual(rows, excluded.map((t) => [t.tool, t.group, t.excludedBy.join(', ')]));
    assert.deepEqual(problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

test('the keyboard reaches every control, and the matrix moves by arrow keys', async () => {
  const tableFile = h.table('policies/demo');
  const file = h.report('keyboard-demo', [tableFile]);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems } = await h.open(b, server.url(file));
    const controls = await page.$$eval('button, select, input, [tabindex="0"]', (es) => es.map((e) => e.id).filter((x) => x));
    const reached = new Set();
    for (let i = 0; i < controls.length + 5; i++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate(() => document.activeElement && document.activeElement.id));
    }
    for (const id of controls) assert.ok(reached.has(id), `Tab reaches #${id}`);
    for (const id of ['tab-matrix', 'tab-readouts', 'f-context', 'f-name', 'f-group', 'f-reason', 'f-refused', 'expand-all', 'collapse-all', 'matrix']) assert.ok(controls.includes(id), id);
    await page.focus('#matrix');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    const cur = await page.$eval('.c.cur', (c) => [c.dataset.tool, c.dataset.config, c.dataset.code]);
    const detail = await page.$eval('#detail', (d) => d.textContent);
    assert.ok(detail.includes(cur[0]) && detail.includes(cur[1]), detail);
    const cli = h.cliCells(tableFile, cur[1], USER);
    assert.equal(cur[2], cli[cur[0]]);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Space');
    assert.ok((await visibleTools(page)).length < Object.keys(cli).length, 'Space closes the group');
    assert.deepEqual(problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

test('the page asks nothing of the network and runs no script but its own', async () => {
  const file = h.report('csp-demo', ['policies/demo']);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems, requests } = await h.open(b, server.url(file));
    await page.click('#tab-readouts');
    await page.click('#tab-matrix');
    assert.deepEqual(requests, [server.url(file)]);
    const csp = await page.$eval('meta[http-equiv="Content-Security-Policy"]', (m) => m.content);
    assert.match(csp, /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'; style-src 'sha256-[A-Za-z0-9+/]+=*'; img-src data:; connect-src 'none'/);
    const ran = await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = 1';
      document.body.appendChild(s);
      const b = document.createElement('button');
      b.setAttribute('onclick', 'window.__handler = 1');
      document.body.appendChild(b);
      b.click();
      return [window.__injected === 1, window.__handler === 1];
    });
    assert.deepEqual(ran, [false, false]);
    // The injected script's refusal is the CSP at work: reported, nothing else.
    assert.ok(problems.every((p) => /Content Security Policy|Refused to/.test(p)), problems.join('\n'));
    assert.ok(problems.length >= 2, 'the CSP refused the injected script and the handler: ' + problems.join('\n'));
  } finally {
    await b.close();
    await server.close();
  }
});
