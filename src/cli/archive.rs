//! `ocview search` and `ocview archive …`, and the `--archive` /
//! `--no-archive` flags every command takes.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::archive::place::{self, ConfigValue};
use crate::archive::progress::{Pacer, Step, megabytes};
use crate::archive::{Engine, Limits, Query, Setting};
use crate::model::wire::sanitize;
use clap::{Args, Subcommand};

/// Where the archive is, or that there is none.
#[derive(Args, Clone, Default)]
pub struct ArchiveFlags {
    /// The archive: an SQLite file or a postgres:// URL (its password from
    /// ~/.pgpass, $PGPASSFILE, passfile= in the URL or $PGPASSWORD, never
    /// from here). Default: the config's `archive`, else
    /// $XDG_DATA_HOME/ocview/archive.db.
    #[arg(long, global = true, value_name = "FILE|URL")]
    pub archive: Option<String>,
    /// Keep nothing and search nothing (also `archive = false`).
    #[arg(long, global = true, conflicts_with = "archive")]
    pub no_archive: bool,
    /// Keep the viewer from importing and following this machine's
    /// opencode database into the archive (also `archive_opencode_db =
    /// false`); what servers, fleets and files show is still kept.
    #[arg(long, global = true)]
    pub no_archive_opencode_db: bool,
}

impl ArchiveFlags {
    pub fn setting(&self, config: Option<&ConfigValue>) -> Result<Setting, String> {
        place::resolve(self.archive.as_deref(), self.no_archive, config)
    }
}

impl crate::cli::Cli {
    /// Whether the command only imports (`ocview archive import`): its
    /// process runs no viewer and no query a person waits on, so SQLite
    /// may take its memory from mimalloc (`allocator::SqliteMemory`).
    pub fn only_imports(&self) -> bool {
        matches!(
            &self.command,
            Some(crate::cli::Command::Archive {
                command: ArchiveCommand::Import { .. }
            })
        )
    }
}

