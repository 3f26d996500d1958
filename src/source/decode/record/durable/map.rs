//! Mapping a checked Durable Stream event onto the model events a server
//! would have sent (see the parent module for the derived ids).

use serde::Deserialize;
use serde_json::value::to_raw_value;
use serde_json::{Map, Value, json};

use super::{
    CHECKPOINT_EVENT, DurableEvent, build_part, checkpoint, diffs, get, input_text, part_fields,
    session_source,
};
use crate::model::entity::part::PartBody;
use crate::model::{
    Envelope, ErrorInfo, Event, MessageInfo, Part, PromptRequest, SessionInfo, SessionStatus,
    Store, Tokens,
};

/// The model events one Durable Stream event stands for. Sessions and
/// messages are announced the first time they are named, so nothing lands
/// on a placeholder.
pub fn durable_events(ev: DurableEvent, store: &Store) -> Vec<Envelope> {
    let mut m = Mapper {
        store,
        agent: ev.actor.clone().filter(|a| a != "user"),
        ev,
        out: Vec::new(),
        sessions: Vec::new(),
        messages: Vec::new(),
    };
    let (kind, sid, p) = (
        m.ev.kind.clone(),
        m.ev.session_id.clone(),
        m.ev.payload.clone(),
    );
    if !KNOWN.contains(&kind.as_str()) {
        // Counted by type with the bus events we ignore: a newer producer's
        // events show in the summary instead of as damage.
        m.push(Event::Other(kind));
        return m.out;
    }
    let root = m.ev.stream_id.clone();
    m.ensure_session(&root, false);
    if !matches!(kind.as_str(), "lifecycle.session.created" | "agent.spawned") {
        m.ensure_session(&sid, true);
    }
    match kind.as_str() {
        "lifecycle.session.created" | "agent.spawned" => m.session(&p, kind == "agent.spawned"),
        "lifecycle.session.idle" | "agent.completed" => {
            m.push(Event::SessionIdle { session_id: sid })
        }
        "lifecycle.session.compacted" | "lifecycle.compacted" => {
            m.push(Event::SessionCompacted { session_id: sid })
        }
        "execution.tool_result" | "execution.step" => m.tool_result(p),
        "user.input" | "human.input" => m.user_input(&sid, &p),
        "agent.aborted" => m.aborted(sid, &p),
        "agent.error" => m.agent_error(&sid, &p),
        "agent.handoff" => m.handoff(&p),
        "checkpoint.requested" => m.checkpoint_requested(sid, &p),
        "checkpoint.approved" | "checkpoint.rejected" => m.checkpoint_replied(&kind, &p),
        "files.changed" => {
            let diff = diffs(&p).unwrap_or_default();
            m.push(Event::SessionDiff {
                session_id: sid,
                diff,
            });
        }
        _ => {
            let (mid, pid) = (
                get(&p, &["messageID", "message_id"]),
                get(&p, &["partID", "part_id", "id"]),
            );
            m.part(mid, pid, part_fields(&kind, &p));
        }
    }
    m.out
}

/// The types [`durable_events`] maps (the last four as parts).
#[rustfmt::skip]
const KNOWN: [&str; 21] = [
    "lifecycle.session.created", "agent.spawned", "lifecycle.session.idle", "agent.completed",
    "lifecycle.session.compacted", "lifecycle.compacted", "execution.tool_result",
    "execution.step", "user.input", "human.input", "agent.aborted", "agent.error", "agent.handoff",
    "checkpoint.requested", "checkpoint.approved", "checkpoint.rejected", "files.changed",
    "execution.step_start", "execution.step_finish", "execution.tool_use", "files.patched",
];

struct Mapper<'s> {
    store: &'s Store,
    ev: DurableEvent,
    /// The acting agent (`None` for the user).
    agent: Option<String>,
    out: Vec<Envelope>,
    /// Session infos announced by this event.
    sessions: Vec<Value>,
    /// Message infos announced by this event.
    messages: Vec<Value>,
}

impl<'s> Mapper<'s> {
    /// A session error in opencode's `{name, data}` shape.
    fn error(&mut self, sid: &str, error: &Value) {
        if let Ok(raw) = to_raw_value(error) {
            self.push(Event::SessionError {
                session_id: Some(sid.to_string()),
                error: ErrorInfo::from_raw(&raw),
            });
        }
    }

