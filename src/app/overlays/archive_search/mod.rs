//! Search across the archive (`F` in the list): every session ocview ever
//! kept, from every server and file. Results come while typing: each key
//! sends the query to the archive's reader thread (`reader.rs`), whose
//! answers come back as messages; enter opens the hit's session at the
//! hit, loading it from the archive when the viewer does not have it.
//!
//! Filters are typed with the words: `project:api tool:bash state:error
//! model:claude agent:plan server:box since:3d until:2026-01-01`.

pub mod draw;
pub mod reader;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::component::{Ask, Component, Cx, Handled};
use crate::app::keymap::{Action, Context};
use crate::app::{App, Overlay};
use crate::archive::{Hit, Query, Setting};

/// What the empty search says: every filter `parse` knows, with examples.
const HOW_TO: &str = "type to search every archived session\n\
    \"a phrase\" finds its words together, word* any word it starts\n\
    filters: tool:bash project:api server:box state:error model:claude\n\
    agent:plan since:3d until:2026-01-01 (dates, or ages: 12h 3d 2w)";

/// How every import progress notice starts.
pub const PROGRESS_PREFIX: &str = "archive: indexing ";

pub use crate::app::msg::ArchiveReply as Reply;

/// The archive as the app holds it: where it is, its writer (live
/// sources), and the search overlay's state.
#[derive(Default)]
pub struct ArchiveState {
    pub setting: Option<Setting>,
    /// The writer, for live sources.
    pub tap: Option<crate::archive::writer::Tap>,
    /// opencode's database followed into the archive.
    pub opencode_db: Option<crate::archive::db_follow::Follower>,
    reader: Option<reader::Reader>,
    pub view: SearchView,
    /// Why the archive's list cannot be read, while it cannot.
    pub list_trouble: Option<String>,
    /// Why this viewer has no archive, when it is not turned off (the
    /// demo keeps none).
    pub none_because: Option<&'static str>,
    /// The sessions the archive keeps from every prune (bare ids): the
    /// list marks them.
    pub pins: std::collections::HashSet<String>,
}

impl ArchiveState {
    /// Why ocview runs without its archive now (it cannot be opened,
    /// read or written), until it is back.
    pub fn trouble(&self) -> Option<String> {
        self.tap
            .as_ref()
            .and_then(|t| t.trouble())
            .or_else(|| self.list_trouble.clone())
    }

    /// The pins as the archive holds them now; whether that changed.
    pub fn set_pins(&mut self, ids: Vec<String>) -> bool {
        let now: std::collections::HashSet<String> = ids.into_iter().collect();
        std::mem::replace(&mut self.pins, now.clone()) != now
    }

    /// Whether the session `id` (scoped or not) is pinned.
    pub fn pinned(&self, id: &str) -> bool {
        !self.pins.is_empty() && self.pins.contains(crate::model::store::fleet::bare(id))
    }
}

#[derive(Debug, Default)]
pub struct SearchView {
    pub input: String,
    pub hits: Vec<Hit>,
    pub selected: usize,
    /// Why there are no hits, or that some are on their way.
    pub status: Option<String>,
    /// Parts older than this (ms) were not all searched
    /// (`Searched::unchecked_before`).
    pub unchecked_before: Option<i64>,
    /// The query sent last; older answers are dropped.
    generation: u64,
    pub waiting: bool,
}

/// The words and filters of what was typed.
pub fn parse(input: &str, now_ms: i64) -> Result<Query, String> {
    let mut q = Query {
        prefix: true,
        limit: 100,
        ..Default::default()
    };
    let mut words = Vec::new();
    for token in input.split_whitespace() {
        let Some((key, value)) = token.split_once(':') else {
            words.push(token);
            continue;
        };
        let value = Some(value.to_string()).filter(|v| !v.is_empty());
        let time = |v: &Option<String>| {
            v.as_deref()
                .map(|t| crate::archive::query::parse_time(t, now_ms))
                .transpose()
        };
        match key {
            "project" => q.project = value,
            "server" => q.server = value,
            "model" => q.model = value,
            "agent" => q.agent = value,
            "tool" => q.tool = value,
            "state" => q.state = value,
            "since" => q.since = time(&value)?,
            "until" => q.until = time(&value)?,
            _ => words.push(token),
        }
    }
    q.text = words.join(" ");
    Ok(q)
}

