//! Reading a few leading string fields of a JSON object without parsing the
//! rest. Parts put `id`, `sessionID`, `messageID` and `type` first, so the
//! part's kind is known after a hundred bytes instead of a full scan; the
//! typed parse that follows validates the whole object anyway.

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
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            b'}' => return Some(out),
            b'"' => {}
            _ => return None,
        }
        let (key, after) = plain_string(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let wanted = keys.iter().position(|k| k.as_bytes() == key);
        match wanted {
            Some(k) => {
                let (value, after) = plain_string(b, i)?;
                if out[k].is_none() {
                    found += 1;
                }
                out[k] = Some(std::str::from_utf8(value).ok()?);
                i = after;
                if found == N {
                    return Some(out);
                }
            }
            None => i = skip_value(b, i)?,
        }
        i = skip_ws(b, i);
        match b.get(i)? {
            b',' => i += 1,
            b'}' => return Some(out),
            _ => return None,
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
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            b'}' => return Some(None),
            b'"' => {}
            _ => return None,
        }
        let (name, after) = plain_string(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if name == key.as_bytes() {
            return Some(text.get(i..));
        }
        i = skip_ws(b, skip_value(b, i)?);
        match b.get(i)? {
            b',' => i += 1,
            b'}' => return Some(None),
            _ => return None,
        }
    }
}

/// The first value of `text` (not checked), without what follows it.
pub fn value(text: &str) -> Option<&str> {
    text.get(..skip_value(text.as_bytes(), 0)?)
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
