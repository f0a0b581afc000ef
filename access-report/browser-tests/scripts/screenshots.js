'use strict';
// Rewrites docs/images/report.png and docs/images/console.png.
const path = require('node:path');
const fs = require('node:fs');
const h = require('../test/helpers');

async function main() {
  h.requirements();
  const images = path.join(h.ROOT, 'docs', 'images');
  fs.mkdirSync(images, { recursive: true });
  const file = h.report('screenshot', ['policies/demo']);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    let { page } = await h.open(b, server.url(file), { width: 1280, height: 800 });
    await page.click('.c[data-tool="get_env_raw"][data-config="developer-chat"]');
    await page.screenshot({ path: path.join(images, 'report.png') });
    await page.close();
    const s = await h.serve(['--project', 'policies/demo', '--console', '--no-watch']);
    try {
      ({ page } = await h.open(b, s.url + '/console', { width: 1280, height: 800 }, s.url + '/console/v1/'));
      await page.waitForSelector('.c[data-tool]', { timeout: 15000 });
      await page.click('#tab-simulate');
      await page.selectOption('#s-config', 'demo-chat');
      await page.fill('#s-tools', 'read_source');
      await page.click('#s-go');
      await page.waitForSelector('#s-summary', { timeout: 15000 });
      await page.screenshot({ path: path.join(images, 'console.png') });
    } finally {
      await s.stop();
    }
  } finally {
    await b.close();
    await server.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
