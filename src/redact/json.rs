//! Redaction inside JSON: each string of the text (keys and values) is
//! redacted as text of its own, and the JSON around is kept byte for byte.
//! A string with escapes is read, redacted and written back escaped; one
//! without is redacted where it stands (what replaces a secret holds no
//! quote nor backslash).

use std::borrow::Cow;

use crate::redact::{Redactor, Tally};

impl Redactor {
    /// `json` with the secrets of its strings redacted (borrowed when it
    /// holds none). Text that is not JSON is redacted as text.
    pub fn redact_json<'a>(&self, json: &'a str, tally: &mut Tally) -> Cow<'a, str> {
        if !self.may_hold(json) {
            return Cow::Borrowed(json);
        }
        let bytes = json.as_bytes();
        let mut out: Option<String> = None;
        let mut copied = 0;
        let mut at = 0;
        while let Some(open) = memchr::memchr(b'"', &bytes[at..]).map(|i| at + i) {
            let Some((close, escaped)) = string_end(bytes, open + 1) else {
                // An unclosed string: not JSON as far as here.
                return self.redact(json, tally);
            };
            let inner = &json[open + 1..close];
            let redacted: Option<String> = if escaped {
                match serde_json::from_str::<String>(&json[open..=close]) {
                    Ok(text) => match self.redact(&text, tally) {
                        Cow::Owned(r) => serde_json::to_string(&r)
                            .ok()
                            .map(|q| q[1..q.len() - 1].to_string()),
                        Cow::Borrowed(_) => None,
                    },
                    Err(_) => None,
                }
            } else {
                match self.redact(inner, tally) {
                    Cow::Owned(r) => Some(r),
                    Cow::Borrowed(_) => None,
                }
            };
            if let Some(r) = redacted {
                let o = out.get_or_insert_with(|| String::with_capacity(json.len()));
                o.push_str(&json[copied..open + 1]);
                o.push_str(&r);
                copied = close;
            }
            at = close + 1;
        }
        match out {
            Some(mut o) => {
                o.push_str(&json[copied..]);
                Cow::Owned(o)
            }
            None => Cow::Borrowed(json),
        }
    }
}

/// Where the string whose text starts at `from` ends (its closing quote),
/// and whether it holds an escape.
fn string_end(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                escaped = true;
                i += 2;
            }
            b'"' => return Some((i, escaped)),
            _ => i += 1,
        }
    }
    None
}
