//! `ocview stats` against `opencode stats` on the same database: the real
//! opencode 1.18.33 runs sessions with two priced models and two agents
//! (the fake model reports different usage per model: input, output,
//! reasoning, cached), then both commands read its database and every
//! figure opencode prints is compared. And a database made by an older
//! release (1.3.2, before sessions stored their totals) reads and sums.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use ocview::source::opencode_db::Db;
use rusqlite::Connection;
use serde_json::{Value, json};
use support::fake_model::{FakeModel, Script, Step};
use support::opencode::{Server, binary, binary_of};

/// The older release: its schema has no session totals (migration
/// `20260510033149_session_usage` came later).
const OLD_VERSION: &str = "1.3.2";

fn script() -> Script {
    std::sync::Arc::new(|req: &Value, n: usize| {
        let two = req["model"].as_str().is_some_and(|m| m.contains("mock-2"));
        let usage = if two {
            json!({"prompt_tokens": 2400, "completion_tokens": 320, "total_tokens": 2720,
                "prompt_tokens_details": {"cached_tokens": 800},
                "completion_tokens_details": {"reasoning_tokens": 120}})
        } else {
            json!({"prompt_tokens": 1500 + 10 * n as u64, "completion_tokens": 75, "total_tokens": 1575})
        };
        let (text, _) = support::fake_model::last_turn(req);
        let step = if text.contains("read the readme") && n == 0 {
            Step::text("Reading.").then_tool("read", json!({"filePath": "README.md"}))
        } else {
            Step::text("Done with that.")
        };
        step.usage(usage)
    })
}

