//! What makes a figure doubtful: one list per result (a measurement phase with its numbers),
//! computed from the document alone — so a bundle of an older spindle gets them too — and one
//! numbered list per run ([`DoubtList`]) that summary.txt (`spindle report show`) and
//! report.html print the same way, each figure carrying the numbers of its doubts.
//! `spindle report compare` numbers the same sentences across its runs.
//!
//! The doubts: the phase did not finish; the target is a filesystem in RAM; the page cache may
//! serve a fileio set; the OLTP or TPC-C data set fits in the buffer pool; the run was too
//! short for a steady state; the Pi throttled or its supply sagged (`report::health`); the USB
//! link was slower than USB 3; the rate reached no steady state by the result's criterion, or
//! left it (and what the target recorded that explains it). A run that did not finish is said
//! once for the run.

use crate::model::{BenchResult, TestOptions};
use crate::model::{Phase, Regime};
use crate::model::{PhaseResult, PhaseStatus, RunStatus, SuiteResult, TargetResult};
use crate::stats::steady::SteadyState;
use crate::units::human_size;

/// What report.html and summary.txt say when no result has a doubt. Power is claimed only
/// where it was read (`report::health`); elsewhere it says it was not measured.
pub fn none_found(s: &SuiteResult) -> String {
    let health: Vec<_> = s.targets.iter().map(super::health::of).collect();
    let power = if health.iter().all(|h| h.power_checked().is_some()) {
        "no throttling or under-voltage was reported".to_string()
    } else {
        let first = health.first().map(|h| h.undervoltage());
        format!(
            "under-voltage was {}",
            first.as_deref().unwrap_or("not measured")
        )
    };
    format!("No doubts found: the run is complete, {power}, every disk had a USB 3 link (or is not on USB), every phase finished, no target was in RAM, every run was long enough, and the data sets were not cache-sized.")
}

/// Runs measured for less than this (seconds, rounded) show caches and warm-up more than the
/// disk's steady state.
pub const STEADY_S: f64 = 30.0;

/// What a doubt is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Unfinished,
    InRam,
    PageCache,
    BufferPool,
    ShortRun,
    /// Throttling or under-voltage reported (or under-voltage not measured on a Pi).
    Power,
    SlowLink,
    /// No steady state by the result's criterion, or one left (`engine::steady`).
    Unsteady,
}

/// One reason to doubt a figure, as a sentence without its subject (the target).
#[derive(Clone, Debug, PartialEq)]
pub struct Doubt {
    pub kind: Kind,
    pub text: String,
}

fn doubt(kind: Kind, text: String) -> Doubt {
    Doubt { kind, text }
}

/// The doubts about phase `p` of target `t` (empty for a phase without numbers).
pub fn of_result(s: &SuiteResult, t: &TargetResult, p: &PhaseResult) -> Vec<Doubt> {
    let Some(r) = &p.result else {
        return vec![];
    };
    let mut out = Vec::new();
    if p.status != PhaseStatus::Ok {
        out.push(doubt(
            Kind::Unfinished,
            format!("did not finish ({}): the figures are partial.", p.status),
        ));
    }
    let in_ram = t.filesystem.as_ref().filter(|f| f.in_ram);
    if let Some(fs) = in_ram {
        out.push(doubt(
            Kind::InRam,
            format!(
                "on {}, a filesystem in RAM: the figures measure memory, not a disk.",
                fs.fs_type
            ),
        ));
    } else if let Some(d) = page_cache(s, p, r) {
        out.push(d);
    }
    out.extend(buffer_pool(p, r));
    let short = r.total_time_s.round() < STEADY_S;
    if short {
        out.push(doubt(
            Kind::ShortRun,
            format!(
                "measured for less than {STEADY_S:.0} s: too short for a steady state (the disk's own cache, write-back and warm-up weigh more than in a longer run)."
            ),
        ));
    }
    // Power as the target's health readings say it (one reading for every view).
    let power = super::health::of(t).doubts();
    out.extend(power.into_iter().map(|text| doubt(Kind::Power, text)));
    if let Some(l) = t.slow_usb_link() {
        out.push(doubt(
            Kind::SlowLink,
            format!(
                "on a {} link, not USB 3: the figures are capped by the link.",
                l.name()
            ),
        ));
    }
    out.extend(unsteady(t, r, short));
    out
}

