//! TLS to the team archive as psql does it: libpq's `sslmode` (disable,
//! allow, prefer, require, verify-ca, verify-full) with libpq's meanings,
//! the CA from `sslrootcert` (a file, or `system`: this machine's trust
//! store beside webpki's roots; by default `~/.postgresql/root.crt` when it
//! exists), a client certificate from `sslcert`/`sslkey` (by default
//! `~/.postgresql/postgresql.crt`/`.key` when they exist), each also from
//! its `PGSSL…` variable. A certificate refused is said with its reason
//! and the setting that would help.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;

/// The URL's parameters (and libpq's variables) this module reads;
/// tokio-postgres knows none but a weaker `sslmode`.
pub const PARAMS: [(&str, &str); 4] = [
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("sslcert", "PGSSLCERT"),
    ("sslkey", "PGSSLKEY"),
];

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    /// libpq tries the clear first; here it is `prefer`'s order (TLS
    /// first), which never sends less protected than `allow` would.
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(v: &str) -> Result<Mode, String> {
        Ok(match v {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other} is none of disable, allow, prefer, require, verify-ca, \
                     verify-full"
                ));
            }
        })
    }

    fn ssl_mode(self) -> SslMode {
        match self {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }
}

/// Whom the server's certificate must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// Not checked (no CA named, and none in `~/.postgresql/root.crt`).
    Unchecked,
    /// The CAs in this file.
    File(PathBuf),
    /// This machine's trust store and webpki's roots.
    System,
}

/// The TLS settings of one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub mode: Mode,
    pub roots: Roots,
    /// The host name is checked against the certificate.
    pub check_name: bool,
    /// A client certificate and its key.
    pub client: Option<(PathBuf, PathBuf)>,
}

impl Settings {
    /// The settings from the URL's values (`None`: not given), libpq's
    /// variables, and the files libpq looks for in `home`.
    pub fn from_values(
        value: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<Settings, String> {
        let root = value("sslrootcert");
        let mode = match value("sslmode") {
            Some(m) => Mode::parse(&m)?,
            // libpq 16: the system's roots are checked in full.
            None if root.as_deref() == Some("system") => Mode::VerifyFull,
            None => Mode::Prefer,
        };
        let dot = |file: &str| home.map(|h| h.join(".postgresql").join(file));
        let roots = match root.as_deref() {
            Some("system") if mode != Mode::VerifyFull && mode != Mode::Disable => {
                return Err(format!(
                    "sslrootcert=system is checked in full: sslmode={} is weaker (use \
                     sslmode=verify-full)",
                    value("sslmode").unwrap_or_default()
                ));
            }
            Some("system") => Roots::System,
            Some(file) => Roots::File(PathBuf::from(file)),
            None => match dot("root.crt").filter(|f| f.is_file()) {
                Some(file) => Roots::File(file),
                None => Roots::Unchecked,
            },
        };
        let verify = matches!(mode, Mode::VerifyCa | Mode::VerifyFull);
        if verify && roots == Roots::Unchecked {
            let default = dot("root.crt")
                .map_or("~/.postgresql/root.crt".into(), |f| f.display().to_string());
            return Err(format!(
                "sslmode={} checks the server's certificate, and no CA was named: \
                 {default} does not exist; set sslrootcert=/path/to/ca.pem (or \
                 sslrootcert=system for this machine's trusted CAs)",
                value("sslmode").unwrap_or_default()
            ));
        }
        let client = match (value("sslcert"), value("sslkey")) {
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            (Some(cert), None) => {
                let key = dot("postgresql.key").ok_or("sslcert without sslkey")?;
                Some((PathBuf::from(cert), key))
            }
            (None, Some(_)) => return Err("sslkey without sslcert".into()),
            (None, None) => match (dot("postgresql.crt"), dot("postgresql.key")) {
                (Some(c), Some(k)) if c.is_file() && k.is_file() => Some((c, k)),
                _ => None,
            },
        };
        Ok(Settings {
            mode,
            // libpq: a CA file makes require (and prefer) check who signed
            // the certificate; only verify-full checks the name.
            check_name: mode == Mode::VerifyFull,
            roots,
            client,
        })
    }

    /// tokio-postgres's mode for these settings.
    pub fn ssl_mode(&self) -> SslMode {
        self.mode.ssl_mode()
    }

    /// The connector: rustls, checking what these settings ask for.
    pub fn connector(&self) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = match &self.roots {
            Roots::Unchecked => None,
            roots => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(root_store(roots)?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| format!("the CAs cannot be used: {e}"))?,
            ),
        };
        let verifier = Arc::new(Verifier {
            provider: provider.clone(),
            webpki,
            check_name: self.check_name,
        });
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match &self.client {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let certs = certificates(cert, "sslcert")?;
                let key = PrivateKeyDer::from_pem_file(key)
                    .map_err(|e| format!("sslkey={}: {}", key.display(), pem_error(&e)))?;
                builder
                    .with_client_auth_cert(certs, key)
                    .map_err(|e| format!("sslcert and sslkey do not go together: {e}"))?
            }
        };
        Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
    }
}

