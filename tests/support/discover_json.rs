//! Reading what `ocview discover --json` prints: the list, one server in
//! it, and how it was found.

use std::process::Output;

use serde_json::Value;

/// The printed list (panics, showing stderr, if it is not a JSON array).
pub fn listed(out: &Output) -> Vec<Value> {
    let text = String::from_utf8_lossy(&out.stdout);
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(list)) => list,
        _ => panic!(
            "not a JSON array: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The entry for `url`.
pub fn entry<'a>(list: &'a [Value], url: &str) -> Option<&'a Value> {
    list.iter().find(|s| s["url"] == url)
}

/// How the server was found ("local", "mdns", "config"…).
pub fn found_by(entry: &Value) -> Vec<String> {
    entry["found_by"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v["how"].as_str().unwrap_or("").to_string())
        .collect()
}
