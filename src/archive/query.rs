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

    /// The words searched for: nothing but letters, digits and the
    /// characters inside a path or a name, or a word (an apostrophe: the
    /// index splits "doesn't" at it, so the word is the phrase of its two
    /// pieces, never "doesnt"); the engines' own syntax never reaches them
    /// from the person typing.
    pub fn words(&self) -> Vec<String> {
        self.text
            .split_whitespace()
            .map(|w| {
                w.chars()
                    .map(|c| if c == '\u{2019}' { '\'' } else { c })
                    .filter(|c| c.is_alphanumeric() || "._-/:@'".contains(*c))
                    .collect::<String>()
                    // Inside a word only: around one they are quotes.
                    .trim_matches('\'')
                    .to_string()
            })
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .take(16)
            .collect()
    }

    /// The words as an FTS5 query: each a quoted phrase, all required.
    pub fn fts5(&self) -> Option<String> {
        let words = self.words();
        let n = words.len();
        let parts: Vec<String> = words
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                let last_piece = w.rsplit(|c: char| !c.is_alphanumeric()).next();
                let long = last_piece.is_some_and(|p| p.chars().count() >= MIN_PREFIX);
                let star = if self.prefix && i + 1 == n && long {
                    "*"
                } else {
                    ""
                };
                format!("\"{}\"{star}", w.replace('"', "\"\""))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// The words as a PostgreSQL `to_tsquery('simple', …)` text. The index
    /// splits paths and names at their punctuation (as FTS5 does), so a
    /// word is the phrase of its pieces.
    pub fn tsquery(&self) -> Option<String> {
        let words = self.words();
        let n = words.len();
        let parts: Vec<String> = words
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                let pieces: Vec<&str> = w
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|p| !p.is_empty())
                    .collect();
                let last = pieces.len() - 1;
                let phrase: Vec<String> = pieces
                    .iter()
                    .enumerate()
                    .map(|(j, p)| {
                        let long = p.chars().count() >= MIN_PREFIX;
                        let star = if self.prefix && i + 1 == n && j == last && long {
                            ":*"
                        } else {
                            ""
                        };
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

/// Text as the index keeps it: without the snippet marks.
pub fn indexable(text: &str) -> std::borrow::Cow<'_, str> {
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

    #[test]
    fn a_word_with_an_apostrophe_is_the_phrase_of_its_pieces() {
        for typed in ["doesn't", "doesn\u{2019}t"] {
            let q = Query::new(typed);
            assert_eq!(q.words(), ["doesn't"]);
            assert_eq!(q.fts5().unwrap(), "\"doesn't\"");
            assert_eq!(q.tsquery().unwrap(), "('doesn' <-> 't')");
        }
        // Quotes alone are no word; around one, they go with its pieces.
        assert!(Query::new("' ''").words().is_empty());
        assert_eq!(Query::new("'quoted'").tsquery().unwrap(), "'quoted'");
    }

    #[test]
    fn words_never_carry_engine_syntax() {
        let q = Query {
            prefix: true,
            ..Query::new("billing.rs \" OR x* NEAR(a) 'drop")
        };
        assert_eq!(q.words(), ["billing.rs", "OR", "x", "NEARa", "drop"]);
        assert_eq!(
            q.fts5().unwrap(),
            "\"billing.rs\" \"OR\" \"x\" \"NEARa\" \"drop\"*"
        );
        assert_eq!(
            q.tsquery().unwrap(),
            "('billing' <-> 'rs') & 'OR' & 'x' & 'NEARa' & 'drop':*"
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
