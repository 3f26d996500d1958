//! Seen means seen, end to end: the real binary in tmux, attached to the
//! real opencode server, typed at as a person types while a prompt arrives
//! under something else. After each scenario the server still has the
//! permission pending (or the question unanswered); then, where it proves
//! the keys were live all along, the prompt is answered the proper way.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Step, last_turn};
use support::opencode::Server;
use support::tmux::Tmux;

/// A markdown table of about `bytes` bytes, with a space every few rows:
/// the fake model streams three words a chunk, 15 ms apart, so it arrives
/// over about `bytes / 2 KB × 15 ms`, and every frame meanwhile lays out
/// a table megabytes long.
fn big_table(bytes: usize) -> String {
    let mut t = String::from("Inventory:\n\n|file|size|owner|note|\n|---|---|---|---|\n");
    let mut i = 0;
    while t.len() < bytes {
        let gap = if i % 24 == 0 { " " } else { "" };
        t.push_str(&format!(
            "|build/obj{i}.o|{}|ci|{gap}stale|\n",
            i * 7 % 9973
        ));
        i += 1;
    }
    t
}

/// "run rm": a bash permission for `rm -rf build`; "ask me": a question;
/// "big table": a 4 MB markdown table, streamed over about 30 s.
async fn model() -> FakeModel {
    let question = json!({"questions": [{"question": "Which runner?", "header": "Runner",
        "options": [{"label": "pytest", "description": "the usual"}, {"label": "unittest", "description": "stdlib"}]}]});
    let rm = json!({"command": "rm -rf build", "description": "clean the build"});
    let table = big_table(4 << 20);
    FakeModel::start(std::sync::Arc::new(move |req: &Value, _: usize| {
        let (text, step) = last_turn(req);
        match step {
            0 if text.contains("ask me") => {
                Step::text("A question.").then_tool("question", question.clone())
            }
            0 if text.contains("big table") => Step::text(&table),
            0 if text.contains("run rm") => Step::text("Cleaning.").then_tool("bash", rm.clone()),
            _ => Step::text("Done."),
        }
    }))
    .await
}

struct Scene {
    server: Server,
    session: String,
    t: Tmux,
    _model: FakeModel,
}

async fn scene(tag: &str, width: u16, height: u16) -> Scene {
    let model = model().await;
    let server = Server::start(&model.url()).await;
    let session = server.create_session().await;
    let t = Tmux::attached(tag, width, height, &server.url());
    t.wait_for("the session listed", |sc| sc.contains("Sessions 1"));
    Scene {
        server,
        session,
        t,
        _model: model,
    }
}

