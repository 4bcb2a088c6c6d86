//! Pasted sysbench command lines: `spindle --test=fileio …` and `spindle --test=oltp …` (the
//! 0.4 spelling sysbench 1.0 still accepts, with its deprecation warning), also after the
//! subcommand (`spindle fileio --test=fileio …`), `--test=PATH.lua`, and a bare script name or
//! path (`spindle … /usr/share/sysbench/oltp_read_write.lua run`) become spindle's subcommands
//! before clap parses the line. A 0.4 fileio line gets one line saying how to get 0.4's
//! semantics (`--compat=0.4`); it keeps sysbench 1.0's, as a modern sysbench does.

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

/// What a command line becomes: the rewritten words and the lines to print on stderr first.
pub struct Rewritten {
    pub args: Vec<OsString>,
    pub warnings: Vec<String>,
}

/// The one line for a sysbench 0.4 fileio line run without `--compat`: it keeps sysbench 1.0's
/// behaviour (as a modern sysbench does) and says how to get the articles' 0.4 semantics.
fn compat_hint(spellings: &[&str]) -> String {
    format!(
        "spindle: {} are sysbench 0.4 spellings; this runs as sysbench 1.0 runs it (1.0's semantics and report: --time 10 by default, no 10 000-request default, sequential modes wrap around); add --compat=0.4 for the 0.4.12 semantics and report the articles show",
        spellings.join(", ")
    )
}

/// Where `--test=NAME` / `--test NAME` is: its index, how many words it takes, the name.
fn find_test(words: &[String]) -> Result<Option<(usize, usize, String)>, String> {
    let Some(i) = words
        .iter()
        .position(|w| w == "--test" || w.starts_with("--test="))
    else {
        return Ok(None);
    };
    Ok(Some(match words[i].strip_prefix("--test=") {
        Some(v) => (i, 1, v.to_string()),
        None => (
            i,
            2,
            words
                .get(i + 1)
                .cloned()
                .ok_or("--test needs a test name (fileio, oltp or a script)")?,
        ),
    }))
}

/// `—mysql-db=sbtest` → `--mysql-db=sbtest`: web pages turn `--` into a long dash (seed 000's
/// lines have three), which no shell undoes. Returns the words and the ones it changed.
fn undash(args: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let mut changed = Vec::new();
    let args = args
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let w = a.to_string_lossy();
            let rest = w
                .strip_prefix('\u{2014}')
                .or_else(|| w.strip_prefix('\u{2013}'));
            match rest {
                Some(r) if i > 0 && r.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                    changed.push(w.to_string());
                    OsString::from(format!("--{r}"))
                }
                _ => a,
            }
        })
        .collect();
    (args, changed)
}

