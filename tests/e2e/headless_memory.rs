//! Headless modes in bounded memory (issue 26, point 5), measured on the
//! real binary: `export URL` writes page by page (peak within 3× the
//! document), `attach --dump-when-idle` stays within 2× the text it prints
//! (above its own start), and `replay --instant` within 1.3× `--dump`. The
//! page-by-page export writes the same document, byte for byte, as an
//! export of a store that holds the whole session.

use crate::support;

use crate::recordings;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use ocview::app::launch::{DumpWhen, attach_dump, attach_store};
use ocview::headless::export::{self, ExportFormat};
use ocview::source::live::{Client, LiveOptions};
use serde_json::json;
use support::fake_model::{FakeModel, Step, steps};
use support::long_session::{LongSession, markdown_text};
use support::opencode::Server;
use support::tmux::{Tmux, player_position};

const SESSION: &str = "ses_dfd705bd5ffeHeadlessMemory";

async fn import(server: &Server, messages: usize) {
    LongSession {
        session: SESSION,
        title: "A long session to export",
        messages,
        id_tail: &|i| format!("Headless{i:06}"),
        text: &|i| markdown_text(i, 8),
    }
    .import(server)
    .await;
}

fn ocview() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.env_remove("OPENCODE_SERVER_PASSWORD")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    c
}