impl Scene {
    async fn pending(&self, kind: &str) -> Vec<Value> {
        self.server
            .get(&format!("/{kind}"))
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Wait until the server lists a pending `kind` (permission, question).
    async fn wait_pending(&self, kind: &str) -> String {
        self.server
            .until(&format!("a pending {kind}"), 90, || async {
                !self.pending(kind).await.is_empty()
            })
            .await;
        self.pending(kind).await[0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Keys sent now, in one go (no pause between them).
    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.t.tmux(&args);
    }

    /// After a moment, the request is still waiting on the server.
    async fn still_pending(&self, kind: &str, id: &str) {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let pending = self.pending(kind).await;
        assert!(
            pending.iter().any(|p| p["id"] == id),
            "the {kind} {id} was answered; pending now: {pending:?}\nscreen:\n{}",
            self.t.capture()
        );
    }

    /// The open session streams the 4 MB table (every frame lays it out
    /// again), then another session asks to run `rm -rf build`: that
    /// session and the permission's id.
    async fn permission_under_slow_frames(&self) -> (String, String) {
        self.server.prompt(&self.session, "big table").await;
        self.t
            .wait_for_secs("the table streaming", 60, |sc| sc.contains("build/obj"));
        std::thread::sleep(Duration::from_secs(3));
        let asking = self.server.create_session().await;
        self.server.prompt(&asking, "run rm").await;
        let id = self.wait_pending("permission").await;
        (asking, id)
    }

    /// Another client rejects the permission `id`.
    async fn reject_elsewhere(&self, id: &str) {
        self.server
            .post(
                &format!("/permission/{id}/reply"),
                json!({"reply": "reject"}),
            )
            .await;
    }

    /// The prompt bar shows a prompt's choices, armed.
    fn bar_armed(&self) {
        self.t
            .wait_for_secs("the prompt's choices in the bar", 30, |sc| {
                sc.contains("[y] allow once") || sc.contains("type your own answer")
            });
        self.t
            .wait_for("the prompt armed", |sc| !sc.contains("arming"));
    }

    /// Answer the prompt on screen with `keys` once it is armed, and wait
    /// until the server has it: the keys were live all along.
    async fn answer_properly(&self, kind: &str, keys: &[&str]) {
        self.bar_armed();
        self.t.keys(keys);
        self.server
            .until(&format!("the {kind} answered"), 30, || async {
                self.pending(kind).await.is_empty()
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_that_arrives_under_help_is_not_allowed_by_the_y_after_closing_it() {
    let s = scene("seen-help", 100, 30).await;
    s.t.keys(&["?"]);
    s.t.wait_for("help", |sc| sc.contains("Everywhere"));
    s.server.prompt(&s.session, "run rm").await;
    let id = s.wait_pending("permission").await;
    s.t.wait_for("the line saying a prompt waits", |sc| {
        sc.contains("waits until you close help")
    });
    s.send(&["?"]);
    std::thread::sleep(Duration::from_millis(50));
    s.send(&["y"]);
    s.still_pending("permission", &id).await;
    s.answer_properly("permission", &["n"]).await;
    s.t.keys(&["q"]);
    s.t.assert_terminal_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_arrives_under_the_diff_view_is_not_answered_by_its_keys() {
    let s = scene("seen-diff", 100, 30).await;
    s.t.keys(&["D"]);
    s.server.prompt(&s.session, "ask me").await;
    let id = s.wait_pending("question").await;
    s.t.wait_for("the line saying a prompt waits", |sc| {
        sc.contains("waits until you close the diff view")
    });
    s.send(&["Space"]);
    s.send(&["q"]);
    s.send(&["Enter"]);
    s.still_pending("question", &id).await;
    s.answer_properly("question", &["2", "Enter"]).await;
}

/// While the open session streams a 4 MB markdown table (every frame lays
/// it out again, for about a second), another session asks to run
/// `rm -rf build`; a `y` comes 40 ms after the server lists it, and then
/// every 40 ms for 3 s, so some land during the slow frame that first shows
/// the prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_y_typed_while_a_slow_frame_draws_the_permission_does_not_allow_it() {
    let s = scene("seen-slow", 100, 30).await;
    let (_, id) = s.permission_under_slow_frames().await;
    for _ in 0..75 {
        std::thread::sleep(Duration::from_millis(40));
        s.send(&["y"]);
    }
    s.still_pending("permission", &id).await;
    s.answer_properly("permission", &["n"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn letters_typed_into_the_filter_never_answer_a_permission() {
    let s = scene("seen-filter", 100, 30).await;
    s.t.keys(&["/", "a", "b"]);
    s.server.prompt(&s.session, "run rm").await;
    let id = s.wait_pending("permission").await;
    s.t.wait_for("the bar saying the prompt waits", |sc| {
        sc.contains("waits until you close the filter")
    });
    s.t.keys(&["y", "e", "s"]);
    s.still_pending("permission", &id).await;
    assert!(s.t.capture().contains("abyes"), "{}", s.t.capture());
    s.t.keys(&["Escape"]);
    s.answer_properly("permission", &["n"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_message_being_typed_never_answers_the_question_that_replaces_it() {
    let s = scene("seen-reject", 100, 30).await;
    s.server.prompt(&s.session, "run rm").await;
    let per = s.wait_pending("permission").await;
    s.bar_armed();
    s.t.keys(&["m"]);
    s.send(&["-l", "not now"]);
    // Another client rejects it; the agent asks a question next.
    s.reject_elsewhere(&per).await;
    s.t.wait_for("the text box says its prompt is gone", |sc| {
        sc.contains("gone: reject with a message")
    });
    s.server.wait_idle(&s.session, 60).await;
    s.server.prompt(&s.session, "ask me").await;
    let que = s.wait_pending("question").await;
    s.t.keys(&["1", " ", "y", "e", "s", "Enter"]);
    s.still_pending("question", &que).await;
    s.answer_properly("question", &["1", "Enter"]).await;
}

/// The same under slow frames: the open session streams a 4 MB table
/// (each frame lays it out again), another session's permission gets a
/// rejection message typed into it, another client answers it, the agent
/// asks a question at once, and the typing goes on meanwhile, in bursts
/// that land during the slow frames: every key stays in the text box until
/// enter, and the question stays unanswered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_slow_frames_a_rejection_message_keeps_its_keys_when_its_prompt_goes() {
    let s = scene("seen-slow-reject", 100, 30).await;
    let (asking, per) = s.permission_under_slow_frames().await;
    s.bar_armed();
    s.t.keys(&["m"]);
    s.t.wait_for_secs("the text box", 30, |sc| {
        sc.contains("reject with a message")
    });
    s.send(&["-l", "not now"]);
    // Another client rejects it, and the agent asks next, while the typing
    // goes on: a burst every 40 ms.
    s.reject_elsewhere(&per).await;
    s.server.wait_idle(&asking, 60).await;
    s.server.prompt(&asking, "ask me").await;
    let typing = [" ", "1", "2", "y", "n", "a", " ", "1", "Space", "2"];
    for k in typing.iter().cycle().take(100) {
        std::thread::sleep(Duration::from_millis(40));
        s.send(&[k]);
    }
    // Still asking: none of those keys answered it.
    let que = s.wait_pending("question").await;
    s.still_pending("question", &que).await;
    s.t.wait_for_secs("the text box still open, its prompt gone", 30, |sc| {
        sc.contains("gone: reject with a message")
    });
    s.t.keys(&["Enter"]);
    s.t.wait_for_secs("the text box closed, nothing sent", 30, |sc| {
        sc.contains("not sent")
    });
    s.still_pending("question", &que).await;
    s.answer_properly("question", &["1", "Enter"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_in_the_jump_list_over_a_question_does_not_answer_it() {
    let s = scene("seen-jump", 100, 30).await;
    s.server.prompt(&s.session, "ask me").await;
    let id = s.wait_pending("question").await;
    s.bar_armed();
    s.t.keys(&["i"]);
    s.t.wait_for("the jump list", |sc| sc.contains("ask me"));
    s.send(&["j"]);
    s.send(&["j"]);
    s.send(&["Enter"]);
    s.send(&["Enter"]);
    s.still_pending("question", &id).await;
    // The jump list's choice moved focus to the turns: the question waits
    // for tab.
    s.t.keys(&["Tab"]);
    s.answer_properly("question", &["2", "Enter"]).await;
}
