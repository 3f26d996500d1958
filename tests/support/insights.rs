//! `ocview insights …` run on an archive, as a script would.

use ocview::archive::Setting;

/// `ocview insights KIND --archive PLACE ARGS…` on this machine (named
/// `here`): its standard output, which must be inert (no escape, no bell).
pub fn run(kind: &str, setting: &Setting, args: &[&str]) -> String {
    let place = match setting {
        Setting::Sqlite(p) => p.display().to_string(),
        Setting::Postgres(url) => url.clone(),
        Setting::Off => unreachable!(),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ocview"))
        .args(["insights", kind, "--archive", &place])
        .args(args)
        .env_remove("OCVIEW_ARCHIVE")
        .env("OCVIEW_MACHINE", "here")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    text
}
