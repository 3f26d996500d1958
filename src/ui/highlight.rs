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
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;
use tokio::sync::Notify;

use super::markdown::{CodeHighlighter, Highlighted};

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
    theme: String,
}

fn assets() -> &'static (SyntaxSet, ThemeSet) {
    static ASSETS: OnceLock<(SyntaxSet, ThemeSet)> = OnceLock::new();
    ASSETS.get_or_init(|| {
        (
            SyntaxSet::load_defaults_newlines(),
            ThemeSet::load_defaults(),
        )
    })
}

impl Highlighter {
    /// A highlighter with its own worker thread.
    pub fn spawn(theme: &str) -> Highlighter {
        let shared = Arc::new(Shared {
            done: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashSet::new()),
            generation: AtomicU64::new(0),
            ready: Notify::new(),
        });
        let (tx, rx) = mpsc::channel::<(Key, String)>();
        let worker = shared.clone();
        let theme_name = theme.to_string();
        let spawned = std::thread::Builder::new()
            .name("ocview-highlight".into())
            .spawn(move || {
                while let Ok((key, code)) = rx.recv() {
                    let result = highlight_now(&key.0, &code, &theme_name).map(Arc::new);
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
            theme: theme.to_string(),
        }
    }

    /// Highlight on the calling thread (deterministic, for tests and dumps).
    pub fn blocking(theme: &str) -> Highlighter {
        Highlighter {
            shared: Arc::new(Shared {
                done: Mutex::new(HashMap::new()),
                pending: Mutex::new(HashSet::new()),
                generation: AtomicU64::new(0),
                ready: Notify::new(),
            }),
            jobs: None,
            theme: theme.to_string(),
        }
    }

    /// Moves on each time a result arrives.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    /// Resolves when a result arrived since the last time it resolved (a
    /// single waiter: results that come while nobody waits are kept).
    pub async fn ready(&self) {
        self.shared.ready.notified().await
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

fn highlight_now(lang: &str, code: &str, theme: &str) -> Option<Highlighted> {
    let (syntaxes, themes) = assets();
    let syntax = syntaxes
        .find_syntax_by_token(lang)
        .or_else(|| syntaxes.find_syntax_by_extension(lang))?;
    let theme = themes
        .themes
        .get(theme)
        .or_else(|| themes.themes.values().next())?;
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
    let mut style = Style::default().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
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
        let h = Highlighter::blocking("base16-ocean.dark");
        match h.lookup("rust", "fn main() {}\n") {
            Lookup::Ready(lines) => assert!(lines[0].len() > 1, "several styled pieces"),
            _ => panic!("rust is known"),
        }
        assert!(matches!(h.lookup("no-such-language", "x"), Lookup::Plain));
        let huge = "x\n".repeat(MAX_LINES + 1);
        assert!(matches!(h.lookup("rust", &huge), Lookup::Plain));
    }

    #[test]
    fn the_worker_answers_later_and_moves_the_generation() {
        let h = Highlighter::spawn("base16-ocean.dark");
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
