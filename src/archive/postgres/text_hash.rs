//! PostgreSQL's `hashtextextended(text, 0)`, made by the writer: the hash a
//! part's or message's row keeps to tell its states apart (`copy`). Made
//! on the server, it needed each row's whole JSON sent, staged and read
//! back, even where the row keeps only its place in the log. The server's
//! function is Bob Jenkins' lookup3 (`hash_bytes_extended` in its
//! `src/common/hashfn.c`): the text in 12-byte rounds of three
//! little-endian words, the last round padded with zeros and the lowest
//! byte of its third word left out, then a final mix; `b` and `c` are the
//! result. A test checks it against the server on texts of every length
//! up to a few rounds and of any characters.

/// `hashtextextended(text, 0)` for a text under 4 GB, as PostgreSQL gives
/// it (its `uint64` as a `bigint`).
pub fn hash_text(text: &str) -> i64 {
    let bytes = text.as_bytes();
    let start = 0x9e37_79b9u32
        .wrapping_add(bytes.len() as u32)
        .wrapping_add(3_923_095);
    let mut s = State {
        a: start,
        b: start,
        c: start,
    };
    let mut rounds = bytes.chunks_exact(12);
    for round in &mut rounds {
        s.add(word(&round[0..4]), word(&round[4..8]), word(&round[8..12]));
        s.mix();
    }
    let mut last = [0u8; 12];
    last[..rounds.remainder().len()].copy_from_slice(rounds.remainder());
    // At most 11 bytes: the third word's lowest byte stays the length's.
    s.add(
        word(&last[0..4]),
        word(&last[4..8]),
        word(&last[8..12]) << 8,
    );
    s.finish();
    ((u64::from(s.b) << 32) | u64::from(s.c)) as i64
}

fn word(four: &[u8]) -> u32 {
    u32::from_le_bytes([four[0], four[1], four[2], four[3]])
}

struct State {
    a: u32,
    b: u32,
    c: u32,
}

impl State {
    fn add(&mut self, a: u32, b: u32, c: u32) {
        self.a = self.a.wrapping_add(a);
        self.b = self.b.wrapping_add(b);
        self.c = self.c.wrapping_add(c);
    }

    /// One round's mix, reversible.
    fn mix(&mut self) {
        let State { a, b, c } = self;
        step(a, c, b, 4);
        step(b, a, c, 6);
        step(c, b, a, 8);
        step(a, c, b, 16);
        step(b, a, c, 19);
        step(c, b, a, 4);
    }

    /// The last mix, into `c` (and `b`).
    fn finish(&mut self) {
        let State { a, b, c } = self;
        last_step(c, *b, 14);
        last_step(a, *c, 11);
        last_step(b, *a, 25);
        last_step(c, *b, 16);
        last_step(a, *c, 4);
        last_step(b, *a, 14);
        last_step(c, *b, 24);
    }
}

/// A step of `mix`: `x` takes `y` out and its bits rotated in; `y` takes `z`.
fn step(x: &mut u32, y: &mut u32, z: &mut u32, by: u32) {
    *x = x.wrapping_sub(*y) ^ y.rotate_left(by);
    *y = y.wrapping_add(*z);
}

/// A step of `finish`: `x` takes in `y`, then its bits rotated out.
fn last_step(x: &mut u32, y: u32, by: u32) {
    *x = (*x ^ y).wrapping_sub(y.rotate_left(by));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_hash_as_the_server_hashed_them() {
        // `SELECT hashtextextended(t, 0)` on PostgreSQL 15 (the e2e test
        // checks many more against a running server).
        assert_eq!(hash_text(""), -6_939_563_903_564_495_251);
        assert_eq!(hash_text("a"), 3_591_986_179_850_072_241);
        assert_eq!(
            hash_text("hello world, twelve+"),
            -7_693_228_551_977_492_401
        );
    }
}
