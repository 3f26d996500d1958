//! A corpus of real sizes (#39 point 8): sessions whose parts are what an
//! agent's are, made of real text. The text is this machine's Rust
//! sources and Markdown under `~/.cargo/registry/src` (the crates
//! Cargo.lock names, fetched by any build, read in a sorted order), so the
//! corpus is code and prose as people write them, the same on every
//! machine that built ocview. Sizes, as OpenCode 1.18.33 makes them:
//!
//! - a person's message: mostly a line, sometimes a paragraph, now and
//!   then a pasted file or log (to 30 KB);
//! - reasoning: a few hundred bytes to 6 KB; the answer's text: a line to
//!   tens of KB;
//! - `read`: a file as the tool returns it (numbered lines, 2,000 at most,
//!   cut at 100 KB); `write`: a whole file as its input; `edit`: the
//!   strings replaced, the unified diff and the file before and after (its
//!   `filediff`), as OpenCode keeps them;
//! - `bash`: outputs from a line to 100 KB (builds, tests, greps, diffs);
//!   `grep` and `glob`: matches and paths;
//! - step starts and finishes, todo lists.
//!
//! The bench prints the resulting distribution (median, p90, p99, max of
//! each kind's JSON) beside its rates.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{DAY, NEWEST, Rng, line, list};

/// Real texts to draw from: source files (code) and Markdown (prose).
pub struct Texts {
    code: Vec<(String, String)>,
    prose: Vec<String>,
}

/// Files read for the pool, at most, and the most taken of one file.
const CODE_FILES: usize = 4_000;
const FILE_CAP: usize = 200_000;

impl Texts {
    /// The pool, from the cargo registry's sources; `None` where there are
    /// none (a build fetches them).
    pub fn load() -> Option<Texts> {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
        let mut files = Vec::new();
        walk(&home.join("registry/src"), &mut files);
        files.sort();
        let mut code = Vec::new();
        let mut prose = Vec::new();
        let mut rs = 0usize;
        for f in &files {
            let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
            let take = match ext {
                "md" => true,
                "rs" => {
                    rs += 1;
                    // Every few: the pool spans many crates.
                    rs.is_multiple_of(3) && code.len() < CODE_FILES
                }
                _ => false,
            };
            if !take {
                continue;
            }
            let Ok(mut text) = std::fs::read_to_string(f) else {
                continue;
            };
            if text.len() > FILE_CAP {
                let mut cut = FILE_CAP;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            if text.trim().is_empty() {
                continue;
            }
            if ext == "md" {
                prose.push(text);
            } else {
                let name = f
                    .components()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                code.push((name, text));
            }
        }
        (code.len() > 100 && prose.len() > 20).then_some(Texts { code, prose })
    }

    fn file<'a>(&'a self, rng: &mut Rng) -> &'a (String, String) {
        &self.code[rng.below(self.code.len())]
    }

    /// About `bytes` of prose, from a paragraph boundary of a real text.
    fn prose(&self, rng: &mut Rng, bytes: usize) -> String {
        let mut out = String::new();
        while out.len() < bytes {
            let text = &self.prose[rng.below(self.prose.len())];
            let from = boundary(text, rng.below(text.len()));
            let from = text[from..].find("\n\n").map_or(0, |i| from + i + 2);
            let rest = &text[from..];
            let want = bytes - out.len();
            let to = boundary(rest, want.min(rest.len()));
            out.push_str(&rest[..to]);
            out.push('\n');
        }
        out
    }

    /// One to `most` consecutive lines of a real file.
    fn some_lines<'a>(&self, text: &'a str, rng: &mut Rng, most: usize) -> Vec<&'a str> {
        let n = 1 + rng.below(most);
        self.lines_of(text, rng, n)
    }

    /// `lines` consecutive lines of a real file, from somewhere in it.
    fn lines_of<'a>(&self, text: &'a str, rng: &mut Rng, lines: usize) -> Vec<&'a str> {
        let all: Vec<&str> = text.lines().collect();
        let from = rng.below(all.len().saturating_sub(lines).max(1));
        all[from..(from + lines).min(all.len())].to_vec()
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

