// Loaded with `node --import` into the conformance suite on a Node without
// `fs.globSync` (added in Node 22; Debian's is 20). The suite imports it by
// name from "fs", which fails to link on Node 20 even though `server --url`
// never calls it (only its tier summary does). On such a Node the suite's
// "fs" resolves to fs-glob.mjs: node:fs with a `globSync` for the one
// pattern shape the suite uses (`**/NAME`). On Node 22 nothing changes.
import fs from "node:fs";
import { register } from "node:module";

if (typeof fs.globSync !== "function") {
  register("./node20-hooks.mjs", import.meta.url);
}
