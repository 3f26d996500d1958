#!/usr/bin/env python3
"""No circle between folders: the modules of each folder of the crate must
depend on each other one way only, at the top (`src/`) and inside every
folder below it (`src/archive/`, `src/app/panes/`, ...).

    python3 scripts/check_layers.py [SRC_DIR]      (default: src)

In a folder, a node is each module it holds (a sub-folder `x/` or a file
`x.rs`); the folder's own `mod.rs` (and `main.rs`, `lib.rs` at the top) is
its root: it wires the nodes together and is not checked. An edge is any path
from a file inside one node to another node of the same folder: `crate::…`
and `super::…`/`self::…` paths alike, in `use` lines, grouped use trees and
inline paths, followed through the `pub use` re-exports of the module they
name (`super::Engine` re-exported from `engine` is an edge to `engine`).
Comments and string literals do not count, nor do `ocview::x` paths of the
binary's modules (they cannot close a circle).

A few folders still hold circles between their files (their modules are
one knot of types that refer to each other): `FILES_MAY_CIRCLE` lists them,
and in those only the sub-folders are checked. The list only shrinks.

Exit 0 and the top-level modules in dependency order (each after what it
uses), or exit 1 and, per edge inside each circle, the lines that make it.
"""
import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# Things whose insides are not code. Identifiers are matched too, so that a
# raw-string prefix is only recognised at the start of a word.
NOT_CODE = re.compile(
    r"//[^\n]*|/\*|b?r(#*)\"|b?\"(?:\\.|[^\"\\])*\""
    r"|b?'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.)|[^'\\\n])'"
    r"|" + IDENT,
    re.S,
)


def blank(text):
    """The text with comments and literals turned into spaces (lines kept)."""
    out, pos, kept = [], 0, 0  # search from `pos`; text up to `kept` is out
    while (m := NOT_CODE.search(text, pos)) is not None:
        start, end, tok = m.start(), m.end(), m.group(0)
        if tok == "/*":  # block comments nest
            depth = 1
            while depth and end < len(text):
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
        elif m.group(1) is not None:  # raw string: up to `"` and as many `#`
            close = text.find('"' + m.group(1), end)
            end = len(text) if close < 0 else close + 1 + len(m.group(1))
        elif not tok.startswith(("//", '"', "'", 'b"', "b'")):
            pos = end  # an identifier: code
            continue
        out.append(text[kept:start])
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        pos = kept = end
    out.append(text[kept:])
    return "".join(out)


# Folders whose files may refer to each other in a circle. An archive
# engine's folder is one unit by design (its connection, its log, its search
# and its upkeep share the engine's type); the others are debts: remove a
# folder from here once its files are in order.
FILES_MAY_CIRCLE = {
    "archive/postgres",
    "archive/sqlite",
    "model/entity",
    "render",
    "source/opencode_db",
}

PATH_START = re.compile(r"\bmod\s+(" + IDENT + r")\s*\{|[{}]|\b(?:crate|self|super)\b(?:\s*::\s*(?:super|self)\b)*\s*::")
REEXPORT = re.compile(r"\bpub(?:\s*\([^)]*\))?\s+use\s+")
SEGMENT = re.compile(r"\s*(" + IDENT + r"|\{|\*)")


def use_tree(code, pos):
    """The paths of the use tree or inline path at `pos`: a list of
    (segments, offset of the first, alias) read up to the end of the tree."""
    out = []

    def tree(pos, prefix):
        segs, start = list(prefix), None
        while True:
            m = SEGMENT.match(code, pos)
            if not m:
                out.append((segs, start, None))
                return pos
            tok = m.group(1)
            if tok == "{":
                pos = m.end()
                while True:
                    pos = tree(pos, segs)
                    m2 = re.compile(r"\s*([,}])").match(code, pos)
                    if not m2:
                        return pos
                    pos = m2.end()
                    if m2.group(1) == "}":
                        return pos
                    if re.compile(r"\s*\}").match(code, pos):
                        return re.compile(r"\s*\}").match(code, pos).end()
            if tok == "*":
                out.append((segs, start if start is not None else m.start(1), None))
                return m.end()
            if start is None:
                start = m.start(1)
            if tok != "self":
                segs = segs + [tok]
            pos = m.end()
            sep = re.compile(r"\s*::").match(code, pos)
            if not sep:
                alias = re.compile(r"\s+as\s+(" + IDENT + r")").match(code, pos)
                out.append((segs, start, alias.group(1) if alias else None))
                return alias.end() if alias else pos
            pos = sep.end()

    tree(pos, [])
    return out


def module_of(path, src):
    """The module path of a file: src/a/b.rs is [a, b]; src/a/mod.rs is [a]."""
    rel = list(path.relative_to(src).with_suffix("").parts)
    if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("main", "lib")):
        rel = rel[:-1]
    return rel


