//! The daemon's control socket (`/run/spindle/control.sock`): one line in (`start`, `abort`,
//! `status`), one line out (`ok: …` or `refused: …`). The daemon listens here; `spindle start`
//! and `spindle abort` (`cmd::control`) are the clients.

use anyhow::Context;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A request from `spindle start|abort|status` on the control socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    Start,
    Abort,
    Status,
}

impl ControlCommand {
    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            ControlCommand::Start => "start",
            ControlCommand::Abort => "abort",
            ControlCommand::Status => "status",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        match word.trim() {
            "start" => Some(ControlCommand::Start),
            "abort" => Some(ControlCommand::Abort),
            "status" => Some(ControlCommand::Status),
            _ => None,
        }
    }
}

/// Creates the socket's directory (0700 when spindle creates it), removes a stale socket,
/// binds, and makes the socket 0600.
pub(super) fn bind_control(path: &Path) -> anyhow::Result<UnixListener> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("could not create '{}'", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            anyhow::bail!(
                "another spindle daemon is listening on '{}' (stop it first)",
                path.display()
            );
        }
        std::fs::remove_file(path)
            .with_context(|| format!("could not remove the stale socket '{}'", path.display()))?;
    }
    let l = UnixListener::bind(path).with_context(|| {
        format!(
            "[appliance] control_socket: could not listen on '{}'",
            path.display()
        )
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(l)
}

pub(super) fn serve_control(
    listener: UnixListener,
    forward: impl Fn(ControlCommand) -> Option<String>,
    quit: Arc<AtomicBool>,
) {
    listener.set_nonblocking(true).ok();
    while !quit.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).ok();
                stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
                let mut line = String::new();
                let mut reader = BufReader::new(&stream);
                let reply = match reader.read_line(&mut line) {
                    Ok(_) => match ControlCommand::parse(&line) {
                        Some(cmd) => forward(cmd)
                            .unwrap_or_else(|| "refused: the daemon is stopping".to_string()),
                        None => format!(
                            "refused: unknown command '{}' (use start, abort or status)",
                            line.trim()
                        ),
                    },
                    Err(e) => format!("refused: could not read the request: {e}"),
                };
                let mut w = &stream;
                let _ = writeln!(w, "{reply}");
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => {
                crate::sys::log::say!("control socket: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_words_parse() {
        assert_eq!(
            ControlCommand::parse("start\n"),
            Some(ControlCommand::Start)
        );
        assert_eq!(
            ControlCommand::parse(" abort "),
            Some(ControlCommand::Abort)
        );
        assert_eq!(
            ControlCommand::parse("status"),
            Some(ControlCommand::Status)
        );
        assert_eq!(ControlCommand::parse("reboot"), None);
    }

    #[test]
    fn control_socket_is_private_and_a_second_daemon_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let sock = d.path().join("run/spindle/control.sock");
        let l = bind_control(&sock).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&sock), 0o600);
        assert_eq!(mode(sock.parent().unwrap()), 0o700);
        let e = bind_control(&sock).unwrap_err();
        assert!(e.to_string().contains("another spindle daemon"), "{e}");
        drop(l);
        // a stale socket file (daemon gone) is replaced
        bind_control(&sock).unwrap();
    }
}
