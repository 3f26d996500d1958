//! SQLite's record of every answer to a prompt (`crate::archive::rows::AnswerRow`)
//! and migration 15.

use rusqlite::{Connection, Transaction, params};

use crate::archive::engine::AnswerFilter;
use crate::archive::rows::AnswerRow;

/// Migration 15's SQL.
pub const SQL: &str = "CREATE TABLE answers (
        request_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        prompt TEXT NOT NULL,
        shown TEXT NOT NULL,
        answer TEXT NOT NULL,
        patterns TEXT NOT NULL,
        message TEXT,
        by TEXT NOT NULL,
        machine TEXT NOT NULL,
        os_user TEXT NOT NULL,
        server TEXT,
        time INTEGER NOT NULL,
        outcome TEXT NOT NULL
    );
    CREATE INDEX answers_by_time ON answers(time);";

/// An answer given here replaces one seen given by another client (it is
/// the same answer, seen from its side); one seen never replaces one given.
const PUT: &str = "INSERT INTO answers (request_id, session_id, kind, prompt, shown, answer,
        patterns, message, by, machine, os_user, server, time, outcome)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
    ON CONFLICT (request_id) DO UPDATE SET session_id = excluded.session_id,
        kind = excluded.kind, prompt = excluded.prompt, shown = excluded.shown,
        answer = excluded.answer, patterns = excluded.patterns, message = excluded.message,
        by = excluded.by, machine = excluded.machine, os_user = excluded.os_user,
        server = excluded.server, time = excluded.time, outcome = excluded.outcome
    WHERE answers.by <> 'ocview' OR excluded.by = 'ocview'";

pub(in crate::archive) fn save(
    tx: &Transaction<'_>,
    answers: &[AnswerRow],
) -> rusqlite::Result<()> {
    if answers.is_empty() {
        return Ok(());
    }
    let mut put = tx.prepare(PUT)?;
    for a in answers {
        put.execute(params![
            a.request_id,
            a.session_id,
            a.kind,
            a.prompt,
            a.shown,
            a.answer,
            serde_json::to_string(&a.patterns).unwrap_or_default(),
            a.message,
            a.by,
            a.machine,
            a.user,
            a.server,
            a.time,
            a.outcome
        ])?;
    }
    Ok(())
}

pub(in crate::archive) fn list(
    c: &Connection,
    f: &AnswerFilter,
) -> rusqlite::Result<Vec<AnswerRow>> {
    let mut st = c.prepare(
        "SELECT request_id, session_id, kind, prompt, shown, answer, patterns, message, by,
                machine, os_user, server, time, outcome
         FROM answers
         WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR instr(machine, ?2) > 0)
           AND (?3 IS NULL OR kind = ?3)
         ORDER BY time DESC, request_id LIMIT ?4",
    )?;
    let rows = st.query_map(
        params![f.session, f.machine, f.kind, i64::from(f.limit.max(1))],
        |r| {
            Ok(AnswerRow {
                request_id: r.get(0)?,
                session_id: r.get(1)?,
                kind: r.get(2)?,
                prompt: r.get(3)?,
                shown: r.get(4)?,
                answer: r.get(5)?,
                patterns: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or_default(),
                message: r.get(7)?,
                by: r.get(8)?,
                machine: r.get(9)?,
                user: r.get(10)?,
                server: r.get(11)?,
                time: r.get(12)?,
                outcome: r.get(13)?,
            })
        },
    )?;
    rows.collect()
}
