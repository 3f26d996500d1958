//! The application: state, the messages that change it, and the loop.
//!
//! Everything is a message. Source records go through the one reducer
//! (`Store::apply`, via `apply_record`); keys and mouse events change view
//! state. Handlers never draw: they mark the app dirty, and the loop's frame
//! gate decides when `prepare` and `draw::draw` run.

pub mod ages;
pub mod archive_fill;
pub mod attention;
pub mod boxes;
pub mod component;
pub mod config;
pub mod draw;
pub mod frame_gate;
pub mod keymap;
pub mod launch;
pub mod look;
pub mod msg;
pub mod notice;
pub mod overlays;
pub mod paging;
pub mod panes;
pub mod router;
pub mod run;
pub mod session_tree;
pub mod sources;
pub mod terminal;
pub mod verbs;
pub mod view;

use std::collections::{HashMap, HashSet};

use ratatui::layout::Rect;

use crate::app::panes::turn_view::layout::{LayoutCtx, TurnState};
use crate::model::{SessionStatus, Store};
use crate::render::blocks::{Detail, RenderCtx};
use crate::render::highlight::Highlighter;
use crate::render::render_cache::RenderCache;
use crate::render::theme::Theme;
use crate::source::IngestStats;
use crate::source::live::LiveCommand;
use crate::source::msg::SourceState;
use config::Config;
use draw::Areas;
use keymap::{Context, Keymap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Sessions,
    Turns,
    /// The prompt bar, answering.
    Prompt,
}

