//! PostgreSQL's search of the parts the log holds as they are (schema 10).
//! Such a part has no document of its own: its block of the log has one
//! for all the parts it holds (`event_blocks.tsv`, the distinct words of
//! their text, without positions), so the index takes a word once per
//! block, not once per part. A block that matches names candidates (the
//! parts whose place is in it); each is read from the block and checked
//! against the query by PostgreSQL itself, the same `to_tsvector` a part's
//! own document is made by, so a hit is exactly a hit of that document.
//! Parts past a block's budget, and parts the log does not hold as they
//! are, keep their own document (`search`).

use std::collections::{HashMap, HashSet};

use tokio_postgres::types::ToSql;

use crate::archive::engine::ArchiveError;
use crate::archive::postgres::PgArchive;
use crate::archive::postgres::block_words::{Piece, events_holding, may_hold, pieces};
use crate::archive::postgres::search::{
    SEPARATORS, filters, hits, message_of_part, query, translated,
};
use crate::archive::query::{Hit, Query};

/// The schema whose blocks hold their parts' documents.
pub(in crate::archive) const BLOCK_DOCUMENTS_SINCE: i64 = 10;

/// The most text (bytes) one block's document is made from: well under
/// PostgreSQL's 1 MB for a `tsvector`, whatever the words. A part past it
/// keeps a document of its own.
pub(in crate::archive) const BLOCK_TEXT_MAX: usize = 256 * 1024;

/// Schema 10: each block gets the document of the parts whose place is in
/// it (made from their own documents, each block under the budget), and
/// those parts give theirs up. A block is found newest first by the
/// newest part it holds; a block's parts by their place. The indexes of
/// documents leave out the rows without one (most parts now). A part's
/// model and agent are read from its message, as SQLite's are. A message
/// the log holds as it is keeps only its place there (`copy`).
pub const MIGRATION_10: &str = "
    ALTER TABLE event_blocks ADD COLUMN newest BIGINT, ADD COLUMN tsv TSVECTOR;
    CREATE TEMP TABLE block_documents ON COMMIT DROP AS
        SELECT p.logged >> 16 AS pk, array_to_tsvector(array_agg(DISTINCT u.lexeme)) AS tsv,
               max(p.time) AS newest
        FROM parts p, unnest(p.tsv) u
        WHERE p.logged IS NOT NULL AND p.tsv IS NOT NULL
        GROUP BY 1
        HAVING sum(octet_length(u.lexeme)) < 262144;
    UPDATE event_blocks b SET tsv = d.tsv, newest = d.newest
        FROM block_documents d WHERE b.pk = d.pk;
    UPDATE parts p SET tsv = NULL
        FROM block_documents d WHERE p.logged >> 16 = d.pk AND p.tsv IS NOT NULL;
    DROP INDEX parts_tsv;
    CREATE INDEX parts_tsv ON parts USING GIN (tsv) WHERE tsv IS NOT NULL;
    CREATE INDEX event_blocks_tsv ON event_blocks USING GIN (tsv) WHERE tsv IS NOT NULL;
    CREATE INDEX event_blocks_by_newest ON event_blocks (newest DESC) WHERE tsv IS NOT NULL;
    CREATE INDEX parts_by_block ON parts ((logged >> 16)) WHERE logged IS NOT NULL;
    ALTER TABLE parts DROP COLUMN model, DROP COLUMN agent;
    ALTER TABLE messages ADD COLUMN logged BIGINT, ADD COLUMN hash BIGINT;";

/// The texts a batch's blocks are indexed by: an event's key → its
/// part's text and time.
pub(in crate::archive) struct Documents<'a> {
    pub texts: HashMap<&'a str, (&'a str, i64)>,
    /// Schema 11: a block keeps its oldest part's time beside its newest.
    pub spans: bool,
    /// The plain words made here (`lexemes`), the rest by the parser.
    pub words_here: bool,
}

/// A block's document and the times of the parts in it.
pub(in crate::archive) struct BlockDocument {
    /// What the parser is given; `None`: the block has no document.
    pub text: Option<String>,
    /// The words made here (`lexemes`).
    pub words: Option<crate::archive::postgres::lexemes::Split>,
    pub newest: Option<i64>,
    pub oldest: Option<i64>,
}

