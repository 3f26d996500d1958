//! Diffs read at a glance: added and removed lines on whole-line bands to
//! the edge of the diff area, code coloured by its language, side by side
//! when wide; in an edit card and in the diff overlay, on a real captured
//! session (b_edit_write_diff), at 80 and 200 columns. Text snapshots do not
//! show colour, so the bands and colours are checked on the buffer's cells.

use crate::common;

use std::collections::HashSet;

use common::{app_with, buffer_text, fixture, press};
use ocview::app::App;
use ocview::render::blocks::{Detail, RenderCtx};
use ocview::render::diff_lines::DiffLayout;
use ocview::render::highlight::Highlighter;
use ocview::render::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;

const ADDED: &str = "# friendlier greeting";
const ADDED_KEYWORD: &str = "return f'Hello";
const REMOVED: &str = "return 'hello ' + name";
const CONTEXT: &str = "def greet(name):";

fn app() -> App {
    let mut app = app_with(&fixture("b_edit_write_diff", "event.jsonl"));
    app.highlighter = Highlighter::blocking(&app.theme.syntax);
    app.on_source(ocview::source::msg::SourceMsg::State(
        ocview::source::msg::SourceState::Ended,
    ));
    app
}

/// One frame drawn on a test backend: its buffer.
fn frame(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("test backend");
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|f| ocview::app::draw::draw(f, app)).unwrap();
    terminal.backend().buffer().clone()
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// The row holding `needle`, and the column it starts at (in cells).
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        let cells: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let text: String = cells.concat();
        if let Some(byte) = text.find(needle) {
            // Cells up to the match: count the symbols before it.
            let mut len = 0;
            let x = cells
                .iter()
                .take_while(|s| {
                    len += s.len();
                    len <= byte
                })
                .count();
            return (y, x as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{}", buffer_text(buf));
}

fn bg(buf: &Buffer, x: u16, y: u16) -> Option<Color> {
    buf[(x, y)].style().bg
}

fn band(theme: &Theme, role: Role) -> Color {
    theme
        .style(role)
        .bg
        .expect("the theme gives the band a background")
}

/// The columns of row `y` in `from..to` whose background is `colour`, as
/// one range; panics when they are not one run.
fn banded_run(buf: &Buffer, y: u16, from: u16, to: u16, colour: Color) -> std::ops::Range<u16> {
    let xs: Vec<u16> = (from..to)
        .filter(|&x| bg(buf, x, y) == Some(colour))
        .collect();
    let (Some(&first), Some(&last)) = (xs.first(), xs.last()) else {
        panic!("no banded cell in row {y}: {:?}", row_text(buf, y));
    };
    assert_eq!(
        xs.len(),
        (last - first + 1) as usize,
        "the band has holes in row {y}: {:?}",
        row_text(buf, y)
    );
    first..last + 1
}

#[test]
fn edit_card_snapshots_at_80_and_200_columns() {
    let mut app = app();
    press(&mut app, &["tab"]);
    let narrow = buffer_text(&frame(&mut app, 80, 40));
    assert!(
        narrow.contains("2 +     # friendlier greeting") && !narrow.contains("│   2 +"),
        "unified at 80:\n{narrow}"
    );
    insta::assert_snapshot!("edit_card_80x40", narrow);
    let wide = buffer_text(&frame(&mut app, 200, 40));
    assert!(
        wide.lines()
            .any(|l| l.contains(REMOVED) && l.contains(ADDED) && l.contains("│   2 +")),
        "side by side at 200:\n{wide}"
    );
    insta::assert_snapshot!("edit_card_200x40", wide);
}

#[test]
fn edit_card_bands_reach_the_edge_of_the_card() {
    let mut app = app();
    press(&mut app, &["tab"]);
    let theme = app.theme.clone();
    let (add, del) = (
        band(&theme, Role::DiffAddLine),
        band(&theme, Role::DiffDelLine),
    );
    let buf = frame(&mut app, 80, 40);
    let inner = ocview::app::boxes::turn_inner(app.areas.turns);
    // The card's body starts four columns in; its band runs from there to
    // the last column of the turn view.
    let body = inner.x + 4;
    for (needle, colour) in [(ADDED, add), (ADDED_KEYWORD, add), (REMOVED, del)] {
        let (y, _) = find(&buf, needle);
        assert_eq!(
            banded_run(&buf, y, inner.x, inner.right(), colour),
            body..inner.right(),
            "{needle:?}: {:?}",
            row_text(&buf, y)
        );
    }
    let (y, _) = find(&buf, CONTEXT);
    assert!(
        (inner.x..inner.right()).all(|x| ![Some(add), Some(del)].contains(&bg(&buf, x, y))),
        "context lines are not banded"
    );

    // Side by side (200 columns): old on its band left of the divider, new
    // on its band right of it, each to its edge.
    let buf = frame(&mut app, 200, 40);
    let inner = ocview::app::boxes::turn_inner(app.areas.turns);
    let (y, _) = find(&buf, REMOVED);
    let (_, divider) = find(&buf, "│   2 +");
    let left = banded_run(&buf, y, inner.x, divider, del);
    assert_eq!(left, inner.x + 4..divider, "{:?}", row_text(&buf, y));
    let right = banded_run(&buf, y, divider + 1, inner.right(), add);
    assert_eq!(right, divider + 1..inner.right(), "{:?}", row_text(&buf, y));
    let unbanded = |x: u16, y: u16| ![Some(add), Some(del)].contains(&bg(&buf, x, y));
    assert!(unbanded(divider, y), "the divider is not banded");
    // An added line with no removed line facing it: the left half is blank.
    let (y, _) = find(&buf, ADDED_KEYWORD);
    assert!((inner.x..divider).all(|x| unbanded(x, y)));
    assert_eq!(
        banded_run(&buf, y, divider + 1, inner.right(), add),
        divider + 1..inner.right()
    );
}

#[test]
fn diff_overlay_snapshots_and_bands_at_80_and_200_columns() {
    let mut app = app();
    press(&mut app, &["D"]);
    let theme = app.theme.clone();
    let (add, del) = (
        band(&theme, Role::DiffAddLine),
        band(&theme, Role::DiffDelLine),
    );
    let buf = frame(&mut app, 80, 16);
    insta::assert_snapshot!("diff_overlay_80x16", buffer_text(&buf));
    // The diff area starts where its hunk header does and ends at the
    // overlay's right border.
    let (_, start) = find(&buf, "@@ -1,6 +1,7 @@");
    let edge = buf.area.width - 1;
    for (needle, colour) in [(ADDED, add), (REMOVED, del)] {
        let (y, _) = find(&buf, needle);
        assert_eq!(banded_run(&buf, y, 0, edge, colour), start..edge);
    }

    let buf = frame(&mut app, 200, 16);
    insta::assert_snapshot!("diff_overlay_200x16", buffer_text(&buf));
    let (_, start) = find(&buf, "@@ -1,6 +1,7 @@");
    let edge = buf.area.width - 1;
    let (y, _) = find(&buf, REMOVED);
    let (_, divider) = find(&buf, "│   2 +");
    assert_eq!(banded_run(&buf, y, 0, divider, del), start..divider);
    assert_eq!(
        banded_run(&buf, y, divider + 1, edge, add),
        divider + 1..edge
    );
}

/// The colour of the cell where `needle` starts.
fn fg_at(buf: &Buffer, needle: &str) -> Option<Color> {
    let (y, x) = find(buf, needle);
    buf[(x, y)].style().fg
}

#[test]
fn code_in_hunks_takes_its_syntax_colours() {
    let mut app = app();
    press(&mut app, &["D"]);
    let theme = app.theme.clone();
    let plain = [
        theme.style(Role::Text).fg,
        theme.style(Role::DiffAdd).fg,
        theme.style(Role::DiffDel).fg,
    ];
    for width in [80, 200] {
        let buf = frame(&mut app, width, 16);
        // Keywords on an added, a removed and a context line of a Python
        // file: coloured by the grammar, not the diff's fallback colours.
        for needle in [ADDED_KEYWORD, REMOVED, CONTEXT] {
            let fg = fg_at(&buf, needle);
            assert!(
                !plain.contains(&fg),
                "{needle:?} at {width}: {fg:?} is a plain colour"
            );
        }
        assert_ne!(
            fg_at(&buf, ADDED_KEYWORD),
            fg_at(&buf, "Hello, {name}"),
            "a keyword and a string differ"
        );
    }
}

fn ctx<'a>(theme: &'a Theme, hl: &'a Highlighter, awaiting: &'a HashSet<String>) -> RenderCtx<'a> {
    RenderCtx {
        theme,
        width: 100,
        directory: None,
        highlighter: hl,
        awaiting,
        now_ms: 0,
        detail: Detail::Normal,
        store: None,
        pending_highlight: Default::default(),
        wall_clock: None,
        ended: false,
    }
}

