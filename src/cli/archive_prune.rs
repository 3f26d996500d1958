//! `ocview archive prune [--dry-run]`, `ocview archive log` and
//! `ocview archive vacuum`: keeping the archive to its limits, with a
//! record of what went.

use std::process::ExitCode;

use crate::archive::now_ms;
use crate::archive::{Limits, Setting};
use crate::cli::archive::{date, open, print};
use crate::model::wire::sanitize;

/// `ocview archive prune`: to the limits now.
pub fn prune(limits: &Limits, setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    if let Some(why) = archive.read_only() {
        return Err(format!("archive {}: {why}", archive.place()));
    }
    let now = now_ms();
    let limits =
        &crate::archive::prune::limits_for(&mut *archive, limits).map_err(|e| e.to_string())?;
    let pruned =
        crate::archive::prune::prune(&mut *archive, limits, now).map_err(|e| e.to_string())?;
    crate::archive::prune_log::record(archive.place(), &pruned, limits, now);
    let size = |n| crate::archive::prune::bytes(n);
    let line = match pruned.summary(limits) {
        Some(line) => format!(
            "{line}: {} now holds {} (was {}); `ocview archive vacuum` gives the space back\n",
            archive.place(),
            size(pruned.bytes_after),
            size(pruned.bytes_before)
        ),
        None => format!(
            "{}: nothing to prune ({} held)\n",
            archive.place(),
            size(pruned.bytes_after)
        ),
    };
    print(&line)?;
    Ok(ExitCode::SUCCESS)
}

/// `ocview archive prune --dry-run`: what a prune would take now and why,
/// oldest first: the prune itself, rehearsed and undone, so the real run
/// that follows takes the same.
pub fn prune_plan(limits: &Limits, setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    if let Some(why) = archive.read_only() {
        return Err(format!("archive {}: {why}", archive.place()));
    }
    let limits =
        &crate::archive::prune::limits_for(&mut *archive, limits).map_err(|e| e.to_string())?;
    let plan = crate::archive::prune::dry_run(&mut *archive, limits, now_ms())
        .map_err(|e| e.to_string())?;
    let size = crate::archive::prune::bytes;
    let mut out = format!("{} holds {}", archive.place(), size(plan.bytes_before));
    match limits.max_bytes {
        Some(cap) => out.push_str(&format!(" of its {} cap", size(cap))),
        None => out.push_str(" (no size cap)"),
    }
    let n = plan.sessions();
    if n == 0 {
        out.push_str(": a prune now would take nothing\n");
        return print(&out).map(|()| ExitCode::SUCCESS);
    }
    out.push_str(&format!(
        ": a prune now would take {n} session{}, oldest first, and leave {} \
         (nothing is taken now)\n",
        if n == 1 { "" } else { "s" },
        size(plan.bytes_after)
    ));
    let days = limits.max_age_days.unwrap_or_default();
    let cap = limits.max_bytes.map(size).unwrap_or_default();
    let rows = plan
        .by_age
        .iter()
        .map(|id| (id, format!("older than {days} days")))
        .chain(
            plan.by_size
                .iter()
                .map(|id| (id, format!("over the {cap} cap"))),
        );
    for (id, why) in rows {
        let updated = plan.updated.get(id).copied().unwrap_or_default();
        let title = plan.titles.get(id).map(String::as_str).unwrap_or_default();
        out.push_str(&format!(
            "{}  {}  {}  ({why})\n",
            date(updated),
            sanitize::line(id),
            sanitize::line(title)
        ));
    }
    print(&out).map(|()| ExitCode::SUCCESS)
}

/// `ocview archive log`: every prune on this machine, oldest first.
pub fn prune_log() -> Result<ExitCode, String> {
    let path = crate::archive::prune_log::path().ok_or("no home folder for the prune log")?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return print(&format!(
                "nothing was pruned on this machine ({} is kept from the first prune)\n",
                path.display()
            ))
            .map(|()| ExitCode::SUCCESS);
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut out = String::new();
    for line in text.lines() {
        if let Some((when, place, id, title, why)) = crate::archive::prune_log::parse_line(line) {
            out.push_str(&format!(
                "{}  {}  pruned {} “{}” ({})\n",
                date(when),
                sanitize::line(place),
                sanitize::line(id),
                sanitize::line(title),
                sanitize::line(why)
            ));
        }
    }
    print(&out).map(|()| ExitCode::SUCCESS)
}

/// `ocview archive vacuum`.
pub fn vacuum(setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    let before = archive.size().map_err(|e| e.to_string())?;
    archive.vacuum().map_err(|e| e.to_string())?;
    eprintln!(
        "ocview: {} vacuumed ({} held)",
        archive.place(),
        crate::archive::prune::bytes(before)
    );
    Ok(ExitCode::SUCCESS)
}

/// `ocview archive reindex`: the word index built again at once, where an
/// upgrade asked for it.
pub fn reindex(setting: &Setting) -> Result<ExitCode, String> {
    let mut archive = open(setting)?;
    let started = std::time::Instant::now();
    let mut said = None;
    let mut last = None;
    while let Some((done, all)) = archive.reindex(20_000).map_err(|e| e.to_string())? {
        let percent = done * 100 / all.max(1);
        if said != Some(percent / 10) {
            said = Some(percent / 10);
            eprintln!(
                "ocview: indexing the archive's words again: {percent}% ({done} of {all} rows)"
            );
        }
        last = Some(all);
    }
    match last {
        Some(all) => {
            eprintln!(
                "ocview: {} indexed again ({all} rows in {:.1} s)",
                archive.place(),
                started.elapsed().as_secs_f64()
            );
            // The old index's pages are free now: a third of the file.
            if archive.reclaim().map_err(|e| e.to_string())? {
                eprintln!(
                    "ocview: the old index's space given back ({} held)",
                    crate::archive::prune::bytes(archive.size().map_err(|e| e.to_string())?)
                );
            }
        }
        None => eprintln!(
            "ocview: {}: its index needs no building again",
            archive.place()
        ),
    }
    Ok(ExitCode::SUCCESS)
}