/// The schema whose blocks keep their oldest part's time (`oldest`), so a
/// date range rules a block out at both ends.
pub(in crate::archive) const BLOCK_SPANS_SINCE: i64 = 11;

/// Schema 11: each indexed block's oldest part (of those whose place is
/// still in it: a part that moved on is not found there anyway). The index
/// a search walks newest first takes the oldest too, so `until` is checked
/// in the index, without reading the block. A block without one (written
/// by a writer that may not upgrade the archive, as it was upgraded)
/// counts as older than any date.
pub const MIGRATION_11: &str = "
    ALTER TABLE event_blocks ADD COLUMN oldest BIGINT;
    UPDATE event_blocks b SET oldest = o.oldest
        FROM (SELECT logged >> 16 AS pk, min(time) AS oldest FROM parts
              WHERE logged IS NOT NULL AND tsv IS NULL GROUP BY 1) o
        WHERE b.pk = o.pk AND b.tsv IS NOT NULL;
    DROP INDEX event_blocks_by_newest;
    CREATE INDEX event_blocks_by_newest ON event_blocks (newest DESC, (coalesce(oldest, 0)))
        WHERE tsv IS NOT NULL;";

/// Where a block's document cuts its text into runs (`document`).
#[inline]
fn cut(b: u8) -> bool {
    CUTS[usize::from(b)]
}

/// `cut` of each byte, looked up: it is asked of every byte indexed.
const CUTS: [bool; 256] = {
    let mut cuts = [false; 256];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        cuts[b] = byte.is_ascii_whitespace() || matches!(byte, b'<' | b'>' | b'&');
        b += 1;
    }
    let mut i = 0;
    while i < SEPARATORS.len() {
        cuts[SEPARATORS[i] as usize] = true;
        i += 1;
    }
    cuts
};

/// What a block's document is made of for a part, made ahead of the write
/// (`Engine::rows_ahead`): its text as the index takes it, each run once.
/// A block's document of these is the one of the parts' whole texts, made
/// of a fraction of them, and on the import's preparing thread.
pub(in crate::archive) fn prepare(p: &mut crate::archive::rows::PartRow) {
    if p.text.trim().is_empty() {
        return;
    }
    let text = crate::archive::query::unmarked(&p.text);
    let document = if text.contains('\0') {
        // The server keeps no NUL: the runs of the text as `index_text`
        // makes it (its more words found before the NULs went).
        let mut runs = crate::archive::distinct::Distinct::default();
        runs.push_pieces(&crate::archive::postgres::copy::index_text(p), cut);
        runs.text()
    } else {
        crate::archive::distinct::document(&text, cut)
    };
    p.prepared = Some(crate::archive::rows::Prepared {
        document,
        // PostgreSQL tells a part's states apart by its own hash.
        hash: 0,
    });
}

/// The document of a block holding the events `keys`: the words of their
/// parts in `documents.texts`, as much as the budget takes, and the newest and oldest
/// of those parts' times. Each key whose text went in is added to
/// `in_block`; the others keep a document of their own.
///
/// The document keeps no positions (`strip`): only which words the block
/// holds. So it is made of each run of the texts between spaces once
/// (`Distinct`): PostgreSQL's parser reads a fraction of the text. The
/// characters `tsvector_sql` makes spaces part runs too (and the text is
/// then given to the parser as it is, `lexemes::block_tsvector`). A run
/// is parsed alone, whatever came around it, once no tag (`<…>`) or entity
/// (`&…;`) can span runs: `<`, `>` and `&` are cut too. The words inside a
/// tag, which `simple` leaves out, are then in the block's document: a
/// candidate more, which its part's own text turns down. Where the server
/// agrees (`documents.words_here`), the runs of plain ASCII letters and
/// digits are made words here, not parsed (`lexemes`).
pub(in crate::archive) fn document<'a>(
    keys: &[&'a str],
    documents: &Documents<'_>,
    in_block: &mut HashSet<&'a str>,
) -> BlockDocument {
    let texts = &documents.texts;
    let mut words = crate::archive::distinct::Distinct::default();
    let mut span: Option<(i64, i64)> = None;
    for key in keys {
        let Some(&(body, time)) = texts.get(key) else {
            continue;
        };
        // Its words at most: a part that does not fit keeps its own.
        if words.len() + body.len() > BLOCK_TEXT_MAX {
            continue;
        }
        words.push_pieces(body, cut);
        span = Some(span.map_or((time, time), |(o, n)| (o.min(time), n.max(time))));
        in_block.insert(key);
    }
    let (text, words) = match (words.is_empty(), documents.words_here) {
        (true, _) => (None, None),
        (false, false) => (Some(words.text()), None),
        (false, true) => {
            let mut s = crate::archive::postgres::lexemes::words_of(words.text());
            (Some(std::mem::take(&mut s.rest)), Some(s))
        }
    };
    BlockDocument {
        text,
        words,
        oldest: span.map(|s| s.0),
        newest: span.map(|s| s.1),
    }
}

