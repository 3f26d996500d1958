//! `ocview discover` and `ocview` with no subcommand: find the servers,
//! list them, or choose the one to attach to.

use std::process::ExitCode;

use crate::model::wire::sanitize;
use crate::source::live::Auth;
use crate::source::live::discover::{self, Discovery, NOTHING_FOUND, Named, Options, Server};
use crate::source::live::fleet::FleetServer;

/// Where to look: `$OPENCODE_SERVER_URL` and the config's `servers`
/// (checked: a bad one is a usage error, as for `attach`), and the config's
/// `[[server]]` members, all of them named and so sent a password (`auth`,
/// or a member's own); this user's servers on this machine, and mDNS when
/// `network`, sent none.
pub fn options(
    network: bool,
    servers: &[String],
    members: &[FleetServer],
    auth: Option<Auth>,
) -> anyhow::Result<Options> {
    let named = |url: String| Named {
        url,
        auth: auth.clone(),
    };
    let env_url = match std::env::var("OPENCODE_SERVER_URL") {
        Ok(url) if !url.is_empty() => Some(named(crate::cli::io::server_url(
            &url,
            Some("$OPENCODE_SERVER_URL"),
        )?)),
        _ => None,
    };
    let mut configured = servers
        .iter()
        .map(|url| crate::cli::io::server_url(url, Some("the config's servers")).map(named))
        .collect::<anyhow::Result<Vec<_>>>()?;
    configured.extend(members.iter().map(|m| Named {
        url: m.client.base().to_string(),
        auth: m.client.auth().cloned(),
    }));
    Ok(Options {
        env_url,
        configured,
        mdns: network.then_some(discover::MDNS_BROWSE),
        ..Options::default()
    })
}

/// The server to attach to: the argument, else `$OPENCODE_SERVER_URL`,
/// else the default, unless another user's server listens there: theirs
/// is watched (and sent a password) only when named.
pub fn attach_url(arg: Option<String>) -> anyhow::Result<String> {
    use crate::source::live::discover::{default_proc_root, effective_uid, local};
    if let Some(url) = arg {
        return crate::cli::io::server_url(&url, None);
    }
    match std::env::var("OPENCODE_SERVER_URL") {
        Ok(url) if !url.is_empty() => {
            crate::cli::io::server_url(&url, Some("$OPENCODE_SERVER_URL"))
        }
        _ => {
            const DEFAULT: &str = "http://127.0.0.1:4096";
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 4096));
            match local::listener_owner(&default_proc_root(), addr) {
                Some(uid) if uid != effective_uid() => anyhow::bail!(
                    "the server at {DEFAULT} (the default) is another user's (uid {uid}); to watch it anyway, name it: ocview attach {DEFAULT}"
                ),
                _ => Ok(DEFAULT.into()),
            }
        }
    }
}

pub fn run(options: &Options) -> anyhow::Result<Discovery> {
    let rt = crate::cli::io::runtime()?;
    let found = rt.block_on(discover::discover(options));
    rt.shutdown_background();
    for problem in &found.problems {
        eprintln!("ocview: {}", sanitize::line(problem));
    }
    tracing::info!(
        "discovery: {} server(s) in {:?}",
        found.servers.len(),
        found.took
    );
    Ok(found)
}

/// `ocview discover [--json]`: the list, or the way to start a server.
pub fn list(options: &Options, json: bool) -> anyhow::Result<ExitCode> {
    let found = run(options)?;
    if found.servers.is_empty() {
        if json {
            crate::cli::io::write_stdout("[]\n")?;
        }
        eprintln!("{NOTHING_FOUND}");
        return Ok(ExitCode::FAILURE);
    }
    let text = if json {
        let text = serde_json::to_string_pretty(&found.servers)?;
        format!("{}\n", sanitize::json(&text))
    } else {
        found
            .servers
            .iter()
            .map(|s| format!("{}\n", line(s)))
            .collect()
    };
    crate::cli::io::write_stdout(&text)
}

/// One server on one line: URL, version, directory, how it was found.
pub fn line(s: &Server) -> String {
    let named = s
        .found_by
        .iter()
        .any(|v| matches!(v, discover::Via::Env | discover::Via::Config));
    let version = match (&s.version, s.needs_password) {
        (_, true) if named => "wants a password".to_string(),
        // Found only: no password was sent, whatever the environment holds.
        (_, true) => "wants a password (sent only to servers named)".to_string(),
        (Some(v), _) => format!("opencode {}", sanitize::line(v)),
        (None, _) => "opencode".to_string(),
    };
    let dir = s
        .directory
        .as_deref()
        .map(|d| sanitize::line(d).into_owned())
        .unwrap_or_else(|| "?".into());
    let how: Vec<String> = s.found_by.iter().map(|v| v.describe()).collect();
    format!(
        "{}  {version}  {dir}  ({})",
        sanitize::line(&s.url),
        how.join(", ")
    )
}

/// `ocview discover`: the servers found (and configured), as lines or JSON.
pub(crate) fn discover(
    network: bool,
    setup: &crate::cli::io::Setup,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let auth = crate::cli::io::resolve_auth(&crate::cli::AuthArgs::default())?;
    let options = options(network, &setup.config.servers, &[], auth)?;
    list(&options, json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use discover::Via;

    #[test]
    fn a_found_server_that_wants_a_password_was_sent_none() {
        let mut s = Server {
            url: "http://127.0.0.1:4096".into(),
            also: Vec::new(),
            found_by: vec![Via::Local { pid: 7 }],
            version: None,
            directory: None,
            needs_password: true,
            auth: None,
        };
        assert!(line(&s).contains("wants a password (sent only to servers named)"));
        s.found_by.push(Via::Env);
        let named = line(&s);
        assert!(named.contains("wants a password  "), "{named}");
    }
}
