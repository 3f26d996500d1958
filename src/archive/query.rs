//! A search of the archive and what it finds, the same for both engines:
//! the words (all of them must match; the last may be a prefix while
//! typing), the filters, and hits newest first, each with a snippet whose
//! matching words are marked.

use serde::Serialize;

/// The marks an engine puts around a matching word in a snippet: control
/// characters, which no text from the archive can hold (text is sanitised
/// before it is shown, and these are cut out of the text that is indexed).
pub const MARK_START: char = '\u{2}';
pub const MARK_END: char = '\u{3}';

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    pub text: String,
    /// The last word matches any word it starts (results while typing).
    pub prefix: bool,
    /// A part of the project directory.
    pub project: Option<String>,
    /// A part of the server URL or of the machine's name.
    pub server: Option<String>,
    /// From this time on (ms since the epoch).
    pub since: Option<i64>,
    /// Before this time (ms since the epoch).
    pub until: Option<i64>,
    /// A part of `provider/model`.
    pub model: Option<String>,
    pub agent: Option<String>,
    pub tool: Option<String>,
    /// A tool's state: pending, running, completed, error.
    pub state: Option<String>,
    pub limit: u32,
}

/// The shortest last word matched as a prefix: one or two letters start
/// most words of the archive (a person is still typing), and are matched
/// as whole words until a third comes.
pub const MIN_PREFIX: usize = 3;

impl Query {
    pub fn new(text: &str) -> Query {
        Query {
            text: text.to_string(),
            limit: 50,
            ..Default::default()
        }
    }

    /// What is searched for: each word, or each phrase in double quotes,
    /// as the pieces the index splits text into (runs of letters and
    /// digits: `doesn't` is `doesn` then `t`, `config.toml` is `config`
    /// then `toml`), all of them required. A word ending in `*` (and the
    /// last one while typing, unless it is a closed phrase) matches any
    /// word its last piece starts, once that piece has `MIN_PREFIX`
    /// letters. Nothing of the engines' own syntax gets through: only
    /// letters and digits reach them.
    pub fn terms(&self) -> Vec<Term> {
        let mut terms = Vec::new();
        let mut rest = self.text.as_str();
        let mut closed_last = false;
        loop {
            rest = rest.trim_start();
            let Some(first) = rest.chars().next() else {
                break;
            };
            let (chunk, starred, closed) = if first == '"' {
                let body = &rest[1..];
                match body.find('"') {
                    Some(end) => {
                        rest = &body[end + 1..];
                        (&body[..end], false, true)
                    }
                    None => {
                        rest = "";
                        (body, false, false)
                    }
                }
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let word = &rest[..end];
                rest = &rest[end..];
                let starred = word.ends_with('*');
                (word, starred, false)
            };
            let pieces = pieces(chunk);
            if pieces.is_empty() {
                continue;
            }
            closed_last = closed;
            terms.push(Term {
                prefix: starred,
                pieces,
            });
        }
        terms.truncate(16);
        if self.prefix
            && !closed_last
            && let Some(last) = terms.last_mut()
        {
            last.prefix = true;
        }
        for t in &mut terms {
            t.prefix &= t
                .pieces
                .last()
                .is_some_and(|p| p.chars().count() >= MIN_PREFIX);
        }
        terms
    }

