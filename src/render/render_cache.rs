//! Rendered blocks cached by (id, width, variant) and checked against the
//! part's revision, so a frame renders only what changed and a streaming
//! part re-renders alone. Streaming markdown goes further: the part's
//! finished blocks are rendered once, and each delta re-renders only the
//! block still growing.

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::text::Line;

use crate::render::markdown;

/// A block's lines, in shared chunks so a growing part reuses its old lines.
#[derive(Clone, Default, Debug)]
pub struct Lines {
    chunks: Vec<Arc<Vec<Line<'static>>>>,
    len: usize,
}

impl Lines {
    pub fn new(lines: Vec<Line<'static>>) -> Lines {
        let mut l = Lines::default();
        l.push(Arc::new(lines));
        l
    }

    fn push(&mut self, chunk: Arc<Vec<Line<'static>>>) {
        self.len += chunk.len();
        if !chunk.is_empty() {
            self.chunks.push(chunk);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Roughly the memory the lines hold: text and per-span overhead.
    fn bytes(&self) -> usize {
        self.chunks
            .iter()
            .flat_map(|c| c.iter())
            .map(|l| {
                std::mem::size_of::<Line>()
                    + l.spans
                        .iter()
                        .map(|s| std::mem::size_of::<ratatui::text::Span>() + s.content.len())
                        .sum::<usize>()
            })
            .sum()
    }

    /// The lines from `skip` on, without walking the skipped chunks' lines.
    pub fn iter_from(&self, mut skip: usize) -> impl Iterator<Item = &Line<'static>> {
        let mut first = 0;
        while first < self.chunks.len() && skip >= self.chunks[first].len() {
            skip -= self.chunks[first].len();
            first += 1;
        }
        self.chunks[first..]
            .iter()
            .enumerate()
            .flat_map(move |(i, c)| c.iter().skip(if i == 0 { skip } else { 0 }))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    id: String,
    width: u16,
    /// Folded or not, detail level, and anything else the lines depend on.
    variant: u64,
}

struct Entry {
    revision: u64,
    lines: Lines,
    used: u64,
    /// Rendered while a code block's highlighting was pending, at this
    /// highlighter generation: render again once it moves on.
    pending_since: Option<u64>,
}

/// A streaming markdown part's state at one width.
struct Stream {
    revision: u64,
    /// The source already rendered into `chunks` (finished blocks).
    committed: String,
    chunks: Vec<Arc<Vec<Line<'static>>>>,
    result: Lines,
    pending_since: Option<u64>,
    used: u64,
}

/// Entries beyond this are evicted, least recently used first.
const CAPACITY: usize = 20_000;

#[derive(Default)]
pub struct RenderCache {
    map: HashMap<Key, Entry>,
    streams: HashMap<(String, u16), Stream>,
    clock: u64,
    /// The highlighter's generation for this frame.
    generation: u64,
    /// Blocks rendered (cache misses) so far; tests and benchmarks read it to
    /// prove the work depends on what is visible.
    pub renders: u64,
}

impl RenderCache {
    /// Roughly the memory the cached lines hold (lines shared between a
    /// stream and its entry count twice): tests bound it by the input.
    pub fn bytes(&self) -> usize {
        let entries: usize = self.map.values().map(|e| e.lines.bytes()).sum();
        let streams: usize = self
            .streams
            .values()
            .map(|s| s.result.bytes() + s.committed.len())
            .sum();
        entries + streams
    }

    pub fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }

    fn stale(&self, revision: u64, cached: u64, pending_since: Option<u64>) -> bool {
        cached != revision || pending_since.is_some_and(|g| self.generation > g)
    }

    /// The cached lines for a block, rendering them with `render` (which
    /// also says whether highlighting was still pending) when the block is
    /// new or its revision moved on.
    pub fn get_or_render(
        &mut self,
        id: &str,
        revision: u64,
        width: u16,
        variant: u64,
        render: impl FnOnce() -> (Vec<Line<'static>>, bool),
    ) -> Lines {
        self.clock += 1;
        let key = Key {
            id: id.to_string(),
            width,
            variant,
        };
        if let Some(e) = self.map.get(&key)
            && !self.stale(revision, e.revision, e.pending_since)
        {
            let e = self.map.get_mut(&key).expect("just found");
            e.used = self.clock;
            return e.lines.clone();
        }
        self.renders += 1;
        let (lines, pending) = render();
        let lines = Lines::new(lines);
        let pending_since = pending.then_some(self.generation);
        self.map.insert(
            key,
            Entry {
                revision,
                lines: lines.clone(),
                used: self.clock,
                pending_since,
            },
        );
        if self.map.len() > CAPACITY {
            self.evict();
        }
        lines
    }

    /// Lines of a markdown text that grows by appends. `render` renders a
    /// piece of markdown source (and says whether highlighting was pending).
    pub fn markdown_stream(
        &mut self,
        id: &str,
        revision: u64,
        width: u16,
        text: &str,
        mut render: impl FnMut(&str) -> (Vec<Line<'static>>, bool),
    ) -> Lines {
        self.clock += 1;
        let key = (id.to_string(), width);
        let generation = self.generation;
        let clock = self.clock;
        let fresh = || Stream {
            revision: u64::MAX,
            committed: String::new(),
            chunks: Vec::new(),
            result: Lines::default(),
            pending_since: None,
            used: clock,
        };
        let stream = self.streams.entry(key).or_insert_with(fresh);
        stream.used = clock;
        let highlight_moved = stream.pending_since.is_some_and(|g| generation > g);
        if stream.revision == revision && !highlight_moved {
            return stream.result.clone();
        }
        // Text replaced rather than appended to (or colours arrived): start over.
        if highlight_moved || !text.as_bytes().starts_with(stream.committed.as_bytes()) {
            *stream = fresh();
        }
        self.renders += 1;
        let stable = markdown::stable_prefix_len_from(text, stream.committed.len());
        if stable > stream.committed.len() {
            let (mut lines, pending) = render(&text[stream.committed.len()..stable]);
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            if pending {
                stream.pending_since = Some(generation);
            }
            stream.chunks.push(Arc::new(lines));
            stream
                .committed
                .push_str(&text[stream.committed.len()..stable]);
        }
        let (tail, pending) = render(&text[stable..]);
        if pending {
            stream.pending_since = Some(generation);
        }
        let mut result = Lines::default();
        for c in &stream.chunks {
            result.push(c.clone());
        }
        result.push(Arc::new(tail));
        stream.revision = revision;
        stream.result = result.clone();
        if self.streams.len() > CAPACITY / 4 {
            let cut = self.clock.saturating_sub(CAPACITY as u64);
            self.streams.retain(|_, s| s.used > cut);
        }
        result
    }

    fn evict(&mut self) {
        let mut ages: Vec<u64> = self.map.values().map(|e| e.used).collect();
        let cut = ages.len() / 4;
        let (_, &mut threshold, _) = ages.select_nth_unstable(cut);
        self.map.retain(|_, e| e.used > threshold);
    }

    pub fn len(&self) -> usize {
        self.map.len() + self.streams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &Lines) -> Vec<String> {
        lines
            .iter_from(0)
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn renders_once_per_revision_width_and_variant() {
        let mut c = RenderCache::default();
        let mut calls = 0;
        for _ in 0..3 {
            c.get_or_render("p", 1, 80, 0, || {
                calls += 1;
                (vec![Line::raw("x")], false)
            });
        }
        assert_eq!(calls, 1);
        c.get_or_render("p", 2, 80, 0, || (Vec::new(), false));
        c.get_or_render("p", 2, 100, 0, || (Vec::new(), false));
        c.get_or_render("p", 2, 100, 1, || (Vec::new(), false));
        assert_eq!(c.renders, 4);
    }

    #[test]
    fn pending_highlights_render_again_when_the_generation_moves() {
        let mut c = RenderCache::default();
        c.get_or_render("p", 1, 80, 0, || (vec![Line::raw("plain")], true));
        c.get_or_render("p", 1, 80, 0, || (vec![Line::raw("plain")], true));
        assert_eq!(c.renders, 1);
        c.set_generation(1);
        let l = c.get_or_render("p", 1, 80, 0, || (vec![Line::raw("coloured")], false));
        assert_eq!(plain(&l), ["coloured"]);
        c.set_generation(2);
        c.get_or_render("p", 1, 80, 0, || (vec![], false));
        assert_eq!(c.renders, 2, "no pending highlight: no re-render");
    }

    #[test]
    fn eviction_keeps_the_recent_entries() {
        let mut c = RenderCache::default();
        for i in 0..CAPACITY + 1 {
            c.get_or_render(&i.to_string(), 0, 80, 0, || (Vec::new(), false));
        }
        assert!(c.len() < CAPACITY);
        let before = c.renders;
        c.get_or_render(&CAPACITY.to_string(), 0, 80, 0, || (Vec::new(), false));
        assert_eq!(c.renders, before, "the newest entry survived");
    }

    #[test]
    fn a_growing_text_renders_only_its_unfinished_block() {
        let mut c = RenderCache::default();
        let mut rendered: Vec<String> = Vec::new();
        let mut text = String::new();
        let mut last = Lines::default();
        for (rev, piece) in ["para one\n", "\npara two", " grows\n\nthree"]
            .iter()
            .enumerate()
        {
            text.push_str(piece);
            last = c.markdown_stream("p", rev as u64, 80, &text, |src| {
                rendered.push(src.to_string());
                (
                    src.lines()
                        .filter(|l| !l.is_empty())
                        .map(|l| Line::raw(l.to_string()))
                        .collect(),
                    false,
                )
            });
        }
        // "para one" was rendered as the tail, then committed once; the
        // paragraph that kept growing was rendered as a tail each time.
        assert_eq!(
            rendered,
            [
                "para one\n",
                "para one\n\n",
                "para two",
                "para two grows\n\n",
                "three"
            ]
        );
        assert_eq!(
            plain(&last),
            ["para one", "", "para two grows", "", "three"]
        );
        assert_eq!(plain(&Lines { ..last.clone() }), plain(&last));
        assert_eq!(last.iter_from(2).count(), 3);
    }
}