/// The certificates in a PEM file, said with the setting that named it.
fn certificates(file: &Path, setting: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let said = |why: String| format!("{setting}={}: {why}", file.display());
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| said(pem_error(&e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| said(pem_error(&e)))?;
    if certs.is_empty() {
        return Err(said("no certificate in it (PEM expected)".into()));
    }
    Ok(certs)
}

fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "nothing of that kind in it".into(),
        other => format!("not PEM: {other:?}"),
    }
}

/// The CAs to check against.
fn root_store(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::Unchecked => {}
        Roots::File(file) => {
            let (added, _) = store.add_parsable_certificates(certificates(file, "sslrootcert")?);
            if added == 0 {
                return Err(format!(
                    "sslrootcert={}: no CA certificate rustls can use in it",
                    file.display()
                ));
            }
        }
        Roots::System => {
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            for file in system_bundles() {
                if let Ok(certs) = certificates(&file, "the system's trust store") {
                    store.add_parsable_certificates(certs);
                }
            }
        }
    }
    Ok(store)
}

/// Where this machine keeps its trusted CAs: `$SSL_CERT_FILE`, then the
/// bundles of the usual systems (Debian, Fedora, Alpine, macOS, SUSE).
fn system_bundles() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    files.extend(
        [
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/cert.pem",
            "/etc/ssl/ca-bundle.pem",
        ]
        .map(PathBuf::from),
    );
    files.retain(|f| f.is_file());
    files
}

/// How the server's certificate is checked: against the CAs (the name too
/// for verify-full), or, for `require`/`prefer` without a CA as libpq,
/// not at all (encrypted all the same). The handshake's signatures are
/// always checked.
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    /// `None`: the certificate is not checked.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // webpki checks the name after the chain: a name mismatch
            // means the chain was good.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Why a connection's TLS failed, in words with what would help; `None`
/// when it did not fail in TLS.
pub fn explain(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let chain = std::iter::successors(Some(e), |e| e.source());
    let mut said_tls = false;
    for e in chain {
        let rustls = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(r) = rustls {
            return Some(certificate_refused(r));
        }
        said_tls |= e.to_string().contains("server does not support TLS");
    }
    said_tls.then(|| {
        "the server does not offer TLS and the URL requires it: sslmode=prefer (or disable) \
         connects in the clear"
            .to_string()
    })
}

