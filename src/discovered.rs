//! `ocview discover` and `ocview` with no subcommand: find the servers,
//! list them, or choose the one to attach to.

use std::process::ExitCode;

use ocview::sanitize;
use ocview::source::discover::{self, Discovery, NOTHING_FOUND, Options, Server};

/// Where to look: `$OPENCODE_SERVER_URL` and the config's `servers`
/// (checked: a bad one is a usage error, as for `attach`), this machine,
/// and mDNS when `network`.
pub fn options(
    network: bool,
    configured: &[String],
    auth: Option<ocview::source::live::Auth>,
) -> anyhow::Result<Options> {
    let env_url = match std::env::var("OPENCODE_SERVER_URL") {
        Ok(url) if !url.is_empty() => Some(crate::server_url(&url, Some("$OPENCODE_SERVER_URL"))?),
        _ => None,
    };
    let configured = configured
        .iter()
        .map(|url| crate::server_url(url, Some("the config's servers")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Options {
        env_url,
        configured,
        mdns: network.then_some(discover::MDNS_BROWSE),
        auth,
        ..Options::default()
    })
}

pub fn run(options: &Options) -> anyhow::Result<Discovery> {
    let rt = crate::runtime()?;
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
            crate::write_stdout("[]\n")?;
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
    crate::write_stdout(&text)
}

/// One server on one line: URL, version, directory, how it was found.
pub fn line(s: &Server) -> String {
    let version = match (&s.version, s.needs_password) {
        (_, true) => "wants a password".to_string(),
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