/// Blocks read at first, for each piece of the query's words; each later
/// round reads twice as many, up to `ROUND_MAX`: a common word is answered
/// by the newest few blocks, a rare one in a few rounds. Each more word
/// makes a block's match likelier to be a false one (its words in
/// different parts), so more blocks are read at once.
const ROUND_FIRST: usize = 4;
const ROUND_MAX: usize = 256;

/// A block whose document matches: its newest part's time, its key and
/// its events (compressed).
struct Matching {
    newest: i64,
    pk: i64,
    data: Vec<u8>,
}

/// The newest `q.limit` hits among parts whose document is their block's.
pub(in crate::archive) fn search(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
) -> Result<Vec<Hit>, ArchiveError> {
    let limit = q.limit.max(1) as usize;
    let pieces = pieces(q);
    let sessions = match q.project.is_some() || q.server.is_some() {
        true => match sessions_named(a, q)? {
            Named::None => return Ok(Vec::new()),
            Named::Few(ids) => Some(ids),
            Named::Many => None,
        },
        false => None,
    };
    let mut found: Vec<Hit> = Vec::new();
    let mut after: Option<(i64, i64)> = None;
    let mut round = (ROUND_FIRST * pieces.len().max(1)).min(ROUND_MAX);
    loop {
        let blocks = matching_blocks(a, q, matching, sessions.as_deref(), after, round)?;
        let Some(last) = blocks.last() else {
            break;
        };
        let (last_newest, last_pk, read) = (last.newest, last.pk, blocks.len());
        found.extend(hits_in_blocks(a, q, matching, &pieces, blocks)?);
        found.sort_by_key(|h| std::cmp::Reverse(h.time));
        found.truncate(limit);
        // No block left holds a part newer than the last one read.
        let settled = found.len() == limit && found[limit - 1].time >= last_newest;
        if settled || read < round {
            break;
        }
        after = Some((last_newest, last_pk));
        round = (round * 2).min(ROUND_MAX);
    }
    Ok(found)
}

/// The hits in `blocks`: their events that may hold the words, the parts
/// those are (filtered), checked.
fn hits_in_blocks(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    pieces: &[Piece],
    blocks: Vec<Matching>,
) -> Result<Vec<Hit>, ArchiveError> {
    let mut candidates: HashMap<i64, String> = HashMap::new();
    let pks: Vec<i64> = blocks.iter().map(|b| b.pk).collect();
    for block in blocks {
        let damaged = |e| crate::archive::postgres::event_log::damaged(&a.place, e);
        let raw = crate::archive::blocks::decompress(&block.data).map_err(damaged)?;
        for (i, event) in events_holding(&raw, pieces).map_err(damaged)? {
            candidates.insert(crate::archive::blocks::logged_at(block.pk, i), event);
        }
    }
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let rows = part_rows(a, q, &pks, candidates.keys().copied().collect())?;
    verified_parts(a, q, matching, pieces, rows, &candidates)
}

/// The sessions a project or server filter names.
enum Named {
    None,
    /// Few enough that their blocks are found by session.
    Few(Vec<String>),
    /// So many that walking the blocks newest first finds theirs soon.
    Many,
}

/// At most this many sessions are named to the blocks' query: a project
/// of a few hundred sessions among thousands has its blocks found by its
/// sessions, not by reading every newer block of the others.
const SESSIONS_NAMED_MAX: usize = 1000;

