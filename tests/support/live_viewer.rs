//! The app fed by the live source in-process, drawing frames on a test
//! backend as the loop would: every source message applied, then a frame
//! (which is where the app asks the source for pages).

use std::time::Duration;

use ocview::app::App;
use ocview::app::config::Config;
use ocview::source::live::{self, Client, LiveOptions};
use ocview::source::msg::{SourceMsg, SourceState};
use ocview::source::recording::recorder::Feed;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use tokio::sync::mpsc;

pub struct LiveViewer {
    pub app: App,
    rx: mpsc::Receiver<SourceMsg>,
    pub states: Vec<SourceState>,
    /// Every notice the source sent.
    pub notices: Vec<String>,
    /// What the source handed the recorder.
    pub raw: mpsc::UnboundedReceiver<Feed>,
    terminal: Terminal<TestBackend>,
    /// The source channel, for readers started beside the live source.
    tx: mpsc::Sender<SourceMsg>,
}

impl LiveViewer {
    pub fn attach(url: &str, options: LiveOptions) -> LiveViewer {
        let (tx, rx) = mpsc::channel(100_000);
        let (raw_tx, raw) = mpsc::unbounded_channel();
        let mut app = App::new(Config::default(), "live test", false).unwrap();
        app.live = Some(live::spawn(
            Client::new(url, None),
            options,
            tx.clone(),
            Some(raw_tx),
        ));
        LiveViewer {
            app,
            rx,
            states: Vec::new(),
            notices: Vec::new(),
            raw,
            terminal: Terminal::new(TestBackend::new(120, 40)).unwrap(),
            tx,
        }
    }

    /// Count the sessions' messages from opencode's database at `path`, as
    /// `attach` does for a server on this machine.
    pub fn count_from_database(&mut self, path: std::path::PathBuf) {
        self.app.message_totals =
            ocview::source::opencode_db::totals::MessageTotals::spawn(path, self.tx.clone());
    }

    fn apply(&mut self, msg: SourceMsg) {
        match &msg {
            SourceMsg::State(s) => self.states.push(s.clone()),
            SourceMsg::Notice(n) => self.notices.push(n.clone()),
            _ => {}
        }
        self.app.on_source(msg);
    }

    /// Lay out and draw a frame; the screen as text.
    pub fn frame(&mut self) -> String {
        let area = Rect::new(0, 0, 120, 40);
        self.app.prepare(area);
        let app = &self.app;
        self.terminal
            .draw(|f| ocview::app::draw::draw(f, app))
            .unwrap();
        self.app.frame_flushed(tokio::time::Instant::now());
        let buf = self.terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Apply what arrives, a frame after each batch, until `f` holds, or
    /// panic after `secs`.
    /// Attached to a stand-in `server`, its long session open on the
    /// newest page.
    pub async fn on_the_newest_page(server: &super::history_server::HistoryServer) -> LiveViewer {
        let mut v = LiveViewer::attach(&server.url, LiveOptions::default());
        v.until("the newest page", 10, |a| {
            a.store
                .session(super::history_server::SESSION)
                .is_some_and(|s| s.messages.len() >= 100)
        })
        .await;
        v
    }

    pub async fn until(&mut self, what: &str, secs: u64, mut f: impl FnMut(&App) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            self.frame();
            if f(&self.app) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; states {:?}, notices {:?}",
                self.states,
                self.notices
            );
            match tokio::time::timeout(Duration::from_millis(100), self.rx.recv()).await {
                Ok(Some(msg)) => {
                    self.apply(msg);
                    while let Ok(msg) = self.rx.try_recv() {
                        self.apply(msg);
                    }
                }
                Ok(None) => panic!("the source ended while waiting for {what}"),
                Err(_) => {}
            }
        }
    }

    /// Apply what arrives for `d`, a frame after each batch.
    pub async fn pump(&mut self, d: Duration) {
        let deadline = tokio::time::Instant::now() + d;
        while let Ok(msg) = tokio::time::timeout_at(deadline, self.rx.recv()).await {
            let Some(msg) = msg else { return };
            self.apply(msg);
            while let Ok(msg) = self.rx.try_recv() {
                self.apply(msg);
            }
            self.frame();
        }
        self.frame();
    }

    /// Press keys as a user would (see `common::press` for the names).
    pub fn press(&mut self, keys: &[&str]) {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        for k in keys {
            let code = match *k {
                "tab" => KeyCode::Tab,
                "enter" => KeyCode::Enter,
                "esc" => KeyCode::Esc,
                "pageup" => KeyCode::PageUp,
                "pagedown" => KeyCode::PageDown,
                k => KeyCode::Char(k.chars().next().unwrap()),
            };
            self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        }
    }

    /// How many messages of `session` are loaded.
    pub fn loaded(&self, session: &str) -> usize {
        self.app
            .store
            .session(session)
            .map_or(0, |s| s.messages.len())
    }
}
