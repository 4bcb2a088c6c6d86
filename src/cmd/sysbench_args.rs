//! Pasted sysbench command lines: `spindle --test=fileio …` and `spindle --test=oltp …` (the
//! 0.4 spelling sysbench 1.0 still accepts, with its deprecation warning), `--test=PATH.lua`,
//! and a bare script name or path (`spindle … /usr/share/sysbench/oltp_read_write.lua run`)
//! become spindle's subcommands before clap parses the line.

use crate::oltp::Workload;
use std::ffi::OsString;

/// sysbench 1.0's words for the deprecated option.
pub const TEST_DEPRECATED: &str = "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.";

/// The subcommand words a sysbench test name stands for.
fn subcommand_for(test: &str) -> Result<Vec<String>, String> {
    match test {
        "fileio" => Ok(vec!["fileio".into()]),
        // sysbench 0.4's built-in OLTP test is the legacy oltp.lua in 1.0.
        "oltp" => Ok(vec!["oltp".into(), "legacy".into()]),
        t if Workload::parse(t).is_some() => Ok(vec!["oltp".into(), t.into()]),
        t => Err(format!(
            "--test={t}: spindle runs fileio and sysbench's OLTP scripts (oltp_read_write, oltp_read_only, …, oltp.lua); for the others use sysbench"
        )),
    }
}

/// What a command line becomes: the rewritten words and the warning to print, if any.
pub struct Rewritten {
    pub args: Vec<OsString>,
    pub warning: Option<&'static str>,
}

/// Rewrites sysbench's spellings into spindle's (program name first); other lines unchanged.
pub fn rewrite(args: Vec<OsString>, subcommands: &[&str]) -> Result<Rewritten, String> {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let unchanged = |args| {
        Ok(Rewritten {
            args,
            warning: None,
        })
    };
    if words.len() < 2 || subcommands.contains(&words[1].as_str()) {
        return unchanged(args);
    }
    // --test=NAME or --test NAME, anywhere.
    let test_at = words
        .iter()
        .position(|w| w == "--test" || w.starts_with("--test="));
    if let Some(i) = test_at {
        let (name, n) = match words[i].strip_prefix("--test=") {
            Some(v) => (v.to_string(), 1),
            None => (
                words
                    .get(i + 1)
                    .cloned()
                    .ok_or("--test needs a test name (fileio, oltp or a script)")?,
                2,
            ),
        };
        let mut rest: Vec<OsString> = args.clone();
        rest.drain(i..i + n);
        let sub = subcommand_for(&name)?;
        rest.splice(1..1, sub.into_iter().map(OsString::from));
        return Ok(Rewritten {
            args: rest,
            warning: Some(TEST_DEPRECATED),
        });
    }
    // sysbench 1.0: the script is a word among the options.
    let script = words[1..]
        .iter()
        .any(|w| !w.starts_with('-') && (w.ends_with(".lua") || w.starts_with("oltp_")));
    if script {
        let mut rest = args;
        rest.insert(1, OsString::from("oltp"));
        return unchanged(rest);
    }
    unchanged(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBS: &[&str] = &["fileio", "oltp", "suite"];

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    fn run(line: &str) -> (String, bool) {
        let r = rewrite(words(line), SUBS).unwrap();
        let s: Vec<String> = r
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (s.join(" "), r.warning.is_some())
    }

    #[test]
    fn seed_lines_become_subcommands() {
        // seed 003
        assert_eq!(
            run("spindle --test=fileio --file-num=100 --file-total-size=80G prepare"),
            (
                "spindle fileio --file-num=100 --file-total-size=80G prepare".into(),
                true
            )
        );
        // seed 001, with the option's value apart
        assert_eq!(
            run("spindle --test fileio --file-total-size=50G --file-test-mode=rndrw --max-time=300 run"),
            (
                "spindle fileio --file-total-size=50G --file-test-mode=rndrw --max-time=300 run"
                    .into(),
                true
            )
        );
        assert_eq!(
            run("spindle --test=oltp --oltp-table-size=1000 run").0,
            "spindle oltp legacy --oltp-table-size=1000 run"
        );
        assert_eq!(
            run("spindle --test=/usr/share/sysbench/oltp_read_write.lua --threads=4 run").0,
            "spindle oltp /usr/share/sysbench/oltp_read_write.lua --threads=4 run"
        );
        // seed 000: the legacy script path among the options, no --test
        assert_eq!(
            run("spindle --db-driver=mysql --threads=10 /usr/share/sysbench/tests/include/oltp_legacy/oltp.lua run"),
            (
                "spindle oltp --db-driver=mysql --threads=10 /usr/share/sysbench/tests/include/oltp_legacy/oltp.lua run".into(),
                false
            )
        );
        // spindle's own lines stay as they are
        assert_eq!(
            run("spindle fileio --test=x run").0,
            "spindle fileio --test=x run"
        );
        assert_eq!(run("spindle --help").0, "spindle --help");
    }

    #[test]
    fn unknown_tests_are_refused_with_the_reason() {
        let e = rewrite(words("spindle --test=cpu run"), SUBS)
            .err()
            .unwrap();
        assert!(e.contains("--test=cpu") && e.contains("fileio"), "{e}");
        let e = rewrite(words("spindle --test"), SUBS).err().unwrap();
        assert!(e.contains("--test needs"), "{e}");
    }
}
