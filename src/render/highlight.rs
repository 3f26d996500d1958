//! Syntax highlighting off the draw path. A code block asks for its
//! colours; the first time, it is drawn plain while a worker thread
//! highlights it, and drawn again when the result is ready (the render cache
//! sees the highlighter's generation move on). syntect with the pure-Rust
//! `fancy-regex` engine: no C toolchain in the build, and its slower first
//! use of a grammar (a few hundred ms for TypeScript) happens on the worker,
//! never in a frame.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::FontStyle;
use syntect::parsing::SyntaxSet;
use tokio::sync::Notify;

use crate::render::markdown::{CodeHighlighter, Highlighted};
use crate::render::theme::SyntaxTheme;

/// Blocks bigger than this stay plain.
pub const MAX_BYTES: usize = 512 * 1024;
pub const MAX_LINES: usize = 10_000;
/// Results kept; beyond it the oldest are forgotten (they would be redone).
const MAX_ENTRIES: usize = 4096;

type Key = (String, u64);

struct Shared {
    done: Mutex<HashMap<Key, Option<Arc<Highlighted>>>>,
    pending: Mutex<HashSet<Key>>,
    generation: AtomicU64,
    ready: Notify,
}

#[derive(Clone)]
pub struct Highlighter {
    shared: Arc<Shared>,
    /// `None`: highlight synchronously (tests, headless output).
    jobs: Option<mpsc::Sender<(Key, String)>>,
    theme: SyntaxTheme,
}

/// The grammars, loaded once, on first use (on the worker thread).
pub fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(|| {
        let start = std::time::Instant::now();
        let set = two_face::syntax::extra_newlines();
        tracing::info!(
            "{} grammars loaded in {:?}",
            set.syntaxes().len(),
            start.elapsed()
        );
        set
    })
}

impl Highlighter {
    /// A highlighter with its own worker thread.
    pub fn spawn(theme: &SyntaxTheme) -> Highlighter {
        let shared = Arc::new(Shared {
            done: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashSet::new()),
            generation: AtomicU64::new(0),
            ready: Notify::new(),
        });
        let (tx, rx) = mpsc::channel::<(Key, String)>();
        let worker = shared.clone();
        let syntax_theme = theme.clone();
        let spawned = std::thread::Builder::new()
            .name("ocview-highlight".into())
            .spawn(move || {
                while let Ok((key, code)) = rx.recv() {
                    let result = highlight_now(&key.0, &code, &syntax_theme).map(Arc::new);
                    store(&worker, key, result);
                    worker.generation.fetch_add(1, Ordering::SeqCst);
                    // One waiter (the loop); a result that comes while it
                    // is busy drawing leaves a permit, so none is missed.
                    worker.ready.notify_one();
                }
            });
        Highlighter {
            shared,
            jobs: spawned.is_ok().then_some(tx),
            theme: theme.clone(),
        }
    }

    /// Highlight on the calling thread (deterministic, for tests and dumps).
    pub fn blocking(theme: &SyntaxTheme) -> Highlighter {
        Highlighter {
            shared: Arc::new(Shared {
                done: Mutex::new(HashMap::new()),
                pending: Mutex::new(HashSet::new()),
                generation: AtomicU64::new(0),
                ready: Notify::new(),
            }),
            jobs: None,
            theme: theme.clone(),
        }
    }

    /// A highlighter of the same kind (worker or blocking) for another
    /// theme, with an empty cache.
    pub fn with_theme(&self, theme: &SyntaxTheme) -> Highlighter {
        match self.jobs {
            Some(_) => Highlighter::spawn(theme),
            None => Highlighter::blocking(theme),
        }
    }

    /// Moves on each time a result arrives.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    /// Resolves when a result arrives after this call (even before it is
    /// first polled), so a loop that takes it before reading `generation`
    /// misses none.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.shared.ready.notified()
    }

    /// The colours of a block if known; else queue it and answer `None`.
    pub fn lookup(&self, lang: &str, code: &str) -> Lookup {
        if code.len() > MAX_BYTES || code.lines().count() > MAX_LINES {
            return Lookup::Plain;
        }
        let key = (lang.to_ascii_lowercase(), hash(code));
        if let Some(done) = self.shared.done.lock().expect("highlight cache").get(&key) {
            return match done {
                Some(h) => Lookup::Ready(h.clone()),
                None => Lookup::Plain,
            };
        }
        match &self.jobs {
            None => {
                let result = highlight_now(&key.0, code, &self.theme).map(Arc::new);
                store(&self.shared, key, result.clone());
                result.map_or(Lookup::Plain, Lookup::Ready)
            }
            Some(tx) => {
                if self
                    .shared
                    .pending
                    .lock()
                    .expect("highlight queue")
                    .insert(key.clone())
                {
                    let _ = tx.send((key, code.to_string()));
                }
                Lookup::Pending
            }
        }
    }
}