fn boundary(s: &str, mut at: usize) -> usize {
    while at < s.len() && !s.is_char_boundary(at) {
        at += 1;
    }
    at.min(s.len())
}

/// A size from `low` to `high`, most near `low` (log-uniform).
fn size(rng: &mut Rng, low: usize, high: usize) -> usize {
    let (l, h) = ((low.max(1)) as f64, high as f64);
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (l * (h / l).powf(u)) as usize
}

/// A file as OpenCode's `read` returns it: numbered lines in a `<file>`
/// block, 2,000 lines at most, cut at 100 KB.
fn read_output(text: &str) -> String {
    let mut out = String::from("<file>\n");
    for (i, l) in text.lines().take(2000).enumerate() {
        if out.len() > 100_000 {
            break;
        }
        out.push_str(&format!("{:05}| {l}\n", i + 1));
    }
    out.push_str("</file>");
    out
}

/// A unified diff replacing `old` with `new` in `path` at `line`.
fn diff(path: &str, line: usize, old: &[&str], new: &[&str]) -> String {
    let mut out = format!(
        "Index: {path}\n===================================================================\n--- {path}\n+++ {path}\n@@ -{line},{} +{line},{} @@\n",
        old.len(),
        new.len()
    );
    for l in old {
        out.push_str(&format!("-{l}\n"));
    }
    for l in new {
        out.push_str(&format!("+{l}\n"));
    }
    out
}

/// A command's output of about `bytes`, as builds, tests and searches
/// print them over real files.
fn bash_output(texts: &Texts, rng: &mut Rng, bytes: usize) -> (String, String) {
    let mut out = String::new();
    let command = match rng.below(4) {
        0 => {
            while out.len() < bytes {
                let (name, _) = texts.file(rng);
                out.push_str(&format!(
                    "   Compiling {} v0.{}.{}\n",
                    name.split('/').next().unwrap_or(name),
                    rng.below(30),
                    rng.below(10)
                ));
                if rng.below(8) == 0 {
                    let (name, text) = texts.file(rng);
                    let lines = texts.lines_of(text, rng, 3);
                    out.push_str(&format!(
                        "warning: unused variable\n  --> {name}:{}:9\n",
                        rng.below(900)
                    ));
                    for l in lines {
                        out.push_str(&format!("   | {l}\n"));
                    }
                }
            }
            "cargo build".to_string()
        }
        1 => {
            while out.len() < bytes {
                let (name, text) = texts.file(rng);
                for l in texts.lines_of(text, rng, 1) {
                    let word = l.split_whitespace().next().unwrap_or("fn");
                    out.push_str(&format!(
                        "test {}::{} ... ok\n",
                        name.replace(['/', '.'], "_"),
                        word.trim_matches(|c: char| !c.is_alphanumeric())
                    ));
                }
            }
            "cargo test".to_string()
        }
        2 => {
            while out.len() < bytes {
                let (name, text) = texts.file(rng);
                let n = 1 + rng.below(5);
                for (i, l) in texts.lines_of(text, rng, n).iter().enumerate() {
                    out.push_str(&format!("{name}:{}:{l}\n", i + 1 + rng.below(500)));
                }
            }
            "rg -n".to_string()
        }
        _ => {
            while out.len() < bytes {
                let (name, text) = texts.file(rng);
                let old = texts.some_lines(text, rng, 6);
                let new = texts.some_lines(text, rng, 6);
                out.push_str(&diff(name, 1 + rng.below(400), &old, &new));
            }
            "git diff".to_string()
        }
    };
    let mut cut = bytes.min(out.len());
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    (command, out)
}

