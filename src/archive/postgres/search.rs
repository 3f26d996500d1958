//! PostgreSQL's full-text search. The index keeps no copy of the text
//! (schema 7): each part's and session title's `tsvector` sits in its own
//! row, made by the write from the text it is given (`tsvector_sql`), with
//! GIN indexes over them; a hit's snippet is made in Rust from the part's
//! raw JSON or the session's title (`super::snippet`), as SQLite's are —
//! read back only for the few hits shown.

use tokio_postgres::types::ToSql;

use crate::archive::engine::{ArchiveError, Trouble};
use crate::archive::postgres::blocks_search::BLOCK_DOCUMENTS_SINCE;
use crate::archive::postgres::{PgArchive, classify};
use crate::archive::query::{Hit, Query};

/// The characters that part a path or a name into the words indexed.
pub(in crate::archive) const SEPARATORS: [char; 6] = ['.', '/', '-', '_', ':', '@'];

/// The document of a text (`$body`): paths and names are found by their
/// pieces, as FTS5 finds them.
pub(in crate::archive) fn tsvector_sql(body: &str) -> String {
    format!(
        "to_tsvector('simple', translate({body}, '{}', '{}'))",
        String::from_iter(SEPARATORS),
        " ".repeat(SEPARATORS.len())
    )
}

/// The text `tsvector_sql` gives the parser, made here: the same characters
/// become spaces (each is one byte in UTF-8, never inside another
/// character).
pub(in crate::archive) fn translated(text: &str) -> String {
    text.replace(SEPARATORS, " ")
}

/// Schema 7: the index without its text, in the rows it indexes. The
/// `search` table (which kept each document's text beside its generated
/// `tsvector`, and the keys of its part and session again) gives its
/// documents to the parts and sessions they index, then goes. The tables
/// altered keep a reader's rights on them; rewritten (`CLUSTER`), they give
/// back the space of their rows' old versions. Rows are found by session
/// through one-column indexes (PostgreSQL keeps each session's id once in
/// them); a part's document newest first through an index of the parts
/// that have one. Values are compressed with `lz4` where the server has it
/// (PostgreSQL 14+ built with it), else the default `pglz`; PostgreSQL
/// compresses only rows past 2 kB whatever the table's
/// `toast_tuple_target`, so a lower one would change nothing.
pub const MIGRATION_7: &str = "
    ALTER TABLE parts ADD COLUMN model TEXT, ADD COLUMN agent TEXT, ADD COLUMN tsv TSVECTOR;
    UPDATE parts p SET model = d.model, agent = d.agent, tsv = d.tsv
        FROM search d WHERE d.doc = 'p:' || p.id;
    ALTER TABLE sessions ADD COLUMN tsv TSVECTOR;
    UPDATE sessions s SET tsv = d.tsv FROM search d WHERE d.doc = 't:' || s.id;
    DROP TABLE search;
    DROP INDEX IF EXISTS parts_by_message;
    DROP INDEX IF EXISTS messages_by_session;
    CLUSTER parts USING parts_pkey;
    CLUSTER sessions USING sessions_pkey;
    CREATE INDEX parts_by_session ON parts (session_id);
    CREATE INDEX messages_by_session ON messages (session_id);
    CREATE INDEX parts_tsv ON parts USING GIN (tsv);
    CREATE INDEX parts_by_time ON parts (time DESC) WHERE tsv IS NOT NULL;
    CREATE INDEX sessions_tsv ON sessions USING GIN (tsv);
    DO $$
    BEGIN
        ALTER TABLE parts ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE parts ALTER COLUMN tsv SET COMPRESSION lz4;
        ALTER TABLE messages ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE sessions ALTER COLUMN raw SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
    END $$;";