impl Focus {
    /// Whose keys the focused pane reads.
    pub fn context(self) -> Context {
        match self {
            Focus::Sessions => Context::Sessions,
            Focus::Turns => Context::Turns,
            Focus::Prompt => Context::Global,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    Help,
    /// The side panel over the turns, on terminals too narrow to show it beside.
    SidePanel,
    /// Modified files and the chosen file's diff, full screen.
    Diffs,
    /// The current prompt's whole content (a long command, a big diff).
    PromptView,
    /// The session's prompts with their times, to jump to one.
    Prompts,
    /// The theme list, previewing the highlighted one.
    Themes,
    /// The last record a source could not use.
    BadRecord,
    /// What the sessions in opencode's database cost, drawn.
    Usage,
    /// Search across the archive.
    ArchiveSearch,
    /// The answers on record.
    Audit,
    /// The insights: failures by model and tool, waits on people.
    Insights,
}

/// Where the events come from, for the status line.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// "replay demo", "replay session.jsonl".
    pub label: String,
    pub state: SourceState,
    /// A recording has a clock of its own: relative times follow it.
    pub recorded: bool,
}

pub struct App {
    pub store: Store,
    pub stats: IngestStats,
    pub config: Config,
    pub(crate) keymap: Keymap,
    pub theme: Theme,
    /// Where the theme came from and how it is read (variant, depth).
    pub look: look::Look,
    pub source: SourceInfo,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    /// Each pane's own state.
    pub panes: panes::Panes,
    /// Each overlay's own state, open or not.
    pub overlays: overlays::Overlays,
    /// The selected session's id, or in a fleet a heading's fold key
    /// (`crate::app::session_tree::groups::is_group_key`).
    pub selected: Option<String>,
    /// Sessions opened from a parent (Enter on a task card), to go back.
    pub(crate) history: Vec<String>,
    pub cache: RenderCache,
    pub quit: bool,
    /// Wall-clock time of the current frame, ms since the epoch.
    pub now_ms: i64,
    /// The latest event time seen (the recording's clock in replay).
    pub(crate) event_clock_ms: i64,
    /// Laid out by `prepare`, read by drawing and mouse hit-testing.
    pub areas: Areas,
    /// Frames drawn, for tests and the frame-count benchmark.
    pub(crate) frames: u64,
    pub highlighter: Highlighter,
    /// How much of each card shows by default.
    pub(crate) detail: Detail,
    /// Tool calls a pending permission or question names (laid out by `prepare`).
    pub(crate) awaiting: HashSet<String>,
    /// Asks the live source for data (`None` in replay).
    pub live: Option<tokio::sync::mpsc::UnboundedSender<LiveCommand>>,
    /// Sessions whose messages were asked for.
    requested: HashSet<String>,
    /// Why `attach --record` stopped recording, once it has: said in the
    /// status line for as long as the viewer runs.
    pub(crate) recording_stopped: Option<String>,
    /// How far back each session's history is loaded (live).
    histories: HashMap<String, paging::History>,
    /// Live sessions opened, archived whole in the background.
    pub(crate) archive_fills: archive_fill::Fills,
    /// Where answers go (`None`: replay or read-only).
    pub replies: Option<tokio::sync::mpsc::UnboundedSender<crate::source::live::reply::Reply>>,
    pub attention: attention::Attention,
    /// A recording in progress: the bytes written so far.
    pub(crate) recording: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Its size as last shown ("1.4 KB").
    pub(crate) recording_drawn: Option<String>,
    /// The last problem a source reported without failing, or what a key
    /// did in passing; it leaves after a while (`notice.rs`).
    pub notice: Option<String>,
    /// The archive: where, its writer, its search overlay.
    pub archive: overlays::archive_search::ArchiveState,
    pub(crate) notice_clock: notice::NoticeClock,
    /// The selected session's modified files, and the revision they are of.
    pub(crate) files: (String, u64, Vec<(String, u64, u64)>),
    /// Playing a recording file (`None` live, or for a stream).
    pub player: Option<crate::app::panes::status_line::player::Player>,
    /// How a recording file starts once indexed.
    pub play: crate::app::panes::status_line::player::PlayOptions,
    /// Wall-clock times on every message (`w`).
    pub(crate) show_times: bool,
    /// The user moved around (following attention stops).
    pub(crate) navigated: bool,
    /// The session whose messages changed last.
    pub(crate) last_active: Option<String>,
    /// `--session ID`: the session to open once it is known.
    pub wanted_session: Option<String>,
    /// Copy, open and abort: their requests to the loop and what they did.
    pub verbs: verbs::Verbs,
    /// Live sessions' message counts from opencode's database on this
    /// machine (`launch` starts its reader when the server is local).
    pub message_totals: crate::source::opencode_db::totals::MessageTotals,
}

impl App {
    pub fn new(
        config: Config,
        source_label: impl Into<String>,
        recorded: bool,
    ) -> Result<App, String> {
        let prompt_arming = std::time::Duration::from_millis(config.prompt_arming_ms);
        let keymap = config.keymap()?;
        let look = look::Look::new(&config);
        let (theme, fallback) = look.load_chosen()?;
        let fallback = fallback.map(|notice| match keymap.hint(keymap::Action::Themes) {
            Some(key) => format!("{notice} ({key} picks another)"),
            None => notice,
        });
        let highlighter = Highlighter::spawn(&theme.syntax);
        let clipboard = verbs::clipboard::Clipboard::detect(config.clipboard);
        Ok(App {
            store: Store::new(),
            stats: IngestStats::default(),
            config,
            keymap,
            notice: fallback.or_else(|| look::warning_notice(&theme)),
            notice_clock: Default::default(),
            archive: Default::default(),
            recording: None,
            recording_drawn: None,
            theme,
            look,
            source: SourceInfo {
                label: source_label.into(),
                state: SourceState::Playing,
                recorded,
            },
            focus: Focus::Sessions,
            overlay: None,
            panes: panes::Panes::new(prompt_arming),
            overlays: Default::default(),
            selected: None,
            history: Vec::new(),
            cache: RenderCache::default(),
            quit: false,
            now_ms: 0,
            event_clock_ms: 0,
            areas: Areas::default(),
            frames: 0,
            highlighter,
            detail: Detail::Normal,
            awaiting: HashSet::new(),
            files: Default::default(),
            live: None,
            requested: HashSet::new(),
            histories: HashMap::new(),
            archive_fills: Default::default(),
            recording_stopped: None,
            replies: None,
            attention: Default::default(),
            player: None,
            play: Default::default(),
            show_times: false,
            navigated: false,
            last_active: None,
            wanted_session: None,
            verbs: verbs::Verbs::new(clipboard),
            message_totals: Default::default(),
        })
    }

