#!/usr/bin/env python3
"""Report import circles between the modules of each crate and JS package.

    scripts/import-circles.py [--why] [ROOT]

A circle is a strongly connected component of more than one module in one
crate's (or package's) import graph. Each is printed as one line,
`CRATE: a -> b -> a`: a closed walk along real edges through every member
(one may appear twice when the component is not a simple cycle); --why adds
the path behind each edge. Exit status 1 when any circle is found, else 0.
ROOT is the repository (default: the parent of this script's directory).

Rust: every directory with a Cargo.toml and a src/ (target/, node_modules/,
fuzz/ skipped). A module is a file src/a/b.rs or src/a/b/mod.rs; src/lib.rs
(else src/main.rs) is the root. Edges go from the file a path is written in
to the module it names:
  * paths in `use` declarations (braces expanded) and inline paths such as
    `crate::foo::bar()` that start with `crate::`, `super::` or `self::`;
    a path starting with a child's name (`use child::X`) is not counted;
  * a path names the longest prefix of it that is a module file:
    `crate::codes::ERR` names codes.rs, `super::Thing` in src/a/b.rs names
    src/a.rs (where Thing is defined), `self::f` the file itself (no edge);
  * `mod child;` declarations are NOT edges: the usual circle is a parent
    that uses its child's items while the child uses `super::X`;
  * comments, string literals and `pub(in path)` are ignored, and so is
    test code: files whose module name is `tests` or ends in `_tests` (as
    `#[path = "x_tests.rs"] mod tests;`), inline `#[cfg(test)] mod x {..}`
    bodies, src/bin/. Inline modules count for `self::`/`super::` only.
JavaScript: the top-level *.js/*.mjs/*.cjs files of each directory under
bindings/ or editors/ with a package.json; an edge per `require('./x')`,
`import('./x')`, `import/export ... from './x.js'` naming another of them
(x, x.js, x.mjs, x.cjs), lazy requires inside functions included.
"""
import os
import re
import sys
from collections import deque
from pathlib import Path