    /// The terms as an FTS5 query: every piece of every term, each quoted
    /// (FTS5 splits them as it split the text), all required. SQLite's
    /// index keeps no positions, so a term of several pieces (a phrase,
    /// `doesn't`, `config.toml`) is then checked against each hit's text
    /// (`Term::found_in`).
    pub fn fts5(&self) -> Option<String> {
        let parts: Vec<String> = self
            .terms()
            .into_iter()
            .flat_map(|t| {
                let last = t.pieces.len() - 1;
                let prefix = t.prefix;
                t.pieces.into_iter().enumerate().map(move |(i, p)| {
                    let star = if prefix && i == last { "*" } else { "" };
                    format!("\"{p}\"{star}")
                })
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// The terms as a PostgreSQL `to_tsquery('simple', …)` text: each the
    /// phrase of its pieces (the index splits paths and names at their
    /// punctuation, as FTS5 does), all required.
    pub fn tsquery(&self) -> Option<String> {
        let parts: Vec<String> = self
            .terms()
            .into_iter()
            .map(|t| {
                let last = t.pieces.len() - 1;
                let phrase: Vec<String> = t
                    .pieces
                    .iter()
                    .enumerate()
                    .map(|(j, p)| {
                        let star = if t.prefix && j == last { ":*" } else { "" };
                        format!("'{p}'{star}")
                    })
                    .collect();
                if phrase.len() == 1 {
                    phrase.into_iter().next().unwrap_or_default()
                } else {
                    format!("({})", phrase.join(" <-> "))
                }
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" & "))
    }
}

/// One word or phrase searched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Its runs of letters and digits, in order.
    pub pieces: Vec<String>,
    /// Its last piece matches any word it starts.
    pub prefix: bool,
}

impl Term {
    /// Of several pieces: found only where they stand next to each other.
    pub fn is_phrase(&self) -> bool {
        self.pieces.len() > 1
    }

    /// Whether a hit's text holds it as the index would (its pieces in a
    /// row, `words::holds_phrase`); a word of one piece the index found
    /// is there.
    pub fn found_in(&self, text: &str) -> bool {
        !self.is_phrase() || crate::archive::words::holds_phrase(text, &self.pieces, self.prefix)
    }
}

/// The pieces of a query's word or phrase, as the index holds them
/// (`super::words`).
pub fn pieces(text: &str) -> Vec<String> {
    crate::archive::words::pieces(text)
}

/// A search's answer: its hits, newest first, and how far back it looked.
#[derive(Debug, Clone, Default)]
pub struct Searched {
    pub hits: Vec<Hit>,
    /// Parts older than this time (ms) were not all checked: a phrase of
    /// words found together in very many parts stops after a bound, and
    /// says so rather than let its silence mean "nowhere".
    pub unchecked_before: Option<i64>,
}

/// One thing found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub session_id: String,
    pub title: String,
    /// When the matching part happened (ms since the epoch).
    pub time: i64,
    pub project: Option<String>,
    pub server: Option<String>,
    pub host: Option<String>,
    pub file: Option<String>,
    /// The message and part the words are in (none for a title).
    pub message_id: Option<String>,
    pub part_id: Option<String>,
    /// `title`, `text`, `reasoning`, `tool`, …
    pub kind: String,
    /// The text around the words, sanitised, with the matching words
    /// between `MARK_START` and `MARK_END` (`Hit::pieces` splits it).
    #[serde(skip)]
    pub snippet: String,
}

impl Hit {
    /// The snippet as (text, is a match) pieces, every one sanitised.
    pub fn pieces(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut marked = false;
        for (i, piece) in self.snippet.split([MARK_START, MARK_END]).enumerate() {
            if i > 0 {
                marked = !marked;
            }
            if !piece.is_empty() {
                let text = crate::model::wire::sanitize::line(piece).into_owned();
                out.push((text, marked));
            }
        }
        out
    }

    /// The snippet in plain text, the matches in «».
    pub fn plain_snippet(&self) -> String {
        self.pieces()
            .into_iter()
            .map(|(t, m)| if m { format!("«{t}»") } else { t })
            .collect()
    }

    /// The snippet as it came from the engine, the marks kept, each piece
    /// made inert (an engine's snippet is text from the archive).
    pub fn set_snippet(&mut self, raw: &str) {
        let mut out = String::with_capacity(raw.len());
        let mut marked = false;
        for (i, piece) in raw.split([MARK_START, MARK_END]).enumerate() {
            if i > 0 {
                marked = !marked;
                out.push(if marked { MARK_START } else { MARK_END });
            }
            let one_line = piece.replace(['\n', '\r', '\t'], " ");
            out.push_str(&crate::model::wire::sanitize::line(&one_line));
        }
        self.snippet = out;
    }
}

/// Text as the index keeps it: without the snippet marks (`unmarked`),
/// and with the words the engines do not find by themselves after it
/// (`super::words`).
pub fn indexable(text: &str) -> std::borrow::Cow<'_, str> {
    match unmarked(text) {
        std::borrow::Cow::Borrowed(text) => crate::archive::words::with_more_words(text),
        std::borrow::Cow::Owned(text) => crate::archive::words::with_more_words(&text)
            .into_owned()
            .into(),
    }
}

/// Text without the marks a snippet puts around its words.
pub fn unmarked(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([MARK_START, MARK_END]) {
        text.replace([MARK_START, MARK_END], " ").into()
    } else {
        text.into()
    }
}