    /// The time relative ages are measured against: the recording's clock
    /// in replay (so "2m ago" means two minutes before the last event), the
    /// wall clock live.
    pub fn clock_ms(&self) -> i64 {
        if self.source.recorded && self.event_clock_ms > 0 {
            self.event_clock_ms
        } else {
            self.now_ms
        }
    }

    /// Something animates (a spinner, a retry countdown): the loop ticks.
    pub fn animating(&self) -> bool {
        self.player.as_ref().is_some_and(|p| p.clock.playing())
            || self.prompt_arming(tokio::time::Instant::now())
            || self
                .store
                .sessions()
                .iter()
                .any(|s| matches!(s.status, SessionStatus::Busy | SessionStatus::Retry { .. }))
    }

    pub fn context(&self) -> Context {
        self.focus.context()
    }

    /// The selected session's id (`None` when a fleet's heading is selected).
    pub fn selected_session_id(&self) -> Option<String> {
        self.selected
            .clone()
            .filter(|id| !crate::app::session_tree::groups::is_group_key(id))
    }

    pub fn selected_session(&self) -> Option<&crate::model::Session> {
        self.selected
            .as_deref()
            .and_then(|id| self.store.session(id))
    }

    pub fn turn_state(&self) -> Option<&TurnState> {
        self.selected
            .as_ref()
            .and_then(|id| self.panes.turns.get(id))
    }

    pub fn turn_state_mut(&mut self) -> Option<&mut TurnState> {
        let id = self.selected.clone()?;
        Some(self.panes.turns.entry(id).or_default())
    }

    /// The session list's rows, from the store as it is now.
    fn lay_out_rows(&mut self) {
        let list = &mut self.panes.list;
        (list.rows, list.listed) = crate::app::session_tree::rows::rows_and_listed(
            &self.store,
            &list.folded,
            &list.filter,
            &self.overlays.search.list.counts,
        );
        crate::app::session_tree::rows::name_live_heading(
            &mut list.rows,
            list.live_heading.as_deref(),
        );
        list.rows_revision = Some(self.store.revision());
    }

    /// Before input acts on the list: rows laid out again when an event
    /// changed the store since the frame (their indexes may point at
    /// other sessions now, or past the end).
    pub(crate) fn rows_for_input(&mut self) {
        let stale = self
            .panes
            .list
            .rows_revision
            .is_some_and(|r| r != self.store.revision());
        if stale {
            self.lay_out_rows();
        }
    }

    /// Lay out everything for a frame of size `area`: pane rectangles,
    /// session rows, the visible turn lines. The only step that renders
    /// (into the cache); drawing afterwards only reads.
    pub fn prepare(&mut self, area: Rect) {
        self.prepare_player(tokio::time::Instant::now());
        self.refresh_searches();
        self.poll_usage();
        self.follow_attention();
        self.show_the_shown_copy();
        self.lay_out_rows();
        self.refresh_modified_files();
        self.areas = draw::layout(area, self);
        self.note_prompt_visible(tokio::time::Instant::now());
        self.overlays.jump_list.page = overlays::jump_list::draw::rows(area);
        self.keep_selection_visible();
        self.awaiting = self
            .store
            .pending_prompts()
            .filter_map(|p| p.request.tool().map(|t| t.call_id.clone()))
            .collect();
        self.cache.set_generation(self.highlighter.generation());
        // A fleet's heading selected: no session to lay out or load.
        let Some(id) = self
            .selected
            .clone()
            .filter(|id| !crate::app::session_tree::groups::is_group_key(id))
        else {
            return;
        };
        // The database's count of the session on screen (a send, no wait).
        if self.live.is_some() {
            self.message_totals.watch(&id);
        }
        // Taken out for the layout, which reads everything else.
        let mut state = self.panes.turns.remove(&id).unwrap_or_default();
        let mut cache = std::mem::take(&mut self.cache);
        if let Some(session) = self.store.session(&id) {
            let turn_area = crate::app::boxes::turn_inner(self.areas.turns);
            let ctx = LayoutCtx {
                render: self.render_ctx(session, turn_area.width),
                collapse_reasoning: self.config.collapse_reasoning,
                search: self.search_marks(&id),
            };
            state.prepare(session, &mut cache, turn_area.height as usize, &ctx);
        }
        self.cache = cache;
        self.panes.turns.insert(id, state);
        self.request_loads();
        self.fill_archive();
    }