/// The line a result's steady state gets beside its figures: `steady state (iops_slope:10%,
/// dur 10 s, ramp 2 s): attained at 12.0 s`, `…: attained at 12.0 s, left at 41.0 s (cause
/// unknown)`, `…: not attained: …`.
pub fn steady_line(s: &SteadyState) -> String {
    let head = format!(
        "steady state ({}, dur {} s, ramp {} s)",
        s.criterion, s.dur_s, s.ramp_s
    );
    let what = match (s.at_s, s.left_at_s) {
        (Some(at), Some(left)) => {
            let cause = match s.reason.as_deref() {
                None | Some(UNKNOWN) => "cause unknown",
                Some(r) => r,
            };
            format!("attained at {at:.1} s, left at {left:.1} s ({cause})")
        }
        (Some(at), None) => format!("attained at {at:.1} s"),
        (None, _) => s.reason.clone().unwrap_or_else(|| "not attained".into()),
    };
    format!("{head}: {what}")
}

/// What a left steady state records when nothing in the result explains it.
const UNKNOWN: &str = "unknown";

/// No steady state by the result's criterion, or one it left. Not when the run was too short
/// for the window and the short-run doubt already says so, nor without interval samples
/// (nothing was judged; the steady-state line says why).
fn unsteady(t: &TargetResult, r: &BenchResult, short: bool) -> Option<Doubt> {
    let s = r.steady_state.as_ref()?;
    let how = format!("{} (dur {} s, ramp {} s)", s.criterion, s.dur_s, s.ramp_s);
    if s.left_at_s.is_some() {
        let cause = match s.reason.as_deref() {
            None | Some(UNKNOWN) => leave_cause(t).unwrap_or_else(|| {
                "nothing recorded explains it (no throttling, under-voltage or USB trouble)".into()
            }),
            Some(c) => c.to_string(),
        };
        return Some(doubt(
            Kind::Unsteady,
            format!("left its steady state by {how}: the rate fell beyond the limit for a whole window; {cause}."),
        ));
    }
    let reason = s.reason.as_deref().unwrap_or_default();
    let unjudged = reason.starts_with(crate::stats::steady::NO_SAMPLES)
        || (short && reason.starts_with(crate::stats::steady::TOO_SHORT));
    if s.attained || unjudged {
        return None;
    }
    Some(doubt(
        Kind::Unsteady,
        format!("did not reach a steady state by {how}: the figure averages a rate that was still changing."),
    ))
}

/// Writes into each result of `t` that left its steady state for no known reason what the
/// target recorded that explains it (the suite, once the target's health and kernel log are in).
pub fn explain_left(t: &mut TargetResult) {
    let Some(cause) = leave_cause(t) else {
        return;
    };
    for r in t.phases.iter_mut().filter_map(|p| p.result.as_mut()) {
        if let Some(s) = r.steady_state.as_mut() {
            if s.left_at_s.is_some() && s.reason.as_deref() == Some(UNKNOWN) {
                s.reason = Some(cause.clone());
            }
        }
    }
}

/// What the target recorded that explains a drop: throttling or under-voltage, USB trouble in
/// the kernel log; none when nothing does.
fn leave_cause(t: &TargetResult) -> Option<String> {
    let h = super::health::of(t);
    if h.throttled_bits != 0 {
        return Some(format!(
            "the Pi reported {} while the target ran",
            crate::sys::state::throttled_flags(h.throttled_bits).join(", ")
        ));
    }
    if h.undervoltage_seen || h.undervoltage_logged > 0 {
        return Some("under-voltage was detected while the target ran".into());
    }
    if let Some(crate::disk::kernel_log::UsbTroubleCount::Counted(c)) = &t.usb_trouble {
        let trouble: Vec<String> = c
            .disks
            .values()
            .filter(|u| !u.is_empty())
            .map(|u| u.describe())
            .collect();
        if !trouble.is_empty() {
            return Some(format!(
                "the kernel logged USB trouble ({})",
                trouble.join("; ")
            ));
        }
    }
    None
}

