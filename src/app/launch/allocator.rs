//! The allocator ocview's programs use: mimalloc. An import's stages hand
//! each other their strings, which the system's allocator serves slowly
//! (about a tenth of an import's work, a seventh on small parts;
//! docs/performance.md). `ocview::lean_allocator!()` in a program (the
//! binary, a bench) makes it that program's allocator, set up as below.

pub use libmimalloc_sys;
pub use mimalloc;

/// Options of the bundled mimalloc 3 (`mi_option_e`; libmimalloc-sys is
/// pinned, and names only some of them).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc commits its first arena (1 GiB of address space) whole on
/// Linux unless told not to: the viewer then kept more than its memory
/// tests allow (26.7 MiB of its own at the lean start against 12,
/// tests/e2e/lean_start.rs; headless_memory.rs). Freed pages go back
/// after 100 ms, not a second: an import's peak is a seventh lower.
/// SQLite is set up here too (`sqlite_uncounted`): it also takes its
/// settings only before it starts.
///
/// # Safety
/// Called before any allocation or thread: the runtime allocates before
/// `main`, and its first allocation makes the arena, so the macro calls
/// it from the program's initialisers, which run before the runtime.
pub unsafe fn set_options() {
    // SAFETY: options' values, set before any allocation or thread.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 100);
        sqlite_uncounted();
    }
}

/// SQLite's allocations uncounted. By default SQLite counts each block
/// it takes or gives back under a lock, about 2% of an import's writing
/// stage (the word index's pending terms grow and go by the thousand).
/// ocview never asks SQLite how much memory it uses. SQLite keeps the C library's `malloc`: with
/// mimalloc serving it too, an insights query over a million parts
/// peaked 22 MB higher (95 MB against 72) for a few percent of an import.
///
/// # Safety
/// Before SQLite is first used (it takes its settings when it starts).
unsafe fn sqlite_uncounted() {
    // SAFETY: before SQLite starts; a refusal leaves it counting.
    unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
    }
}

/// mimalloc as the program's allocator, with `set_options` run before
/// anything is allocated (Linux; elsewhere its defaults).
#[macro_export]
macro_rules! lean_allocator {
    () => {
        #[global_allocator]
        static ALLOC: $crate::app::launch::allocator::mimalloc::MiMalloc =
            $crate::app::launch::allocator::mimalloc::MiMalloc;

        #[cfg(target_os = "linux")]
        #[used]
        #[unsafe(link_section = ".init_array")]
        static LEAN_ALLOCATOR: extern "C" fn() = {
            extern "C" fn on_load() {
                // SAFETY: run among the initialisers, before the runtime.
                unsafe { $crate::app::launch::allocator::set_options() }
            }
            on_load
        };
    };
}
