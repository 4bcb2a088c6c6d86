//! `spindle fileio` arguments → [`FileioConfig`], with sysbench's defaults and validation.

use crate::cli::FileioArgs;
use crate::fileio::config::MAX_ASYNC_BACKLOG;
use crate::fileio::{Compat, ExtraFlags, FileioConfig, Fill, FsyncMode, IoMode};
use anyhow::Context;
use std::time::Duration;

/// Builds the engine config from the command line, applying sysbench's defaults for the
/// chosen `--compat` and rejecting combinations sysbench rejects (or would silently mishandle).
pub fn from_args(a: &FileioArgs) -> anyhow::Result<FileioConfig> {
    let d = FileioConfig::default();
    let compat = a.compat.unwrap_or(Compat::V1_0);
    let dir = match &a.dir {
        Some(p) => p.clone(),
        None => {
            std::env::current_dir().context("could not read the current directory: give --dir")?
        }
    };
    let (time_default, events_default) = match compat {
        Compat::V1_0 => (10, 0),
        Compat::V0_4 => (0, 10_000),
    };
    let time = a.time.unwrap_or(time_default);
    let events = a.events.unwrap_or(events_default);
    let fsync_all = a.file_fsync_all.unwrap_or(false);
    let cfg = FileioConfig {
        dir,
        file_num: a.file_num.unwrap_or(d.file_num),
        block_size: a.file_block_size.unwrap_or(d.block_size),
        total_size: a.file_total_size.as_ref().map_or(d.total_size, |t| t.bytes),
        test_mode: a.file_test_mode,
        io_mode: a.file_io_mode.unwrap_or(IoMode::Sync),
        extra_flags: match &a.file_extra_flags {
            Some(t) => {
                ExtraFlags::parse(t).map_err(|e| anyhow::anyhow!("--file-extra-flags: {e}"))?
            }
            None => ExtraFlags::default(),
        },
        async_backlog: match a.file_async_backlog {
            Some(n) => u32::try_from(n).unwrap_or(u32::MAX),
            None => d.async_backlog,
        },
        fill: a.file_fill.unwrap_or(Fill::Zero),
        // --file-fsync-all forces periodic and end-of-test fsyncs off (as sysbench).
        fsync_freq: if fsync_all {
            0
        } else {
            a.file_fsync_freq.unwrap_or(d.fsync_freq)
        },
        fsync_all,
        fsync_end: if fsync_all {
            false
        } else {
            a.file_fsync_end.unwrap_or(true)
        },
        fsync_mode: a.file_fsync_mode.unwrap_or(FsyncMode::Fsync),
        merged_requests: a.file_merged_requests.unwrap_or(0),
        rw_ratio: a.file_rw_ratio.unwrap_or(d.rw_ratio),
        threads: a.threads.unwrap_or(1),
        time_limit: (time > 0).then(|| Duration::from_secs(time)),
        events,
        report_interval: a
            .report_interval
            .filter(|&s| s > 0)
            .map(Duration::from_secs),
        percentile: a.percentile.unwrap_or(95.0),
        histogram: a.histogram.unwrap_or(false),
        validate: a.validate.unwrap_or(false),
        rand_seed: a.rand_seed.unwrap_or(0),
        compat,
    };
    validate(&cfg)?;
    Ok(cfg)
}