/// The hits of `q`, newest first: the newest parts and the newest titles
/// that match, each found and filtered apart; only the few kept are joined
/// to their part's JSON for the snippet.
pub(in crate::archive) fn search(a: &mut PgArchive, q: &Query) -> Result<Vec<Hit>, ArchiveError> {
    let Some(matching) = q.tsquery() else {
        return Ok(Vec::new());
    };
    if a.version < 7 {
        return search_v5(a, q, matching);
    }
    let limit = q.limit.max(1);
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(matching.clone())];
    let (message, join_message) = message_of_part(q, a.version);
    let (on_session, on_part) = filters(q, &mut args, "p", message);
    let needs_session = q.project.is_some() || q.server.is_some();
    let mut sql = format!(
        "(SELECT p.id AS part_id, p.session_id, p.time FROM parts p{}{join_message},
                 to_tsquery('simple', $1) q
          WHERE p.tsv @@ q{}{on_part} ORDER BY p.time DESC LIMIT {limit})",
        if needs_session {
            " JOIN sessions s ON s.id = p.session_id"
        } else {
            ""
        },
        on_session.replace("{time}", "p.time"),
    );
    // A title is no tool's, model's nor agent's.
    if on_part.is_empty() {
        sql += &format!(
            " UNION ALL
             (SELECT NULL, s.id, s.updated FROM sessions s, to_tsquery('simple', $1) q
              WHERE s.tsv @@ q{} ORDER BY s.updated DESC LIMIT {limit})",
            on_session.replace("{time}", "s.updated"),
        );
    }
    // A part the log holds as it is is read from its block.
    let logged = crate::archive::postgres::event_log::logged_column(a.version, "p.logged");
    let sql = format!(
        "SELECT h.session_id, coalesce(s.title, ''), h.time, s.directory, s.server, s.host,
                s.file, p.message_id, p.id, coalesce(p.kind, 'title'), p.raw, {logged}
         FROM ({sql}) h
         LEFT JOIN sessions s ON s.id = h.session_id
         LEFT JOIN parts p ON p.id = h.part_id
         ORDER BY h.time DESC LIMIT {limit}"
    );
    let rows = query(a, &sql, &args)?;
    let from_log =
        a.rt.block_on(crate::archive::postgres::event_log::logged_items(
            &a.client,
            &a.place,
            rows.iter().filter_map(|r| r.get::<_, Option<i64>>(11)),
        ))?;
    // A part's snippet is cut from its JSON; a title's from the title.
    let mut found = hits(&rows, q, |r, kind, title| {
        let raw = match r.get::<_, Option<i64>>(11) {
            Some(at) => from_log.get(&at).map(String::as_str),
            None => r.get::<_, Option<&str>>(10),
        };
        match raw {
            Some(raw) => crate::archive::snippet::text_of_part(kind, raw),
            None => crate::archive::query::unmarked(title).into_owned(),
        }
    });
    // The parts whose document is their block's, merged in; a reader not
    // granted the log (a table newer than its grants) finds the rest.
    if a.version >= BLOCK_DOCUMENTS_SINCE {
        match crate::archive::postgres::blocks_search::search(a, q, &matching) {
            Ok(more) => found.extend(more),
            Err(e) if e.trouble == Trouble::ReadOnly => {
                tracing::warn!("{e}: the log's parts left out of the search");
            }
            Err(e) => return Err(e),
        }
        found.sort_by_key(|h| std::cmp::Reverse(h.time));
        found.truncate(limit as usize);
    }
    Ok(found)
}

/// The hits of rows of either layout: session, title, time, project,
/// server, host, file, message, part, kind, and a last column `body`
/// makes the snippet's text from.
pub(in crate::archive) fn hits(
    rows: &[tokio_postgres::Row],
    q: &Query,
    body: impl Fn(&tokio_postgres::Row, &str, &str) -> String,
) -> Vec<Hit> {
    let terms = q.terms();
    rows.iter()
        .map(|r| {
            let mut hit = Hit {
                session_id: r.get(0),
                title: r.get(1),
                time: r.get(2),
                project: r.get(3),
                server: r.get(4),
                host: r.get(5),
                file: r.get(6),
                message_id: r.get(7),
                part_id: r.get(8),
                kind: r.get(9),
                snippet: String::new(),
            };
            let text = body(r, &hit.kind, &hit.title);
            hit.set_snippet(&crate::archive::snippet::snippet(&text, &terms));
            hit
        })
        .collect()
}

