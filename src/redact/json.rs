//! Redaction inside JSON: the secrets are looked for in the JSON's text
//! (gitleaks' rules are made to read source files, JSON among them), and
//! each is replaced inside the string that holds it; the JSON around is
//! kept byte for byte. A string with escapes is read, redacted as text
//! and written back escaped.

use std::borrow::Cow;

use crate::redact::{Redactor, Secret, Tally};

impl Redactor {
    /// `json` with the secrets of its strings redacted (borrowed when it
    /// holds none). Text that is not JSON is redacted as text.
    pub fn redact_json<'a>(&self, json: &'a str, tally: &mut Tally) -> Cow<'a, str> {
        if !self.may_hold(json) {
            return Cow::Borrowed(json);
        }
        let secrets = self.find(json);
        if secrets.is_empty() {
            return Cow::Borrowed(json);
        }
        let Some(strings) = strings(json) else {
            return self.redact(json, tally);
        };
        let mut out = String::with_capacity(json.len());
        let mut copied = 0;
        let mut next = 0;
        for s in &strings {
            // The secrets inside this string (one outside every string is
            // in no value: it is left).
            while next < secrets.len() && secrets[next].start < s.open {
                next += 1;
            }
            let first = next;
            while next < secrets.len() && secrets[next].end <= s.close {
                next += 1;
            }
            let inside = &secrets[first..next];
            if inside.is_empty() {
                continue;
            }
            out.push_str(&json[copied..s.open + 1]);
            let literal = &json[s.open..=s.close];
            match s.escaped {
                false => self.replace(
                    &json[s.open + 1..s.close],
                    s.open + 1,
                    inside,
                    &mut out,
                    tally,
                ),
                true => self.replace_escaped(literal, s.open, inside, &mut out, tally),
            }
            copied = s.close;
        }
        if copied == 0 {
            return Cow::Borrowed(json);
        }
        out.push_str(&json[copied..]);
        Cow::Owned(out)
    }

    /// `text` (which starts at `offset` of what `secrets` were found in)
    /// with each of `secrets` replaced, onto `out`.
    fn replace(
        &self,
        text: &str,
        offset: usize,
        secrets: &[Secret],
        out: &mut String,
        tally: &mut Tally,
    ) {
        let mut at = 0;
        for s in secrets {
            let id = self.rule_id(s.rule);
            out.push_str(&text[at..s.start - offset]);
            out.push_str("[REDACTED:");
            out.push_str(id);
            out.push(']');
            at = s.end - offset;
            *tally.entry(id.to_string()).or_default() += 1;
        }
        out.push_str(&text[at..]);
    }
}

impl Redactor {
    /// A string with escapes (`literal`, quotes and all, at `open`) with
    /// its secrets redacted, onto `out` without its quotes: read, redacted
    /// as text, written back. When the text shows none of what its JSON
    /// did (an escape hid it), the secrets are cut out of the JSON itself,
    /// and if that left no string the whole string goes.
    fn replace_escaped(
        &self,
        literal: &str,
        open: usize,
        secrets: &[Secret],
        out: &mut String,
        tally: &mut Tally,
    ) {
        let inner = &literal[1..literal.len() - 1];
        if let Ok(text) = serde_json::from_str::<String>(literal)
            && let Cow::Owned(redacted) = self.redact(&text, tally)
        {
            let quoted = serde_json::to_string(&redacted).unwrap_or_default();
            out.push_str(&quoted[1..quoted.len().saturating_sub(1)]);
            return;
        }
        let mut cut = String::new();
        self.replace(inner, open + 1, secrets, &mut cut, tally);
        if serde_json::from_str::<String>(&format!("\"{cut}\"")).is_ok() {
            out.push_str(&cut);
        } else {
            out.push_str("[REDACTED:");
            out.push_str(self.rule_id(secrets[0].rule));
            out.push(']');
        }
    }
}

/// One string of a JSON text: its quotes' places, and whether it holds an
/// escape.
struct Literal {
    open: usize,
    close: usize,
    escaped: bool,
}

/// Every string of `json`, in order; `None` when one is not closed (not
/// JSON).
fn strings(json: &str) -> Option<Vec<Literal>> {
    let bytes = json.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = memchr::memchr(b'"', &bytes[at..]).map(|i| at + i) {
        let mut escaped = false;
        let mut i = open + 1;
        let close = loop {
            match bytes.get(i)? {
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                b'"' => break i,
                _ => i += 1,
            }
        };
        out.push(Literal {
            open,
            close,
            escaped,
        });
        at = close + 1;
    }
    Some(out)
}
