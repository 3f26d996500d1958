//! Finding a session by the id a person typed (`--session ID`): the whole
//! id, or a prefix of it that only one session has. In a fleet the typed
//! id is the server's own (`ses_…`), without the server's key.

use super::Store;
use super::fleet::bare;

/// How many near matches a miss lists.
const NEAR_MAX: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The session's id as the store knows it.
    Found(String),
    /// Several sessions start with the prefix: their ids, the first few.
    Ambiguous { count: usize, ids: Vec<String> },
    /// None does: the ids sharing the longest prefix with it, or whose
    /// title holds it.
    Unknown { near: Vec<String> },
}

impl Store {
    /// The session `wanted` names.
    pub fn find_session(&self, wanted: &str) -> Lookup {
        let wanted = wanted.trim();
        let sessions = self.sessions();
        if wanted.is_empty() {
            return Lookup::Unknown { near: Vec::new() };
        }
        // The whole id wins even when it is also a prefix of another.
        if let Some(s) = sessions
            .iter()
            .find(|s| s.info.id == wanted || bare(&s.info.id) == wanted)
        {
            return Lookup::Found(s.info.id.clone());
        }
        let starts: Vec<&String> = sessions
            .iter()
            .map(|s| &s.info.id)
            .filter(|id| bare(id).starts_with(wanted))
            .collect();
        match starts.as_slice() {
            [one] => return Lookup::Found((*one).clone()),
            [] => {}
            many => {
                return Lookup::Ambiguous {
                    count: many.len(),
                    ids: many.iter().take(NEAR_MAX).map(|id| (*id).clone()).collect(),
                };
            }
        }
        let shared = |id: &str| {
            bare(id)
                .chars()
                .zip(wanted.chars())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let longest = sessions
            .iter()
            .map(|s| shared(&s.info.id))
            .max()
            .unwrap_or(0);
        // "ses_" alone is shared by every id: no nearer than any other.
        let mut near: Vec<String> = if longest > "ses_".len() {
            sessions
                .iter()
                .filter(|s| shared(&s.info.id) == longest)
                .map(|s| s.info.id.clone())
                .collect()
        } else {
            Vec::new()
        };
        let lower = wanted.to_lowercase();
        for s in sessions {
            if s.title().to_lowercase().contains(&lower) && !near.contains(&s.info.id) {
                near.push(s.info.id.clone());
            }
        }
        near.truncate(NEAR_MAX);
        Lookup::Unknown { near }
    }
}
