//! Finding things: `glob`, `grep`, `list`, `webfetch`, `websearch`.

use serde_json::Value;

use crate::render::tools::{Body, ToolRenderer, ToolView};

fn count_lines(s: &str) -> usize {
    s.lines().filter(|l| !l.trim().is_empty()).count()
}

fn size(n: usize) -> String {
    match n {
        0..=1023 => format!("{n} B"),
        1024..=1_048_575 => format!("{:.1} KB", n as f64 / 1024.0),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
}

pub struct Glob;

impl ToolRenderer for Glob {
    fn names(&self) -> &'static [&'static str] {
        &["glob"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = v.input_str("pattern").unwrap_or("").to_string();
        if let Some(p) = v.input_str("path") {
            s.push_str(&format!(" in {}", v.path(p)));
        }
        if let Some(n) = v.metadata.get("count").and_then(Value::as_u64) {
            s.push_str(&format!(" · {n} files"));
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

pub struct Grep;

impl ToolRenderer for Grep {
    fn names(&self) -> &'static [&'static str] {
        &["grep"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = format!("/{}/", v.input_str("pattern").unwrap_or(""));
        if let Some(i) = v.input_str("include") {
            s.push_str(&format!(" {i}"));
        }
        if let Some(p) = v.input_str("path") {
            s.push_str(&format!(" in {}", v.path(p)));
        }
        if let Some(n) = v.metadata.get("matches").and_then(Value::as_u64) {
            s.push_str(&format!(" · {n} matches"));
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

pub struct List;

impl ToolRenderer for List {
    fn names(&self) -> &'static [&'static str] {
        &["list", "ls"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let path = v
            .input_str("path")
            .map(|p| v.path(p))
            .unwrap_or_else(|| ".".into());
        match v.output() {
            Some(o) => format!("{path} · {} entries", count_lines(o)),
            None => path,
        }
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

pub struct WebFetch;

impl ToolRenderer for WebFetch {
    fn names(&self) -> &'static [&'static str] {
        &["webfetch"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = v.input_str("url").unwrap_or("").to_string();
        if let Some(o) = v.output() {
            s.push_str(&format!(" · {}", size(o.len())));
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(f) = v.input_str("format") {
            out.kv("format", f);
        }
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

pub struct WebSearch;

impl ToolRenderer for WebSearch {
    fn names(&self) -> &'static [&'static str] {
        &["websearch", "codesearch"]
    }

    fn subject(&self, v: &ToolView) -> String {
        let mut s = v.input_str("query").unwrap_or("").to_string();
        if let Some(o) = v.output() {
            s.push_str(&format!(" · {}", size(o.len())));
        }
        s
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}
