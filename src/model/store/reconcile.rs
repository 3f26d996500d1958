//! Re-sync after a gap. The server's SSE has no replay, so after a
//! reconnect the store is reconciled with what a fresh load says, by id:
//! sessions the server no longer has go, prompts it no longer lists are
//! forgotten. Everything the snapshot does list is applied through the
//! reducer as usual (idempotent by id).
//!
//! A recording keeps both as events of ocview's own, written after the
//! snapshot: `ocview.sessions` (a session deleted, or lost in a server's
//! restart, while the stream was away) and `ocview.pending-prompts` (a
//! prompt answered elsewhere, or whose run died): the replay ends where
//! the live view did.

use std::collections::HashSet;

use super::{Change, Outcome, Store};

pub use crate::model::wire::own::{
    PENDING_PROMPTS_EVENT, SESSIONS_EVENT, pending_prompts_event, sessions_event,
};

impl Store {
    /// Drop sessions absent from the server's full list.
    /// In a fleet, `server` names the server that listed them: the other
    /// servers' sessions are not its to drop.
    pub fn retain_sessions(&mut self, server: Option<&str>, listed: &HashSet<String>) -> Outcome {
        let before = self.sessions.len();
        // A single server's list (`None`) says nothing of the sessions other
        // sources scope (the archive's, listed beside it).
        let others = |id: &str| super::fleet::server_of(id) != server;
        self.sessions
            .retain(|s| others(&s.info.id) || listed.contains(&s.info.id));
        let changed = self.sessions.len() != before;
        if changed {
            self.revision += 1;
            self.last_session = 0;
        }
        Outcome::applied(Change {
            session_list: changed,
            ..Default::default()
        })
    }

    /// Forget pending prompts the server no longer lists (answered
    /// elsewhere, or their run died): a fresh attach would not know them.
    pub fn settle_missing_prompts(
        &mut self,
        server: Option<&str>,
        pending: &HashSet<String>,
    ) -> Outcome {
        let before = self.prompts.len();
        let others = |id: &str| server.is_some() && super::fleet::server_of(id) != server;
        self.prompts.retain(|p| {
            p.resolution.is_some() || others(p.request.id()) || pending.contains(p.request.id())
        });
        let changed = self.prompts.len() != before;
        if changed {
            self.revision += 1;
        }
        Outcome::applied(Change {
            prompts: changed,
            session_list: changed,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Envelope, Event, NoObserver};

    /// Parsed by the model alone: its tests do not lean on source's decoder,
    /// which would make a circle between the folders. A line that names its
    /// server is scoped for it, as the decoder does.
    fn apply(s: &mut Store, line: &str) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let props = serde_json::value::to_raw_value(&v["properties"]).unwrap();
        let mut event = Event::parse(v["type"].as_str().unwrap(), Some(&props)).unwrap();
        if let Some(key) = v["server"].as_str().filter(|k| !k.is_empty()) {
            crate::model::store::fleet::scope_event(&mut event, key);
        }
        s.apply(Envelope::new(event), &mut NoObserver);
    }

    #[test]
    fn a_resync_drops_vanished_sessions_and_settles_vanished_prompts() {
        let mut s = Store::new();
        for id in ["ses_a", "ses_b"] {
            apply(
                &mut s,
                &format!(
                    r#"{{"type":"session.created","properties":{{"info":{{"id":"{id}","title":"t"}}}}}}"#
                ),
            );
        }
        apply(
            &mut s,
            r#"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_a","permission":"bash","patterns":[]}}"#,
        );
        apply(
            &mut s,
            r#"{"type":"permission.asked","properties":{"id":"per_2","sessionID":"ses_a","permission":"bash","patterns":[]}}"#,
        );
        let out = s.retain_sessions(None, &["ses_a".to_string()].into());
        assert!(out.change.session_list);
        assert!(s.session("ses_b").is_none() && s.session("ses_a").is_some());
        let out = s.settle_missing_prompts(None, &["per_2".to_string()].into());
        assert!(out.change.prompts);
        let pending: Vec<&str> = s.pending_prompts().map(|p| p.request.id()).collect();
        assert_eq!(pending, ["per_2"]);
        assert!(s.prompt("per_1").is_none());
        // Again: nothing more to do.
        assert!(
            !s.settle_missing_prompts(None, &["per_2".to_string()].into())
                .change
                .prompts
        );
    }

    #[test]
    fn a_recorded_pending_prompts_event_settles_as_the_reconcile_did() {
        let asked = |id: &str, server: &str| {
            format!(
                r#"{{"server":"{server}","type":"permission.asked","properties":{{"id":"{id}","sessionID":"ses_a","permission":"bash","patterns":[]}}}}"#
            )
        };
        let mut s = Store::new();
        for id in ["per_1", "per_2"] {
            apply(&mut s, &asked(id, ""));
        }
        let event = pending_prompts_event(&["per_2".to_string()].into());
        apply(&mut s, &event.to_string());
        let pending: Vec<&str> = s.pending_prompts().map(|p| p.request.id()).collect();
        assert_eq!(pending, ["per_2"]);
        assert!(
            s.prompt("per_1").is_none(),
            "forgotten, as the live view did"
        );

        // A fleet's line names its server: only that server's prompts settle.
        let mut s = Store::new();
        for server in ["a:1", "b:2"] {
            apply(&mut s, &asked("per_1", server));
        }
        let mut event = pending_prompts_event(&HashSet::new());
        event["server"] = "a:1".into();
        apply(&mut s, &event.to_string());
        let pending: Vec<&str> = s.pending_prompts().map(|p| p.request.id()).collect();
        assert_eq!(pending, ["per_1@b:2"]);
    }
}
