'use strict';
// The report at scale: `node scripts/scale.js PROJECT` writes its report and
// prints the time to write it, the file size, the time to first paint in
// headless Chromium and the time a filter and a scroll take.
// A 10,000 x 100 project: cargo run -p toolgate-bench --example dump 10000 100 DIR
const fs = require('node:fs');
const path = require('node:path');
const h = require('../test/helpers');

async function main() {
  const project = process.argv[2];
  if (!project) { console.error('usage: node scripts/scale.js PROJECT'); process.exit(2); }
  h.requirements();
  const t0 = Date.now();
  const file = h.report('scale', [path.resolve(project)]);
  const writeMs = Date.now() - t0;
  const bytes = fs.statSync(file).size;
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const runs = [];
    for (let i = 0; i < 3; i++) {
      const { page, problems } = await h.open(b, server.url(file));
      await page.waitForSelector('.row.g', { timeout: 60000 });
      const m = await page.evaluate(() => {
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        const mark = performance.getEntriesByName('toolgate-rendered')[0];
        const nav = performance.getEntriesByType('navigation')[0];
        return { firstContentfulPaintMs: fcp ? fcp.startTime : null, renderedMs: mark ? mark.startTime : null, domContentLoadedMs: nav ? nav.domContentLoadedEventEnd : null };
      });
      m.filterMs = await page.evaluate(() => new Promise((resolve) => {
        const input = document.getElementById('f-name');
        const t = performance.now();
        input.value = 'tool_12';
        input.dispatchEvent(new Event('input'));
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
      }));
      m.refusedOnlyMs = await page.evaluate(() => new Promise((resolve) => {
        const input = document.getElementById('f-name');
        input.value = '';
        input.dispatchEvent(new Event('input'));
        const box = document.getElementById('f-refused');
        const t = performance.now();
        box.checked = true;
        box.dispatchEvent(new Event('change'));
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
      }));
      m.expandAllMs = await page.evaluate(() => new Promise((resolve) => {
        const t = performance.now();
        document.getElementById('expand-all').click();
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
      }));
      m.scrollFrameMs = await page.evaluate(() => new Promise((resolve) => {
        const mx = document.getElementById('matrix');
        const t = performance.now();
        mx.scrollTop = mx.scrollHeight / 2;
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
      }));
      m.problems = problems;
      runs.push(m);
      await page.close();
    }
    console.log(JSON.stringify({ project, writeMs, bytes, runs }, null, 2));
  } finally {
    await b.close();
    await server.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
