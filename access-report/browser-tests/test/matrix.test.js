'use strict';
// Every cell of the matrix of every example project, in every context the
// page offers, equals the CLI's JSON for that context.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

for (const name of h.EXAMPLES) {
  test(`the matrix of policies/${name} is the CLI's, cell by cell, in every context`, async () => {
    const tableFile = h.table(path.join('policies', name));
    const file = h.report('matrix-' + name, [tableFile]);
    const b = await h.browser();
    try {
      const data = JSON.parse(h.toolgate(['show', 'tools', '--table', tableFile, '--format', 'json']));
      const rows = data.length + 40;
      const { page, problems } = await h.open(b, h.fileUrl(file), { width: 1400, height: rows * 22 + 400 });
      const contexts = await page.$$eval('#f-context option', (os) => os.map((o) => ({ value: o.value, label: o.textContent })));
      const configs = await page.$$eval('.mhead .col', (cs) => cs.map((c) => c.getAttribute('title')));
      const cfgNames = JSON.parse(h.toolgate(['show', 'configs', '--table', tableFile, '--format', 'json'])).map((c) => c.configuration);
      assert.deepEqual(configs, cfgNames);
      let compared = 0;
      for (const c of contexts) {
        await page.selectOption('#f-context', c.value);
        const cells = await h.pageCells(page);
        // The label says which context: role · consumer · mode.
        const [role, who, mode] = c.label.split(' · ');
        const ctx = {
          role,
          consumer: who === 'no consumer' ? null : who === 'consumer without a profile' ? '*' : who.replace(/^consumer /, ''),
          mode: mode.startsWith('as configured') ? null : mode,
        };
        for (const cfg of configs) {
          const want = h.cliCells(tableFile, cfg, ctx);
          for (const tool of Object.keys(want)) {
            assert.equal(cells[tool + '\u0000' + cfg], want[tool], `${name}: ${tool} in ${cfg}, ${c.label}`);
            compared++;
          }
          const shown = Object.keys(cells).filter((k) => k.endsWith('\u0000' + cfg)).length;
          assert.equal(shown, Object.keys(want).length, `${name}: ${cfg}, ${c.label}: every tool has a cell`);
        }
      }
      assert.ok(compared >= data.length * configs.length * 9, `compared ${compared} cells`);
      assert.deepEqual(problems, []);
    } finally {
      await b.close();
    }
  });
}
