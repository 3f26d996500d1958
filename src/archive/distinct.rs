//! Texts of words each once, for the engines' position-less indexes: a
//! document that keeps only which words it holds is as well made of each
//! word once, and the engine's tokenizer then reads a fraction of the text.
//! Each engine cuts the text only where its own tokenizer would
//! (`sqlite::document`, `postgres::blocks_search`).

use std::collections::HashMap;
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
        let from = self.out.len();
        if from > 0 {
            self.out.push(b' ');
        }
        let first = self.out.len();
        self.out.extend_from_slice(piece);
        self.out[first..].make_ascii_lowercase();
        let hash = crate::archive::encode::quick_hash(&self.out[first..]);
        let at = (first as u32, (self.out.len() - first) as u32);
        match self.seen.get(&hash) {
            Some(&(s, n)) if self.out[s as usize..(s + n) as usize] == self.out[first..] => {
                self.out.truncate(from);
                false
            }
            // Another piece of the same hash stays where it is: a word
            // twice costs nothing, one lost would be a miss.
            Some(_) => true,
            None => {
                self.seen.insert(hash, at);
                true
            }
        }
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The pieces, spaced.
    pub fn text(self) -> String {
        // Whole pieces of valid UTF-8, each cut at an ASCII byte.
        String::from_utf8(self.out).unwrap_or_default()
    }

    /// Each piece of `text` between bytes that `cut` says part words
    /// (ASCII bytes only: a character past ASCII is never cut).
    pub fn push_pieces(&mut self, text: &str, cut: impl Fn(u8) -> bool) {
        for piece in pieces(text, cut) {
            self.push(piece);
        }
    }
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
    fn characters_past_ascii_are_never_cut() {
        let mut d = Distinct::default();
        d.push_pieces("东京 Ünïcode·dot", |b| !b.is_ascii_alphanumeric());
        assert_eq!(d.text(), "东京 Ünïcode·dot");
    }
}