#[derive(Subcommand)]
pub enum ArchiveCommand {
    /// Add recordings and saved sessions (every form `replay` reads) to the
    /// archive; a file imported twice adds nothing. `--opencode-db` adds
    /// opencode's database (this machine's by default): the first time
    /// every session, then only what changed since.
    Import {
        #[arg(value_name = "FILE", required_unless_present = "opencode_db")]
        files: Vec<PathBuf>,
        /// opencode's SQLite database (default: this machine's, as opencode
        /// finds it: $OPENCODE_DB, $XDG_DATA_HOME/opencode/opencode.db).
        #[arg(long, value_name = "PATH", num_args = 0..=1)]
        opencode_db: Option<Option<PathBuf>>,
    },
    /// Play an archived session from its event log, as `replay` plays a file.
    Replay {
        /// The session (its id, or the start of it).
        session: String,
        /// Print a plain-text transcript of its final state instead.
        #[arg(long)]
        dump: bool,
        #[command(flatten)]
        pace: super::PaceArgs,
    },
    /// Archive a server's sessions whole: every page of every session (or
    /// of one), as the server keeps them now, one page at a time.
    Fill {
        /// The server (`http://host:port`).
        url: String,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        #[command(flatten)]
        auth: crate::cli::AuthArgs,
    },
    /// How much the archive holds: its size, sessions, oldest and newest.
    Stats {
        #[arg(long)]
        json: bool,
    },
    /// Prune now to the size cap and age limit (archive_max_mb,
    /// archive_max_age_days), saying what went.
    Prune {
        /// Say what would go and why, and take nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Every prune on this machine: when, from which archive, which
    /// session and why.
    Log,
    /// Keep a session whatever the limits: a prune never takes it
    /// (`--off` lets it go again; without a session, the pinned ones).
    Pin {
        /// The session (its id, or the start of it).
        session: Option<String>,
        #[arg(long)]
        off: bool,
    },
    /// A team archive's limits, one for every writer (who may write them
    /// sets them, its owner unless granted): shown, or set.
    Policy {
        /// The size cap in MB (0: none).
        #[arg(long, value_name = "MB")]
        max_mb: Option<u64>,
        /// The age limit in days (0: none).
        #[arg(long, value_name = "DAYS")]
        max_age_days: Option<u64>,
    },
    /// Give the space freed by pruning back (SQLite VACUUM, PostgreSQL
    /// VACUUM).
    Vacuum,
    /// Build the word index again now, where an upgrade asked for it (the
    /// viewer does it when idle): saying how far it is.
    Reindex,
    /// Write event logs as JSON lines, which `replay` plays and
    /// `archive import` reads back. Secrets are redacted (and text deltas
    /// left out) unless --no-redact.
    Export {
        /// Only this session (its id, or the start of it).
        #[arg(long)]
        session: Option<String>,
        /// Keep secrets as they are (the file is still private: 0600).
        #[arg(long)]
        no_redact: bool,
        /// The file to write (`-`: standard output).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// How many secrets were redacted out of a session (or the whole
    /// archive), by rule: never the values.
    Redactions {
        /// The session (its id, or the start of it).
        session: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// `ocview search QUERY`: the archive's hits, newest first.
#[derive(Args)]
pub struct SearchArgs {
    /// The words; all must match (paths and names match by their pieces).
    /// `word*` matches any word it starts (three letters at least); a
    /// quoted phrase (one argument with spaces, or "…" in one) matches its
    /// words next to each other.
    #[arg(value_name = "WORD", required = true)]
    pub words: Vec<String>,
    /// A JSON array for scripts: session_id, title, time, project, server,
    /// host, file, message_id, part_id, kind, snippet, marks.
    #[arg(long)]
    pub json: bool,
    /// Only sessions whose project directory contains this.
    #[arg(long)]
    pub project: Option<String>,
    /// Only sessions seen from a server (URL) or machine containing this.
    #[arg(long)]
    pub server: Option<String>,
    /// From this date on: YYYY-MM-DD, ms since 1970, or an age (3d, 12h).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Before this date (same forms as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only messages of a model containing this (provider/model).
    #[arg(long)]
    pub model: Option<String>,
    /// Only messages of this agent (build, plan, general, …).
    #[arg(long)]
    pub agent: Option<String>,
    /// Only parts of this tool (bash, edit, read, …).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only tool parts in this state: pending, running, completed, error.
    #[arg(long)]
    pub state: Option<String>,
    /// The most hits shown.
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
}

impl SearchArgs {
    pub fn query(&self, now_ms: i64) -> Result<Query, String> {
        let time = |t: &Option<String>| {
            t.as_deref()
                .map(|t| crate::archive::query::parse_time(t, now_ms))
                .transpose()
        };
        // One argument with spaces in it was quoted in the shell: a phrase.
        let words: Vec<String> = self
            .words
            .iter()
            .map(
                |w| match w.trim().contains(char::is_whitespace) && !w.contains('"') {
                    true => format!("\"{w}\""),
                    false => w.clone(),
                },
            )
            .collect();
        Ok(Query {
            text: words.join(" "),
            prefix: false,
            project: self.project.clone(),
            server: self.server.clone(),
            since: time(&self.since)?,
            until: time(&self.until)?,
            model: self.model.clone(),
            agent: self.agent.clone(),
            tool: self.tool.clone(),
            state: self.state.clone(),
            limit: self.limit.clamp(1, 10_000),
        })
    }
}

/// `2026-11-22 14:03`, local time.
pub(crate) fn date(ms: i64) -> String {
    match crate::render::clock::local(ms) {
        Some(t) => format!(
            "{}-{:02}-{:02} {:02}:{:02}",
            t.year, t.month, t.day, t.hour, t.minute
        ),
        None => "unknown time".into(),
    }
}

use crate::archive::now_ms;

/// The archive, open, or why not (off, or the trouble it is in).
pub fn open(setting: &Setting) -> Result<Box<dyn Engine>, String> {
    match setting.open() {
        Ok(Some(engine)) => Ok(engine),
        Ok(None) => Err(
            "the archive is off (--no-archive, archive = false in the config, or OCVIEW_ARCHIVE=off): \
             give one with --archive FILE|URL"
                .into(),
        ),
        Err(e) => Err(e.to_string()),
    }
}

/// The archive for a command that only reads it: a file that is not there
/// is said (a mistyped path), never made empty.
pub fn open_existing(setting: &Setting) -> Result<Box<dyn Engine>, String> {
    if let Setting::Sqlite(path) = setting
        && !path.exists()
    {
        return Err(format!(
            "no archive at {}: ocview makes it when it first keeps something \
             (`ocview archive import FILE` fills it)",
            sanitize::line(&path.display().to_string())
        ));
    }
    open(setting)
}

pub fn search(args: &SearchArgs, setting: &Setting) -> Result<ExitCode, String> {
    let query = args.query(now_ms())?;
    if query.terms().is_empty() {
        return Err("nothing to search for: give a word with a letter or digit in it".into());
    }
    let mut archive = open_existing(setting)?;
    let found = archive.find(&query).map_err(|e| e.to_string())?;
    let hits = found.hits;
    if let Some(t) = found.unchecked_before {
        eprintln!(
            "ocview: the phrase's words are together in more parts than one search reads: \
             parts before {} were not searched (--until {t} searches them)",
            date(t)
        );
    }
    let text = if args.json {
        let items: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                let mut v = serde_json::to_value(h).unwrap_or_default();
                // Inert before it is counted: the marks are offsets into
                // what is printed.
                sanitize::json_value(&mut v);
                let mut snippet = String::new();
                let mut marks = Vec::new();
                for (piece, hit) in h.pieces() {
                    let start = snippet.chars().count();
                    snippet.push_str(&sanitize::line(&piece));
                    if hit {
                        marks.push([start, snippet.chars().count()]);
                    }
                }
                v["snippet"] = snippet.into();
                v["marks"] = serde_json::json!(marks);
                v
            })
            .collect();
        format!("{}\n", serde_json::Value::Array(items))
    } else {
        let mut out = String::new();
        for h in &hits {
            let when = date(h.time);
            let from = h
                .server
                .as_deref()
                .or(h.file.as_deref())
                .or(h.host.as_deref())
                .unwrap_or("");
            out.push_str(&format!(
                "{}  {}  {}  {}\n  {}  {}\n  {}: {}\n",
                when,
                sanitize::line(&h.session_id),
                sanitize::line(&h.title),
                sanitize::line(h.project.as_deref().unwrap_or("")),
                sanitize::line(from),
                sanitize::line(h.host.as_deref().unwrap_or("")),
                sanitize::line(&h.kind),
                h.plain_snippet()
            ));
        }
        if hits.is_empty() {
            eprintln!("ocview: nothing found");
        }
        out
    };
    print(&text)?;
    Ok(if hits.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

pub fn import(files: &[PathBuf], limits: &Limits, setting: &Setting) -> Result<ExitCode, String> {
    let say = |line: String| eprintln!("ocview: {line}");
    // Within the archive's limits as it goes (what it prunes is said).
    let bound = crate::archive::import::Bound {
        limits: *limits,
        say: &say,
    };
    // PostgreSQL through a keeper: batches are spooled while the server is
    // away and written when it is back; what is still spooled when the
    // files are read waits (a while) for the server.
    let mut keeper = None;
    let mut archive = None;
    if let Setting::Postgres(_) = setting {
        let kept = crate::archive::keeper::Keeper::open(setting, &say)
            .map_err(|e| e.to_string())?
            .ok_or("the archive is off")?;
        if let Some(why) = kept.read_only() {
            return Err(format!("archive {}: {why}", kept.place()));
        }
        keeper = Some(kept);
    } else {
        let opened = open(setting)?;
        if let Some(why) = opened.read_only() {
            return Err(format!("archive {}: {why}", opened.place()));
        }
        archive = Some(opened);
    }
    let mut failed = false;
    let tty = std::io::stderr().is_terminal();
    let shown: Vec<String> = files
        .iter()
        .map(|f| sanitize::line(&f.display().to_string()).into_owned())
        .collect();
    let mut pacer = Pacer::new(Duration::ZERO, Duration::from_millis(200));
    // The file whose progress is on the line now.
    let mut showing: Option<usize> = None;
    let mut on = |i: usize, step: Step| {
        if showing != Some(i) {
            showing = Some(i);
            pacer = Pacer::new(Duration::ZERO, Duration::from_millis(200));
        }
        let shown = &shown[i];
        match step {
            // Said always: a resumed import says where it starts.
            Step::Resumed {
                records,
                bytes,
                total,
            } => eprintln!(
                "ocview: {shown}: resuming after record {records} ({} of {} already archived)",
                megabytes(bytes),
                megabytes(total)
            ),
            Step::Read { .. } if tty && pacer.due(&step) => {
                let percent = step.percent().map_or(String::new(), |p| format!(" {p} %"));
                eprint!("\r\x1b[Kocview: importing {shown}{percent}");
            }
            Step::Read { .. } => {}
        }
    };
    let mut done = |i: usize, result: Result<crate::archive::import::Imported, String>| {
        if tty {
            // Whatever progress is on the line goes before the file's word.
            eprint!("\r\x1b[K");
        }
        let shown = &shown[i];
        match result {
            Ok(done) if done.already => {
                eprintln!("ocview: {shown}: already archived");
            }
            Ok(done) => eprintln!(
                "ocview: {shown}: {} sessions, {} records, {} new events, {} parts written ({}){}",
                done.sessions,
                done.records,
                done.written.events,
                done.written.parts,
                done.form.unwrap_or("empty"),
                done.resumed_at.map_or(String::new(), |r| format!(
                    ", resumed after record {r} ({} events, {} parts sent)",
                    done.sent.events, done.sent.parts
                ))
            ),
            Err(e) => {
                eprintln!("ocview: {e}");
                failed = true;
            }
        }
    };
    let paths: Vec<&std::path::Path> = files.iter().map(PathBuf::as_path).collect();
    match (&mut keeper, &mut archive) {
        (Some(keeper), _) => {
            crate::archive::import::import_files_kept(keeper, &paths, bound, &mut on, &mut done)
        }
        (None, Some(archive)) => crate::archive::import::import_files_within(
            &mut **archive,
            &paths,
            bound,
            &mut on,
            &mut done,
        ),
        (None, None) => unreachable!("an archive or a keeper is open"),
    }
    if let Some(keeper) = &mut keeper {
        keeper.finish(Duration::from_secs(60), &say);
        failed |= keeper.spooling();
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `ocview archive import --opencode-db [PATH]`: what changed in opencode's
/// database since the last import, with its progress on stderr.
pub fn import_db(
    path: Option<&Path>,
    limits: &Limits,
    setting: &Setting,
) -> Result<ExitCode, String> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => crate::source::opencode_db::DbEnv::from_process()
            .database()
            .ok_or(
                "no opencode database on this machine (no home folder, or OPENCODE_DB=:memory:)",
            )?,
    };
    let mut archive = open(setting)?;
    if let Some(why) = archive.read_only() {
        return Err(format!("archive {}: {why}", archive.place()));
    }
    let shown = sanitize::line(&path.display().to_string()).into_owned();
    let name = crate::archive::import_db::short_name(&path);
    let mut progress = |done: u64, total: u64| {
        if total > 0 {
            eprint!(
                "\rocview: importing {name} {}",
                crate::archive::import_db::progress_line(done, total)
            );
        }
    };
    // What the age limit would prune is left out.
    let limits =
        crate::archive::prune::limits_for(&mut *archive, limits).map_err(|e| e.to_string())?;
    let within = crate::archive::import_db::Within::limits(&limits, now_ms());
    let done =
        crate::archive::import_db::import_db_within(&mut *archive, &path, within, &mut progress)?;
    eprintln!(
        "\rocview: {shown}: {} sessions read, {} new events, {} parts written",
        done.sessions, done.written.events, done.written.parts
    );
    if done.at_cap {
        eprintln!(
            "ocview: the archive is at its size cap ({}): sessions older than every one it keeps \
             were left out (archive_max_mb)",
            crate::archive::prune::bytes(limits.max_bytes.unwrap_or_default())
        );
    }
    let say = |line: String| eprintln!("ocview: {line}");
    crate::archive::bounded::keep_within(&mut *archive, &limits, &say, false);
    for p in &done.problems {
        eprintln!("ocview: {}", sanitize::line(p));
    }
    Ok(if done.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A session's event log as a recording (JSON lines), found by its id or
/// the start of it.
pub fn recording(session: &str, setting: &Setting) -> Result<(String, bytes::Bytes), String> {
    let mut archive = open_existing(setting)?;
    let id = session_id(&mut *archive, session)?;
    let events = crate::archive::export::session_log(&mut *archive, &id)?;
    let mut text = String::new();
    for e in events {
        text.push_str(&e);
        text.push('\n');
    }
    Ok((id, bytes::Bytes::from(text)))
}

/// The one archived session `session` names (its id or the start of it).
pub(crate) fn session_id(archive: &mut dyn Engine, session: &str) -> Result<String, String> {
    let found = archive.find_sessions(session).map_err(|e| e.to_string())?;
    let id = match found.as_slice() {
        [] => {
            return Err(format!("no archived session {}", sanitize::line(session)));
        }
        [one, ..] if one == session || found.len() == 1 => one.clone(),
        many => {
            return Err(format!(
                "{} names several archived sessions: {}",
                sanitize::line(session),
                many.iter()
                    .map(|s| sanitize::line(s).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    };
    Ok(id)
}

pub fn stats(json: bool, setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open_existing(setting)?;
    let counts = archive.counts().map_err(|e| e.to_string())?;
    let size = archive.size().map_err(|e| e.to_string())?;
    let span = archive.span().map_err(|e| e.to_string())?;
    let text = if json {
        let mut v = serde_json::to_value(counts).unwrap_or_default();
        v["archive"] = archive.place().into();
        v["read_only"] = archive.read_only().into();
        v["bytes"] = size.into();
        v["oldest"] = span.map(|s| s.0).into();
        v["newest"] = span.map(|s| s.1).into();
        sanitize::json_value(&mut v);
        format!("{v}\n")
    } else {
        let when = match span {
            Some((oldest, newest)) => format!(", oldest {}, newest {}", date(oldest), date(newest)),
            None => String::new(),
        };
        format!(
            "{}: {}, {} sessions, {} messages, {} parts, {} events{when}{}\n",
            archive.place(),
            crate::archive::prune::bytes(size),
            counts.sessions,
            counts.messages,
            counts.parts,
            counts.events,
            archive
                .read_only()
                .map(|w| format!(" ({w})"))
                .unwrap_or_default()
        )
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        search: SearchArgs,
    }

    #[test]
    fn an_argument_with_spaces_is_a_phrase_and_a_star_a_prefix() {
        let cli = Cli::parse_from(["search", "cargo build", "serializ*", "\"a b\""]);
        let q = cli.search.query(0).unwrap();
        assert_eq!(q.text, "\"cargo build\" serializ* \"a b\"");
        let terms: Vec<(Vec<String>, bool)> = q
            .terms()
            .into_iter()
            .map(|t| (t.pieces, t.prefix))
            .collect();
        let v = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            terms,
            [
                (v(&["cargo", "build"]), false),
                (v(&["serializ"]), true),
                (v(&["a", "b"]), false)
            ]
        );
    }
}
