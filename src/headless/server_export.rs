//! `ocview export URL`, page by page: the same document as an export of a
//! store holding the whole session (`export::render`), without ever
//! holding the whole session. The server pages newest first; each page is
//! read, its messages noted in a small index (id, role, parent, usage,
//! diffs) and kept as JSON in a scratch file ([`Spool`]), then dropped. The
//! document is then written oldest first, a turn (Markdown) or a message
//! (JSON) at a time, read back from the scratch file.

use std::io::Write;

use serde_json::Value;

use super::export::{self, ExportFormat};
use super::spool::{Slot, Spool};
use crate::model::entity::totals::{Usage, message_usage};
use crate::model::wire::sanitize;
use crate::model::{FileDiff, Message, MessageInfo, NoObserver, Part, Session, Store};
use crate::source::live::{Client, snapshot};

/// Messages asked for per page: big enough that a long session is few
/// requests, small enough that one page parsed is a few MB at most.
pub const PAGE: usize = 200;

/// Why a page-by-page export stopped.
#[derive(Debug)]
pub enum ExportError {
    /// Writing the document failed (a closed pipe, a full disk).
    Write(std::io::Error),
    /// The server, the scratch file or the session asked for.
    Other(String),
}

impl From<std::io::Error> for ExportError {
    fn from(e: std::io::Error) -> Self {
        ExportError::Write(e)
    }
}