    /// A selection on a copy the list does not show (the archive's or the
    /// database's, of a session a server serves) moves to the copy shown,
    /// so the server's messages are the ones asked for and drawn.
    fn show_the_shown_copy(&mut self) {
        use crate::app::session_tree::{copies, groups};
        let Some(id) = self
            .selected
            .as_deref()
            .filter(|id| !copies::is_live(id) && !groups::is_group_key(id))
        else {
            return;
        };
        if let Some(shown) = copies::shown_copy(&self.store, id)
            && shown.info.id != id
        {
            let shown = shown.info.id.clone();
            let copy = self.selected.replace(shown);
            if let Some(copy) = copy {
                self.panes.turns.remove(&copy);
                self.history.retain(|h| *h != copy);
            }
        }
    }

    /// The selected session's modified files, before the layout (the side
    /// panel shows when there are some).
    fn refresh_modified_files(&mut self) {
        let Some(id) = self.selected.as_deref() else {
            return;
        };
        if let Some(session) = self.store.session(id)
            && (self.files.0 != id || self.files.1 != session.revision)
        {
            // Only when the session changed: it walks every message.
            self.files = (id.to_string(), session.revision, session.modified_files());
        }
    }

    /// The search matches to mark in a session's turn view.
    fn search_marks(
        &self,
        session_id: &str,
    ) -> Option<crate::app::panes::turn_view::layout::SearchMarks<'_>> {
        let search = self.overlays.search.session.as_ref()?;
        if search.session_id != session_id {
            return None;
        }
        let query = search.query.as_ref()?;
        let current = search
            .current
            .and_then(|i| search.hits.get(i))
            .map(|h| (h.part_id.as_str(), h.ordinal));
        Some(crate::app::panes::turn_view::layout::SearchMarks {
            query,
            current,
            style: self.theme.style(crate::render::theme::Role::Match),
            current_style: self.theme.style(crate::render::theme::Role::MatchCurrent),
        })
    }

    /// What rendering a session's blocks needs, at a width.
    pub fn render_ctx<'a>(
        &'a self,
        session: &'a crate::model::Session,
        width: u16,
    ) -> RenderCtx<'a> {
        RenderCtx {
            theme: &self.theme,
            width,
            directory: session.info.directory.as_deref(),
            highlighter: &self.highlighter,
            awaiting: &self.awaiting,
            now_ms: self.clock_ms(),
            detail: self.detail,
            store: Some(&self.store),
            pending_highlight: Default::default(),
            wall_clock: self.show_times.then(|| self.clock_ms()),
            ended: self.source.state == crate::source::msg::SourceState::Ended,
        }
    }

    fn keep_selection_visible(&mut self) {
        let height = crate::app::boxes::list_inner(self.areas.sessions).height as usize;
        self.panes.list.offset = crate::app::panes::session_list::width::offset_keeping(
            self.selected_row(),
            self.panes.list.offset,
            self.panes.list.rows.len(),
            height,
        );
    }

    pub fn selected_row(&self) -> Option<usize> {
        self.panes
            .list
            .selected_row(&self.store, self.selected.as_deref())
    }

    /// Whether the session list shows whole at this width (else a bar).
    pub fn list_whole(&self, width: u16) -> bool {
        self.panes
            .list_shown
            .unwrap_or(width >= self.config.session_list_fold_width)
    }

    /// Whether the side panel shows beside the turns at this width.
    pub fn side_panel_docked(&self, width: u16) -> bool {
        width >= self.config.side_panel_min_width
    }
}

impl App {
    /// The size of the recording in progress, as the status line shows it.
    pub fn recording_size_shown(&self) -> Option<String> {
        let bytes = self.recording.as_ref()?;
        Some(crate::render::format::bytes(
            bytes.load(std::sync::atomic::Ordering::Relaxed),
        ))
    }
}
