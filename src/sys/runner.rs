//! The one way spindle runs external programs (mkfs, mount, mysqld, smartctl, …).
//!
//! Every command is logged with its exact argument vector before it runs; a failure returns an
//! error that quotes the command and the tail of its stderr. Arguments are passed as a vector,
//! never through a shell, so user input can never become shell syntax.
//!
//! [`CommandRunner::run`] treats a non-zero exit as failure; [`CommandRunner::capture`] hands
//! back the output and the status whatever it is (for programs whose exit status is
//! information, like smartctl's status bits) and kills a program that runs over its limit.
//! What executes a command is an [`Exec`]: the real process spawner by default, or a
//! [`Recording`] fake in tests, which records every command line and answers from a table of
//! fixture outputs or a script, so "which commands, in which order" is tested without root.

use anyhow::bail;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Runs a program and hands back its output whatever its exit status: the seam between the
/// code that interprets programs and the machine.
pub trait Exec: Send + Sync {
    /// Runs `program args…` for at most `timeout`. `Err` only when it could not be started or
    /// ran over the limit; a non-zero exit is in [`Captured::status`].
    fn capture(
        &self,
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Captured, ExecError>;

    /// Where `program` is, if it is installed.
    fn which(&self, program: &str) -> Option<PathBuf> {
        which(program)
    }
}

/// Runs external commands with logging and error capture.
#[derive(Clone, Default)]
pub struct CommandRunner {
    /// Suppress the `spindle: $ …` log lines (the command still runs).
    pub quiet: bool,
    /// None: spawn real processes.
    exec: Option<Arc<dyn Exec>>,
}

impl std::fmt::Debug for CommandRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandRunner")
            .field("quiet", &self.quiet)
            .field("fake", &self.exec.is_some())
            .finish()
    }
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

/// No time limit worth the name, for [`CommandRunner::run`] (mkfs of a large disk included).
const NO_LIMIT: Duration = Duration::from_secs(24 * 3600);

impl CommandRunner {
    pub fn new() -> Self {
        Self::default()
    }

    /// A runner that does not log the command lines.
    pub fn quiet() -> Self {
        CommandRunner {
            quiet: true,
            exec: None,
        }
    }

    /// A runner whose commands go to `exec` (a test's [`Recording`]).
    pub fn with_exec(exec: Arc<dyn Exec>) -> Self {
        CommandRunner {
            quiet: true,
            exec: Some(exec),
        }
    }

    /// Where `program` is, if it is installed (PATH plus the sbin directories).
    pub fn which(&self, program: &str) -> Option<PathBuf> {
        match &self.exec {
            Some(e) => e.which(program),
            None => which(program),
        }
    }

    fn log(&self, line: &str) {
        if !self.quiet {
            crate::sys::log::say!("$ {line}");
        }
    }

    /// Runs `program args…` to completion; fails (quoting stderr) on a non-zero exit.
    pub fn run<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> anyhow::Result<Captured> {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        let shown = display_command(program, &args);
        let out = self
            .capture(program, &args, NO_LIMIT)
            .map_err(|e| match e {
                ExecError::NotInstalled { .. } => anyhow::anyhow!(
                    "could not run '{program}': it is not installed (not found in PATH)"
                ),
                e => anyhow::Error::new(e),
            })?;
        if out.status != Some(0) {
            let err = if out.stderr.trim().is_empty() {
                &out.stdout
            } else {
                &out.stderr
            };
            let how = match out.status {
                Some(c) => format!("exit status: {c}"),
                None => "killed by a signal".into(),
            };
            bail!("'{shown}' failed ({how}): {}", tail_lines(err.trim(), 15));
        }
        Ok(out)
    }

    /// Runs and returns stdout as text.
    pub fn stdout<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> anyhow::Result<String> {
        Ok(self.run(program, args)?.stdout)
    }

