//! Which parts a reader is shown, decided in one place for the turn view,
//! plain mode, the dump and the export.
//!
//! A `todowrite` call and the `todo.updated` event it causes are one thing to
//! a reader. The model keeps both (the event as a stream-only part, seed
//! 000), and this module pairs them: the call's card is shown, with the
//! event's list when that is newer than the call's own (the event arrives
//! while the call is still pending, its input not yet known), and the
//! stream-only part is hidden. A todo event with no call before it (a list
//! changed some other way) is shown on its own.

use std::borrow::Cow;

use serde_json::Value;

use super::message::Message;
use super::part::{Part, PartBody, ToolStatus};
use super::part_source::PartSource;

/// How one part of a message is shown.
#[derive(Debug, Clone, Copy)]
pub enum Shown<'a> {
    /// Not at all: a todo event told by its call's card.
    Hidden,
    /// As it is.
    Itself,
    /// A todo call's card with the list of the event it caused, newer than
    /// the call's own.
    WithTodosOf(&'a Part),
}

fn is_todo_event(part: &Part) -> bool {
    part.source == Some(PartSource::TodoUpdated)
}

fn is_todo_call(part: &Part) -> bool {
    part.source.is_none() && matches!(&part.body, PartBody::Tool(t) if t.tool == "todowrite")
}

/// How part `pi` of `message` is shown. Cheap for every part but the todo
/// ones, which look only as far as the neighbouring todo part.
pub fn shown(message: &Message, pi: usize) -> Shown<'_> {
    let parts = &message.parts;
    let Some(part) = parts.get(pi) else {
        return Shown::Hidden;
    };
    if is_todo_event(part) {
        let paired = parts[..pi]
            .iter()
            .rev()
            .find(|p| is_todo_event(p) || is_todo_call(p))
            .is_some_and(is_todo_call);
        return if paired { Shown::Hidden } else { Shown::Itself };
    }
    if is_todo_call(part)
        && let Some(event) = parts[pi + 1..]
            .iter()
            .find(|p| is_todo_event(p) || is_todo_call(p))
            .filter(|p| is_todo_event(p))
        && event_is_newer(part, event)
    {
        return Shown::WithTodosOf(event);
    }
    Shown::Itself
}

/// The event's list replaces the call's when the call has none yet (it is
/// pending: opencode never streams a tool's input), or when both came from
/// the stream and the event arrived later (stream order, not the ids'
/// clock). A call the server stored (finalisation, a snapshot) has the
/// final word. Read from the typed part: this runs for every visible todo
/// card on every frame.
fn event_is_newer(call: &Part, event: &Part) -> bool {
    let pending = matches!(&call.body, PartBody::Tool(t) if t.state.status == ToolStatus::Pending);
    pending || (call.last_event.seq != 0 && event.last_event.arrived_after(call.last_event))
}

impl<'a> Shown<'a> {
    /// The part to render for `part`, or `None` when it is hidden.
    pub fn resolve(self, part: &'a Part) -> Option<Cow<'a, Part>> {
        match self {
            Shown::Hidden => None,
            Shown::Itself => Some(Cow::Borrowed(part)),
            Shown::WithTodosOf(event) => Some(Cow::Owned(with_todos(part, event))),
        }
    }

    /// The revision of what this decision shows besides the part itself
    /// (render caches key on it).
    pub fn extra_revision(self) -> u64 {
        match self {
            Shown::WithTodosOf(event) => event.revision.wrapping_add(1),
            _ => 0,
        }
    }
}

/// The parts of a message as a reader sees them, in order.
pub fn shown_parts(message: &Message) -> impl Iterator<Item = Cow<'_, Part>> {
    (0..message.parts.len()).filter_map(|pi| shown(message, pi).resolve(&message.parts[pi]))
}

/// The call's part with the event's todo list as its input and metadata.
fn with_todos(call: &Part, event: &Part) -> Part {
    let todos = event
        .tool_state_field("input")
        .and_then(|input| input.get("todos").cloned())
        .unwrap_or(Value::Array(Vec::new()));
    let mut value = call.to_value();
    if let Some(state) = value.get_mut("state").and_then(Value::as_object_mut) {
        for key in ["input", "metadata"] {
            let entry = state
                .entry(key)
                .or_insert_with(|| Value::Object(Default::default()));
            if !entry.is_object() {
                *entry = Value::Object(Default::default());
            }
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("todos".into(), todos.clone());
            }
        }
    }
    let rebuilt = serde_json::value::to_raw_value(&value)
        .ok()
        .and_then(|raw| Part::from_raw(&raw).ok());
    match rebuilt {
        Some(mut part) => {
            part.source = call.source;
            part.revision = call.revision;
            part.last_event = call.last_event;
            part
        }
        None => call.clone(),
    }
}

/// The same pairing for a reader that sees parts one at a time, in stream
/// order (plain mode): a todo event right after its call, with no other todo
/// part between them, is hidden.
#[derive(Debug, Default)]
pub struct TodoPairing {
    /// Messages whose last todo part seen was a call not yet paired.
    open_call: std::collections::HashSet<String>,
    /// Todo events paired with their call (a part is seen more than once).
    hidden: std::collections::HashSet<String>,
}

impl TodoPairing {
    /// Note `part` as seen; whether it is shown.
    pub fn observe(&mut self, part: &Part) -> bool {
        if is_todo_call(part) {
            self.open_call.insert(part.message_id.clone());
            true
        } else if is_todo_event(part) {
            if self.hidden.contains(&part.id) {
                return false;
            }
            if self.open_call.remove(&part.message_id) {
                self.hidden.insert(part.id.clone());
                return false;
            }
            true
        } else {
            true
        }
    }
}
