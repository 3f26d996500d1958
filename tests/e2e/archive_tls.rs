//! TLS to a team archive as psql does it (issue 39, point 4), on a real
//! PostgreSQL serving a certificate from a CA the test makes (with
//! `openssl`): verify-full passes by the certificate's name and fails by
//! another with its reason; verify-ca passes by any name; require encrypts
//! without a CA, as libpq's does; a CA not trusted is named; a server that
//! asks for a client certificate gets one from sslcert/sslkey.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::postgres::Postgres;
use ocview::archive::Setting;

/// A CA and what it signs, in a folder of their own.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Option<Pki> {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki { dir };
        if !pki.openssl(&["version"]) {
            assert!(
                std::env::var_os("CI").is_none(),
                "openssl is needed in CI (.ci/run installs it)"
            );
            eprintln!("SKIPPED: no openssl here to make a test CA");
            return None;
        }
        pki.ca("ca");
        Some(pki)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn openssl(&self, args: &[&str]) -> bool {
        Command::new("openssl")
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// `openssl` with `head`, a new P-256 key into `name.key`, then `tail`.
    fn new_key(&self, head: &[&str], name: &str, tail: &[&str]) -> bool {
        let key = format!("{name}.key");
        let mut args: Vec<&str> = head.to_vec();
        args.extend([
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
        ]);
        args.extend(tail);
        self.openssl(&args)
    }

    /// A self-signed CA: `name.pem`, `name.key`.
    fn ca(&self, name: &str) {
        let ok = self.new_key(
            &["req", "-x509"],
            name,
            &[
                "-out",
                &format!("{name}.pem"),
                "-days",
                "2",
                "-subj",
                &format!("/CN=ocview test {name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        );
        assert!(ok, "openssl made no CA");
    }

    /// A certificate for `cn` (and these subject alternative names, if
    /// any) signed by the CA `ca`: `name.crt`, `name.key`.
    fn leaf(&self, ca: &str, name: &str, cn: &str, san: Option<&str>) {
        let ok = self.new_key(
            &["req"],
            name,
            &[
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={cn}"),
            ],
        );
        assert!(ok, "openssl made no request for {name}");
        let ext = self.path(&format!("{name}.ext"));
        let mut text = "basicConstraints=CA:FALSE\n".to_string();
        if let Some(san) = san {
            text.push_str(&format!("subjectAltName={san}\n"));
        }
        std::fs::write(&ext, text).unwrap();
        let ok = self.openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-out",
            &format!("{name}.crt"),
            "-days",
            "2",
            "-extfile",
            &ext.display().to_string(),
        ]);
        assert!(ok, "openssl signed no {name}");
    }
}

/// A PostgreSQL with a database `tls`, and a CA with a certificate for
/// `localhost` (`server.crt`): `None` (said) where either cannot be had.
fn server_and_ca() -> Option<(Postgres, Pki)> {
    let pg = Postgres::start_or_skip()?;
    let pki = Pki::new()?;
    pg.database("tls");
    pki.leaf("ca", "server", "localhost", Some("DNS:localhost"));
    Some((pg, pki))
}

/// Opening the archive at `url`: `Ok` or what it said.
fn open(url: &str) -> Result<(), String> {
    match Setting::Postgres(url.to_string()).open() {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err("no archive".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn url(host: &str, pg: &Postgres, query: &str) -> String {
    format!("postgres://postgres@{host}:{}/tls?{query}", pg.port)
}

fn rooted(query: &str, ca: &Path) -> String {
    format!("{query}&sslrootcert={}", ca.display())
}

#[test]
fn tls_is_checked_as_psql_checks_it_and_a_refusal_says_why() {
    let Some((pg, pki)) = server_and_ca() else {
        return;
    };
    pki.ca("other");
    pg.serve_tls(&pki.path("server.crt"), &pki.path("server.key"), None, true);
    let ca = pki.path("ca.pem");

    // Only TLS logins are taken: in the clear, refused.
    let clear = open(&url("127.0.0.1", &pg, "sslmode=disable"));
    assert!(clear.is_err(), "a login in the clear was taken");

    // verify-full by the certificate's name.
    open(&url("localhost", &pg, &rooted("sslmode=verify-full", &ca))).unwrap();
    // By another name: refused, saying why and what would help.
    let e = open(&url("127.0.0.1", &pg, &rooted("sslmode=verify-full", &ca))).unwrap_err();
    assert!(
        e.contains("name mismatch") && e.contains("sslmode=verify-ca"),
        "{e}"
    );
    // verify-ca checks who signed it, not the name.
    open(&url("127.0.0.1", &pg, &rooted("sslmode=verify-ca", &ca))).unwrap();
    // require without a CA encrypts without checking, as libpq's does; so
    // does the default (prefer).
    open(&url("127.0.0.1", &pg, "sslmode=require")).unwrap();
    open(&format!("postgres://postgres@127.0.0.1:{}/tls", pg.port)).unwrap();
    // A CA that did not sign it: unknown issuer, and the setting to name.
    let other = pki.path("other.pem");
    let e = open(&url(
        "localhost",
        &pg,
        &rooted("sslmode=verify-full", &other),
    ))
    .unwrap_err();
    assert!(
        e.contains("unknown issuer") && e.contains("sslrootcert="),
        "{e}"
    );
    // This machine's trust store does not know the test's CA either.
    let e = open(&url("localhost", &pg, "sslrootcert=system")).unwrap_err();
    assert!(e.contains("unknown issuer"), "{e}");
    // verify-full with no CA at all says where one was looked for.
    let e = open(&url("localhost", &pg, "sslmode=verify-full")).unwrap_err();
    assert!(e.contains("sslrootcert=system"), "{e}");
}

#[test]
fn a_client_certificate_comes_from_sslcert_and_sslkey() {
    let Some((pg, pki)) = server_and_ca() else {
        return;
    };
    // PostgreSQL's `cert` login: the certificate's CN is the user.
    pki.leaf("ca", "client", "postgres", None);
    pg.serve_tls(
        &pki.path("server.crt"),
        &pki.path("server.key"),
        Some(&pki.path("ca.pem")),
        true,
    );
    let ca = rooted("sslmode=verify-full", &pki.path("ca.pem"));
    let without = open(&url("localhost", &pg, &ca));
    assert!(without.is_err(), "a login without a certificate was taken");
    let with = format!(
        "{ca}&sslcert={}&sslkey={}",
        pki.path("client.crt").display(),
        pki.path("client.key").display()
    );
    open(&url("localhost", &pg, &with)).unwrap();
    // A key file that is not there is named.
    let e = open(&url(
        "localhost",
        &pg,
        &format!(
            "{ca}&sslcert={}&sslkey=/nonexistent/k.pem",
            pki.path("client.crt").display()
        ),
    ))
    .unwrap_err();
    assert!(e.contains("sslkey=/nonexistent/k.pem"), "{e}");
}
