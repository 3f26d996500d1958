//! Migrations 19 and 20: the word index again, now with an index of every word's
//! first three letters (FTS5's `prefix = '3'`), so a word typed three
//! letters in ("the", "fun") is one lookup, not a merge of every word that
//! starts so. The index keeps no text, so an archive that holds parts is
//! indexed again from their JSON, a few thousand at a time, while the old
//! index answers searches: the writer does it when it is idle, `ocview
//! archive reindex` at once. Documents written meanwhile go to both
//! indexes where the new one is past them (or they are newer than it
//! reaches); the rest it reads as they are when it gets there. Then the
//! new index takes the old one's place. An empty archive takes it at once.
//! Migration 20 does it again for an index that keeps no positions.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::archive::sqlite::document::document;
use crate::archive::sqlite::event_log::PartReader;
use crate::archive::sqlite::search::{part_doc, title_doc};

/// What follows a re-index's new index in migrations 19 and 20: its
/// merges, and how far it has come (the text of 19 is as it was run).
macro_rules! reindex_table {
    () => {
        "
    INSERT INTO search_next (search_next, rank) VALUES ('automerge', 16);
    CREATE TABLE reindex (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        parts_done INTEGER NOT NULL,
        parts_end INTEGER NOT NULL,
        titles_done INTEGER NOT NULL,
        titles_end INTEGER NOT NULL
    );
    INSERT INTO reindex VALUES (1, 0, (SELECT coalesce(max(pk), 0) FROM parts),
        0, (SELECT coalesce(max(pk), 0) FROM sessions));"
    };
}

/// Migration 19's SQL: the new index and how far it has come.
pub const SQL: &str = concat!(
    "CREATE VIRTUAL TABLE search_next USING fts5(
        body, content = '', contentless_delete = 1, tokenize = 'unicode61', prefix = '3'
    );",
    reindex_table!()
);

/// Migration 20's SQL: the word index again, keeping no positions
/// (FTS5's `detail = none`): they were half of it on real text,
/// which made an archive of opencode's sessions larger than half their
/// database. A phrase is found as all its pieces and checked against the
/// hit's text (`super::search`). A re-index of migration 19 still under
/// way starts again as this one.
pub const SQL_20: &str = concat!(
    "DROP TABLE IF EXISTS search_next;
    DROP TABLE IF EXISTS reindex;
    CREATE VIRTUAL TABLE search_next USING fts5(
        body, content = '', contentless_delete = 1, tokenize = 'unicode61', prefix = '3',
        detail = none
    );",
    reindex_table!()
);

/// Migrations 19's and 20's step: with nothing to index, the new index
/// takes over.
pub fn step(tx: &Transaction) -> rusqlite::Result<()> {
    if let Some(s) = state(tx)?
        && s.parts_end == 0
        && s.titles_end == 0
    {
        take_over(tx)?;
    }
    Ok(())
}

/// How much of its documents the word index holds in memory before it
/// writes them to disk as a segment. FTS5's default, a megabyte, cut an
/// import's batch of real parts into a dozen segments, each to be merged
/// again later: most of what the index cost. Pages are taken as the
/// pending words grow, and given back at each commit.
const PENDING_BYTES: i64 = 16 << 20;

/// Migration 21's step: the word index, and one being built, write a
/// batch as one segment.
pub fn flush_by_batch(tx: &Transaction) -> rusqlite::Result<()> {
    configure(tx, &[("hashsize", PENDING_BYTES)])
}

/// How many segments of one level the word index merges into one, and
/// lets a level hold before it must. Each merge writes its words again:
/// sixty-four at a time, a word is written again about a third fewer
/// times over an archive's life than sixteen at a time (log 64 against
/// log 16 of its segments), and an import of a hundred thousand parts
/// (some sixty batches) merges nothing yet. A search reads more segments
/// (about three times as many at a million parts), in a time not told
/// apart from sixteen's.
const MERGE_WIDTH: i64 = 64;

/// Migration 23's step: the word index, and one being built, merge their
/// segments sixty-four at a time (FTS5's `automerge`), and only a level of
/// as many is merged whole at once (`crisismerge`, else sixteen).
pub fn merge_wider(tx: &Transaction) -> rusqlite::Result<()> {
    configure(
        tx,
        &[("automerge", MERGE_WIDTH), ("crisismerge", MERGE_WIDTH)],
    )
}

/// FTS5's `settings` on the word index, and on one being built.
fn configure(tx: &Transaction, settings: &[(&str, i64)]) -> rusqlite::Result<()> {
    let building = state(tx)?.is_some();
    for table in ["search", "search_next"] {
        if table == "search" || building {
            for (key, value) in settings {
                tx.execute(
                    &format!("INSERT INTO {table} ({table}, rank) VALUES (?1, ?2)"),
                    rusqlite::params![key, value],
                )?;
            }
        }
    }
    Ok(())
}

