#!/usr/bin/env python3
"""No circle between folders: the top-level modules of the crate must depend
on each other one way only.

    python3 scripts/check_layers.py [SRC_DIR]      (default: src)

A node is a top-level module (a folder `src/x/` or a file `src/x.rs`); main.rs
and lib.rs are the roots and are not checked. An edge is any path from a file
of one module into another: `crate::x` (in `use` lines, grouped use trees and
inline paths alike) and `super::…` chains that climb to the crate root.
Comments and string literals do not count. Paths to items of the roots
themselves (`crate::server_url` in main.rs) and `ocview::x` paths of the
binary's modules cannot close a circle, so they are left out.

Exit 0 and the modules in dependency order (each after what it uses), or
exit 1 and, per edge inside each circle, the lines that make it.
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
# Inline `mod x {` (it deepens what `super` means), braces, and path starts.
SCAN = re.compile(r"\bmod\s+" + IDENT + r"\s*\{|[{}]|\bcrate\s*::|\b(?:super\s*::\s*)+")


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


HEAD = re.compile(r"\s*(" + IDENT + r"|\{)")


def heads(code, pos):
    """(name, offset) of the first names of the path or use tree at `pos`."""
    m = HEAD.match(code, pos)
    if not m:
        return []
    if m.group(1) != "{":
        return [(m.group(1), m.start(1))]
    names, depth, item_start = [], 1, m.end()
    for i in range(m.end(), len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
        if depth == 1 and code[i] == "," or depth == 0:
            names += heads(code, item_start)[:1]
            item_start = i + 1
        if depth == 0:
            break
    return [(n, at) for n, at in names if n != "self"]


def references(path, src):
    """(module, line number) for each path in this file to another module."""
    rel = path.relative_to(src).with_suffix("").parts
    own_depth = len(rel) - (rel[-1] == "mod")
    code = blank(path.read_text(encoding="utf-8", errors="replace"))
    stack = []  # per open brace: does it open an inline module?
    for m in SCAN.finditer(code):
        tok = m.group(0)
        if tok == "}":
            stack = stack[:-1]
        elif tok.endswith("{"):
            stack.append(tok.startswith("mod"))
        elif tok.startswith("crate") or tok.count("super") == own_depth + sum(stack):
            for name, at in heads(code, m.end()):
                yield name, code.count("\n", 0, at) + 1


def graph(src):
    modules = {p.stem for p in src.glob("*.rs")} | {p.name for p in src.iterdir() if p.is_dir()}
    modules -= {"main", "lib"}
    edges = {m: {} for m in modules}  # from -> to -> [(file, line)]
    for path in sorted(src.rglob("*.rs")):
        top = path.relative_to(src).parts[0].removesuffix(".rs")
        if top not in modules:
            continue
        for name, line in references(path, src):
            if name in modules and name != top:
                edges[top].setdefault(name, []).append((path, line))
    return edges


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
    edges = graph(src)
    comps = components(edges)
    circles = [c for c in comps if len(c) > 1]
    if not circles:
        print("layers: no circle; order:", " ".join(m for c in comps for m in c))
        return 0
    lines = {}  # file -> its lines, read once
    for comp in circles:
        for a in comp:
            for b in sorted(set(edges[a]) & set(comp)):
                print(f"{a} -> {b}")
                for path, n in edges[a][b]:
                    if path not in lines:
                        lines[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
                    print(f"  {path}:{n}: {lines[path][n - 1].strip()}")
    for comp in circles:
        print("layers: circle between folders:", " -> ".join(one_circle(edges, comp)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
