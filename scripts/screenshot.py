#!/usr/bin/env python3
"""Make the README's picture of the screen (assets/screen.svg) from a real
run of the built binary's demo.

    python3 scripts/screenshot.py [--binary target/debug/ocview] [--out assets/screen.svg]

The binary runs `demo --start end` (paused at the end: nothing moves) in a
tmux terminal of a fixed size, with a config of its own (theme, dark
variant, 24-bit colour) and empty home folders, so neither your settings
nor the clock change the result. Keys can be pressed before the capture
(`--keys`). `tmux capture-pane -p -e` gives the screen as text with SGR
colours; this script turns that into an SVG: a rectangle per run of
background colour, a text element per run of one style, every run placed
on the cell grid. The same binary gives the same file.

Needs tmux and Python 3 only (no packages).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The picture's cell grid, in SVG user units (14 px text).
CELL_W = 8.4
CELL_H = 18
FONT_SIZE = 14
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace"
# Used where a cell keeps the terminal's own colours (ocview paints most
# cells itself with the theme's colours).
DEFAULT_FG = (0xEE, 0xEE, 0xEE)
DEFAULT_BG = (0x0A, 0x0A, 0x0A)

CONFIG = """\
theme = "opencode"
theme_mode = "dark"
colors = "truecolor"
mouse = false
"""

# xterm's 16 colours, then the 6x6x6 cube and the grey ramp of 256.
BASE16 = [
    (0x00, 0x00, 0x00), (0xCD, 0x00, 0x00), (0x00, 0xCD, 0x00), (0xCD, 0xCD, 0x00),
    (0x00, 0x00, 0xEE), (0xCD, 0x00, 0xCD), (0x00, 0xCD, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x7F, 0x7F, 0x7F), (0xFF, 0x00, 0x00), (0x00, 0xFF, 0x00), (0xFF, 0xFF, 0x00),
    (0x5C, 0x5C, 0xFF), (0xFF, 0x00, 0xFF), (0x00, 0xFF, 0xFF), (0xFF, 0xFF, 0xFF),
]


def palette(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    grey = 8 + 10 * (n - 232)
    return (grey, grey, grey)


class Style:
    __slots__ = ("fg", "bg", "bold", "dim", "italic", "underline", "reverse", "strike")

    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = self.dim = self.italic = False
        self.underline = self.reverse = self.strike = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.italic,
                self.underline, self.reverse, self.strike)


def apply_sgr(style, params):
    """Apply one SGR sequence's parameters (as text, `;` or `:` separated)."""
    codes = [int(p) if p.isdigit() else 0 for p in params.replace(":", ";").split(";")] or [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            style.reset()
        elif c == 1:
            style.bold = True
        elif c == 2:
            style.dim = True
        elif c == 3:
            style.italic = True
        elif c in (4, 21):
            style.underline = True
        elif c == 7:
            style.reverse = True
        elif c == 9:
            style.strike = True
        elif c == 22:
            style.bold = style.dim = False
        elif c == 23:
            style.italic = False
        elif c == 24:
            style.underline = False
        elif c == 27:
            style.reverse = False
        elif c == 29:
            style.strike = False
        elif 30 <= c <= 37:
            style.fg = palette(c - 30)
        elif 90 <= c <= 97:
            style.fg = palette(c - 90 + 8)
        elif 40 <= c <= 47:
            style.bg = palette(c - 40)
        elif 100 <= c <= 107:
            style.bg = palette(c - 100 + 8)
        elif c == 39:
            style.fg = None
        elif c == 49:
            style.bg = None
        elif c in (38, 48, 58):
            colour = None
            if i + 2 < len(codes) and codes[i + 1] == 5:
                colour = palette(codes[i + 2] % 256)
                i += 2
            elif i + 4 < len(codes) and codes[i + 1] == 2:
                colour = tuple(max(0, min(255, v)) for v in codes[i + 2:i + 5])
                i += 4
            if c == 38:
                style.fg = colour
            elif c == 48:
                style.bg = colour
        i += 1


def cell_width(ch):
    if unicodedata.combining(ch) or ch in "\u200b\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def parse(text, width, height):
    """The captured screen as rows of cells: (character, style key)."""
    blank = Style().key()
    rows = []
    for line in text.split("\n")[:height]:
        style = Style()
        cells = []
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\x1b":
                nxt = line[i + 1:i + 2]
                if nxt == "[":
                    j = i + 2
                    while j < len(line) and not ("@" <= line[j] <= "~"):
                        j += 1
                    if j < len(line) and line[j] == "m":
                        apply_sgr(style, line[i + 2:j])
                    i = j + 1
                    continue
                if nxt == "]":
                    # OSC (a hyperlink): up to BEL or ST.
                    j = i + 2
                    while j < len(line) and line[j] != "\x07" and line[j:j + 2] != "\x1b\\":
                        j += 1
                    i = j + (1 if line[j:j + 1] == "\x07" else 2)
                    continue
                i += 2
                continue
            if ord(ch) < 0x20 or ord(ch) == 0x7F:
                i += 1
                continue
            w = cell_width(ch)
            if w == 0:
                if cells:
                    cells[-1] = (cells[-1][0] + ch, cells[-1][1])
            else:
                cells.append((ch, style.key()))
                if w == 2:
                    cells.append(("", style.key()))
            i += 1
        cells = cells[:width]
        # Past the end of the captured text a row keeps the last style's
        # background (tmux trims trailing blanks).
        fill = cells[-1][1] if cells else blank
        fill = (None, fill[1]) + (False,) * 6 if fill[1] is not None else blank
        cells += [(" ", fill)] * (width - len(cells))
        rows.append(cells)
    while len(rows) < height:
        rows.append([(" ", blank)] * width)
    return rows


def hexc(rgb):
    return "#%02x%02x%02x" % rgb


def escape(text):
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def colours(key):
    fg, bg, bold, dim, italic, underline, reverse, strike = key
    fg = fg or DEFAULT_FG
    bg = bg or DEFAULT_BG
    if reverse:
        fg, bg = bg, fg
    return fg, bg


def num(v):
    text = ("%.2f" % v).rstrip("0").rstrip(".")
    return text or "0"


def to_svg(rows, width, height):
    w, h = width * CELL_W, height * CELL_H
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s">'
        % (num(w), num(h), num(w), num(h)),
        "<!-- ocview's demo, captured by scripts/screenshot.py; do not edit by hand -->",
        '<rect width="100%%" height="100%%" fill="%s"/>' % hexc(DEFAULT_BG),
    ]
    # Backgrounds: one rectangle per run of one colour on a row.
    for y, cells in enumerate(rows):
        x = 0
        while x < width:
            bg = colours(cells[x][1])[1]
            end = x + 1
            while end < width and colours(cells[end][1])[1] == bg:
                end += 1
            if bg != DEFAULT_BG:
                out.append('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>'
                           % (num(x * CELL_W), num(y * CELL_H), num((end - x) * CELL_W),
                              num(CELL_H), hexc(bg)))
            x = end
    out.append('<g font-family="%s" font-size="%d" xml:space="preserve">' % (escape(FONT), FONT_SIZE))
    # Text: one element per run of one style, stretched to its cells so the
    # grid holds whatever monospace font the reader has.
    baseline = CELL_H * 0.75
    for y, cells in enumerate(rows):
        x = 0
        while x < width:
            key = cells[x][1]
            end = x + 1
            while end < width and cells[end][1] == key:
                end += 1
            text = "".join(c for c, _ in cells[x:end])
            stripped = text.rstrip(" ")
            lead = len(stripped) - len(stripped.lstrip(" "))
            if stripped.strip(" "):
                span_cells = sum(1 for c, _ in cells[x:end]) - (len(text) - len(stripped)) - lead
                fg = colours(key)[0]
                attrs = ['x="%s"' % num((x + lead) * CELL_W), 'y="%s"' % num(y * CELL_H + baseline),
                         'fill="%s"' % hexc(fg)]
                if key[2]:
                    attrs.append('font-weight="bold"')
                if key[3]:
                    attrs.append('opacity="0.6"')
                if key[4]:
                    attrs.append('font-style="italic"')
                decorations = [d for d, on in (("underline", key[5]), ("line-through", key[7])) if on]
                if decorations:
                    attrs.append('text-decoration="%s"' % " ".join(decorations))
                attrs.append('textLength="%s"' % num(span_cells * CELL_W))
                attrs.append('lengthAdjust="spacingAndGlyphs"')
                out.append("<text %s>%s</text>" % (" ".join(attrs), escape(stripped.lstrip(" "))))
            x = end
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def tmux(server, *args, check=True):
    return subprocess.run(["tmux", "-L", server, "-f", "/dev/null", *args],
                          check=check, capture_output=True, text=True).stdout