/// The sessions of the query's project and server.
fn sessions_named(a: &mut PgArchive, q: &Query) -> Result<Named, ArchiveError> {
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
    let only = Query {
        project: q.project.clone(),
        server: q.server.clone(),
        ..Query::default()
    };
    let (on_session, _) = filters(&only, &mut args, "p", "m");
    let rows = query(
        a,
        &format!(
            "SELECT s.id FROM sessions s WHERE true{on_session} LIMIT {}",
            SESSIONS_NAMED_MAX + 1
        ),
        &args,
    )?;
    Ok(match rows.len() {
        0 => Named::None,
        n if n > SESSIONS_NAMED_MAX => Named::Many,
        _ => Named::Few(rows.iter().map(|r| r.get(0)).collect()),
    })
}

/// The next `round` blocks whose document matches, newest first, after
/// `after` (the last one read), with their events. Each round asks again
/// rather than listing every match once: a common word matches most
/// blocks, and only the newest are read. `sessions`: the only sessions
/// the query's project and server name, when they are few.
fn matching_blocks(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    sessions: Option<&[String]>,
    after: Option<(i64, i64)>,
    round: usize,
) -> Result<Vec<Matching>, ArchiveError> {
    // A block's document has no positions: its query asks for every piece
    // of a word, the phrase is checked on the part.
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(matching.to_string())];
    // A block answers for its session and holds parts from its oldest to
    // its newest: the rest is checked on the parts.
    let on_blocks = Query {
        project: if sessions.is_some() {
            None
        } else {
            q.project.clone()
        },
        server: if sessions.is_some() {
            None
        } else {
            q.server.clone()
        },
        since: q.since,
        ..Query::default()
    };
    let (on_session, _) = filters(&on_blocks, &mut args, "p", "m");
    let mut sql = format!(
        "SELECT b.newest, b.pk, b.data FROM event_blocks b{},
                to_tsquery('simple', replace($1, '<->', '&')) q
         WHERE b.tsv @@ q{}",
        if on_blocks.project.is_some() || on_blocks.server.is_some() {
            " JOIN sessions s ON s.id = b.session_id"
        } else {
            ""
        },
        on_session.replace("{time}", "b.newest"),
    );
    if let Some(ids) = sessions {
        args.push(Box::new(ids.to_vec()));
        sql += &format!(" AND b.session_id = ANY(${})", args.len());
    }
    if let Some(until) = q.until.filter(|_| a.version >= BLOCK_SPANS_SINCE) {
        args.push(Box::new(until));
        sql += &format!(" AND coalesce(b.oldest, 0) < ${}", args.len());
    }
    if let Some((newest, pk)) = after {
        args.push(Box::new(newest));
        args.push(Box::new(pk));
        sql += &format!(
            " AND (b.newest, b.pk) < (${}, ${})",
            args.len() - 1,
            args.len()
        );
    }
    sql += &format!(" ORDER BY b.newest DESC, b.pk DESC LIMIT {round}");
    let rows = query(a, &sql, &args)?;
    Ok(rows
        .iter()
        .map(|r| Matching {
            newest: r.get(0),
            pk: r.get(1),
            data: r.get(2),
        })
        .collect())
}

/// The hits among `rows` (`part_rows`, newest first), whose events are
/// `candidates` (by place): read from their events and checked against
/// the query, newest first, until `q.limit` are found (an older one could
/// not be among the newest).
fn verified_parts(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    pieces: &[Piece],
    rows: Vec<tokio_postgres::Row>,
    candidates: &HashMap<i64, String>,
) -> Result<Vec<Hit>, ArchiveError> {
    let mut rows = rows.into_iter().peekable();
    let limit = q.limit.max(1) as usize;
    let mut found = Vec::new();
    let mut slice = limit.max(16);
    while found.len() < limit && rows.peek().is_some() {
        // Parts whose text lacks a word (it was elsewhere in the event's
        // JSON) are passed over before PostgreSQL is asked.
        let (chunk, texts): (Vec<_>, Vec<_>) = rows
            .by_ref()
            .filter_map(|r| {
                let part = crate::archive::blocks::part_value_of_event(
                    candidates.get(&r.get::<_, i64>(10))?,
                )?;
                let mut text = crate::archive::postgres::copy::pg_text(
                    &crate::archive::snippet::text_of_part_value(r.get(9), &part),
                );
                crate::archive::collect_rows::cap_indexed(&mut text);
                may_hold(&text, pieces).then_some((r, text))
            })
            .take(slice)
            .unzip();
        found.extend(matching_rows(a, q, matching, chunk, texts)?);
        slice *= 2;
    }
    Ok(found)
}

