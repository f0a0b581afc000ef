'use strict';
// The diff view of a real change: only what changed, widened and narrowed
// apart, the counts of `toolgate diff --format json` on top.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

h.requirements();

// docs/ci.md's semantic diff, on a change to policies/demo: demo-chat gains
// the code group (a widening) and developer-chat excludes search_pages (a
// narrowing).
function changedDemo() {
  const dir = path.join(h.OUT, 'demo-changed');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(h.ROOT, 'policies', 'demo'), dir, { recursive: true });
  const p = path.join(dir, 'policy.tg');
  let text = fs.readFileSync(p, 'utf8');
  const before = text;
  text = text.replace('groups [content, editing, skills]', 'groups [content, editing, skills, code]');
  text = text.replace('configuration developer-chat { provider openai-eu }', 'configuration developer-chat {\n  provider openai-eu\n  exclude [search_pages]\n}');
  assert.notEqual(text, before);
  fs.writeFileSync(p, text);
  return dir;
}

test('the diff view of a real change shows each change once, coloured by its kind', async () => {
  const dir = changedDemo();
  const want = JSON.parse(h.toolgateStatus(['diff', 'policies/demo', dir, '--format', 'json']).out);
  assert.ok(want.summary.widened > 0 && want.summary.narrowed > 0);
  const file = h.report('diff-demo', [dir, '--diff', 'policies/demo']);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems } = await h.open(b, server.url(file));
    await page.click('#tab-changes');
    const counts = await page.$$eval('#diff-counts [data-count]', (ds) => Object.fromEntries(ds.map((d) => [d.dataset.count, Number(d.querySelector('b').textContent)])));
    assert.deepEqual(counts, { widened: want.summary.widened, narrowed: want.summary.narrowed, reasonChanged: want.summary.reasonChanged });
    const cells = await page.$$eval('#diff-matrix button', (bs) => bs.map((b) => [b.dataset.tool, b.dataset.config, b.dataset.kind]));
    const expect = {};
    for (const c of want.changes) {
      const k = c.tool + '\u0000' + c.configuration;
      const rank = { widened: 0, narrowed: 1, reasonChanged: 2 };
      if (expect[k] === undefined || rank[c.kind] < rank[expect[k]]) expect[k] = c.kind;
    }
    assert.deepEqual(Object.fromEntries(cells.map((c) => [c[0] + '\u0000' + c[1], c[2]])), expect);
    assert.equal(cells.length, Object.keys(expect).length);
    const colour = await page.$eval('#diff-matrix button[data-kind="widened"]', (b) => getComputedStyle(b).backgroundColor);
    const colour2 = await page.$eval('#diff-matrix button[data-kind="narrowed"]', (b) => getComputedStyle(b).backgroundColor);
    assert.notEqual(colour, colour2);
    await page.selectOption('#d-kind', 'widened');
    const widened = await page.$$eval('#diff-matrix button', (bs) => bs.map((b) => b.dataset.kind));
    assert.ok(widened.length > 0 && widened.every((k) => k === 'widened'));
    await page.click('#diff-matrix button');
    const first = want.changes.find((c) => c.kind === 'widened');
    const detail = await page.$eval('#diff-detail', (d) => d.textContent);
    assert.ok(detail.includes(first.tool), detail);
    assert.deepEqual(problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

test('--diff takes a git revision as `diff --git` does', async () => {
  const want = JSON.parse(h.toolgateStatus(['diff', 'policies/demo', '--git', 'HEAD', '--format', 'json']).out);
  const file = h.report('diff-git-demo', ['policies/demo', '--diff', 'HEAD']);
  const html = fs.readFileSync(file, 'utf8');
  const data = JSON.parse(/<script type="application\/json" id="toolgate-data">(.*?)<\/script>/s.exec(html)[1]);
  assert.deepEqual(data.report.diff.diff.summary, want.summary);
  assert.equal(data.report.diff.oldName, 'HEAD');
  const bad = h.toolgateStatus(['report', 'policies/demo', '--diff', 'no-such-revision-or-file', '-o', path.join(h.OUT, 'never.html')]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--diff no-such-revision-or-file: no such file or directory, and not a git revision/);
});