/// Export `session` (or every session, in reading order) of `store`, a
/// store synced from `client` without messages, to `out`.
pub async fn write(
    client: &Client,
    store: &mut Store,
    session: Option<&str>,
    format: ExportFormat,
    reasoning: bool,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let ids: Vec<String> = export::pick(store, session)
        .map_err(ExportError::Other)?
        .iter()
        .map(|s| s.info.id.clone())
        .collect();
    for (n, id) in ids.iter().enumerate() {
        load_todos(client, store, id).await;
        let spooled = spool_session(client, id).await?;
        let Some(s) = store.session(id) else { continue };
        match format {
            ExportFormat::Markdown => {
                if n > 0 {
                    out.write_all(b"\n---\n\n")?;
                }
                markdown(s, spooled, reasoning, out)?;
            }
            ExportFormat::Json => {
                let depth = match (ids.len(), n) {
                    (1, _) => 0,
                    (_, 0) => {
                        out.write_all(b"[\n  ")?;
                        1
                    }
                    _ => {
                        out.write_all(b",\n  ")?;
                        1
                    }
                };
                json(s, spooled, depth, out)?;
            }
        }
    }
    if format == ExportFormat::Json {
        match ids.len() {
            0 => out.write_all(b"[]")?,
            1 => {}
            _ => out.write_all(b"\n]")?,
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// A session's todos into the store, as the live source loads them (a
/// failure leaves them out, as it does there).
async fn load_todos(client: &Client, store: &mut Store, session: &str) {
    match client.todos(session).await {
        Ok(todos) => {
            let props = serde_json::json!({"sessionID": session, "todos": todos});
            if let Some(env) = snapshot::event("todo.updated", props) {
                store.apply(env, &mut NoObserver);
            }
        }
        Err(e) => tracing::warn!("todos of {session}: {e}"),
    }
}

/// What the index keeps of one message.
pub(super) struct Entry {
    pub(super) id: String,
    assistant: bool,
    parent: Option<String>,
    pub(super) usage: Usage,
    pub(super) diffs: Vec<FileDiff>,
    slot: Slot,
}

/// A session's messages, in the scratch file, indexed in id order.
struct Spooled {
    spool: Spool,
    entries: Vec<Entry>,
}

impl Spooled {
    fn sum(&self) -> Usage {
        let mut sum = Usage::default();
        for e in &self.entries {
            sum += e.usage;
        }
        sum
    }

    /// Message `i`, as the store would hold it.
    fn message(&mut self, i: usize) -> Result<Message, ExportError> {
        read_message(&mut self.spool, &self.entries[i])
    }
}

/// The message `entry` indexes, read back from `spool`, as the store would
/// hold it.
pub(super) fn read_message(spool: &mut Spool, entry: &Entry) -> Result<Message, ExportError> {
    let bytes = spool.get(entry.slot).map_err(scratch)?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| ExportError::Other(format!("scratch file: {e}")))?;
    let (info, parts) = typed(&value).ok_or_else(|| {
        ExportError::Other(format!("scratch file: message {} unreadable", entry.id))
    })?;
    Ok(message(info, parts))
}

pub(super) fn scratch(e: std::io::Error) -> ExportError {
    ExportError::Other(format!("scratch file: {e}"))
}

/// One item of `GET /session/{id}/message`, typed as the live source types
/// it (`None` where it skips it).
fn typed(item: &Value) -> Option<(MessageInfo, Vec<Part>)> {
    snapshot::messages(std::slice::from_ref(item)).pop()
}

/// A message as `Store::finalize_session` makes it: parts in id order,
/// each id once.
fn message(info: MessageInfo, mut parts: Vec<Part>) -> Message {
    parts.sort_by(|a, b| a.id.cmp(&b.id));
    parts.dedup_by(|a, b| a.id == b.id);
    let mut m = Message::new(info);
    m.parts = parts;
    m
}

/// Every page of `session`, newest first, into a scratch file.
async fn spool_session(client: &Client, session: &str) -> Result<Spooled, ExportError> {
    let mut spool = Spool::new().map_err(scratch)?;
    let entries = spool_pages(client, session, &mut spool).await?;
    Ok(Spooled { spool, entries })
}

/// Every page of `session`, newest first, into `spool`; the index of its
/// messages, in id order.
pub(super) async fn spool_pages(
    client: &Client,
    session: &str,
    spool: &mut Spool,
) -> Result<Vec<Entry>, ExportError> {
    let mut pages: Vec<Vec<Entry>> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = client
            .page(session, PAGE, cursor.as_deref())
            .await
            .map_err(|e| ExportError::Other(format!("messages of {session}: {e}")))?;
        let mut entries = Vec::with_capacity(page.messages.len());
        for item in &page.messages {
            let Some((info, parts)) = typed(item) else {
                continue;
            };
            let bytes = serde_json::to_vec(item).map_err(|e| ExportError::Other(e.to_string()))?;
            let slot = spool.put(&bytes).map_err(scratch)?;
            let m = message(info, parts);
            entries.push(Entry {
                usage: message_usage(&m),
                assistant: m.info.is_assistant(),
                parent: m.info.parent_id.clone(),
                diffs: m.info.diffs.clone(),
                id: m.info.id.clone(),
                slot,
            });
        }
        let empty = entries.is_empty();
        pages.push(entries);
        match page.older {
            // A server that sends an empty page, or the same cursor again,
            // would page forever.
            Some(c) if !empty && cursor.as_deref() != Some(c.as_str()) => cursor = Some(c),
            _ => break,
        }
    }
    // As the live source hands a whole session over: oldest page first,
    // then in id order, each id once (the first kept).
    let mut entries: Vec<Entry> = pages.into_iter().rev().flatten().collect();
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries.dedup_by(|a, b| a.id == b.id);
    Ok(entries)
}

/// A turn, by index into the entries.
pub(super) struct Turn {
    pub(super) user: Option<usize>,
    pub(super) assistants: Vec<usize>,
}

/// The entries grouped as `model::entity::turn::group_turns` groups
/// messages: an assistant message joins the latest turn whose user message
/// is its parent; one without a known parent opens a turn of its own.
pub(super) fn turns(entries: &[Entry]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.assistant {
            let parent = e.parent.as_deref();
            let found = turns
                .iter_mut()
                .rev()
                .find(|t| parent.is_some() && t.user.map(|u| entries[u].id.as_str()) == parent);
            match found {
                Some(turn) => turn.assistants.push(i),
                None => turns.push(Turn {
                    user: None,
                    assistants: vec![i],
                }),
            }
        } else {
            turns.push(Turn {
                user: Some(i),
                assistants: Vec::new(),
            });
        }
    }
    turns
}

