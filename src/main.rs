//! The `ocview` binary: it parses the command line and hands it to
//! `ocview::cli::run`, where every command lives (and can be run in
//! process by the tests).

use std::process::ExitCode;

use clap::Parser;

ocview::lean_allocator!();

fn main() -> ExitCode {
    // A write past `ulimit -f` fails with EFBIG and is reported like any
    // other write error (naming the file), instead of SIGXFSZ killing the
    // process mid-recording with a core dump and no word.
    // SAFETY: setting a standard signal's disposition, before any thread.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let cli = ocview::cli::Cli::parse();
    // Logs go to a file, never to the terminal.
    let _log = ocview::app::launch::logging::init();
    ocview::cli::run::run(cli)
}
