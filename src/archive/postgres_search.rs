//! PostgreSQL's full-text search. The index keeps no copy of the text
//! (schema 7): each document's `tsvector` is made by the write from the
//! text it is given (`TSVECTOR_SQL`), and a hit's snippet is made in Rust
//! from the part's raw JSON or the session's title (`super::snippet`), as
//! SQLite's are — read back only for the few hits shown.

use tokio_postgres::types::ToSql;

use super::engine::ArchiveError;
use super::postgres::{PgArchive, classify};
use super::query::{Hit, Query};

/// The document of a text (`$body`): paths and names are found by their
/// pieces, as FTS5 finds them.
pub(super) fn tsvector_sql(body: &str) -> String {
    format!("to_tsvector('simple', translate({body}, './-_:@', '      '))")
}

/// Schema 7: the index without its text (nor the part's and message's ids,
/// which its key and the part's row hold), and the rows' JSON compressed.
/// The table is altered in place (a reader's rights on it are kept), then
/// rewritten in time order (`CLUSTER`), which gives back the text's space.
/// Rows are found by session through one-column indexes (PostgreSQL keeps
/// each session's id once in them). Values are compressed with `lz4` where
/// the server has it (PostgreSQL 14+ built with it), else the default
/// `pglz`; PostgreSQL compresses only rows past 2 kB whatever the table's
/// `toast_tuple_target`, so a lower one would change nothing.
pub const MIGRATION_7: &str = "
    ALTER TABLE search ALTER COLUMN tsv DROP EXPRESSION;
    ALTER TABLE search DROP COLUMN body;
    ALTER TABLE search DROP COLUMN message_id;
    ALTER TABLE search DROP COLUMN part_id;
    ALTER TABLE search ALTER COLUMN tsv SET NOT NULL;
    DROP INDEX IF EXISTS search_by_session;
    CLUSTER search USING search_time;
    DROP INDEX IF EXISTS parts_by_message;
    CREATE INDEX parts_by_session ON parts (session_id);
    DROP INDEX IF EXISTS messages_by_session;
    CREATE INDEX messages_by_session ON messages (session_id);
    DO $$
    BEGIN
        ALTER TABLE parts ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE messages ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE sessions ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE search ALTER COLUMN tsv SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
    END $$;";

/// The hits of `q`, newest first.
pub(super) fn search(a: &mut PgArchive, q: &Query) -> Result<Vec<Hit>, ArchiveError> {
    let Some(matching) = q.tsquery() else {
        return Ok(Vec::new());
    };
    // The documents are found and filtered first; only the few kept are
    // joined to their part's JSON for the snippet.
    let mut sql = String::from(
        "SELECT d.doc, d.session_id, d.time, d.kind
         FROM search d LEFT JOIN sessions s ON s.id = d.session_id,
              to_tsquery('simple', $1) q
         WHERE d.tsv @@ q",
    );
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(matching)];
    let mut filter = |sql: &mut String, clause: &str, value: Box<dyn ToSql + Sync + Send>| {
        args.push(value);
        sql.push_str(&clause.replace('?', &format!("${}", args.len())));
    };
    if let Some(p) = &q.project {
        filter(
            &mut sql,
            " AND strpos(s.directory, ?) > 0",
            Box::new(p.clone()),
        );
    }
    if let Some(v) = &q.server {
        filter(
            &mut sql,
            " AND (strpos(s.server, ?) > 0 OR strpos(s.host, ?) > 0)",
            Box::new(v.clone()),
        );
    }
    if let Some(t) = q.since {
        filter(&mut sql, " AND d.time >= ?", Box::new(t));
    }
    if let Some(t) = q.until {
        filter(&mut sql, " AND d.time < ?", Box::new(t));
    }
    if let Some(v) = &q.model {
        filter(&mut sql, " AND strpos(d.model, ?) > 0", Box::new(v.clone()));
    }
    if let Some(v) = &q.agent {
        filter(&mut sql, " AND d.agent = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.tool {
        filter(&mut sql, " AND d.tool = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.state {
        filter(&mut sql, " AND d.state = ?", Box::new(v.clone()));
    }
    sql.push_str(&format!(" ORDER BY d.time DESC LIMIT {}", q.limit.max(1)));
    let sql = format!(
        "SELECT h.session_id, coalesce(s.title, ''), h.time, s.directory, s.server, s.host,
                s.file, p.message_id, p.id, h.kind, p.raw
         FROM ({sql}) h
         LEFT JOIN sessions s ON s.id = h.session_id
         LEFT JOIN parts p ON starts_with(h.doc, 'p:') AND p.id = substr(h.doc, 3)
         ORDER BY h.time DESC"
    );
    let params: Vec<&(dyn ToSql + Sync)> = args
        .iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect();
    let rows =
        a.rt.block_on(a.client.query(&sql, &params))
            .map_err(|e| classify(&a.place, &e))?;
    let words = q.words();
    Ok(rows
        .iter()
        .map(|r| {
            let kind: String = r.get(9);
            let title: String = r.get(1);
            let body = match r.get::<_, Option<&str>>(10) {
                Some(raw) => super::snippet::text_of_part(&kind, raw),
                None => super::query::indexable(&title).into_owned(),
            };
            let mut hit = Hit {
                session_id: r.get(0),
                title,
                time: r.get(2),
                project: r.get(3),
                server: r.get(4),
                host: r.get(5),
                file: r.get(6),
                message_id: r.get(7),
                part_id: r.get(8),
                kind,
                snippet: String::new(),
            };
            hit.set_snippet(&super::snippet::snippet(&body, &words, q.prefix));
            hit
        })
        .collect())
}
