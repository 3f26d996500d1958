//! A fixture of the archive's suites.

/// Two sessions that differ in every way a filter can tell.
pub const TWO_SESSIONS: &str = r#"{"type":"session.updated","properties":{"info":{"id":"ses_alpha","title":"Billing fixes","directory":"/work/alpha","time":{"created":1700000000000,"updated":1700000000000}}}}
{"type":"message.updated","properties":{"info":{"id":"msg_a1","sessionID":"ses_alpha","role":"assistant","agent":"build","providerID":"anthropic","modelID":"claude-x","time":{"created":1700000000000}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_a1","messageID":"msg_a1","sessionID":"ses_alpha","type":"text","text":"The invoice total was wrong"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_a2","messageID":"msg_a1","sessionID":"ses_alpha","type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"grep invoice src/billing.rs"},"output":"invoice.rs:12","title":"grep","metadata":{},"time":{"start":1700000001000,"end":1700000002000}}}}}
{"type":"session.updated","properties":{"info":{"id":"ses_beta","title":"Docs pass","directory":"/work/beta","time":{"created":1710000000000,"updated":1710000000000}}}}
{"type":"message.updated","properties":{"info":{"id":"msg_b1","sessionID":"ses_beta","role":"assistant","agent":"plan","providerID":"openai","modelID":"gpt-y","time":{"created":1710000000000}}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_b1","messageID":"msg_b1","sessionID":"ses_beta","type":"reasoning","text":"An invoice template needs docs"}}}
{"type":"message.part.updated","properties":{"part":{"id":"prt_b2","messageID":"msg_b1","sessionID":"ses_beta","type":"tool","tool":"edit","callID":"c2","state":{"status":"error","input":{"filePath":"/work/beta/README.md"},"error":"invoice section not found","time":{"start":1710000001000,"end":1710000002000}}}}}
"#;
