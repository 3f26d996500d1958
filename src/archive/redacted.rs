//! A batch as a redacted archive keeps it (`crate::redact`; a team's
//! PostgreSQL by default, `archive_redact`): every string of its events,
//! sessions, messages and parts with the secrets in it replaced, and no
//! text deltas (a secret streamed in pieces is found in no single piece:
//! the part's states, which hold the whole text, are kept instead). What
//! was redacted is counted by part, message and title, never kept.

use std::borrow::Cow;

use crate::archive::rows::{Batch, Found};
use crate::redact::{Redactor, Tally};

/// `batch` as an engine writes it: as it came when already redacted (with
/// what was found then) or when `redacts` is false, else redacted now.
pub fn for_engine(batch: &Batch, redacts: bool) -> (Cow<'_, Batch>, Vec<Found>) {
    match (&batch.redacted, redacts) {
        (Some(found), _) => (Cow::Borrowed(batch), found.clone()),
        (None, true) => self::batch(batch),
        (None, false) => (Cow::Borrowed(batch), Vec::new()),
    }
}

/// `batch` redacted ahead of its write, when `redacts` (an import's
/// reading stage: the secrets are looked for on its thread, not the
/// writer's). Owned, it is redacted where it is: no copy of it is made,
/// and its texts are read once, not first asked whether they may hold a
/// secret.
pub fn ahead(mut batch: Batch, redacts: bool) -> Batch {
    if !redacts || batch.redacted.is_some() {
        return batch;
    }
    let found = in_place(&mut batch);
    batch.redacted = Some(found);
    batch
}

/// `batch` redacted, and what was found; borrowed when nothing changed.
pub fn batch(batch: &Batch) -> (Cow<'_, Batch>, Vec<Found>) {
    let r = Redactor::shared();
    // Deltas are left out and answers' texts read: the batch changes.
    let changes = batch.events.iter().any(|e| is_delta(&e.json)) || !batch.answers.is_empty();
    let any = changes
        || batch.events.iter().any(|e| r.may_hold(&e.json))
        || batch
            .sessions
            .iter()
            .any(|s| r.may_hold(&s.raw) || r.may_hold(&s.title))
        || batch.messages.iter().any(|m| r.may_hold(&m.raw))
        || batch.retries.iter().any(|t| r.may_hold(&t.message))
        || batch
            .parts
            .iter()
            .any(|p| r.may_hold(&p.raw) || r.may_hold(&p.text));
    if !any {
        return (Cow::Borrowed(batch), Vec::new());
    }
    let mut out = batch.clone();
    let found = in_place(&mut out);
    (Cow::Owned(out), found)
}

/// `out` with its secrets replaced, and what was found.
fn in_place(out: &mut Batch) -> Vec<Found> {
    let r = Redactor::shared();
    // Blocks packed before are of the events before redaction.
    out.packed = None;
    let mut found = Vec::new();
    let mut unused = Tally::new();
    // A part's row first: a part without a secret is also one in the event
    // the log holds it as (its raw is the event's), which is left unread;
    // and its indexed text is made of its raw's strings.
    let mut clean: std::collections::HashSet<String> = std::collections::HashSet::new();
    for p in &mut out.parts {
        // What was made before is of the text before redaction.
        p.prepared = None;
        let mut tally = Tally::new();
        match r.redact_json(&p.raw, &mut tally) {
            Cow::Owned(raw) => {
                p.raw = raw;
                if let Cow::Owned(text) = r.redact(&p.text, &mut unused) {
                    p.text = text;
                }
            }
            Cow::Borrowed(_) => {
                if let Some(key) = &p.logged_as {
                    clean.insert(key.clone());
                }
            }
        }
        note(&mut found, &p.session_id, &p.id, tally);
    }
    out.events.retain(|e| !is_delta(&e.json));
    for e in &mut out.events {
        if clean.contains(&e.key) {
            continue;
        }
        if let Cow::Owned(json) = r.redact_json(&e.json, &mut unused) {
            e.json = json;
        }
    }
    for s in &mut out.sessions {
        let mut tally = Tally::new();
        if let Cow::Owned(title) = r.redact(&s.title, &mut tally) {
            s.title = title;
        }
        if let Cow::Owned(raw) = r.redact_json(&s.raw, &mut unused) {
            s.raw = raw;
        }
        note(&mut found, &s.id, &s.id, tally);
    }
    for m in &mut out.messages {
        let mut tally = Tally::new();
        if let Cow::Owned(raw) = r.redact_json(&m.raw, &mut tally) {
            m.raw = raw;
        }
        note(&mut found, &m.session_id, &m.id, tally);
    }
    // A provider's error may echo what it was sent.
    for t in &mut out.retries {
        if let Cow::Owned(m) = r.redact(&t.message, &mut unused) {
            t.message = m;
        }
    }
    // What an answered prompt showed (a command, a diff) and its message.
    for a in &mut out.answers {
        if let Cow::Owned(shown) = r.redact(&a.shown, &mut unused) {
            a.shown = shown;
        }
        if let Some(m) = &a.message
            && let Cow::Owned(m) = r.redact(m, &mut unused)
        {
            a.message = Some(m);
        }
    }
    found
}

