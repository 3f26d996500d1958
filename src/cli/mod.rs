//! The command line: subcommands, their flags and how each value is
//! checked (here), and each command acted on (`run`, then a file per
//! command: `attach`, `replay`, `record`, `export`, `db_replay` for
//! history, `stats`, `archive` for search and the archive's own). The
//! binary only parses and calls `run::run`, so every command can be run
//! in process.

pub mod archive;
pub mod archive_export;
pub mod archive_fill;
pub mod archive_keep;
pub mod archive_prune;
pub mod archive_tap;
pub mod attach;
pub mod audit;
pub mod db_replay;
pub mod discovered;
pub mod export;
pub mod fleet_members;
pub mod insights;
pub mod insights_cost;
pub mod insights_out;
pub mod io;
pub mod record;
pub mod replay;
pub mod run;
pub mod stats;

use std::path::PathBuf;

use crate::source::live::Auth;
use clap::{Args, Parser, Subcommand};

/// A fast full-screen terminal viewer for OpenCode agent sessions.
#[derive(Parser)]
#[command(version, about)]
pub struct Cli {
    /// Config file (default: $XDG_CONFIG_HOME/ocview/config.toml).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Theme: a name (any of OpenCode's 33, e.g. opencode, tokyonight,
    /// catppuccin, gruvbox, nord, or one in an OpenCode themes folder), a
    /// theme file, or dark/light (opencode in that variant).
    #[arg(long, global = true)]
    pub theme: Option<String>,
    /// Follow attention: until you navigate, the turn view shows the
    /// session that asks for an answer or was last active.
    #[arg(long, global = true, overrides_with = "no_follow")]
    pub follow: bool,
    /// Do not follow attention, even if the config turns it on.
    #[arg(long, global = true)]
    pub no_follow: bool,
    /// Also find servers announced on the local network (`opencode serve
    /// --mdns`), listening for a few seconds. Without a subcommand or
    /// with `discover`.
    #[arg(long, global = true)]
    pub discover: bool,
    /// Show prompts but never answer them, nor stop a session (also
    /// `read_only = true` in the config). For `ocview`, `attach` and a fleet;
    /// replays and recordings never send anything anyway.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Open this session at once (its id, or the start of it when only one
    /// session has that start).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    #[command(flatten)]
    pub archive: archive::ArchiveFlags,
    /// None: find the servers (`discover`) and attach to the first.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Play back a recorded event stream (JSONL, SSE or /global/event form),
    /// or a session from opencode's database (`opencode.db --session ID`):
    /// its event log, with the stored rows where the log has gaps.
    Replay {
        /// The recording, or opencode's database; `-` reads standard input.
        file: PathBuf,
        /// Print a plain-text transcript of the final state instead of the viewer.
        #[arg(long)]
        dump: bool,
        /// Open this session (its id, or the start of it when only one
        /// session has that start); it shows once the recording reaches it.
        /// From a database: the session to play (with --dump too).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        #[command(flatten)]
        pace: PaceArgs,
    },
    /// Watch a running `opencode serve` live; several at once with more URLs.
    Attach(AttachArgs),
    /// Record a live server's events to a file, without the viewer, until
    /// interrupted (Ctrl-C or SIGTERM).
    Record {
        /// The server, or several (each line of the recording then names
        /// its server), then the recording.
        #[arg(value_name = "URL", required = true, num_args = 1..)]
        urls: Vec<String>,
        /// The recording (appended to; created mode 0600).
        file: PathBuf,
        /// Every project of the server.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        auth: AuthArgs,
    },
    /// Write a session as Markdown or normalised JSON, from a recording (any
    /// supported form, `-` for stdin) or a live server (an http URL).
    Export {
        source: String,
        /// The session (default: every session in the source).
        #[arg(long)]
        session: Option<String>,
        #[arg(long, value_enum, default_value = "md")]
        format: ExportArg,
        /// Include reasoning (Markdown).
        #[arg(long)]
        reasoning: bool,
        /// From a server: give up waiting for its sessions to go idle after
        /// this many seconds.
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value_t = 60.0)]
        timeout: f64,
        /// Keep secrets as they are (by default they are redacted, by
        /// gitleaks' rules, and what was redacted is said on stderr).
        #[arg(long)]
        no_redact: bool,
        #[command(flatten)]
        auth: AuthArgs,
    },
    /// List the opencode servers found without being told where:
    /// $OPENCODE_SERVER_URL, the config's `servers`, your opencode processes
    /// listening on this machine and, with --discover, the local network
    /// (mDNS). A password goes only to the servers named. Exit 1 when none
    /// is found.
    Discover {
        /// A JSON array, for scripts: url, found_by, version, directory, needs_password.
        #[arg(long)]
        json: bool,
    },
    /// What opencode's sessions cost, read from its database (no server
    /// needed): the figures `opencode stats` prints, by project and agent
    /// too; --json or --csv for scripts.
    Stats(stats::StatsArgs),
    /// Every session in opencode's database on this machine ($OPENCODE_DB,
    /// else $XDG_DATA_HOME/opencode/opencode.db), no server needed: newest
    /// first, by project; a session still being written is followed.
    History {
        /// Another database file than the one opencode uses here.
        #[arg(value_name = "DB")]
        db: Option<PathBuf>,
    },
    /// Search every session the archive keeps: newest first, each with its
    /// session, time, project, server and the words marked.
    Search(archive::SearchArgs),
    /// Every answer given to a prompt, newest first: who (this machine's
    /// ocview and user, or another client), when, to which server, what the
    /// prompt showed, what the server said; `always` stands out.
    Audit(audit::AuditArgs),
    /// What the archive says beyond each session: `failures`, which model
    /// breaks which tool (calls, failures and their rate by model and
    /// tool, each outcome apart); `waits`, how long agents waited on
    /// people; --json or --csv for scripts.
    Insights {
        #[command(subcommand)]
        command: insights::InsightsCommand,
    },
    /// The archive: import files, replay a session from it, what it holds.
    Archive {
        #[command(subcommand)]
        command: archive::ArchiveCommand,
    },
    /// Watch the built-in demo recording (no server needed).
    Demo {
        /// Print the demo's final state as text instead.
        #[arg(long)]
        dump: bool,
        #[command(flatten)]
        pace: PaceArgs,
    },
}

