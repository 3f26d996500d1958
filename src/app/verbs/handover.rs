//! Handing the terminal to a pager or an editor: the content goes into a
//! private temporary file, the program runs on it with the terminal
//! restored to the shell's state, and the viewer takes the terminal back
//! when it ends, however it ends.
//!
//! The loop does the terminal part (it owns the terminal and the input
//! reader); this module knows the programs and the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::headless::content::Content;

pub use crate::app::msg::Program;

impl Program {
    pub fn label(self) -> &'static str {
        match self {
            Program::Pager => "pager",
            Program::Editor => "editor",
        }
    }

    /// The shell command: from the environment, or the default.
    pub fn command(self, env: impl Fn(&str) -> Option<String>) -> String {
        let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        match self {
            Program::Pager => var("PAGER").unwrap_or_else(|| "less -R".into()),
            Program::Editor => var("VISUAL")
                .or_else(|| var("EDITOR"))
                .unwrap_or_else(|| "vi".into()),
        }
    }
}

/// A temporary file that is removed when dropped.
pub struct TempFile {
    pub path: PathBuf,
}

impl TempFile {
    /// A new file, readable by its owner only, holding `text`.
    pub fn with(text: &str, suffix: &str) -> std::io::Result<TempFile> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for attempt in 0..100u32 {
            let path = dir.join(format!(
                "ocview-{}-{stamp:x}-{attempt}{suffix}",
                std::process::id()
            ));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(mut f) => {
                    let file = TempFile { path };
                    f.write_all(text.as_bytes())?;
                    f.flush()?;
                    return Ok(file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free temporary file name"))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The process for `program` on `file`: through `sh -c`, as git runs
/// `$PAGER` and `$EDITOR` (they may hold arguments). The file's path is an
/// argument, never part of the command text.
pub fn command(program: Program, shell_command: &str, file: &Path) -> std::process::Command {
    let mut c = std::process::Command::new("sh");
    match program {
        Program::Pager => {
            c.args(["-c", shell_command]);
            match std::fs::File::open(file) {
                Ok(f) => {
                    c.stdin(f);
                }
                Err(_) => {
                    c.stdin(std::process::Stdio::null());
                }
            }
        }
        Program::Editor => {
            c.args(["-c", &format!("{shell_command} \"$@\""), "ocview-editor"])
                .arg(file);
        }
    }
    c
}

/// What the status line says about a run that ended.
pub fn outcome(
    program: Program,
    shell_command: &str,
    content: &Content,
    status: std::io::Result<std::process::ExitStatus>,
) -> Result<String, String> {
    let name = crate::model::wire::sanitize::line(shell_command).into_owned();
    match status {
        Ok(s) if s.success() => Ok(format!(
            "{} closed: {} ({})",
            program.label(),
            content.what,
            crate::headless::content::size(&content.text)
        )),
        Ok(s) if s.code() == Some(127) => Err(format!(
            "{} not found: {name} (set ${})",
            program.label(),
            match program {
                Program::Pager => "PAGER",
                Program::Editor => "EDITOR",
            }
        )),
        Ok(s) => Err(format!("{} {name} failed: {s}", program.label())),
        Err(e) => Err(format!("cannot run {} {name}: {e}", program.label())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_come_from_the_environment_or_the_defaults() {
        let none = |_: &str| None;
        assert_eq!(Program::Pager.command(none), "less -R");
        assert_eq!(Program::Editor.command(none), "vi");
        let env = |k: &str| match k {
            "PAGER" => Some("most".to_string()),
            "EDITOR" => Some("nano".to_string()),
            "VISUAL" => Some(" ".to_string()),
            _ => None,
        };
        assert_eq!(Program::Pager.command(env), "most");
        assert_eq!(Program::Editor.command(env), "nano");
    }

    #[test]
    fn the_temp_file_is_private_and_goes_away() {
        use std::os::unix::fs::PermissionsExt;
        let f = TempFile::with("hello\n", ".txt").unwrap();
        let path = f.path.clone();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(f);
        assert!(!path.exists());
    }

    #[test]
    fn the_editor_gets_the_file_as_an_argument() {
        let f = TempFile::with("x", ".txt").unwrap();
        let out = command(Program::Editor, "printf '%s|'", &f.path)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{}|", f.path.display())
        );
        let out = command(Program::Pager, "cat", &f.path).output().unwrap();
        assert_eq!(out.stdout, b"x");
    }
}
