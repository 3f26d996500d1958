//! Tests of the tree as a whole: groups and copies are read through the
//! rows the list shows.

pub(crate) mod groups {
    use std::collections::{HashMap, HashSet};

    use crate::app::session_tree::groups::*;
    use crate::app::session_tree::rows::rows;
    use crate::model::NoObserver;
    use crate::model::Store;
    use crate::model::store::fleet::ServerState;
    use crate::source::decode::record::{Decoded, decode};

    pub(crate) fn server(key: &str, state: &str) -> String {
        format!(
            r#"{{"server":"{key}","type":"ocview.server","properties":{{"url":"http://{key}",{state}}}}}"#
        )
    }

    pub(crate) fn session(key: &str, id: &str, dir: &str, parent: Option<&str>) -> String {
        let parent = parent
            .map(|p| format!(r#","parentID":"{p}""#))
            .unwrap_or_default();
        format!(
            r#"{{"server":"{key}","type":"session.created","properties":{{"info":{{"id":"{id}","title":"{id} title","directory":"{dir}"{parent}}}}}}}"#
        )
    }

    pub(crate) fn status(key: &str, id: &str, status: &str) -> String {
        format!(
            r#"{{"server":"{key}","type":"session.status","properties":{{"sessionID":"{id}","status":{status}}}}}"#
        )
    }

    /// Three servers: a:1 live with two projects, a child session asking
    /// and one busy, one failed; b:2 reconnecting, its session retrying
    /// (with the same bare id as one of a:1's); c:3 gone with no session;
    /// and d:4, which sessions name but no report does.
    pub(crate) fn lines() -> Vec<String> {
        vec![
            server("a:1", r#""state":"live","directory":"/p1""#),
            server("b:2", r#""state":"reconnecting","attempt":3"#),
            server("c:3", r#""state":"gone""#),
            session("a:1", "ses_1", "/p1", None),
            session("a:1", "ses_2", "/p2", None),
            session("a:1", "ses_3", "/p1", Some("ses_1")),
            session("b:2", "ses_1", "/q", None),
            session("d:4", "ses_4", "/r", None),
            status("a:1", "ses_1", r#"{"type":"busy"}"#),
            status("b:2", "ses_1", r#"{"type":"retry","attempt":1,"message":"m","next":1}"#),
            r#"{"server":"a:1","type":"session.error","properties":{"sessionID":"ses_2","error":{"name":"APIError","data":{"message":"no"}}}}"#.into(),
            r#"{"server":"a:1","type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_3","permission":"bash","patterns":[]}}"#.into(),
        ]
    }

    pub(crate) fn store(lines: &[String]) -> Store {
        let mut s = Store::new();
        for line in lines {
            match decode(line).unwrap() {
                Decoded::Event(env) => {
                    s.apply(env, &mut NoObserver);
                }
                other => panic!("{other:?}"),
            }
        }
        s
    }

    /// Each row as text: headings by their name, sessions by their id.
    pub(crate) fn shown(store: &Store, rows: &[SessionRow]) -> Vec<String> {
        rows.iter()
            .map(|r| match (&r.header, &r.group) {
                (Some(h), Some(g)) if g.server().is_some() => format!("S {h}"),
                (Some(h), _) => format!("P {h}"),
                _ => format!(
                    "{}{}",
                    "  ".repeat(r.depth as usize),
                    store.sessions()[r.index].info.id
                ),
            })
            .collect()
    }

    pub(crate) fn all(store: &Store, folded: &HashSet<String>, filter: &str) -> Vec<SessionRow> {
        rows(store, folded, filter, &HashMap::new())
    }

    pub(crate) fn heading<'a>(rows: &'a [SessionRow], text: &str) -> &'a SessionRow {
        rows.iter()
            .find(|r| r.header.as_deref() == Some(text))
            .unwrap_or_else(|| panic!("no heading {text}"))
    }

    #[test]
    fn sessions_group_by_server_then_project_then_tree() {
        let s = store(&lines());
        assert!(is_fleet(&s));
        let rows = all(&s, &HashSet::new(), "");
        assert_eq!(
            shown(&s, &rows),
            [
                "S a:1",
                "P /p1",
                "ses_1@a:1",
                "  ses_3@a:1",
                "P /p2",
                "ses_2@a:1",
                "S b:2",
                "P /q",
                "ses_1@b:2",
                "S c:3",
                "S d:4",
                "P /r",
                "ses_4@d:4",
            ]
        );
        // Servers in the store's order, then the one no report named.
        let levels: Vec<Level> = rows
            .iter()
            .filter_map(|r| r.group.as_ref())
            .filter(|g| g.server().is_some())
            .map(|g| g.level.clone())
            .collect();
        assert_eq!(levels[0], Level::Server(Some(ServerState::Live)));
        assert_eq!(levels[2], Level::Server(Some(ServerState::Gone)));
        assert_eq!(levels[3], Level::Server(None));
        // A gone server with no session left: a heading with nothing to fold.
        let gone = heading(&rows, "c:3");
        assert!(!gone.has_children && gone.group.as_ref().unwrap().counts.sessions == 0);
    }

    #[test]
    fn headings_count_busy_asking_and_failed() {
        let s = store(&lines());
        let rows = all(&s, &HashSet::new(), "");
        let counts = |text| heading(&rows, text).group.as_ref().unwrap().counts;
        let c = |sessions, busy, asking, failed| Counts {
            sessions,
            busy,
            asking,
            failed,
        };
        // The prompt waits in a child: it counts for its root's project.
        assert_eq!(counts("a:1"), c(3, 1, 1, 1));
        assert_eq!(counts("/p1"), c(2, 1, 1, 0));
        assert_eq!(counts("/p2"), c(1, 0, 0, 1));
        // Retrying counts as busy.
        assert_eq!(counts("b:2"), c(1, 1, 0, 0));
        assert!(heading(&rows, "a:1").badge && heading(&rows, "/p1").badge);
        assert!(!heading(&rows, "/p2").badge && !heading(&rows, "b:2").badge);
    }

    #[test]
    fn a_folded_group_hides_its_rows_but_keeps_its_counts() {
        let s = store(&lines());
        let key = |text| {
            heading(&all(&s, &HashSet::new(), ""), text)
                .group
                .clone()
                .unwrap()
                .key
        };
        let (a, p1) = (key("a:1"), key("/p1"));
        assert!(is_group_key(&a) && is_group_key(&p1) && a != p1);
        assert!(of_server(&a, "a:1") && of_server(&p1, "a:1") && of_server("ses_1@a:1", "a:1"));
        assert!(!of_server(&p1, "a:") && !of_server(&project_key("a:10", "/p1"), "a:1"));
        let folded: HashSet<String> = [a.clone()].into();
        let rows = all(&s, &folded, "");
        assert_eq!(
            shown(&s, &rows)[..3],
            ["S a:1", "S b:2", "P /q"].map(String::from)
        );
        let a_row = heading(&rows, "a:1");
        assert!(a_row.folded && a_row.badge);
        assert_eq!(a_row.group.as_ref().unwrap().counts.busy, 1);
        let folded: HashSet<String> = [p1].into();
        let rows = all(&s, &folded, "");
        assert_eq!(
            shown(&s, &rows)[..4],
            ["S a:1", "P /p1", "P /p2", "ses_2@a:1"].map(String::from)
        );
        assert!(heading(&rows, "/p1").folded);
    }

    #[test]
    fn the_filter_looks_through_folds_and_leaves_out_empty_groups() {
        let s = store(&lines());
        let a = heading(&all(&s, &HashSet::new(), ""), "a:1")
            .group
            .clone()
            .unwrap()
            .key;
        let folded: HashSet<String> = [a, "ses_1@a:1".to_string()].into();
        let rows = all(&s, &folded, "ses_3");
        assert_eq!(
            shown(&s, &rows),
            ["S a:1", "P /p1", "ses_1@a:1", "  ses_3@a:1"]
        );
        assert!(rows.iter().all(|r| !r.folded));
        assert!(all(&s, &folded, "nothing like it").is_empty());
    }

    #[test]
    fn scoped_sessions_without_reports_still_make_a_fleet() {
        let s = store(&[session("a:1", "ses_1", "/p", None)]);
        assert!(is_fleet(&s));
        let rows = all(&s, &HashSet::new(), "");
        assert_eq!(shown(&s, &rows), ["S a:1", "P /p", "ses_1@a:1"]);
        let s = store(&[
            r#"{"type":"session.created","properties":{"info":{"id":"ses_1","title":"t"}}}"#
                .to_string(),
        ]);
        assert!(!is_fleet(&s));
    }

    #[test]
    fn database_sessions_come_after_the_servers_and_once_when_live() {
        let s = store(&[
            server("history", r#""state":"live""#),
            server("a:1", r#""state":"live""#),
            session("history", "ses_1", "/p", None),
            session("history", "ses_2", "/p", None),
            session("history", "ses_3", "/p", Some("ses_2")),
            session("a:1", "ses_2", "/p", None),
        ]);
        let rows = all(&s, &HashSet::new(), "");
        // ses_2 is served live: its database copy is not listed (nor
        // counted), and its database child ses_3 shows under the live copy
        // (counted there); the history heading comes last whatever joined
        // first.
        assert_eq!(
            shown(&s, &rows),
            [
                "S a:1",
                "P /p",
                "ses_2@a:1",
                "  ses_3@history",
                "S history",
                "P /p",
                "ses_1@history"
            ]
        );
        let history = heading(&rows, "history");
        assert_eq!(history.group.as_ref().unwrap().counts.sessions, 1);
        let live = heading(&rows, "a:1");
        assert_eq!(live.group.as_ref().unwrap().counts.sessions, 2);
        // A filter matching the child keeps the live parent it shows under.
        let rows = all(&s, &HashSet::new(), "ses_3");
        assert!(shown(&s, &rows).contains(&"  ses_3@history".to_string()));
    }
}

mod copies {
    use std::collections::HashSet;

    use super::groups::{all, heading, server, session, shown, store};
    use crate::app::session_tree::groups::archive_group_key;

    /// `ocview history` once the archive's import ends: the archive holds
    /// copies of a database parent and its child. The child stays under
    /// the database's parent (the copy shown), and every archive origin is
    /// one group under one "Archive" heading, with only what nothing else
    /// lists.
    #[test]
    fn a_child_stays_under_its_parent_whatever_the_archive_holds() {
        let archive = "archive · vm · /home/me/opencode.db";
        let other = "archive · vm · /tmp/export.json";
        let s = store(&[
            server("history", r#""state":"live""#),
            server(archive, r#""state":"live""#),
            server(other, r#""state":"live""#),
            session("history", "ses_2", "/p", None),
            session("history", "ses_3", "/p", Some("ses_2")),
            session(archive, "ses_2", "/p", None),
            session(archive, "ses_3", "/p", Some("ses_2")),
            session(archive, "ses_old", "/p", None),
            session(other, "ses_file", "/p", None),
        ]);
        let unfolded = shown(&s, &all(&s, &HashSet::new(), ""));
        assert_eq!(
            unfolded,
            [
                "S history",
                "P /p",
                "ses_2@history",
                "  ses_3@history",
                "S Archive",
                "P vm · /home/me/opencode.db",
                "ses_old@archive · vm · /home/me/opencode.db",
                "P vm · /tmp/export.json",
                "ses_file@archive · vm · /tmp/export.json",
            ]
        );
        // Folded: the same up to the Archive heading, nothing under it.
        let folded: HashSet<String> = [archive_group_key()].into();
        let rows = all(&s, &folded, "");
        assert_eq!(shown(&s, &rows), unfolded[..5]);
        assert_eq!(
            heading(&rows, "Archive")
                .group
                .as_ref()
                .unwrap()
                .counts
                .sessions,
            2
        );
    }
}
