//! Rendered blocks cached by (id, width, folded state) and checked against
//! the part's revision, so a frame re-renders only what changed, and a
//! streaming part re-renders alone.

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::text::Line;

pub type Lines = Arc<Vec<Line<'static>>>;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    id: String,
    width: u16,
    expanded: bool,
}

struct Entry {
    revision: u64,
    lines: Lines,
    used: u64,
}

/// Entries beyond this are evicted, least recently used first.
const CAPACITY: usize = 20_000;

#[derive(Default)]
pub struct RenderCache {
    map: HashMap<Key, Entry>,
    clock: u64,
    /// Blocks rendered (cache misses) since the counter was last read; the
    /// benchmarks and tests use it to prove work depends on what is visible.
    pub renders: u64,
}

impl RenderCache {
    /// The cached lines for a block, rendering them with `render` when the
    /// block is new or its revision moved on.
    pub fn get_or_render(
        &mut self,
        id: &str,
        revision: u64,
        width: u16,
        expanded: bool,
        render: impl FnOnce() -> Vec<Line<'static>>,
    ) -> Lines {
        self.clock += 1;
        let key = Key {
            id: id.to_string(),
            width,
            expanded,
        };
        if let Some(e) = self.map.get_mut(&key)
            && e.revision == revision
        {
            e.used = self.clock;
            return e.lines.clone();
        }
        self.renders += 1;
        let lines: Lines = Arc::new(render());
        self.map.insert(
            key,
            Entry {
                revision,
                lines: lines.clone(),
                used: self.clock,
            },
        );
        if self.map.len() > CAPACITY {
            self.evict();
        }
        lines
    }

    fn evict(&mut self) {
        let mut ages: Vec<u64> = self.map.values().map(|e| e.used).collect();
        let cut = ages.len() / 4;
        let (_, &mut threshold, _) = ages.select_nth_unstable(cut);
        self.map.retain(|_, e| e.used > threshold);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_once_per_revision_and_width() {
        let mut c = RenderCache::default();
        let mut calls = 0;
        for _ in 0..3 {
            c.get_or_render("p", 1, 80, true, || {
                calls += 1;
                vec![Line::raw("x")]
            });
        }
        assert_eq!(calls, 1);
        c.get_or_render("p", 2, 80, true, Vec::new);
        c.get_or_render("p", 2, 100, true, Vec::new);
        c.get_or_render("p", 2, 100, false, Vec::new);
        assert_eq!(c.renders, 4);
    }

    #[test]
    fn eviction_keeps_the_recent_entries() {
        let mut c = RenderCache::default();
        for i in 0..CAPACITY + 1 {
            c.get_or_render(&i.to_string(), 0, 80, true, Vec::new);
        }
        assert!(c.len() < CAPACITY);
        let before = c.renders;
        c.get_or_render(&CAPACITY.to_string(), 0, 80, true, Vec::new);
        assert_eq!(c.renders, before, "the newest entry survived");
    }
}
