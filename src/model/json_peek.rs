//! Reading a few leading string fields of a JSON object without parsing the
//! rest. Parts put `id`, `sessionID`, `messageID` and `type` first, so the
//! part's kind is known after a hundred bytes instead of a full scan; the
//! typed parse that follows validates the whole object anyway.
//! A field's value is found the same way (a tool call's input comes
//! before its output, most of the call's text).

/// The values of `keys` among the object's top-level fields, scanning only
/// until all were found. `None` when the text is not a simple object or one
/// of the wanted values is not a plain string (escapes included): the caller
/// then falls back to a full parse.
pub fn leading_strings<'a, const N: usize>(
    text: &'a str,
    keys: [&str; N],
) -> Option<[Option<&'a str>; N]> {
    let b = text.as_bytes();
    let mut out = [None; N];
    let mut found = 0;
    let mut i = object_start(b)?;
    loop {
        let Some((key, at)) = field_at(b, i)? else {
            return Some(out);
        };
        let end = match keys.iter().position(|k| k.as_bytes() == key) {
            Some(k) => {
                let (value, after) = plain_string(b, at)?;
                if out[k].is_none() {
                    found += 1;
                }
                out[k] = Some(std::str::from_utf8(value).ok()?);
                if found == N {
                    return Some(out);
                }
                after
            }
            None => skip_value(b, at)?,
        };
        match next_field(b, end)? {
            Some(next) => i = next,
            None => return Some(out),
        }
    }
}

/// The text from `key`'s value on, among the object's top-level fields,
/// read only until the key is found: the value is the start of it, and
/// what follows is not read (`value` reads one whole). `Some(None)` when
/// the object has no such field, `None` when the text is not a simple
/// object. The value is not checked: the caller parses it.
pub fn field_from<'a>(text: &'a str, key: &str) -> Option<Option<&'a str>> {
    let b = text.as_bytes();
    let mut i = object_start(b)?;
    loop {
        let Some((name, at)) = field_at(b, i)? else {
            return Some(None);
        };
        if name == key.as_bytes() {
            return Some(text.get(at..));
        }
        match next_field(b, skip_value(b, at)?)? {
            Some(next) => i = next,
            None => return Some(None),
        }
    }
}

/// The first value of `text` (not checked), without what follows it.
pub fn value(text: &str) -> Option<&str> {
    text.get(..skip_value(text.as_bytes(), 0)?)
}

/// Where an object's first field may start, after its `{`.
fn object_start(b: &[u8]) -> Option<usize> {
    let i = skip_ws(b, 0);
    (b.get(i) == Some(&b'{')).then_some(i + 1)
}

/// The field at `i` (where one may start): its key, a plain string, and
/// where its value starts; `Some(None)` at the object's end, `None` when
/// the text is not a simple object.
fn field_at(b: &[u8], i: usize) -> Option<Option<(&[u8], usize)>> {
    let i = skip_ws(b, i);
    match b.get(i)? {
        b'}' => return Some(None),
        b'"' => {}
        _ => return None,
    }
    let (key, after) = plain_string(b, i)?;
    let i = skip_ws(b, after);
    if b.get(i) != Some(&b':') {
        return None;
    }
    Some(Some((key, skip_ws(b, i + 1))))
}

/// After a value ending at `i`: where the next field may start,
/// `Some(None)` at the object's end.
fn next_field(b: &[u8], i: usize) -> Option<Option<usize>> {
    let i = skip_ws(b, i);
    match b.get(i)? {
        b',' => Some(Some(i + 1)),
        b'}' => Some(None),
        _ => None,
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// A string without escapes starting at `i` (the opening quote): its bytes
/// and the index after the closing quote.
fn plain_string(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let rest = &b[i + 1..];
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[end] == b'\\' {
        return None;
    }
    Some((&rest[..end], i + 1 + end + 1))
}

/// Skip any value starting at `i`; returns the index after it.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            ) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let at = memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        j += at;
        if b[j] == b'\\' {
            j += 2;
        } else {
            return Some(j + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{field_from, leading_strings, value};

    #[test]
    fn a_field_is_found_and_what_follows_it_is_not_read() {
        // Cut short after `input`: its value is whole, the rest unread.
        let text = r#"{"a": {"x": ["}", "\"{"]}, "state" : {"input":{"c":"ls \"x\""},"output":"#;
        let state = field_from(text, "state").unwrap().unwrap();
        let input = field_from(state, "input").unwrap().unwrap();
        assert_eq!(value(input), Some(r#"{"c":"ls \"x\""}"#));
        // A field of the object, not of one inside it.
        let state = r#"{"status":"done","metadata":{"title":"x"},"input":12 },"title":"t"}"#;
        assert_eq!(field_from(state, "title"), Some(None));
        assert_eq!(
            field_from(state, "input").unwrap().map(value),
            Some(Some("12"))
        );
        assert_eq!(field_from("[1]", "input"), None);
        assert_eq!(field_from(r#"{"a" 1}"#, "input"), None);
    }

    const KEYS: [&str; 2] = ["id", "type"];

    #[test]
    fn finds_fields_after_any_kind_of_value() {
        let text = r#" { "a": {"x": ["}", "\"{"]}, "n": -1.5e3, "b": true, "id" : "prt_1", "s": "q\\", "type":"tool", "z": 1}"#;
        assert_eq!(
            leading_strings(text, KEYS),
            Some([Some("prt_1"), Some("tool")])
        );
    }

    #[test]
    fn missing_fields_are_none_and_odd_values_fall_back() {
        assert_eq!(
            leading_strings(r#"{"id":"p"}"#, KEYS),
            Some([Some("p"), None])
        );
        assert_eq!(leading_strings(r#"{}"#, KEYS), Some([None, None]));
        assert_eq!(leading_strings(r#"{"id":"p\n"}"#, KEYS), None);
        assert_eq!(leading_strings(r#"{"id":3}"#, KEYS), None);
        assert_eq!(leading_strings(r#"[1]"#, KEYS), None);
        assert_eq!(leading_strings(r#"{"id":"p", "x": [1, "#, KEYS), None);
    }
}
