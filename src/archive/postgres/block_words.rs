//! Whether an event of the log (or a part's text) may hold a query's words,
//! judged on its JSON before PostgreSQL is asked: the pieces of the words
//! are looked for where a word of the text may stand. Only ASCII is judged;
//! anything else is left to PostgreSQL, so no hit is ever passed over.

use crate::archive::query::Query;

/// One piece of a query's words, lowercased, and whether it is matched as
/// the start of a word (the last, while typing) or as a whole word.
pub(in crate::archive) struct Piece {
    text: String,
    prefix: bool,
}

/// The pieces of the query's words (as `Query::tsquery` makes them): a
/// part that has the words has each piece as a word of its text.
pub(in crate::archive) fn pieces(q: &Query) -> Vec<Piece> {
    let mut out = Vec::new();
    for term in q.terms() {
        let n = term.pieces.len();
        for (j, p) in term.pieces.iter().enumerate() {
            out.push(Piece {
                text: p.to_lowercase(),
                prefix: term.prefix && j + 1 == n,
            });
        }
    }
    // The longest first: most often the rarest, it rules an event out.
    out.sort_by_key(|p| std::cmp::Reverse(p.text.len()));
    out
}

/// The events of a decompressed block (`blocks::spans`) that may hold every
/// piece as a word (`may_hold`), by their index in the block. Each piece is
/// looked for once in the whole block, not once per event: most events
/// hold none of a query's rarer words.
pub(in crate::archive) fn events_holding(
    raw: &[u8],
    pieces: &[Piece],
) -> Result<Vec<(usize, String)>, String> {
    let spans = crate::archive::blocks::spans(raw)?;
    let event = |i: usize| crate::archive::blocks::event_at(raw, spans[i].clone());
    if pieces.iter().any(|p| !p.text.is_ascii()) {
        return (0..spans.len()).map(|i| Ok((i, event(i)?))).collect();
    }
    // Events beyond ASCII, or with escapes that may stand for it, are
    // left to PostgreSQL; the rest need every piece.
    let escape = memchr::memmem::Finder::new(b"\\u");
    let mut held: Vec<usize> = spans
        .iter()
        .map(|s| {
            let json = &raw[s.clone()];
            match json.is_ascii() && escape.find(json).is_none() {
                true => 0,
                false => pieces.len(),
            }
        })
        .collect();
    let folded = raw.to_ascii_lowercase();
    for piece in pieces {
        let mut last_event = usize::MAX;
        for at in memchr::memmem::find_iter(&folded, piece.text.as_bytes()) {
            let i = spans.partition_point(|s| s.end <= at);
            let Some(span) = spans.get(i) else { break };
            let inside = at >= span.start && at + piece.text.len() <= span.end;
            if i == last_event || !inside || held[i] >= pieces.len() {
                continue;
            }
            if is_word_at(
                &folded[span.clone()],
                &raw[span.clone()],
                at - span.start,
                piece,
            ) {
                held[i] += 1;
                last_event = i;
            }
        }
    }
    held.iter()
        .enumerate()
        .filter(|(_, n)| **n >= pieces.len())
        .map(|(i, _)| Ok((i, event(i)?)))
        .collect()
}

/// Whether an event's JSON (or a part's text) may hold every piece as a
/// word. Only ASCII is judged (its case is folded the same everywhere): a JSON with other
/// characters, or with escapes that may stand for them, or a piece with
/// them, may hold anything and is checked whole.
pub(in crate::archive) fn may_hold(event: &str, pieces: &[Piece]) -> bool {
    if !event.is_ascii() || event.contains("\\u") || pieces.iter().any(|p| !p.text.is_ascii()) {
        return true;
    }
    let folded = event.to_ascii_lowercase();
    pieces
        .iter()
        .all(|p| holds_word(&folded, event.as_bytes(), p))
}

/// Whether `json` (ASCII, lowercased from `original`) has `piece` as a
/// word (`is_word_at`).
fn holds_word(json: &str, original: &[u8], piece: &Piece) -> bool {
    json.match_indices(piece.text.as_str())
        .any(|(at, _)| is_word_at(json.as_bytes(), original, at, piece))
}