    /// A person's input: a user message, named as the event says.
    fn user_input(&mut self, sid: &str, p: &Map<String, Value>) {
        let mid = get(p, &["messageID", "message_id"])
            .or_else(|| get(p.get("message")?.as_object()?, &["id"]))
            .unwrap_or_else(|| format!("msg_{}", self.ev.id));
        let (agent, part) = (self.agent.clone(), get(p, &["partID", "part_id"]));
        self.user_message(sid, &mid, part, &input_text(p).unwrap_or_default(), agent);
    }

    /// The run was stopped: its error, and the session idle.
    fn aborted(&mut self, sid: String, p: &Map<String, Value>) {
        let reason = get(p, &["reason", "message", "error"]).unwrap_or_else(|| "aborted".into());
        let error = json!({"name": "MessageAbortedError", "data": {"message": reason}});
        self.error(&sid, &error);
        self.push(Event::SessionIdle { session_id: sid });
    }

    /// An error the run may recover from (named by the seed's §4.3,
    /// `stream.query({type: 'agent.error'})`): the session stays as it is.
    fn agent_error(&mut self, sid: &str, p: &Map<String, Value>) {
        match p.get("error") {
            Some(error @ Value::Object(e)) if e.contains_key("name") => self.error(sid, error),
            _ => {
                let message =
                    get(p, &["message", "error", "reason"]).unwrap_or_else(|| "agent error".into());
                self.error(
                    sid,
                    &json!({"name": "AgentError", "data": {"message": message}}),
                );
            }
        }
    }

    /// A handoff, shown where it happened, marked synthetic: our words,
    /// not the model's.
    fn handoff(&mut self, p: &Map<String, Value>) {
        let mut note = String::from("handoff");
        for (word, keys) in [
            (" from ", &["from", "from_agent"][..]),
            (" to ", &["to", "to_agent", "agent"]),
            (": ", &["reason", "summary", "message"]),
        ] {
            if let Some(v) = get(p, keys) {
                note.push_str(word);
                note.push_str(&v);
            }
        }
        let fields = json!({"type": "text", "text": note, "synthetic": true});
        self.part(None, None, fields.as_object().cloned().unwrap_or_default());
    }

    /// A checkpoint asks a person: a permission (a request naming only its
    /// call: the message is the tool part's).
    fn checkpoint_requested(&mut self, sid: String, p: &Map<String, Value>) {
        let Ok(mut request) = checkpoint(p, &self.ev.id) else {
            return;
        };
        if let Some(tool) = &mut request.tool
            && tool.message_id.is_empty()
            && let Some(part) = self.find_tool(&sid, None, Some(&tool.call_id))
        {
            tool.message_id = part.message_id.clone();
        }
        request.session_id = sid;
        self.push(Event::PermissionAsked(Box::new(request)));
    }

    /// A checkpoint answered: `always` when the approval says so; otherwise
    /// an approval is `once`.
    fn checkpoint_replied(&mut self, kind: &str, p: &Map<String, Value>) {
        let reply = match (kind, get(p, &["reply", "response"]).as_deref()) {
            ("checkpoint.rejected", _) => "reject",
            (_, Some("always")) => "always",
            _ => "once",
        };
        self.reply(get(p, &["requestID", "request_id", "id"]), reply);
    }

    fn push(&mut self, event: Event) {
        let received_ms = self.ev.timestamp;
        self.out.push(Envelope {
            received_ms,
            ..Envelope::new(event)
        });
    }

    fn now(&self) -> i64 {
        self.ev.timestamp.unwrap_or(0)
    }

    /// A session's info as JSON: announced by this event, else stored.
    fn session_info(&self, id: &str) -> Option<Value> {
        if let Some(v) = self.sessions.iter().rev().find(|v| v["id"] == id) {
            return Some(v.clone());
        }
        let session = self.store.session(id).filter(|s| !s.placeholder)?;
        serde_json::from_str(session.info.raw.as_ref()?.get()).ok()
    }

    fn announce_session(&mut self, info: Value, created: bool) {
        let Some(parsed) = to_raw_value(&info)
            .ok()
            .and_then(|r| SessionInfo::from_raw(&r).ok())
        else {
            return;
        };
        let parsed = Box::new(parsed);
        self.push(if created {
            Event::SessionCreated(parsed)
        } else {
            Event::SessionUpdated(parsed)
        });
        self.sessions.push(info);
    }

