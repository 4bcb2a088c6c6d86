//! `spindle start` / `spindle abort`: the control-socket client, asking a running daemon.

pub use crate::appliance::control::ControlCommand as Request;
use crate::cli::ControlArgs;
use crate::config::appliance::ApplianceSettings;
use anyhow::Context;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Sends `cmd`, prints the daemon's answer; exit code 0 if it said ok, 1 if it refused.
pub fn run(cmd: Request, args: ControlArgs) -> anyhow::Result<i32> {
    let socket = match args.socket {
        Some(s) => s,
        None => {
            ApplianceSettings::load(args.config.as_deref())?
                .appliance
                .control_socket
        }
    };
    let answer = send_control(&socket, cmd)?;
    println!("{answer}");
    Ok(if answer.starts_with("ok") { 0 } else { 1 })
}

/// Sends `cmd` to a running daemon and returns its answer.
pub fn send_control(socket: &Path, cmd: Request) -> anyhow::Result<String> {
    let word = cmd.word();
    let mut s = UnixStream::connect(socket).with_context(|| {
        format!(
            "could not reach the spindle daemon at '{}' (is `spindle daemon` running? are you root?)",
            socket.display()
        )
    })?;
    s.set_read_timeout(Some(Duration::from_secs(15)))?;
    writeln!(s, "{word}")?;
    let mut answer = String::new();
    BufReader::new(&s).read_line(&mut answer)?;
    Ok(answer.trim().to_string())
}
