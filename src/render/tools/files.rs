//! File tools: `read`, `write`, `edit`, `apply_patch`.

use ratatui::text::Line;
use serde_json::Value;

use crate::render::theme::Role;
use crate::render::tools::{Body, ToolRenderer, ToolView};

/// A language token for the highlighter: a path's extension, or the file
/// name when it has none (`Dockerfile`, `Makefile`: the grammars list
/// those names as extensions).
pub fn lang_of(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(_, ext)| ext)
}

fn file_path<'a>(v: &'a ToolView) -> &'a str {
    v.input_str("filePath")
        .or_else(|| v.input_str("path"))
        .or_else(|| v.meta_str("filepath"))
        .unwrap_or("")
}

pub struct Read;

impl ToolRenderer for Read {
    fn names(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = v.path(file_path(v));
        let offset = v.input.get("offset").and_then(Value::as_u64);
        let limit = v.input.get("limit").and_then(Value::as_u64);
        match (offset, limit) {
            (Some(o), Some(l)) => s.push_str(&format!(" :{o}+{l}")),
            (Some(o), None) => s.push_str(&format!(" :{o}-")),
            (None, Some(l)) => s.push_str(&format!(" :1+{l}")),
            _ => {}
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        let display = v.metadata.get("display");
        if let Some(d) = display {
            let start = d.get("lineStart").and_then(Value::as_u64);
            let end = d.get("lineEnd").and_then(Value::as_u64);
            let total = d.get("totalLines").and_then(Value::as_u64);
            if let (Some(a), Some(b)) = (start, end) {
                let of = total.map(|t| format!(" of {t}")).unwrap_or_default();
                out.kv("lines", &format!("{a}–{b}{of}"));
            }
        }
        if let Some(loaded) = v
            .metadata
            .get("loaded")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        {
            let names: Vec<String> = loaded
                .iter()
                .filter_map(Value::as_str)
                .map(|p| v.path(p))
                .collect();
            out.kv("also loaded", &names.join(", "));
        }
        if v.full {
            let text = display
                .and_then(|d| d.get("text"))
                .and_then(Value::as_str)
                .or_else(|| v.meta_str("preview"));
            if let Some(text) = text {
                let first = display
                    .and_then(|d| d.get("lineStart"))
                    .and_then(Value::as_u64)
                    .unwrap_or(1) as usize;
                out.code(lang_of(file_path(v)), text, first);
            }
        }
    }
}

pub struct Write;

impl ToolRenderer for Write {
    fn names(&self) -> &'static [&'static str] {
        &["write"]
    }

    fn subject(&self, v: &ToolView) -> String {
        v.path(file_path(v))
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if v.metadata.get("exists") == Some(&Value::Bool(false)) {
            out.text("new file", Role::Success);
        }
        if let Some(content) = v.input_str("content") {
            out.code(lang_of(file_path(v)), content, 1);
        }
    }
}

pub struct Edit;

impl ToolRenderer for Edit {
    fn names(&self) -> &'static [&'static str] {
        &["edit", "multiedit"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = v.path(file_path(v));
        if let Some(fd) = v.metadata.get("filediff") {
            let a = fd.get("additions").and_then(Value::as_u64).unwrap_or(0);
            let d = fd.get("deletions").and_then(Value::as_u64).unwrap_or(0);
            s.push_str(&format!(" +{a} -{d}"));
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        let patch = v.meta_str("diff").or_else(|| {
            v.metadata
                .get("filediff")
                .and_then(|f| f.get("patch"))
                .and_then(Value::as_str)
        });
        match patch {
            Some(p) => out.diff(p, lang_of(file_path(v))),
            None => {
                // Before it ran: show what it means to change.
                if let (Some(old), Some(new)) = (v.input_str("oldString"), v.input_str("newString"))
                {
                    let patch: String = old
                        .lines()
                        .map(|l| format!("-{l}\n"))
                        .chain(new.lines().map(|l| format!("+{l}\n")))
                        .collect();
                    out.diff(&patch, lang_of(file_path(v)));
                }
            }
        }
    }
}

pub struct ApplyPatch;

/// One file of an `apply_patch` envelope.
struct PatchFile {
    action: &'static str,
    path: String,
    moved_to: Option<String>,
    lines: Vec<String>,
}

fn parse_patch(text: &str) -> Vec<PatchFile> {
    let mut files: Vec<PatchFile> = Vec::new();
    for line in text.lines() {
        let header = [
            ("*** Add File: ", "created"),
            ("*** Delete File: ", "deleted"),
            ("*** Update File: ", "patched"),
        ]
        .iter()
        .find_map(|(p, a)| line.strip_prefix(p).map(|rest| (*a, rest)));
        if let Some((action, path)) = header {
            files.push(PatchFile {
                action,
                path: path.trim().to_string(),
                moved_to: None,
                lines: Vec::new(),
            });
        } else if let Some(to) = line.strip_prefix("*** Move to: ") {
            if let Some(f) = files.last_mut() {
                f.moved_to = Some(to.trim().to_string());
                f.action = "moved";
            }
        } else if line.starts_with("*** ") {
            continue;
        } else if let Some(f) = files.last_mut() {
            f.lines.push(line.to_string());
        }
    }
    files
}

impl ToolRenderer for ApplyPatch {
    fn names(&self) -> &'static [&'static str] {
        &["apply_patch", "patch"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let files = parse_patch(
            v.input_str("patchText")
                .or_else(|| v.input_str("patch"))
                .unwrap_or(""),
        );
        match files.len() {
            0 => String::new(),
            1 => v.path(&files[0].path),
            n => format!("{n} files"),
        }
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        let text = v
            .input_str("patchText")
            .or_else(|| v.input_str("patch"))
            .unwrap_or("");
        for f in parse_patch(text) {
            let role = match f.action {
                "created" => Role::Success,
                "deleted" => Role::Error,
                _ => Role::Accent,
            };
            let name = match &f.moved_to {
                Some(to) => format!("{} → {}", v.path(&f.path), v.path(to)),
                None => v.path(&f.path),
            };
            out.line(Line::styled(
                format!("{} {name}", f.action),
                v.ctx.theme.style(role),
            ));
            if !f.lines.is_empty() {
                out.diff(
                    &f.lines.join("\n"),
                    lang_of(f.moved_to.as_deref().unwrap_or(&f.path)),
                );
            }
        }
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lang_of;

    #[test]
    fn the_language_is_the_extension_or_the_name() {
        assert_eq!(lang_of("/p/src/app.tsx"), "tsx");
        assert_eq!(lang_of("Cargo.toml"), "toml");
        assert_eq!(lang_of("/p/docker/Dockerfile"), "Dockerfile");
        assert_eq!(lang_of("/p.d/Makefile"), "Makefile");
        assert_eq!(lang_of(""), "");
    }
}