/// A date for `--since`/`--until`: `YYYY-MM-DD`, a number of ms since the
/// epoch, or an age such as `3d`, `12h`, `30m` (before `now_ms`).
pub fn parse_time(text: &str, now_ms: i64) -> Result<i64, String> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    let unit = |c: char| match c {
        'm' => Some(60_000),
        'h' => Some(3_600_000),
        'd' => Some(86_400_000),
        'w' => Some(7 * 86_400_000),
        _ => None,
    };
    if let Some(last) = t.chars().last()
        && let Some(ms) = unit(last)
        && let Ok(n) = t[..t.len() - 1].parse::<i64>()
    {
        return Ok(now_ms - n.saturating_mul(ms));
    }
    let parts: Vec<&str> = t.split('-').collect();
    if let [y, m, d] = parts[..]
        && let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i64>(), m.parse::<u32>(), d.parse::<u32>())
        && (1..=12).contains(&m)
        && (1..=31).contains(&d)
    {
        return Ok(days_from_civil(y, m, d) * 86_400_000);
    }
    Err(format!(
        "not a date: {} (YYYY-MM-DD, ms since 1970, or an age such as 3d, 12h)",
        crate::model::wire::sanitize::line(t)
    ))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces_of(q: &Query) -> Vec<(Vec<String>, bool)> {
        q.terms()
            .into_iter()
            .map(|t| (t.pieces, t.prefix))
            .collect()
    }

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_word_with_an_apostrophe_is_the_phrase_of_its_pieces() {
        for typed in ["doesn't", "doesn\u{2019}t"] {
            let q = Query::new(typed);
            assert_eq!(pieces_of(&q), [(v(&["doesn", "t"]), false)]);
            assert_eq!(q.fts5().unwrap(), "\"doesn\" \"t\"");
            assert_eq!(q.tsquery().unwrap(), "('doesn' <-> 't')");
        }
        // Quotes alone are no word; around one, they go with its pieces.
        assert!(Query::new("' ''").terms().is_empty());
        assert_eq!(Query::new("'quoted'").tsquery().unwrap(), "'quoted'");
    }

    #[test]
    fn terms_never_carry_engine_syntax() {
        let q = Query {
            prefix: true,
            ..Query::new("billing.rs OR x* NEAR(a) 'drop")
        };
        assert_eq!(
            q.fts5().unwrap(),
            "\"billing\" \"rs\" \"OR\" \"x\" \"NEAR\" \"a\" \"drop\"*"
        );
        assert_eq!(
            q.tsquery().unwrap(),
            "('billing' <-> 'rs') & 'OR' & 'x' & ('NEAR' <-> 'a') & 'drop':*"
        );
        assert!(Query::new("  \" * ").fts5().is_none());
        // One or two letters are whole words until a third is typed.
        let typing = |t: &str| Query {
            prefix: true,
            ..Query::new(t)
        };
        assert_eq!(typing("bi").fts5().unwrap(), "\"bi\"");
        assert_eq!(typing("bil").fts5().unwrap(), "\"bil\"*");
        assert_eq!(typing("a.rs b").tsquery().unwrap(), "('a' <-> 'rs') & 'b'");
    }

    #[test]
    fn a_star_makes_a_prefix_and_quotes_a_phrase() {
        // The command line: `word*` anywhere, not only last.
        let q = Query::new("serializ* json");
        assert_eq!(
            pieces_of(&q),
            [(v(&["serializ"]), true), (v(&["json"]), false)]
        );
        assert_eq!(q.fts5().unwrap(), "\"serializ\"* \"json\"");
        assert_eq!(q.tsquery().unwrap(), "'serializ':* & 'json'");
        // Too short to be a prefix: the whole word.
        assert_eq!(pieces_of(&Query::new("se*")), [(v(&["se"]), false)]);
        // A phrase: its words in order, next to each other.
        let q = Query::new("\"cargo build --release\" error");
        assert_eq!(
            pieces_of(&q),
            [
                (v(&["cargo", "build", "release"]), false),
                (v(&["error"]), false)
            ]
        );
        assert_eq!(
            q.fts5().unwrap(),
            "\"cargo\" \"build\" \"release\" \"error\""
        );
        assert_eq!(
            q.tsquery().unwrap(),
            "('cargo' <-> 'build' <-> 'release') & 'error'"
        );
        // While typing: an open phrase's last word is a prefix, a closed
        // phrase is whole.
        let typing = |t: &str| Query {
            prefix: true,
            ..Query::new(t)
        };
        assert_eq!(typing("\"unit tes").fts5().unwrap(), "\"unit\" \"tes\"*");
        assert_eq!(typing("\"unit test\"").fts5().unwrap(), "\"unit\" \"test\"");
    }

    #[test]
    fn snippets_are_inert_and_marked() {
        let mut hit = Hit {
            session_id: "s".into(),
            title: "t".into(),
            time: 0,
            project: None,
            server: None,
            host: None,
            file: None,
            message_id: None,
            part_id: None,
            kind: "text".into(),
            snippet: String::new(),
        };
        hit.set_snippet("a \u{1b}[2J \u{2}word\u{3} b\nc");
        assert_eq!(
            hit.pieces(),
            [
                ("a ␛[2J ".to_string(), false),
                ("word".to_string(), true),
                (" b c".to_string(), false)
            ]
        );
        assert_eq!(hit.plain_snippet(), "a ␛[2J «word» b c");
    }

    #[test]
    fn dates_ages_and_millis() {
        assert_eq!(parse_time("1970-01-02", 0).unwrap(), 86_400_000);
        assert_eq!(parse_time("2024-03-01", 0).unwrap(), 1_709_251_200_000);
        assert_eq!(
            parse_time("2d", 200_000_000).unwrap(),
            200_000_000 - 172_800_000
        );
        assert_eq!(parse_time("1234", 0).unwrap(), 1234);
        assert!(
            parse_time("yesterday", 0)
                .unwrap_err()
                .contains("not a date")
        );
    }
}
