//! spindle's one voice on stderr for what the daemon and a run report as they go (state
//! changes, the button, sticks, commands run as root, a phase starting), as ripgrep's
//! `messages.rs` is its one voice: every line through [`say!`], written the same way
//! wherever stderr goes.
//!
//! * A terminal, or the journal (systemd's `JOURNAL_STREAM` names stderr): `spindle: message`.
//!   The journal stamps each line itself and tags it `spindle[pid]`; the image's end-to-end test
//!   reads these lines on the serial console as they are.
//! * Anything else (a file, a pipe: `spindle daemon 2>>log`): the same line after an RFC 3339
//!   UTC timestamp, so a log kept without the journal still says when.
//!
//! A line is written whole, under stderr's lock, and a failed write (stderr closed) is
//! dropped: a report must never turn into a panic, as `eprintln!` would.
//! Reports of a command's own result (sysbench's report text, `spindle disks`' table) are not
//! log lines: the runners in `cmd/` print those.

use std::fmt;
use std::io::{IsTerminal as _, Write as _};
use std::sync::OnceLock;

/// Where stderr goes, decided once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    Terminal,
    Journal,
    /// A file or a pipe: lines carry a timestamp.
    Plain,
}

/// Where this process's stderr goes.
pub fn sink() -> Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    *SINK.get_or_init(|| {
        if std::io::stderr().is_terminal() {
            return Sink::Terminal;
        }
        let journal = std::env::var("JOURNAL_STREAM").ok();
        match (journal, stderr_identity()) {
            (Some(j), Some(id)) if names_stream(&j, id) => Sink::Journal,
            _ => Sink::Plain,
        }
    })
}

/// `(st_dev, st_ino)` of fd 2.
fn stderr_identity() -> Option<(u64, u64)> {
    use std::os::fd::AsFd as _;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    use std::os::unix::fs::MetadataExt as _;
    Some((meta.dev(), meta.ino()))
}

/// Whether `JOURNAL_STREAM` (`DEVICE:INODE`, decimal) names the stream `id`.
fn names_stream(journal_stream: &str, id: (u64, u64)) -> bool {
    let mut parts = journal_stream.trim().splitn(2, ':');
    let dev = parts.next().and_then(|d| d.parse::<u64>().ok());
    let ino = parts.next().and_then(|i| i.parse::<u64>().ok());
    dev == Some(id.0) && ino == Some(id.1)
}

/// The line as written to `sink` at `unix_secs`, without its newline.
pub fn format_line(sink: Sink, unix_secs: u64, message: fmt::Arguments<'_>) -> String {
    match sink {
        Sink::Terminal | Sink::Journal => format!("spindle: {message}"),
        Sink::Plain => format!(
            "{} spindle: {message}",
            super::clock::rfc3339_from_unix(unix_secs)
        ),
    }
}

/// Writes one line; use [`say!`].
pub fn line(message: fmt::Arguments<'_>) {
    let mut text = format_line(sink(), super::clock::unix_now(), message);
    text.push('\n');
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// One line of what spindle is doing, on stderr: `say!("run {id} copied to the stick")`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::sys::log::line(format_args!($($arg)*))
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_and_the_journal_get_the_bare_line_a_file_gets_a_timestamp() {
        let t = 1_796_284_800; // 2026-12-03T08:00:00Z
        assert_eq!(
            format_line(Sink::Terminal, t, format_args!("run {} ended", 7)),
            "spindle: run 7 ended"
        );
        assert_eq!(
            format_line(Sink::Journal, t, format_args!("x")),
            "spindle: x"
        );
        assert_eq!(
            format_line(Sink::Plain, t, format_args!("button: line 3")),
            "2026-12-03T08:00:00Z spindle: button: line 3"
        );
    }

    #[test]
    fn journal_stream_must_name_this_very_stream() {
        assert!(names_stream("8:12345", (8, 12345)));
        assert!(names_stream(" 8:12345\n", (8, 12345)));
        assert!(!names_stream("8:12346", (8, 12345)));
        assert!(!names_stream("8", (8, 12345)));
        assert!(!names_stream("", (8, 12345)));
    }
}