fn note(found: &mut Vec<Found>, session_id: &str, item: &str, tally: Tally) {
    for (rule, count) in tally {
        found.push(Found {
            session_id: session_id.to_string(),
            item: item.to_string(),
            rule,
            count,
        });
    }
}

/// Whether a logged event is a part's text delta.
pub fn is_delta(json: &str) -> bool {
    // Bytes: the 160th may fall inside a character.
    let head = &json.as_bytes()[..json.len().min(160)];
    memchr::memmem::find(head, br#""type":"message.part.delta""#).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::rows::{PartRow, Prepared};

    #[test]
    fn a_delta_is_told_whatever_character_its_head_ends_in() {
        let delta = r#"{"type":"message.part.delta","properties":{}}"#;
        assert!(is_delta(delta));
        // A two-byte letter across the 160th byte.
        let text = format!(
            r#"{{"type":"message.part.updated","x":"{}Д"}}"#,
            "a".repeat(123)
        );
        assert_eq!(text.find('Д'), Some(159));
        assert!(!is_delta(&text));
    }

    /// A part prepared ahead of its redaction (its document made of the
    /// secret) loses what was prepared: the write makes it again of the
    /// redacted text, so the word index never holds the secret.
    #[test]
    fn what_was_prepared_of_a_part_goes_with_its_secret() {
        let secret = "AKIAZ5XKQ7WM3NOPQR4T";
        let text = format!("export AWS_ACCESS_KEY_ID={secret} now");
        let part = PartRow {
            id: "prt_1".into(),
            message_id: "msg_1".into(),
            session_id: "ses_1".into(),
            kind: "text".into(),
            tool: None,
            state: None,
            model: None,
            agent: None,
            time: 1,
            updated: 1,
            raw: serde_json::json!({"id": "prt_1", "type": "text", "text": text}).to_string(),
            prepared: Some(Prepared {
                document: text.clone(),
                hash: 1,
            }),
            text,
            logged_as: None,
            error: None,
        };
        let b = Batch {
            parts: vec![part],
            ..Batch::default()
        };
        let (out, found) = batch(&b);
        assert!(!found.is_empty());
        let p = &out.parts[0];
        assert!(!p.text.contains(secret) && !p.raw.contains(secret), "{p:?}");
        assert!(p.prepared.is_none(), "{:?}", p.prepared);
    }

    /// The log's blocks packed ahead of a redaction are of the secret: the
    /// write packs the redacted events again, and the log never holds it.
    #[test]
    fn blocks_packed_before_a_redaction_go_with_its_secret() {
        let secret = "AKIAZ5XKQ7WM3NOPQR4T";
        let json = format!(
            r#"{{"type":"session.updated","properties":{{"info":{{"id":"ses_1","title":"export AWS_ACCESS_KEY_ID={secret}"}}}}}}"#
        );
        let events = vec![crate::archive::rows::EventRow {
            key: "h1".into(),
            session_id: "ses_1".into(),
            time_ms: 1,
            json,
        }];
        let b = Batch {
            packed: crate::archive::rows::Packed::ahead(&events),
            events,
            ..Batch::default()
        };
        assert!(b.packed.is_some());
        let (out, _) = batch(&b);
        assert!(!out.events[0].json.contains(secret));
        let fresh: Vec<_> = out.events.iter().map(|e| (e, 7)).collect();
        let packed = crate::archive::rows::Packed::of_all(out.packed.as_ref(), 1, 1);
        let blocks = crate::archive::blocks::group(&fresh, packed).unwrap();
        let logged = crate::archive::blocks::unpack(&blocks[0].data).unwrap();
        assert!(!logged[0].contains(secret), "{logged:?}");
    }
}
