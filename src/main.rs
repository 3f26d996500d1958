//! The `ocview` binary: it parses the command line and hands it to
//! `ocview::cli::run`, where every command lives (and can be run in
//! process by the tests).

use std::process::ExitCode;

use clap::Parser;
use ocview::app::launch::allocator::{SqliteMemory, set_sqlite_memory};

ocview::lean_allocator!();

fn main() -> ExitCode {
    // A write past `ulimit -f` fails with EFBIG and is reported like any
    // other write error (naming the file), instead of SIGXFSZ killing the
    // process mid-recording with a core dump and no word.
    // SAFETY: setting a standard signal's disposition, before any thread.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let cli = ocview::cli::Cli::parse();
    // An import's SQLite on mimalloc; a viewer's keeps the C library's
    // `malloc`, which holds less (allocator::SqliteMemory).
    let sqlite_on_mimalloc = cli.only_imports()
        // SAFETY: no thread yet, and no SQLite connection.
        && unsafe { set_sqlite_memory(SqliteMemory::Mimalloc) };
    // Logs go to a file, never to the terminal.
    let _log = ocview::app::launch::logging::init();
    if sqlite_on_mimalloc {
        tracing::info!("an import: SQLite takes its memory from mimalloc");
    } else if cli.only_imports() {
        tracing::warn!("an import: SQLite kept its own memory (it refused mimalloc)");
    }
    ocview::cli::run::run(cli)
}
