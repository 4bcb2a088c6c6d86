//! The one way spindle runs external programs (mkfs, mount, mysqld, smartctl, …).
//!
//! Every command is logged with its exact argument vector before it runs; a failure returns an
//! error that quotes the command and the tail of its stderr. Arguments are passed as a vector,
//! never through a shell, so user input can never become shell syntax.
//!
//! Programs whose exit status is information rather than failure (smartctl's status bits) go
//! through the [`Exec`] seam: [`CommandRunner`] runs them for real (with a time limit),
//! [`ScriptedExec`] answers from fixtures and records the command lines for tests.

use anyhow::{bail, Context};
use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// What a program printed and how it ended, whatever its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// Exit code; `None` when a signal ended it.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Why a program could not be run to its end.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// Not found in PATH (nor in /usr/sbin, /sbin): install the package that provides it.
    #[error("'{program}' is not installed (not found in PATH)")]
    NotInstalled { program: String },
    /// Found but could not be started (permissions, not executable, out of resources).
    #[error("could not start '{command}': {cause}")]
    NotStarted { command: String, cause: String },
    /// Still running after the time limit; it was killed.
    #[error("'{command}' did not finish within {seconds} s and was killed")]
    TimedOut { command: String, seconds: u64 },
}

/// Runs a program and hands back its output whatever its exit status: the seam between code
/// that interprets a program's output and the machine, so tests check which command line was
/// run without running it.
pub trait Exec {
    /// Runs `program args…` for at most `timeout`. `Err` only when it could not be started or
    /// ran over the limit; a non-zero exit is in [`Captured::status`].
    fn capture(
        &self,
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Captured, ExecError>;
}

fn drain<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

impl Exec for CommandRunner {
    fn capture(
        &self,
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Captured, ExecError> {
        let shown = display_command(program, args);
        self.log(&shown);
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match which(program) {
                None => ExecError::NotInstalled {
                    program: program.to_string(),
                },
                Some(_) => ExecError::NotStarted {
                    command: shown.clone(),
                    cause: e.to_string(),
                },
            })?;
        let out = drain(child.stdout.take());
        let err = drain(child.stderr.take());
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) | Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ExecError::TimedOut {
                        command: shown,
                        seconds: timeout.as_secs(),
                    });
                }
            }
        };
        Ok(Captured {
            status: status.code(),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
    }
}

/// An [`Exec`] for tests: answers each command line from a script (fixture outputs) and
/// records every command line it was asked to run, in order.
#[derive(Debug, Default)]
pub struct ScriptedExec {
    /// (command line as [`display_command`] shows it, answer); the first exact match answers.
    answers: Vec<(String, Result<Captured, ExecError>)>,
    calls: Mutex<Vec<String>>,
}

impl ScriptedExec {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `command_line` (e.g. `smartctl --json=o -a -d sat /dev/sda`) with an exit
    /// status and stdout.
    pub fn answer(mut self, command_line: &str, status: i32, stdout: &str) -> Self {
        let captured = Captured {
            status: Some(status),
            stdout: stdout.to_string(),
            stderr: String::new(),
        };
        self.answers.push((command_line.to_string(), Ok(captured)));
        self
    }

    /// Answers `command_line` with an error (not installed, timed out).
    pub fn fail(mut self, command_line: &str, error: ExecError) -> Self {
        self.answers.push((command_line.to_string(), Err(error)));
        self
    }

    /// The command lines run so far.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl Exec for ScriptedExec {
    fn capture(
        &self,
        program: &str,
        args: &[String],
        _timeout: Duration,
    ) -> Result<Captured, ExecError> {
        let shown = display_command(program, args);
        if let Ok(mut c) = self.calls.lock() {
            c.push(shown.clone());
        }
        self.answers
            .iter()
            .find(|(line, _)| *line == shown)
            .map(|(_, a)| a.clone())
            .unwrap_or(Err(ExecError::NotStarted {
                command: shown,
                cause: "the test script has no answer for this command line".into(),
            }))
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
    fn capture_keeps_output_and_status_of_a_failing_program() {
        let r = CommandRunner { quiet: true };
        let args: Vec<String> = ["-c", "echo out; echo err >&2; exit 6"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = r.capture("sh", &args, Duration::from_secs(10)).unwrap();
        assert_eq!(c.status, Some(6));
        assert_eq!((c.stdout.as_str(), c.stderr.as_str()), ("out\n", "err\n"));
        let missing = r.capture("no-such-program-xyz", &[], Duration::from_secs(1));
        assert!(matches!(missing, Err(ExecError::NotInstalled { .. })));
        let slow = vec!["-c".to_string(), "sleep 5".to_string()];
        let t = r.capture("sh", &slow, Duration::from_millis(100));
        assert!(matches!(t, Err(ExecError::TimedOut { .. })), "{t:?}");
    }

    #[test]
    fn scripted_exec_answers_and_records() {
        let x = ScriptedExec::new().answer("smartctl -a /dev/sda", 4, "{}");
        let args = vec!["-a".to_string(), "/dev/sda".to_string()];
        assert_eq!(
            x.capture("smartctl", &args, Duration::ZERO).unwrap().status,
            Some(4)
        );
        assert!(x.capture("smartctl", &[], Duration::ZERO).is_err());
        assert_eq!(x.calls(), vec!["smartctl -a /dev/sda", "smartctl"]);
    }

    #[test]
    fn missing_program_says_not_installed() {
        let r = CommandRunner { quiet: true };
        let err = r.run("no-such-program-xyz", &["a"]).unwrap_err();
        assert!(format!("{err:#}").contains("not installed"));
    }
}
