//! The event log in blocks, the same on both engines: the new events of one
//! session from one batch are stored together, their JSON compressed as one
//! (zstd), so the log takes a fraction of its text and one row, not one row
//! and two index entries, per event.
//!
//! Each event's key is claimed in a lean table of its own (`event_keys`:
//! an integer slot as its primary key, the key kept beside it): the same
//! event written twice, in one batch or two split differently, claims its
//! slot once and is logged once. A slot is the session's hash in its high
//! bits and the key's in its low ones, so a batch's claims land on a few
//! pages of the table rather than all over it; two keys on one slot (a
//! 40-bit collision within a session) go to the next free slot. A key names
//! one event of one session (it hashes the event, session id included).
//!
//! A block's payload: for each event, its length (u32, little-endian) then
//! its JSON; the whole compressed as one zstd frame. Its `slots` are the
//! claimed slots (i64, little-endian), so deleting a session frees its keys
//! without an index from key to session.

use crate::archive::encode::fnv;
use crate::archive::rows::{EventRow, Packed};

/// zstd's level. On sessions of real sizes level 3 stores the log about
/// a tenth smaller than level 1 (the largest share of an archive of
/// opencode's sessions), for about a tenth more of an import's work: the
/// room the word index's wider merges take (`sqlite::reindex`) within
/// half of opencode's database. PostgreSQL's import, whose writer waits
/// on the server, took no longer.
const LEVEL: i32 = 3;

/// Bits of a slot that come from the key; the rest (above) from the session.
const KEY_BITS: u32 = 40;

/// Where `key` of `session_id` is first tried in `event_keys`.
pub fn slot(session_id: &str, key: &str) -> i64 {
    let session = fnv(session_id.as_bytes()) & ((1 << (63 - KEY_BITS)) - 1);
    let key = fnv(key.as_bytes()) & ((1 << KEY_BITS) - 1);
    ((session << KEY_BITS) | key) as i64
}

/// The slot tried after `slot` when another key holds it.
pub fn next_slot(slot: i64) -> i64 {
    if slot == i64::MAX { 0 } else { slot + 1 }
}

/// At most this many events in one block: a search hit whose part is
/// read from the log unpacks one small block, however long the batch.
pub const BLOCK_MAX: usize = 256;

/// Where the log holds an event, as one number (a part's `logged`): its
/// block's row in the high bits, its place in the block in the low 16.
pub fn logged_at(block: i64, index: usize) -> i64 {
    (block << 16) | index as i64
}

/// The block's row and the place in it that `logged_at` made `at` of.
pub fn logged_place(at: i64) -> (i64, usize) {
    (at >> 16, (at & 0xffff) as usize)
}

/// The part object a logged `message.part.updated` carries, as JSON.
pub fn part_of_event(event: &str) -> Option<String> {
    object_of_event(event, &["/properties/part"])
}

/// The part a logged `message.part.updated` carries, parsed.
pub fn part_value_of_event(event: &str) -> Option<serde_json::Value> {
    value_of_event(event, &["/properties/part"])
}

/// The object a logged `message.part.updated` (its part) or
/// `message.updated` (its info) carries, as JSON.
pub fn item_of_event(event: &str) -> Option<String> {
    object_of_event(event, &["/properties/part", "/properties/info"])
}

/// The first of `pointers` an event (or the payload it wraps) has, as JSON.
fn object_of_event(event: &str, pointers: &[&str]) -> Option<String> {
    value_of_event(event, pointers).map(|v| v.to_string())
}

/// The first of `pointers` an event (or the payload it wraps) has.
fn value_of_event(event: &str, pointers: &[&str]) -> Option<serde_json::Value> {
    let mut v: serde_json::Value = serde_json::from_str(event).ok()?;
    if v.get("payload").is_some() {
        v = v["payload"].take();
    }
    pointers
        .iter()
        .find_map(|p| v.pointer_mut(p).map(serde_json::Value::take))
}

/// One block to write: a session's new events of one batch, in order.
pub struct Block<'a> {
    pub session_id: &'a str,
    /// The first event's time (ms).
    pub time: i64,
    pub count: i64,
    /// Which event of the block is the last `todo.updated`, if one is:
    /// opening a session finds its todos without unpacking its whole log.
    pub todo: Option<i64>,
    pub slots: Vec<u8>,
    pub data: Vec<u8>,
    /// The events' keys, in order.
    pub keys: Vec<&'a str>,
}

