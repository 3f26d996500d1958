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
/// ocview never asks SQLite how much memory it uses.
///
/// # Safety
/// Before SQLite is first used (it takes its settings when it starts).
unsafe fn sqlite_uncounted() {
    // SAFETY: before SQLite starts; a refusal leaves it counting.
    unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
    }
}

/// Where SQLite takes its memory from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqliteMemory {
    /// The C library's `malloc`, SQLite's own choice: what the viewer and
    /// every query use. With mimalloc serving SQLite too, an insights
    /// query over a million parts peaked 22 MB higher (95 MB against 72).
    System,
    /// mimalloc, as the rest of the program: for a process that only
    /// imports (`ocview archive import`). The word index's pending terms
    /// come and go by the thousand; the C library's `malloc` and its lock
    /// were about a twelfth of an import's writing stage.
    Mimalloc,
}

/// SQLite's own memory methods, kept when it is first moved to mimalloc
/// so that it can be moved back.
struct Methods(rusqlite::ffi::sqlite3_mem_methods);
// SAFETY: function pointers and a null `pAppData`, read only under the lock.
unsafe impl Send for Methods {}
static SQLITE_OWN: std::sync::Mutex<Option<Methods>> = std::sync::Mutex::new(None);

/// Moves SQLite's memory to `memory`, restarting SQLite to take it (it
/// reads the setting when it starts). Returns whether SQLite took it.
///
/// # Safety
/// No SQLite connection is open in the process and no other thread uses
/// SQLite: `sqlite3_shutdown` and `sqlite3_config` are not thread-safe.
pub unsafe fn set_sqlite_memory(memory: SqliteMemory) -> bool {
    use rusqlite::ffi;
    let mut own = SQLITE_OWN.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the caller's promise: nothing else uses SQLite.
    unsafe {
        let methods = match memory {
            SqliteMemory::Mimalloc => {
                if own.is_none() {
                    let Some(methods) = sqlite_own_methods() else {
                        return false;
                    };
                    *own = Some(Methods(methods));
                }
                mimalloc_methods()
            }
            SqliteMemory::System => match own.as_ref() {
                Some(Methods(methods)) => *methods,
                // Never moved: SQLite has its own already.
                None => return true,
            },
        };
        ffi::sqlite3_shutdown() == ffi::SQLITE_OK
            // SQLite keeps a copy of the methods.
            && ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods as *const _) == ffi::SQLITE_OK
    }
}

/// The memory methods SQLite sets itself when it starts, read back
/// after it stops (they can be read only while it is stopped).
///
/// # Safety
/// As `set_sqlite_memory`.
unsafe fn sqlite_own_methods() -> Option<rusqlite::ffi::sqlite3_mem_methods> {
    use rusqlite::ffi;
    // SAFETY: the caller's promise: nothing else uses SQLite.
    unsafe {
        if ffi::sqlite3_initialize() != ffi::SQLITE_OK || ffi::sqlite3_shutdown() != ffi::SQLITE_OK
        {
            return None;
        }
        let mut methods: ffi::sqlite3_mem_methods = std::mem::zeroed();
        let read = ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETMALLOC, &mut methods as *mut _);
        (read == ffi::SQLITE_OK && methods.xMalloc.is_some()).then_some(methods)
    }
}

/// SQLite's memory methods on mimalloc.
fn mimalloc_methods() -> rusqlite::ffi::sqlite3_mem_methods {
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
    ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
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
