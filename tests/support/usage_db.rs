//! A generated opencode database with the schema opencode 1.18.33 created
//! (`tests/fixtures/opencode-1.18.33/database-schema.sql`, read from a real one):
//! sessions over a span of days, each with assistant messages of two
//! models and two agents, their step-finish and tool parts, and the
//! sessions' stored totals equal to their messages' sums.

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::json;

pub const SCHEMA: &str = include_str!("../fixtures/opencode-1.18.33/database-schema.sql");
const DAY_MS: i64 = 86_400_000;

/// `sessions` sessions spread over `days` days up to `now_ms`, each with
/// `messages` assistant messages (and their user prompts) and `parts`
/// parts per assistant message. Session `i`'s id is `ids(i)`.
pub fn generate(
    path: &Path,
    sessions: usize,
    messages: usize,
    parts: usize,
    days: i64,
    now_ms: i64,
    ids: impl Fn(usize) -> String,
) {
    let _ = std::fs::remove_file(path);
    let mut conn = Connection::open(path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    // Sessions go in after their messages (their totals are the sums).
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let tx = conn.transaction().unwrap();
    for (i, (pid, dir)) in [
        ("prj_alpha", "/home/dev/alpha"),
        ("prj_beta", "/home/dev/beta"),
    ]
    .iter()
    .enumerate()
    {
        tx.execute(
            "INSERT INTO project (id, worktree, name, time_created, time_updated, sandboxes) \
             VALUES (?1, ?2, ?3, 0, 0, '[]')",
            params![pid, dir, if i == 0 { "alpha" } else { "" }],
        )
        .unwrap();
    }
    {
        let mut ses = tx
            .prepare(
                "INSERT INTO session (id, project_id, slug, directory, title, version, cost, \
                 tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, \
                 time_created, time_updated) VALUES (?1, ?2, ?1, ?3, ?4, '1.18.33', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .unwrap();
        let mut msg = tx
            .prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)")
            .unwrap();
        let mut part = tx
            .prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)")
            .unwrap();
        for s in 0..sessions {
            let id = ids(s);
            // Spread over the days, a few a day, busier on some.
            let day = (s as i64 * 7919) % days.max(1);
            let start = now_ms - day * DAY_MS - (s as i64 % 13) * 60_000 - 3_600_000;
            let (project, dir) = if s % 3 == 0 {
                ("prj_beta", "/home/dev/beta")
            } else {
                ("prj_alpha", "/home/dev/alpha")
            };
            let mut tot = [0f64; 6];
            let mut t = start;
            for m in 0..messages {
                let user = format!("msg_{s:06}_{m:05}_u");
                msg.execute(params![
                    user,
                    id,
                    t,
                    json!({"role": "user", "time": {"created": t}, "agent": "build"}).to_string()
                ])
                .unwrap();
                t += 1000;
                let two = (s + m) % 4 == 0;
                let agent = if m % 5 == 0 { "plan" } else { "build" };
                let scale = 1 + (s % 7) as u64;
                let (input, output, reasoning, cread) = if two {
                    (2400 * scale, 320, 120, 800)
                } else {
                    (1500 * scale, 75, 0, 0)
                };
                let cost = if two {
                    0.004 * scale as f64
                } else {
                    0.0056 * scale as f64
                };
                let id_m = format!("msg_{s:06}_{m:05}_a");
                let data = json!({"role": "assistant", "parentID": user, "modelID": if two {"mock-2"} else {"mock-1"},
                    "providerID": "mock", "agent": agent, "mode": agent, "cost": cost,
                    "tokens": {"input": input, "output": output, "reasoning": reasoning, "cache": {"read": cread, "write": 0}},
                    "time": {"created": t, "completed": t + 500}});
                msg.execute(params![id_m, id, t, data.to_string()]).unwrap();
                for p in 0..parts {
                    let body = if p + 1 == parts {
                        json!({"type": "step-finish", "reason": "stop", "cost": cost,
                            "tokens": {"input": input, "output": output, "reasoning": reasoning, "cache": {"read": cread, "write": 0}}})
                    } else if p % 2 == 1 {
                        json!({"type": "tool", "tool": "read", "callID": "c", "state": {"status": "completed", "input": {}, "output": "x", "title": "", "metadata": {}, "time": {"start": t, "end": t}}})
                    } else {
                        json!({"type": "text", "text": "Some words of an answer, as long as a short paragraph."})
                    };
                    part.execute(params![
                        format!("prt_{s:06}_{m:05}_{p:03}"),
                        id_m,
                        id,
                        t,
                        body.to_string()
                    ])
                    .unwrap();
                }
                t += 1000;
                for (k, v) in [
                    cost,
                    input as f64,
                    output as f64,
                    reasoning as f64,
                    cread as f64,
                    0.0,
                ]
                .iter()
                .enumerate()
                {
                    tot[k] += v;
                }
            }
            ses.execute(params![
                id,
                project,
                dir,
                format!("Session {s} \u{1b}[31mtitle"),
                tot[0],
                tot[1] as i64,
                tot[2] as i64,
                tot[3] as i64,
                tot[4] as i64,
                tot[5] as i64,
                start,
                t
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
}