/// The new events (each with the slot it claimed) grouped into blocks, one
/// per session (or more, of `BLOCK_MAX` each), in the order each session
/// first appears. A block's data is taken from `ahead` when it was packed
/// of these very events (`Packed::of_all`), else packed here.
pub fn group<'a>(
    fresh: &[(&'a EventRow, i64)],
    ahead: Option<&Packed>,
) -> Result<Vec<Block<'a>>, String> {
    let mut ahead = ahead.map(|p| p.data.iter());
    by_session(fresh)
        .iter()
        .flat_map(|events| events.chunks(BLOCK_MAX))
        .map(|events| {
            let session_id = events[0].0.session_id.as_str();
            let todo = events
                .iter()
                .rposition(|(e, _)| is_todo(&e.json))
                .map(|i| i as i64);
            let data = match ahead.as_mut().and_then(Iterator::next) {
                Some(data) => data.clone(),
                None => pack(events.iter().map(|(e, _)| e.json.as_str()))?,
            };
            Ok(Block {
                session_id,
                time: events[0].0.time_ms,
                count: events.len() as i64,
                todo,
                slots: slots_blob(events.iter().map(|(_, s)| *s)),
                data,
                keys: events.iter().map(|(e, _)| e.key.as_str()).collect(),
            })
        })
        .collect()
}

/// `events`, each session's together, sessions in the order each first
/// appears.
fn by_session<'a, T: Copy>(events: &[(&'a EventRow, T)]) -> Vec<Vec<(&'a EventRow, T)>> {
    let mut at: std::collections::HashMap<&'a str, usize> = std::collections::HashMap::new();
    let mut out: Vec<Vec<(&'a EventRow, T)>> = Vec::new();
    for &(e, t) in events {
        let i = *at.entry(e.session_id.as_str()).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[i].push((e, t));
    }
    out
}

impl Packed {
    /// The blocks of `events`, all taken as new; `None` when one cannot
    /// be packed (the writer then says why).
    pub fn ahead(events: &[EventRow]) -> Option<Packed> {
        let all: Vec<(&EventRow, ())> = events.iter().map(|e| (e, ())).collect();
        let data = by_session(&all)
            .iter()
            .flat_map(|events| events.chunks(BLOCK_MAX))
            .map(|events| pack(events.iter().map(|(e, _)| e.json.as_str())))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        Some(Packed {
            events: events.len(),
            data,
        })
    }

    /// `packed` when it holds the blocks of `fresh`: every one of the
    /// batch's `events` is new, and they are the events it was packed of.
    pub fn of_all(packed: Option<&Packed>, events: usize, fresh: usize) -> Option<&Packed> {
        packed.filter(|p| p.events == events && fresh == events)
    }
}

/// Whether an event's JSON is a `todo.updated` (`super::snapshot`). The
/// event's own type is the first `"type":` of its JSON (`encode` writes
/// it before the properties, and inside a string the quotes are escaped),
/// so the search stops there: a tool's output of 100 KB is not read, nor
/// taken for a todo list when it quotes one.
pub fn is_todo(json: &str) -> bool {
    const TYPE: &str = "\"type\":";
    json.find(TYPE)
        .is_some_and(|at| json[at + TYPE.len()..].starts_with("\"todo.updated\""))
}

pub fn slots_blob(slots: impl Iterator<Item = i64>) -> Vec<u8> {
    slots.flat_map(i64::to_le_bytes).collect()
}

pub fn slots_of(blob: &[u8]) -> Vec<i64> {
    blob.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

/// Events' JSON, length-prefixed (a JSON text from a file may hold
/// newlines), compressed as one frame.
pub fn pack<'a>(lines: impl Iterator<Item = &'a str>) -> Result<Vec<u8>, String> {
    // Its room made once: a block of real parts is megabytes, and a
    // buffer doubling as it grows is copied each time.
    let lines: Vec<&str> = lines.collect();
    let mut raw = Vec::with_capacity(lines.iter().map(|l| 4 + l.len()).sum());
    for line in lines {
        raw.extend_from_slice(&(line.len() as u32).to_le_bytes());
        raw.extend_from_slice(line.as_bytes());
    }
    compress(&raw)
}

/// A block's events back, in order. A damaged block says so.
pub fn unpack(data: &[u8]) -> Result<Vec<String>, String> {
    let raw = decompress(data)?;
    spans(&raw)?
        .into_iter()
        .map(|span| event_at(&raw, span))
        .collect()
}

/// The event at `span` of a decompressed block (`spans`).
pub fn event_at(raw: &[u8], span: std::ops::Range<usize>) -> Result<String, String> {
    std::str::from_utf8(&raw[span])
        .map(str::to_string)
        .map_err(|_| damaged())
}

/// Where each event's JSON is in a decompressed block, in order.
pub fn spans(raw: &[u8]) -> Result<Vec<std::ops::Range<usize>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let len = raw
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .ok_or_else(damaged)? as usize;
        let start = at + 4;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= raw.len())
            .ok_or_else(damaged)?;
        out.push(start..end);
        at = end;
    }
    Ok(out)
}

fn damaged() -> String {
    "a damaged block of the event log".to_string()
}

thread_local! {
    /// One compressor per thread, kept: making one costs more than
    /// compressing a part.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

pub fn compress(raw: &[u8]) -> Result<Vec<u8>, String> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Compressor::new(LEVEL).map_err(|e| format!("zstd: {e}"))?);
        }
        let c = c.as_mut().expect("made above");
        c.compress(raw).map_err(|e| format!("cannot compress: {e}"))
    })
}