/// One session's events, of real sizes; the number of parts it made.
fn session(texts: &Texts, rng: &mut Rng, n: usize, out: &mut impl Write) -> usize {
    let sid = format!("ses_{n:012x}fee{:013x}", rng.next() >> 12);
    let project = format!("/home/dev/project-{}", n % 30);
    let (provider, model) = [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-5"),
        ("google", "gemini-2.5-pro"),
    ][rng.below(3)];
    let start = NEWEST - (rng.below(365 * 24 * 60) as i64) * 60_000;
    let title = texts
        .prose(rng, 40)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let title: String = title.chars().take(60).collect();
    let mut clock = start;
    let mut parts = 0;
    let info = |updated: i64| {
        json!({"id": sid, "slug": "real", "projectID": format!("p{}", n % 30),
               "directory": project, "title": title, "version": "1.18.33",
               "time": {"created": start, "updated": updated}})
    };
    line(
        out,
        "session.updated",
        json!({"sessionID": sid, "info": info(start)}),
    );
    let turns = size(rng, 2, 30);
    for turn in 0..turns {
        let uid = format!("msg_{n:08x}{turn:04x}0u{:014x}", rng.next() >> 8);
        line(
            out,
            "message.updated",
            json!({"sessionID": sid, "info": {"id": uid, "role": "user", "sessionID": sid,
                   "time": {"created": clock}, "agent": "build",
                   "model": {"providerID": provider, "modelID": model}}}),
        );
        let asked = match rng.below(10) {
            0 => size(rng, 2_000, 30_000),
            1..=3 => size(rng, 200, 2_000),
            _ => size(rng, 30, 200),
        };
        let pid = format!("prt_{n:08x}{turn:04x}00{:014x}", rng.next() >> 8);
        line(
            out,
            "message.part.updated",
            json!({"sessionID": sid, "part": {"id": pid, "messageID": uid, "sessionID": sid,
                   "type": "text", "text": texts.prose(rng, asked),
                   "time": {"start": clock, "end": clock}}}),
        );
        parts += 1;
        clock += 2_000 + rng.below(20_000) as i64;
        let aid = format!("msg_{n:08x}{turn:04x}1a{:014x}", rng.next() >> 8);
        let created = clock;
        let mut k = 0;
        let part = |out: &mut dyn Write, body: serde_json::Value, k: &mut usize| {
            let mut body = body;
            let map = body.as_object_mut().unwrap();
            map.insert(
                "id".into(),
                json!(format!("prt_{n:08x}{turn:04x}{:02x}{:014x}", *k + 1, *k)),
            );
            *k += 1;
            map.insert("messageID".into(), json!(aid));
            map.insert("sessionID".into(), json!(sid));
            line(
                out,
                "message.part.updated",
                json!({"sessionID": sid, "part": body}),
            );
        };
        for _ in 0..size(rng, 1, 12) {
            part(
                out,
                json!({"type": "step-start", "snapshot": format!("{:040x}", rng.next())}),
                &mut k,
            );
            if rng.below(2) == 0 {
                let bytes = size(rng, 200, 6_000);
                part(
                    out,
                    json!({"type": "reasoning", "text": texts.prose(rng, bytes),
                           "metadata": {}, "time": {"start": clock, "end": clock + 900}}),
                    &mut k,
                );
            }
            let call = tool_call(texts, rng, &project);
            let time = json!({"start": clock, "end": clock + 300});
            let mut state = json!({"status": "completed", "input": call.input,
                "output": call.output, "title": call.title, "metadata": call.metadata,
                "time": time});
            if rng.below(12) == 0 {
                state = json!({"status": "error", "input": state["input"],
                    "error": format!("Error: {} failed", call.tool), "time": time});
            }
            part(
                out,
                json!({"type": "tool", "tool": call.tool,
                       "callID": format!("toolu_{:024x}", rng.next()), "state": state}),
                &mut k,
            );
            clock += 1_000 + rng.below(8_000) as i64;
            part(
                out,
                json!({"type": "step-finish", "reason": "tool-calls",
                       "snapshot": format!("{:040x}", rng.next()), "cost": 0.004,
                       "tokens": {"input": 9000, "output": 200, "reasoning": 0,
                                  "cache": {"read": 30000, "write": 0}}}),
                &mut k,
            );
        }
        let answer = match rng.below(20) {
            0 => size(rng, 15_000, 40_000),
            1..=5 => size(rng, 3_000, 15_000),
            _ => size(rng, 60, 3_000),
        };
        part(
            out,
            json!({"type": "text", "text": texts.prose(rng, answer),
                   "time": {"start": clock, "end": clock + 2_000}}),
            &mut k,
        );
        parts += k;
        line(
            out,
            "message.updated",
            json!({"sessionID": sid, "info": {"id": aid, "parentID": uid, "role": "assistant",
                   "mode": "build", "agent": "build", "path": {"cwd": project, "root": project},
                   "cost": 0.02, "tokens": {"total": 40000, "input": 9000, "output": 900,
                   "reasoning": 0, "cache": {"read": 30000, "write": 0}},
                   "modelID": model, "providerID": provider,
                   "time": {"created": created, "completed": clock + 2_000}, "sessionID": sid,
                   "finish": "stop"}}),
        );
        clock += 5_000 + rng.below(60_000) as i64;
    }
    line(
        out,
        "session.updated",
        json!({"sessionID": sid, "info": info(clock.min(start + DAY))}),
    );
    parts
}