// `ocview attach`: the servers, and how to watch them (a plain comment:
// the subcommand's help is the variant's).
#[derive(Args)]
pub struct AttachArgs {
    /// The servers (default: $OPENCODE_SERVER_URL, else
    /// http://127.0.0.1:4096 unless another user's server listens
    /// there). Two or more are watched together, grouped by server in
    /// one list, with one prompt inbox; one address in two spellings is
    /// one server.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
    /// Every project of the server (`/global/event`), not only its current one.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub auth: AuthArgs,
    /// Also record every event received to this file (replayable).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Open this session at once (its id, or the start of it when only
    /// one session has that start).
    #[arg(long, value_name = "ID", conflicts_with_all = ["dump_after", "dump_when_idle"])]
    pub session: Option<String>,
    /// No terminal: print the synced state after this many seconds.
    #[arg(long, value_name = "SECONDS", conflicts_with = "dump_when_idle", value_parser = parse_seconds)]
    pub dump_after: Option<f64>,
    /// No terminal: print the state once synced and no session is busy.
    #[arg(long)]
    pub dump_when_idle: bool,
    /// With --dump-when-idle: give up waiting after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value_t = 120.0)]
    pub timeout: f64,
}

/// Basic auth for a server started with `OPENCODE_SERVER_PASSWORD`. The
/// password never goes on the command line, where every user of the
/// machine can read it (`ps`): it comes from a file or the environment.
#[derive(Args, Clone, Default)]
pub struct AuthArgs {
    /// Basic-auth user (default: $OPENCODE_SERVER_USERNAME, else `opencode`).
    #[arg(long)]
    pub username: Option<String>,
    /// Read the basic-auth password from this file, its first line
    /// (default: $OPENCODE_SERVER_PASSWORD). Like an ssh key, it must be
    /// readable by you alone (chmod 600), and at most 4 KiB.
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Refused, with the reason: see --password-file.
    #[arg(long, hide = true, value_name = "PASSWORD")]
    pub password: Option<String>,
}

impl AuthArgs {
    /// The credentials to send, if any; an error says what to do instead.
    pub fn resolve(&self) -> Result<Option<Auth>, String> {
        if self.password.is_some() {
            return Err(
                "--password is not accepted: a password on the command line is \
                 visible to every user of this machine (ps). Put it in a file \
                 (--password-file FILE) or in $OPENCODE_SERVER_PASSWORD"
                    .into(),
            );
        }
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let password = match &self.password_file {
            Some(path) => Some(read_password(path)?),
            None => env("OPENCODE_SERVER_PASSWORD"),
        };
        let Some(password) = password else {
            return Ok(None);
        };
        let username = self
            .username
            .clone()
            .or_else(|| env("OPENCODE_SERVER_USERNAME"))
            .unwrap_or_else(|| "opencode".into());
        Ok(Some(Auth { username, password }))
    }
}