/// Rewrites sysbench's spellings into spindle's (program name first); other lines unchanged.
/// `--test=NAME` works at the top level (`spindle --test=fileio …`) and after the subcommand it
/// names (`spindle fileio --test=fileio …`, `spindle oltp --test=oltp_read_write …`).
pub fn rewrite(args: Vec<OsString>, subcommands: &[&str]) -> Result<Rewritten, String> {
    let (args, undashed) = undash(args);
    let mut warnings = Vec::new();
    if !undashed.is_empty() {
        warnings.push(format!(
            "spindle: read {} with `--` (a long dash, as web pages print `--`)",
            undashed.join(" ")
        ));
    }
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if words.len() < 2 {
        return Ok(Rewritten { args, warnings });
    }
    let after_sub = subcommands.contains(&words[1].as_str());
    if after_sub && !matches!(words[1].as_str(), "fileio" | "oltp") {
        return Ok(Rewritten { args, warnings });
    }
    let mut rest = args.clone();
    if let Some((i, n, name)) = find_test(&words)? {
        let sub = subcommand_for(&name)?;
        rest.drain(i..i + n);
        if !after_sub {
            rest.splice(1..1, sub.into_iter().map(OsString::from));
        } else if words[1] == sub[0] {
            // `spindle oltp --test=oltp_read_write run`: the test is the workload word.
            rest.splice(i..i, sub[1..].iter().map(OsString::from));
        } else {
            return Err(format!(
                "--test={name} names another test than `spindle {}`: drop it, or run `spindle {} …`",
                words[1], sub[0]
            ));
        }
        warnings.push(TEST_DEPRECATED.to_string());
        if name == "fileio" && !words.iter().any(|w| w.starts_with("--compat")) {
            let old: Vec<&str> = ["--max-requests", "--num-threads", "--max-time"]
                .into_iter()
                .filter(|f| {
                    words
                        .iter()
                        .any(|w| w == f || w.starts_with(&format!("{f}=")))
                })
                .collect();
            if !old.is_empty() {
                let mut spellings = vec!["--test=fileio"];
                spellings.extend(old);
                warnings.push(compat_hint(&spellings));
            }
        }
        return Ok(Rewritten {
            args: rest,
            warnings,
        });
    }
    // sysbench 1.0: the script is a word among the options.
    let script = words[1..]
        .iter()
        .any(|w| !w.starts_with('-') && (w.ends_with(".lua") || w.starts_with("oltp_")));
    if script && !after_sub {
        rest.insert(1, OsString::from("oltp"));
    }
    Ok(Rewritten {
        args: rest,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBS: &[&str] = &["fileio", "oltp", "suite"];

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    fn run(line: &str) -> (String, bool) {
        let (s, w) = run_w(line);
        (s, !w.is_empty())
    }

    fn run_w(line: &str) -> (String, Vec<String>) {
        let r = rewrite(words(line), SUBS).unwrap();
        let s: Vec<String> = r
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (s.join(" "), r.warnings)
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
            run("spindle fileio --file-num=4 run"),
            ("spindle fileio --file-num=4 run".into(), false)
        );
        assert_eq!(run("spindle --help").0, "spindle --help");
        assert_eq!(run("spindle suite --test=x").0, "spindle suite --test=x");
    }

    #[test]
    fn test_option_works_after_the_subcommand_too() {
        assert_eq!(
            run("spindle fileio --test=fileio --file-num=4 prepare"),
            ("spindle fileio --file-num=4 prepare".into(), true)
        );
        assert_eq!(
            run("spindle fileio --test fileio run").0,
            "spindle fileio run"
        );
        assert_eq!(
            run("spindle oltp --test=oltp_read_only --threads=2 run").0,
            "spindle oltp oltp_read_only --threads=2 run"
        );
        assert_eq!(
            run("spindle oltp --test=oltp run").0,
            "spindle oltp legacy run"
        );
        let e = rewrite(words("spindle fileio --test=oltp run"), SUBS)
            .err()
            .unwrap();
        assert!(
            e.contains("--test=oltp") && e.contains("spindle oltp"),
            "{e}"
        );
    }

    #[test]
    fn a_0_4_fileio_line_keeps_1_0_semantics_and_says_how_to_get_0_4() {
        // seed 003's run line
        let (line, w) = run_w("spindle --test=fileio --file-num=100 --file-total-size=81900M --num-threads=50 --file-test-mode=rndrw --max-requests=1000000 run");
        assert!(line.starts_with("spindle fileio --file-num=100"), "{line}");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[1].contains("--num-threads, --max-requests")
                || w[1].contains("--max-requests, --num-threads"),
            "{w:?}"
        );
        assert!(
            w[1].contains("--compat=0.4") && !w[1].contains('\n'),
            "{w:?}"
        );
        // seed 001's run line after `spindle fileio`
        let (_, w) = run_w("spindle fileio --test=fileio --file-total-size=50G --file-test-mode=rndrw --max-time=300 run");
        assert!(
            w.iter()
                .any(|l| l.contains("--max-time") && l.contains("--compat=0.4")),
            "{w:?}"
        );
        // asked for explicitly, or 1.0 spellings: no hint
        let (_, w) = run_w("spindle --test=fileio --compat=0.4 --max-requests=10 run");
        assert_eq!(w, vec![TEST_DEPRECATED.to_string()]);
        let (_, w) = run_w("spindle --test=fileio --events=10 --threads=2 run");
        assert_eq!(w, vec![TEST_DEPRECATED.to_string()]);
    }

    #[test]
    fn long_dashes_from_web_pages_are_read_as_double_dashes() {
        // seed 000's run line as printed by the blog
        let (line, w) = run_w("spindle --db-driver=mysql --threads=10 \u{2014}mysql-host= --mysql-port=3306 \u{2014}mysql-user= /x/oltp_legacy/oltp.lua run");
        assert_eq!(
            line,
            "spindle oltp --db-driver=mysql --threads=10 --mysql-host= --mysql-port=3306 --mysql-user= /x/oltp_legacy/oltp.lua run"
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("\u{2014}mysql-host= \u{2014}mysql-user="),
            "{w:?}"
        );
        // a dash that is a value, or not before an option name, stays
        assert_eq!(
            run("spindle tpcc --x=\u{2014} \u{2014}").0,
            "spindle tpcc --x=\u{2014} \u{2014}"
        );
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