    /// Announce a session named for the first time: under the stream root
    /// unless it is the root, titled after the acting agent when the event
    /// is its own.
    fn ensure_session(&mut self, id: &str, own_event: bool) {
        let known = self.sessions.iter().any(|v| v["id"] == id)
            || self.store.session(id).is_some_and(|s| !s.placeholder);
        if known {
            return;
        }
        let at = self.now();
        let mut info = json!({"id": id, "title": "", "time": {"created": at, "updated": at}});
        if id != self.ev.stream_id {
            info["parentID"] = json!(self.ev.stream_id);
        }
        if own_event && let Some(agent) = &self.agent {
            info["title"] = json!(agent);
            info["agent"] = json!(agent);
        }
        self.announce_session(info, true);
    }

    /// `lifecycle.session.created` / `agent.spawned`: create the session, or
    /// complete what an earlier mention announced.
    fn session(&mut self, p: &Map<String, Value>, spawned: bool) {
        let (sid, at, src) = (self.ev.session_id.clone(), self.now(), session_source(p));
        let existing = self.session_info(&sid);
        let created = existing.is_none();
        let mut info =
            existing.unwrap_or_else(|| json!({"id": sid, "title": "", "time": {"created": at}}));
        // A named parent wins; else the one announced earlier; else the root.
        if let Some(parent) = get(src, &["parentID", "parent_id"]).filter(|p| *p != sid) {
            info["parentID"] = json!(parent);
        } else if info["parentID"].is_null() && sid != self.ev.stream_id {
            info["parentID"] = json!(self.ev.stream_id);
        }
        let agent = get(src, &["agent", "name"]).or_else(|| self.agent.clone());
        let spawned_title = if spawned {
            get(src, &["description"])
        } else {
            None
        };
        if let Some(title) = get(src, &["title"]).or(spawned_title) {
            info["title"] = json!(title);
        } else if let Some(agent) = agent.as_ref().filter(|_| info["title"] == "") {
            info["title"] = json!(agent);
        }
        if let Some(agent) = &agent {
            info["agent"] = json!(agent);
        }
        if let Some(dir) = get(src, &["directory"]) {
            info["directory"] = json!(dir);
        }
        info["time"]["updated"] = json!(info["time"]["updated"].as_i64().unwrap_or(at).max(at));
        self.announce_session(info, created);
        if spawned {
            self.push(Event::SessionStatus {
                session_id: sid.clone(),
                status: SessionStatus::Busy,
            });
        }
        if let Some(prompt) = get(src, &["prompt"]) {
            // The subagent's task, addressed to it, as opencode's task prompt is.
            let mid = format!("msg_{}", self.ev.id);
            self.user_message(&sid, &mid, None, &prompt, agent);
        }
    }

