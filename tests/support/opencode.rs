//! The real `opencode serve` (npm `opencode-ai@1.18.33`), installed once
//! into target/, run in a fresh git project with isolated XDG dirs and the
//! offline settings from ../shared/protocol.md, torn down by process group
//! even when a test fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const VERSION: &str = "1.18.33";

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Run `f` once across test processes and threads, guarded by a lock dir.
fn once(dir: &Path, done: impl Fn() -> bool, f: impl FnOnce()) {
    if done() {
        return;
    }
    std::fs::create_dir_all(dir).unwrap();
    let lock = dir.join(".lock");
    let start = Instant::now();
    loop {
        if std::fs::create_dir(&lock).is_ok() {
            break;
        }
        if done() {
            return;
        }
        // A lock older than 10 minutes was left by a killed run.
        if std::fs::metadata(&lock)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().unwrap_or_default() > Duration::from_secs(600))
        {
            let _ = std::fs::remove_dir(&lock);
        }
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "waited 15 min for {}",
            lock.display()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    if !done() {
        f();
    }
    let _ = std::fs::remove_dir(&lock);
}

/// The opencode binary, installed with npm on first use.
pub fn binary() -> PathBuf {
    binary_of(VERSION)
}

/// The binary of another release of `opencode-ai` (an older one, to make
/// a database with its schema), installed the same way into target/.
pub fn binary_of(version: &str) -> PathBuf {
    let dir = target_dir().join(format!("opencode-{version}"));
    let find = || {
        let modules = dir.join("node_modules");
        let arch = if cfg!(target_arch = "aarch64") {
            "arm64"
        } else {
            "x64"
        };
        [
            format!("opencode-linux-{arch}"),
            format!("opencode-linux-{arch}-baseline"),
        ]
        .iter()
        .map(|p| modules.join(p).join("bin/opencode"))
        .find(|p| p.is_file())
    };
    once(
        &dir,
        || find().is_some(),
        || {
            let status = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .arg(format!("opencode-ai@{version}"))
                .status()
                .expect("npm is needed for the end-to-end tests");
            assert!(status.success(), "npm install opencode-ai@{version} failed");
        },
    );
    find().expect("the opencode binary after npm install")
}

/// A directory holding `rg` for opencode's glob and grep tools (the PyPI
/// `ripgrep` wheel), or `None` when it cannot be had.
pub fn ripgrep_dir() -> Option<PathBuf> {
    let dir = target_dir().join("ripgrep-py");
    let find = || {
        let bin = dir.join("bin");
        bin.join("rg").is_file().then_some(bin)
    };
    once(
        &dir,
        || find().is_some(),
        || {
            let ok = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--target"])
                .arg(&dir)
                .arg("ripgrep")
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "note: no rg (pip install ripgrep failed); glob and grep tools will fail"
                );
            }
        },
    );
    find()
}

/// How the server is started.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `opencode serve --port P --hostname 127.0.0.1`.
    Serve,
    /// `opencode --port P`: the TUI, which serves the same API on its port
    /// (it runs, and serves, without a terminal).
    Tui,
}

pub struct Server {
    child: Option<Child>,
    pub style: Style,
    pub port: u16,
    pub project: PathBuf,
    pub home: PathBuf,
    model_url: String,
    password: Option<String>,
    _tmp: tempfile::TempDir,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    pub async fn start(model_url: &str) -> Server {
        Server::start_with(model_url, None).await
    }

    pub async fn start_with(model_url: &str, password: Option<&str>) -> Server {
        let mut s = Server::prepare(model_url, password);
        s.launch().await;
        s
    }

    /// `opencode --port P` (the TUI) with no terminal, healthy.
    pub async fn start_tui(model_url: &str) -> Server {
        let mut s = Server::prepare(model_url, None);
        s.style = Style::Tui;
        s.launch().await;
        s
    }