struct Call {
    tool: &'static str,
    input: serde_json::Value,
    output: String,
    title: String,
    metadata: serde_json::Value,
}

fn tool_call(texts: &Texts, rng: &mut Rng, project: &str) -> Call {
    let (name, text) = texts.file(rng);
    let path = format!("{project}/{name}");
    match rng.below(20) {
        0..=5 => Call {
            tool: "read",
            input: json!({"filePath": path}),
            output: read_output(text),
            title: name.clone(),
            metadata: json!({"preview": texts.lines_of(text, rng, 20).join("\n")}),
        },
        6..=8 => {
            let at = 1 + rng.below(text.lines().count().max(1));
            let old = texts.some_lines(text, rng, 12);
            let new = texts.some_lines(text, rng, 16);
            let after = text.replacen(&old.join("\n"), &new.join("\n"), 1);
            Call {
                tool: "edit",
                input: json!({"filePath": path, "oldString": old.join("\n"),
                              "newString": new.join("\n")}),
                output: String::new(),
                title: name.clone(),
                metadata: json!({"diagnostics": {}, "diff": diff(&path, at, &old, &new),
                    "filediff": {"file": path, "before": text, "after": after,
                                 "additions": new.len(), "deletions": old.len()}}),
            }
        }
        9 => Call {
            tool: "write",
            input: json!({"filePath": path, "content": text}),
            output: "Wrote file successfully.".into(),
            title: name.clone(),
            metadata: json!({"diagnostics": {}, "filepath": path, "exists": rng.below(2) == 0}),
        },
        10..=15 => {
            let bytes = match rng.below(10) {
                0 => size(rng, 10_000, 100_000),
                1..=3 => size(rng, 1_000, 10_000),
                _ => size(rng, 20, 1_000),
            };
            let (command, output) = bash_output(texts, rng, bytes);
            Call {
                tool: "bash",
                input: json!({"command": command, "description": "Run it"}),
                metadata: json!({"output": output, "exit": 0, "description": "Run it"}),
                output,
                title: command,
            }
        }
        16 | 17 => {
            let mut output = String::new();
            for _ in 0..size(rng, 1, 80) {
                let (name, text) = texts.file(rng);
                for l in texts.lines_of(text, rng, 1) {
                    output.push_str(&format!(
                        "{project}/{name}:\n  Line {}: {l}\n",
                        rng.below(900)
                    ));
                }
            }
            Call {
                tool: "grep",
                input: json!({"pattern": "fn ", "path": project}),
                title: "fn ".into(),
                metadata: json!({"matches": 1, "truncated": false}),
                output,
            }
        }
        18 => {
            let mut output = String::new();
            for _ in 0..size(rng, 1, 100) {
                output.push_str(&format!("{project}/{}\n", texts.file(rng).0));
            }
            Call {
                tool: "glob",
                input: json!({"pattern": "**/*.rs", "path": project}),
                title: "**/*.rs".into(),
                metadata: json!({"count": 1, "truncated": false}),
                output,
            }
        }
        _ => {
            let todos: Vec<_> = (0..1 + rng.below(8))
                .map(|i| {
                    json!({"content": texts.prose(rng, 60).lines().next().unwrap_or(""),
                           "status": "pending", "priority": "high", "id": i.to_string()})
                })
                .collect();
            Call {
                tool: "todowrite",
                output: serde_json::to_string_pretty(&todos).unwrap(),
                input: json!({"todos": todos}),
                title: format!("{} todos", todos.len()),
                metadata: json!({"todos": todos}),
            }
        }
    }
}