/// A fileio set the page cache can hold, read or written without O_DIRECT.
fn page_cache(s: &SuiteResult, p: &PhaseResult, r: &BenchResult) -> Option<Doubt> {
    let TestOptions::Fileio(c) = &r.options else {
        return None;
    };
    let ram = s.host.ram_bytes;
    let cached = c.io_mode == crate::fileio::IoMode::Mmap || !c.extra_flags.direct;
    if !cached || ram == 0 || c.total_size >= ram {
        return None;
    }
    let dropped = match p.caches_dropped {
        Some(true) => " (it was dropped before the run; the run fills it again)",
        Some(false) => " (it could not be dropped before the run: that needs root)",
        None => "",
    };
    Some(doubt(
        Kind::PageCache,
        format!(
            "the {} file set is smaller than RAM ({}) and not opened O_DIRECT: the page cache may serve it{dropped}; not I/O-bound.",
            human_size(c.total_size),
            human_size(ram)
        ),
    ))
}

/// An OLTP or TPC-C data set that fits in the buffer pool.
fn buffer_pool(p: &PhaseResult, r: &BenchResult) -> Option<Doubt> {
    let fit = p.data_set.filter(|f| f.regime() == Regime::CpuBound)?;
    let engine = match r.options {
        TestOptions::Tpcc(_) => "TPC-C",
        _ => "OLTP",
    };
    let data = format!(
        "{}{}",
        human_size(fit.data_bytes),
        if fit.measured { "" } else { ", estimated" }
    );
    let pool = human_size(fit.buffer_pool_bytes);
    let on_purpose = matches!(
        p.phase,
        Some(Phase::OltpRun {
            regime: Some(Regime::CpuBound),
            ..
        })
    );
    Some(doubt(
        Kind::BufferPool,
        if on_purpose {
            format!("CPU-bound on purpose (the CPU-bound pass of [oltp.regimes]): the {engine} data set ({data}) fits in the {pool} buffer pool, so the disk barely shows.")
        } else {
            format!("the {engine} data set ({data}) fits in the {pool} buffer pool: CPU-bound, the figures measure CPU and memory more than the disk.")
        },
    ))
}

/// What is doubtful about the run as a whole: it did not finish.
pub fn of_run(s: &SuiteResult) -> Option<String> {
    match s.status {
        RunStatus::Complete | RunStatus::NoTargets => None,
        RunStatus::Running => Some(
            "The run is still going (or stopped without saying so): later phases are missing."
                .into(),
        ),
        st => Some(format!(
            "The run is {st}: phases after the stop have no figures."
        )),
    }
}

/// One numbered doubt of a run and the results it holds for.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: Kind,
    pub text: String,
    /// (target index, the phases it holds for), in target order.
    pub who: Vec<(usize, Vec<String>)>,
}

/// Every doubt of a run, numbered from 1 in the order the results meet them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DoubtList {
    /// About the run as a whole (not numbered).
    pub run: Option<String>,
    pub items: Vec<Item>,
}

