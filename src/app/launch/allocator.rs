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
        sqlite_on_mimalloc();
    }
}

/// SQLite's memory from mimalloc too, uncounted. SQLite calls the C
/// library's `malloc` itself, and by default counts each block under a
/// lock: its allocations were about a twelfth of an import's writing
/// stage (the word index's pending terms grow and go by the thousand).
/// ocview never asks SQLite how much memory it uses.
///
/// # Safety
/// Before SQLite is first used (it takes its settings when it starts).
unsafe fn sqlite_on_mimalloc() {
    use rusqlite::ffi;
    use std::ffi::{c_int, c_void};
    unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
        // SAFETY: mimalloc's own; SQLite never asks for less than one byte.
        unsafe { libmimalloc_sys::mi_malloc(n.max(1) as usize) }
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: `p` came from `malloc` or `realloc` here.
        unsafe { libmimalloc_sys::mi_free(p) }
    }
    unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        // SAFETY: as `free`.
        unsafe { libmimalloc_sys::mi_realloc(p, n.max(1) as usize) }
    }
    unsafe extern "C" fn size(p: *mut c_void) -> c_int {
        // SAFETY: as `free`.
        unsafe { libmimalloc_sys::mi_usable_size(p) }.min(c_int::MAX as usize) as c_int
    }
    unsafe extern "C" fn roundup(n: c_int) -> c_int {
        // SAFETY: a pure function of `n`.
        unsafe { libmimalloc_sys::mi_good_size(n.max(0) as usize) }.min(c_int::MAX as usize)
            as c_int
    }
    unsafe extern "C" fn init(_: *mut c_void) -> c_int {
        ffi::SQLITE_OK
    }
    unsafe extern "C" fn shutdown(_: *mut c_void) {}
    // SQLite keeps a copy of the methods.
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: before SQLite starts; a refusal leaves its own allocator.
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods as *const _);
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int);
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
