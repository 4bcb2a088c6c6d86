//! The one way spindle runs external programs (mkfs, mount, mysqld, …).
//!
//! Every command is logged with its exact argument vector before it runs; a failure returns an
//! error that quotes the command and the tail of its stderr. Arguments are passed as a vector,
//! never through a shell, so user input can never become shell syntax.

use anyhow::{bail, Context};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs external commands with logging and error capture.
#[derive(Clone, Debug, Default)]
pub struct CommandRunner {
    /// Suppress the `spindle: $ …` log lines (the command still runs).
    pub quiet: bool,
}

/// Renders an argument vector the way a person would type it (quoting where needed).
pub fn display_command<S: AsRef<OsStr>>(program: &str, args: &[S]) -> String {
    let mut s = String::from(program);
    for a in args {
        let a = a.as_ref().to_string_lossy();
        s.push(' ');
        if a.is_empty()
            || a.chars()
                .any(|c| c.is_whitespace() || "'\"\\$`*?;&|<>()".contains(c))
        {
            s.push('\'');
            s.push_str(&a.replace('\'', "'\\''"));
            s.push('\'');
        } else {
            s.push_str(&a);
        }
    }
    s
}

/// Last `n` lines of a text (for quoting stderr or a log file in an error).
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl CommandRunner {
    pub fn new() -> Self {
        Self::default()
    }

    fn log(&self, line: &str) {
        if !self.quiet {
            eprintln!("spindle: $ {line}");
        }
    }

    /// Runs `program args…` to completion; fails (quoting stderr) on a non-zero exit.
    pub fn run<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> anyhow::Result<Output> {
        self.run_in(program, args, None)
    }

    /// Like [`run`](Self::run), in working directory `cwd`.
    pub fn run_in<S: AsRef<OsStr>>(
        &self,
        program: &str,
        args: &[S],
        cwd: Option<&Path>,
    ) -> anyhow::Result<Output> {
        let shown = display_command(program, args);
        self.log(&shown);
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null());
        if let Some(d) = cwd {
            cmd.current_dir(d);
        }
        let out = cmd.output().with_context(|| match which(program) {
            None => format!("could not run '{program}': it is not installed (not found in PATH)"),
            Some(_) => format!("could not run '{shown}'"),
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = if err.trim().is_empty() {
                String::from_utf8_lossy(&out.stdout).into_owned()
            } else {
                err.into_owned()
            };
            bail!(
                "'{shown}' failed ({}): {}",
                out.status,
                tail_lines(err.trim(), 15)
            );
        }
        Ok(out)
    }

    /// Runs and returns stdout as text.
    pub fn stdout<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> anyhow::Result<String> {
        Ok(String::from_utf8_lossy(&self.run(program, args)?.stdout).into_owned())
    }
}

/// Finds `program` in PATH (or returns it if it is a path that exists).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        let p = Path::new(program);
        return p.exists().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    let extra = ["/usr/sbin", "/sbin", "/usr/local/sbin"];
    std::env::split_paths(&path)
        .chain(extra.iter().map(std::path::PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_only_when_needed() {
        assert_eq!(
            display_command("mkfs.ext4", &["-L", "my disk", "/dev/sda1"]),
            "mkfs.ext4 -L 'my disk' /dev/sda1"
        );
        assert_eq!(display_command("echo", &["it's"]), "echo 'it'\\''s'");
    }

    #[test]
    fn failure_quotes_command_and_stderr() {
        let r = CommandRunner { quiet: true };
        let err = r.run("sh", &["-c", "echo boom >&2; exit 3"]).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("sh -c") && msg.contains("boom") && msg.contains('3'),
            "{msg}"
        );
    }

    #[test]
    fn missing_program_says_not_installed() {
        let r = CommandRunner { quiet: true };
        let err = r.run("no-such-program-xyz", &["a"]).unwrap_err();
        assert!(format!("{err:#}").contains("not installed"));
    }
}