/// The parts at `places` in `blocks` that pass the query's filters,
/// newest first: session, title, time, project, server, host, file,
/// message, part, kind and place.
fn part_rows(
    a: &mut PgArchive,
    q: &Query,
    blocks: &[i64],
    places: Vec<i64>,
) -> Result<Vec<tokio_postgres::Row>, ArchiveError> {
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> =
        vec![Box::new(blocks.to_vec()), Box::new(places)];
    let (message, join_message) = message_of_part(q, a.version);
    let (on_session, on_part) = filters(q, &mut args, "p", message);
    let sql = format!(
        "SELECT p.session_id, coalesce(s.title, ''), p.time, s.directory, s.server, s.host,
                s.file, p.message_id, p.id, p.kind, p.logged
         FROM parts p LEFT JOIN sessions s ON s.id = p.session_id{join_message}
         WHERE (p.logged >> 16) = ANY($1) AND p.logged = ANY($2) AND p.tsv IS NULL{}{on_part}
         ORDER BY p.time DESC",
        on_session.replace("{time}", "p.time"),
    );
    query(a, &sql, &args)
}

/// The hits among `rows` whose `texts` match, as PostgreSQL matches a
/// part's own document.
fn matching_rows(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    rows: Vec<tokio_postgres::Row>,
    texts: Vec<String>,
) -> Result<Vec<Hit>, ArchiveError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    // Translated here: PostgreSQL's `translate` takes a third of the time
    // of making the documents. Matched with the words the index adds.
    let translated: Vec<String> = texts
        .iter()
        .map(|t| translated(&crate::archive::query::indexable(t)))
        .collect();
    let matched = query(
        a,
        "SELECT (i - 1)::bigint FROM unnest($1::text[]) WITH ORDINALITY t(body, i),
                to_tsquery('simple', $2) q
         WHERE to_tsvector('simple', t.body) @@ q",
        &[Box::new(translated), Box::new(matching.to_string())],
    )?;
    let kept: HashSet<usize> = matched
        .iter()
        .map(|r| r.get::<_, i64>(0) as usize)
        .collect();
    let mut text_of: HashMap<String, String> = HashMap::with_capacity(kept.len());
    let rows: Vec<_> = rows
        .into_iter()
        .zip(texts)
        .enumerate()
        .filter(|(i, _)| kept.contains(i))
        .map(|(_, (row, text))| {
            text_of.insert(row.get(8), text);
            row
        })
        .collect();
    Ok(hits(&rows, q, |r, _, _| {
        text_of
            .get(r.get::<_, &str>(8))
            .cloned()
            .unwrap_or_default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A document's runs, folded: what the block's `tsvector` is made of.
    fn runs_of(text: &str) -> BTreeSet<String> {
        crate::archive::distinct::pieces(text, cut)
            .map(|run| String::from_utf8_lossy(run).to_lowercase())
            .collect()
    }

    #[test]
    fn the_cuts_looked_up_are_the_rules() {
        for b in 0..=255u8 {
            let rule = b.is_ascii_whitespace()
                || matches!(b, b'<' | b'>' | b'&')
                || SEPARATORS.contains(&char::from(b));
            assert_eq!(cut(b), rule, "byte {b}");
        }
    }

    #[test]
    fn a_part_prepared_ahead_has_the_runs_of_its_whole_text() {
        let mark = crate::archive::query::MARK_START;
        let cases = [
            "parsejson then parseJson and HTTPServer, httpserver; snake_case_Name".repeat(9),
            "Café CAFÉ naïve 東京都庁 日本語のテキスト Привет ПРИВЕТ straße".repeat(5),
            format!("a{mark}marked{mark}word <b>tag</b> &amp; x.y/z:1 pre-commit"),
            "nul\u{0}inside parseJson\u{0}Text".to_string(),
            "  \n\t ".to_string(),
        ];
        for text in cases {
            let mut p = crate::archive::rows::PartRow {
                text: text.clone(),
                ..Default::default()
            };
            prepare(&mut p);
            let whole = crate::archive::postgres::copy::index_text(&p);
            let made = p.prepared.map(|m| m.document).unwrap_or_default();
            assert_eq!(runs_of(&made), runs_of(&whole), "{text:?}");
            assert!(made.len() <= whole.len(), "{made:?}");
        }
    }
}
