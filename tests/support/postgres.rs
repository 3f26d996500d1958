//! A real PostgreSQL server for the archive's tests, started in a temporary
//! directory on a free local port (`initdb`, `pg_ctl`), stopped when
//! dropped. initdb refuses to run as root: as root, the server runs as the
//! `postgres` user, its data directory given to that user.

use std::path::PathBuf;
use std::process::Command;

pub struct Postgres {
    _dir: tempfile::TempDir,
    data: PathBuf,
    pub port: u16,
    as_root: bool,
    /// The server's options, for a restart.
    options: String,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn found(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Where `program` is: on PATH, else in Debian's versioned folder
/// (`/usr/lib/postgresql/N/bin`, which the `postgresql` package does not
/// put on PATH), the newest version first.
fn program_path(program: &str) -> Option<String> {
    if found(program) {
        return Some(program.to_string());
    }
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin").join(program))
        .filter(|p| p.is_file())
        .collect();
    dirs.sort_by_key(|p| {
        p.components()
            .nth(4)
            .and_then(|c| c.as_os_str().to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop().map(|p| p.display().to_string())
}

impl Postgres {
    /// Start one for a test, or `None` with a clear line where PostgreSQL
    /// cannot be had; in CI it must be had, and a failure to start fails.
    pub fn start_or_skip() -> Option<Postgres> {
        match Postgres::start() {
            Ok(pg) => Some(pg),
            Err(why) if std::env::var_os("CI").is_none() => {
                eprintln!("SKIPPED: no PostgreSQL here: {why}");
                None
            }
            Err(why) => panic!("PostgreSQL is needed in CI: {why}"),
        }
    }

    /// Start one, or say why it cannot be (no PostgreSQL installed).
    pub fn start() -> Result<Postgres, String> {
        if program_path("initdb").is_none() || program_path("pg_ctl").is_none() {
            return Err(
                "initdb/pg_ctl not found: install the Debian package postgresql \
                        (.ci/run does)"
                    .into(),
            );
        }
        let as_root = is_root();
        if as_root && !found("runuser") {
            return Err("running as root without runuser: cannot start PostgreSQL".into());
        }
        let dir = tempfile::Builder::new()
            .prefix("ocview-pg")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let base = data.parent().expect("in the temp dir").to_path_buf();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            base.display()
        );
        let pg = Postgres {
            data: data.clone(),
            port,
            as_root,
            options,
            _dir: dir,
        };
        if as_root {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            let ok = Command::new("chown")
                .args(["postgres:", &base.display().to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err("cannot give the data directory to the postgres user".into());
            }
        }
        pg.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )?;
        pg.start_again()?;
        Ok(pg)
    }

    /// Start the server (again, after `kill`).
    #[allow(dead_code)]
    pub fn start_again(&self) -> Result<(), String> {
        let base = self.data.parent().expect("in the temp dir");
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data.display().to_string(),
                "-o",
                &self.options,
                "-l",
                &base.join("log").display().to_string(),
                "-w",
                "start",
            ],
        )
    }

    #[allow(dead_code)]
    /// Stop the server at once, as a crash would (`pg_ctl stop -m
    /// immediate`): connections are cut, nothing is flushed.
    pub fn kill(&self) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data.display().to_string(),
                "stop",
                "-m",
                "immediate",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    fn command(&self, program: &str) -> Command {
        let resolved = program_path(program);
        let program = resolved.as_deref().unwrap_or(program);
        if self.as_root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", program]);
            c
        } else {
            Command::new(program)
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        self.run_fed(program, args, None)
    }

    /// `program` with `input` on its stdin (when given).
    fn run_fed(&self, program: &str, args: &[&str], input: Option<&[u8]>) -> Result<(), String> {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .command(program)
            .args(args)
            .current_dir("/")
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{program}: {e}"))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written from a thread: psql may answer before it has read all.
            let input = input.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Run SQL as the superuser in `db`.
    pub fn sql(&self, db: &str, sql: &str) {
        self.psql("127.0.0.1", db, sql);
    }

    /// A SQL file (a `pg_dump`) run as the superuser in `db`. It goes in
    /// on psql's stdin: the server's user may not read the checkout (a
    /// clone in a 0700 folder).
    #[allow(dead_code)]
    pub fn sql_file(&self, db: &str, file: &std::path::Path) {
        let sql = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.psql_with("127.0.0.1", db, &["-f", "-"], Some(&sql))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }

    /// SQL as the superuser in `db`, through `host` (an address, or the
    /// socket's folder).
    fn psql(&self, host: &str, db: &str, sql: &str) {
        self.psql_with(host, db, &["-c", sql], None)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// psql as the superuser in `db` through `host`, with `what` (`-c`
    /// SQL, or `-f -` and the SQL as `input`).
    fn psql_with(
        &self,
        host: &str,
        db: &str,
        what: &[&str],
        input: Option<&[u8]>,
    ) -> Result<(), String> {
        let port = self.port.to_string();
        let mut args = vec![
            "-h",
            host,
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            db,
            "-v",
            "ON_ERROR_STOP=1",
            "-q",
        ];
        args.extend_from_slice(what);
        self.run_fed("psql", &args, input)
    }

    /// Logins of `user` over TCP need its password from now on (every
    /// other login stays trusted).
    #[allow(dead_code)]
    pub fn require_password(&self, user: &str) {
        let hba = self.data.join("pg_hba.conf");
        let old = std::fs::read_to_string(&hba).unwrap();
        std::fs::write(
            &hba,
            format!("host all {user} 127.0.0.1/32 scram-sha-256\n{old}"),
        )
        .unwrap();
        self.sql("postgres", "SELECT pg_reload_conf()");
    }

    /// Serve TLS with this certificate and key (PEM files), clients' TLS
    /// certificates checked against `client_ca` when given; with
    /// `tls_only`, logins over TCP without TLS are refused.
    #[allow(dead_code)]
    pub fn serve_tls(
        &self,
        cert: &std::path::Path,
        key: &std::path::Path,
        client_ca: Option<&std::path::Path>,
        tls_only: bool,
    ) {
        use std::os::unix::fs::PermissionsExt;
        let copy = |from: &std::path::Path, name: &str| {
            let to = self.data.join(name);
            std::fs::copy(from, &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
            if self.as_root {
                let ok = Command::new("chown")
                    .args(["postgres:", &to.display().to_string()])
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "cannot give {name} to the postgres user");
            }
        };
        copy(cert, "server.crt");
        copy(key, "server.key");
        let mut conf =
            "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n".to_string();
        if let Some(ca) = client_ca {
            copy(ca, "client_ca.crt");
            conf.push_str("ssl_ca_file = 'client_ca.crt'\n");
        }
        let path = self.data.join("postgresql.conf");
        let old = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{old}\n{conf}")).unwrap();
        if tls_only || client_ca.is_some() {
            let method = if client_ca.is_some() { "cert" } else { "trust" };
            let hba = self.data.join("pg_hba.conf");
            let old = std::fs::read_to_string(&hba).unwrap();
            // Local (socket) logins stay trusted for the test's own psql.
            let kept: String = old
                .lines()
                .filter(|l| !l.trim_start().starts_with("host"))
                .map(|l| format!("{l}\n"))
                .collect();
            std::fs::write(
                &hba,
                format!("hostssl all all 127.0.0.1/32 {method}\nhostssl all all ::1/128 {method}\n{kept}"),
            )
            .unwrap();
        }
        self.sql_local("SELECT pg_reload_conf()");
    }

    /// SQL as the superuser over the server's socket (when TCP logins may
    /// need TLS).
    #[allow(dead_code)]
    fn sql_local(&self, sql: &str) {
        let base = self.data.parent().expect("in the temp dir");
        self.psql(&base.display().to_string(), "postgres", sql);
    }

    /// A new, empty database and its URL (as `user`).
    pub fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name, "postgres")
    }

    pub fn url(&self, db: &str, user: &str) -> String {
        format!(
            "postgres://{user}@127.0.0.1:{}/{db}?sslmode=disable",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.data.display().to_string(),
                "stop",
                "-m",
                "immediate",
            ])
            .current_dir("/")
            .output();
    }
}

/// Rows of a query on `url`, each column as text.
#[allow(dead_code)]
pub fn rows(url: &str, sql: &str) -> Vec<Vec<String>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .simple_query(sql)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                    (0..r.len())
                        .map(|i| r.get(i).unwrap_or("").to_string())
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    })
}