/// Rejects configurations that cannot run or would measure nonsense.
pub fn validate(c: &FileioConfig) -> anyhow::Result<()> {
    use super::ensure;
    ensure(c.file_num > 0, "--file-num", "must be at least 1")?;
    ensure(
        c.block_size > 0,
        "--file-block-size",
        "must be at least 1 byte",
    )?;
    ensure(c.threads > 0, "--threads", "must be at least 1")?;
    ensure(
        c.threads <= 4096,
        "--threads",
        "more than 4096 threads is not supported",
    )?;
    ensure(
        c.file_size() >= c.block_size,
        "--file-total-size",
        format!(
            "{} bytes over {} files gives {} bytes per file, less than one block (--file-block-size={}): raise --file-total-size or lower --file-num",
            c.total_size,
            c.file_num,
            c.file_size(),
            c.block_size
        ),
    )?;
    ensure(
        c.rw_ratio.is_finite() && c.rw_ratio > 0.0,
        "--file-rw-ratio",
        "must be a positive number (reads per write, e.g. 1.5)",
    )?;
    ensure(
        (0.0..=100.0).contains(&c.percentile),
        "--percentile",
        "must be between 0 (off) and 100",
    )?;
    ensure(
        !(c.histogram && c.percentile == 0.0),
        "--histogram",
        "cannot be used with --percentile=0 (sysbench rejects it too)",
    )?;
    ensure(
        (1..=MAX_ASYNC_BACKLOG).contains(&c.async_backlog),
        "--file-async-backlog",
        format!("must be between 1 and {MAX_ASYNC_BACKLOG} (requests in flight per thread)"),
    )?;
    if c.io_mode == IoMode::Async {
        if let Some(mode) = c.test_mode {
            crate::fileio::check_backlog(c, mode)
                .map_err(|e| anyhow::anyhow!("--file-async-backlog: {e}"))?;
        }
    }
    ensure(
        !(c.io_mode == IoMode::Mmap && c.extra_flags.direct),
        "--file-extra-flags=direct",
        "cannot be combined with --file-io-mode=mmap (mapped I/O always goes through the page cache)",
    )?;
    ensure(
        !(c.compat == Compat::V1_0 && c.time_limit.is_none() && c.events == 0),
        "--time=0",
        "with --events=0 the run would never end: set --time or --events",
    )?;
    let req = c.seq_request_size();
    ensure(
        req <= 1 << 30,
        "--file-merged-requests",
        "makes requests larger than 1 GiB: use a smaller value",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> anyhow::Result<(Option<crate::cli::Step>, FileioConfig)> {
        let mut v = vec!["spindle", "fileio"];
        v.extend_from_slice(args);
        let cli = crate::cli::Cli::try_parse_from(v)?;
        let crate::cli::Command::Fileio(a) = cli.command else {
            panic!("not a fileio command")
        };
        Ok((a.step, from_args(&a)?))
    }

    #[test]
    fn sysbench_defaults() {
        let (step, c) = parse(&["--dir=/tmp", "run"]).unwrap();
        assert_eq!(step, Some(crate::cli::Step::Run));
        assert_eq!(c.file_num, 128);
        assert_eq!(c.block_size, 16384);
        assert_eq!(c.total_size, 2 << 30);
        assert_eq!(c.fsync_freq, 100);
        assert!(c.fsync_end);
        assert_eq!(c.time_limit, Some(Duration::from_secs(10)));
        assert_eq!(c.events, 0);
        assert_eq!(c.percentile, 95.0);
        assert_eq!(c.rw_ratio, 1.5);
    }

    #[test]
    fn pasted_sysbench_command_line_parses_with_step_anywhere() {
        let (step, c) = parse(&[
            "--file-num=16",
            "prepare",
            "--file-total-size=256M",
            "--file-test-mode=rndrw",
            "--num-threads=8",
            "--max-requests=0",
            "--max-time=300",
            "--file-extra-flags=direct",
            "--file-fsync-end=off",
            "--histogram",
            "--dir=/tmp",
        ])
        .unwrap();
        assert_eq!(step, Some(crate::cli::Step::Prepare));
        assert_eq!((c.file_num, c.total_size, c.threads), (16, 256 << 20, 8));
        assert_eq!(c.time_limit, Some(Duration::from_secs(300)));
        assert!(c.extra_flags.direct && !c.fsync_end && c.histogram);
    }

    #[test]
    fn compat_0_4_defaults_to_10000_requests_and_no_time_limit() {
        let (_, c) = parse(&["--compat=0.4", "--dir=/tmp", "run"]).unwrap();
        assert_eq!(c.events, 10_000);
        assert_eq!(c.time_limit, None);
        assert!(parse(&["--compat=2", "--dir=/tmp"])
            .unwrap_err()
            .to_string()
            .contains("--compat"));
    }

    #[test]
    fn compat_takes_the_same_spellings_here_and_in_a_profile() {
        for (word, compat) in [
            ("1.0", Compat::V1_0),
            ("1", Compat::V1_0),
            ("1.0.20", Compat::V1_0),
            ("0.4", Compat::V0_4),
            ("0.4.12", Compat::V0_4),
        ] {
            let (_, c) = parse(&[&format!("--compat={word}"), "--dir=/tmp", "run"]).unwrap();
            assert_eq!(c.compat, compat, "{word}");
            let text = format!(
                "[[fileio]]\nfile_num = 1\ntotal_size = \"1G\"\nmodes = [\"rndrd\"]\nthreads = [1]\ncompat = \"{word}\"\n"
            );
            let p =
                crate::config::profile::SuiteProfile::parse(&text, "mine", "mine.toml").unwrap();
            assert_eq!(p.fileio[0].base.compat, compat, "{word}");
        }
    }

    #[test]
    fn fsync_all_disables_periodic_and_end_fsyncs() {
        let (_, c) = parse(&["--file-fsync-all=on", "--dir=/tmp"]).unwrap();
        assert!(c.fsync_all && c.fsync_freq == 0 && !c.fsync_end);
    }

    #[test]
    fn bad_values_name_the_flag() {
        let cases: &[(&[&str], &str)] = &[
            (&["--file-async-backlog=0"], "--file-async-backlog"),
            (&["--file-async-backlog=100000"], "--file-async-backlog"),
            (
                &["--file-async-backlog=99999999999"],
                "--file-async-backlog",
            ),
            (
                &[
                    "--file-io-mode=async",
                    "--file-test-mode=seqrd",
                    "--file-merged-requests=1024",
                ],
                "--file-async-backlog",
            ),
            (&["--file-fill=gray"], "--file-fill"),
            (&["--file-extra-flags=bogus"], "--file-extra-flags"),
            (&["--file-num=0"], "--file-num"),
            (&["--file-total-size=1K"], "--file-total-size"),
            (&["--histogram", "--percentile=0"], "--histogram"),
            (&["--time=0"], "--time=0"),
            (
                &["--file-io-mode=mmap", "--file-extra-flags=direct"],
                "mmap",
            ),
            (&["--file-rw-ratio=0"], "--file-rw-ratio"),
        ];
        for (args, want) in cases {
            let mut v = args.to_vec();
            v.push("--dir=/tmp");
            let err = format!("{:#}", parse(&v).unwrap_err());
            assert!(err.contains(want), "{args:?}: {err}");
        }
        // clap-level errors name the option too.
        let err = parse(&["--file-block-size=12Q", "--dir=/tmp"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--file-block-size"), "{err}");
        let err = parse(&["--validate=maybe", "--dir=/tmp"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--validate"), "{err}");
    }
}