/// What `F` says in the demo.
pub const DEMO_KEEPS_NONE: &str =
    "the demo keeps no archive: F searches ocview's archive in attach, replay and history";

impl App {
    /// `F`: open the search, or say why there is no archive.
    pub(crate) fn open_archive_search(&mut self) {
        match &self.archive.setting {
            None | Some(Setting::Off) => {
                self.notice = Some(match self.archive.none_because {
                    Some(why) => why.into(),
                    None => "no archive (--no-archive, archive = false or OCVIEW_ARCHIVE=off): nothing to search"
                        .into(),
                });
            }
            Some(_) => {
                self.overlay = Some(Overlay::ArchiveSearch);
                if self.archive.view.input.is_empty() {
                    self.archive.view.status = Some(HOW_TO.into());
                }
            }
        }
    }

    fn reader(&mut self) -> Option<&reader::Reader> {
        let setting = self.archive.setting.clone()?;
        if self.archive.reader.is_none() {
            let done = self.verbs.done_sender();
            self.archive.reader = Some(reader::Reader::spawn(
                setting,
                Box::new(move |reply| {
                    let _ = done.send(crate::app::msg::AppMsg::Archive(reply));
                }),
            ));
        }
        self.archive.reader.as_ref()
    }

    pub(crate) fn send_archive_query(&mut self) {
        let query = parse(&self.archive.view.input, self.clock_ms());
        let view = &mut self.archive.view;
        view.generation += 1;
        let generation = view.generation;
        match query {
            Err(e) => {
                view.status = Some(e);
                view.waiting = false;
            }
            Ok(q) if q.terms().is_empty() => {
                view.hits.clear();
                view.selected = 0;
                view.waiting = false;
                view.status = Some(HOW_TO.into());
            }
            Ok(q) => {
                view.waiting = true;
                if let Some(reader) = self.reader() {
                    reader.search(generation, q);
                }
            }
        }
    }

    /// Open a hit's session: at once when the viewer has it, else loaded
    /// from the archive first.
    pub(crate) fn open_archived(&mut self, mut hit: Hit) {
        if self.live.is_some() {
            // Beside live sources: the live copy when a server serves the
            // session, else the archive's, never asked of a server.
            let archived = archived_id(&hit);
            if let Some(s) = crate::app::session_tree::copies::shown_copy(&self.store, &archived) {
                hit.session_id = s.info.id.clone();
                return self.show_hit(&hit);
            }
        }
        if self.store.session(&hit.session_id).is_some() && self.live.is_none() {
            self.show_hit(&hit);
        } else if let Some(reader) = self.reader() {
            reader.open(hit);
            self.notice = Some("opening the archived session…".into());
        }
    }