def scan(path, src):
    """(absolute path, line, alias, is a re-export) for each path in the
    file that starts with `crate`, `self` or `super`."""
    here = module_of(path, src)
    code = blank(path.read_text(encoding="utf-8", errors="replace"))
    stack = []  # per open brace: the inline module it opens, or None
    exports = {m.end() for m in REEXPORT.finditer(code)}
    for m in PATH_START.finditer(code):
        tok = m.group(0)
        if tok == "}":
            stack = stack[:-1]
            continue
        if tok.endswith("{"):
            stack.append(m.group(1))
            continue
        words = re.findall(IDENT, tok)
        base = here + [n for n in stack if n]
        if words[0] == "crate":
            base, words = [], words[1:]
        for w in words:
            if w == "super":
                base = base[:-1]
        reexport = any(e <= m.start() <= e + 2 for e in exports)
        for segs, at, alias in use_tree(code, m.end()):
            line = code.count("\n", 0, at if at is not None else m.start()) + 1
            yield base + segs, line, alias, reexport, here + [n for n in stack if n]
    # `pub use twig::T;` names a child module without `self::`.
    for m in REEXPORT.finditer(code):
        if re.match(r"\s*(?:crate|self|super|::)\b", code[m.end():m.end() + 8]):
            continue
        depth = [None]  # inline modules open at this point
        for b in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{|[{}]", code[: m.start()]):
            if b.group(0) == "}":
                depth = depth[:-1] or [None]
            else:
                depth.append(b.group(1))
        module = here + [n for n in depth if n]
        for segs, at, alias in use_tree(code, m.end()):
            line = code.count("\n", 0, at if at is not None else m.start()) + 1
            yield module + segs, line, alias, True, module


def resolve(path, aliases):
    """Follows re-exports: `archive::Engine` → `archive::engine::Engine`."""
    for _ in range(8):
        for i in range(len(path), 0, -1):
            target = aliases.get(tuple(path[:i]))
            if target is not None and list(target) != path[:i]:
                path = list(target) + path[i:]
                break
        else:
            return path
    return path


def folders(src):
    """Each folder's module path and its nodes (children modules)."""
    out = {}
    for d in [src] + sorted(p for p in src.rglob("*") if p.is_dir()):
        nodes = {p.name for p in d.iterdir() if p.is_dir()}
        if "/".join(d.relative_to(src).parts) not in FILES_MAY_CIRCLE:
            nodes |= {p.stem for p in d.glob("*.rs")}
        nodes -= {"mod"} if d != src else {"main", "lib"}
        if nodes:
            out[tuple(d.relative_to(src).parts)] = nodes
    return out


def graphs(src):
    """Per folder: from -> to -> [(file, line)]."""
    refs, aliases = [], {}
    for path in sorted(src.rglob("*.rs")):
        here = module_of(path, src)
        if here == [] and path.name == "main.rs":
            continue  # the binary's root: its `crate` is not the library's
        for target, line, alias, reexport, module in scan(path, src):
            refs.append((path, here, target, line))
            if reexport and target:
                aliases[tuple(module + [alias or target[-1]])] = tuple(target)
    dirs = folders(src)
    out = {d: {n: {} for n in nodes} for d, nodes in dirs.items()}
    for path, here, target, line in refs:
        target = resolve(target, aliases)
        for d, nodes in dirs.items():
            k = len(d)
            if len(here) <= k or tuple(here[:k]) != d or len(target) <= k or tuple(target[:k]) != d:
                continue
            a, b = here[k], target[k]
            if a != b and a in nodes and b in nodes:
                found = out[d][a].setdefault(b, [])
                if (path, line) not in found:
                    found.append((path, line))
    return out


def components(edges):
    """Tarjan: strongly connected components, each after those it reaches."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_circle(edges, comp):
    """A shortest circle through the first module of a component."""
    start, inside = comp[0], set(comp)
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for w in sorted(edges[path[-1]]):
            if w == start:
                return path + [start]
            if w in inside and w not in seen:
                seen.add(w)
                paths.append(path + [w])
    return comp


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    if not src.is_dir():
        print(f"check_layers: {src} is not a folder", file=sys.stderr)
        return 2
    found, lines, order = [], {}, []
    for folder, edges in sorted(graphs(src).items()):
        comps = components(edges)
        if folder == ():
            order = [m for c in comps for m in c]
        for comp in (c for c in comps if len(c) > 1):
            found.append((folder, one_circle(edges, comp)))
            for a in comp:
                for b in sorted(set(edges[a]) & set(comp)):
                    print(f"{'/'.join(folder + (a,))} -> {'/'.join(folder + (b,))}")
                    for path, n in edges[a][b]:
                        if path not in lines:
                            lines[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
                        print(f"  {path}:{n}: {lines[path][n - 1].strip()}")
    if not found:
        print("layers: no circle; order:", " ".join(order))
        return 0
    for folder, circle in found:
        where = "between folders" if folder == () else f"inside src/{'/'.join(folder)}"
        print(f"layers: circle {where}:", " -> ".join(circle))
    return 1


if __name__ == "__main__":
    sys.exit(main())
