//! Reading a unified diff (as opencode stores in `summary.diffs[].patch`
//! and tool metadata): hunk headers and lines with their old and new line
//! numbers. The views draw from these rows; none parses the text itself.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Same,
    Added,
    Removed,
    /// `\ No newline at end of file`.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row<'a> {
    Hunk(&'a str),
    Line {
        kind: Kind,
        old: Option<usize>,
        new: Option<usize>,
        text: &'a str,
    },
}

/// The rows of a patch; file headers (`Index:`, `===`, `---`, `+++`) are
/// skipped. Lines have numbers only under a hunk header that gives them
/// (`apply_patch` hunks and an edit's own old/new strings do not).
pub fn rows(patch: &str) -> Vec<Row<'_>> {
    let mut at: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for raw in patch.lines() {
        if ["Index:", "====", "--- ", "+++ "]
            .iter()
            .any(|p| raw.starts_with(p))
        {
            continue;
        }
        if let Some(h) = raw.strip_prefix("@@") {
            at = hunk_starts(h);
            out.push(Row::Hunk(raw));
            continue;
        }
        let text = raw.get(1..).unwrap_or("");
        let (kind, in_old, in_new) = match raw.chars().next() {
            Some('+') => (Kind::Added, false, true),
            Some('-') => (Kind::Removed, true, false),
            Some('\\') => (Kind::Note, false, false),
            _ => (Kind::Same, true, true),
        };
        let (o, n) = match &mut at {
            Some((old, new)) => {
                let numbers = (in_old.then_some(*old), in_new.then_some(*new));
                *old += usize::from(in_old);
                *new += usize::from(in_new);
                numbers
            }
            None => (None, None),
        };
        out.push(Row::Line {
            kind,
            old: o,
            new: n,
            text,
        });
    }
    out
}

/// The first old and new line numbers of a hunk header, after its `@@`:
/// ` -3,7 +3,8 @@ fn main` (a count may be left out: ` -3 +3 @@`).
fn hunk_starts(header: &str) -> Option<(usize, usize)> {
    let mut words = header.split_whitespace();
    let mut start = |sign: char| -> Option<usize> {
        words
            .next()?
            .strip_prefix(sign)?
            .split(',')
            .next()?
            .parse()
            .ok()
    };
    let old = start('-')?;
    let new = start('+')?;
    Some((old, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_hunk_header() {
        let patch = "Index: a\n====================\n--- a\n+++ a\n@@ -3,3 +3,3 @@\n keep\n-old\n+new\n\\ No newline at end of file\n";
        let r = rows(patch);
        assert_eq!(r[0], Row::Hunk("@@ -3,3 +3,3 @@"));
        assert_eq!(
            r[1],
            Row::Line {
                kind: Kind::Same,
                old: Some(3),
                new: Some(3),
                text: "keep"
            }
        );
        assert_eq!(
            r[2],
            Row::Line {
                kind: Kind::Removed,
                old: Some(4),
                new: None,
                text: "old"
            }
        );
        assert_eq!(
            r[3],
            Row::Line {
                kind: Kind::Added,
                old: None,
                new: Some(4),
                text: "new"
            }
        );
        assert_eq!(
            r[4],
            Row::Line {
                kind: Kind::Note,
                old: None,
                new: None,
                text: " No newline at end of file"
            }
        );
    }

    #[test]
    fn counts_may_be_left_out_of_a_hunk_header() {
        let r = rows("@@ -3,2 +7 @@ fn f\n-a\n+b\n");
        assert_eq!(
            r[1],
            Row::Line {
                kind: Kind::Removed,
                old: Some(3),
                new: None,
                text: "a"
            }
        );
        assert_eq!(
            r[2],
            Row::Line {
                kind: Kind::Added,
                old: None,
                new: Some(7),
                text: "b"
            }
        );
    }

    #[test]
    fn lines_without_a_numbered_hunk_have_no_numbers() {
        for patch in ["-old\n+new\n", "@@ def greet\n-old\n+new\n"] {
            for row in rows(patch) {
                if let Row::Line { old, new, .. } = row {
                    assert_eq!((old, new), (None, None), "{patch:?}");
                }
            }
        }
    }
}