fn markdown(
    s: &Session,
    mut spooled: Spooled,
    reasoning: bool,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let mut text = String::new();
    export::markdown_head(&mut text, s, &s.totals_with(spooled.sum()));
    out.write_all(text.as_bytes())?;
    for turn in turns(&spooled.entries) {
        let user = turn.user.map(|i| spooled.message(i)).transpose()?;
        let assistants = turn
            .assistants
            .iter()
            .map(|&i| spooled.message(i))
            .collect::<Result<Vec<_>, _>>()?;
        let assistants: Vec<&Message> = assistants.iter().collect();
        text.clear();
        export::markdown_turn(&mut text, s, user.as_ref(), &assistants, reasoning);
        out.write_all(text.as_bytes())?;
    }
    text.clear();
    let diffs = spooled.entries.iter().flat_map(|e| &e.diffs);
    export::markdown_tail(&mut text, s, diffs);
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Stands for the message list in the session's object while the rest of
/// it is printed; a JSON string's own quotes are escaped, so no data can
/// spell `"messages": "…"` as this does.
const MESSAGES_MARK: &str = "ocview:messages-go-here";

/// The session's object, indented `depth` levels (an item of the list of
/// sessions is at depth 1), its messages written one at a time.
fn json(
    s: &Session,
    mut spooled: Spooled,
    depth: usize,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let mut head = export::session_value(s, &s.totals_with(spooled.sum()));
    head["messages"] = Value::String(MESSAGES_MARK.into());
    let text = indented(&pretty(&head)?, depth);
    let needle = format!("\"messages\": \"{MESSAGES_MARK}\"");
    let Some((before, after)) = text.split_once(&needle) else {
        return Err(ExportError::Other(
            "export: no place for the messages".into(),
        ));
    };
    out.write_all(sanitize::json(before).as_bytes())?;
    out.write_all(b"\"messages\": ")?;
    if spooled.entries.is_empty() {
        out.write_all(b"[]")?;
    } else {
        let item_indent = "  ".repeat(depth + 2);
        out.write_all(b"[\n")?;
        for i in 0..spooled.entries.len() {
            if i > 0 {
                out.write_all(b",\n")?;
            }
            let value = export::message_value(&spooled.message(i)?);
            let text = indented(&pretty(&value)?, depth + 2);
            out.write_all(item_indent.as_bytes())?;
            out.write_all(sanitize::json(&text).as_bytes())?;
        }
        out.write_all(b"\n")?;
        out.write_all("  ".repeat(depth + 1).as_bytes())?;
        out.write_all(b"]")?;
    }
    out.write_all(sanitize::json(after).as_bytes())?;
    Ok(())
}

fn pretty(v: &Value) -> Result<String, ExportError> {
    serde_json::to_string_pretty(v).map_err(|e| ExportError::Other(e.to_string()))
}

/// `text` (pretty JSON) as it reads nested `depth` levels deep: every line
/// but the first indented. A JSON string holds no raw line break, so every
/// line break is the printer's own.
fn indented(text: &str, depth: usize) -> String {
    if depth == 0 {
        return text.to_string();
    }
    let pad = "  ".repeat(depth);
    text.replace('\n', &format!("\n{pad}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, assistant: bool, parent: Option<&str>) -> Entry {
        Entry {
            id: id.into(),
            assistant,
            parent: parent.map(str::to_string),
            usage: Usage::default(),
            diffs: Vec::new(),
            slot: Spool::new().unwrap().put(b"").unwrap(),
        }
    }

    #[test]
    fn turns_group_as_the_store_groups_them() {
        // An answer to an earlier question joins that question's turn; an
        // answer to an unknown one opens its own.
        let entries = [
            entry("msg_1", false, None),
            entry("msg_2", true, Some("msg_1")),
            entry("msg_3", false, None),
            entry("msg_4", true, Some("msg_1")),
            entry("msg_5", true, Some("msg_9")),
            entry("msg_6", true, Some("msg_3")),
        ];
        let t = turns(&entries);
        let shape: Vec<(Option<usize>, Vec<usize>)> =
            t.into_iter().map(|t| (t.user, t.assistants)).collect();
        assert_eq!(
            shape,
            vec![(Some(0), vec![1, 3]), (Some(2), vec![5]), (None, vec![4]),]
        );
    }

    #[test]
    fn nested_pretty_json_is_the_printer_s_own() {
        let v = serde_json::json!({"a": [1, {"b": "x\ny"}], "c": {}});
        let whole = serde_json::to_string_pretty(&serde_json::json!([v])).unwrap();
        let nested = format!("[\n  {}\n]", indented(&pretty(&v).unwrap(), 1));
        assert_eq!(whole, nested);
    }
}