pub fn decompress(data: &[u8]) -> Result<Vec<u8>, String> {
    zstd::stream::decode_all(data).map_err(|e| format!("a damaged block: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(session: &str, key: &str, json: &str) -> EventRow {
        EventRow {
            key: key.into(),
            session_id: session.into(),
            time_ms: 5,
            json: json.into(),
        }
    }

    #[test]
    fn a_block_gives_back_its_events_in_order_newlines_and_all() {
        let lines = ["{\"a\":1}", "{\n \"b\": \"two\"\n}", "", "{\"c\":\"é\"}"];
        let data = pack(lines.iter().copied()).unwrap();
        assert_eq!(unpack(&data).unwrap(), lines);
    }

    #[test]
    fn a_damaged_block_is_an_error_not_a_panic() {
        let mut data = pack(["{\"a\":1}"].into_iter()).unwrap();
        data.truncate(data.len() / 2);
        assert!(unpack(&data).is_err());
        assert!(unpack(b"not zstd").is_err());
    }

    #[test]
    fn events_group_by_session_in_order_with_their_todos() {
        let todo = r#"{"type":"todo.updated","properties":{"sessionID":"s1","todos":[]}}"#;
        let rows = [
            event("s1", "k1", "1"),
            event("s2", "k2", "2"),
            event("s1", "k3", todo),
            event("s1", "k4", "4"),
        ];
        let fresh: Vec<(&EventRow, i64)> = rows.iter().zip([10, 20, 30, 40]).collect();
        let blocks = group(&fresh, None).unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].session_id, "s1");
        assert_eq!(unpack(&blocks[0].data).unwrap(), ["1", todo, "4"]);
        assert_eq!(slots_of(&blocks[0].slots), [10, 30, 40]);
        assert_eq!(blocks[0].todo, Some(1));
        assert_eq!(blocks[1].todo, None);
        // Its own type, not one its properties quote.
        let quoting =
            r#"{"type":"message.part.updated","properties":{"part":{"type":"todo.updated"}}}"#;
        assert!(!is_todo(quoting));
        assert!(is_todo(
            r#"{"directory":"/a \"type\":","payload":{"id":"evt_1","type":"todo.updated","properties":{}}}"#
        ));
        let many: Vec<EventRow> = (0..BLOCK_MAX + 3)
            .map(|i| event("s1", &format!("k{i}"), "x"))
            .collect();
        let fresh: Vec<(&EventRow, i64)> = many.iter().map(|e| (e, 1)).collect();
        let blocks = group(&fresh, None).unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1].count, 3);
    }

    /// Blocks packed ahead of the write are the blocks the write packs, and
    /// are taken only when every event of their batch is new.
    #[test]
    fn blocks_packed_ahead_are_the_ones_packed_at_the_write() {
        let todo = r#"{"type":"todo.updated","properties":{"sessionID":"s2","todos":[]}}"#;
        let mut rows: Vec<EventRow> = (0..BLOCK_MAX + 5)
            .map(|i| {
                event(
                    ["s1", "s2", "s3"][i % 3],
                    &format!("k{i}"),
                    &format!("{{\"n\":{i}}}"),
                )
            })
            .collect();
        rows.extend((0..BLOCK_MAX + 1).map(|i| event("s4", &format!("j{i}"), "{}")));
        rows.push(event("s2", "t", todo));
        let packed = Packed::ahead(&rows).unwrap();
        let fresh: Vec<(&EventRow, i64)> = rows.iter().zip(100..).collect();
        let ahead = Packed::of_all(Some(&packed), rows.len(), fresh.len());
        assert!(ahead.is_some());
        let made_ahead = group(&fresh, ahead).unwrap();
        let made_here = group(&fresh, None).unwrap();
        let shape = |b: &Block<'_>| {
            (
                b.session_id.to_string(),
                b.time,
                b.count,
                b.todo,
                b.slots.clone(),
            )
        };
        // Three sessions of one block, and one of two.
        assert_eq!(made_ahead.len(), 5);
        assert_eq!(
            made_ahead.iter().map(shape).collect::<Vec<_>>(),
            made_here.iter().map(shape).collect::<Vec<_>>()
        );
        for (a, h) in made_ahead.iter().zip(&made_here) {
            assert_eq!(unpack(&a.data).unwrap(), unpack(&h.data).unwrap());
        }
        // One event logged before: the blocks are of the others, packed here.
        let some = &fresh[1..];
        assert!(Packed::of_all(Some(&packed), rows.len(), some.len()).is_none());
        // Events changed since it was packed (fewer of them): not taken.
        assert!(Packed::of_all(Some(&packed), rows.len() - 1, rows.len() - 1).is_none());
    }

    #[test]
    fn slots_keep_a_session_together_and_stay_positive() {
        let a = slot("ses_1", "h0123");
        let b = slot("ses_1", "h4567");
        assert_eq!(a >> KEY_BITS, b >> KEY_BITS);
        assert!(a >= 0 && b >= 0);
        assert_eq!(next_slot(i64::MAX), 0);
    }
}