fn take_over(c: &Connection) -> rusqlite::Result<()> {
    c.execute_batch(
        "DROP TABLE search;
         ALTER TABLE search_next RENAME TO search;
         DROP TABLE reindex;",
    )
}

/// How far the new index has come: parts and titles up to `*_done` (row
/// keys) are in it, of those up to `*_end` when it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    pub parts_done: i64,
    pub parts_end: i64,
    pub titles_done: i64,
    pub titles_end: i64,
}

impl State {
    /// Whether a document written now goes to the new index too: the
    /// re-index is past its row, or its row is newer than the re-index
    /// reaches (else the re-index reads it when it gets there: it would be
    /// there twice).
    pub fn also_next(&self, pk: i64, title: bool) -> bool {
        let (done, end) = match title {
            true => (self.titles_done, self.titles_end),
            false => (self.parts_done, self.parts_end),
        };
        pk <= done || pk > end
    }

    /// (done, all) in rows.
    pub fn progress(&self) -> (u64, u64) {
        let n = |v: i64| v.max(0) as u64;
        (
            n(self.parts_done) + n(self.titles_done),
            n(self.parts_end) + n(self.titles_end),
        )
    }
}

/// The re-index under way, if one is.
pub fn state(c: &Connection) -> rusqlite::Result<Option<State>> {
    let kept: bool = c.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'reindex'",
        [],
        |r| r.get(0),
    )?;
    if !kept {
        return Ok(None);
    }
    c.query_row(
        "SELECT parts_done, parts_end, titles_done, titles_end FROM reindex WHERE id = 1",
        [],
        |r| {
            Ok(State {
                parts_done: r.get(0)?,
                parts_end: r.get(1)?,
                titles_done: r.get(2)?,
                titles_end: r.get(3)?,
            })
        },
    )
    .optional()
}

/// Up to `budget` rows more into the new index, in one transaction; after
/// the last, the new index takes the old one's place. How far it is
/// (done, all), or `None` when there is nothing to do.
pub fn some(conn: &Connection, budget: usize) -> rusqlite::Result<Option<(u64, u64)>> {
    if state(conn)?.is_none() {
        return Ok(None);
    }
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Another writer may have finished it meanwhile.
    let Some(mut s) = state(&tx)? else {
        return Ok(None);
    };
    let budget = budget.max(1) as i64;
    let mut docs: Vec<(i64, String)> = Vec::new();
    if s.parts_done < s.parts_end {
        let upto = s.parts_done.saturating_add(budget).min(s.parts_end);
        let mut rows = tx.prepare(
            "SELECT pk, kind, time, raw, logged FROM parts WHERE pk > ?1 AND pk <= ?2 ORDER BY pk",
        )?;
        let mut reader = PartReader::default();
        let mut q = rows.query(params![s.parts_done, upto])?;
        while let Some(r) = q.next()? {
            let kind: String = r.get(1)?;
            // A part whose JSON cannot be read is left out, not the step.
            let Ok(raw) = reader.raw(&tx, r.get_ref(3)?, r.get(4)?) else {
                continue;
            };
            let mut text = crate::archive::snippet::text_of_part(&kind, &raw);
            crate::archive::cap_indexed(&mut text);
            if !text.trim().is_empty() {
                docs.push((part_doc(r.get(0)?, r.get(2)?), document(&text).into_owned()));
            }
        }
        s.parts_done = upto;
    } else if s.titles_done < s.titles_end {
        let upto = s.titles_done.saturating_add(budget).min(s.titles_end);
        let mut rows = tx.prepare(
            "SELECT pk, title, updated FROM sessions WHERE pk > ?1 AND pk <= ?2 ORDER BY pk",
        )?;
        let mut q = rows.query(params![s.titles_done, upto])?;
        while let Some(r) = q.next()? {
            let title: String = r.get::<_, Option<String>>(1)?.unwrap_or_default();
            docs.push((
                title_doc(r.get(0)?, r.get(2)?),
                document(&title).into_owned(),
            ));
        }
        s.titles_done = upto;
    }
    {
        // In rowid order: one segment, not one per session.
        docs.sort_unstable_by_key(|d| d.0);
        let mut index = tx.prepare("INSERT INTO search_next (rowid, body) VALUES (?1, ?2)")?;
        for (doc, text) in &docs {
            index.execute(params![doc, text])?;
        }
    }
    let done = s.parts_done >= s.parts_end && s.titles_done >= s.titles_end;
    if done {
        take_over(&tx)?;
    } else {
        tx.execute(
            "UPDATE reindex SET parts_done = ?1, titles_done = ?2 WHERE id = 1",
            params![s.parts_done, s.titles_done],
        )?;
    }
    tx.commit()?;
    Ok(Some(s.progress()))
}

#[cfg(test)]
mod tests {
    /// Migration 19 ran with this text: its checksum is on record in
    /// every archive since.
    #[test]
    fn migration_19_keeps_its_text() {
        assert_eq!(
            crate::archive::encode::fnv(super::SQL.as_bytes()),
            0x5c70_328f_69e1_ce25
        );
    }
}
