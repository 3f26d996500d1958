//! PostgreSQL's search of the parts the log holds as they are (schema 10).
//! Such a part has no document of its own: its block of the log has one
//! for all the parts it holds (`event_blocks.tsv`, the distinct words of
//! their text, without positions), so the index takes a word once per
//! block, not once per part. A block that matches names candidates (the
//! parts whose place is in it); each is read from the block and checked
//! against the query by PostgreSQL itself, the same `to_tsvector` a part's
//! own document is made by, so a hit is exactly a hit of that document.
//! Parts past a block's budget, and parts the log does not hold as they
//! are, keep their own document (`postgres_search`).

use std::collections::{HashMap, HashSet};

use tokio_postgres::types::ToSql;

use super::engine::ArchiveError;
use super::postgres::PgArchive;
use super::postgres_search::{filters, hits, message_of_part, query, tsvector_sql};
use super::query::{Hit, MIN_PREFIX, Query};

/// The schema whose blocks hold their parts' documents.
pub(super) const BLOCK_DOCUMENTS_SINCE: i64 = 10;

/// The most text (bytes) one block's document is made from: well under
/// PostgreSQL's 1 MB for a `tsvector`, whatever the words. A part past it
/// keeps a document of its own.
pub(super) const BLOCK_TEXT_MAX: usize = 256 * 1024;

/// Schema 10: each block gets the document of the parts whose place is in
/// it (made from their own documents, each block under the budget), and
/// those parts give theirs up. A block is found newest first by the
/// newest part it holds; a block's parts by their place. The indexes of
/// documents leave out the rows without one (most parts now). A part's
/// model and agent are read from its message, as SQLite's are. A message
/// the log holds as it is keeps only its place there (`pg_copy`).
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