    /// An answer from the archive's threads.
    pub(crate) fn on_archive(&mut self, reply: Reply) {
        match reply {
            Reply::Said(text) => {
                // A pin changed by the writer comes before its word.
                if let Some(pins) = self.archive.tap.as_ref().and_then(|t| t.take_pins()) {
                    self.archive.set_pins(pins);
                }
                tracing::warn!("{text}");
                self.notice = Some(crate::model::wire::sanitize::line(&text).into_owned());
            }
            Reply::Progress(line) => {
                let own = |n: &String| n.starts_with(PROGRESS_PREFIX);
                if self.notice.as_ref().is_none_or(own) {
                    self.notice = line.map(|l| crate::model::wire::sanitize::line(&l).into_owned());
                }
            }
            Reply::Found { generation, result } => {
                let view = &mut self.archive.view;
                if generation != view.generation {
                    return;
                }
                view.waiting = false;
                view.unchecked_before = None;
                match result {
                    Ok(found) => {
                        let hits = found.hits;
                        view.status = hits.is_empty().then(|| "nothing found".to_string());
                        view.unchecked_before = found.unchecked_before;
                        view.hits = hits;
                        view.selected = view.selected.min(view.hits.len().saturating_sub(1));
                    }
                    Err(e) => {
                        view.hits.clear();
                        view.status = Some(e);
                    }
                }
            }
            Reply::Opened { mut hit, result } => match result {
                Ok(lines) => {
                    // Beside live sources, under its archive origin: its
                    // pages are then the archive's to give, not a server's.
                    let scope = self.live.is_some().then(|| archive_origin(&hit));
                    self.load_archived(&lines, scope.as_deref());
                    if self.live.is_some() {
                        hit.session_id = archived_id(&hit);
                        self.panes
                            .list
                            .folded
                            .remove(&crate::app::session_tree::groups::archive_group_key());
                    }
                    if self.notice.as_deref() == Some("opening the archived session…") {
                        self.notice = None;
                    }
                    self.show_hit(&hit);
                }
                Err(e) => self.notice = Some(e),
            },
        }
    }

    /// A session's state from the archive, through the one reducer.
    fn load_archived(&mut self, lines: &[String], scope: Option<&str>) {
        use crate::source::decode::apply::{apply_record, decode_record};
        use crate::source::msg::SourceMsg;
        for (i, line) in lines.iter().enumerate() {
            let record = decode_record(line.as_bytes(), i as u64 + 1, true);
            let record = match scope {
                None => record,
                Some(key) => {
                    let msg = SourceMsg::Record(Box::new(record));
                    match crate::source::live::fleet::scope_msg(msg, key) {
                        SourceMsg::Record(scoped) => *scoped,
                        _ => continue,
                    }
                }
            };
            apply_record(
                record,
                &mut self.store,
                &mut crate::model::NoObserver,
                &mut self.stats,
            );
        }
    }
}

/// The fleet key of the archive origin a hit's session was kept from.
fn archive_origin(hit: &Hit) -> String {
    crate::archive::list_reader::origin_key(
        hit.host.as_deref(),
        hit.server.as_deref(),
        hit.file.as_deref(),
    )
}

/// A hit's session as the archive's list names it beside live sources.
fn archived_id(hit: &Hit) -> String {
    crate::model::store::fleet::scoped(&hit.session_id, &archive_origin(hit))
}

impl Component for SearchView {
    /// Letters type the query (each asks again); the list keys move
    /// through the hits, enter opens one, esc closes.
    fn key(&mut self, key: KeyEvent, cx: &Cx<'_>) -> Handled {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if plain => {
                self.input.push(c);
                return Handled::Asks(Ask::ArchiveQuery);
            }
            KeyCode::Backspace => {
                self.input.pop();
                return Handled::Asks(Ask::ArchiveQuery);
            }
            KeyCode::Esc => return Handled::Asks(Ask::Close),
            _ => {}
        }
        let last = self.hits.len().saturating_sub(1);
        match cx.only(Context::List, &key) {
            Some(Action::ListUp) => self.selected = self.selected.saturating_sub(1),
            Some(Action::ListDown) => self.selected = (self.selected + 1).min(last),
            Some(Action::ListPageUp) => self.selected = self.selected.saturating_sub(10),
            Some(Action::ListPageDown) => self.selected = (self.selected + 10).min(last),
            Some(Action::ListChoose) => {
                if let Some(hit) = self.hits.get(self.selected) {
                    return Handled::Asks(Ask::OpenHit(Box::new(hit.clone())));
                }
            }
            Some(Action::ListClose) => return Handled::Asks(Ask::Close),
            _ => {}
        }
        Handled::Used
    }
}
