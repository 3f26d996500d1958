//! What this database's schema holds, read from the file itself
//! (`sqlite_master`, `PRAGMA table_info`): opencode changes it often, so a
//! table or column a version lacks is a feature missing, not an error.

use std::collections::BTreeMap;

use rusqlite::Connection;

use super::DbError;
use super::guard::SECRET_TABLES;

/// Migrations opencode 1.18.33 had applied: more means a newer schema
/// than ocview was written against (still read as far as it is known).
pub const KNOWN_MIGRATIONS: i64 = 38;

/// The tables ocview reads, and what each is for (said when missing).
const USED_TABLES: [(&str, &str); 7] = [
    ("session", "sessions"),
    ("message", "messages"),
    ("part", "message parts"),
    ("todo", "todo lists"),
    ("project", "project names"),
    ("event", "the event log"),
    ("migration", "the schema's version"),
];

/// Columns whose absence costs something visible: the table, the column,
/// and what is lost without it.
const USED_COLUMNS: [(&str, &str, &str); 7] = [
    ("session", "title", "session titles"),
    ("session", "parent_id", "the session tree"),
    ("session", "directory", "project folders"),
    ("session", "time_updated", "the newest-first order"),
    ("message", "data", "message contents"),
    ("part", "data", "part contents"),
    ("part", "message_id", "which message a part belongs to"),
];

/// The per-session totals opencode stores (newer versions only).
pub const TOTALS_COLUMNS: [&str; 6] = [
    "cost",
    "tokens_input",
    "tokens_output",
    "tokens_reasoning",
    "tokens_cache_read",
    "tokens_cache_write",
];

#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// Every table's name; the columns of the tables ocview reads.
    pub tables: BTreeMap<String, Vec<String>>,
    /// Rows of `migration`, when it exists.
    pub migrations: Option<i64>,
}

impl Schema {
    pub fn read(conn: &Connection, path: &str) -> Result<Schema, DbError> {
        let names: Vec<String> = super::guard::with_retry(path, || {
            let mut st =
                conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
            st.query_map([], |r| r.get::<_, String>(0))?.collect()
        })?;
        let mut tables = BTreeMap::new();
        for name in names {
            let columns = if USED_TABLES.iter().any(|(t, _)| *t == name)
                && !SECRET_TABLES.contains(&name.as_str())
            {
                super::guard::with_retry(path, || {
                    let mut st = conn.prepare(&format!("PRAGMA table_info({})", quote(&name)))?;
                    st.query_map([], |r| r.get::<_, String>(1))?.collect()
                })?
            } else {
                Vec::new()
            };
            tables.insert(name, columns);
        }
        if !tables
            .get("session")
            .is_some_and(|c| c.iter().any(|c| c == "id"))
        {
            return Err(DbError::NotOpencode(path.to_string()));
        }
        let mut schema = Schema {
            tables,
            migrations: None,
        };
        if schema.has_table("migration") {
            schema.migrations = super::guard::with_retry(path, || {
                conn.query_row("SELECT count(*) FROM migration", [], |r| r.get(0))
            })
            .ok();
        }
        Ok(schema)
    }

    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    pub fn has(&self, table: &str, column: &str) -> bool {
        self.tables
            .get(table)
            .is_some_and(|cols| cols.iter().any(|c| c == column))
    }

    /// The column's name when the table has it, else SQL's `NULL`: a
    /// select list that works on every version.
    pub fn column_or_null(&self, table: &str, column: &str) -> String {
        if self.has(table, column) {
            quote(column)
        } else {
            "NULL".into()
        }
    }

    /// Sessions carry their own cost and token totals.
    pub fn has_totals(&self) -> bool {
        TOTALS_COLUMNS.iter().all(|c| self.has("session", c))
    }

    /// Applied more migrations than the version ocview knows.
    pub fn is_newer(&self) -> bool {
        self.migrations.is_some_and(|n| n > KNOWN_MIGRATIONS)
    }

    /// What cannot be read from this database, one phrase each.
    pub fn unreadable(&self) -> Vec<String> {
        let mut out: Vec<String> = USED_TABLES
            .iter()
            .filter(|(t, _)| !self.has_table(t))
            .map(|(t, what)| format!("{what} (no {t} table)"))
            .collect();
        out.extend(
            USED_COLUMNS
                .iter()
                .filter(|(t, c, _)| self.has_table(t) && !self.has(t, c))
                .map(|(t, c, what)| format!("{what} (no {t}.{c} column)")),
        );
        if self.has_table("session") && !self.has_totals() {
            out.push("stored session totals (summed from messages instead)".into());
        }
        out
    }

    /// One line for the user: what this schema is, and what is missing.
    pub fn summary(&self) -> String {
        let version = match self.migrations {
            Some(n) if n > KNOWN_MIGRATIONS => {
                format!("a newer schema ({n} migrations; ocview knows {KNOWN_MIGRATIONS})")
            }
            Some(n) => format!("schema of {n} migrations"),
            None => "schema of unknown version".into(),
        };
        let missing = self.unreadable();
        if missing.is_empty() {
            version
        } else {
            format!("{version}; not readable: {}", missing.join(", "))
        }
    }
}

/// An SQL identifier in double quotes (names come from the file).
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