/// Run ocview with `args`, its output into `out`; its peak memory in KiB.
fn peak_of(args: &[&str], out: &Path) -> u64 {
    let file = std::fs::File::create(out).unwrap();
    let run = support::peak::run(ocview().args(args).stdout(file));
    assert_eq!(run.code, Some(0), "ocview {args:?} failed");
    run.peak_kib
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The export as today's store-whole path writes it: every message loaded
/// into the store, then rendered.
async fn whole_store_export(
    url: &str,
    session: Option<&str>,
    format: &str,
    reasoning: bool,
) -> String {
    let options = LiveOptions {
        load_all_messages: true,
        ..Default::default()
    };
    let when = DumpWhen::Idle {
        timeout: Duration::from_secs(60),
    };
    let app = attach_store(Client::new(url, None), options, when)
        .await
        .unwrap();
    let format = match format {
        "json" => ExportFormat::Json,
        _ => ExportFormat::Markdown,
    };
    export::render(
        &export::pick(&app.store, session).unwrap(),
        format,
        reasoning,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_url_writes_the_same_document_as_the_whole_store_export() {
    let model = FakeModel::start(steps(vec![
        Step::text("Let me plan that.")
            .reasoning("The user wants **a plan**.")
            .then_tool(
                "todowrite",
                json!({"todos": [
                    {"content": "write the tests", "status": "in_progress", "priority": "high"},
                    {"content": "ship it", "status": "pending", "priority": "low"}
                ]}),
            ),
        Step::text("Planned:\n\n```rust\nfn main() {}\n```\n"),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let prompted = server.create_session().await;
    server.prompt(&prompted, "Plan the work").await;
    server.wait_idle(&prompted, 60).await;
    // Pages of 200 from the newest: 1,101 messages cut turns in two.
    import(&server, 1_101).await;
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export");
    for (session, format, reasoning) in [
        (None, "md", true),
        (None, "json", false),
        (Some(SESSION), "md", false),
        (Some(SESSION), "json", false),
        (Some(prompted.as_str()), "md", false),
    ] {
        let mut args = vec!["export", &url, "--format", format];
        if let Some(s) = session {
            args.extend(["--session", s]);
        }
        if reasoning {
            args.push("--reasoning");
        }
        peak_of(&args, &out);
        let paged = std::fs::read_to_string(&out).unwrap();
        let whole = whole_store_export(&url, session, format, reasoning).await;
        assert!(paged.len() > 200, "{args:?}: {paged}");
        if paged != whole {
            let at = paged
                .bytes()
                .zip(whole.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(paged.len().min(whole.len()));
            panic!(
                "{args:?}: differs at byte {at} ({} against {} bytes):\npaged: {:?}\nwhole: {:?}",
                paged.len(),
                whole.len(),
                &paged[at.saturating_sub(200)..(at + 200).min(paged.len())],
                &whole[at.saturating_sub(200)..(at + 200).min(whole.len())],
            );
        }
    }
    let md = whole_store_export(&url, None, "md", true).await;
    for shown in [
        "**Tool `todowrite`**",
        "> The user wants **a plan**.",
        "## Todos",
        "Message 1100: ",
    ] {
        assert!(md.contains(shown), "the export shows {shown:?}");
    }
}

/// `--dump-when-idle` as the store-whole path writes it: every message of
/// every session loaded into the store, then the transcript.
async fn whole_store_dump(url: &str) -> String {
    let options = LiveOptions {
        load_all_messages: true,
        ..Default::default()
    };
    let when = DumpWhen::Idle {
        timeout: Duration::from_secs(60),
    };
    attach_dump(Client::new(url, None), options, when)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dump_when_idle_writes_the_same_transcript_as_the_whole_store_dump() {
    let model = FakeModel::start(steps(vec![
        Step::text("Let me plan that.")
            .reasoning("The user wants **a plan**.")
            .then_tool(
                "todowrite",
                json!({"todos": [
                    {"content": "write the tests", "status": "in_progress", "priority": "high"},
                    {"content": "ship it", "status": "pending", "priority": "low"}
                ]}),
            ),
        Step::text("Planned:\n\n```rust\nfn main() {}\n```\n"),
    ]))
    .await;
    let server = Server::start(&model.url()).await;
    let prompted = server.create_session().await;
    server.prompt(&prompted, "Plan the work").await;
    server.wait_idle(&prompted, 60).await;
    // Pages of 200 from the newest: 1,101 messages cut turns in two.
    import(&server, 1_101).await;
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dump");
    peak_of(&["attach", &url, "--dump-when-idle"], &out);
    let paged = std::fs::read_to_string(&out).unwrap();
    let whole = whole_store_dump(&url).await;
    for shown in [
        "sessions: 2",
        "tool todowrite [completed]",
        "reasoning:",
        "todos:",
        "  [~] (high) write the tests",
        "Message 1100: ",
        "-- turn 551",
    ] {
        assert!(whole.contains(shown), "the dump shows {shown:?}:\n{whole}");
    }
    if paged != whole {
        let at = paged
            .bytes()
            .zip(whole.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(paged.len().min(whole.len()));
        panic!(
            "differs at byte {at} ({} against {} bytes):\npaged: {:?}\nwhole: {:?}",
            paged.len(),
            whole.len(),
            &paged[at.saturating_sub(300)..(at + 300).min(paged.len())],
            &whole[at.saturating_sub(300)..(at + 300).min(whole.len())],
        );
    }
}

/// Below this, a peak is the process itself, not what it holds.
const FLOOR_KIB: u64 = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_url_of_a_long_session_peaks_within_three_times_the_document() {
    let messages: usize = std::env::var("OCVIEW_EXPORT_TEST_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    import(&server, messages).await;
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let mut over = Vec::new();
    for format in ["md", "json"] {
        let out = dir.path().join(format);
        let peak = peak_of(&["export", &url, "--format", format], &out);
        let size = std::fs::metadata(&out).unwrap().len() / 1024;
        let bound = (3 * size).max(FLOOR_KIB);
        eprintln!(
            "export {format} of {messages} messages: {:.1} MiB written, peak {:.1} MiB ({:.2}× the document), bound {:.1} MiB",
            mib(size),
            mib(peak),
            peak as f64 / size as f64,
            mib(bound)
        );
        if peak > bound {
            over.push(format);
        }
    }
    assert!(over.is_empty(), "over the bound: {over:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dump_when_idle_stays_within_twice_the_text_it_prints() {
    let messages: usize = std::env::var("OCVIEW_EXPORT_TEST_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let model = FakeModel::start(steps(vec![])).await;
    let server = Server::start(&model.url()).await;
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dump");
    let args = ["attach", &url, "--dump-when-idle"];
    // The same mode with nothing to print: the process's own start.
    let base = peak_of(&args, &out);
    import(&server, messages).await;
    let peak = peak_of(&args, &out);
    let text = std::fs::metadata(&out).unwrap().len() / 1024;
    let dump = std::fs::read_to_string(&out).unwrap();
    assert!(
        dump.contains("Message 42: "),
        "{}",
        &dump[..dump.len().min(2000)]
    );
    let above = peak.saturating_sub(base);
    eprintln!(
        "--dump-when-idle of {messages} messages: {:.1} MiB printed, peak {:.1} MiB, {:.1} MiB at start: {:.2}× the text above it",
        mib(text),
        mib(peak),
        mib(base),
        above as f64 / text as f64
    );
    assert!(
        above <= 2 * text,
        "{above} KiB above the start for {text} KiB of text"
    );
}

fn vm_hwm(pid: u32) -> Option<u64> {
    support::proc_status::kib(Some(pid), "VmHWM").map(|k| k as u64)
}

#[test]
fn replay_instant_stays_within_1_3_times_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    let mb: usize = std::env::var("OCVIEW_MEMORY_TEST_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    std::fs::write(&path, recordings::long_recording(mb << 20)).unwrap();
    let file = path.display().to_string();
    let dump_peak = peak_of(&["replay", &file, "--dump"], &dir.path().join("dump"));

    let t = Tmux::start("instant");
    t.line(&format!(
        "{} replay {file} --instant",
        env!("CARGO_BIN_EXE_ocview")
    ));
    t.wait_for("the viewer", |s| s.contains("Sessions"));
    let pid = t.ocview_pid();
    let mut peak = 0;
    let screen = t.wait_for_secs("played to the end", 600, |s| {
        peak = peak.max(vm_hwm(pid).unwrap_or(0));
        player_position(s).is_some_and(|(n, total)| n == total && total > 0)
    });
    std::thread::sleep(Duration::from_millis(500));
    peak = peak.max(vm_hwm(pid).unwrap_or(0));
    t.keys(&["q"]);
    eprintln!(
        "{mb} MB recording: --dump peak {:.1} MiB, --instant peak {:.1} MiB ({:.2}×)",
        mib(dump_peak),
        mib(peak),
        peak as f64 / dump_peak as f64
    );
    assert!(
        peak * 10 <= dump_peak * 13,
        "--instant {peak} KiB against --dump {dump_peak} KiB:\n{screen}"
    );
}