/// Two models with their prices (per million tokens).
fn priced_config(server: &Server, model_url: &str) {
    let config = json!({
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": model_url, "apiKey": "x"},
            "models": {
                "mock-1": {"tool_call": true, "reasoning": true, "limit": {"context": 200000, "output": 32000},
                    "cost": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}},
                "mock-2": {"tool_call": true, "reasoning": true, "limit": {"context": 200000, "output": 32000},
                    "cost": {"input": 1.25, "output": 10, "cache_read": 0.125}}}}},
        "model": "mock/mock-1", "small_model": "mock/mock-1",
        "permission": {"bash": "ask", "edit": "ask"}, "autoupdate": false, "share": "disabled"
    });
    std::fs::write(
        server.project.join("opencode.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
}

async fn prompt(server: &Server, session: &str, text: &str, model: &str, agent: &str) {
    server
        .post(
            &format!("/session/{session}/prompt_async"),
            json!({"parts": [{"type": "text", "text": text}],
                "model": {"providerID": "mock", "modelID": model}, "agent": agent}),
        )
        .await;
    server.wait_idle(session, 90).await;
}

fn ocview(server: &Server, args: &[&str]) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ocview"));
    c.env("XDG_DATA_HOME", server.home.join("data"))
        .env_remove("OPENCODE_DB")
        .args(["stats"])
        .args(args);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "ocview stats {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn opencode_stats(server: &Server, bin: &Path, args: &[&str]) -> String {
    let out = server
        .command(bin)
        .arg("stats")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "opencode stats: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // opencode moves the cursor up a line to close the model table over
    // its last separator: apply that, as a terminal would.
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let mut line = line.to_string();
        while let Some(rest) = line.strip_prefix("\x1b[1A") {
            lines.pop();
            line = rest.to_string();
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// `label → value` of every `│label   value │` line, by box title.
fn figures(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        let Some(inner) = line.strip_prefix('│').and_then(|l| l.strip_suffix('│')) else {
            continue;
        };
        let trimmed = inner.trim();
        if trimmed
            .chars()
            .all(|c| c.is_uppercase() || c == ' ' || c == '&')
        {
            section = trimmed.to_string();
            continue;
        }
        if !inner.starts_with("  ") && inner.starts_with(' ') && !trimmed.contains("  ") {
            // A model's name heading its figures.
            section = trimmed.to_string();
            continue;
        }
        let (label, value) = trimmed.rsplit_once("  ").unwrap_or((trimmed, ""));
        out.insert(
            format!("{section}/{}", label.trim()),
            value.trim().to_string(),
        );
    }
    out
}

use ocview::headless::stats::{short, to_fixed};

/// The figures opencode prints, made from `ocview stats --json`.
fn figures_from_json(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let n = |v: &Value| v.as_f64().unwrap();
    let mut put = |k: &str, s: String| {
        out.insert(k.to_string(), s);
    };
    put("OVERVIEW/Sessions", v["sessions"].to_string());
    put("OVERVIEW/Messages", v["messages"].to_string());
    put("OVERVIEW/Days", v["days"].to_string());
    put(
        "COST & TOKENS/Total Cost",
        format!("${}", to_fixed(n(&v["cost"]), 2)),
    );
    put(
        "COST & TOKENS/Avg Cost/Day",
        format!("${}", to_fixed(n(&v["cost_per_day"]), 2)),
    );
    put(
        "COST & TOKENS/Avg Tokens/Session",
        short((n(&v["tokens_per_session"]) + 0.5).floor()),
    );
    put(
        "COST & TOKENS/Median Tokens/Session",
        short((n(&v["median_tokens_per_session"]) + 0.5).floor()),
    );
    let t = &v["tokens"];
    put("COST & TOKENS/Input", short(n(&t["input"])));
    put("COST & TOKENS/Output", short(n(&t["output"])));
    put("COST & TOKENS/Cache Read", short(n(&t["cache_read"])));
    put("COST & TOKENS/Cache Write", short(n(&t["cache_write"])));
    for m in v["by_model"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        put(&format!("{name}/Messages"), m["messages"].to_string());
        put(&format!("{name}/Input Tokens"), short(n(&m["input"])));
        put(
            &format!("{name}/Output Tokens"),
            short(n(&m["output"]) + n(&m["reasoning"])),
        );
        put(&format!("{name}/Cache Read"), short(n(&m["cache_read"])));
        put(&format!("{name}/Cache Write"), short(n(&m["cache_write"])));
        put(
            &format!("{name}/Cost"),
            format!("${}", to_fixed(n(&m["cost"]), 4)),
        );
    }
    out
}

fn compare(server: &Server, args: &[&str]) -> Value {
    let theirs = opencode_stats(server, &binary(), &[args, &["--models"]].concat());
    let ours_text = ocview(server, &[args, &["--models"]].concat());
    // The text: opencode's boxes, line for line, then ocview's own.
    let their_lines: Vec<&str> = theirs.trim_end().lines().collect();
    let our_lines: Vec<&str> = ours_text.lines().collect();
    for (i, theirs_line) in their_lines.iter().enumerate() {
        assert_eq!(
            our_lines.get(i),
            Some(theirs_line),
            "line {i} of opencode stats {args:?}:\n{theirs}\nocview stats:\n{ours_text}"
        );
    }
    // The JSON: every figure opencode prints, made from ocview's numbers.
    let json: Value = serde_json::from_str(&ocview(server, &[args, &["--json"]].concat())).unwrap();
    let theirs = figures(&theirs);
    let ours = figures_from_json(&json);
    let tools: Vec<String> = theirs
        .keys()
        .filter(|k| k.starts_with("TOOL USAGE/"))
        .cloned()
        .collect();
    let mut compared = theirs.clone();
    for k in tools {
        compared.remove(&k);
    }
    assert_eq!(
        compared, ours,
        "opencode stats {args:?} vs ocview stats --json"
    );
    // Tools: each tool's count.
    for t in json["tools"].as_array().unwrap() {
        let row = their_lines_tool(&theirs, t["name"].as_str().unwrap());
        assert!(
            row.contains(&format!(" {} (", t["calls"])),
            "tool {t}: {row:?}"
        );
    }
    json
}

fn their_lines_tool(theirs: &BTreeMap<String, String>, tool: &str) -> String {
    theirs
        .iter()
        .find(|(k, _)| k.starts_with("TOOL USAGE/") && k.contains(tool))
        .map(|(k, v)| format!("{k} {v}"))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ocview_stats_equals_opencode_stats_figure_by_figure() {
    let model = FakeModel::start(script()).await;
    let mut server = Server::prepare(&model.url(), None);
    priced_config(&server, &model.url());
    server.launch().await;
    let a = server.create_session().await;
    prompt(&server, &a, "please read the readme", "mock-1", "build").await;
    let b = server.create_session().await;
    prompt(&server, &b, "plan the work", "mock-2", "plan").await;
    let c = server.create_session().await;
    prompt(&server, &c, "first", "mock-2", "build").await;
    prompt(&server, &c, "second", "mock-1", "build").await;
    let project = server.get("/project/current").await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let all = compare(&server, &[]);
    assert_eq!(all["sessions"], 3);
    assert!(all["cost"].as_f64().unwrap() > 0.0, "{all}");
    assert_eq!(all["by_model"].as_array().unwrap().len(), 2, "{all}");
    let agents: Vec<&str> = all["by_agent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(
        agents.contains(&"plan") && agents.contains(&"build"),
        "{agents:?}"
    );
    assert!(all["tokens"]["reasoning"].as_u64().unwrap() > 0, "{all}");
    assert!(all["tokens"]["cache_read"].as_u64().unwrap() > 0, "{all}");
    assert_eq!(all["summed_sessions"], 0, "1.18.33 stores its totals");
    compare(&server, &["--days", "1"]);
    let one = compare(&server, &["--project", &project]);
    assert_eq!(one["sessions"], 3);
    let none = compare(&server, &["--project", "no-such-project"]);
    assert_eq!(none["sessions"], 0);

    // The CSV carries the same totals.
    let csv = ocview(&server, &["--csv"]);
    let total = csv.lines().nth(1).unwrap();
    assert!(total.starts_with("total,,3,"), "{csv}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_an_older_release_opens_and_its_totals_are_summed() {
    let old = binary_of(OLD_VERSION);
    let model = FakeModel::start(script()).await;
    let mut server = Server::prepare(&model.url(), None);
    priced_config(&server, &model.url());
    server.launch_binary(&old).await;
    let health = server.get("/global/health").await;
    assert_eq!(health["version"], OLD_VERSION, "{health}");
    let s = server.create_session().await;
    prompt(&server, &s, "please read the readme", "mock-1", "build").await;
    prompt(&server, &s, "and more", "mock-2", "plan").await;
    let messages = server.messages(&s).await;
    let server_cost: f64 = messages
        .iter()
        .filter(|m| m["info"]["role"] == "assistant")
        .map(|m| m["info"]["cost"].as_f64().unwrap_or(0.0))
        .sum();
    let server_input: u64 = messages
        .iter()
        .filter(|m| m["info"]["role"] == "assistant")
        .map(|m| m["info"]["tokens"]["input"].as_u64().unwrap_or(0))
        .sum();
    assert!(server_cost > 0.0);
    server.kill();

    let path = server.home.join("data/opencode/opencode.db");
    let db = Db::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let schema = db.schema();
    assert!(
        !schema.has_totals(),
        "{OLD_VERSION} already stored totals: pick an older release ({:?})",
        schema.tables.get("session")
    );
    // Older releases kept their migrations elsewhere, or fewer of them.
    assert!(
        schema.migrations.is_none_or(|n| n < 38),
        "{:?}",
        schema.migrations
    );
    // The reader's session list shows it.
    let rows = db.sessions(50, None).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].id, s);
    assert!(rows[0].totals.is_none());

    let json: Value = serde_json::from_str(&ocview(&server, &["--json"])).unwrap();
    assert_eq!(json["sessions"], 1, "{json}");
    assert_eq!(json["messages"].as_u64().unwrap(), messages.len() as u64);
    assert_eq!(json["summed_sessions"], 1, "{json}");
    assert!(
        (json["cost"].as_f64().unwrap() - server_cost).abs() < 1e-9,
        "summed {} vs the server's messages {server_cost}",
        json["cost"]
    );
    assert_eq!(json["tokens"]["input"].as_u64().unwrap(), server_input);
    let text = ocview(&server, &[]);
    assert!(text.contains("Σ 1 sessions had no stored totals"), "{text}");
}

/// Costs that sit at or beside a rounding tie, in decimal or in binary.
const NEAR_TIES: [f64; 12] = [
    0.1, 0.2, 0.3, 0.145, 0.015, 0.00015, 0.00035, 0.0725, 1.005, 0.125, 0.00005, 0.33,
];

/// Projects in a database opencode made, each with sessions whose costs
/// add up (in the table's order, which is not the ids') at or beside a
/// tie of `toFixed(2)` for the totals and of `toFixed(4)` for the models:
/// every figure `ocview stats` prints equals the real `opencode stats`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rounding_tie_prints_as_opencode_stats_prints_it() {
    use crate::support::history_db as db_rows;
    let server = Server::prepare("http://127.0.0.1:9", None);
    // opencode makes its database (and its migrations) on a first run.
    opencode_stats(&server, &binary(), &[]);
    let db = Connection::open(server.home.join("data/opencode/opencode.db")).unwrap();
    // A session's messages go in before it (its cost is their sum).
    db.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let t0: i64 = 1_795_000_000_000;
    let mut projects = Vec::new();
    for k in 0..12usize {
        let project = format!("prj_tie{k:02}");
        db_rows::project(&db, &project, &format!("/work/tie{k}"), t0);
        // Newest id first in the table: opencode adds in the table's order.
        let count = 1 + k % 4;
        for s in (0..count).rev() {
            let session = format!("ses_tie{k:02}_{s}");
            let start = t0 + (s as i64) * 40_000_000;
            let mut total = 0.0;
            let mut t = start;
            for m in 0..2 + (k + s) % 3 {
                let cost = if count == 1 && m == 0 {
                    // A lone session at a tie itself.
                    [0.125, 0.145, 0.015][k % 3]
                } else if count == 1 {
                    0.0
                } else {
                    NEAR_TIES[(k * 5 + s * 3 + m) % NEAR_TIES.len()]
                };
                let model = if (k + m) % 2 == 0 { "mock-1" } else { "mock-2" };
                let user = format!("msg_{session}_{m}_u");
                let info = json!({"role": "user", "time": {"created": t}, "agent": "build",
                    "model": {"providerID": "mock", "modelID": model}});
                db_rows::message(&db, &user, &session, t, &info.to_string());
                t += 1000;
                let info = json!({"role": "assistant", "time": {"created": t, "completed": t + 500},
                    "parentID": user, "modelID": model, "providerID": "mock", "mode": "build", "agent": "build",
                    "path": {"cwd": "/work", "root": "/work"}, "cost": cost,
                    "tokens": {"total": 1070, "input": 1020, "output": 50, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                    "finish": "stop"});
                let assistant = format!("msg_{session}_{m}_a");
                db_rows::message(&db, &assistant, &session, t, &info.to_string());
                // Tools as often as each other, met `write` first: opencode
                // lists them as it met them, not by name.
                let tool = ["write", "bash"][m % 2];
                let part = json!({"type": "tool", "callID": format!("call_{m}"), "tool": tool,
                    "state": {"status": "completed", "input": {}, "output": "ok", "title": "", "metadata": {},
                        "time": {"start": t, "end": t}}});
                let id = format!("prt_{session}_{m}");
                db_rows::part(&db, &id, &assistant, &session, t, &part.to_string());
                t += 1000;
                total += cost;
            }
            let messages = 2 * (2 + (k + s) % 3) as i64;
            let totals = Some((total, 510 * messages, 25 * messages));
            db_rows::session(&db, &session, &project, None, "Ties", start, totals);
        }
        projects.push(project);
    }
    drop(db);
    let mut costs = Vec::new();
    for project in &projects {
        let json = compare(&server, &["--project", project]);
        costs.push(json["cost"].as_f64().unwrap());
    }
    // The lone sessions' ties: 0.125 rounds up, 0.145 (0.14499…) down.
    let text = ocview(&server, &["--project", &projects[0]]);
    assert!(text.contains("$0.13"), "{text}");
    let text = ocview(&server, &["--project", &projects[4]]);
    assert!(text.contains("$0.14 "), "{text}");
    assert!(costs.iter().all(|c| *c > 0.0), "{costs:?}");
}