fn certificate_refused(e: &rustls::Error) -> String {
    use CertificateError as C;
    let rustls::Error::InvalidCertificate(c) = e else {
        return format!("TLS failed: {e}");
    };
    match c {
        C::UnknownIssuer => "the server's certificate is signed by a CA not trusted here \
             (unknown issuer): name that CA's certificate with sslrootcert=/path/to/ca.pem \
             (sslmode=require encrypts without checking it)"
            .into(),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            let names = match c {
                C::NotValidForNameContext {
                    expected,
                    presented,
                } => format!(" (it is for {}, not {expected:?})", presented.join(", ")),
                _ => String::new(),
            };
            format!(
                "the server's certificate is for another host name (name mismatch){names}: \
                 connect by a name it holds, or sslmode=verify-ca checks only who signed it"
            )
        }
        C::Expired | C::ExpiredContext { .. } => "the server's certificate has expired: its \
             administrator must renew it (sslmode=require encrypts without checking it)"
            .into(),
        C::NotValidYet | C::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet (check this machine's clock)".into()
        }
        other => format!("the server's certificate was refused: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)], home: Option<&Path>) -> Result<Settings, String> {
        let value = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.to_string())
        };
        Settings::from_values(&value, home)
    }

    #[test]
    fn libpqs_modes_and_their_defaults() {
        let home = tempfile::tempdir().unwrap();
        let s = settings(&[], Some(home.path())).unwrap();
        assert_eq!(
            (s.mode, &s.roots, s.check_name),
            (Mode::Prefer, &Roots::Unchecked, false)
        );
        let s = settings(&[("sslmode", "require")], Some(home.path())).unwrap();
        assert_eq!(
            (s.ssl_mode(), &s.roots),
            (SslMode::Require, &Roots::Unchecked)
        );
        // verify-* without a CA: said, with the settings that help.
        let e = settings(&[("sslmode", "verify-full")], Some(home.path())).unwrap_err();
        assert!(
            e.contains("sslrootcert=/path/to/ca.pem") && e.contains("sslrootcert=system"),
            "{e}"
        );
        // ~/.postgresql/root.crt is the default CA: require then checks who
        // signed, not the name.
        std::fs::create_dir_all(home.path().join(".postgresql")).unwrap();
        std::fs::write(home.path().join(".postgresql/root.crt"), "x").unwrap();
        let s = settings(&[("sslmode", "require")], Some(home.path())).unwrap();
        assert!(matches!(s.roots, Roots::File(_)) && !s.check_name);
        let s = settings(&[("sslmode", "verify-full")], Some(home.path())).unwrap();
        assert!(s.check_name);
        // system: verify-full by default, weaker refused.
        let s = settings(&[("sslrootcert", "system")], None).unwrap();
        assert_eq!((s.mode, s.roots), (Mode::VerifyFull, Roots::System));
        let e = settings(&[("sslrootcert", "system"), ("sslmode", "require")], None).unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        assert!(
            settings(&[("sslmode", "sometimes")], None)
                .unwrap_err()
                .contains("sometimes")
        );
        assert!(settings(&[("sslkey", "k.pem")], None).is_err());
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let s = settings(
            &[
                ("sslmode", "verify-ca"),
                ("sslrootcert", "/nonexistent/ca.pem"),
            ],
            None,
        )
        .unwrap();
        let e = s.connector().err().unwrap();
        assert!(e.starts_with("sslrootcert=/nonexistent/ca.pem: "), "{e}");
    }

    #[test]
    fn refusals_say_why_and_what_helps() {
        let unknown = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert!(certificate_refused(&unknown).contains("unknown issuer"));
        assert!(certificate_refused(&unknown).contains("sslrootcert="));
        let name = rustls::Error::InvalidCertificate(CertificateError::NotValidForName);
        assert!(certificate_refused(&name).contains("name mismatch"));
        assert!(certificate_refused(&name).contains("verify-ca"));
        let expired = rustls::Error::InvalidCertificate(CertificateError::Expired);
        assert!(certificate_refused(&expired).contains("expired"));
        // Found inside an io::Error, as tokio-rustls gives it.
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, unknown);
        assert!(explain(&io).unwrap().contains("unknown issuer"));
    }
}
