//! The archive bench's corpus: a history of many sessions as the bus events
//! a recording holds (`{"type":…,"properties":…}` one a line), written to
//! files of about `CHUNK` parts each, as many exports would be. Text is
//! words drawn from a vocabulary with a Zipf distribution (a few very
//! common words, a long tail of rare ones), prose, code, paths and tool
//! outputs; sessions spread over a year in random order (the order they
//! are imported in is not the order they happened in), over many projects,
//! models, agents and tools.

pub mod real;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

/// Parts a file holds (about: a session is not split).
pub const CHUNK: usize = 50_000;
/// The newest time in the corpus (ms): 2026-09-21.
pub const NEWEST: i64 = 1_790_000_000_000;
pub const DAY: i64 = 86_400_000;
pub const PROJECTS: usize = 40;
const MODELS: [(&str, &str); 6] = [
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-1"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("google", "gemini-2.5-pro"),
    ("opencode", "grok-code"),
];
const AGENTS: [&str; 3] = ["build", "plan", "general"];
pub const TOOLS: [&str; 7] = ["bash", "read", "edit", "grep", "glob", "write", "todowrite"];
/// The most common words of English prose, then made-up ones.
const COMMON: [&str; 48] = [
    "the", "to", "and", "a", "of", "in", "is", "that", "it", "for", "this", "with", "we", "be",
    "on", "not", "are", "as", "file", "can", "function", "test", "i", "code", "now", "will", "if",
    "error", "from", "so", "an", "by", "value", "should", "type", "let", "check", "use", "at",
    "which", "then", "new", "fix", "when", "run", "call", "return", "change",
];
/// Words a person looks for, placed at given ranks of the vocabulary.
pub const PLACED: [(&str, usize); 6] = [
    ("billing", 400),
    ("invoice", 1_200),
    ("migration", 150),
    ("deadlock", 6_000),
    ("tokenizer", 20_000),
    ("billable", 3_000),
];
const VOCABULARY: usize = 60_000;

/// xorshift64*: the same corpus every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub struct Words {
    words: Vec<String>,
    /// Cumulative Zipf weights (s = 1).
    cumulative: Vec<f64>,
}

