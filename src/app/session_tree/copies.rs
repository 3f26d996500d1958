//! Which copy of a session the list shows, and which session a viewer
//! opens on. A session can be in the store up to three times: served live,
//! read from opencode's database (`ses_1@history`), kept by the archive
//! (`ses_1@archive · …`). The live copy is the one shown; the database's
//! comes before the archive's.

use crate::archive::list_reader::is_archive_key;
use crate::model::store::fleet;
use crate::model::{Session, Store};
use crate::source::opencode_db::history::HISTORY_KEY;

/// Where a session of the list comes from, in the order the list shows
/// them: live servers, opencode's database, the archive.
pub(super) fn kind(id: &str) -> u8 {
    fleet::server_of(id).map_or(0, key_kind)
}

pub(super) fn key_kind(key: &str) -> u8 {
    match key {
        HISTORY_KEY => 1,
        key if is_archive_key(key) => 2,
        _ => 0,
    }
}

/// The sessions listed from opencode's database that a live server of
/// the fleet also serves (the same bare id), and those listed from the
/// archive that a live server or the database also lists (the archive
/// may keep a fleet's id whole, `ses_1@a:1`): they show once, live.
pub fn shadowed(store: &Store) -> std::collections::HashSet<usize> {
    let sessions = store.sessions();
    if !sessions.iter().any(|s| kind(&s.info.id) > 0) {
        return Default::default();
    }
    let mut shown: [std::collections::HashSet<&str>; 2] = Default::default();
    for s in sessions {
        let k = kind(&s.info.id);
        if k < 2 {
            let ids = &mut shown[usize::from(k)];
            ids.insert(fleet::bare(&s.info.id));
            ids.insert(&s.info.id);
        }
    }
    sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let bare = fleet::bare(&s.info.id);
            match kind(&s.info.id) {
                1 => shown[0].contains(bare),
                2 => shown[0].contains(bare) || shown[1].contains(bare),
                _ => false,
            }
        })
        .map(|(i, _)| i)
        .collect()
}

/// The copy of `id` the list shows: a live copy when a server serves it,
/// else the database's, else `id` itself.
pub fn shown_copy<'a>(store: &'a Store, id: &str) -> Option<&'a Session> {
    let k = kind(id);
    if k > 0 {
        let bare = fleet::bare(id);
        // A single server's id, or a fleet's id the archive kept whole.
        if kind(bare) == 0
            && let Some(s) = store.session(bare)
        {
            return Some(s);
        }
        let inner = fleet::bare(bare);
        let live = store
            .servers()
            .iter()
            .filter(|s| key_kind(&s.key) == 0)
            .find_map(|s| store.session(&fleet::scoped(inner, &s.key)));
        if live.is_some() {
            return live;
        }
        if inner != bare
            && let Some(s) = store.session(inner)
        {
            return Some(s);
        }
        if k == 2
            && let Some(s) = store.session(&fleet::scoped(inner, HISTORY_KEY))
        {
            return Some(s);
        }
    }
    store.session(id)
}

/// When a session was last active: its own update time, or its newest
/// message's, whichever is later (ids do not order by time: opencode's
/// wrap every 795 days).
pub fn active_at(s: &Session) -> i64 {
    let newest = s
        .messages
        .last()
        .and_then(|m| m.info.completed.or(m.info.created));
    [s.info.time.updated, s.info.time.created, newest]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(i64::MIN)
}

/// The session a viewer opens on: the newest top-level session, live
/// before the database's and the archive's.
pub fn first_choice(store: &Store) -> Option<&Session> {
    store
        .root_sessions()
        .min_by_key(|s| (kind(&s.info.id), std::cmp::Reverse(active_at(s))))
}

/// Whether `id` is served by a live source (not a copy the database or the
/// archive lists).
pub fn is_live(id: &str) -> bool {
    kind(id) == 0
}

/// Whether `id` is a copy the archive lists.
pub fn is_archived(id: &str) -> bool {
    kind(id) == 2
}
