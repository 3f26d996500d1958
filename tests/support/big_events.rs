//! A large event log (bus events, one a line, each with the time it was
//! received), as a recording holds it: many sessions, each with user and assistant messages whose text
//! streams as deltas (some identical, repeated on purpose), reasoning, and
//! tool calls that go from running to completed with an output. Every
//! session has a word of its own in a tool output, for search.

use std::io::Write;

use serde_json::json;

/// Write `sessions` sessions of `messages` message pairs each to `out`.
pub fn write(out: &mut impl Write, sessions: usize, messages: usize) {
    let t0: i64 = 1_795_339_297_871;
    let mut t = t0;
    let line = |out: &mut dyn Write, t: &mut i64, event: serde_json::Value| {
        *t += 7;
        writeln!(out, "{}", json!({"t": *t, "event": event})).unwrap();
    };
    for s in 0..sessions {
        let ses = format!("ses_{s:06}bigsession");
        let dir = format!("/work/project{}", s % 7);
        let now = t;
        line(
            out,
            &mut t,
            json!({"type": "session.created", "properties": {"sessionID": ses, "info": {
                "id": ses, "title": format!("big session {s}"), "directory": dir,
                "time": {"created": now, "updated": now}}}}),
        );
        for m in 0..messages {
            let user = format!("msg_{s:06}{m:05}u");
            let asst = format!("msg_{s:06}{m:05}v");
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.updated", "properties": {"sessionID": ses, "info": {
                    "id": user, "sessionID": ses, "role": "user", "time": {"created": now}}}}),
            );
            line(
                out,
                &mut t,
                json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {
                    "id": format!("prt_{s:06}{m:05}a"), "messageID": user, "sessionID": ses,
                    "type": "text", "text": format!("please fix the billing code, step {m} of session {s}")}}}),
            );
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.updated", "properties": {"sessionID": ses, "info": {
                    "id": asst, "sessionID": ses, "role": "assistant", "parentID": user,
                    "modelID": "big-model", "providerID": "fake", "agent": "build",
                    "time": {"created": now}}}}),
            );
            let reasoning = format!("prt_{s:06}{m:05}b");
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {
                    "id": reasoning, "messageID": asst, "sessionID": ses, "type": "reasoning",
                    "text": "", "time": {"start": now}}}}),
            );
            for d in 0..3 {
                line(
                    out,
                    &mut t,
                    json!({"type": "message.part.delta", "properties": {"sessionID": ses,
                        "messageID": asst, "partID": reasoning, "field": "text",
                        "delta": format!("thinking {d} about invoices; ")}}),
                );
            }
            let tool = format!("prt_{s:06}{m:05}c");
            let input = json!({"filePath": format!("/work/project{}/src/billing_{m}.rs", s % 7)});
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {
                    "id": tool, "messageID": asst, "sessionID": ses, "type": "tool", "tool": "read",
                    "callID": format!("call_{s}_{m}"),
                    "state": {"status": "running", "input": input, "time": {"start": now}}}}}),
            );
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {
                    "id": tool, "messageID": asst, "sessionID": ses, "type": "tool", "tool": "read",
                    "callID": format!("call_{s}_{m}"),
                    "state": {"status": "completed", "input": input, "title": "read",
                        "output": format!("fn total() {{ /* marker{s}x{m} */ }}\nlet invoice = {m};\n{}", "pad ".repeat(40)),
                        "metadata": {}, "time": {"start": now - 5, "end": now}}}}}),
            );
            let text = format!("prt_{s:06}{m:05}d");
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.part.updated", "properties": {"sessionID": ses, "part": {
                    "id": text, "messageID": asst, "sessionID": ses, "type": "text",
                    "text": "", "time": {"start": now}}}}),
            );
            // The same delta twice in a row: both count.
            for d in ["done ", "done ", &format!("with step {m}.")] {
                line(
                    out,
                    &mut t,
                    json!({"type": "message.part.delta", "properties": {"sessionID": ses,
                        "messageID": asst, "partID": text, "field": "text", "delta": d}}),
                );
            }
            let now = t;
            line(
                out,
                &mut t,
                json!({"type": "message.updated", "properties": {"sessionID": ses, "info": {
                    "id": asst, "sessionID": ses, "role": "assistant", "parentID": user,
                    "modelID": "big-model", "providerID": "fake", "agent": "build",
                    "time": {"created": now - 40, "completed": now}}}}),
            );
        }
        line(
            out,
            &mut t,
            json!({"type": "session.idle", "properties": {"sessionID": ses}}),
        );
    }
}
