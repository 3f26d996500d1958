//! Sessions written out as bus events (a recording's lines), for tests that
//! need a shape no capture has: cards far apart, a word in one session only.

use serde_json::{Value, json};

#[derive(Default)]
pub struct Built {
    lines: Vec<String>,
    /// Ids and times grow with each record (ids sort by creation).
    n: u64,
}

impl Built {
    fn next(&mut self) -> u64 {
        self.n += 1;
        self.n
    }

    fn event(&mut self, kind: &str, properties: Value) {
        let n = self.next();
        let line = json!({"t": n, "event": {"id": format!("evt_{n:020}"), "type": kind, "properties": properties}});
        self.lines.push(line.to_string());
    }

    pub fn session(&mut self, id: &str, title: &str) {
        let at = 1_795_339_000_000 + self.next() as i64;
        self.event(
            "session.created",
            json!({"sessionID": id, "info": {"id": id, "version": "1.18.33", "projectID": "p",
                "directory": "/home/dev/p", "title": title, "time": {"created": at, "updated": at}}}),
        );
    }

    fn message(&mut self, session: &str, info: Value) -> String {
        let n = self.next();
        let id = format!("msg_{n:020}");
        let mut info = info;
        info["id"] = json!(id);
        info["sessionID"] = json!(session);
        info["time"] = json!({"created": 1_795_339_000_000 + n as i64 * 1000});
        self.event(
            "message.updated",
            json!({"sessionID": session, "info": info}),
        );
        id
    }

    fn part(&mut self, session: &str, message: &str, part: Value) {
        let n = self.next();
        let mut part = part;
        part["id"] = json!(format!("prt_{n:020}"));
        part["sessionID"] = json!(session);
        part["messageID"] = json!(message);
        self.event(
            "message.part.updated",
            json!({"sessionID": session, "part": part}),
        );
    }

    /// A user prompt; its message id.
    pub fn user(&mut self, session: &str, text: &str) -> String {
        let id = self.message(
            session,
            json!({"role": "user", "agent": "build", "model": {"providerID": "mock", "modelID": "mock-1"}}),
        );
        self.part(session, &id, json!({"type": "text", "text": text}));
        id
    }

    fn assistant(&mut self, session: &str, parent: &str) -> String {
        self.message(
            session,
            json!({"role": "assistant", "parentID": parent, "modelID": "mock-1", "providerID": "mock",
                "mode": "build", "agent": "build", "finish": "stop"}),
        )
    }

    /// An answer in text.
    pub fn answer(&mut self, session: &str, parent: &str, text: &str) {
        let id = self.assistant(session, parent);
        self.part(session, &id, json!({"type": "text", "text": text}));
    }

    /// An answer that ran a bash command: one card.
    pub fn bash(&mut self, session: &str, parent: &str, command: &str, output: &str) {
        let id = self.assistant(session, parent);
        let call = format!("call_{}", self.next());
        self.part(
            session,
            &id,
            json!({"type": "tool", "callID": call, "tool": "bash", "state": {"status": "completed",
                "input": {"command": command, "description": command}, "output": output,
                "title": command, "metadata": {"output": output, "exit": 0},
                "time": {"start": 1, "end": 2}}}),
        );
    }

    /// `pairs` prompts answered in text: `filler N` each.
    pub fn filler(&mut self, session: &str, pairs: usize) {
        for i in 0..pairs {
            let q = self.user(session, &format!("filler question {i}"));
            self.answer(session, &q, &format!("filler answer {i}"));
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.lines.join("\n").into_bytes();
        out.push(b'\n');
        out
    }
}

/// One session: a bash card saying `OLD-CARD` at the start, 20 exchanges,
/// one saying `MID-CARD`, 20 more, and one saying `NEW-CARD` at the end.
pub fn cards_far_apart() -> Vec<u8> {
    let mut b = Built::default();
    let s = "ses_cardsfarapart0000000001";
    b.session(s, "Cards far apart");
    let q = b.user(s, "run the old command");
    b.bash(s, &q, "echo OLD-CARD", "OLD-CARD\n");
    b.filler(s, 20);
    let q = b.user(s, "run the middle command");
    b.bash(s, &q, "echo MID-CARD", "MID-CARD\n");
    b.filler(s, 20);
    let q = b.user(s, "run the new command");
    b.bash(s, &q, "echo NEW-CARD", "NEW-CARD\n");
    b.bytes()
}

/// Two sessions; the word `zanzibar` is only in the content of the older
/// one ("Beta"), 30 exchanges before its end, and in no title.
pub fn a_word_in_one_session() -> Vec<u8> {
    let mut b = Built::default();
    let beta = "ses_beta00000000000000000001";
    let alpha = "ses_zalpha000000000000000001";
    b.session(beta, "Beta plans");
    let q = b.user(beta, "where does the ship go?");
    b.answer(beta, &q, "The ship sails to zanzibar at dawn.");
    b.filler(beta, 30);
    b.session(alpha, "Alpha notes");
    let q = b.user(alpha, "say hello");
    b.answer(alpha, &q, "hello there");
    b.bytes()
}
