//! Finding text in sessions: everything a reader can be shown (user and
//! assistant text, reasoning, a tool's title, input, output and error, todo
//! lists), whether or not it is folded or laid out.
//!
//! A literal string, smart case: all lowercase matches any case, one
//! uppercase letter makes it exact. A hit is named by ids and the rank of
//! the occurrence within its part, so it survives new messages arriving.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::part::{Part, PartBody};
use super::session::Session;
use super::shown;

/// Longer queries are cut: a search box, not a document.
pub const MAX_QUERY_CHARS: usize = 256;

#[derive(Debug, Clone)]
pub struct Query {
    text: String,
    matcher: Regex,
}

impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Query {}

impl Query {
    /// `None` for an empty query.
    pub fn new(text: &str) -> Option<Query> {
        let text: String = text.chars().take(MAX_QUERY_CHARS).collect();
        if text.is_empty() {
            return None;
        }
        let exact = text.chars().any(char::is_uppercase);
        let matcher = RegexBuilder::new(&regex::escape(&text))
            .case_insensitive(!exact)
            .build()
            .ok()?;
        Some(Query { text, matcher })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_exact_case(&self) -> bool {
        self.text.chars().any(char::is_uppercase)
    }

    /// Byte ranges of the occurrences in `haystack`, in order.
    pub fn find_iter<'h>(&'h self, haystack: &'h str) -> impl Iterator<Item = Range<usize>> + 'h {
        self.matcher.find_iter(haystack).map(|m| m.range())
    }

    pub fn count(&self, haystack: &str) -> usize {
        self.matcher.find_iter(haystack).count()
    }
}

/// One occurrence: the part that holds it and its rank within the part's
/// searchable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub message_id: String,
    pub part_id: String,
    pub ordinal: usize,
}

/// The searchable text of each part, kept by part id and revision so a
/// second query does not parse tool JSON again.
#[derive(Default)]
pub struct TextCache {
    texts: HashMap<String, (u64, Arc<str>)>,
}

impl TextCache {
    fn text(&mut self, part: &Part, extra: u64, shown: &Part) -> Arc<str> {
        let revision = part.revision ^ extra.rotate_left(32);
        if let Some((rev, text)) = self.texts.get(&part.id)
            && *rev == revision
        {
            return text.clone();
        }
        let text: Arc<str> = searchable_text(shown).into();
        self.texts.insert(part.id.clone(), (revision, text.clone()));
        text
    }

    /// Build the searchable text of a message's parts ahead of a query.
    pub fn prepare(&mut self, message: &super::message::Message) {
        for (pi, part) in message.parts.iter().enumerate() {
            let shown = shown::shown(message, pi);
            let extra = shown.extra_revision();
            if let Some(resolved) = shown.resolve(part) {
                self.text(part, extra, &resolved);
            }
        }
    }

    /// Forget parts that are no longer in any searched session.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.texts.retain(|id, _| keep(id));
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// What a reader can find in a part: the text it is shown.
pub fn searchable_text(part: &Part) -> Cow<'_, str> {
    match &part.body {
        PartBody::Text(t) => Cow::Borrowed(&t.text),
        PartBody::Reasoning(r) => Cow::Borrowed(&r.text),
        PartBody::Subtask(s) => Cow::Borrowed(&s.prompt),
        PartBody::Agent(a) => Cow::Borrowed(&a.name),
        PartBody::File(f) => Cow::Borrowed(f.filename.as_deref().unwrap_or(&f.url)),
        PartBody::Patch(p) => Cow::Owned(p.files.join("\n")),
        PartBody::Retry(r) => Cow::Owned(r.error.as_ref().map(|e| e.summary()).unwrap_or_default()),
        PartBody::Tool(t) => {
            let mut out = String::new();
            let mut push = |s: &str| {
                if !s.is_empty() {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(s);
                }
            };
            push(&t.tool);
            if let Some(title) = &t.state.title {
                push(title);
            }
            if let Some(input) = part.tool_input() {
                strings_of(&input, &mut push);
            }
            if let Some(output) = &t.state.output {
                push(output);
            }
            if let Some(error) = &t.state.error {
                push(error);
            }
            Cow::Owned(out)
        }
        PartBody::StepStart(_)
        | PartBody::StepFinish(_)
        | PartBody::Snapshot(_)
        | PartBody::Compaction(_)
        | PartBody::Unknown { .. } => Cow::Borrowed(""),
    }
}

