//! The process's heap. glibc keeps memory a program freed for its next
//! allocations, in each thread's arena; after a burst (a long session
//! loaded and archived, grammars let go) it is handed back, so the
//! resident size falls back to what is still held.

/// Hand freed heap pages back to the system (glibc; elsewhere nothing).
pub fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages; no pointer is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}
