// The grammar on every example policy: copies policies/*/*.tg to
// test/examples/<project>-<file>.tg for vscode-tmgrammar-snap, which compares
// each with its committed .snap. A copy without a snapshot fails (the tool
// would write one and pass); set UPDATE_SNAPSHOTS=1 to let it be written.
// With --check, after the snapshots: no visible text of an example may be
// left without a scope of its own (only `source.toolgate`).
const fs = require("fs");
const path = require("path");

const here = path.join(__dirname, "examples");
const policies = path.join(__dirname, "..", "..", "..", "policies");

function check() {
  let bad = 0;
  for (const snap of fs.readdirSync(here).filter((f) => f.endsWith(".snap"))) {
    let source = "";
    for (const line of fs.readFileSync(path.join(here, snap), "utf8").split("\n")) {
      if (line.startsWith(">")) {
        source = line.slice(1);
      } else if (line.startsWith("#")) {
        const m = /^#(\s*)(\^+)\s+(.*)$/.exec(line);
        if (m && m[3].trim() === "source.toolgate") {
          const text = source.substr(m[1].length, m[2].length);
          if (text.trim() !== "") {
            console.error(`${snap}: \`${text}\` has no scope in: ${source}`);
            bad++;
          }
        }
      }
    }
  }
  if (bad) process.exit(1);
  console.log("every token of every example has a scope");
}

if (process.argv.includes("--check")) {
  check();
} else {
  fs.mkdirSync(here, { recursive: true });
  const wanted = new Set();
  for (const project of fs.readdirSync(policies).sort()) {
    const dir = path.join(policies, project);
    if (!fs.statSync(dir).isDirectory()) continue;
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".tg")).sort()) {
      const name = `${project}-${file}`;
      wanted.add(name);
      fs.copyFileSync(path.join(dir, file), path.join(here, name));
    }
  }
  let missing = 0;
  for (const name of wanted) {
    if (!fs.existsSync(path.join(here, name + ".snap")) && !process.env.UPDATE_SNAPSHOTS) {
      console.error(`no snapshot for ${name}: run UPDATE_SNAPSHOTS=1 npm run test:examples and review it`);
      missing++;
    }
  }
  for (const f of fs.readdirSync(here)) {
    if (f.endsWith(".snap") && !wanted.has(f.slice(0, -5))) {
      console.error(`${f}: no example policy of that name any more; delete it`);
      missing++;
    }
  }
  if (missing) process.exit(1);
  console.log(`${wanted.size} example policies`);
}
