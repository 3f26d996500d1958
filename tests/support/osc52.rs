//! What a copy by OSC 52 carried: the payloads in a terminal's raw output.

/// The payloads of the OSC 52 sequences in raw terminal output, decoded.
pub fn osc52_payloads(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    text.split("\u{1b}]52;c;")
        .skip(1)
        .map(|rest| {
            let end = rest.find(['\u{7}', '\u{1b}']).expect("a terminated OSC 52");
            String::from_utf8(decode_base64(&rest[..end])).unwrap()
        })
        .collect()
}

fn decode_base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        other => panic!("not base64: {:?}", other as char),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &b) in chunk.iter().enumerate() {
            n |= u32::from(b) << (18 - 6 * i);
        }
        for i in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}
