//! The session list of a fleet: a heading per server (in the order they
//! joined, with its state), under it a heading per project, under that the
//! session tree. Every heading counts what its sessions are doing, can be
//! selected, and folds.

use crate::app::session_tree::copies::{key_kind, shadowed};
use crate::archive::list_reader::{ARCHIVE_PREFIX, is_archive_key, origin_heading};
use crate::model::store::fleet::{self, ServerState};
use crate::model::{Session, SessionStatus, Store};
use crate::source::opencode_db::history::HISTORY_KEY;

/// What the sessions of a group are doing.
/// One row of the list: a session, or a heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Index into `Store::sessions()`.
    pub index: usize,
    pub depth: u16,
    pub has_children: bool,
    pub folded: bool,
    /// A prompt waits in this session or below it.
    pub badge: bool,
    /// The prompt waits in this very session.
    pub own_prompt: bool,
    /// A project heading (when sessions of several projects are listed);
    /// `index` then points at the group's first session.
    pub header: Option<String>,
    /// In a fleet, a heading is a group's: selectable, foldable, counted
    /// (`has_children` and `folded` then say the group's).
    pub group: Option<Group>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub sessions: usize,
    /// Busy or retrying.
    pub busy: usize,
    /// Prompts waiting for an answer, in any session of the group.
    pub asking: usize,
    /// Failed, and idle since.
    pub failed: usize,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.sessions += other.sessions;
        self.busy += other.busy;
        self.asking += other.asking;
        self.failed += other.failed;
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// A server's heading, with its state (`None`: sessions name a server
    /// the store does not list).
    Server(Option<ServerState>),
    Project,
}

/// A heading of the fleet's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its fold key, also `App::selected` while the heading is selected.
    pub key: String,
    pub level: Level,
    pub counts: Counts,
}

impl Group {
    /// The state a server heading shows: an archive's origin is no server
    /// to be live or not.
    /// (`None`: nothing to say; opencode's database read as it should is
    /// not "live", it is just there.)
    pub fn state_label(&self, state: &ServerState) -> Option<String> {
        let quiet = self.server().is_some_and(is_archive_key)
            || (self.server() == Some(HISTORY_KEY) && *state == ServerState::Live);
        (!quiet).then(|| state.label())
    }

    /// The server a server heading stands for.
    pub fn server(&self) -> Option<&str> {
        self.key.strip_prefix(SERVER_KEY)
    }
}

/// Fold keys begin with NUL, which no session id holds: one set keeps the
/// folds of sessions and of groups, and a selection tells them apart.
const SERVER_KEY: &str = "\0server\0";
const PROJECT_KEY: &str = "\0project\0";

pub fn is_group_key(id: &str) -> bool {
    id.starts_with('\0')
}

/// The fold key of the "Archive" heading (folded when a viewer starts).
pub fn archive_group_key() -> String {
    server_key(ARCHIVE_PREFIX)
}

fn server_key(server: &str) -> String {
    format!("{SERVER_KEY}{server}")
}

pub(crate) fn project_key(server: &str, dir: &str) -> String {
    format!("{PROJECT_KEY}{server}\0{dir}")
}

/// Whether a fold key is the server's: its heading's, a project's under
/// it, or one of its sessions'.
pub fn of_server(fold_key: &str, server: &str) -> bool {
    if !is_group_key(fold_key) {
        return fleet::server_of(fold_key) == Some(server);
    }
    fold_key == server_key(server)
        || fold_key
            .strip_prefix(PROJECT_KEY)
            .and_then(|rest| rest.strip_prefix(server))
            .is_some_and(|rest| rest.starts_with('\0'))
}

/// Whether the store holds a fleet: servers reported, or scoped ids (a
/// recording whose server reports were cut off).
pub fn is_fleet(store: &Store) -> bool {
    !store.servers().is_empty()
        || store
            .sessions()
            .iter()
            .any(|s| fleet::server_of(&s.info.id).is_some())
}

struct ServerGroup {
    key: String,
    state: Option<ServerState>,
    projects: Vec<ProjectGroup>,
}

struct ProjectGroup {
    dir: String,
    /// When its most recently active session was last active.
    newest: i64,
    counts: Counts,
    rows: Vec<SessionRow>,
}

/// The server and project a session is listed under: its root's (a child
/// follows its parent whatever its own directory).
fn home(store: &Store, session: &Session) -> (String, String) {
    let mut root = session;
    // Bounded: a malformed parent cycle must not hang the UI.
    for _ in 0..64 {
        match root
            .info
            .parent_id
            .as_deref()
            .filter(|p| *p != root.info.id)
            .and_then(|p| super::copies::shown_copy(store, p))
        {
            Some(parent) => root = parent,
            None => break,
        }
    }
    let key = fleet::server_of(&root.info.id).unwrap_or_default();
    // Every archive origin under one "Archive" heading, each origin (its
    // machine and server, or file) a group of its own there.
    if let Some(origin) = origin_heading(key) {
        return (ARCHIVE_PREFIX.to_string(), origin.to_string());
    }
    let dir = root
        .project_directory
        .clone()
        .or_else(|| root.info.directory.clone())
        .or_else(|| store.server(key).and_then(|s| s.directory.clone()))
        .unwrap_or_default();
    (key.to_string(), dir)
}