impl DoubtList {
    pub fn of(s: &SuiteResult) -> Self {
        let mut found = Vec::new();
        for (ti, t) in s.targets.iter().enumerate() {
            for p in &t.phases {
                let of = of_result(s, t, p).into_iter();
                found.extend(of.map(|d| (d.text, (d.kind, ti, p.name.clone()))));
            }
        }
        let items = super::group::grouped(found)
            .into_iter()
            .map(|(text, holds)| Item {
                kind: holds[0].0,
                text,
                who: super::group::grouped(holds.into_iter().map(|(_, t, p)| (t, p))),
            })
            .collect();
        DoubtList {
            run: of_run(s),
            items,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.run.is_none() && self.items.is_empty()
    }

    /// The numbers (from 1) of the doubts about phase `phase` of target `target`.
    pub fn refs(&self, target: usize, phase: &str) -> Vec<usize> {
        let holds = |it: &Item| {
            it.who
                .iter()
                .any(|(t, ps)| *t == target && ps.iter().any(|p| p == phase))
        };
        (0..self.items.len())
            .filter(|i| holds(&self.items[*i]))
            .map(|i| i + 1)
            .collect()
    }

    /// [`refs`](Self::refs) as `1,3` (empty when there is none).
    pub fn refs_text(&self, target: usize, phase: &str) -> String {
        let r: Vec<String> = self
            .refs(target, phase)
            .iter()
            .map(|n| n.to_string())
            .collect();
        r.join(",")
    }

    /// The list as lines: the run's doubt, then `[n] <target> (<phases>): <doubt>`; a doubt
    /// that holds for every result of a target says `every result`, and targets with the same
    /// phases are named together.
    pub fn lines(&self, s: &SuiteResult) -> Vec<String> {
        let label = |t: usize, ps: &[String]| {
            let all = s.targets[t].phases.iter().filter(|p| p.result.is_some());
            if ps.len() > 1 && ps.len() == all.count() {
                "every result".to_string()
            } else {
                ps.join(", ")
            }
        };
        let mut out: Vec<String> = self.run.iter().cloned().collect();
        for (n, it) in self.items.iter().enumerate() {
            // (label, targets) groups, in target order.
            let groups = super::group::grouped(
                it.who
                    .iter()
                    .map(|(t, ps)| (label(*t, ps), s.targets[*t].name.as_str())),
            );
            let who: Vec<String> = groups
                .iter()
                .map(|(l, names)| format!("{} ({l})", names.join(", ")))
                .collect();
            out.push(format!("[{}] {}: {}", n + 1, who.join("; "), it.text));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::suite::tests_support::two_disk_suite;
    use crate::model::{DataSetFit, FilesystemRecord};

    fn tmpfs() -> Option<FilesystemRecord> {
        Some(FilesystemRecord {
            fs_type: "tmpfs".into(),
            source: Some("tmpfs".into()),
            in_ram: true,
        })
    }

    #[test]
    fn a_small_fileio_set_without_o_direct_may_be_served_by_the_page_cache() {
        let mut s = two_disk_suite();
        s.host.ram_bytes = 8 << 30;
        s.targets[0].phases[0].caches_dropped = Some(true);
        let d = of_result(&s, &s.targets[0], &s.targets[0].phases[0]);
        let kinds: Vec<Kind> = d.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [Kind::PageCache, Kind::ShortRun]);
        assert_eq!(
            d[0].text,
            "the 2.0 GiB file set is smaller than RAM (8.0 GiB) and not opened O_DIRECT: the page cache may serve it (it was dropped before the run; the run fills it again); not I/O-bound."
        );
        assert!(
            d[1].text.starts_with("measured for less than 30 s"),
            "{}",
            d[1].text
        );
        // O_DIRECT, or a set larger than RAM: no page-cache doubt
        if let Some(r) = &mut s.targets[0].phases[0].result {
            if let TestOptions::Fileio(c) = &mut r.options {
                c.extra_flags.direct = true;
            }
            r.measurement.total_time_s = 60.0;
        }
        assert_eq!(of_result(&s, &s.targets[0], &s.targets[0].phases[0]), []);
    }

    #[test]
    fn a_target_in_ram_says_so_instead_of_the_page_cache() {
        let mut s = two_disk_suite();
        s.host.ram_bytes = 8 << 30;
        s.targets[0].filesystem = tmpfs();
        let d = of_result(&s, &s.targets[0], &s.targets[0].phases[0]);
        assert_eq!(d[0].kind, Kind::InRam);
        assert_eq!(
            d[0].text,
            "on tmpfs, a filesystem in RAM: the figures measure memory, not a disk."
        );
        assert!(!d.iter().any(|x| x.kind == Kind::PageCache));
    }

    #[test]
    fn a_data_set_that_fits_the_buffer_pool_is_cpu_bound() {
        let mut s = two_disk_suite();
        let p = &mut s.targets[0].phases[0];
        if let Some(r) = &mut p.result {
            r.options = TestOptions::Oltp(Box::default());
            r.measurement.total_time_s = 120.0;
        }
        p.data_set = Some(DataSetFit {
            data_bytes: 10 << 20,
            measured: true,
            buffer_pool_bytes: 64 << 20,
        });
        let d = of_result(&s, &s.targets[0], &s.targets[0].phases[0]);
        assert_eq!(
            d.iter().map(|x| x.text.as_str()).collect::<Vec<_>>(),
            ["the OLTP data set (10.0 MiB) fits in the 64.0 MiB buffer pool: CPU-bound, the figures measure CPU and memory more than the disk."]
        );
        // the CPU-bound pass of a two-regime profile says it is so on purpose
        let p = &mut s.targets[0].phases[0];
        p.phase = Some(Phase::OltpRun {
            workload: crate::oltp::Workload::ReadOnly,
            threads: 4,
            regime: Some(Regime::CpuBound),
        });
        let d = of_result(&s, &s.targets[0], &s.targets[0].phases[0]);
        assert!(
            d[0].text.starts_with("CPU-bound on purpose"),
            "{}",
            d[0].text
        );
        // larger than the pool: I/O-bound, no doubt
        s.targets[0].phases[0].data_set = Some(DataSetFit {
            data_bytes: 1 << 30,
            measured: true,
            buffer_pool_bytes: 64 << 20,
        });
        assert_eq!(of_result(&s, &s.targets[0], &s.targets[0].phases[0]), []);
    }

    #[test]
    fn throttling_the_target_saw_is_a_doubt_on_each_of_its_results() {
        use crate::sys::state::StateSample;
        let mut s = two_disk_suite();
        if let Some(r) = &mut s.targets[0].phases[0].result {
            r.measurement.total_time_s = 60.0;
            if let TestOptions::Fileio(c) = &mut r.options {
                c.extra_flags.direct = true;
            }
        }
        let sample = |t_s, throttled| StateSample {
            t_s,
            temp_c: None,
            throttled: Some(throttled),
            undervoltage: None,
        };
        s.targets[0].samples = vec![sample(5.0, 0), sample(30.0, 0)];
        assert_eq!(of_result(&s, &s.targets[0], &s.targets[0].phases[0]), []);
        s.targets[0].samples[1].throttled = Some(0x4);
        let d = of_result(&s, &s.targets[0], &s.targets[0].phases[0]);
        assert_eq!(d[0].kind, Kind::Power);
        assert!(d[0].text.contains("throttled"), "{}", d[0].text);
    }

    #[test]
    fn a_rate_without_a_steady_state_or_one_that_left_it_is_a_doubt() {
        use crate::stats::steady::Criterion;
        let mut s = two_disk_suite();
        let state = |at_s: Option<f64>, left_at_s: Option<f64>, reason: Option<&str>| SteadyState {
            criterion: Criterion::parse("iops_slope:10%").unwrap(),
            dur_s: 10.0,
            ramp_s: 5.0,
            attained: at_s.is_some(),
            at_s,
            left_at_s,
            reason: reason.map(String::from),
            series: "iops: reads + writes per second".into(),
        };
        let set = |s: &mut SuiteResult, st: SteadyState| {
            let r = s.targets[0].phases[0].result.as_mut().unwrap();
            r.measurement.total_time_s = 60.0;
            if let TestOptions::Fileio(c) = &mut r.options {
                c.extra_flags.direct = true;
            }
            r.steady_state = Some(st);
        };
        let doubts = |s: &SuiteResult| of_result(s, &s.targets[0], &s.targets[0].phases[0]);
        set(&mut s, state(Some(15.0), None, None));
        assert_eq!(doubts(&s), []);
        assert_eq!(
            steady_line(
                s.targets[0].phases[0]
                    .result
                    .as_ref()
                    .unwrap()
                    .steady_state
                    .as_ref()
                    .unwrap()
            ),
            "steady state (iops_slope:10%, dur 10 s, ramp 5 s): attained at 15.0 s"
        );
        let never = "not attained: the flattest had a slope of 12.5 % of its mean per second (limit iops_slope:10%)";
        set(&mut s, state(None, None, Some(never)));
        let d = doubts(&s);
        assert_eq!(d[0].kind, Kind::Unsteady);
        assert_eq!(d[0].text, "did not reach a steady state by iops_slope:10% (dur 10 s, ramp 5 s): the figure averages a rate that was still changing.");
        assert_eq!(
            steady_line(&state(None, None, Some(never))),
            format!("steady state (iops_slope:10%, dur 10 s, ramp 5 s): {never}")
        );
        // Left: the target's throttling explains it; without any, nothing recorded does.
        set(&mut s, state(Some(15.0), Some(41.0), Some("unknown")));
        assert!(
            doubts(&s)[0].text.ends_with(
                "; nothing recorded explains it (no throttling, under-voltage or USB trouble)."
            ),
            "{:?}",
            doubts(&s)
        );
        assert_eq!(
            steady_line(&state(Some(15.0), Some(41.0), Some("unknown"))),
            "steady state (iops_slope:10%, dur 10 s, ramp 5 s): attained at 15.0 s, left at 41.0 s (cause unknown)"
        );
        s.targets[0].samples = vec![crate::sys::state::StateSample {
            t_s: 30.0,
            temp_c: None,
            throttled: Some(0x4),
            undervoltage: None,
        }];
        let d = doubts(&s);
        let left = d.iter().find(|x| x.kind == Kind::Unsteady).unwrap();
        // The suite writes the cause into the document once the target is done.
        explain_left(&mut s.targets[0]);
        let r = s.targets[0].phases[0].result.as_ref().unwrap();
        let reason = r.steady_state.as_ref().unwrap().reason.clone().unwrap();
        assert!(reason.starts_with("the Pi reported "), "{reason}");
        assert!(
            left.text.ends_with(&format!("; {reason}.")),
            "{}",
            left.text
        );
        assert!(left.text.starts_with("left its steady state by iops_slope:10% (dur 10 s, ramp 5 s): the rate fell beyond the limit for a whole window; the Pi reported "), "{}", left.text);
        // Too short for the window: the short-run doubt says it, once.
        s.targets[0].samples.clear();
        set(
            &mut s,
            state(
                None,
                None,
                Some("not attained: run shorter than ss_ramp + ss_dur (8 s < 5 s + 10 s)"),
            ),
        );
        s.targets[0].phases[0]
            .result
            .as_mut()
            .unwrap()
            .measurement
            .total_time_s = 8.0;
        let kinds: Vec<Kind> = doubts(&s).iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [Kind::ShortRun]);
    }

    #[test]
    fn the_list_numbers_each_doubt_once_with_its_targets_and_results() {
        let mut s = two_disk_suite();
        s.host.ram_bytes = 8 << 30;
        for t in &mut s.targets {
            t.filesystem = tmpfs();
        }
        let mut second = s.targets[0].phases[0].clone();
        second.name = "fileio-rndrd-t1".into();
        if let Some(r) = &mut second.result {
            r.measurement.total_time_s = 60.0;
        }
        s.targets[0].phases.push(second);
        s.status = RunStatus::Aborted;
        let l = DoubtList::of(&s);
        assert_eq!(
            l.lines(&s),
            [
                "The run is aborted: phases after the stop have no figures.",
                "[1] ssd (every result); hdd (fileio-rndrw-t1): on tmpfs, a filesystem in RAM: the figures measure memory, not a disk.",
                "[2] ssd, hdd (fileio-rndrw-t1): measured for less than 30 s: too short for a steady state (the disk's own cache, write-back and warm-up weigh more than in a longer run)."
            ]
        );
        assert_eq!(l.refs(0, "fileio-rndrw-t1"), [1, 2]);
        assert_eq!(l.refs_text(0, "fileio-rndrd-t1"), "1");
        assert_eq!(l.refs_text(1, "fileio-rndrd-t1"), "");
    }
}
