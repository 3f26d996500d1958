//! Texts of words each once, for the engines' position-less indexes: a
//! document that keeps only which words it holds is as well made of each
//! word once, and the engine's tokenizer then reads a fraction of the text.
//! Each engine cuts the text only where its own tokenizer would
//! (`sqlite::document`, `postgres::blocks_search`).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};

/// Pieces of text, spaced, each once: pieces equal but for the case of
/// their ASCII letters are one (both engines fold it).
#[derive(Default)]
pub struct Distinct {
    out: Vec<u8>,
    /// A piece's hash → where its first copy is in `out`.
    seen: HashMap<u64, (u32, u32), BuildHasherDefault<AsIs>>,
}

impl Distinct {
    /// Add `piece` (whole characters) unless it is in already; whether
    /// it was added.
    pub fn push(&mut self, piece: &[u8]) -> bool {
        // Most pieces are short words said before: folded on the stack,
        // they are looked up without being written first.
        let mut small = [0u8; 32];
        let mut long = Vec::new();
        let folded: &mut [u8] = if piece.len() <= small.len() {
            &mut small[..piece.len()]
        } else {
            long.resize(piece.len(), 0);
            &mut long
        };
        folded.copy_from_slice(piece);
        folded.make_ascii_lowercase();
        let hash = crate::archive::encode::quick_hash(folded);
        match self.seen.entry(hash) {
            Entry::Occupied(o) => {
                let (s, n) = *o.get();
                if self.out[s as usize..(s + n) as usize] == *folded {
                    return false;
                }
                // Another piece of the same hash stays where it is: a
                // word twice costs nothing, one lost would be a miss.
                Self::append(&mut self.out, folded);
            }
            Entry::Vacant(v) => {
                v.insert(Self::append(&mut self.out, folded));
            }
        }
        true
    }

    /// `piece` after the others, spaced; where it is.
    fn append(out: &mut Vec<u8>, piece: &[u8]) -> (u32, u32) {
        if !out.is_empty() {
            out.push(b' ');
        }
        let first = out.len();
        out.extend_from_slice(piece);
        (first as u32, piece.len() as u32)
    }

    /// The pieces so far, spaced; then empty again for another text, its
    /// table kept.
    pub fn take_text(&mut self) -> String {
        // A table a long text grew is let go: clearing it would cost
        // each short text after it as much.
        if self.seen.capacity() > 1 << 14 {
            self.seen = HashMap::default();
        } else {
            self.seen.clear();
        }
        // Whole pieces of valid UTF-8, each cut at an ASCII byte.
        String::from_utf8(std::mem::take(&mut self.out)).unwrap_or_default()
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The pieces, spaced.
    pub fn text(mut self) -> String {
        self.take_text()
    }

    /// Each piece of `text` between bytes that `cut` says part words
    /// (ASCII bytes only: a character past ASCII is never cut).
    pub fn push_pieces(&mut self, text: &str, cut: impl Fn(u8) -> bool) {
        for piece in pieces(text, cut) {
            self.push(piece);
        }
    }
}

/// A position-less index's document of `text`: its pieces (cut where
/// `cut` says, ASCII letters in small case) each once, spaced, then the
/// more words of its pieces (`words::push_more_words`) each once. Those
/// are looked for once per piece as it is written, not as it is folded:
/// `parsejson` has none, `parseJson` has `parse` and `json`. A run of
/// letters and digits never spans a cut (each engine's cut is at
/// characters that are neither), so the more words of its pieces are
/// those of the whole text.
pub fn document(text: &str, cut: impl Fn(u8) -> bool + Copy) -> String {
    thread_local! {
        // Its table grown once, not for each part.
        static PIECES: std::cell::RefCell<Distinct> = std::cell::RefCell::default();
    }
    PIECES.with_borrow_mut(|d| document_in(d, text, cut))
}

fn document_in(d: &mut Distinct, text: &str, cut: impl Fn(u8) -> bool + Copy) -> String {
    use crate::archive::words::{may_have_more_words, push_more_words};
    let mut more = String::new();
    let mut looked: std::collections::HashSet<&[u8], BuildHasherDefault<Quick>> =
        std::collections::HashSet::default();
    for piece in pieces(text, cut) {
        d.push(piece);
        if may_have_more_words(piece) && looked.insert(piece) {
            // Whole characters, cut at ASCII bytes.
            push_more_words(std::str::from_utf8(piece).unwrap_or_default(), &mut more);
        }
    }
    d.push_pieces(&more, cut);
    d.take_text()
}

/// The pieces of `text` between bytes that `cut` says part words (ASCII
/// bytes only: a character past ASCII is never cut), each whole
/// characters.
pub fn pieces(text: &str, cut: impl Fn(u8) -> bool) -> impl Iterator<Item = &[u8]> {
    let bytes = text.as_bytes();
    let keeps = move |b: u8| !b.is_ascii() || !cut(b);
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + bytes[at..].iter().position(|&b| keeps(b))?;
        let end = bytes[start..]
            .iter()
            .position(|&b| !keeps(b))
            .map_or(bytes.len(), |n| start + n);
        at = end;
        Some(&bytes[start..end])
    })
}

/// Pieces hashed eight bytes at a time (`encode::quick_hash`), not by
/// SipHash: a table of a text's own pieces needs no defence.
#[derive(Default)]
struct Quick(u64);

impl Hasher for Quick {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.rotate_left(5) ^ crate::archive::encode::quick_hash(bytes);
    }
}

/// The pieces' hashes are already hashes.
#[derive(Default)]
struct AsIs(u64);

impl Hasher for AsIs {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_of_distinct_words_are_each_kept_once() {
        let mut d = Distinct::default();
        let text: String = (0..5_000).map(|n| format!("w{n} W{n} ")).collect();
        d.push_pieces(&text, |b| b == b' ');
        let text = d.text();
        let mut seen = std::collections::HashSet::new();
        for piece in text.split(' ') {
            assert!(seen.insert(piece.to_string()), "{piece} twice");
        }
        assert_eq!(seen.len(), 5_000);
    }

    #[test]
    fn a_table_used_again_starts_empty_and_long_pieces_are_kept_once() {
        let mut d = Distinct::default();
        let long = "Supercalifragilistic_expialidocious_and_then_some";
        d.push_pieces(&format!("a b {long} A {}", long.to_uppercase()), |b| {
            b == b' '
        });
        assert_eq!(d.take_text(), format!("a b {}", long.to_lowercase()));
        d.push_pieces("b c B", |b| b == b' ');
        assert_eq!(d.take_text(), "b c");
    }

    #[test]
    fn characters_past_ascii_are_never_cut() {
        let mut d = Distinct::default();
        d.push_pieces("东京 Ünïcode·dot", |b| !b.is_ascii_alphanumeric());
        assert_eq!(d.text(), "东京 Ünïcode·dot");
    }
}
