//! A permission or question request as the `*.asked` event's properties,
//! in the server's own shape, so the log's line decodes to the same request.

use serde_json::{Map, Value, json};

use crate::model::entity::prompt::{PermissionRequest, QuestionRequest, ToolRef};

fn tool(tool: &Option<ToolRef>, into: &mut Map<String, Value>) {
    if let Some(t) = tool {
        into.insert(
            "tool".into(),
            json!({"messageID": t.message_id, "callID": t.call_id}),
        );
    }
}

pub fn permission(p: &PermissionRequest) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(p.id));
    out.insert("sessionID".into(), json!(p.session_id));
    out.insert("permission".into(), json!(p.permission));
    out.insert("patterns".into(), json!(p.patterns));
    out.insert("metadata".into(), p.metadata.clone());
    out.insert("always".into(), json!(p.always));
    tool(&p.tool, &mut out);
    if let Some(title) = &p.title {
        out.insert("title".into(), json!(title));
    }
    Value::Object(out)
}

pub fn question(q: &QuestionRequest) -> Value {
    let questions: Vec<Value> = q
        .questions
        .iter()
        .map(|x| {
            let options: Vec<Value> = x
                .options
                .iter()
                .map(|o| json!({"label": o.label, "description": o.description}))
                .collect();
            let mut one = json!({"question": x.question, "header": x.header,
                                 "options": options, "multiple": x.multiple});
            if let Some(custom) = x.custom {
                one["custom"] = json!(custom);
            }
            one
        })
        .collect();
    let mut out = Map::new();
    out.insert("id".into(), json!(q.id));
    out.insert("sessionID".into(), json!(q.session_id));
    out.insert("questions".into(), Value::Array(questions));
    tool(&q.tool, &mut out);
    Value::Object(out)
}
