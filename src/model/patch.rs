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

/// The rows of a patch; file headers (`Index:`, `===`, `---`, `+++`) are skipped.
pub fn rows(patch: &str) -> Vec<Row<'_>> {
    let (mut old, mut new) = (0usize, 0usize);
    let mut out = Vec::new();
    for raw in patch.lines() {
        if ["Index:", "====", "--- ", "+++ "]
            .iter()
            .any(|p| raw.starts_with(p))
        {
            continue;
        }
        if let Some(h) = raw.strip_prefix("@@") {
            let nums: Vec<usize> = h
                .split([' ', ',', '-', '+', '@'])
                .filter_map(|t| t.parse().ok())
                .collect();
            if nums.len() >= 3 {
                old = nums[0];
                new = nums[if nums.len() >= 4 { 2 } else { 1 }];
            }
            out.push(Row::Hunk(raw));
            continue;
        }
        let text = raw.get(1..).unwrap_or("");
        let (kind, o, n) = match raw.chars().next() {
            Some('+') => (Kind::Added, None, Some(new)),
            Some('-') => (Kind::Removed, Some(old), None),
            Some('\\') => (Kind::Note, None, None),
            _ => (Kind::Same, Some(old), Some(new)),
        };
        old += usize::from(o.is_some());
        new += usize::from(n.is_some());
        out.push(Row::Line {
            kind,
            old: o,
            new: n,
            text,
        });
    }
    out
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
}
