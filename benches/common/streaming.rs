//! What the streaming benches share (`lean`, `archive_cpu`): the long
//! answer the fake model streams, and the CPU and memory of a process group
//! read from `/proc`.

#![allow(dead_code)]

pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A long Markdown answer: paragraphs of prose with some emphasis and code.
pub fn long_answer(words: usize) -> String {
    const WORDS: [&str; 16] = [
        "the", "server", "streams", "each", "answer", "in", "small", "pieces,", "and", "a",
        "viewer", "draws", "them", "as", "they", "arrive;",
    ];
    let mut out = String::new();
    for i in 0..words {
        let w = WORDS[(i * 7 + i / 16) % WORDS.len()];
        match i % 53 {
            10 => out.push_str(&format!("**{w}** ")),
            30 => out.push_str(&format!("`{w}` ")),
            52 => out.push_str(&format!("{w}.\n\n")),
            _ => {
                out.push_str(w);
                out.push(' ');
            }
        }
    }
    out
}

/// Clock ticks a second, as `/proc/PID/stat` counts them.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// The processes of process group `pgid`: (pid, its stat fields from 3 on).
pub fn group(pgid: u32) -> Vec<(u32, Vec<u64>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces: the fields start after its `)`.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        // rest[0] is field 3 (state, not a number): kept as 0.
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        // pgrp is field 5.
        if f.get(2) == Some(&(pgid as u64)) {
            out.push((pid, f));
        }
    }
    out
}

/// CPU seconds (user + system, fields 14 and 15) of a process group.
pub fn group_cpu(pgid: u32) -> f64 {
    let ticks: u64 = group(pgid)
        .iter()
        .map(|(_, f)| f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0))
        .sum();
    ticks as f64 / ticks_per_second()
}

/// VmRSS of a process group, MiB.
pub fn group_rss_mib(pgid: u32) -> f64 {
    group(pgid)
        .iter()
        .filter_map(|(pid, _)| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .sum::<f64>()
        / 1024.0
}
