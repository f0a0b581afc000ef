'use strict';
// A generated project of the shape of bench's workload (toolgate-bench
// `generate`): `node scripts/generate.js TOOLS CONFIGS DIR`. About TOOLS/40
// groups (a tenth of them remote servers), a provider per five
// configurations, 80 % of configurations limited to some groups, a few
// exclusions each (and one stale name in every tenth), a consumer with an
// access profile per ten configurations.
const fs = require('node:fs');
const path = require('node:path');

const [tools, configs, dir] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
if (!(tools > 1) || !(configs > 0) || !dir) { console.error('usage: node scripts/generate.js TOOLS CONFIGS DIR'); process.exit(2); }
let seed = 42n;
function next() { seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); return Number(seed >> 33n); }
const below = (n) => next() % n;
const chance = (p) => below(100) < p;
const CLASSES = ['publicContent', 'editorContent', 'internalConfiguration', 'sourceCode', 'systemDiagnostics', 'secretAdjacent'];
const ZONES = ['local', 'privateHosted', 'externalEu', 'externalGlobal'];
const groups = Math.max(2, Math.floor(tools / 40));
const remote = Math.max(1, Math.floor(groups / 10));
let reg = '[[tool]]\nname = "load_skill"\ngroup = "skills"\n';
const names = ['load_skill'];
const members = new Map([['skills', [0]]]);
for (let i = 1; i < tools; i++) {
  const g = below(groups);
  let name, group;
  if (g < remote) {
    name = `mcp_srv${g}_tool${i}`; group = `mcp_srv${g}`;
    reg += `[[tool]]\nname = "${name}"\ngroup = "${group}"\nserver = "srv${g}"\nenabled = ${chance(80)}\nadmin_only = ${chance(30)}\nclass = "${CLASSES[below(6)]}"\n`;
  } else {
    name = `tool${i}`; group = `group${g}`;
    reg += `[[tool]]\nname = "${name}"\ngroup = "${group}"\n`;
    if (chance(5)) reg += 'admin_only = true\n';
    if (chance(3)) reg += 'enabled = false\n';
    if (chance(20)) reg += `class = "${CLASSES[below(6)]}"\n`;
  }
  names.push(name);
  if (!members.has(group)) members.set(group, []);
  members.get(group).push(i);
}
const all = [...members.keys()];
let p = 'enforcement observe\n';
for (const g of all) if (g.startsWith('group')) p += `group ${g} { class ${CLASSES[below(6)]}${chance(3) ? ' disabled' : ''} }\n`;
const providers = Math.max(3, Math.floor(configs / 5));
for (let i = 0; i < providers; i++) p += `provider p${i} { zone ${ZONES[below(4)]} }\n`;
for (let i = 0; i < configs; i++) {
  p += `configuration config${i} { provider p${below(providers)}`;
  let cand = names.map((_, j) => j);
  if (chance(80)) {
    const n = 1 + below(Math.min(all.length, 12));
    const gs = [...new Set(Array.from({ length: n }, () => all[below(all.length)]))].sort();
    p += ` groups [${gs.join(', ')}]`;
    cand = gs.flatMap((g) => members.get(g));
  }
  const ex = new Set();
  for (let k = below(6); k > 0 && cand.length; k--) ex.add(names[cand[below(cand.length)]]);
  if (i % 10 === 0) ex.add(`retired_tool${i}`);
  if (ex.size) p += ` exclude [${[...ex].sort().join(', ')}]`;
  p += ' }\n';
}
for (let i = 0; i < Math.max(2, Math.floor(configs / 10)); i++) {
  p += `profile pr${i} { allow [${names[below(tools)]}, group ${all[below(all.length)]}, mcp_srv0_*] }\nconsumer k${i} { profile pr${i} }\n`;
}
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'toolgate.toml'), 'registry = "registry.toml"\npolicies = ["policy.tg"]\n');
fs.writeFileSync(path.join(dir, 'registry.toml'), reg);
fs.writeFileSync(path.join(dir, 'policy.tg'), p);
