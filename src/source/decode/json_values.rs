//! Cutting a stream of JSON text into its values, line by line, in
//! constant memory: pretty-printed objects one after another (what `jq .`
//! writes), a JSON array whose elements are records (editor plugins'
//! recordings, `GET /session/:id/message`), or several of either. Only one
//! value is held at a time, however long the array.
//!
//! The cutter only counts brackets outside strings; each value is then
//! decoded on its own, so one bad element costs that element only.

/// One piece of the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// A whole value: an element of a top-level array, or a top-level
    /// object. `line` is the line it starts on.
    Value {
        line: u64,
        text: Vec<u8>,
        in_array: bool,
    },
    /// Bytes that cannot start a record (a bare word, a number, a stray
    /// bracket), reported once per line.
    Junk { line: u64, start: String },
    /// A value longer than the limit: skipped, not held.
    TooLong { line: u64 },
    /// The stream ended inside a value.
    Truncated { line: u64 },
}

#[derive(Debug)]
pub struct ValueCutter {
    /// The value being read, when `depth > 0`.
    text: Vec<u8>,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// Inside a top-level `[`: its elements are the values.
    in_array: bool,
    start_line: u64,
    oversized: bool,
    /// The last line junk was reported on.
    junk_line: u64,
    max: usize,
}

impl ValueCutter {
    pub fn new(max: usize) -> Self {
        ValueCutter {
            text: Vec::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            in_array: false,
            start_line: 0,
            oversized: false,
            junk_line: 0,
            max,
        }
    }

    /// Whether any value was begun and not finished.
    pub fn in_value(&self) -> bool {
        self.depth > 0
    }

    /// The line the value being read began on, if one is.
    pub fn value_start(&self) -> Option<u64> {
        self.in_value().then_some(self.start_line)
    }

    /// Drop the value being read (it was not one).
    pub fn reset(&mut self) {
        *self = ValueCutter::new(self.max);
    }

    /// Feed one line (without its ending); finished pieces go to `out`.
    pub fn push_line(&mut self, line: &[u8], number: u64, out: &mut Vec<Piece>) {
        let mut i = 0;
        while i < line.len() {
            if self.depth == 0 {
                i = self.between_values(line, i, number, out);
                continue;
            }
            // Inside a value: copy up to where it ends, or the whole line.
            let from = i;
            let mut end = None;
            while i < line.len() {
                let b = line[i];
                i += 1;
                if self.in_string {
                    if self.escaped {
                        self.escaped = false;
                    } else if b == b'\\' {
                        self.escaped = true;
                    } else if b == b'"' {
                        self.in_string = false;
                    }
                    continue;
                }
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            self.keep(&line[from..i]);
            if end.is_some() {
                self.finish_value(out);
            }
        }
        if self.depth > 0 {
            // Keep the line structure: serde's line numbers then count
            // from the value's first line.
            self.keep(b"\n");
        }
    }

    /// Outside any value: separators, the array's own brackets, the start
    /// of the next value, or junk. Returns where to go on from.
    fn between_values(
        &mut self,
        line: &[u8],
        i: usize,
        number: u64,
        out: &mut Vec<Piece>,
    ) -> usize {
        match line[i] {
            b if b.is_ascii_whitespace() => i + 1,
            b',' if self.in_array => i + 1,
            b']' if self.in_array => {
                self.in_array = false;
                i + 1
            }
            b'[' if !self.in_array => {
                self.in_array = true;
                i + 1
            }
            b'{' | b'[' => {
                self.depth = 1;
                self.start_line = number;
                self.text.clear();
                self.oversized = false;
                self.in_string = false;
                self.escaped = false;
                self.keep(&line[i..i + 1]);
                i + 1
            }
            _ => {
                // Junk up to the next thing that could start or end a value.
                let end = line[i..]
                    .iter()
                    .position(|&b| matches!(b, b',' | b'{' | b'[' | b']'))
                    .map_or(line.len(), |n| (i + n).max(i + 1));
                if self.junk_line != number {
                    self.junk_line = number;
                    let start = String::from_utf8_lossy(&line[i..end.min(i + 24)]).into_owned();
                    out.push(Piece::Junk {
                        line: number,
                        start,
                    });
                }
                end
            }
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.oversized {
            return;
        }
        if self.text.len() + bytes.len() > self.max {
            self.oversized = true;
            self.text = Vec::new();
        } else {
            self.text.extend_from_slice(bytes);
        }
    }

    fn finish_value(&mut self, out: &mut Vec<Piece>) {
        let line = self.start_line;
        if std::mem::take(&mut self.oversized) {
            out.push(Piece::TooLong { line });
        } else {
            out.push(Piece::Value {
                line,
                text: std::mem::take(&mut self.text),
                in_array: self.in_array,
            });
        }
    }

    /// The end of the stream: a value left open is reported as cut short.
    pub fn finish(&mut self, out: &mut Vec<Piece>) {
        if self.depth == 0 {
            return;
        }
        self.depth = 0;
        let line = self.start_line;
        if std::mem::take(&mut self.oversized) {
            out.push(Piece::TooLong { line });
        } else {
            self.text = Vec::new();
            out.push(Piece::Truncated { line });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, max: usize) -> Vec<Piece> {
        let mut c = ValueCutter::new(max);
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            c.push_line(line.as_bytes(), n as u64 + 1, &mut out);
        }
        c.finish(&mut out);
        out
    }

    fn values(pieces: &[Piece]) -> Vec<(u64, String, bool)> {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Value {
                    line,
                    text,
                    in_array,
                } => Some((*line, String::from_utf8_lossy(text).into_owned(), *in_array)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn cuts_pretty_objects_and_array_elements() {
        let text = "{\n  \"a\": \"}{\\\"\",\n  \"b\": [1]\n}\n{\"c\":{}}\n[\n {\"d\":1},\n {\"e\":\n 2}\n]\n";
        let got = values(&cut(text, 1 << 20));
        assert_eq!(
            got,
            vec![
                (1, "{\n  \"a\": \"}{\\\"\",\n  \"b\": [1]\n}".into(), false),
                (5, "{\"c\":{}}".into(), false),
                (7, "{\"d\":1}".into(), true),
                (8, "{\"e\":\n 2}".into(), true),
            ]
        );
    }

    #[test]
    fn reports_junk_long_and_cut_values() {
        let got = cut(
            "[1, {\"a\":1}, true]\nhello\n{\"big\":\"0123456789\"}\n{\"cut\":",
            12,
        );
        assert_eq!(
            got,
            vec![
                Piece::Junk {
                    line: 1,
                    start: "1".into()
                },
                Piece::Value {
                    line: 1,
                    text: b"{\"a\":1}".to_vec(),
                    in_array: true
                },
                Piece::Junk {
                    line: 2,
                    start: "hello".into()
                },
                Piece::TooLong { line: 3 },
                Piece::Truncated { line: 4 },
            ]
        );
    }
}