/// The corpus of at least `parts` parts of real sizes under `dir`, made
/// once: the files and the parts each holds. `None` without the texts.
pub fn corpus(dir: &Path, parts: usize) -> Option<Vec<(PathBuf, usize)>> {
    if dir.join("complete").exists() {
        return Some(list(dir));
    }
    let texts = Texts::load()?;
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng::new(1839);
    let (mut made, mut session_no, mut file_no) = (0, 0, 0);
    let mut index = String::new();
    while made < parts {
        let name = format!("real-{file_no:03}.jsonl");
        let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join(&name)).unwrap());
        let mut in_file = 0;
        while in_file < (super::CHUNK / 5).min(parts - made) {
            in_file += session(&texts, &mut rng, session_no, &mut out);
            session_no += 1;
        }
        out.flush().unwrap();
        made += in_file;
        index.push_str(&format!("{in_file} {name}\n"));
        file_no += 1;
    }
    std::fs::write(dir.join("complete"), index).unwrap();
    Some(list(dir))
}

/// The same sessions as OpenCode's own database keeps them (the schema
/// opencode 1.18.33 made; a message's and a part's JSON without the ids
/// its columns hold), at `path`.
pub fn opencode_db(files: &[(PathBuf, usize)], path: &Path) {
    let building = path.with_extension("building");
    let _ = std::fs::remove_file(&building);
    let mut c = rusqlite::Connection::open(&building).unwrap();
    let schema = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/opencode-1.18.33/database-schema.sql"),
    )
    .unwrap();
    c.execute_batch(&schema).unwrap();
    // A message's row comes after its parts in the stream.
    c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut project = tx
            .prepare("INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES (?1, ?2, 0, 0, '[]')")
            .unwrap();
        let mut session = tx
            .prepare("INSERT OR REPLACE INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?1, ?2, ?3, ?4, ?5, '1.18.33', ?6, ?7)")
            .unwrap();
        let mut message = tx
            .prepare("INSERT OR REPLACE INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)")
            .unwrap();
        let mut part = tx
            .prepare("INSERT OR REPLACE INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)")
            .unwrap();
        let without = |v: &serde_json::Value, keys: &[&str]| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                for k in keys {
                    m.remove(*k);
                }
            }
            v.to_string()
        };
        for (file, _) in files {
            let text = std::fs::read_to_string(file).unwrap();
            for l in text.lines() {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let p = &v["properties"];
                match v["type"].as_str().unwrap_or("") {
                    "session.updated" => {
                        let i = &p["info"];
                        project
                            .execute(rusqlite::params![
                                i["projectID"].as_str(),
                                i["directory"].as_str()
                            ])
                            .unwrap();
                        session
                            .execute(rusqlite::params![
                                i["id"].as_str(),
                                i["projectID"].as_str(),
                                i["slug"].as_str(),
                                i["directory"].as_str(),
                                i["title"].as_str(),
                                i["time"]["created"].as_i64(),
                                i["time"]["updated"].as_i64()
                            ])
                            .unwrap();
                    }
                    "message.updated" => {
                        let i = &p["info"];
                        message
                            .execute(rusqlite::params![
                                i["id"].as_str(),
                                i["sessionID"].as_str(),
                                i["time"]["created"].as_i64(),
                                without(i, &["id", "sessionID"])
                            ])
                            .unwrap();
                    }
                    "message.part.updated" => {
                        let i = &p["part"];
                        let t = i["time"]["start"]
                            .as_i64()
                            .or(i["state"]["time"]["start"].as_i64())
                            .unwrap_or(NEWEST);
                        part.execute(rusqlite::params![
                            i["id"].as_str(),
                            i["messageID"].as_str(),
                            i["sessionID"].as_str(),
                            t,
                            without(i, &["id", "sessionID", "messageID"])
                        ])
                        .unwrap();
                    }
                    _ => {}
                }
            }
        }
    }
    tx.commit().unwrap();
    c.execute_batch("VACUUM").unwrap();
    drop(c);
    std::fs::rename(&building, path).unwrap();
}
