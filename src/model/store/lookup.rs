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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Envelope, Event, NoObserver};

    fn store(sessions: &[(&str, &str)]) -> Store {
        let mut store = Store::default();
        for (id, title) in sessions {
            let props = serde_json::value::RawValue::from_string(format!(
                r#"{{"info":{{"id":"{id}","title":"{title}"}}}}"#
            ))
            .unwrap();
            let event = Event::parse("session.updated", Some(&props)).unwrap();
            store.apply(Envelope::new(event), &mut NoObserver);
        }
        store
    }

    #[test]
    fn a_whole_id_or_a_start_only_one_has() {
        let s = store(&[
            ("ses_abc1", "One"),
            ("ses_abc12", "Two"),
            ("ses_b9", "Three"),
        ]);
        // The whole id wins though it starts another.
        assert_eq!(s.find_session("ses_abc1"), Lookup::Found("ses_abc1".into()));
        assert_eq!(s.find_session("ses_b"), Lookup::Found("ses_b9".into()));
        assert_eq!(
            s.find_session("ses_abc"),
            Lookup::Ambiguous {
                count: 2,
                ids: vec!["ses_abc1".into(), "ses_abc12".into()]
            }
        );
    }

    #[test]
    fn a_fleets_ids_are_matched_without_their_server() {
        let s = store(&[("ses_x1@alpha:1", "A"), ("ses_y2@beta:2", "B")]);
        assert_eq!(
            s.find_session("ses_y"),
            Lookup::Found("ses_y2@beta:2".into())
        );
        assert_eq!(
            s.find_session("ses_x1"),
            Lookup::Found("ses_x1@alpha:1".into())
        );
        assert_eq!(
            s.find_session("ses_y2@beta:2"),
            Lookup::Found("ses_y2@beta:2".into())
        );
    }

    #[test]
    fn a_miss_lists_the_ids_nearest_it_and_titles_holding_it() {
        let s = store(&[
            ("ses_abc1", "Fix the build"),
            ("ses_abd2", "Write docs"),
            ("ses_zz", "Build cache"),
        ]);
        assert_eq!(
            s.find_session("ses_abx"),
            Lookup::Unknown {
                near: vec!["ses_abc1".into(), "ses_abd2".into()]
            }
        );
        assert_eq!(
            s.find_session("build"),
            Lookup::Unknown {
                near: vec!["ses_abc1".into(), "ses_zz".into()]
            }
        );
        // Only "ses_" in common is no nearness.
        assert_eq!(s.find_session("ses_q"), Lookup::Unknown { near: vec![] });
        assert_eq!(s.find_session(""), Lookup::Unknown { near: vec![] });
    }
}