SKIP = {"target", "node_modules", "fuzz", ".git"}
RUST_NOISE = re.compile(  # comments, raw and plain strings, char literals (not lifetimes)
    r"""//[^\n]*|/\*.*?\*/|(?<!\w)b?r(#*)".*?"\1|(?<!\w)b?"(?:\\.|[^"\\])*"|(?<!\w)b?'(?:\\.[^']*|[^\\'\n])'""",
    re.S,
)
RUST_TOKEN = re.compile(
    r"(?P<testmod>#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{)"
    r"|(?P<mod>\bmod\s+(?P<name>\w+)\s*\{)|(?P<open>\{)|(?P<close>\})"
    r"|\buse\s+(?P<tree>[^;]*);"
    r"|(?P<path>(?<![\w:$])(?:crate|super|self)(?:\s*::\s*\w+)+)"
)
JS_NOISE = re.compile(r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|//[^\n]*|/\*.*?\*/""", re.S)
JS_IMPORT = re.compile(r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom|\bimport)\s*(['"])(\.[^'"]*)\1""")


def rust_modules(src):
    """Module path (a tuple) -> file, for the files of src/ that are not tests."""
    mods = {}
    for f in sorted(src.rglob("*.rs")):  # lib.rs sorts before main.rs
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] == "mod":
            parts.pop()
        elif parts in (["lib"], ["main"]):
            parts = []
        if not (parts[:1] == ["bin"] or any(p == "tests" or p.endswith("_tests") for p in parts)):
            mods.setdefault(tuple(parts), f)
    return mods


def expand(tree):
    """A use tree as paths: `a::{b, c::{self, d}}` -> [a, b], [a, c], [a, c, d]."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree)).lstrip(":")
    if "{" not in tree:
        return [tree.split("::")] if tree else []
    i = tree.index("{")
    prefix = tree[:i].rstrip(":").split("::") if i else []
    inner, depth, parts, start = tree[i + 1 : tree.rindex("}")], 0, [], 0
    for j, ch in enumerate(inner + ","):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(inner[start:j])
            start = j + 1
    return [prefix + ([] if p == ["self"] else p) for part in parts for p in expand(part)]


def resolve(segs, here, mods):
    """The module a `crate::`/`super::`/`self::` path names, seen from `here`."""
    if segs[0] == "crate":
        full = segs[1:]
    elif segs[0] in ("self", "super"):
        full = list(here)
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super" and not full:
                return None
            full = full[:-1] if segs[0] == "super" else full
            segs = segs[1:]
        full += segs
    else:
        return None  # `child::x`, an external crate, a type, a variant
    return next((tuple(full[:n]) for n in range(len(full), -1, -1) if tuple(full[:n]) in mods), None)


def rust_graph(src):
    mods = rust_modules(src)
    name = {m: f.relative_to(src).as_posix() for m, f in mods.items()}
    graph = {name[m]: {} for m in mods}
    for mod, f in mods.items():
        if mod == () and f.name == "main.rs" and (src / "lib.rs").exists():
            continue  # a binary beside a library uses it by the crate's name
        text = RUST_NOISE.sub(" ", f.read_text(encoding="utf-8", errors="replace"))
        text = re.sub(r"pub\s*\(\s*in\s+[^)]*\)", "pub", text)
        inline, depth, pos = [], 0, 0  # inline modules open here: (name, depth)
        while m := RUST_TOKEN.search(text, pos):
            pos = m.end()
            if m["testmod"]:  # skip to its closing brace
                d = 1
                while d and pos < len(text):
                    d += {"{": 1, "}": -1}.get(text[pos], 0)
                    pos += 1
            elif m["mod"] or m["open"]:
                depth += 1
                inline += [(m["name"], depth)] if m["mod"] else []
            elif m["close"]:
                inline = inline[:-1] if inline and inline[-1][1] == depth else inline
                depth -= 1
            else:
                here = mod + tuple(n for n, _ in inline)
                if m["tree"] is not None:
                    paths = expand(m["tree"])
                else:
                    paths = [re.sub(r"\s+", "", m["path"]).split("::")]
                for segs in filter(lambda p: p and p[0], paths):
                    target = resolve(segs, here, mods)
                    if target is not None and target != mod:
                        graph[name[mod]].setdefault(name[target], "::".join(segs))
    return graph


def js_graph(pkg):
    files = sorted(p.name for p in pkg.iterdir() if p.is_file() and p.suffix in (".js", ".mjs", ".cjs"))
    graph = {f: {} for f in files}
    for f in files:
        text = (pkg / f).read_text(encoding="utf-8", errors="replace")
        text = JS_NOISE.sub(lambda m: m.group(1) or " ", text)  # strings kept
        for m in JS_IMPORT.finditer(text):
            p = os.path.normpath(m.group(2))
            hit = next((c for c in (p, p + ".js", p + ".mjs", p + ".cjs") if c in graph), None)
            if hit and hit != f:
                graph[f].setdefault(hit, m.group(2))
    return graph


def components(graph):
    """Tarjan's strongly connected components, each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = [stack.pop()]
            while comp[-1] != v:
                comp.append(stack.pop())
            on.difference_update(comp)
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def walk(graph, comp):
    """From comp[0], the shortest way on to the nearest member not yet
    passed, until all are passed, then back to comp[0]."""
    path = [comp[0]]
    while len(path) == 1 or path[-1] != comp[0]:
        done = set(comp) <= set(path)
        prev, todo, goal = {path[-1]: None}, deque([path[-1]]), None
        while goal is None:
            v = todo.popleft()
            for w in sorted(w for w in graph[v] if w in comp and w not in prev):
                prev[w] = v
                todo.append(w)
                if goal is None and (w == comp[0] if done else w not in path):
                    goal = w
        step = [goal]
        while prev[step[-1]] != path[-1]:
            step.append(prev[step[-1]])
        path += reversed(step)
    return path


def main(argv):
    why = "--why" in argv
    args = [a for a in argv if a != "--why"]
    root = Path(args[0] if args else Path(__file__).resolve().parent.parent).resolve()
    units = []
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [x for x in subdirs if x not in SKIP]
        if "Cargo.toml" in files and os.path.isdir(os.path.join(d, "src")):
            units.append((Path(d), rust_graph(Path(d) / "src")))
    units.sort(key=lambda u: u[0])
    for pkg in sorted([*root.glob("bindings/*/package.json"), *root.glob("editors/*/package.json")]):
        units.append((pkg.parent, js_graph(pkg.parent)))
    found = 0
    for unit, graph in units:
        for comp in (c for c in components(graph) if len(c) > 1):
            found += 1
            path = walk(graph, comp)
            line = path[0]
            for a, b in zip(path, path[1:]):
                line += (f" -[{graph[a][b]}]-> " if why else " -> ") + b
            print(f"{unit.relative_to(root).as_posix() or '.'}: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