/// The style of the first character of `needle` in a rendered line.
fn style_of(lines: &[Line], needle: &str) -> Style {
    for line in lines {
        let mut text = String::new();
        let mut starts = Vec::new();
        for span in &line.spans {
            starts.push((text.len(), span.style));
            text.push_str(&span.content);
        }
        if let Some(at) = text.find(needle) {
            return starts
                .iter()
                .rev()
                .find(|(start, _)| *start <= at)
                .map(|(_, s)| *s)
                .unwrap();
        }
    }
    panic!("{needle:?} not rendered")
}

#[test]
fn a_block_comment_opened_in_context_colours_the_added_line_inside_it() {
    let theme = Theme::default();
    let hl = Highlighter::blocking(&theme.syntax);
    let none = HashSet::new();
    let ctx = ctx(&theme, &hl, &none);
    let inside = "@@ -1,3 +1,3 @@\n /* a comment\n-let y = 2;\n+let x = 1;\n end */\n";
    let outside = "@@ -1,3 +1,3 @@\n // a comment\n-let y = 2;\n+let x = 1;\n fn end() {}\n";
    for width in [80, 200] {
        let render = |patch: &str| {
            let layout = DiffLayout::new(patch, "rs", width);
            layout.lines(&ctx, 0..layout.len())
        };
        let (inside, outside) = (render(inside), render(outside));
        let comment = style_of(&inside, "a comment").fg;
        assert_eq!(
            style_of(&inside, "let x").fg,
            comment,
            "at {width}: the new side is highlighted as one block"
        );
        assert_eq!(
            style_of(&inside, "let y").fg,
            comment,
            "at {width}: so is the old side"
        );
        assert_ne!(
            style_of(&outside, "let x").fg,
            comment,
            "at {width}: outside a comment, `let` is a keyword"
        );
    }
}