def capture(binary, width, height, keys, settle):
    """Run the demo in tmux and capture its screen once it stops changing."""
    home = tempfile.mkdtemp(prefix="ocview-shot-")
    server = "ocview-shot-%d" % os.getpid()
    try:
        config = Path(home, "config.toml")
        config.write_text(CONFIG)
        env = {
            "HOME": home, "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home,
            "XDG_DATA_HOME": home, "TZ": "UTC", "LANG": "C.UTF-8",
            "COLORTERM": "truecolor", "TERM": "tmux-256color",
        }
        command = ["env", "-i", "PATH=" + os.environ.get("PATH", "/usr/bin:/bin")]
        command += ["%s=%s" % kv for kv in sorted(env.items())]
        command += [str(binary), "--config", str(config), "demo", "--start", "end"]
        tmux(server, "new-session", "-d", "-s", "shot", "-x", str(width), "-y", str(height),
             " ".join("'%s'" % c.replace("'", "'\\''") for c in command))
        deadline = time.monotonic() + 60

        def steady():
            """The screen once it has stopped changing: the same capture
            `settle` seconds apart, three times in a row (records still
            being applied, highlighting landing a moment after the first
            frame, a key's effect)."""
            same, last = 0, None
            while same < 2:
                if time.monotonic() > deadline:
                    sys.exit("screenshot: the screen kept changing for 60 s")
                time.sleep(settle)
                now = tmux(server, "capture-pane", "-p", "-e", "-t", "shot", check=False)
                same = same + 1 if now == last else 0
                last = now
            return last

        screen = ""
        while "Sessions" not in screen:
            if time.monotonic() > deadline:
                sys.exit("screenshot: the demo did not show its session list in 60 s:\n" + screen)
            time.sleep(0.1)
            screen = tmux(server, "capture-pane", "-p", "-t", "shot", check=False)
        steady()
        for key in keys:
            tmux(server, "send-keys", "-t", "shot", key)
            time.sleep(0.2)
        return steady()
    finally:
        tmux(server, "kill-server", check=False)
        shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.environ.get("OCVIEW_BIN"),
                        help="the ocview binary (default: target/release/ocview, else target/debug/ocview)")
    parser.add_argument("--out", default=str(ROOT / "assets" / "screen.svg"))
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--height", type=int, default=36)
    parser.add_argument("--keys", default="g j j j j j",
                        help="tmux key names to press before the capture, space separated (default: down to the session that edits and writes files)")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds between the captures that must agree")
    parser.add_argument("--from-capture", metavar="FILE",
                        help="convert a saved `capture-pane -p -e` file instead of running the demo")
    args = parser.parse_args()

    if args.from_capture:
        styled = Path(args.from_capture).read_text(encoding="utf-8", errors="replace")
    else:
        if shutil.which("tmux") is None:
            sys.exit("screenshot: tmux is needed (apt-get install tmux)")
        binary = args.binary
        if binary is None:
            for candidate in ("target/release/ocview", "target/debug/ocview"):
                if (ROOT / candidate).is_file():
                    binary = ROOT / candidate
                    break
        if binary is None or not Path(binary).is_file():
            sys.exit("screenshot: no ocview binary; build it first (cargo build) or give --binary")
        styled = capture(Path(binary).resolve(), args.width, args.height,
                         args.keys.split(), args.settle)
    rows = parse(styled.rstrip("\n"), args.width, args.height)
    svg = to_svg(rows, args.width, args.height)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(svg, encoding="utf-8")
    print("screenshot: wrote %s (%dx%d)" % (args.out, args.width, args.height))


if __name__ == "__main__":
    main()