    fn user_message(
        &mut self,
        sid: &str,
        mid: &str,
        part_id: Option<String>,
        text: &str,
        agent: Option<String>,
    ) {
        if !self.message_known(sid, mid) {
            let mut info = json!({"id": mid, "sessionID": sid, "role": "user", "time": {"created": self.now()}});
            if let Some(agent) = agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(info);
        }
        let pid = part_id.unwrap_or_else(|| self.ev.id.clone());
        let fields = json!({"type": "text", "text": text});
        if let Some(part) = build_part(fields.as_object().unwrap_or(&Map::new()), &pid, mid, sid) {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    /// A message's info as JSON: announced by this event, else stored.
    fn message_info(&self, sid: &str, mid: &str) -> Option<Value> {
        if let Some(v) = self
            .messages
            .iter()
            .rev()
            .find(|v| v["sessionID"] == sid && v["id"] == mid)
        {
            return Some(v.clone());
        }
        let message = self
            .store
            .session(sid)?
            .message(mid)
            .filter(|m| !m.placeholder)?;
        serde_json::from_str(message.info.raw.as_ref()?.get()).ok()
    }

    fn message_known(&self, sid: &str, mid: &str) -> bool {
        self.messages
            .iter()
            .any(|v| v["sessionID"] == sid && v["id"] == mid)
            || self
                .store
                .session(sid)
                .and_then(|s| s.message(mid))
                .is_some_and(|m| !m.placeholder)
    }

    fn announce_message(&mut self, info: Value) {
        if let Some(parsed) = to_raw_value(&info)
            .ok()
            .and_then(|r| MessageInfo::from_raw(&r).ok())
        {
            self.push(Event::MessageUpdated(Box::new(parsed)));
            self.messages.push(info);
        }
    }

    /// The ids of a session's messages with `role`, newest first, this
    /// event's announcements before the stored ones.
    fn message_ids(&self, sid: &str, role: &str) -> Vec<String> {
        let announced = self
            .messages
            .iter()
            .rev()
            .filter(|v| v["sessionID"] == sid && v["role"] == role);
        let mut ids: Vec<String> = announced
            .filter_map(|v| v["id"].as_str().map(str::to_string))
            .collect();
        if let Some(session) = self.store.session(sid) {
            let user = role == "user";
            let stored = session
                .messages
                .iter()
                .rev()
                .filter(|m| m.info.is_user() == user);
            ids.extend(stored.map(|m| m.info.id.clone()));
        }
        ids
    }

    /// The assistant message this event's part belongs to, announced when new.
    fn assistant(&mut self, sid: &str, explicit: Option<String>) -> String {
        let user = self.message_ids(sid, "user").into_iter().next();
        let run = self
            .ev
            .correlation_id
            .clone()
            .unwrap_or_else(|| self.ev.stream_id.clone());
        // The message the run already has here; else a new one answering the
        // newest user message and sorting right after it (`.` sorts before
        // any ULID digit, so a run before the first input stays before it).
        let suffix = format!(".{run}");
        let mid = explicit
            .or_else(|| {
                self.message_ids(sid, "assistant")
                    .into_iter()
                    .find(|id| id.ends_with(&suffix))
            })
            .unwrap_or_else(|| format!("{}{suffix}", user.as_deref().unwrap_or("msg_")));
        if !self.message_known(sid, &mid) {
            let mut info = json!({"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": self.now()}});
            if let Some(user) = user {
                info["parentID"] = json!(user);
            }
            if let Some(agent) = &self.agent {
                info["agent"] = json!(agent);
            }
            self.announce_message(info);
        }
        mid
    }

    /// A tool part of the session with `part_id`, else holding `call_id`.
    fn find_tool(
        &self,
        sid: &str,
        part_id: Option<&str>,
        call_id: Option<&str>,
    ) -> Option<&'s Part> {
        let session = self.store.session(sid)?;
        let mut tools = session
            .messages
            .iter()
            .rev()
            .flat_map(|m| m.parts.iter().rev());
        let by_id = |p: &&Part| p.tool().is_some() && Some(p.id.as_str()) == part_id;
        let by_call = |p: &&Part| {
            p.tool()
                .is_some_and(|t| Some(t.call_id.as_str()) == call_id && !t.call_id.is_empty())
        };
        tools.clone().find(by_id).or_else(|| tools.find(by_call))
    }

    fn part(
        &mut self,
        message_id: Option<String>,
        part_id: Option<String>,
        fields: Map<String, Value>,
    ) {
        let sid = self.ev.session_id.clone();
        let kind = fields["type"].as_str().unwrap_or("").to_string();
        // A tool reported again (pending → running → completed) without a
        // part id updates the part its call already has.
        let call = fields
            .get("callID")
            .and_then(Value::as_str)
            .filter(|_| kind == "tool" && part_id.is_none());
        let earlier = call.and_then(|c| self.find_tool(&sid, None, Some(c)));
        let (mid, pid) = match earlier.map(|p| (p.message_id.clone(), p.id.clone())) {
            Some(found) => found,
            None => (
                self.assistant(&sid, message_id),
                part_id.unwrap_or_else(|| self.ev.id.clone()),
            ),
        };
        let Some(part) = build_part(&fields, &pid, &mid, &sid) else {
            return;
        };
        if kind == "step-start" {
            self.push(Event::SessionStatus {
                session_id: sid.clone(),
                status: SessionStatus::Busy,
            });
        }
        let stored = self
            .store
            .session(&sid)
            .and_then(|s| s.message(&mid)?.part(&pid))
            .is_some();
        let step = match &part.body {
            PartBody::StepFinish(step) if !stored => Some(step.clone()),
            _ => None,
        };
        self.push(Event::PartUpdated(Box::new(part)));
        if let Some(step) = step {
            // The bus reports message and session totals; here only steps do.
            if let Some(mut info) = self.message_info(&sid, &mid) {
                add_usage(&mut info, step.cost, &step.tokens);
                info["finish"] = json!(step.reason);
                // A step that asked for tools is followed by another one.
                if step.reason != "tool-calls" {
                    info["time"]["completed"] = json!(self.now());
                }
                self.announce_message(info);
            }
            if let Some(mut info) = self.session_info(&sid) {
                add_usage(&mut info, step.cost, &step.tokens);
                info["time"]["updated"] = json!(
                    info["time"]["updated"]
                        .as_i64()
                        .unwrap_or(0)
                        .max(self.now())
                );
                self.announce_session(info, false);
            }
        }
    }