/// Whether `piece`, found at `at` of `json` (ASCII, lowercased from
/// `original`), stands where a word of its text may be: not inside a run
/// of letters and digits, where `\n`, `\t` and the like count as a
/// boundary, and so does a camelCase one (`super::super::words`).
fn is_word_at(json: &[u8], original: &[u8], at: usize, piece: &Piece) -> bool {
    let before = match at {
        0 => true,
        _ => {
            let c = json[at - 1];
            !c.is_ascii_alphanumeric()
                || (at >= 2 && json[at - 2] == b'\\' && b"ntrbf".contains(&c))
                || camel_boundary(original, at)
        }
    };
    let end = at + piece.text.len();
    let after = piece.prefix
        || end == json.len()
        || !json[end].is_ascii_alphanumeric()
        || camel_boundary(original, end);
    before && after
}

/// Whether a camelCase word's part starts at `at` of `text` (as
/// `words::camel_parts` splits): a capital after a small letter or a
/// digit, or the last capital of a run of them before a small letter.
fn camel_boundary(text: &[u8], at: usize) -> bool {
    let (Some(&c), Some(&prev)) = (text.get(at), at.checked_sub(1).and_then(|p| text.get(p)))
    else {
        return false;
    };
    let next_small = text.get(at + 1).is_some_and(u8::is_ascii_lowercase);
    c.is_ascii_uppercase()
        && (prev.is_ascii_lowercase()
            || prev.is_ascii_digit()
            || (prev.is_ascii_uppercase() && next_small))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(event: &str, text: &str, prefix: bool) -> bool {
        let mut q = Query::new(text);
        q.prefix = prefix;
        may_hold(event, &pieces(&q))
    }

    #[test]
    fn a_word_is_looked_for_as_a_word_of_the_text() {
        let event = r#"{"part":{"text":"So the Invoice\nwas late; see src/billing.rs"}}"#;
        assert!(holds(event, "so", false));
        assert!(holds(event, "invoice", false));
        // After an escaped newline: a word of its own in the text.
        assert!(holds(event, "was", false));
        assert!(holds(event, "billing.rs", false));
        assert!(!holds(event, "voice", false), "inside a word");
        assert!(!holds(event, "invo", false));
        assert!(
            holds(event, "invo", true),
            "the start of a word, while typing"
        );
        assert!(
            !holds(event, "invoice nowhere", false),
            "every word is needed"
        );
    }

    #[test]
    fn a_block_is_searched_once_for_what_each_event_would_be() {
        let events = [
            r#"{"part":{"text":"So the Invoice\nwas late"}}"#,
            r#"{"part":{"text":"see src/billing.rs"}}"#,
            r#"{"part":{"text":"invoiced, billing"}}"#,
            r#"{"part":{"text":"ﬁle invoice"}}"#,
            r#"{"part":{"text":"\u212a billing"}}"#,
            r#"{"part":{"text":"INVOICE"}}"#,
            r#"{"part":{"text":"billing invoice"}}"#,
        ];
        let data = crate::archive::blocks::pack(events.iter().copied()).unwrap();
        let raw = crate::archive::blocks::decompress(&data).unwrap();
        for (text, prefix) in [
            ("invoice", false),
            ("invo", true),
            ("billing", false),
            ("billing invoice", false),
            ("was", false),
            ("straße", false),
            ("nowhere", false),
        ] {
            let mut q = Query::new(text);
            q.prefix = prefix;
            let pieces = pieces(&q);
            let one_by_one: Vec<(usize, String)> = events
                .iter()
                .enumerate()
                .filter(|(_, e)| may_hold(e, &pieces))
                .map(|(i, e)| (i, e.to_string()))
                .collect();
            assert_eq!(events_holding(&raw, &pieces).unwrap(), one_by_one, "{text}");
        }
        assert_eq!(
            events_holding(&raw, &pieces(&Query::new("billing invoice")))
                .unwrap()
                .iter()
                .map(|e| e.0)
                .collect::<Vec<_>>(),
            [3, 4, 6]
        );
        assert!(events_holding(&raw[..raw.len() - 3], &pieces(&Query::new("x"))).is_err());
    }

    #[test]
    fn text_beyond_ascii_is_left_to_postgresql() {
        assert!(holds(r#"{"text":"ﬁle Straße"}"#, "nothing", false));
        assert!(holds(r#"{"text":"\u212a"}"#, "k", false));
        assert!(holds(r#"{"text":"plain"}"#, "straße", false));
        assert!(!holds(r#"{"text":"plain"}"#, "other", false));
    }
}
