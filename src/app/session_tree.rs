//! The session list as rows: root sessions newest first, child sessions
//! (parentID) indented under their parent, folds, the title filter, and the
//! "a prompt waits here" badge that marks every ancestor of a waiting child.

use std::collections::{HashMap, HashSet};

use crate::model::Store;

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
}

/// Sessions with a pending prompt, and all their ancestors.
fn badged(store: &Store) -> (HashSet<String>, HashSet<String>) {
    let own: HashSet<String> = store.pending_prompts().map(|p| p.request.session_id().to_string()).collect();
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

/// The visible rows. With a filter, a session shows when its title matches
/// or a descendant's does, and folds are ignored so matches are never hidden.
pub fn rows(store: &Store, folded: &HashSet<String>, filter: &str) -> Vec<SessionRow> {
    let sessions = store.sessions();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        match s.info.parent_id.as_deref() {
            Some(p) if p != s.info.id && store.session(p).is_some() => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    // Children read best oldest first, in the order they were spawned.
    for list in children.values_mut() {
        list.reverse();
    }
    let needle = filter.to_lowercase();
    let matches = |i: usize| needle.is_empty() || sessions[i].title().to_lowercase().contains(&needle);
    let (own, badge) = badged(store);

    // Which sessions are kept under the filter: matches and their ancestors.
    let mut keep: Option<HashSet<usize>> = None;
    if !needle.is_empty() {
        let index_of: HashMap<&str, usize> = sessions.iter().enumerate().map(|(i, s)| (s.info.id.as_str(), i)).collect();
        let mut set = HashSet::new();
        for i in (0..sessions.len()).filter(|&i| matches(i)) {
            let mut cur = Some(i);
            for _ in 0..64 {
                let Some(c) = cur else { break };
                if !set.insert(c) {
                    break;
                }
                cur = sessions[c].info.parent_id.as_deref().and_then(|p| index_of.get(p).copied());
            }
        }
        keep = Some(set);
    }

    let mut out = Vec::new();
    let mut stack: Vec<(usize, u16)> = roots.iter().rev().map(|&i| (i, 0)).collect();
    let mut seen = HashSet::new();
    let mut next_orphan = 0;
    loop {
        let Some((i, depth)) = stack.pop().or_else(|| {
            // Sessions in a parent cycle are reachable from no root: list
            // them as roots rather than lose them.
            while next_orphan < sessions.len() {
                next_orphan += 1;
                if !seen.contains(&(next_orphan - 1)) {
                    return Some((next_orphan - 1, 0));
                }
            }
            None
        }) else {
            break;
        };
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
        });
        if !is_folded {
            for &k in kids.iter().rev() {
                stack.push((k, depth + 1));
            }
        }
    }
    out
}
