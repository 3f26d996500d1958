//! SQLite's full-text search. The index is contentless (FTS5 `content=''`,
//! `contentless_delete=1`): a part's text is kept once, in its raw JSON,
//! and read back only for the few hits shown (`super::snippet`). Each
//! document's rowid follows time — the second it happened, then the row it
//! indexes — so "newest first" is FTS5 walking its doclists backwards and
//! stopping at the limit, and a date range is a rowid range: a word found
//! in every other part costs no more than a rare one.

use rusqlite::types::Value;

use crate::archive::engine::ArchiveError;
use crate::archive::query::{Hit, Query, Searched};
use crate::archive::sqlite::{SqliteArchive, classify};

/// The bits of a document's rowid below its second.
const SECOND_SHIFT: u32 = 30;
/// The row's key kept in a rowid (above the title bit).
const KEY_MASK: i64 = (1 << 29) - 1;

/// A part's document: its time (ms) and its row.
pub fn part_doc(pk: i64, time_ms: i64) -> i64 {
    ((time_ms.max(0) / 1000) << SECOND_SHIFT) | ((pk & KEY_MASK) << 1)
}

/// A session title's document: its last update (ms) and its row.
pub fn title_doc(pk: i64, updated_ms: i64) -> i64 {
    part_doc(pk, updated_ms) | 1
}

/// `part_doc` in SQL, over a `parts` row's columns.
pub const PART_DOC_SQL: &str = "(((max(time, 0) / 1000) << 30) | ((pk & 536870911) << 1))";
/// `title_doc` in SQL, over a `sessions` row's columns.
pub const TITLE_DOC_SQL: &str = "(((max(updated, 0) / 1000) << 30) | ((pk & 536870911) << 1) | 1)";

/// The hits of `q`, newest first.
pub fn search(a: &mut SqliteArchive, q: &Query) -> Result<Searched, ArchiveError> {
    let Some(matching) = q.fts5() else {
        return Ok(Searched::default());
    };
    let limit = q.limit.max(1) as usize;
    let (low, high) = rowid_range(q.since, q.until);
    let (mut hits, unchecked_below) = rows(a, q, &matching, low, high, limit)?;
    // Rowids order by the second: the rest of the last hit's second may
    // hold a newer hit (by the ms) than some already found.
    if hits.len() == limit
        && let Some(last) = hits.last().map(|h| h.0)
    {
        let second_start = (last >> SECOND_SHIFT) << SECOND_SHIFT;
        let (rest, _) = rows(a, q, &matching, second_start.max(low), last, usize::MAX)?;
        hits.extend(rest);
    }
    let mut hits: Vec<Hit> = hits.into_iter().map(|(_, hit)| hit).collect();
    hits.sort_by_key(|h| std::cmp::Reverse(h.time));
    hits.truncate(limit);
    Ok(Searched {
        hits,
        // The documents below that rowid are in its second or before.
        unchecked_before: unchecked_below.map(|doc| ((doc >> SECOND_SHIFT) + 1) * 1000),
    })
}

/// The rowids a date range can hold: [low, high).
fn rowid_range(since: Option<i64>, until: Option<i64>) -> (i64, i64) {
    let low = since.map_or(0, |t| part_doc(0, t));
    let high = until.map_or(i64::MAX, |t| {
        // Times before `until` lie in seconds up to that of `until - 1`.
        let last_second = (t.max(1) - 1) / 1000;
        (last_second + 1).saturating_mul(1 << SECOND_SHIFT)
    });
    (low, high)
}

type Found = (i64, Hit);

/// The most documents read to check phrases in one search: a phrase of
/// common words rarely next to each other stops here with what it found.
const CHECKED_AT_MOST: usize = 20_000;

/// The hits between `low` and `high`, newest first, at most `limit`, and
/// the rowid below which documents were left unchecked, if any. The index
/// keeps no positions: where a term is a phrase, the documents that hold
/// all its pieces are read in rounds and kept when the phrase is in them,
/// up to `CHECKED_AT_MOST`.
fn rows(
    a: &mut SqliteArchive,
    q: &Query,
    matching: &str,
    low: i64,
    mut high: i64,
    limit: usize,
) -> Result<(Vec<Found>, Option<i64>), ArchiveError> {
    if !q.terms().iter().any(|t| t.is_phrase()) {
        return some_rows(a, q, matching, low, high, limit)
            .map(|rows| (rows.into_iter().map(|(found, _)| found).collect(), None));
    }
    let mut out = Vec::new();
    let mut checked = 0;
    loop {
        // Rounds grow as the phrase proves rare: fewer walks of the index.
        let round = limit
            .saturating_sub(out.len())
            .max(checked)
            .clamp(64, 2_000);
        let rows = some_rows(a, q, matching, low, high, round)?;
        let full = rows.len() == round;
        checked += rows.len();
        if let Some(((last, _), _)) = rows.last() {
            high = *last;
        }
        out.extend(rows.into_iter().filter(|(_, holds)| *holds).map(|(f, _)| f));
        if out.len() >= limit || !full {
            out.truncate(limit);
            return Ok((out, None));
        }
        if checked >= CHECKED_AT_MOST {
            return Ok((out, Some(high)));
        }
    }
}