/// The rows `sql` gives with `args` as its values.
pub(in crate::archive) fn query(
    a: &mut PgArchive,
    sql: &str,
    args: &[Box<dyn ToSql + Sync + Send>],
) -> Result<Vec<tokio_postgres::Row>, ArchiveError> {
    let params: Vec<&(dyn ToSql + Sync)> = args
        .iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect();
    a.rt.block_on(a.client.query(sql, &params))
        .map_err(|e| classify(&a.place, &e))
}

/// The SQL of `q`'s filters, their values added to `args`: those a
/// session's row answers (its project, its server, and the document's
/// time, written `{time}`), and those only a part answers, on the table
/// named `part` (its tool and state) and the one named `message` (its
/// model and agent).
pub(in crate::archive) fn filters(
    q: &Query,
    args: &mut Vec<Box<dyn ToSql + Sync + Send>>,
    part: &str,
    message: &str,
) -> (String, String) {
    let mut arg = |value: Box<dyn ToSql + Sync + Send>| {
        args.push(value);
        format!("${}", args.len())
    };
    let mut on_session = String::new();
    if let Some(p) = &q.project {
        on_session += &format!(" AND strpos(s.directory, {}) > 0", arg(Box::new(p.clone())));
    }
    if let Some(v) = &q.server {
        let v = arg(Box::new(v.clone()));
        on_session += &format!(" AND (strpos(s.server, {v}) > 0 OR strpos(s.host, {v}) > 0)");
    }
    if let Some(t) = q.since {
        on_session += &format!(" AND {{time}} >= {}", arg(Box::new(t)));
    }
    if let Some(t) = q.until {
        on_session += &format!(" AND {{time}} < {}", arg(Box::new(t)));
    }
    let mut on_part = String::new();
    if let Some(v) = &q.model {
        on_part += &format!(
            " AND strpos({message}.model, {}) > 0",
            arg(Box::new(v.clone()))
        );
    }
    let columns = [
        (message, "agent", &q.agent),
        (part, "tool", &q.tool),
        (part, "state", &q.state),
    ];
    for (table, column, value) in columns {
        if let Some(v) = value {
            on_part += &format!(" AND {table}.{column} = {}", arg(Box::new(v.clone())));
        }
    }
    (on_session, on_part)
}

/// Where a part's model and agent are read in an archive of `version`:
/// its message's row since schema 10 (joined as `m` when a filter needs
/// it), its own before.
pub(in crate::archive) fn message_of_part(q: &Query, version: i64) -> (&'static str, &'static str) {
    if version < BLOCK_DOCUMENTS_SINCE {
        ("p", "")
    } else if q.model.is_some() || q.agent.is_some() {
        ("m", " JOIN messages m ON m.id = p.message_id")
    } else {
        ("m", "")
    }
}

/// The hits of `q` in an archive of schema 5 that this user may not
/// upgrade (a reader's, before a writer's ocview came): its `search` table
/// keeps each document's text.
fn search_v5(a: &mut PgArchive, q: &Query, matching: String) -> Result<Vec<Hit>, ArchiveError> {
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(matching)];
    let (on_session, on_part) = filters(q, &mut args, "d", "d");
    let mut sql = format!(
        "SELECT d.session_id, coalesce(s.title, ''), d.time, s.directory, s.server, s.host,
                s.file, d.message_id, d.part_id, d.kind, d.body
         FROM search d LEFT JOIN sessions s ON s.id = d.session_id, to_tsquery('simple', $1) q
         WHERE d.tsv @@ q{}{on_part}",
        on_session.replace("{time}", "d.time"),
    );
    sql += &format!(" ORDER BY d.time DESC LIMIT {}", q.limit.max(1));
    let rows = query(a, &sql, &args)?;
    Ok(hits(&rows, q, |r, _, _| r.get::<_, &str>(10).to_string()))
}
