//! `spindle start` / `spindle abort`: ask a running daemon over its control socket.

use crate::appliance::daemon::{send_control, ControlCommand};
use crate::cli::ControlArgs;
use crate::config::appliance::ApplianceSettings;

/// Sends `cmd`, prints the daemon's answer; exit code 0 if it said ok, 1 if it refused.
pub fn run(cmd: ControlCommand, args: ControlArgs) -> anyhow::Result<i32> {
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
