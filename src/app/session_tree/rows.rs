//! The session list as rows: root sessions newest first, child sessions
//! (parentID) indented under their parent, folds, the title filter, and the
//! "a prompt waits here" badge that marks every ancestor of a waiting child.
//! A fleet's rows go under server and project headings (`groups`).

use std::collections::{HashMap, HashSet};

use crate::app::session_tree::groups;
use crate::model::{Session, Store};

pub use super::groups::SessionRow;

/// Sessions with a pending prompt, and all their ancestors.
fn badged(store: &Store) -> (HashSet<String>, HashSet<String>) {
    let own: HashSet<String> = store
        .pending_prompts()
        .map(|p| p.request.session_id().to_string())
        .collect();
    let mut all = HashSet::new();
    for id in &own {
        let mut cur = Some(id.clone());
        // Bounded: a malformed parent cycle must not hang the UI.
        for _ in 0..64 {
            let Some(c) = cur else { break };
            if !all.insert(c.clone()) {
                break;
            }
            cur = store.session(&c).and_then(|s| s.info.parent_id.clone());
        }
    }
    (own, all)
}

/// The visible rows. With a filter, a session shows when its title matches,
/// its content holds hits (`hits`, counted by the search worker), or a
/// descendant's does; folds are ignored so matches are never hidden.
pub fn rows(
    store: &Store,
    folded: &HashSet<String>,
    filter: &str,
    hits: &HashMap<String, usize>,
) -> Vec<SessionRow> {
    rows_and_listed(store, folded, filter, hits).0
}

/// [`rows`], and how many sessions the list shows, folded or not (a
/// session shown live counts once, not with its copies): "Sessions N".
pub fn rows_and_listed(
    store: &Store,
    folded: &HashSet<String>,
    filter: &str,
    hits: &HashMap<String, usize>,
) -> (Vec<SessionRow>, usize) {
    let sessions = store.sessions();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    // A parent shown live in place of its database copy takes that copy's
    // children too.
    let parent_of = |s: &Session| -> Option<&str> {
        s.info
            .parent_id
            .as_deref()
            .filter(|p| *p != s.info.id)
            .and_then(|p| super::copies::shown_copy(store, p))
            .map(|p| p.info.id.as_str())
            .filter(|p| *p != s.info.id)
    };
    for (i, s) in sessions.iter().enumerate() {
        match parent_of(s) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    // Most recently active first (ids do not order by time); children
    // read best oldest first, in the order they were spawned.
    roots.sort_by_cached_key(|&i| std::cmp::Reverse(super::copies::active_at(&sessions[i])));
    for list in children.values_mut() {
        list.sort_by_cached_key(|&i| sessions[i].info.time.created.unwrap_or(i64::MAX));
    }
    let needle = filter.to_lowercase();
    let matches = |i: usize| {
        needle.is_empty()
            || sessions[i].title().to_lowercase().contains(&needle)
            || hits
                .get(sessions[i].info.id.as_str())
                .is_some_and(|&n| n > 0)
    };
    let (own, badge) = badged(store);

    // Which sessions are kept under the filter: matches and their ancestors.
    let keep = (!needle.is_empty()).then(|| kept(sessions, &matches, &parent_of));

    // Sessions in a parent cycle are reachable from no root: list them as
    // roots rather than lose them.
    let lost = unreachable(sessions, &roots, &children);
    roots.extend(lost);

    let mut out = Vec::new();
    let mut stack: Vec<(usize, u16)> = roots.iter().rev().map(|&i| (i, 0)).collect();
    // A database session that a live server also serves shows once, live.
    let mut seen = super::copies::shadowed(store);
    let listed = sessions.len() - seen.len();
    while let Some((i, depth)) = stack.pop() {
        if !seen.insert(i) || keep.as_ref().is_some_and(|k| !k.contains(&i)) {
            continue;
        }
        let id = sessions[i].info.id.as_str();
        let kids = children.get(id).map(Vec::as_slice).unwrap_or(&[]);
        let is_folded = keep.is_none() && folded.contains(id);
        out.push(SessionRow {
            index: i,
            depth,
            has_children: !kids.is_empty(),
            folded: is_folded && !kids.is_empty(),
            badge: badge.contains(id),
            own_prompt: own.contains(id),
            header: None,
            group: None,
        });
        if !is_folded {
            for &k in kids.iter().rev() {
                stack.push((k, depth + 1));
            }
        }
    }
    let rows = if groups::is_fleet(store) {
        groups::group(store, out, folded, !needle.is_empty())
    } else {
        group_by_project(store, out)
    };
    (rows, listed)
}

/// The sessions that match, and their ancestors.
fn kept<'s>(
    sessions: &'s [std::sync::Arc<Session>],
    matches: &dyn Fn(usize) -> bool,
    parent_of: &dyn Fn(&'s Session) -> Option<&'s str>,
) -> HashSet<usize> {
    let index_of: HashMap<&str, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.info.id.as_str(), i))
        .collect();
    let mut set = HashSet::new();
    for i in (0..sessions.len()).filter(|&i| matches(i)) {
        let mut cur = Some(i);
        for _ in 0..64 {
            let Some(c) = cur else { break };
            if !set.insert(c) {
                break;
            }
            cur = parent_of(&sessions[c]).and_then(|p| index_of.get(p).copied());
        }
    }
    set
}