pub enum Lookup {
    Ready(Arc<Highlighted>),
    /// Being highlighted: draw plain for now.
    Pending,
    /// No grammar, or too big: plain for good.
    Plain,
}

fn store(shared: &Shared, key: Key, result: Option<Arc<Highlighted>>) {
    let mut done = shared.done.lock().expect("highlight cache");
    if done.len() >= MAX_ENTRIES {
        done.clear();
    }
    shared.pending.lock().expect("highlight queue").remove(&key);
    done.insert(key, result);
}

fn hash(code: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    code.hash(&mut h);
    h.finish()
}

fn highlight_now(lang: &str, code: &str, theme: &SyntaxTheme) -> Option<Highlighted> {
    let syntaxes = syntaxes();
    let syntax = syntaxes
        .find_syntax_by_token(lang)
        .or_else(|| syntaxes.find_syntax_by_extension(lang))?;
    let mut h = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let ranges = h.highlight_line(line, syntaxes).ok()?;
        out.push(
            ranges
                .into_iter()
                .map(|(s, text)| (text.trim_end_matches(['\n', '\r']).to_string(), convert(s)))
                .filter(|(t, _)| !t.is_empty())
                .collect(),
        );
    }
    Some(out)
}

fn convert(s: syntect::highlighting::Style) -> Style {
    let c = s.foreground;
    // Alpha 0 carries an ANSI index, 1 the terminal's own colour
    // (`theme::syntax::encode`).
    let fg = match c.a {
        0 => Color::Indexed(c.r),
        1 => Color::Reset,
        _ => Color::Rgb(c.r, c.g, c.b),
    };
    let mut style = Style::default().fg(fg);
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    style
}

/// Adapter for the markdown renderer that remembers whether any block was
/// still pending, so the render cache knows to render again later.
pub struct Recording<'a> {
    pub highlighter: &'a Highlighter,
    pub pending: bool,
}

impl CodeHighlighter for Recording<'_> {
    fn highlight(&mut self, lang: &str, code: &str) -> Option<Arc<Highlighted>> {
        match self.highlighter.lookup(lang, code) {
            Lookup::Ready(h) => Some(h),
            Lookup::Pending => {
                self.pending = true;
                None
            }
            Lookup::Plain => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_mode_highlights_known_languages_only() {
        let h = Highlighter::blocking(&crate::render::theme::Theme::default().syntax);
        match h.lookup("rust", "fn main() {}\n") {
            Lookup::Ready(lines) => assert!(lines[0].len() > 1, "several styled pieces"),
            _ => panic!("rust is known"),
        }
        assert!(matches!(h.lookup("no-such-language", "x"), Lookup::Plain));
        let huge = "x\n".repeat(MAX_LINES + 1);
        assert!(matches!(h.lookup("rust", &huge), Lookup::Plain));
    }

    #[test]
    fn every_common_language_has_a_grammar() {
        let h = Highlighter::blocking(&crate::render::theme::Theme::default().syntax);
        for (lang, code) in [
            ("typescript", "const x: number = 1;\n"),
            ("ts", "let y = `a${x}`;\n"),
            ("tsx", "const a = <div className=\"x\">{y}</div>;\n"),
            ("toml", "[package]\nname = \"ocview\"\n"),
            ("dockerfile", "FROM rust:1.88\nRUN cargo build\n"),
            ("Dockerfile", "FROM rust:1.88\nRUN cargo build\n"),
            ("yaml", "a: [1, 2]\n"),
            ("json", "{\"a\": 1}\n"),
            ("go", "package main\nfunc main() {}\n"),
            ("kotlin", "fun main() { val x = 1 }\n"),
            ("swift", "let x: Int = 1\n"),
            ("zig", "const std = @import(\"std\");\n"),
            ("rust", "fn main() {}\n"),
            ("python", "def f(): return 1\n"),
            ("bash", "echo \"$HOME\"\n"),
        ] {
            match h.lookup(lang, code) {
                Lookup::Ready(lines) => {
                    let colours: HashSet<_> = lines.iter().flatten().map(|(_, s)| s.fg).collect();
                    assert!(colours.len() > 1, "{lang}: one colour only: {lines:?}");
                }
                _ => panic!("{lang} has no grammar"),
            }
        }
    }

    #[test]
    fn the_worker_answers_later_and_moves_the_generation() {
        let h = Highlighter::spawn(&crate::render::theme::Theme::default().syntax);
        let before = h.generation();
        assert!(matches!(
            h.lookup("python", "def f():\n    return 1\n"),
            Lookup::Pending
        ));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while h.generation() == before {
            assert!(
                std::time::Instant::now() < deadline,
                "the worker never answered"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(matches!(
            h.lookup("python", "def f():\n    return 1\n"),
            Lookup::Ready(_)
        ));
    }
}
