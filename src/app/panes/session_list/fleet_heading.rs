//! What a fleet's list heading does when selected: the selection names
//! it by its fold key, the fold keys fold its group, and a gone server's
//! heading can dismiss the server.

use crate::app::App;
use crate::app::keymap::Action;
use crate::app::session_tree::groups::{Group, Level, is_group_key, of_server};
use crate::app::session_tree::rows::SessionRow;
use crate::archive::list_reader::ARCHIVE_PREFIX;
use crate::model::store::fleet::ServerState;

impl App {
    /// What selecting a row sets `selected` to: a session's id, a group's
    /// key; `None` for a heading that cannot be selected.
    pub fn row_id(&self, row: &SessionRow) -> Option<String> {
        crate::app::panes::session_list::ListState::row_id(&self.store, row)
    }

    /// The selected row, when it is a fleet's heading.
    pub fn selected_group(&self) -> Option<&Group> {
        let key = self.selected.as_deref().filter(|k| is_group_key(k))?;
        self.panes
            .list
            .rows
            .iter()
            .filter_map(|r| r.group.as_ref())
            .find(|g| g.key == key)
    }

    /// The selected heading in words, for the turn view: what it stands
    /// for, what its sessions are doing, and what its keys do.
    pub fn describe_group(&self) -> Option<String> {
        use crate::model::wire::sanitize::line;
        let row = self.panes.list.rows.get(self.selected_row()?)?;
        let (text, group) = (line(row.header.as_deref()?), row.group.as_ref()?);
        let mut out = Vec::new();
        match &group.level {
            Level::Server(_) if group.server() == Some(ARCHIVE_PREFIX) => {
                out.push(
                    "Archive · sessions kept by ocview's archive that no server here serves and opencode's database does not list, by origin".into(),
                );
            }
            Level::Server(state) => {
                let server = group.server().and_then(|k| self.store.server(k));
                let state = match state {
                    Some(s) => match s.reason() {
                        Some(why) => format!(" · {}: {}", s.label(), line(why)),
                        None => format!(" · {}", s.label()),
                    },
                    None => " · no report from it".into(),
                };
                out.push(format!("Server {text}{state}"));
                if let Some(s) = server {
                    let mut place = line(&s.url).into_owned();
                    if let Some(dir) = &s.directory {
                        place = format!("{place} · {}", line(dir));
                    }
                    out.push(place);
                }
            }
            Level::Project => out.push(format!("Project {text}")),
        }
        let c = &group.counts;
        let doing: Vec<String> = [
            (c.busy, "busy"),
            (c.asking, "waiting for an answer"),
            (c.failed, "failed"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let plural = if c.sessions == 1 { "" } else { "s" };
        out.push(if doing.is_empty() {
            format!("{} session{plural}", c.sessions)
        } else {
            format!("{} session{plural}: {}", c.sessions, doing.join(", "))
        });
        out.push(String::new());
        let key = |a| self.keymap.hint(a).unwrap_or_default();
        if row.has_children {
            let what = if row.folded { "unfolds" } else { "folds" };
            out.push(format!("{} {what} it", key(Action::ToggleTree)));
        }
        if group.level == Level::Server(Some(ServerState::Gone)) {
            out.push(format!(
                "{} dismisses it: the server and its sessions leave the list",
                key(Action::DismissServer)
            ));
        }
        Some(out.join("\n"))
    }

    /// Fold or unfold the selected heading's group. Returns whether a
    /// heading was selected.
    pub(crate) fn toggle_group(&mut self) -> bool {
        self.panes.list.toggle_group(self.selected.as_deref())
    }

    /// Forget the selected server, when it is gone, with its sessions.
    pub(crate) fn dismiss_server(&mut self) {
        let Some(group) = self.selected_group() else {
            self.verbs
                .say("only a gone server can be dismissed: select its heading");
            return;
        };
        let Some(key) = group.server().map(str::to_string) else {
            self.verbs
                .say("only a gone server can be dismissed: this is a project");
            return;
        };
        let (state, sessions) = (group.level.clone(), group.counts.sessions);
        let name = crate::model::wire::sanitize::line(&key).into_owned();
        if state != Level::Server(Some(ServerState::Gone)) {
            let label = match state {
                Level::Server(Some(s)) => s.label(),
                _ => "not reported".into(),
            };
            self.verbs.say(format!(
                "only a gone server can be dismissed: {name} is {label}"
            ));
            return;
        }
        let at = self.selected_row().unwrap_or(0);
        self.store.dismiss_server(&key);
        self.panes.list.folded.retain(|k| !of_server(k, &key));
        let store = &self.store;
        self.panes.turns.retain(|id, _| store.session(id).is_some());
        self.history.retain(|id| store.session(id).is_some());
        // The selection moves to the row that took the server's place.
        self.panes.list.rows = crate::app::session_tree::rows::rows(
            &self.store,
            &self.panes.list.folded,
            &self.panes.list.filter,
            &self.overlays.search.list.counts,
        );
        let next = self
            .panes
            .list
            .rows
            .iter()
            .skip(at)
            .chain(self.panes.list.rows.iter().rev());
        self.selected = next.filter_map(|r| self.row_id(r)).next();
        self.refresh_prompts();
        self.verbs.say(format!(
            "dismissed {name} and its {sessions} session{}",
            if sessions == 1 { "" } else { "s" }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::session_tree::tests::groups::{heading, lines, server, store};

    fn app() -> App {
        let mut app = App::new(crate::app::config::Config::default(), "test", true).unwrap();
        app.store = store(&lines());
        app.prepare(ratatui::layout::Rect::new(0, 0, 120, 30));
        app
    }

    fn select(app: &mut App, text: &str) {
        let row = heading(&app.panes.list.rows, text).clone();
        app.selected = app.row_id(&row);
        assert_eq!(
            app.selected_row().map(|i| &app.panes.list.rows[i]),
            Some(&row)
        );
        assert!(app.selected_session().is_none());
    }

    fn said(app: &App) -> String {
        app.verbs
            .feedback
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_selected_heading_folds_with_the_fold_and_open_keys() {
        use crate::app::keymap::Action;
        let mut app = app();
        select(&mut app, "a:1");
        app.act(Action::ToggleTree);
        app.prepare(ratatui::layout::Rect::new(0, 0, 120, 30));
        assert!(heading(&app.panes.list.rows, "a:1").folded);
        assert_eq!(app.selected_row(), Some(0));
        app.act(Action::Open);
        app.prepare(ratatui::layout::Rect::new(0, 0, 120, 30));
        assert!(!heading(&app.panes.list.rows, "a:1").folded);
        // A heading is no session: nothing to search, no turns laid out.
        app.act(Action::Search);
        assert!(
            app.overlays.search.session.is_none()
                && !app.panes.turns.keys().any(|k| is_group_key(k))
        );
        // Down goes onto the project's heading, then its first session.
        app.act(Action::Down);
        assert_eq!(
            app.selected_group().map(|g| g.level.clone()),
            Some(Level::Project)
        );
        app.act(Action::Down);
        assert_eq!(app.selected.as_deref(), Some("ses_1@a:1"));
        app.act(Action::First);
        assert_eq!(app.selected_row(), Some(0));
        app.act(Action::Last);
        assert_eq!(app.selected.as_deref(), Some("ses_4@d:4"));
    }

    #[test]
    fn only_a_gone_server_is_dismissed() {
        use crate::app::keymap::Action;
        let mut app = app();
        app.selected = Some("ses_1@a:1".into());
        app.act(Action::DismissServer);
        assert!(said(&app).contains("select its heading"), "{}", said(&app));
        select(&mut app, "/p1");
        app.act(Action::DismissServer);
        assert!(said(&app).contains("a project"), "{}", said(&app));
        select(&mut app, "b:2");
        app.act(Action::DismissServer);
        assert_eq!(
            said(&app),
            "only a gone server can be dismissed: b:2 is reconnecting 3"
        );
        assert_eq!(app.store.servers().len(), 3);

        select(&mut app, "c:3");
        app.act(Action::DismissServer);
        assert_eq!(said(&app), "dismissed c:3 and its 0 sessions");
        assert_eq!(app.store.servers().len(), 2);
        // The selection moved to the heading that took its place.
        assert_eq!(app.selected_group().and_then(|g| g.server()), Some("d:4"));
    }

    #[test]
    fn a_gone_server_leaves_with_its_sessions_and_prompts() {
        use crate::app::keymap::Action;
        let mut lines = lines();
        lines.push(server("a:1", r#""state":"gone""#));
        let mut app = App::new(crate::app::config::Config::default(), "test", true).unwrap();
        app.store = store(&lines);
        app.prepare(ratatui::layout::Rect::new(0, 0, 120, 30));
        select(&mut app, "a:1");
        app.act(Action::ToggleTree);
        app.act(Action::DismissServer);
        assert_eq!(said(&app), "dismissed a:1 and its 3 sessions");
        assert!(
            app.store
                .sessions()
                .iter()
                .all(|s| !s.info.id.ends_with("@a:1"))
        );
        assert!(app.panes.list.folded.is_empty());
        app.prepare(ratatui::layout::Rect::new(0, 0, 120, 30));
        assert_eq!(app.panes.list.rows[0].header.as_deref(), Some("b:2"));
        assert_eq!(app.selected_row(), Some(0));
    }
}
