//! A live session opened is archived whole, not only the pages the reader
//! scrolled through: its older pages are asked for one at a time, for the
//! archive alone (`LiveCommand::ArchivePage`), and only while the servers
//! are otherwise idle (no session running, no page of the view on its
//! way). Each answer wakes the loop, which asks for the next: nothing
//! ticks. What the server cannot give (the session deleted since) is
//! said, and the archive keeps what it had.

use std::collections::HashMap;

use crate::app::App;
use crate::model::{MessageInfo, Part, SessionStatus};
use crate::source::live::LiveCommand;

/// How far one session's archiving has come.
#[derive(Debug, Default)]
pub struct Fill {
    /// The cursor of the next page (`None` before the first: the newest).
    cursor: Option<String>,
    asking: bool,
    done: bool,
    /// Pages given to the archive so far.
    pages: usize,
    /// Messages given to the archive so far.
    messages: usize,
}

/// Every session being archived whole, by id.
pub type Fills = HashMap<String, Fill>;

impl App {
    /// A live session was opened: archive it whole (when there is an
    /// archive to write to).
    pub(crate) fn archive_whole(&mut self, id: &str) {
        let session = !crate::app::session_tree::groups::is_group_key(id);
        if session && self.archive.tap.is_some() && crate::app::session_tree::copies::is_live(id) {
            self.archive_fills.entry(id.to_string()).or_default();
        }
    }

    /// Ask for the next archive page of a session being archived, when
    /// nothing else is asked of the servers and no session runs.
    pub(crate) fn fill_archive(&mut self) {
        // Each frame: nothing more than a look at the fills unless one is
        // still to be asked for.
        let pending = self.archive_fills.values().any(|f| !f.done && !f.asking);
        if !pending || self.live.is_none() || self.archive.tap.is_none() {
            return;
        }
        // A session whose view loaded every page gave them all already.
        let whole: Vec<String> = self
            .archive_fills
            .iter()
            .filter(|(id, f)| !f.done && !f.asking && self.history_whole(id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in whole {
            if let Some(f) = self.archive_fills.get_mut(&id) {
                f.done = true;
            }
        }
        if self.archive_fills.values().any(|f| f.asking) {
            return;
        }
        let running = self
            .store
            .sessions()
            .iter()
            .any(|s| matches!(s.status, SessionStatus::Busy | SessionStatus::Retry { .. }));
        let paging = self.histories.values().any(|h| h.asking);
        if running || paging {
            return;
        }
        // Not before the view's own first page is in: the server answers
        // one request at a time, and the view's comes first.
        let histories = &self.histories;
        let Some((id, fill)) = self
            .archive_fills
            .iter_mut()
            .find(|(id, f)| !f.done && histories.contains_key(*id))
        else {
            return;
        };
        let Some(live) = &self.live else { return };
        fill.asking = live
            .send(LiveCommand::ArchivePage {
                session: id.clone(),
                cursor: fill.cursor.clone(),
            })
            .is_ok();
    }

    /// A page for the archive came (or why none did). Returns whether the
    /// status line changed.
    pub(crate) fn on_archive_page(
        &mut self,
        session_id: &str,
        messages: Vec<(MessageInfo, Vec<Part>)>,
        next: Option<String>,
        failed: Option<String>,
    ) -> bool {
        let Some(fill) = self.archive_fills.get_mut(session_id) else {
            return false;
        };
        fill.asking = false;
        let title = self
            .store
            .session(session_id)
            .map(|s| crate::model::wire::sanitize::line(s.title()).into_owned())
            .unwrap_or_else(|| crate::model::wire::sanitize::line(session_id).into_owned());
        if let Some(why) = failed {
            fill.done = true;
            let why = crate::model::wire::sanitize::line(&why).into_owned();
            self.notice = Some(format!(
                "archive: the server gave no more of “{title}” ({why}); the archive keeps the \
                 {} messages it has",
                fill.messages
            ));
            return true;
        }
        fill.messages += messages.len();
        fill.pages += 1;
        if let Some(tap) = &self.archive.tap {
            tap.loaded_page(messages);
        }
        fill.done = next.is_none();
        fill.cursor = next;
        // A session one page holds is kept without a word.
        if fill.pages == 1 && fill.done {
            return false;
        }
        let n = crate::app::view::thousands(fill.messages);
        self.notice = Some(if fill.done {
            format!("archive: “{title}” kept whole ({n} messages)")
        } else {
            format!("archive: keeping “{title}” whole: {n} messages so far")
        });
        true
    }
}
