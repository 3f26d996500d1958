//! Other session formats, captured from the real server: the NDJSON of
//! `opencode run --format json` replays to the session the server stored.
//! `ocview export` of a live session equals its export of opencode's.
//! `OCVIEW_UPDATE_FIXTURES=1` keeps the capture under tests/fixtures.

use crate::common;
use crate::support;

use serde_json::json;
use support::fake_model::{FakeModel, Step, steps};
use support::opencode::{Server, binary};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_run_json_replays_to_the_stored_session() {
    let model = FakeModel::start(steps(vec![
        Step::text("Listing.")
            .reasoning("A quick look.")
            .then_tool("read", json!({"filePath": "src/util.py"})),
        Step::text("It defines add(a, b)."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let out = server
        .command(&binary())
        .args([
            "run",
            "--format",
            "json",
            "--thinking",
            "--attach",
            &server.url(),
            "what is in src/util.py?",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ndjson = out.stdout;
    if std::env::var_os("OCVIEW_UPDATE_FIXTURES").is_some() {
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/opencode-run.ndjson"
            ),
            &ndjson,
        )
        .unwrap();
    }
    let (store, stats) = common::replay_bytes(&ndjson);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    assert_eq!(store.sessions().len(), 1);
    let session = &store.sessions()[0];
    let stored = server.messages(&session.info.id).await;
    // Every part the server stored for the assistant is there, by id, with its text and tool state.
    for m in stored.iter().filter(|m| m["info"]["role"] == "assistant") {
        let ours = session
            .message(m["info"]["id"].as_str().unwrap())
            .expect("the message");
        for p in m["parts"].as_array().unwrap() {
            let kind = p["type"].as_str().unwrap();
            if kind == "step-start"
                || kind == "step-finish"
                || kind == "text"
                || kind == "reasoning"
                || kind == "tool"
            {
                let part = ours
                    .part(p["id"].as_str().unwrap())
                    .unwrap_or_else(|| panic!("part {p}"));
                if let Some(t) = p["text"].as_str() {
                    assert_eq!(part.text(), Some(t));
                }
                if kind == "tool" {
                    assert_eq!(
                        part.tool().unwrap().state.status.label(),
                        p["state"]["status"].as_str().unwrap()
                    );
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_export_replays_to_the_stored_session() {
    let model = FakeModel::start(steps(vec![
        Step::text("Exported answer with **markdown**.").reasoning("Thinking."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    server.prompt(&s, "something to export").await;
    server.wait_idle(&s, 60).await;
    // Redirected to a file: through a pipe its output is cut at 64 KiB.
    let file = server.home.join("export.json");
    let status = server
        .command(&binary())
        .args(["export", &s])
        .stdout(std::fs::File::create(&file).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&file).unwrap();
    if std::env::var_os("OCVIEW_UPDATE_FIXTURES").is_some() {
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/opencode-export.json"
            ),
            &bytes,
        )
        .unwrap();
    }
    let (store, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let ours = store.session(&s).expect("the exported session");
    let stored = server.messages(&s).await;
    assert_eq!(ours.messages.len(), stored.len());
    for (m, sm) in ours.messages.iter().zip(&stored) {
        assert_eq!(m.info.id, sm["info"]["id"].as_str().unwrap());
        let ids: Vec<&str> = m.parts.iter().map(|p| p.id.as_str()).collect();
        let stored_ids: Vec<&str> = sm["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, stored_ids);
    }

    // `ocview export` from the live server says what it says from opencode's
    // own export of the same session.
    let ocview_export = |source: &str, format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["export", source, "--session", &s, "--format", format])
            .env_remove("OPENCODE_SERVER_PASSWORD")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "export {source}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let live: serde_json::Value =
        serde_json::from_str(&ocview_export(&server.url(), "json")).unwrap();
    let file: serde_json::Value =
        serde_json::from_str(&ocview_export(file.to_str().unwrap(), "json")).unwrap();
    assert_eq!(live, file);
    let md = ocview_export(&server.url(), "md");
    assert!(
        md.contains("something to export") && md.contains("Exported answer with **markdown**."),
        "{md}"
    );
}

/// What `GET /session/:id/message` returns, saved as it came (the bytes,
/// not a re-serialisation) and replayed: the form is told from the content,
/// and the texts and tools are the ones the server stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_message_list_from_the_server_replays() {
    let model = FakeModel::start(steps(vec![
        Step::text("Reading the util module.")
            .then_tool("read", json!({"filePath": "src/util.py"})),
        Step::text("It defines **add(a, b)**."),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let s = server.create_session().await;
    server.prompt(&s, "what is in util?").await;
    server.wait_idle(&s, 60).await;
    let resp = server
        .http()
        .get(format!("{}/session/{s}/message", server.url()))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let bytes = resp.bytes().await.unwrap().to_vec();
    // The shape as the server sends it: an array of {info, parts}.
    let list: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let first = &list.as_array().unwrap()[0];
    assert!(first["info"]["sessionID"] == s.as_str() && first["parts"].is_array());
    // Saved compact (as curl writes it) and pretty-printed (as `jq .` does).
    let pretty = serde_json::to_vec_pretty(&list).unwrap();
    for (name, input) in [("compact", &bytes), ("pretty", &pretty)] {
        let file = server.home.join(format!("messages-{name}.json"));
        std::fs::write(&file, input).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
            .args(["replay", "--dump"])
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let dump = String::from_utf8(out.stdout).unwrap();
        assert!(
            dump.contains("form: message list (GET /session/:id/message)"),
            "{name}: {dump}"
        );
        assert!(dump.contains(" 0 malformed"), "{name}: {dump}");
        assert!(dump.contains(&format!("== session {s}")), "{dump}");
        for shown in [
            "| what is in util?",
            "| Reading the util module.",
            "tool read [completed]",
            "| It defines **add(a, b)**.",
        ] {
            assert!(dump.contains(shown), "{name}: {shown:?} missing:\n{dump}");
        }
    }
    // Every stored part is in the store, by id.
    let (store, stats) = common::replay_bytes(&bytes);
    assert_eq!(stats.malformed, 0, "{:?}", stats.problems());
    let ours = store.session(&s).expect("the session");
    for m in list.as_array().unwrap() {
        let msg = ours
            .message(m["info"]["id"].as_str().unwrap())
            .expect("the message");
        for p in m["parts"].as_array().unwrap() {
            assert!(msg.part(p["id"].as_str().unwrap()).is_some(), "{p}");
        }
    }
}