    /// The project, its config and the isolated home, not started: a test
    /// that starts opencode its own way uses `command`.
    pub fn prepare(model_url: &str, password: Option<&str>) -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(project.join("README.md"), "# demo\n").unwrap();
        std::fs::write(
            project.join("src/util.py"),
            "def add(a, b):\n    return a + b\n",
        )
        .unwrap();
        let config = json!({
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": model_url, "apiKey": "x"},
                "models": {"mock-1": {"tool_call": true, "reasoning": true, "limit": {"context": 200000, "output": 32000}}}}},
            "model": "mock/mock-1", "small_model": "mock/mock-1",
            "permission": {"bash": "ask", "edit": "ask"}, "autoupdate": false, "share": "disabled"
        });
        std::fs::write(
            project.join("opencode.json"),
            serde_json::to_string_pretty(&config).unwrap(),
        )
        .unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &[
                "-c",
                "user.email=t@t",
                "-c",
                "user.name=t",
                "commit",
                "-qm",
                "init",
            ],
        ] {
            Command::new("git")
                .args(args)
                .current_dir(&project)
                .status()
                .unwrap();
        }
        Server {
            child: None,
            style: Style::Serve,
            port: free_port(),
            project,
            home,
            model_url: model_url.to_string(),
            password: password.map(str::to_string),
            _tmp: tmp,
        }
    }

    pub fn command(&self, bin: &Path) -> Command {
        let mut c = Command::new(bin);
        c.current_dir(&self.project).env("PWD", &self.project);
        for (k, sub) in [
            ("XDG_DATA_HOME", "data"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_STATE_HOME", "state"),
        ] {
            c.env(k, self.home.join(sub));
        }
        for k in [
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_AUTOUPDATE",
            "OPENCODE_DISABLE_SHARE",
            "OPENCODE_DISABLE_LSP_DOWNLOAD",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        ] {
            c.env(k, "1");
        }
        if let Some(rg) = ripgrep_dir() {
            let path = std::env::var("PATH").unwrap_or_default();
            c.env("PATH", format!("{}:{path}", rg.display()));
        }
        // opencode runs bash tools under setsid: they leave the process
        // group. This marker finds them for the cleanup.
        c.env("OCVIEW_E2E_OWNER", self.marker());
        match &self.password {
            Some(p) => c.env("OPENCODE_SERVER_PASSWORD", p),
            None => c.env_remove("OPENCODE_SERVER_PASSWORD"),
        };
        let _ = &self.model_url;
        c
    }

    /// Start (or restart, with the same data) the server and wait until healthy.
    pub async fn launch(&mut self) {
        self.launch_binary(&binary()).await;
    }

    /// The same with another release's binary (`binary_of`).
    pub async fn launch_binary(&mut self, bin: &Path) {
        let bin = bin.to_path_buf();
        let log = std::fs::File::create(self.home.join("server.log")).unwrap();
        let mut c = self.command(&bin);
        let port = self.port.to_string();
        match self.style {
            Style::Serve => c.args(["serve", "--port", &port, "--hostname", "127.0.0.1"]),
            Style::Tui => c.args(["--port", &port]),
        };
        c.stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        self.child = Some(c.spawn().expect("start opencode serve"));
        let client = self.http();
        let start = Instant::now();
        loop {
            // A request that lands while opencode is still starting can be
            // accepted and never answered: each probe gets a short timeout
            // of its own, so one lost probe costs a second, not the
            // client's thirty.
            let mut rb = client
                .get(format!("{}/global/health", self.url()))
                .timeout(Duration::from_secs(2));
            if let Some(p) = &self.password {
                rb = rb.basic_auth("opencode", Some(p));
            }
            if let Ok(r) = rb.send().await
                && let Ok(v) = r.json::<Value>().await
                && v["healthy"] == true
            {
                return;
            }
            if start.elapsed() > Duration::from_secs(90) {
                let log = std::fs::read_to_string(self.home.join("server.log")).unwrap_or_default();
                panic!(
                    "opencode did not become healthy; its log ends:\n{}",
                    &log[log.len().saturating_sub(3000)..]
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn marker(&self) -> String {
        format!("{}-{}", std::process::id(), self.home.display())
    }

    /// Kill the server's process group now, and every process that carries
    /// this server's marker (tool commands it started in sessions of their own).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
        let needle = format!("OCVIEW_E2E_OWNER={}", self.marker());
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if let Ok(env) = std::fs::read(entry.path().join("environ"))
                && env.split(|b| *b == 0).any(|v| v == needle.as_bytes())
            {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }

    /// The server's process (opencode itself: npm's `opencode` is the binary).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn http(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut rb = self.http().request(method, format!("{}{path}", self.url()));
        if let Some(p) = &self.password {
            rb = rb.basic_auth("opencode", Some(p));
        }
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = resp.status();
        let text = resp.text().await.unwrap();
        assert!(status.is_success(), "{path}: HTTP {status}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    pub async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn create_session(&self) -> String {
        self.post("/session", json!({})).await["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub async fn prompt(&self, session: &str, text: &str) {
        self.post(
            &format!("/session/{session}/prompt_async"),
            json!({"parts": [{"type": "text", "text": text}]}),
        )
        .await;
    }

    pub async fn messages(&self, session: &str) -> Vec<Value> {
        self.get(&format!("/session/{session}/message"))
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Poll until `f` holds, or panic after `secs`.
    pub async fn until<F, Fut>(&self, what: &str, secs: u64, f: F)
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let start = Instant::now();
        while !f().await {
            if start.elapsed() > Duration::from_secs(secs) {
                let log = std::fs::read_to_string(self.home.join("server.log")).unwrap_or_default();
                panic!(
                    "timed out waiting for {what}; server log ends:\n{}",
                    &log[log.len().saturating_sub(2000)..]
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Idle: no status entry, and the last message is a completed assistant one.
    pub async fn wait_idle(&self, session: &str, secs: u64) {
        self.until("the session to go idle", secs, || async {
            let status = self.get("/session/status").await;
            if status.get(session).is_some_and(|s| s["type"] != "idle") {
                return false;
            }
            let msgs = self.messages(session).await;
            msgs.last().is_some_and(|m| {
                m["info"]["role"] == "assistant" && m["info"]["time"]["completed"].is_number()
            })
        })
        .await;
    }

    /// Answer every pending permission with `reply`; how many were answered.
    pub async fn answer_permissions(&self, reply: &str) -> usize {
        let pending = self.get("/permission").await;
        let list = pending.as_array().cloned().unwrap_or_default();
        for p in &list {
            let id = p["id"].as_str().unwrap();
            self.post(&format!("/permission/{id}/reply"), json!({"reply": reply}))
                .await;
        }
        list.len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}