/// Where a (server, project) group is, made when new.
fn slot(servers: &mut Vec<ServerGroup>, key: &str, dir: &str) -> (usize, usize) {
    let a = match servers.iter().position(|s| s.key == key) {
        Some(a) => a,
        None => {
            servers.push(ServerGroup {
                key: key.to_string(),
                state: None,
                projects: Vec::new(),
            });
            servers.len() - 1
        }
    };
    let projects = &mut servers[a].projects;
    let b = match projects.iter().position(|p| p.dir == dir) {
        Some(b) => b,
        None => {
            projects.push(ProjectGroup {
                dir: dir.to_string(),
                newest: i64::MIN,
                counts: Counts::default(),
                rows: Vec::new(),
            });
            projects.len() - 1
        }
    };
    (a, b)
}

/// Each session into its server's and project's group, counted there
/// (busy, failed, asking; a session shown live elsewhere is not counted
/// twice): where each one went, by its index in the store.
fn count_into(store: &Store, servers: &mut Vec<ServerGroup>) -> Vec<(usize, usize)> {
    let sessions = store.sessions();
    let hidden = shadowed(store);
    let mut place = Vec::with_capacity(sessions.len());
    for (i, s) in sessions.iter().enumerate() {
        let (key, dir) = home(store, s);
        let (a, b) = slot(servers, &key, &dir);
        if hidden.contains(&i) {
            place.push((a, b));
            continue;
        }
        let project = &mut servers[a].projects[b];
        project.newest = project.newest.max(super::copies::active_at(s));
        let counts = &mut project.counts;
        counts.sessions += 1;
        if matches!(s.status, SessionStatus::Busy | SessionStatus::Retry { .. }) {
            counts.busy += 1;
        } else if s.error.is_some() && s.status == SessionStatus::Idle {
            counts.failed += 1;
        }
        place.push((a, b));
    }
    for p in store.pending_prompts() {
        if let Ok(i) = store.session_index(p.request.session_id()) {
            let (a, b) = place[i];
            servers[a].projects[b].counts.asking += 1;
        }
    }
    place
}

/// A server's heading: its key, or what the history and the archive are
/// called.
fn server_heading(key: &str) -> String {
    if key.is_empty() {
        "(no server)".to_string()
    } else if key == HISTORY_KEY {
        "history".to_string()
    } else if key == ARCHIVE_PREFIX {
        "Archive".to_string()
    } else if let Some(origin) = origin_heading(key) {
        origin.to_string()
    } else {
        key.to_string()
    }
}

/// The session tree's rows (`tree`, already filtered and folded) under
/// their server's and project's headings. Projects come in order of their
/// most recently active session; counts take every session of a
/// group, shown or not. With a filter, folds are ignored and groups with
/// no match left out.
pub fn group(
    store: &Store,
    tree: Vec<SessionRow>,
    folded: &std::collections::HashSet<String>,
    filtering: bool,
) -> Vec<SessionRow> {
    let mut servers: Vec<ServerGroup> = store
        .servers()
        .iter()
        .filter(|s| !is_archive_key(&s.key))
        .map(|s| ServerGroup {
            key: s.key.clone(),
            state: Some(s.state.clone()),
            projects: Vec::new(),
        })
        .collect();
    let place = count_into(store, &mut servers);
    // A child row follows its root's, as the tree laid them out.
    let mut at = None;
    for row in tree {
        if row.depth == 0 || at.is_none() {
            at = place.get(row.index).copied();
        }
        if let Some((a, b)) = at {
            servers[a].projects[b].rows.push(row);
        }
    }

    // The database's sessions after every live server's, the archive's
    // after those; a server's projects most recently active first.
    servers.sort_by_key(|s| key_kind(&s.key));
    for server in &mut servers {
        server.projects.sort_by_key(|p| std::cmp::Reverse(p.newest));
    }
    let mut out = Vec::new();
    for server in servers {
        let kept = server.key == HISTORY_KEY || is_archive_key(&server.key);
        if kept && server.projects.iter().all(|p| p.rows.is_empty()) {
            // Nothing there, or all shown live: no empty heading.
            if server.projects.iter().all(|p| p.counts.sessions == 0)
                && server.state.as_ref().is_none_or(|s| s.is_live())
            {
                continue;
            }
        }
        if filtering && server.projects.iter().all(|p| p.rows.is_empty()) {
            continue;
        }
        let mut counts = Counts::default();
        for p in &server.projects {
            counts.add(p.counts);
        }
        let key = server_key(&server.key);
        let server_folded = !filtering && folded.contains(&key);
        let name = server_heading(&server.key);
        let level = Level::Server(server.state);
        out.push(heading(0, name, key, level, counts, server_folded));
        if server_folded {
            continue;
        }
        for p in server.projects {
            // Nothing to show: filtered out, or every session shown live.
            if p.rows.is_empty() && (filtering || p.counts.sessions == 0) {
                continue;
            }
            let key = project_key(&server.key, &p.dir);
            let project_folded = !filtering && folded.contains(&key);
            let dir = if p.dir.is_empty() {
                "(no project)".to_string()
            } else {
                p.dir
            };
            let mut row = heading(1, dir, key, Level::Project, p.counts, project_folded);
            row.index = p.rows.first().map_or(0, |r| r.index);
            out.push(row);
            if !project_folded {
                out.extend(p.rows);
            }
        }
    }
    out
}

fn heading(
    depth: u16,
    text: String,
    key: String,
    level: Level,
    counts: Counts,
    folded: bool,
) -> SessionRow {
    SessionRow {
        index: 0,
        depth,
        has_children: counts.sessions > 0,
        folded: folded && counts.sessions > 0,
        badge: counts.asking > 0,
        own_prompt: false,
        header: Some(text),
        group: Some(Group { key, level, counts }),
    }
}
