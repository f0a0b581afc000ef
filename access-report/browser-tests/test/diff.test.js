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

// Names that are Object.prototype's own: a page that looks them up in a
// plain `{}` finds the prototype's members instead and drops their rows
// (issue 45: the counts said 5 widened, the matrix drew 1).
const PROTO_NAMES = ['__proto__', 'constructor', 'hasOwnProperty', 'toString'];

function protoProject(name, withSpecial) {
  const dir = path.join(h.OUT, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'toolgate.toml'), 'registry = "registry.toml"\npolicies = ["policy.tg"]\n');
  let reg = '[[tool]]\nname = "plain_tool"\ngroup = "base"\n';
  for (const t of PROTO_NAMES) reg += `\n[[tool]]\nname = "${t}"\ngroup = "special"\n`;
  fs.writeFileSync(path.join(dir, 'registry.toml'), reg);
  const groups = withSpecial ? '[base, special]' : '[base]';
  let policy = '';
  for (const c of PROTO_NAMES) policy += `configuration "${c}" { groups ${groups} }\n`;
  // A narrowing beside the widenings.
  policy += withSpecial ? 'configuration plain {\n  groups [base]\n  exclude [plain_tool]\n}\n' : 'configuration plain { groups [base] }\n';
  fs.writeFileSync(path.join(dir, 'policy.tg'), policy);
  return dir;
}

test('the diff view draws every change of tools and configurations named like Object.prototype members', async () => {
  const oldDir = protoProject('proto-old', false);
  const newDir = protoProject('proto-new', true);
  const want = JSON.parse(h.toolgateStatus(['diff', oldDir, newDir, '--format', 'json']).out);
  assert.equal(want.summary.widened, PROTO_NAMES.length * PROTO_NAMES.length);
  assert.equal(want.summary.narrowed, 1);
  // A cell shows its strongest change: widened, then narrowed, then a changed reason.
  const rank = new Map([['widened', 0], ['narrowed', 1], ['reasonChanged', 2]]);
  const expect = new Map();
  for (const c of want.changes) {
    const k = c.tool + '\u0000' + c.configuration;
    if (!expect.has(k) || rank.get(c.kind) < rank.get(expect.get(k))) expect.set(k, c.kind);
  }
  assert.equal(expect.size, PROTO_NAMES.length * PROTO_NAMES.length + 1);
  const file = h.report('diff-proto', [newDir, '--diff', oldDir]);
  const server = await h.staticServer();
  const b = await h.browser();
  try {
    const { page, problems } = await h.open(b, server.url(file));
    // The matrix: every tool a row, every configuration a column.
    const rows = await page.$$eval('.row.t .name', (ns) => ns.map((n) => n.textContent));
    for (const t of PROTO_NAMES) assert.ok(rows.includes(t), `matrix row ${t}: ${rows.join('|')}`);
    await page.click('#tab-changes');
    const counts = await page.$$eval('#diff-counts [data-count]', (ds) => ds.map((d) => [d.dataset.count, Number(d.querySelector('b').textContent)]));
    assert.deepEqual(new Map(counts), new Map([['widened', want.summary.widened], ['narrowed', want.summary.narrowed], ['reasonChanged', want.summary.reasonChanged]]));
    const cells = await page.$$eval('#diff-matrix button', (bs) => bs.map((x) => [x.dataset.tool + '\u0000' + x.dataset.config, x.dataset.kind]));
    assert.equal(cells.length, expect.size, 'one cell per changed (tool, configuration)');
    assert.deepEqual(new Map(cells), expect);
    const rowHeads = await page.$$eval('#diff-matrix tbody th', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(rowHeads.slice().sort(), PROTO_NAMES.concat(['plain_tool']).sort());
    const colHeads = await page.$$eval('#diff-matrix thead th[scope="col"]', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(colHeads.slice().sort(), PROTO_NAMES.concat(['plain']).sort());
    // Each kind alone, and a cell's detail.
    await page.selectOption('#d-kind', 'widened');
    const widened = await page.$$eval('#diff-matrix button', (bs) => bs.map((x) => x.dataset.tool + '\u0000' + x.dataset.config));
    assert.equal(widened.length, want.summary.widened);
    for (const t of PROTO_NAMES) for (const c of PROTO_NAMES) assert.ok(widened.includes(t + '\u0000' + c), `${t} in ${c}`);
    await page.selectOption('#d-kind', 'narrowed');
    const narrowed = await page.$$eval('#diff-matrix button', (bs) => bs.map((x) => x.dataset.tool + '\u0000' + x.dataset.config));
    assert.deepEqual(narrowed, ['plain_tool\u0000plain']);
    await page.selectOption('#d-kind', '');
    await page.click('#diff-matrix button[data-tool="__proto__"][data-config="constructor"]');
    const detail = await page.$eval('#diff-detail', (d) => d.textContent);
    assert.ok(detail.includes('__proto__') && detail.includes('constructor') && detail.includes('widened'), detail);
    assert.deepEqual(problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});
