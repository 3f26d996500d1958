//! A long session on the real server: an `opencode export`-shaped document
//! (`{info, messages: [{info, parts}]}`, user and assistant messages
//! alternating, ids ascending, one text part each), brought in with
//! `opencode import`.

use serde_json::{Value, json};

use super::opencode::{Server, binary};

/// What to make: the ids' 14-character tails and each message's text
/// (user messages at even indexes).
pub struct LongSession<'a> {
    pub session: &'a str,
    pub title: &'a str,
    pub messages: usize,
    pub id_tail: &'a dyn Fn(usize) -> String,
    pub text: &'a dyn Fn(usize) -> String,
}

impl LongSession<'_> {
    /// The document, and its message ids in order.
    pub fn document(&self, project_id: &str, directory: &str) -> (Value, Vec<String>) {
        let session = self.session;
        let t0: i64 = 1_795_339_297_871;
        let mut ids = Vec::new();
        let mut messages = Vec::new();
        let mut parent = String::new();
        for i in 0..self.messages {
            let id = format!(
                "msg_{:012x}{}",
                0x2028_fa44_f001u64 + i as u64 * 16,
                (self.id_tail)(i)
            );
            let part = format!(
                "prt_{:012x}{}",
                0x2028_fa44_f002u64 + i as u64 * 16,
                (self.id_tail)(i + 500_000)
            );
            let time = t0 + i as i64 * 1000;
            let info = if i % 2 == 0 {
                parent = id.clone();
                json!({"role": "user", "time": {"created": time}, "agent": "build",
                    "model": {"providerID": "mock", "modelID": "mock-1"}, "id": id, "sessionID": session})
            } else {
                json!({"parentID": parent, "role": "assistant", "mode": "build", "agent": "build",
                    "path": {"cwd": directory, "root": directory}, "cost": 0,
                    "tokens": {"input": 10, "output": 20, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                    "modelID": "mock-1", "providerID": "mock", "finish": "stop",
                    "time": {"created": time, "completed": time + 500}, "id": id, "sessionID": session})
            };
            messages.push(json!({"info": info, "parts": [
                {"type": "text", "text": (self.text)(i), "id": part, "sessionID": session, "messageID": id}
            ]}));
            ids.push(id);
        }
        let info = json!({"id": session, "slug": "long-session", "projectID": project_id,
            "directory": directory, "title": self.title, "version": "1.18.33",
            "time": {"created": t0, "updated": t0 + self.messages as i64 * 1000}});
        (json!({"info": info, "messages": messages}), ids)
    }

    /// Import it into the server's current project; its message ids.
    pub async fn import(&self, server: &Server) -> Vec<String> {
        let project = server.get("/project/current").await;
        let directory = server.project.display().to_string();
        let (doc, ids) = self.document(project["id"].as_str().unwrap(), &directory);
        let file = server.home.join(format!("{}-export.json", self.session));
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let out = server
            .command(&binary())
            .args(["import", &file.display().to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "opencode import: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ids
    }
}

/// About 1.2 KB of Markdown per message, as a real long session holds:
/// `prose` sentences over a line, a list, and now and then a code block.
pub fn markdown_text(i: usize, prose: usize) -> String {
    let mut t = format!("Message {i}: ");
    t.push_str(&"the quick brown fox jumps over the lazy dog; ".repeat(prose));
    t.push('\n');
    t.push_str(&"- a point made in a list item, with `code`\n".repeat(10));
    if i % 7 == 3 {
        t.push_str("```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n");
    }
    t
}