/// Every string leaf of a JSON value, in document order: a tool's input as
/// its card shows it (a command, a path, a patch, a todo's content).
fn strings_of(value: &Value, push: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => push(s),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, push)),
        Value::Object(map) => map.values().for_each(|v| strings_of(v, push)),
        _ => {}
    }
}

/// Where a session search starts, and when to stop.
pub struct Scan<'a> {
    pub session: &'a Session,
    pub query: &'a Query,
    /// Stop early (a newer query came): checked between messages.
    pub cancelled: &'a dyn Fn() -> bool,
}

impl Scan<'_> {
    /// Every hit of the session in reading order, or `None` if cancelled.
    pub fn all(&self, cache: &mut TextCache) -> Option<Vec<Hit>> {
        let mut hits = Vec::new();
        for mi in 0..self.session.messages.len() {
            if mi % 64 == 0 && (self.cancelled)() {
                return None;
            }
            self.message_hits(mi, cache, &mut hits, usize::MAX);
        }
        Some(hits)
    }

    /// The first hit at or after message `from`, wrapping to the start:
    /// what the reader sees first, found before the rest are counted.
    /// `None` if cancelled, `Some(None)` if there is no hit.
    pub fn first_from(&self, from: usize, cache: &mut TextCache) -> Option<Option<Hit>> {
        let n = self.session.messages.len();
        let mut hits = Vec::new();
        for k in 0..n {
            if k % 64 == 0 && (self.cancelled)() {
                return None;
            }
            self.message_hits((from + k) % n, cache, &mut hits, 1);
            if let Some(hit) = hits.pop() {
                return Some(Some(hit));
            }
        }
        Some(None)
    }

    fn message_hits(&self, mi: usize, cache: &mut TextCache, hits: &mut Vec<Hit>, limit: usize) {
        let message = &self.session.messages[mi];
        for (pi, part) in message.parts.iter().enumerate() {
            let shown = shown::shown(message, pi);
            let extra = shown.extra_revision();
            let Some(resolved) = shown.resolve(part) else {
                continue;
            };
            let text = cache.text(part, extra, &resolved);
            for (ordinal, _) in self.query.find_iter(&text).enumerate() {
                if hits.len() >= limit {
                    return;
                }
                hits.push(Hit {
                    message_id: message.info.id.clone(),
                    part_id: part.id.clone(),
                    ordinal,
                });
            }
        }
    }
}

/// How many hits a session's content holds, for the session list.
pub fn count_in_session(session: &Session, query: &Query, cache: &mut TextCache) -> usize {
    let mut n = 0;
    for message in &session.messages {
        for (pi, part) in message.parts.iter().enumerate() {
            let shown = shown::shown(message, pi);
            let extra = shown.extra_revision();
            if let Some(resolved) = shown.resolve(part) {
                n += query.count(&cache.text(part, extra, &resolved));
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_case_and_literal() {
        let q = Query::new("foo.bar").unwrap();
        assert_eq!(q.count("FOO.BAR foo.bar fooxbar"), 2);
        let q = Query::new("Foo").unwrap();
        assert!(q.is_exact_case());
        assert_eq!(q.count("foo Foo FOO"), 1);
        assert!(Query::new("").is_none());
        let q = Query::new("été").unwrap();
        assert_eq!(q.count("ÉTÉ été"), 2);
        let long = "x".repeat(MAX_QUERY_CHARS * 2);
        assert_eq!(Query::new(&long).unwrap().text().len(), MAX_QUERY_CHARS);
    }

    #[test]
    fn ranges_are_byte_offsets_of_the_original() {
        let q = Query::new("b").unwrap();
        let ranges: Vec<_> = q.find_iter("àB b").collect();
        assert_eq!(ranges, vec![2..3, 4..5]);
    }
}
