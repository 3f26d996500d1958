//! The whole content of a card or a message as plain text: what `y`
//! copies and `o`/`e` open. A card on screen is trimmed and wrapped; this
//! is all of it (a tool's whole output, the written file, the diff), made
//! plain (`sanitize::plain`: no escape sequence survives).

use serde_json::Value;

use crate::model::wire::sanitize;
use crate::model::{Message, Part, PartBody, Session};

/// Something to copy or open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    /// What it is, for the status line: "bash output", "message".
    pub what: String,
    /// A file name hint for the editor (`.diff`, `.md`, the written file's extension).
    pub suffix: String,
    pub text: String,
}

/// A fenced code block of a Markdown text: its language and its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    pub lang: String,
    pub code: String,
}

/// The whole content of one part.
pub fn part(part: &Part) -> Content {
    let (what, suffix, text) = match &part.body {
        PartBody::Text(t) => ("text".to_string(), ".md".to_string(), t.text.clone()),
        PartBody::Reasoning(r) => ("reasoning".into(), ".md".into(), r.text.clone()),
        PartBody::Tool(t) => {
            let input = part.tool_state_field("input").unwrap_or(Value::Null);
            let meta = part.tool_state_field("metadata").unwrap_or(Value::Null);
            let (what, suffix, text) = tool(&t.tool, &input, &meta, t.state.output.as_deref());
            let text = match t.state.error.as_deref().filter(|e| !e.trim().is_empty()) {
                Some(e) if text.trim().is_empty() => e.to_string(),
                Some(e) => format!("{}\n{e}", text.trim_end()),
                None => text,
            };
            (what, suffix, text)
        }
        _ => (
            part.kind().to_string(),
            ".json".into(),
            part.raw.get().to_string(),
        ),
    };
    Content {
        what,
        suffix,
        text: sanitize::plain(&text).into_owned(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A tool's content: what its card shows when full, untrimmed.
fn tool(name: &str, input: &Value, meta: &Value, output: Option<&str>) -> (String, String, String) {
    let output = output.filter(|o| !o.is_empty());
    match name {
        "bash" => {
            let mut text = String::new();
            if let Some(cmd) = str_of(input, "command") {
                text.push_str(&format!("$ {cmd}\n"));
            }
            // Streamed while running (metadata.output), final when done.
            if let Some(out) = output.or_else(|| str_of(meta, "output")) {
                text.push_str(out);
                if !out.ends_with('\n') {
                    text.push('\n');
                }
            }
            if let Some(code) = meta.get("exit").and_then(Value::as_i64) {
                text.push_str(&format!("exit {code}\n"));
            }
            ("bash output".into(), ".txt".into(), text)
        }
        "write" => (
            "written file".into(),
            extension(str_of(input, "filePath")),
            str_of(input, "content").unwrap_or("").to_string(),
        ),
        "edit" | "multiedit" => {
            let patch = str_of(meta, "diff")
                .or_else(|| meta.get("filediff").and_then(|f| str_of(f, "patch")))
                .map(str::to_string)
                .unwrap_or_else(|| output.unwrap_or("").to_string());
            ("diff".into(), ".diff".into(), patch)
        }
        "apply_patch" | "patch" => (
            "patch".into(),
            ".diff".into(),
            str_of(input, "patchText")
                .or_else(|| str_of(input, "patch"))
                .unwrap_or("")
                .to_string(),
        ),
        "todowrite" | "todoread" => {
            let todos = input
                .get("todos")
                .or_else(|| meta.get("todos"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let text: String = todos
                .iter()
                .map(|t| {
                    let status = str_of(t, "status").unwrap_or("");
                    let mark = match status {
                        "completed" => "x",
                        "in_progress" => "~",
                        "cancelled" => "-",
                        _ => " ",
                    };
                    format!("[{mark}] {}\n", str_of(t, "content").unwrap_or(""))
                })
                .collect();
            ("todo list".into(), ".md".into(), text)
        }
        _ => {
            let text = match output {
                Some(o) => o.to_string(),
                None if input.is_null() => String::new(),
                None => serde_json::to_string_pretty(input).unwrap_or_default(),
            };
            (format!("{} output", name), ".txt".into(), text)
        }
    }
}

/// `.py` for `src/shapes.py`; `.txt` without one.
fn extension(path: Option<&str>) -> String {
    path.and_then(|p| std::path::Path::new(p).extension())
        .and_then(|e| e.to_str())
        .filter(|e| e.len() <= 12 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .map_or_else(|| ".txt".to_string(), |e| format!(".{e}"))
}

/// A message as its reader sees it: its text parts, or (a message with no
/// text) every shown part's content.
pub fn message(m: &Message) -> Content {
    let parts: Vec<_> = crate::model::entity::shown::shown_parts(m).collect();
    let texts: Vec<String> = parts
        .iter()
        .filter_map(|p| match &p.body {
            PartBody::Text(t) if !t.text.trim().is_empty() => Some(t.text.trim_end().to_string()),
            _ => None,
        })
        .collect();
    let mut text = if texts.is_empty() {
        parts
            .iter()
            .filter(|p| matches!(p.body, PartBody::Tool(_) | PartBody::Reasoning(_)))
            .map(|p| part(p).text.trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n\n")
    } else {
        texts.join("\n\n")
    };
    if let Some(e) = &m.info.error {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&format!("Error: {}", e.summary()));
    }
    text.push('\n');
    let who = match &m.info.role {
        crate::model::Role::User => "user message".to_string(),
        crate::model::Role::Assistant => "assistant message".to_string(),
        _ if m.placeholder => "message".to_string(),
        role => format!("{} message", sanitize::line(role.label())),
    };
    Content {
        what: who,
        suffix: ".md".into(),
        text: sanitize::plain(&text).into_owned(),
    }
}

/// The whole session as Markdown, as `ocview export` writes it (with
/// reasoning).
pub fn session(s: &Session) -> Content {
    Content {
        what: "session as Markdown".into(),
        suffix: ".md".into(),
        text: sanitize::plain(&crate::headless::export::markdown(s, true)).into_owned(),
    }
}

/// The fenced code blocks of Markdown text, in order (``` or ~~~ fences of
/// three or more; an unclosed block runs to the end).
pub fn code_blocks(markdown: &str) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize, String, Vec<&str>)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        match &mut open {
            None if indent < 4 => {
                for c in ['`', '~'] {
                    let n = fence(c);
                    if n >= 3 {
                        let lang = trimmed[n..].split_whitespace().next().unwrap_or("");
                        open = Some((c, n, lang.to_string(), Vec::new()));
                        break;
                    }
                }
            }
            None => {}
            Some((c, n, _, lines)) => {
                let closing = fence(*c);
                if closing >= *n && trimmed[closing..].trim().is_empty() && indent < 4 {
                    if let Some((_, _, lang, lines)) = open.take() {
                        out.push(CodeBlock {
                            lang,
                            code: lines.join("\n") + "\n",
                        });
                    }
                } else {
                    lines.push(line);
                }
            }
        }
    }
    if let Some((_, _, lang, lines)) = open {
        out.push(CodeBlock {
            lang,
            code: lines.join("\n") + "\n",
        });
    }
    out
}

/// "12 lines, 1.4 KB".
pub fn size(text: &str) -> String {
    let lines = text.lines().count();
    let b = crate::render::format::bytes(text.len() as u64);
    let l = if lines == 1 { "line" } else { "lines" };
    format!("{lines} {l}, {b}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_are_found_with_their_language() {
        let md = "Intro\n```rust\nfn main() {}\n```\ntext\n~~~~\na ``` b\n~~~~\n    ```not\n```py\nunclosed";
        let b = code_blocks(md);
        assert_eq!(b.len(), 3, "{b:?}");
        assert_eq!(b[0].lang, "rust");
        assert_eq!(b[0].code, "fn main() {}\n");
        assert_eq!(b[1].code, "a ``` b\n");
        assert_eq!(b[2].lang, "py");
        assert_eq!(b[2].code, "unclosed\n");
    }

    #[test]
    fn bash_content_is_the_command_its_whole_output_and_the_exit_code() {
        let input = serde_json::json!({"command": "ls\u{1b}[2J", "description": "d"});
        let meta = serde_json::json!({"exit": 2});
        let out: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let (what, _, text) = tool("bash", &input, &meta, Some(&out));
        assert_eq!(what, "bash output");
        assert!(text.starts_with("$ ls\u{1b}[2J\nline 0\n"));
        assert!(text.ends_with("line 39\nexit 2\n"));
    }

    #[test]
    fn hostile_output_comes_out_plain() {
        let v = serde_json::json!({"id": "prt_1", "messageID": "msg_1", "sessionID": "ses_1",
            "type": "tool", "tool": "bash", "callID": "c",
            "state": {"status": "completed", "input": {"command": "x\u{1b}]52;c;ZXZpbA==\u{7}"},
                "output": "\u{1b}[31mred\u{1b}[0m\ttab\u{1b}]0;title\u{7}\u{9b}2J\r\nend\u{7}\u{202e}",
                "metadata": {}}});
        let p = Part::from_raw(&serde_json::value::to_raw_value(&v).unwrap()).unwrap();
        let c = part(&p);
        assert_eq!(c.text, "$ x\nred\ttab\nend␇\n");
        assert!(
            !c.text
                .chars()
                .any(|ch| ch.is_control() && ch != '\n' && ch != '\t')
        );
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size("a\nb\n"), "2 lines, 4 B");
        assert_eq!(size(&"x".repeat(2048)), "1 line, 2.0 KB");
    }
}
