//! The `ocview` binary: it parses the command line and hands it to
//! `ocview::cli::run`, where every command lives (and can be run in
//! process by the tests).

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: an import's stages hand each other their strings, which the
/// system's allocator serves slowly (about a tenth of an import's work,
/// a seventh on small parts; docs/performance.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Options of the bundled mimalloc 3 (`mi_option_e`; libmimalloc-sys is
/// pinned, and names only some of them).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc commits its first arena (1 GiB of address space) whole on
/// Linux unless told not to: the viewer then kept two to five times the
/// memory the tests bound it to (tests/e2e/lean_start.rs,
/// headless_memory.rs). Freed pages go back after 100 ms, not a second:
/// an import's peak is a fifth lower. The runtime allocates before
/// `main`, and its first allocation makes the arena, so these are set by
/// the program's initialisers, which run before the runtime.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static LEAN_ALLOCATOR: extern "C" fn() = {
    extern "C" fn on_load() {
        // SAFETY: options' values, set before any allocation or thread.
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 100);
        }
    }
    on_load
};

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
