'use strict';
// Shared by the browser tests: the toolgate binary, Chromium, pages that
// record every dialog, console error, page error and request.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const assert = require('node:assert/strict');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const OUT = path.join(__dirname, '..', 'out');
const TARGET = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target');
const TOOLGATE = process.env.TOOLGATE || path.join(TARGET, 'debug', 'toolgate');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const EXAMPLES = ['approvals', 'demo', 'exclusions', 'mcp-profiles', 'real-servers', 'trust-zones'];

// Missing pieces fail the run: a test that cannot run is not a pass.
function requirements() {
  assert.ok(fs.existsSync(TOOLGATE), `the toolgate binary ${TOOLGATE} is missing: build it (cargo build -p toolgate) or set TOOLGATE`);
  assert.ok(fs.existsSync(CHROMIUM), `Chromium ${CHROMIUM} is missing: apt-get install chromium, or set CHROMIUM`);
  fs.mkdirSync(OUT, { recursive: true });
}

function toolgate(args, opts) {
  return execFileSync(TOOLGATE, args, Object.assign({ cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] }, opts || {}));
}

// toolgate, keeping the exit code (1 is "refused" for the queries).
function toolgateStatus(args) {
  try { return { code: 0, out: toolgate(args) }; } catch (e) {
    if (typeof e.status === 'number') return { code: e.status, out: String(e.stdout), err: String(e.stderr) };
    throw e;
  }
}

function report(name, args) {
  const file = path.join(OUT, name + '.html');
  toolgate(['report'].concat(args, ['-o', file]));
  return file;
}

function table(project) {
  const file = path.join(OUT, path.basename(project) + '.tgt');
  toolgate(['compile', project, '-o', file]);
  return file;
}

async function browser() {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

// A page that records what must not happen: dialogs, console errors, page
// errors (a CSP violation is a console error), requests outside `allowed`.
async function open(b, url, viewport, allowed) {
  const page = await b.newPage({ viewport: viewport || { width: 1400, height: 900 } });
  const problems = [];
  const requests = [];
  page.on('dialog', (d) => { problems.push('dialog: ' + d.message()); d.dismiss().catch(() => {}); });
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push('console ' + m.type() + ': ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('request', (r) => requests.push(r.url()));
  const origin = new URL(url).origin;
  await page.route('**/*', (route) => {
    const u = route.request().url();
    const ok = u === url || (allowed && u.startsWith(allowed));
    if (!ok) problems.push('request outside the page: ' + u);
    return ok ? route.continue() : route.abort();
  });
  await page.goto(url);
  return { page, problems, requests, origin };
}

function fileUrl(file) { return 'file://' + file; }

// The files of OUT over http://127.0.0.1:PORT/, so that every request the
// page makes passes page.route (file:// requests do not).
async function staticServer() {
  const http = require('node:http');
  const server = http.createServer((req, res) => {
    const name = path.basename(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = path.join(OUT, name);
    if (!name.endsWith('.html') || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(fs.readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = 'http://127.0.0.1:' + server.address().port + '/';
  return { url: (file) => base + path.basename(file), close: () => new Promise((r) => server.close(r)) };
}

// The CLI's answer for one context: every registered tool's
// {allowed, reason, observedOnly, hidden}, from `simulate --format json`
// (what a person is shown) and `offered --format json` (the host's list,
// with `nameVisible`, for the refused names simulate leaves out).
function contextArgs(ctx) {
  const a = [];
  if (ctx.role === 'admin') a.push('--admin');
  if (ctx.role === 'none') a.push('--no-user');
  if (ctx.consumer !== null) a.push('--consumer', ctx.consumer);
  if (ctx.mode !== null) a.push('--enforcement', ctx.mode);
  return a;
}
function cliCells(tableFile, config, ctx) {
  const base = ['--table', tableFile, '-c', config].concat(contextArgs(ctx), ['--format', 'json']);
  const shown = JSON.parse(toolgate(['simulate'].concat(base)));
  const set = JSON.parse(toolgate(['offered'].concat(base)));
  const cells = {};
  for (const d of shown) cells[d.tool] = d.allowed ? (d.needsApproval ? 'approval' : d.observedOnly ? 'observed' : 'offered') : d.reason;
  for (const x of set.excluded) {
    if (!x.nameVisible) {
      assert.equal(cells[x.tool], undefined, `${x.tool}: hidden yet shown by simulate`);
      cells[x.tool] = x.reason + '/hidden';
    }
  }
  return cells;
}

// Every rendered tool cell: {"tool\0config": code or code/hidden}.
async function pageCells(page) {
  return page.$$eval('.c[data-tool]', (els) => {
    const out = {};
    for (const e of els) out[e.dataset.tool + '\u0000' + e.dataset.config] = e.dataset.code + (e.dataset.hidden === '1' ? '/hidden' : '');
    return out;
  });
}

async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out after ' + ms + ' ms waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// `toolgate serve` on 127.0.0.1 with a free port, stopped by the caller.
async function serve(args) {
  const child = spawn(TOOLGATE, ['serve', '--addr', '127.0.0.1:0'].concat(args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = await waitFor(() => {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
    if (child.exitCode !== null) throw new Error('toolgate serve exited: ' + err);
    return m && m[1];
  }, 20000, 'toolgate serve to listen');
  return { child, url, stderr: () => err, stop: () => new Promise((r) => { if (child.exitCode !== null) return r(); child.once('exit', r); child.kill('SIGTERM'); }) };
}

module.exports = { staticServer, ROOT, OUT, TOOLGATE, EXAMPLES, requirements, toolgate, toolgateStatus, report, table, browser, open, fileUrl, cliCells, pageCells, contextArgs, waitFor, serve };