/// The most a password file may hold: a password is a line, not a document
/// (a wrong path to a big file is not read whole).
const PASSWORD_FILE_MAX: u64 = 4096;

/// How long a password file (a pipe, say) may take to give its line.
const PASSWORD_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Up to `max` bytes of a file opened non-blocking, until its end or its
/// first line end, within `wait` (a pipe is waited on with poll(2), never
/// read in a busy loop; its writer may stay open after the line).
fn read_line_within(
    mut file: std::fs::File,
    max: u64,
    wait: std::time::Duration,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 1024];
    while (bytes.len() as u64) < max {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if chunk[..n].contains(&b'\n') {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                let mut fd = libc::pollfd {
                    fd: file.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd of a descriptor this function owns.
                unsafe { libc::poll(&mut fd, 1, left.as_millis().max(1) as libc::c_int) };
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(bytes)
}

/// The first line of a password file, without its line end. As ssh does
/// with keys, a file other users may read or change is refused.
fn read_password(path: &std::path::Path) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = || crate::model::wire::sanitize::line(&path.display().to_string()).into_owned();
    let cannot = |e: std::io::Error| format!("cannot read the password file {}: {e}", shown());
    // Never blocking on open: a named pipe nobody writes to would wait
    // forever (a `<(pass show …)` pipe has its writer and is read).
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(cannot)?
    };
    let meta = file.metadata().map_err(cannot)?;
    let kind = meta.file_type();
    {
        use std::os::unix::fs::FileTypeExt;
        if !kind.is_file() && !kind.is_fifo() {
            return Err(format!(
                "the password file {} is not a file (a directory or a device)",
                shown()
            ));
        }
    }
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        let what = if mode & 0o044 != 0 {
            "readable"
        } else {
            "writable"
        };
        return Err(format!(
            "the password file {} is {what} by group or others (mode {:03o}): chmod 600 {}",
            shown(),
            mode & 0o777,
            shown()
        ));
    }
    let bytes = read_line_within(file, PASSWORD_FILE_MAX + 1, PASSWORD_WAIT).map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            format!(
                "the password file {} gave nothing within {} s (a pipe nobody writes to?)",
                shown(),
                PASSWORD_WAIT.as_secs()
            )
        } else {
            cannot(e)
        }
    })?;
    if bytes.len() as u64 > PASSWORD_FILE_MAX {
        return Err(format!(
            "the password file {} is larger than {} KiB: it should hold the password on one line",
            shown(),
            PASSWORD_FILE_MAX / 1024
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("the password file {} is not UTF-8 text", shown()))?;
    let first = text.lines().next().unwrap_or("");
    if first.is_empty() {
        return Err(format!("the password file {} is empty", shown()));
    }
    Ok(first.to_string())
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExportArg {
    Md,
    Json,
}

#[derive(Args)]
pub struct PaceArgs {
    /// Print a line-oriented transcript as events happen instead of the
    /// viewer (the default when standard output is not a terminal).
    #[arg(long)]
    pub plain: bool,
    /// Playback speed: 1 is real time (the default), 4 four times as fast.
    /// Plain mode prints at once unless a speed is given.
    #[arg(long, value_parser = parse_speed)]
    pub speed: Option<f64>,
    /// Play without waiting: the recording's timing ignored.
    #[arg(long)]
    pub instant: bool,
    /// Start at the start, playing (watch it unfold), or at the end,
    /// paused (browse the finished session).
    #[arg(long, value_enum, default_value = "start")]
    pub start: StartArg,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum StartArg {
    Start,
    End,
}

pub fn parse_speed(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    // The player's range; faster than 64× is `--instant`.
    if (0.25..=64.0).contains(&v) {
        Ok(v)
    } else {
        Err("speed must be between 0.25 and 64 (or use --instant)".into())
    }
}

/// A number of seconds: not negative, at most a year.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("not a number of seconds: {s}"))?;
    if (0.0..=365.0 * 86_400.0).contains(&v) {
        Ok(v)
    } else {
        Err("seconds must be between 0 and a year".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(dir: &std::path::Path, name: &str, bytes: &[u8], mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_password_file_is_yours_alone_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let ok = file(dir.path(), "ok", b"s3cret\nignored\n", 0o600);
        assert_eq!(read_password(&ok).unwrap(), "s3cret");
        let full = file(dir.path(), "full", &[b'x'; 4096], 0o400);
        assert_eq!(read_password(&full).unwrap().len(), 4096);

        let open = file(dir.path(), "open", b"s3cret\n", 0o644);
        let e = read_password(&open).unwrap_err();
        assert!(
            e.contains("open") && e.contains("readable by group or others"),
            "{e}"
        );
        assert!(e.contains("mode 644") && e.contains("chmod 600"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        let group = file(dir.path(), "group", b"s3cret\n", 0o640);
        assert!(read_password(&group).unwrap_err().contains("readable"));
        let writable = file(dir.path(), "writable", b"s3cret\n", 0o620);
        assert!(read_password(&writable).unwrap_err().contains("writable"));

        let big = file(dir.path(), "big", &[b'x'; 4097], 0o600);
        let e = read_password(&big).unwrap_err();
        assert!(e.contains("big") && e.contains("larger than 4 KiB"), "{e}");

        let empty = file(dir.path(), "empty", b"\n", 0o600);
        assert!(read_password(&empty).unwrap_err().contains("empty"));
        let binary = file(dir.path(), "binary", &[0xff, 0xfe], 0o600);
        assert!(read_password(&binary).unwrap_err().contains("UTF-8"));
        let e = read_password(&dir.path().join("missing")).unwrap_err();
        assert!(e.contains("cannot read the password file"), "{e}");
    }

    /// A named pipe nobody writes to is refused within a second (opening
    /// it blocked for ever); one with a writer, as `<(pass show …)` gives,
    /// is read; a directory is not a password file.
    #[test]
    fn a_password_pipe_is_read_or_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = |name: &str| {
            let path = dir.path().join(name);
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a path of our own, NUL-terminated.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            path
        };
        let answer_of = |path: PathBuf| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(read_password(&path)));
            rx.recv_timeout(std::time::Duration::from_secs(5))
                .expect("read_password answered within 5 s")
        };
        let started = std::time::Instant::now();
        let e = answer_of(fifo("nobody")).unwrap_err();
        assert!(e.contains("nobody"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(3));

        // A writer that stays open after its line (as `pass` may): the
        // line is enough. O_RDWR holds the pipe's write end without waiting.
        let written = fifo("written");
        let mut writer = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&written)
            .unwrap();
        std::io::Write::write_all(&mut writer, b"from-a-pipe\nmore\n").unwrap();
        assert_eq!(answer_of(written).unwrap(), "from-a-pipe");
        drop(writer);

        let e = read_password(dir.path()).unwrap_err();
        assert!(e.contains("not a file") || e.contains("cannot read"), "{e}");
    }

    #[test]
    fn read_only_is_taken_before_or_after_any_command() {
        for args in [
            &["ocview", "--read-only"][..],
            &["ocview", "--read-only", "attach", "http://h:1"],
            &["ocview", "attach", "http://h:1", "--read-only"],
            &[
                "ocview",
                "attach",
                "http://h:1",
                "http://h:2",
                "--read-only",
            ],
            &["ocview", "discover", "--read-only"],
            &["ocview", "demo", "--read-only"],
        ] {
            let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert!(cli.read_only, "{args:?}");
        }
        assert!(!Cli::try_parse_from(["ocview"]).unwrap().read_only);
    }

    #[test]
    fn session_is_taken_by_the_viewers() {
        let cli = Cli::try_parse_from(["ocview", "--session", "ses_1"]).unwrap();
        assert_eq!(cli.session.as_deref(), Some("ses_1"));
        let cli =
            Cli::try_parse_from(["ocview", "replay", "f.jsonl", "--session", "ses_1"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Replay { session: Some(s), .. }) if s == "ses_1")
        );
        let cli =
            Cli::try_parse_from(["ocview", "attach", "http://h:1", "--session", "ses_1"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Attach(AttachArgs { session: Some(s), .. })) if s == "ses_1")
        );
        // The export's own --session is still its own.
        let cli =
            Cli::try_parse_from(["ocview", "export", "f.jsonl", "--session", "ses_1"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Export { session: Some(s), .. }) if s == "ses_1")
        );
        // Parsed: a database takes both; `main` refuses it for a recording.
        assert!(Cli::try_parse_from(["ocview", "replay", "f", "--dump", "--session", "x"]).is_ok());
        let cli = Cli::try_parse_from(["ocview", "history", "x.db"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::History { db: Some(p) }) if p.ends_with("x.db"))
        );
    }
}
