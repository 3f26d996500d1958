//! Keeping an archive within its limits as things are written to it (the
//! writer, imports, opencode's database): a prune, said and put on
//! record.

use crate::archive::engine::Engine;
use crate::archive::prune::{Limits, limits_for, nearly_full, prune};

/// Prune the archive to its limits; what went is said, and a failure is
/// not a reason to stop keeping what comes. With `warn`, an archive near
/// its size cap is said before anything goes for size; returns whether it
/// was.
pub fn keep_within(
    engine: &mut dyn Engine,
    limits: &Limits,
    say: &dyn Fn(String),
    warn: bool,
) -> bool {
    let now = crate::archive::now_ms();
    // A team archive's own policy, else this machine's.
    let limits = &match limits_for(engine, limits) {
        Ok(limits) => limits,
        Err(e) => {
            say(format!("{e}: not pruned"));
            return false;
        }
    };
    match prune(engine, limits, now) {
        Ok(pruned) => {
            if let Some(line) = pruned.summary(limits) {
                say(format!("archive: {line}"));
            }
            crate::archive::prune_log::record(engine.place(), &pruned, limits, now);
            let full = nearly_full(pruned.bytes_after, limits);
            if let (true, Some(line)) = (warn, &full) {
                say(line.clone());
            }
            full.is_some()
        }
        Err(e) => {
            say(format!("{e}: not pruned"));
            false
        }
    }
}