impl Words {
    pub fn new() -> Words {
        const ONSETS: [&str; 20] = [
            "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
            "st", "tr", "bl",
        ];
        const VOWELS: [&str; 6] = ["a", "e", "i", "o", "u", "io"];
        const CODAS: [&str; 8] = ["", "n", "r", "s", "l", "t", "ck", "ng"];
        let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
        let mut rng = Rng::new(7);
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        seen.extend(PLACED.iter().map(|(w, _)| w.to_string()));
        while words.len() < VOCABULARY {
            let syllables = 1 + rng.below(3);
            let mut w = String::new();
            for _ in 0..syllables {
                w.push_str(ONSETS[rng.below(ONSETS.len())]);
                w.push_str(VOWELS[rng.below(VOWELS.len())]);
                w.push_str(CODAS[rng.below(CODAS.len())]);
            }
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        for (w, rank) in PLACED {
            words.insert(rank - 1, w.to_string());
        }
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Words { words, cumulative }
    }

    pub fn pick(&self, rng: &mut Rng) -> &str {
        let total = *self.cumulative.last().unwrap();
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let i = self.cumulative.partition_point(|&c| c < u);
        &self.words[i.min(self.words.len() - 1)]
    }

    /// The word at a rank (1 = the most common).
    pub fn at(&self, rank: usize) -> &str {
        &self.words[rank - 1]
    }

    fn prose(&self, rng: &mut Rng, n: usize) -> String {
        let mut out = String::new();
        for i in 0..n {
            let w = self.pick(rng);
            match rng.below(40) {
                0 => out.push_str(&format!("`{w}`")),
                1 => out.push_str(&format!("**{w}**")),
                2 => out.push_str(&self.path(rng)),
                _ => out.push_str(w),
            }
            out.push(if i % 14 == 13 { '.' } else { ' ' });
            if i % 60 == 59 {
                out.push_str("\n\n");
            }
        }
        out
    }

    fn path(&self, rng: &mut Rng) -> String {
        let ext = ["rs", "ts", "py", "go", "md", "toml"][rng.below(6)];
        format!(
            "src/{}/{}_{}.{ext}",
            self.pick(rng),
            self.pick(rng),
            self.pick(rng)
        )
    }

    fn code(&self, rng: &mut Rng, lines: usize) -> String {
        let mut out = String::new();
        for _ in 0..lines {
            let (a, b, c) = (self.pick(rng), self.pick(rng), self.pick(rng));
            match rng.below(5) {
                0 => out.push_str(&format!("fn {a}_{b}(x: &{c}) -> Result<(), Error> {{\n")),
                1 => out.push_str(&format!("    let {a} = {b}.{c}()?;\n")),
                2 => out.push_str(&format!("    // {a} {b} {c}\n")),
                3 => out.push_str(&format!(
                    "    if {a} > {} {{ return {b}; }}\n",
                    rng.below(100)
                )),
                _ => out.push_str("}\n"),
            }
        }
        out
    }
}

/// One bus event of the corpus, a line.
fn line(out: &mut dyn Write, kind: &str, properties: serde_json::Value) {
    let v = json!({"type": kind, "properties": properties});
    writeln!(out, "{v}").unwrap();
}

/// One session's events; the number of parts it made.
fn session(words: &Words, rng: &mut Rng, n: usize, out: &mut impl Write) -> usize {
    let sid = format!("ses_{n:012x}ffe{:013x}", rng.next() >> 12);
    let project = format!(
        "/home/dev/{}-{}",
        words.at(200 + n % PROJECTS * 37),
        n % PROJECTS
    );
    let (provider, model) = MODELS[rng.below(MODELS.len())];
    let agent = AGENTS[rng.below(AGENTS.len())];
    let start = NEWEST - (rng.below(365 * 24 * 60) as i64) * 60_000;
    let title: Vec<&str> = (0..5).map(|_| words.pick(rng)).collect();
    let mut clock = start;
    let mut parts = 0;
    let turns = 2 + rng.below(8);
    let info = |updated: i64| {
        json!({"id": sid, "slug": "bench", "projectID": format!("p{}", n % PROJECTS),
               "directory": project, "title": title.join(" "), "version": "1.18.33",
               "time": {"created": start, "updated": updated}})
    };
    line(
        out,
        "session.updated",
        json!({"sessionID": sid, "info": info(start)}),
    );
    for turn in 0..turns {
        let uid = format!("msg_{n:08x}{turn:04x}0u{:014x}", rng.next() >> 8);
        line(
            out,
            "message.updated",
            json!({"sessionID": sid, "info": {"id": uid, "role": "user", "sessionID": sid,
                   "time": {"created": clock}, "agent": agent,
                   "model": {"providerID": provider, "modelID": model}}}),
        );
        let n_words = 5 + rng.below(40);
        let text = words.prose(rng, n_words);
        let pid = format!("prt_{n:08x}{turn:04x}00{:014x}", rng.next() >> 8);
        line(
            out,
            "message.part.updated",
            json!({"sessionID": sid, "part": {"id": pid, "messageID": uid, "sessionID": sid,
                   "type": "text", "text": text, "time": {"start": clock, "end": clock}}}),
        );
        parts += 1;
        clock += 2_000 + rng.below(20_000) as i64;
        let aid = format!("msg_{n:08x}{turn:04x}1a{:014x}", rng.next() >> 8);
        let created = clock;
        let steps = 1 + rng.below(6);
        let mut k = 0;
        let part = |out: &mut dyn Write, body: serde_json::Value, k: &mut usize| {
            let mut body = body;
            let map = body.as_object_mut().unwrap();
            let pid = format!("prt_{n:08x}{turn:04x}{:02x}{:014x}", *k + 1, *k);
            *k += 1;
            map.insert("id".into(), json!(pid));
            map.insert("messageID".into(), json!(aid));
            map.insert("sessionID".into(), json!(sid));
            line(
                out,
                "message.part.updated",
                json!({"sessionID": sid, "part": body}),
            );
        };
        for _ in 0..steps {
            part(out, json!({"type": "step-start"}), &mut k);
            if rng.below(3) == 0 {
                let n_words = 20 + rng.below(80);
                let text = words.prose(rng, n_words);
                part(
                    out,
                    json!({"type": "reasoning", "text": text,
                           "time": {"start": clock, "end": clock + 900}}),
                    &mut k,
                );
            }
            let tool = TOOLS[rng.below(TOOLS.len())];
            let path = format!("{project}/{}", words.path(rng));
            let (input, output) = match tool {
                "bash" => {
                    let w = words.pick(rng);
                    let lines = 3 + rng.below(25);
                    let mut o = format!("   Compiling {w} v0.1.0\n");
                    for _ in 0..lines {
                        o.push_str(&format!(
                            "test {}::{}_{} ... ok\n",
                            words.pick(rng),
                            words.pick(rng),
                            words.pick(rng)
                        ));
                    }
                    (
                        json!({"command": format!("cargo test {w}"), "description": format!("Run the {w} tests")}),
                        o,
                    )
                }
                "read" | "write" | "edit" => {
                    let lines = 5 + rng.below(30);
                    let code = words.code(rng, lines);
                    let input = if tool == "edit" {
                        json!({"filePath": path, "oldString": words.code(rng, 2), "newString": words.code(rng, 3)})
                    } else {
                        json!({"filePath": path})
                    };
                    (input, code)
                }
                "grep" => {
                    let w = words.pick(rng).to_string();
                    let mut o = String::new();
                    for _ in 0..3 + rng.below(15) {
                        o.push_str(&format!(
                            "{}:{}: {}\n",
                            words.path(rng),
                            rng.below(900),
                            words.prose(rng, 8)
                        ));
                    }
                    (json!({"pattern": w, "path": project}), o)
                }
                "glob" => {
                    let mut o = String::new();
                    for _ in 0..3 + rng.below(20) {
                        o.push_str(&words.path(rng));
                        o.push('\n');
                    }
                    (json!({"pattern": "**/*.rs", "path": project}), o)
                }
                _ => {
                    let todos: Vec<_> = (0..3)
                        .map(|i| json!({"content": words.prose(rng, 6), "status": "pending", "priority": "high", "id": i.to_string()}))
                        .collect();
                    (json!({"todos": todos}), String::new())
                }
            };
            let failed = rng.below(12) == 0;
            let state = if failed {
                json!({"status": "error", "input": input, "error": format!("Error: {} not found", words.pick(rng)),
                       "time": {"start": clock, "end": clock + 300}})
            } else {
                json!({"status": "completed", "input": input, "output": output,
                       "title": format!("{tool} {}", words.pick(rng)),
                       "metadata": {"exit": 0, "truncated": false},
                       "time": {"start": clock, "end": clock + 300}})
            };
            part(
                out,
                json!({"type": "tool", "tool": tool, "callID": format!("call_{n}_{turn}_{k}"), "state": state}),
                &mut k,
            );
            clock += 1_000 + rng.below(8_000) as i64;
            part(
                out,
                json!({"type": "step-finish", "reason": "tool-calls", "cost": 0.001,
                       "tokens": {"input": 1000, "output": 50, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
                &mut k,
            );
        }
        let n_words = 10 + rng.below(120);
        let text = words.prose(rng, n_words);
        part(
            out,
            json!({"type": "text", "text": text, "time": {"start": clock, "end": clock + 2_000}}),
            &mut k,
        );
        parts += k;
        line(
            out,
            "message.updated",
            json!({"sessionID": sid, "info": {"id": aid, "parentID": uid, "role": "assistant",
                   "mode": agent, "agent": agent, "path": {"cwd": project, "root": project},
                   "cost": 0.01, "tokens": {"total": 1100, "input": 1000, "output": 100, "reasoning": 0,
                   "cache": {"read": 0, "write": 0}}, "modelID": model, "providerID": provider,
                   "time": {"created": created, "completed": clock + 2_000}, "sessionID": sid,
                   "finish": "stop"}}),
        );
        clock += 5_000 + rng.below(60_000) as i64;
    }
    line(
        out,
        "session.updated",
        json!({"sessionID": sid, "info": info(clock)}),
    );
    parts
}

/// A corpus made before: its files and the parts each holds, as its
/// marker (`complete`) lists them.
fn list(dir: &Path) -> Vec<(PathBuf, usize)> {
    std::fs::read_to_string(dir.join("complete"))
        .unwrap()
        .lines()
        .map(|l| {
            let (n, f) = l.split_once(' ').unwrap();
            (dir.join(f), n.parse().unwrap())
        })
        .collect()
}

/// The corpus of at least `parts` parts in files of about `CHUNK` parts
/// under `dir`, made once (a marker says it is complete): the files and
/// the parts each holds.
pub fn corpus(dir: &Path, parts: usize) -> Vec<(PathBuf, usize)> {
    let done = dir.join("complete");
    if done.exists() {
        return list(dir);
    }
    std::fs::create_dir_all(dir).unwrap();
    let words = Words::new();
    let mut rng = Rng::new(42);
    let mut made = 0;
    let mut session_no = 0;
    let mut index = String::new();
    let mut file_no = 0;
    while made < parts {
        let name = format!("chunk-{file_no:03}.jsonl");
        let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join(&name)).unwrap());
        let mut in_file = 0;
        while in_file < CHUNK.min(parts - made) {
            in_file += session(&words, &mut rng, session_no, &mut out);
            session_no += 1;
        }
        out.flush().unwrap();
        made += in_file;
        index.push_str(&format!("{in_file} {name}\n"));
        file_no += 1;
    }
    std::fs::write(&done, index).unwrap();
    list(dir)
}
