use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ocview::model::{NoObserver, Store};
use ocview::source::{self, ReplayReader};

/// A fast full-screen terminal viewer for OpenCode agent sessions.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play back a recorded event stream (JSONL, SSE or /global/event form).
    Replay {
        /// The recording; `-` reads standard input.
        file: PathBuf,
        /// Print a plain-text transcript of the final state instead of the viewer.
        #[arg(long)]
        dump: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay { file, dump } => {
            if !dump {
                eprintln!(
                    "ocview: the full-screen viewer is not built yet; use `ocview replay FILE --dump`"
                );
                return ExitCode::from(2);
            }
            match dump_replay(&file) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ocview: {}: {e:#}", file.display());
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn dump_replay(file: &std::path::Path) -> anyhow::Result<()> {
    let input = source::open_input(file)?;
    let mut reader = ReplayReader::new(input);
    let mut store = Store::new();
    let stats = source::ingest(&mut reader, &mut store, &mut NoObserver)?;
    let text = ocview::dump::render(&store, &stats);
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
