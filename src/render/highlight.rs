//! Syntax highlighting off the draw path. A code block asks for its
//! colours; the first time, it is drawn plain while a worker thread
//! highlights it, and drawn again when the result is ready (the render cache
//! sees the highlighter's generation move on). syntect with the pure-Rust
//! `fancy-regex` engine: no C toolchain in the build, and its slower first
//! use of a grammar (a few hundred ms for TypeScript) happens on the worker,
//! never in a frame.
//!
//! The grammars cost little to load (about 1 MB) but each one compiles its
//! regexes as it is used, and those stay: three languages highlighted were
//! 30 MB. So the worker thread starts with the first block, loads its own
//! grammars, and ends (its grammars, regexes and stack given back) once no
//! block has asked for a while; a later block starts another.

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

type Job = (Key, String);

/// Where jobs go: the running worker's channel, if one runs.
struct Worker {
    slot: Mutex<Option<mpsc::Sender<Job>>>,
    idle: std::time::Duration,
}

#[derive(Clone)]
pub struct Highlighter {
    shared: Arc<Shared>,
    /// `None`: highlight synchronously (tests, headless output).
    jobs: Option<Arc<Worker>>,
    theme: SyntaxTheme,
}

/// How long the worker (with its grammars and their compiled regexes)
/// stays after the last job. A streamed block asks again with each delta, well
/// within this, so a stream never loads them twice.
pub const IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(3);

/// The grammars, for the blocking highlighter (dumps, tests): loaded once,
/// on first use, and kept.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(load_syntaxes)
}

fn load_syntaxes() -> SyntaxSet {
    let start = std::time::Instant::now();
    let set = two_face::syntax::extra_newlines();
    tracing::info!(
        "{} grammars loaded in {:?}",
        set.syntaxes().len(),
        start.elapsed()
    );
    set
}

/// Hand a job to the running worker, or start one for it. Under the
/// slot's lock, so a worker that is ending takes no job with it.
fn send(worker: &Arc<Worker>, shared: &Arc<Shared>, theme: &SyntaxTheme, job: Job) -> bool {
    let mut slot = worker.slot.lock().expect("highlight worker");
    let job = match slot.as_ref() {
        Some(tx) => match tx.send(job) {
            Ok(()) => return true,
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (tx, rx) = mpsc::channel::<Job>();
    let (w, sh, th) = (Arc::downgrade(worker), shared.clone(), theme.clone());
    let spawned = std::thread::Builder::new()
        .name("ocview-highlight".into())
        .spawn(move || work(rx, w, sh, th));
    if let Err(e) = spawned {
        tracing::warn!("no highlighting: cannot start its thread: {e}");
        return false;
    }
    let sent = tx.send(job).is_ok();
    *slot = Some(tx);
    sent
}

/// The worker's loop: grammars loaded on the first job; after `idle`
/// without one, the thread ends and gives its memory back. It holds its
/// highlighter weakly: once every copy of it is gone (a viewer closed, a
/// theme changed), the jobs still queued are dropped, not done for nobody.
fn work(
    rx: mpsc::Receiver<Job>,
    worker: std::sync::Weak<Worker>,
    shared: Arc<Shared>,
    theme: SyntaxTheme,
) {
    let idle = match worker.upgrade() {
        Some(w) => w.idle,
        None => return,
    };
    let mut grammars: Option<SyntaxSet> = None;
    loop {
        let (key, code) = match rx.recv_timeout(idle) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let Some(worker) = worker.upgrade() else {
                    break;
                };
                let mut slot = worker.slot.lock().expect("highlight worker");
                match rx.try_recv() {
                    // Sent just before the lock: done before ending.
                    Ok(job) => job,
                    Err(_) => {
                        *slot = None;
                        break;
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if worker.strong_count() == 0 {
            break;
        }
        let set = grammars.get_or_insert_with(load_syntaxes);
        let result = highlight_now(set, &key.0, &code, &theme).map(Arc::new);
        store(&shared, key, result);
        shared.generation.fetch_add(1, Ordering::SeqCst);
        // One waiter (the loop); a result that comes while it is busy
        // drawing leaves a permit, so none is missed.
        shared.ready.notify_one();
    }
    drop(grammars);
    crate::model::heap::give_back_freed();
    tracing::debug!("highlighting idle: its thread and grammars let go");
}

impl Highlighter {
    /// A highlighter with its own worker thread.
    pub fn spawn(theme: &SyntaxTheme) -> Highlighter {
        Highlighter::spawn_releasing_after(theme, IDLE_RELEASE)
    }

    /// `spawn`, the worker ending after `idle` without a job.
    pub fn spawn_releasing_after(theme: &SyntaxTheme, idle: std::time::Duration) -> Highlighter {
        let worker = Worker {
            slot: Mutex::new(None),
            idle,
        };
        Highlighter {
            jobs: Some(Arc::new(worker)),
            ..Highlighter::blocking(theme)
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
                let result = highlight_now(syntaxes(), &key.0, code, &self.theme).map(Arc::new);
                store(&self.shared, key, result.clone());
                result.map_or(Lookup::Plain, Lookup::Ready)
            }
            Some(worker) => {
                let queued = self
                    .shared
                    .pending
                    .lock()
                    .expect("highlight queue")
                    .insert(key.clone());
                if queued
                    && !send(
                        worker,
                        &self.shared,
                        &self.theme,
                        (key.clone(), code.to_string()),
                    )
                {
                    store(&self.shared, key, None);
                    return Lookup::Plain;
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

fn highlight_now(
    syntaxes: &SyntaxSet,
    lang: &str,
    code: &str,
    theme: &SyntaxTheme,
) -> Option<Highlighted> {
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
    fn a_worker_that_let_its_grammars_go_highlights_the_next_block() {
        let h = Highlighter::spawn_releasing_after(
            &crate::render::theme::Theme::default().syntax,
            std::time::Duration::from_millis(20),
        );
        let ready = |code: &str| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            loop {
                match h.lookup("rust", code) {
                    Lookup::Ready(lines) => return lines,
                    Lookup::Plain => panic!("rust is known"),
                    Lookup::Pending => {}
                }
                assert!(std::time::Instant::now() < deadline, "never answered");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        assert!(ready("fn a() {}\n")[0].len() > 1);
        // Well past the idle time: the grammars were let go.
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(ready("fn b() { let x = 1; }\n")[0].len() > 1);
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

    #[test]
    fn a_dropped_highlighter_stops_its_worker_without_doing_its_queue() {
        let h = Highlighter::spawn(&crate::render::theme::Theme::default().syntax);
        let jobs = 200;
        for n in 0..jobs {
            assert!(matches!(
                h.lookup("rust", &format!("fn f{n}() {{ let x = {n}; }}\n")),
                Lookup::Pending
            ));
        }
        let shared = h.shared.clone();
        drop(h);
        // The worker holds the results' table until it ends: it ends well
        // before its 3-second idle time, after at most the job it was on.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while Arc::strong_count(&shared) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the worker of a dropped highlighter is still running"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let done = shared.done.lock().unwrap().len();
        assert!(done <= 1, "{done} of {jobs} blocks highlighted for nobody");
    }
}
