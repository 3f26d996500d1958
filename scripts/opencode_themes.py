#!/usr/bin/env python3
"""Write OpenCode's built-in themes to themes/*.json, read from the pinned
opencode binary itself, so ocview ships exactly the colours that version
draws with.

OpenCode bundles each theme file as a JavaScript object literal
(`var X={$schema:"https://opencode.ai/theme.json",defs:{…},theme:{…}}`) and
names them in one map (`{aura:X,…,["one-dark"]:Y,…}`). This reads those
literals with a small tokenizer (no evaluation) and writes them back as the
JSON they came from.

Usage: scripts/opencode_themes.py [BINARY] [OUT_DIR]
  BINARY   default: target/opencode-1.18.33/node_modules/opencode-linux-x64/bin/opencode
           (installed by the test suite's first end-to-end run)
  OUT_DIR  default: themes
Prints the names written; exits non-zero if the binary's layout is not
recognised.
"""

import json
import os
import re
import sys

SCHEMA = "https://opencode.ai/theme.json"
DEFAULT_BINARY = "target/opencode-1.18.33/node_modules/opencode-linux-x64/bin/opencode"


class Literal:
    """A tokenizer and parser for the JSON-like subset the bundler emits:
    objects with identifier, quoted or `["computed"]` keys, string and number
    values. Anything else is refused."""

    def __init__(self, text, pos):
        self.text = text
        self.pos = pos

    def fail(self, what):
        near = self.text[self.pos : self.pos + 40]
        raise ValueError(f"{what} at offset {self.pos}: {near!r}")

    def peek(self):
        return self.text[self.pos]

    def expect(self, ch):
        if self.peek() != ch:
            self.fail(f"expected {ch!r}")
        self.pos += 1

    def string(self):
        quote = self.peek()
        if quote not in "\"'":
            self.fail("expected a string")
        self.pos += 1
        out = []
        while True:
            ch = self.text[self.pos]
            self.pos += 1
            if ch == quote:
                return "".join(out)
            if ch == "\\":
                esc = self.text[self.pos]
                self.pos += 1
                if esc == "u":
                    out.append(chr(int(self.text[self.pos : self.pos + 4], 16)))
                    self.pos += 4
                else:
                    out.append({"n": "\n", "t": "\t"}.get(esc, esc))
            else:
                out.append(ch)

    def key(self):
        ch = self.peek()
        if ch in "\"'":
            return self.string()
        if ch == "[":
            self.pos += 1
            name = self.string()
            self.expect("]")
            return name
        m = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*").match(self.text, self.pos)
        if not m:
            self.fail("expected a key")
        self.pos = m.end()
        return m.group(0)

    def value(self):
        ch = self.peek()
        if ch == "{":
            return self.obj()
        if ch in "\"'":
            return self.string()
        m = re.compile(r"-?\d+(\.\d+)?").match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return float(m.group(0)) if m.group(1) else int(m.group(0))
        m = re.compile(r"!0|!1|true|false").match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return m.group(0) in ("!0", "true")
        self.fail("unexpected value")

    def obj(self):
        self.expect("{")
        out = {}
        while self.peek() != "}":
            k = self.key()
            self.expect(":")
            out[k] = self.value()
            if self.peek() == ",":
                self.pos += 1
        self.pos += 1
        return out


def name_map(text):
    """The map from theme names to the variables holding them."""
    m = re.search(r"=\{(aura:[A-Za-z_$][\w$]*,[^}]*)\}", text)
    if not m:
        raise SystemExit("no theme name map found (a different opencode layout?)")
    names = {}
    for entry in m.group(1).split(","):
        k, _, v = entry.partition(":")
        names[k.strip('[]"')] = v
    return names


def theme_literal(text, var):
    marker = f"var {var}={{$schema:"
    at = text.find(marker)
    if at < 0:
        raise SystemExit(f"theme variable {var} not found")
    return Literal(text, at + len(f"var {var}=")).obj()


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINARY
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "themes"
    with open(binary, "rb") as f:
        text = f.read().decode("latin-1")
    names = name_map(text)
    os.makedirs(out_dir, exist_ok=True)
    for name, var in sorted(names.items()):
        theme = theme_literal(text, var)
        if theme.get("$schema") != SCHEMA or "theme" not in theme:
            raise SystemExit(f"{name}: not a theme document")
        # Bytes above ASCII were read as latin-1; theme files hold none, and
        # a name or value that did would be refused here rather than garbled.
        doc = json.dumps(theme, indent=2, ensure_ascii=True)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            f.write(doc + "\n")
        print(name)


if __name__ == "__main__":
    main()
