//! `skill`, and the card for every other tool (including `invalid`): input
//! as key=value, then the output.

use serde_json::Value;

use crate::render::tools::{Body, ToolRenderer, ToolView};

pub struct Skill;

impl ToolRenderer for Skill {
    fn names(&self) -> &'static [&'static str] {
        &["skill"]
    }

    fn subject(&self, v: &ToolView) -> String {
        v.input_str("name").unwrap_or("").to_string()
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}

pub struct Generic;

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => {
            let s = other.to_string();
            crate::render::wrap::truncate(&s, 200)
        }
    }
}

impl ToolRenderer for Generic {
    fn names(&self) -> &'static [&'static str] {
        &[]
    }

    fn subject(&self, v: &ToolView) -> String {
        match &v.input {
            Value::Object(map) => map
                .iter()
                .find_map(|(_, val)| {
                    val.as_str()
                        .map(|s| s.lines().next().unwrap_or("").to_string())
                })
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn body(&self, v: &ToolView, out: &mut Body) {
        if let Value::Object(map) = &v.input {
            for (k, val) in map {
                out.kv(&format!("{k}="), &scalar(val));
            }
        }
        if let Some(o) = v.output() {
            out.output(o);
        }
    }
}
