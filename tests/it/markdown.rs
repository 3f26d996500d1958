//! Markdown rendering, and streaming it: rendering a growing text block by
//! block must give exactly what rendering it whole gives.

use crate::common;

use ocview::render::markdown::{self, MdCtx, Plain};
use ocview::render::render_cache::RenderCache;
use ocview::render::theme::{Role, Theme};

const DOC: &str = "# Plan

Here is **bold**, *italic*, ~~struck~~, `inline code` and a [link](https://example.com/x).
A second line of the same paragraph that is long enough to wrap at narrow widths.

## Steps

1. First step
2. Second step
   - nested bullet
   - [x] done task
   - [ ] open task
3. Third step

> A quote that spans
> two lines.

| File | Change | Risk |
|------|--------|------|
| `src/main.py` | rewrite `greet` | low |
| /home/dev/p/src/util.py | none | - |

---

```python
def greet(name):
    return f\"Hello, {name}!\"
```

```
plain block
```

Final words with 日本語 and emoji 👍.
";

fn ctx(theme: &Theme, width: usize) -> MdCtx<'_> {
    MdCtx {
        theme,
        width,
        base_dir: Some("/home/dev/p"),
        text_role: Role::Text,
    }
}

fn text(lines: &[ratatui::text::Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
fn every_construct_renders() {
    let theme = Theme::default();
    let out = text(&markdown::render(DOC, &ctx(&theme, 80), &mut Plain)).join("\n");
    insta::assert_snapshot!(out);
    for must in [
        "Plan",
        "◦ nested bullet",
        "☑ done task",
        "☐ open task",
        "3. Third step",
        "│ A quote",
        "link (https://example.com/x)",
        "─┼─",
        "╭ python",
        "│ def greet(name):",
        "src/util.py",
    ] {
        assert!(out.contains(must), "missing {must:?} in\n{out}");
    }
    assert!(
        !out.contains("/home/dev/p/"),
        "paths under the session directory are relative"
    );
    assert!(
        !out.contains("**") && !out.contains("```"),
        "markup is rendered, not shown"
    );
}

#[test]
fn no_line_is_wider_than_asked() {
    let theme = Theme::default();
    for width in [12, 20, 33, 57, 80, 131] {
        for l in markdown::render(DOC, &ctx(&theme, width), &mut Plain) {
            assert!(
                l.width() <= width,
                "{width}: {:?}",
                text(std::slice::from_ref(&l))
            );
        }
    }
}

fn streamed(doc: &str, width: u16, step: usize) -> Vec<String> {
    let theme = Theme::default();
    let mut cache = RenderCache::default();
    let mut last = Vec::new();
    let mut end = 0;
    let mut rev = 0;
    while end < doc.len() {
        end = (end + step).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        rev += 1;
        let prefix = &doc[..end];
        let lines = cache.markdown_stream("p", rev, width, prefix, |src| {
            let src = src.trim_end();
            (
                if src.is_empty() {
                    Vec::new()
                } else {
                    markdown::render(src, &ctx(&theme, width as usize), &mut Plain)
                },
                false,
            )
        });
        last = lines
            .iter_from(0)
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect();
        let whole = text(&markdown::render(
            prefix.trim_end(),
            &ctx(&theme, width as usize),
            &mut Plain,
        ));
        assert_eq!(last, whole, "after {end} bytes:\n{prefix}");
    }
    last
}

#[test]
fn streaming_block_by_block_equals_rendering_whole() {
    for step in [1, 7, 64] {
        streamed(DOC, 60, step);
    }
}

#[test]
fn streaming_fixture_texts_equals_rendering_whole() {
    let dir = common::fixtures_dir();
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path().join("messages.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let messages: serde_json::Value = serde_json::from_str(&text).unwrap();
        for m in messages.as_array().unwrap() {
            for p in m["parts"].as_array().unwrap() {
                if let Some(t) = p["text"].as_str().filter(|t| t.len() > 40) {
                    streamed(t, 70, 9);
                    n += 1;
                }
            }
        }
    }
    assert!(n > 5, "{n} texts");
}

#[test]
fn stable_prefix_never_splits_a_fence() {
    let src = "intro\n\n```\ncode\n\nmore code\n";
    assert_eq!(markdown::stable_prefix_len(src), "intro\n\n".len());
    let closed = "intro\n\n```\ncode\n```\n\nafter";
    assert_eq!(
        markdown::stable_prefix_len(closed),
        closed.len() - "after".len()
    );
}

/// The size of rendered lines: their text and a span's worth per span.
fn rendered_bytes(lines: &[ratatui::text::Line<'static>]) -> usize {
    lines
        .iter()
        .flat_map(|l| l.spans.iter())
        .map(|s| s.content.len() + std::mem::size_of::<ratatui::text::Span>())
        .sum()
}

/// Pathological markdown renders within a fixed multiple of its size:
/// nesting is capped (a marker shows where), and so are the lines one part
/// may produce (a marker says how many were cut).
#[test]
fn nesting_bombs_and_torture_texts_render_within_a_bound() {
    let theme = Theme::default();
    let bombs = [
        ("quotes", ">".repeat(24_000) + " x"),
        // Deep enough that the text wraps a few columns wide.
        ("deep text", ">".repeat(300) + " " + &"word ".repeat(4_700)),
        (
            "deep items",
            (0..120)
                .map(|i| format!("{}- {}\n", "  ".repeat(i), "w ".repeat(80)))
                .collect(),
        ),
        ("quoted lists", "> - ".repeat(6_000) + "x"),
        ("brackets", "[".repeat(24_000) + "x" + &"]".repeat(24_000)),
        ("emphasis", "*_".repeat(12_000) + "x"),
        ("many lines", "a\n\n".repeat(40_000)),
        ("long words", format!("{}\n", "w".repeat(100_000))),
    ];
    for (name, src) in bombs {
        let lines = markdown::render(&src, &ctx(&theme, 80), &mut Plain);
        let size = rendered_bytes(&lines);
        assert!(
            size <= 64 * src.len().max(1024),
            "{name}: {} bytes of input rendered to {size} bytes in {} lines",
            src.len(),
            lines.len()
        );
    }
}

#[test]
fn nesting_past_the_cap_shows_a_marker() {
    let theme = Theme::default();
    let src = ">".repeat(100) + " deep";
    let lines = markdown::render(&src, &ctx(&theme, 80), &mut Plain);
    let text = text(&lines).join("\n");
    assert!(text.contains("deep"), "{text}");
    assert!(text.contains('…'), "a marker shows nesting was cut: {text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn a_part_producing_too_many_lines_is_cut_with_a_marker() {
    let theme = Theme::default();
    let src = "line\n\n".repeat(50_000);
    let lines = markdown::render(&src, &ctx(&theme, 80), &mut Plain);
    assert!(lines.len() <= markdown::MAX_LINES + 1, "{}", lines.len());
    let last: String = lines
        .last()
        .unwrap()
        .spans
        .iter()
        .map(|s| s.content.as_ref())
        .collect();
    assert!(last.contains("cut"), "{last}");
}
