'use strict';
// Names that are markup render as text and run nothing, in the report and
// in its readouts.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'hostile');
// A name with U+2028 (LINE SEPARATOR) is no longer among them: the compiler
// refuses it (TG1012), as it does control characters.
const NAMES = ['<img src=x onerror=alert(1)>', '</script><script>alert(3)</script>', '"\'><svg onload=alert(4)>', 'amp&amp;lt;'];

test('hostile tool, group and configuration names render as text and run nothing', async () => {
  const tableFile = h.table(FIXTURE);
  const file = h.report('hostile', [tableFile]);
  const tools = JSON.parse(h.toolgate(['show', 'tools', '--table', tableFile, '--format', 'json'])).map((t) => t.tool);
  assert.deepEqual(tools.slice().sort(), NAMES.slice().sort(), 'the compiler kept the names as written');
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems, requests } = await h.open(b, server.url(file));
    const shown = await page.$$eval('.row.t .name', (ns) => ns.map((n) => n.textContent));
    assert.deepEqual(shown.slice().sort(), NAMES.slice().sort());
    const groups = await page.$$eval('.row.g .name', (ns) => ns.map((n) => n.textContent));
    assert.ok(groups.some((g) => g.includes('<b onmouseover=alert(2)>group</b>')), groups.join('|'));
    const cols = await page.$$eval('.mhead .col span', (ns) => ns.map((n) => n.textContent));
    assert.ok(cols.includes('<iframe src=javascript:alert(5)>'));
    // No element came out of the data: only the page's own.
    const made = await page.evaluate(() => document.querySelectorAll('img, iframe, svg, b, script:not([type]), object, embed').length);
    assert.equal(made, 1, 'the one script is the page\'s own');
    for (const tool of NAMES) {
      await page.hover(`.c[data-tool="${tool.replace(/["\\]/g, '\\$&')}"]`);
    }
    await page.click('#tab-readouts');
    await page.selectOption('#r-config', '0');
    const stale = await page.$$eval('#r-stale li', (ls) => ls.map((l) => l.textContent));
    assert.deepEqual(stale, ['<script>alert(6)</script>']);
    const excluded = await page.$$eval('#r-excluded li', (ls) => ls.map((l) => l.textContent));
    assert.deepEqual(excluded, ['<img src=x onerror=alert(1)>']);
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, iframe, svg, b, object, embed').length), 0);
    // The title names the table as the repository does, never a path of the machine.
    assert.equal(await page.title(), 'toolgate access report: ' + path.relative(h.ROOT, tableFile));
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, [server.url(file)]);
  } finally {
    await b.close();
    await server.close();
  }
});
