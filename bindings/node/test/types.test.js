'use strict';
// The declarations (index.d.ts, errors.d.ts, mcp.d.ts, native.d.ts) type-check
// a program written against the documented API (test/typecheck.ts).

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

test('the declarations type-check the documented API', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs', '--types', 'node', '--skipLibCheck', 'false', path.join(__dirname, 'typecheck.ts')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
