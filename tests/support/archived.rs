//! Sessions put in an archive as a writer of some origin (another machine,
//! a recording) would, for the tests of the archive's list.

use ocview::archive::collect::Collector;
use ocview::archive::{Engine, Origin};
use ocview::source::ReplayReader;

/// Some time in the past, in ms.
pub const T: i64 = 1_795_339_000_000;

/// A session with one assistant text, updated `ago_s` seconds before `T`.
pub fn session_lines(id: &str, title: &str, dir: &str, text: &str, ago_s: i64) -> String {
    let t = T - ago_s * 1000;
    format!(
        r#"{{"type":"session.updated","properties":{{"info":{{"id":"{id}","title":"{title}","directory":"{dir}","time":{{"created":{t},"updated":{t}}}}}}}}}
{{"type":"message.updated","properties":{{"info":{{"id":"msg_{id}","sessionID":"{id}","role":"assistant","agent":"build","providerID":"anthropic","modelID":"claude-x","time":{{"created":{t}}}}}}}}}
{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_{id}","messageID":"msg_{id}","sessionID":"{id}","type":"text","text":"{text}"}}}}}}
"#
    )
}

/// `lines` written as a writer from `origin` would.
pub fn archive_session(engine: &mut dyn Engine, origin: Origin, lines: &str) {
    let mut collector = Collector::new(origin);
    let mut reader = ReplayReader::new(std::io::Cursor::new(lines.as_bytes().to_vec()));
    while let Some(record) = reader.next_record().unwrap() {
        collector.record(record);
    }
    engine.write(&collector.take()).unwrap();
}

/// A teammate's machine and server.
pub fn teammate() -> Origin {
    Origin {
        server: Some("http://10.0.0.7:4096".into()),
        host: "ana-laptop".into(),
        file: None,
    }
}

/// Another machine's server, which once saw a session too.
pub fn elsewhere() -> Origin {
    Origin {
        server: Some("http://elsewhere:4096".into()),
        host: "other-box".into(),
        file: None,
    }
}

/// The teammate's session the list tests look for ("Teammate fixes
/// billing", id `ses_team1`), updated `ago_s` seconds before `T`.
pub fn archive_teammates_session(engine: &mut dyn Engine, ago_s: i64) {
    archive_session(
        engine,
        teammate(),
        &session_lines(
            "ses_team1",
            "Teammate fixes billing",
            "/home/ana/billing",
            "The invoice rounding is fixed",
            ago_s,
        ),
    );
}
