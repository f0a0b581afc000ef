// node:fs with the `globSync` Node 22 added, for the conformance suite on
// Node 20 (node20.mjs). Only `**/NAME` patterns (every file named NAME
// under `cwd`, paths relative to it), the one shape the suite uses; any
// other pattern is an error, never a wrong answer.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const m = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!m) {
    throw new Error(`fs-glob.mjs: only \`**/NAME\` patterns are supported, not \`${pattern}\``);
  }
  const cwd = options.cwd ?? process.cwd();
  return fs
    .readdirSync(cwd, { recursive: true })
    .map(String)
    .filter((p) => path.basename(p) === m[1]);
}