#[test]
fn drawn_plain_while_pending_then_in_syntax_colours() {
    let theme = Theme::default();
    let hl = Highlighter::spawn(&theme.syntax);
    let none = HashSet::new();
    let patch = "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
    let layout = DiffLayout::new(patch, "py", 80);
    let ctx = ctx(&theme, &hl, &none);
    let before = hl.generation();
    let first = layout.lines(&ctx, 0..layout.len());
    assert!(
        ctx.pending_highlight.get(),
        "the render cache is told to render again"
    );
    let add = theme.style(Role::DiffAdd).fg;
    assert_eq!(style_of(&first, "return 2").fg, add, "plain at first");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while hl.generation() < before + 2 {
        assert!(std::time::Instant::now() < deadline, "never highlighted");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let ctx = self::ctx(&theme, &hl, &none);
    let later = layout.lines(&ctx, 0..layout.len());
    assert!(!ctx.pending_highlight.get());
    let keyword = style_of(&later, "return 2");
    assert_ne!(keyword.fg, add, "coloured once highlighted");
    assert_eq!(
        keyword.bg,
        theme.style(Role::DiffAddLine).bg,
        "still on its band"
    );
}

#[test]
fn an_edit_permission_shows_its_diff_banded_in_the_prompt_bar() {
    let events = [
        r#"{"type":"session.created","properties":{"info":{"id":"ses_p","title":"Parent work","directory":"/p","time":{"created":1,"updated":2}}}}"#,
        r#"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_p","permission":"edit","patterns":["src/main.py"],"always":["*"],"metadata":{"filepath":"/p/src/main.py","diff":"Index: a\n--- a\n+++ a\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"}}}"#,
    ];
    let mut app = App::new(ocview::app::config::Config::default(), "live test", false).unwrap();
    app.highlighter = Highlighter::blocking(&app.theme.syntax);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    app.replies = Some(tx);
    common::feed(&mut app, events.join("\n").as_bytes());
    let theme = app.theme.clone();
    let (add, del) = (
        band(&theme, Role::DiffAddLine),
        band(&theme, Role::DiffDelLine),
    );
    // 80 columns: unified, three columns in, to the screen's edge.
    let buf = frame(&mut app, 80, 24);
    let edge = buf.area.width;
    for (needle, colour) in [("return 2", add), ("return 1", del)] {
        let (y, _) = find(&buf, needle);
        assert_eq!(
            banded_run(&buf, y, 0, edge, colour),
            3..edge,
            "{:?}",
            row_text(&buf, y)
        );
    }
    assert_ne!(fg_at(&buf, "return 2"), theme.style(Role::DiffAdd).fg);
    // 140 columns: side by side, each half on its band.
    let buf = frame(&mut app, 140, 40);
    let (y, _) = find(&buf, "return 1");
    let (_, divider) = find(&buf, "│   2 +");
    assert_eq!(banded_run(&buf, y, 0, divider, del), 3..divider);
    assert_eq!(
        banded_run(&buf, y, divider + 1, buf.area.width, add),
        divider + 1..buf.area.width
    );
}

#[test]
fn a_diff_beyond_the_highlighters_limits_stays_plain_on_its_bands() {
    let theme = Theme::default();
    let hl = Highlighter::spawn(&theme.syntax);
    let none = HashSet::new();
    let lines = ocview::render::highlight::MAX_LINES + 1;
    let mut patch = format!("@@ -1,1 +1,{lines} @@\n-fn old() {{}}\n");
    for i in 0..lines {
        patch.push_str(&format!("+fn f{i}() {{}}\n"));
    }
    let ctx = ctx(&theme, &hl, &none);
    let layout = DiffLayout::new(&patch, "rs", 80);
    let shown = layout.lines(&ctx, 0..5);
    assert_eq!(shown.len(), 5, "only the lines asked for");
    let style = style_of(&shown, "fn f0");
    assert_eq!(style.fg, theme.style(Role::DiffAdd).fg, "plain");
    assert_eq!(style.bg, theme.style(Role::DiffAddLine).bg, "banded");
    // The small old side is highlighted; the big new side is never queued.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while hl.generation() < 1 {
        assert!(std::time::Instant::now() < deadline, "never highlighted");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let settled = self::ctx(&theme, &hl, &none);
    let shown = layout.lines(&settled, 0..5);
    assert!(
        !settled.pending_highlight.get(),
        "nothing left pending: too big is plain for good"
    );
    assert_eq!(style_of(&shown, "fn f0").fg, theme.style(Role::DiffAdd).fg);
}

#[test]
fn control_characters_in_a_diff_are_made_inert_plain_or_highlighted() {
    let theme = Theme::default();
    let none = HashSet::new();
    let patch = "@@ -1,1 +1,1 @@ \u{1b}]0;title\u{7}\n-x = '\u{1b}[2J'\n+y = '\u{202e}\u{9b}31m'\n";
    for hl in [
        Highlighter::blocking(&theme.syntax),
        Highlighter::spawn(&theme.syntax),
    ] {
        let ctx = ctx(&theme, &hl, &none);
        for width in [80, 200] {
            let layout = DiffLayout::new(patch, "py", width);
            for line in layout.lines(&ctx, 0..layout.len()) {
                for span in &line.spans {
                    assert!(
                        !span
                            .content
                            .chars()
                            .any(|c| c.is_control() || c == '\u{202e}'),
                        "{:?}",
                        span.content
                    );
                }
            }
        }
    }
}
