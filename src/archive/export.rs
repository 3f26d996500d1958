//! `ocview archive export`: archived sessions' event logs as JSON lines,
//! the form `ocview replay` plays and `ocview archive import` reads back.

use std::io::Write;

use super::engine::Engine;

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    pub sessions: u64,
    pub events: u64,
}

/// Write the event log of `session` (its exact id), or of every session,
/// least recently updated first, to `out`. An error is one line.
pub fn export(
    engine: &mut dyn Engine,
    session: Option<&str>,
    out: &mut dyn Write,
) -> Result<Exported, String> {
    let ids: Vec<String> = match session {
        Some(id) => vec![id.to_string()],
        None => engine
            .oldest_sessions(None, u32::MAX)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(id, _)| id)
            .collect(),
    };
    let mut done = Exported::default();
    for id in ids {
        let events = engine.events(&id).map_err(|e| e.to_string())?;
        for event in &events {
            out.write_all(event.as_bytes())
                .and_then(|_| out.write_all(b"\n"))
                .map_err(|e| format!("cannot write: {e}"))?;
        }
        done.sessions += 1;
        done.events += events.len() as u64;
    }
    out.flush().map_err(|e| format!("cannot write: {e}"))?;
    Ok(done)
}
