//! `ocview export`: Markdown transcripts, and normalised JSON that reads
//! back as the same session.

mod common;

use ocview::export::{self, ExportFormat};

#[test]
fn markdown_transcripts() {
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("b_edit_write_diff/event.jsonl"));
    let md = export::render(
        &export::pick(&store, None).unwrap(),
        ExportFormat::Markdown,
        false,
    );
    assert!(
        md.contains("**Tool `edit`** (completed)")
            && md.contains("```diff")
            && md.contains("+    # friendlier greeting"),
        "{md}"
    );
    insta::assert_snapshot!("edit_write_diff_md", md);
    let (store, _) =
        common::replay_file(&common::fixtures_dir().join("f_reasoning_markdown/event.jsonl"));
    let sessions = export::pick(&store, None).unwrap();
    let with = export::render(&sessions, ExportFormat::Markdown, true);
    let without = export::render(&sessions, ExportFormat::Markdown, false);
    assert!(
        with.contains("> The user wants a refactoring plan")
            && !without.contains("> The user wants")
    );
}

#[test]
fn normalised_json_reads_back_as_the_same_session() {
    for scenario in common::scenarios() {
        let (store, _) = common::replay_file(&scenario.join("event.jsonl"));
        let root = store.root_sessions().next().unwrap().info.id.clone();
        let json = export::render(
            &export::pick(&store, Some(&root)).unwrap(),
            ExportFormat::Json,
            false,
        );
        let (back, stats) = common::replay_bytes(json.as_bytes());
        assert_eq!(
            stats.malformed,
            0,
            "{}: {:?}",
            scenario.display(),
            stats.problems()
        );
        let a = store.session(&root).unwrap();
        let b = back.session(&root).unwrap();
        assert_eq!(a.messages.len(), b.messages.len());
        for (ma, mb) in a.messages.iter().zip(&b.messages) {
            assert_eq!(ma.info.id, mb.info.id);
            let pa: Vec<String> = ma
                .parts
                .iter()
                .filter(|p| !p.is_stream_only())
                .map(|p| p.to_value().to_string())
                .collect();
            let pb: Vec<String> = mb.parts.iter().map(|p| p.to_value().to_string()).collect();
            assert_eq!(pa, pb, "{}", scenario.display());
        }
    }
}

#[test]
fn an_unknown_session_is_a_clear_error() {
    let path = common::fixtures_dir().join("a_bash_permission_once/event.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["export"])
        .arg(&path)
        .args(["--session", "ses_nope", "--format", "json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session ses_nope"));
}