/// One round of `rows`: each found document, and whether every phrase
/// of `q` is in it.
fn some_rows(
    a: &mut SqliteArchive,
    q: &Query,
    matching: &str,
    low: i64,
    high: i64,
    limit: usize,
) -> Result<Vec<(Found, bool)>, ArchiveError> {
    let (sql, args) = rows_sql(q, matching, low, high, limit);
    let err = |e: rusqlite::Error| classify(&a.place, &e);
    let mut stmt = a.conn.prepare(&sql).map_err(err)?;
    let terms = q.terms();
    let reader = std::cell::RefCell::new(crate::archive::sqlite::event_log::PartReader::default());
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| {
            let kind: String = r.get(10)?;
            let raw = match r.get_ref(11)? {
                rusqlite::types::ValueRef::Null => None,
                v => Some(reader.borrow_mut().raw(&a.conn, v, r.get(13)?)?),
            };
            let title: Option<String> = r.get(12)?;
            let body = match raw {
                Some(raw) => crate::archive::snippet::text_of_part(&kind, &raw),
                None => title.unwrap_or_default(),
            };
            let mut hit = Hit {
                session_id: r.get(1)?,
                title: r.get(2)?,
                time: r.get(3)?,
                project: r.get(4)?,
                server: r.get(5)?,
                host: r.get(6)?,
                file: r.get(7)?,
                message_id: r.get(8)?,
                part_id: r.get(9)?,
                kind,
                snippet: String::new(),
            };
            let holds = terms.iter().all(|t| t.found_in(&body));
            if holds {
                hit.set_snippet(&crate::archive::snippet::snippet(&body, &terms));
            }
            Ok(((r.get(0)?, hit), holds))
        })
        .map_err(err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(err)
}

/// The statement that walks the index newest first between `low` and
/// `high` (the outer loop: a LEFT JOIN keeps it there), each row checked
/// against the filters, stopping at `limit`; and its arguments.
fn rows_sql(q: &Query, matching: &str, low: i64, high: i64, limit: usize) -> (String, Vec<Value>) {
    let mut sql = String::from(
        "SELECT f.rowid, coalesce(p.session_id, st.id), coalesce(s.title, st.title, ''),
                coalesce(p.time, st.updated), coalesce(s.directory, st.directory),
                coalesce(s.server, st.server), coalesce(s.host, st.host), coalesce(s.file, st.file),
                p.message_id, p.id, coalesce(p.kind, 'title'), p.raw, st.title, p.logged
         FROM search f
         LEFT JOIN parts p ON (f.rowid & 1) = 0 AND p.pk = (f.rowid >> 1) & 536870911
         LEFT JOIN sessions st ON (f.rowid & 1) = 1 AND st.pk = (f.rowid >> 1) & 536870911
         LEFT JOIN sessions s ON s.id = p.session_id",
    );
    if q.model.is_some() || q.agent.is_some() {
        sql.push_str(" LEFT JOIN messages m ON m.id = p.message_id");
    }
    // A row whose key wrapped (more than 2^29 rows) or that moved in time
    // is never shown for another.
    sql.push_str(
        " WHERE search MATCH ?1 AND f.rowid >= ?2 AND f.rowid < ?3
           AND (max(coalesce(p.time, st.updated), 0) / 1000) = (f.rowid >> 30)",
    );
    let mut args: Vec<Value> = vec![
        Value::Text(matching.to_string()),
        Value::Integer(low),
        Value::Integer(high),
    ];
    let mut filter = |sql: &mut String, clause: &str, value: Value| {
        args.push(value);
        sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
    };
    let text = |s: &String| Value::Text(s.clone());
    if let Some(p) = &q.project {
        filter(
            &mut sql,
            " AND instr(coalesce(s.directory, st.directory), ?) > 0",
            text(p),
        );
    }
    if let Some(v) = &q.server {
        filter(
            &mut sql,
            " AND (instr(coalesce(s.server, st.server), ?) > 0
                   OR instr(coalesce(s.host, st.host), ?) > 0)",
            text(v),
        );
    }
    if let Some(t) = q.since {
        filter(
            &mut sql,
            " AND coalesce(p.time, st.updated) >= ?",
            Value::Integer(t),
        );
    }
    if let Some(t) = q.until {
        filter(
            &mut sql,
            " AND coalesce(p.time, st.updated) < ?",
            Value::Integer(t),
        );
    }
    if let Some(v) = &q.model {
        filter(&mut sql, " AND instr(m.model, ?) > 0", text(v));
    }
    if let Some(v) = &q.agent {
        filter(&mut sql, " AND m.agent = ?", text(v));
    }
    if let Some(v) = &q.tool {
        filter(&mut sql, " AND p.tool = ?", text(v));
    }
    if let Some(v) = &q.state {
        filter(&mut sql, " AND p.state = ?", text(v));
    }
    sql.push_str(" ORDER BY f.rowid DESC");
    if limit != usize::MAX {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    (sql, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_order_by_time_then_row() {
        let a = part_doc(7, 1_790_000_000_123);
        let b = part_doc(3, 1_790_000_001_000);
        assert!(b > a);
        assert_eq!(a >> SECOND_SHIFT, 1_790_000_000);
        assert_ne!(title_doc(7, 1_790_000_000_123), a);
        assert_eq!(part_doc(5, -4), part_doc(5, 0));
        let (low, high) = rowid_range(Some(1_790_000_000_500), Some(1_790_000_001_000));
        assert!(low <= a && a < high);
        assert!(b >= high);
    }
}