/// The sessions no root leads to (a parent cycle), in order.
fn unreachable(
    sessions: &[std::sync::Arc<Session>],
    roots: &[usize],
    children: &HashMap<&str, Vec<usize>>,
) -> Vec<usize> {
    let mut reachable = HashSet::new();
    let mut walk: Vec<usize> = roots.to_vec();
    while let Some(i) = walk.pop() {
        if reachable.insert(i) {
            walk.extend(
                children
                    .get(sessions[i].info.id.as_str())
                    .into_iter()
                    .flatten(),
            );
        }
    }
    (0..sessions.len())
        .filter(|i| !reachable.contains(i))
        .collect()
}

/// Name the heading of the sessions no server scopes (a single server's,
/// listed beside the archive's) `name`, in place of "(no server)".
pub fn name_live_heading(rows: &mut [SessionRow], name: Option<&str>) {
    let Some(name) = name else { return };
    let live = rows.iter_mut().find(|r| {
        r.group
            .as_ref()
            .is_some_and(|g| matches!(g.level, groups::Level::Server(_)) && g.server() == Some(""))
    });
    if let Some(row) = live {
        row.header = Some(name.to_string());
    }
}

/// With sessions of several projects (`attach --all`), each project's
/// sessions under a heading, projects in order of their newest session.
fn group_by_project(store: &Store, rows: Vec<SessionRow>) -> Vec<SessionRow> {
    let sessions = store.sessions();
    let key = |i: usize| {
        let s = &sessions[i];
        s.project_directory
            .clone()
            .or_else(|| s.info.directory.clone())
            .unwrap_or_default()
    };
    let mut groups: Vec<(String, Vec<SessionRow>)> = Vec::new();
    for row in rows {
        let k = if row.depth == 0 {
            key(row.index)
        } else {
            groups.last().map(|g| g.0.clone()).unwrap_or_default()
        };
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1.push(row),
            None => groups.push((k, vec![row])),
        }
    }
    if groups.len() < 2 {
        return groups.into_iter().flat_map(|g| g.1).collect();
    }
    let mut out = Vec::new();
    for (dir, rows) in groups {
        let first = rows[0].index;
        let badge = rows.iter().any(|r| r.badge);
        out.push(SessionRow {
            index: first,
            depth: 0,
            has_children: false,
            folded: false,
            badge,
            own_prompt: false,
            header: Some(if dir.is_empty() {
                "(no project)".into()
            } else {
                dir
            }),
            group: None,
        });
        out.extend(rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NoObserver;
    use crate::source::decode::record::{Decoded, decode};

    fn store(events: &[String]) -> Store {
        let mut s = Store::new();
        for e in events {
            if let Decoded::Event(env) = decode(e).unwrap() {
                s.apply(env, &mut NoObserver);
            }
        }
        s
    }

    fn session(id: &str, parent: Option<&str>, title: &str) -> String {
        let parent = parent
            .map(|p| format!(r#","parentID":"{p}""#))
            .unwrap_or_default();
        format!(
            r#"{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"{title}"{parent}}}}}}}"#
        )
    }

    fn ids(store: &Store, rows: &[SessionRow]) -> Vec<(String, u16)> {
        rows.iter()
            .map(|r| (store.sessions()[r.index].info.id.clone(), r.depth))
            .collect()
    }

    #[test]
    fn children_nest_under_parents_and_folds_hide_them() {
        let s = store(&[
            session("ses_b", None, "root b"),
            session("ses_a", Some("ses_b"), "child"),
            session("ses_c", None, "root c"),
        ]);
        let rows = rows(&s, &HashSet::new(), "", &HashMap::new());
        // Store order is id order (newest first for real `ses_` ids).
        assert_eq!(
            ids(&s, &rows),
            [
                ("ses_b".into(), 0),
                ("ses_a".into(), 1),
                ("ses_c".into(), 0)
            ]
        );
        let folded: HashSet<String> = ["ses_b".to_string()].into();
        let rows = super::rows(&s, &folded, "", &HashMap::new());
        assert_eq!(ids(&s, &rows), [("ses_b".into(), 0), ("ses_c".into(), 0)]);
        assert!(rows[0].folded);
        // A filter shows matches with their ancestors, folds or not.
        let rows = super::rows(&s, &folded, "CHI", &HashMap::new());
        assert_eq!(ids(&s, &rows), [("ses_b".into(), 0), ("ses_a".into(), 1)]);
    }

    #[test]
    fn a_parent_cycle_loses_no_session() {
        let s = store(&[
            session("ses_x", Some("ses_y"), "x"),
            session("ses_y", Some("ses_x"), "y"),
        ]);
        let rows = rows(&s, &HashSet::new(), "", &HashMap::new());
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn sessions_of_several_projects_are_grouped_under_headings() {
        let in_dir = |id: &str, dir: &str| {
            format!(
                r#"{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"{id}","directory":"{dir}"}}}}}}"#
            )
        };
        let s = store(&[
            in_dir("ses_a", "/p1"),
            in_dir("ses_b", "/p2"),
            in_dir("ses_c", "/p1"),
        ]);
        let rows = rows(&s, &HashSet::new(), "", &HashMap::new());
        let shown: Vec<String> = rows
            .iter()
            .map(|r| {
                r.header
                    .clone()
                    .unwrap_or_else(|| s.sessions()[r.index].info.id.clone())
            })
            .collect();
        assert_eq!(shown, ["/p1", "ses_a", "ses_c", "/p2", "ses_b"]);
        // One project: no headings.
        let s = store(&[in_dir("ses_a", "/p1"), in_dir("ses_c", "/p1")]);
        assert!(
            super::rows(&s, &HashSet::new(), "", &HashMap::new())
                .iter()
                .all(|r| r.header.is_none())
        );
    }
}