    /// Runs `program args…` for at most `timeout` and returns what it printed and its status,
    /// whatever the status (see [`Exec::capture`]).
    pub fn capture(
        &self,
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Captured, ExecError> {
        self.log(&display_command(program, args));
        match &self.exec {
            Some(e) => e.capture(program, args, timeout),
            None => spawn_and_wait(program, args, timeout),
        }
    }
}

impl Exec for CommandRunner {
    fn capture(
        &self,
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<Captured, ExecError> {
        CommandRunner::capture(self, program, args, timeout)
    }

    fn which(&self, program: &str) -> Option<PathBuf> {
        CommandRunner::which(self, program)
    }
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

/// The real [`Exec`]: spawn, collect both outputs, kill at the deadline.
fn spawn_and_wait(
    program: &str,
    args: &[String],
    timeout: Duration,
) -> Result<Captured, ExecError> {
    let shown = display_command(program, args);
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
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
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

type Script = Box<dyn Fn(&str, &[String]) -> Result<String, String> + Send + Sync>;

/// A fake [`Exec`] for tests. It records every command line (as [`display_command`] shows it)
/// and answers from a table of exact command lines ([`answer`](Self::answer),
/// [`fail`](Self::fail)), else from a script (exit 0 with its `Ok` text on stdout, or 1 with
/// its `Err` text on stderr), else with an error saying the test has no answer. `which` finds
/// every program but the ones named [`missing`](Self::missing).
#[derive(Default)]
pub struct Recording {
    calls: Mutex<Vec<String>>,
    answers: Vec<(String, Result<Captured, ExecError>)>,
    script: Option<Script>,
    missing: Vec<String>,
}

impl Recording {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers every command line the table does not with `script`.
    pub fn script(
        mut self,
        script: impl Fn(&str, &[String]) -> Result<String, String> + Send + Sync + 'static,
    ) -> Self {
        self.script = Some(Box::new(script));
        self
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

    /// Programs `which` does not find.
    pub fn missing(mut self, programs: &[&str]) -> Self {
        self.missing = programs.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The command lines run so far, in order.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Exec for Recording {
    fn capture(
        &self,
        program: &str,
        args: &[String],
        _timeout: Duration,
    ) -> Result<Captured, ExecError> {
        let shown = display_command(program, args);
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(shown.clone());
        if let Some((_, a)) = self.answers.iter().find(|(line, _)| *line == shown) {
            return a.clone();
        }
        match &self.script {
            Some(script) => Ok(match script(program, args) {
                Ok(stdout) => Captured {
                    status: Some(0),
                    stdout,
                    stderr: String::new(),
                },
                Err(stderr) => Captured {
                    status: Some(1),
                    stdout: String::new(),
                    stderr,
                },
            }),
            None => Err(ExecError::NotStarted {
                command: shown,
                cause: "the test has no answer for this command line".into(),
            }),
        }
    }

    fn which(&self, program: &str) -> Option<PathBuf> {
        (!self.missing.iter().any(|m| m == program))
            .then(|| PathBuf::from("/usr/bin").join(program))
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
        let r = CommandRunner::quiet();
        let err = r.run("sh", &["-c", "echo boom >&2; exit 3"]).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("sh -c") && msg.contains("boom") && msg.contains('3'),
            "{msg}"
        );
    }

    #[test]
    fn capture_keeps_output_and_status_of_a_failing_program() {
        let r = CommandRunner::quiet();
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
    fn a_recording_runner_logs_and_answers_from_its_table_and_script() {
        let fake = Arc::new(
            Recording::new()
                .answer("smartctl -a /dev/sda", 4, "{}")
                .missing(&["partprobe"])
                .script(|p, a| match p {
                    "losetup" => Ok("/dev/loop9\n".into()),
                    "mount" if a.iter().any(|x| x == "/bad") => {
                        Err("mount: /bad: no medium".into())
                    }
                    _ => Ok(String::new()),
                }),
        );
        let r = CommandRunner::with_exec(fake.clone());
        assert_eq!(
            r.stdout("losetup", &["--find", "--show"]).unwrap(),
            "/dev/loop9\n"
        );
        let e = r.run("mount", &["/dev/x", "/bad"]).unwrap_err();
        assert!(format!("{e:#}").contains("no medium"), "{e:#}");
        let args = vec!["-a".to_string(), "/dev/sda".to_string()];
        let c = r.capture("smartctl", &args, Duration::ZERO).unwrap();
        assert_eq!(c.status, Some(4));
        assert!(r.which("partprobe").is_none() && r.which("parted").is_some());
        assert_eq!(
            fake.calls(),
            [
                "losetup --find --show",
                "mount /dev/x /bad",
                "smartctl -a /dev/sda"
            ]
        );
        let bare = Recording::new();
        assert!(bare.capture("smartctl", &[], Duration::ZERO).is_err());
    }

    #[test]
    fn missing_program_says_not_installed() {
        let r = CommandRunner::quiet();
        let err = r.run("no-such-program-xyz", &["a"]).unwrap_err();
        assert!(format!("{err:#}").contains("not installed"));
    }
}