    /// `execution.tool_result`: the tool part named by the payload, by the
    /// causing event (the `tool_use`, whose id the part took) or holding the
    /// same call, completed with the result; a new one when there is none.
    fn tool_result(&mut self, mut p: Map<String, Value>) {
        let sid = self.ev.session_id.clone();
        let (pid, call) = (get(&p, &["partID", "part_id", "id"]), get(&p, &["callID"]));
        let named = pid.clone().or_else(|| self.ev.causation_id.clone());
        let found = self.find_tool(&sid, named.as_deref(), call.as_deref());
        let (mid, pid, mut part) = match found
            .map(|t| (t.message_id.clone(), t.id.clone(), t.to_value()))
        {
            Some(found) => found,
            None => {
                let tool = get(&p, &["tool"]).unwrap_or_else(|| "tool".into());
                let part = json!({"type": "tool", "tool": tool, "callID": call.unwrap_or_default(), "state": {"input": {}}});
                let mid = self.assistant(&sid, get(&p, &["messageID", "message_id"]));
                (mid, pid.unwrap_or_else(|| self.ev.id.clone()), part)
            }
        };
        let mut state = part["state"].as_object().cloned().unwrap_or_default();
        let given = p
            .remove("state")
            .and_then(|s| s.as_object().cloned())
            .unwrap_or_default();
        let explicit = given.contains_key("status");
        state.extend(given);
        for key in ["input", "output", "title", "metadata", "error"] {
            if let Some(v) = p.remove(key).filter(|v| !v.is_null()) {
                state.insert(key.into(), v);
            }
        }
        if !explicit {
            let failed = state.get("error").is_some_and(|e| !e.is_null());
            state.insert(
                "status".into(),
                json!(if failed { "error" } else { "completed" }),
            );
        }
        let mut time = state
            .get("time")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        time.entry("start").or_insert(json!(self.now()));
        time.entry("end").or_insert(json!(self.now()));
        state.insert("time".into(), Value::Object(time));
        part["state"] = Value::Object(state);
        if let Some(part) = part
            .as_object()
            .and_then(|f| build_part(f, &pid, &mid, &sid))
        {
            self.push(Event::PartUpdated(Box::new(part)));
        }
    }

    /// `checkpoint.approved|rejected`: the reply to the request the payload
    /// names, else the causing event does (the request's id, or the event
    /// that asked when the request had an id of its own).
    fn reply(&mut self, named: Option<String>, reply: &str) {
        let by_cause = || {
            let cause = self.ev.causation_id.clone()?;
            let asked = self.store.prompts().iter().find(|p| match &p.request {
                PromptRequest::Permission(r) => {
                    r.metadata.get(CHECKPOINT_EVENT) == Some(&json!(cause))
                }
                PromptRequest::Question(_) => false,
            });
            Some(asked.map_or(cause, |p| p.request.id().to_string()))
        };
        // With nothing to name the request, the reducer counts an orphan.
        let request_id = named
            .or_else(by_cause)
            .unwrap_or_else(|| self.ev.id.clone());
        let session_id = match self.store.prompt(&request_id) {
            Some(p) => p.request.session_id().to_string(),
            None => self.ev.session_id.clone(),
        };
        self.push(Event::PermissionReplied {
            session_id,
            request_id,
            reply: reply.into(),
        });
    }
}

/// Add a step's cost and tokens to a message's or session's info (JSON).
fn add_usage(info: &mut Value, cost: f64, step: &Tokens) {
    info["cost"] = json!(info["cost"].as_f64().unwrap_or(0.0) + cost);
    let old = Tokens::deserialize(&info["tokens"]).unwrap_or_default();
    let mut sum = json!({
        "input": old.input + step.input,
        "output": old.output + step.output,
        "reasoning": old.reasoning + step.reasoning,
        "cache": {"read": old.cache.read + step.cache.read, "write": old.cache.write + step.cache.write},
    });
    if old.total.is_some() || step.total.is_some() {
        sum["total"] = json!(old.sum() + step.sum());
    }
    info["tokens"] = sum;
}
