//! The one way spindle runs external programs (mkfs, mount, mysqld, …).
//!
//! Every command is logged with its exact argument vector before it runs; a failure returns an
//! error that quotes the command and the tail of its stderr. Arguments are passed as a vector,
//! never through a shell, so user input can never become shell syntax.
//!
//! What executes a command is an [`Exec`]: the real process spawner by default, or a
//! [`Recording`] fake in tests, which records every command line and answers from a script, so
//! "which commands, in which order" is tested without root.

use anyhow::{bail, Context};
use std::ffi::OsStr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};

/// Executes one command and answers `which`.
pub trait Exec: Send + Sync {
    /// Runs `program args…` to completion. `Err` only when it could not be started.
    fn exec(&self, program: &str, args: &[String], cwd: Option<&Path>) -> std::io::Result<Output>;
    /// Where `program` is, if it is installed.
    fn which(&self, program: &str) -> Option<PathBuf>;
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

/// A fake [`Exec`] for tests: records every command line (as [`display_command`] shows it) and
/// answers from `script(program, args)`; `which` finds every program unless the script's
/// `missing` list names it.
pub struct Recording {
    log: Mutex<Vec<String>>,
    #[allow(clippy::type_complexity)]
    script: Box<dyn Fn(&str, &[String]) -> Result<String, String> + Send + Sync>,
    missing: Vec<String>,
}

impl Recording {
    /// A fake whose commands print `script`'s `Ok` text, or fail with its `Err` text on stderr.
    pub fn new(
        script: impl Fn(&str, &[String]) -> Result<String, String> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Recording {
            log: Mutex::new(Vec::new()),
            script: Box::new(script),
            missing: Vec::new(),
        })
    }

    /// Like [`new`](Self::new), with programs `which` does not find.
    pub fn without(
        missing: &[&str],
        script: impl Fn(&str, &[String]) -> Result<String, String> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Recording {
            log: Mutex::new(Vec::new()),
            script: Box::new(script),
            missing: missing.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// The command lines run so far, in order.
    pub fn commands(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Exec for Recording {
    fn exec(&self, program: &str, args: &[String], _cwd: Option<&Path>) -> std::io::Result<Output> {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(display_command(program, args));
        let (code, stdout, stderr) = match (self.script)(program, args) {
            Ok(out) => (0, out, String::new()),
            Err(err) => (1, String::new(), err),
        };
        Ok(Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.into_bytes(),
            stderr: stderr.into_bytes(),
        })
    }

    fn which(&self, program: &str) -> Option<PathBuf> {
        (!self.missing.iter().any(|m| m == program))
            .then(|| PathBuf::from("/usr/bin").join(program))
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
        let out = match &self.exec {
            Some(e) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| a.as_ref().to_string_lossy().into_owned())
                    .collect();
                e.exec(program, &args, cwd)
            }
            None => {
                let mut cmd = Command::new(program);
                cmd.args(args).stdin(Stdio::null());
                if let Some(d) = cwd {
                    cmd.current_dir(d);
                }
                cmd.output()
            }
        };
        let out = out.with_context(|| match self.which(program) {
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
        let r = CommandRunner::quiet();
        let err = r.run("sh", &["-c", "echo boom >&2; exit 3"]).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("sh -c") && msg.contains("boom") && msg.contains('3'),
            "{msg}"
        );
    }

    #[test]
    fn a_recording_runner_logs_and_answers_from_its_script() {
        let fake = Recording::without(&["partprobe"], |p, a| match p {
            "losetup" => Ok("/dev/loop9\n".into()),
            "mount" if a.iter().any(|x| x == "/bad") => Err("mount: /bad: no medium".into()),
            _ => Ok(String::new()),
        });
        let r = CommandRunner::with_exec(fake.clone());
        assert_eq!(
            r.stdout("losetup", &["--find", "--show"]).unwrap(),
            "/dev/loop9\n"
        );
        let e = r.run("mount", &["/dev/x", "/bad"]).unwrap_err();
        assert!(format!("{e:#}").contains("no medium"), "{e:#}");
        assert!(r.which("partprobe").is_none() && r.which("parted").is_some());
        assert_eq!(
            fake.commands(),
            ["losetup --find --show", "mount /dev/x /bad"]
        );
    }

    #[test]
    fn missing_program_says_not_installed() {
        let r = CommandRunner::quiet();
        let err = r.run("no-such-program-xyz", &["a"]).unwrap_err();
        assert!(format!("{err:#}").contains("not installed"));
    }
}