/// The document of a block holding the events `keys`: the text of their
/// parts in `documents` (an event's key → its part's text and time), as
/// much as the budget takes, and the newest of those parts' times. Each
/// key whose text went in is added to `in_block`; the others keep a
/// document of their own.
pub(super) fn document<'a>(
    keys: &[&'a str],
    documents: &HashMap<&str, (&str, i64)>,
    in_block: &mut HashSet<&'a str>,
) -> (Option<String>, Option<i64>) {
    let mut text = String::new();
    let mut newest: Option<i64> = None;
    for key in keys {
        let Some(&(body, time)) = documents.get(key) else {
            continue;
        };
        if text.len() + body.len() > BLOCK_TEXT_MAX {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(body);
        newest = Some(newest.map_or(time, |n| n.max(time)));
        in_block.insert(key);
    }
    ((!text.is_empty()).then_some(text), newest)
}

/// Blocks read at first; each later round reads twice as many, up to
/// `ROUND_MAX`: a common word is answered by the newest few blocks, a rare
/// one in a few rounds.
const ROUND_FIRST: usize = 4;
const ROUND_MAX: usize = 256;

/// The newest `q.limit` hits among parts whose document is their block's.
pub(super) fn search(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
) -> Result<Vec<Hit>, ArchiveError> {
    let limit = q.limit.max(1) as usize;
    let pieces = pieces(q);
    let mut found: Vec<Hit> = Vec::new();
    let mut after: Option<(i64, i64)> = None;
    let mut round = ROUND_FIRST;
    loop {
        let blocks = matching_blocks(a, q, matching, after, round)?;
        let Some(&(last_newest, last_pk)) = blocks.last() else {
            break;
        };
        let pks: Vec<i64> = blocks.iter().map(|b| b.1).collect();
        found.extend(hits_in_blocks(a, q, matching, &pieces, &pks)?);
        found.sort_by_key(|h| std::cmp::Reverse(h.time));
        found.truncate(limit);
        // No block left holds a part newer than the last one read.
        let settled = found.len() == limit && found[limit - 1].time >= last_newest;
        if settled || blocks.len() < round {
            break;
        }
        after = Some((last_newest, last_pk));
        round = (round * 2).min(ROUND_MAX);
    }
    Ok(found)
}

/// The hits in the blocks `pks`: their events that may hold the words,
/// the parts those are (filtered), checked.
fn hits_in_blocks(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    pieces: &[Piece],
    pks: &[i64],
) -> Result<Vec<Hit>, ArchiveError> {
    let blocks = a.rt.block_on(super::postgres_log::unpacked_blocks(
        &a.client,
        &a.place,
        pks.to_vec(),
    ))?;
    let mut candidates: HashMap<i64, String> = HashMap::new();
    for (pk, events) in blocks {
        for (i, event) in events.into_iter().enumerate() {
            if may_hold(&event, pieces) {
                candidates.insert(super::blocks::logged_at(pk, i), event);
            }
        }
    }
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let rows = part_rows(a, q, pks, candidates.keys().copied().collect())?;
    verified_parts(a, q, matching, pieces, rows, &candidates)
}

/// The next `round` blocks whose document matches, newest first, after
/// `after` (the last one read): (newest, pk) each. Each round asks again
/// rather than listing every match once: a common word matches most
/// blocks, and only the newest are read.
fn matching_blocks(
    a: &mut PgArchive,
    q: &Query,
    matching: &str,
    after: Option<(i64, i64)>,
    round: usize,
) -> Result<Vec<(i64, i64)>, ArchiveError> {
    // A block's document has no positions: its query asks for every piece
    // of a word, the phrase is checked on the part.
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(matching.to_string())];
    // A block answers for its session; as it holds older parts than its
    // newest, only `since` of the times rules one out.
    let on_blocks = Query {
        until: None,
        model: None,
        agent: None,
        tool: None,
        state: None,
        ..q.clone()
    };
    let (on_session, _) = filters(&on_blocks, &mut args, "p", "m");
    let mut sql = format!(
        "SELECT b.newest, b.pk FROM event_blocks b{},
                to_tsquery('simple', replace($1, '<->', '&')) q
         WHERE b.tsv @@ q{}",
        if q.project.is_some() || q.server.is_some() {
            " JOIN sessions s ON s.id = b.session_id"
        } else {
            ""
        },
        on_session.replace("{time}", "b.newest"),
    );
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
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
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
                let raw = super::blocks::part_of_event(candidates.get(&r.get::<_, i64>(10))?)?;
                let mut text =
                    super::pg_copy::pg_text(&super::snippet::text_of_part(r.get(9), &raw));
                super::collect::cap_indexed(&mut text);
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
    let matched = query(
        a,
        &format!(
            "SELECT (i - 1)::bigint FROM unnest($1::text[]) WITH ORDINALITY t(body, i),
                    to_tsquery('simple', $2) q
             WHERE {} @@ q",
            tsvector_sql("t.body")
        ),
        &[Box::new(texts.clone()), Box::new(matching.to_string())],
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

/// One piece of a query's words, lowercased, and whether it is matched as
/// the start of a word (the last, while typing) or as a whole word.
struct Piece {
    text: String,
    prefix: bool,
}

/// The pieces of the query's words (as `Query::tsquery` makes them): a
/// part that has the words has each piece as a word of its text.
fn pieces(q: &Query) -> Vec<Piece> {
    let words = q.words();
    let n = words.len();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let split: Vec<&str> = w
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
            .collect();
        for (j, p) in split.iter().enumerate() {
            let last = i + 1 == n && j + 1 == split.len();
            out.push(Piece {
                text: p.to_lowercase(),
                prefix: q.prefix && last && p.chars().count() >= MIN_PREFIX,
            });
        }
    }
    // The longest first: most often the rarest, it rules an event out.
    out.sort_by_key(|p| std::cmp::Reverse(p.text.len()));
    out
}

/// Whether an event's JSON (or a part's text) may hold every piece as a
/// word. Only ASCII is judged (its case is folded the same everywhere): a JSON with other
/// characters, or with escapes that may stand for them, or a piece with
/// them, may hold anything and is checked whole.
fn may_hold(event: &str, pieces: &[Piece]) -> bool {
    if !event.is_ascii() || event.contains("\\u") || pieces.iter().any(|p| !p.text.is_ascii()) {
        return true;
    }
    let folded = event.to_ascii_lowercase();
    pieces.iter().all(|p| holds_word(&folded, p))
}

/// Whether `json` (ASCII, lowercased) has `piece` where a word of its text
/// may be: not inside a run of letters and digits, where `\n`, `\t` and
/// the like (a separator in the text) count as a boundary.
fn holds_word(json: &str, piece: &Piece) -> bool {
    let bytes = json.as_bytes();
    json.match_indices(piece.text.as_str()).any(|(at, found)| {
        let before = match at {
            0 => true,
            _ => {
                let c = bytes[at - 1];
                !c.is_ascii_alphanumeric()
                    || (at >= 2 && bytes[at - 2] == b'\\' && b"ntrbf".contains(&c))
            }
        };
        let end = at + found.len();
        let after = piece.prefix || end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
        before && after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(event: &str, text: &str, prefix: bool) -> bool {
        let mut q = Query::new(text);
        q.prefix = prefix;
        may_hold(event, &pieces(&q))
    }

    #[test]
    fn a_word_is_looked_for_as_a_word_of_the_text() {
        let event = r#"{"part":{"text":"So the Invoice\nwas late; see src/billing.rs"}}"#;
        assert!(holds(event, "so", false));
        assert!(holds(event, "invoice", false));
        // After an escaped newline: a word of its own in the text.
        assert!(holds(event, "was", false));
        assert!(holds(event, "billing.rs", false));
        assert!(!holds(event, "voice", false), "inside a word");
        assert!(!holds(event, "invo", false));
        assert!(
            holds(event, "invo", true),
            "the start of a word, while typing"
        );
        assert!(
            !holds(event, "invoice nowhere", false),
            "every word is needed"
        );
    }

    #[test]
    fn text_beyond_ascii_is_left_to_postgresql() {
        assert!(holds(r#"{"text":"ﬁle Straße"}"#, "nothing", false));
        assert!(holds(r#"{"text":"\u212a"}"#, "k", false));
        assert!(holds(r#"{"text":"plain"}"#, "straße", false));
        assert!(!holds(r#"{"text":"plain"}"#, "other", false));
    }
}
