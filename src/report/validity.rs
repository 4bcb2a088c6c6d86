//! The validity verdict of each result (issue 38): green, amber or red, and the reasons, each a
//! rule's id, its colour and a sentence with the numbers. Like the doubts (`report::doubts`) it
//! is a function of the result document alone, so a bundle of any older spindle gets the same
//! verdict when it is read.
//!
//! Why here and not in `model/`: the verdict reads what `report::health` makes of the sensors
//! and maps the doubts (`report::doubts`), and `model` may import nothing of `report`
//! (`docs/ARCHITECTURE.md`). The plain types ([`Validity`], [`Reason`], [`Colour`]) are
//! `model::validity`'s: results.json carries the verdict from schema 5 on ([`judge`], called
//! by `report::bundle` on every write), and an older document gets it on read ([`of_phase`]).
//!
//! The rules, in the order their reasons are listed:
//!
//! | rule | colour | when |
//! |---|---|---|
//! | `link_ceiling` | red / amber / amber (not judged) | a fileio MiB/s figure above what the disk's negotiated link can carry at all (red: [`USB_CEILINGS`], [`SD_CEILINGS`]), above what the protocol carries in practice (amber), or no link known (amber: "not judged") |
//! | `in_ram` | red | the target's filesystem is in RAM (statfs: tmpfs, ramfs, zram); the link and page-cache rules then do not apply |
//! | `page_cache` | red (reads) / amber (writes only) | fileio without O_DIRECT (or with mmap) on a file set under [`CACHE_FACTOR`] × the host's RAM; amber "not judged" when the RAM is unknown |
//! | `device_bytes` | red / amber / amber (not judged) | a fileio read figure of which under [`DEVICE_RED`] (red) or [`DEVICE_AMBER`] (amber) of the bytes reached the block device over the phase (`PhaseResult::device_io`); a write figure under half (amber); no counters recorded (amber: "not judged") |
//! | `power` | amber | throttling or under-voltage reported (`report::health`); on a Pi where neither was read: amber "not judged" |
//! | `io_errors` | red | I/O errors of the target's disk in the kernel log while it ran (`I/O error, dev sda`, `critical medium error`, `Buffer I/O error on dev sda1`), the lines quoted |
//! | `governor` | amber | the run measured under a CPU governor other than `performance` (spindle pins it for the run; `sys::governor`) |
//! | `usb_trouble` | amber | UAS aborts, UAS resets, USB resets or disconnects of the target's USB disk in the kernel log (the lines quoted); amber "not judged" when the log could not be read |
//! | `steady_state` | amber | no steady state by the result's criterion, one left, or none judged |
//! | doubts not covered above | amber | see [`DOUBT_COLOURS`] |
//!
//! Each disk's figure in an all-at-once run (`model::together`) is judged by the same rules,
//! as a phase of its target ([`of_together`]).
//!
//! The verdict is the worst colour among the reasons; green (with no reason) only when every
//! rule that applies to the result was judged and passed. A rule that applies but could not be
//! judged (the link of a directory target, RAM not recorded) is an amber reason that says
//! "not judged", never a silent green.

use super::doubts::{self, Kind};
use crate::disk::kernel_log::{parse_usb_event, UsbEventKind, UsbTrouble, UsbTroubleCount};
use crate::disk::{LinkSpeed, Transport};
use crate::engine::Counters;
use crate::model::together::{TogetherDisk, TogetherRun};
use crate::model::{BenchResult, PhaseResult, SuiteResult, TargetResult, TestOptions};
use crate::sys::governor::GovernorRecord;
use crate::units::human_size;

pub use crate::model::validity::{Colour, Reason, Validity};

fn reason(rule: &str, colour: Colour, text: String) -> Reason {
    Reason {
        rule: rule.into(),
        colour,
        text,
    }
}

/// What one link can carry, in MB/s (10^6 bytes per second: the links' own unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ceiling {
    /// The link as the sentence names it.
    pub link: &'static str,
    /// The payload the signalling can carry at all, after its line coding: above it a figure
    /// cannot have crossed the link (red).
    pub red_mb_s: f64,
    /// What the protocol carries in practice (its framing, the spec's own figure): above it a
    /// figure is doubtful (amber). `None` where no source gives one.
    pub amber_mb_s: Option<f64>,
    /// Where `amber_mb_s` comes from.
    pub amber_source: &'static str,
    /// Reads and writes share one wire (USB 2.0, the SD bus): the sum is judged. USB 3 is dual
    /// simplex (a pair each way): each direction is judged alone.
    pub half_duplex: bool,
}

/// USB links by negotiated speed (sysfs `speed`, Mb/s, [`LinkSpeed`]): the slowest the figure
/// travelled over (`UsbInfo::link_speed`, bounded by every hub). Sources:
/// - USB 2.0 (high 480 Mb/s, full 12 Mb/s, low 1.5 Mb/s): NRZI, no line code, so the raw bit
///   rate / 8 (60 MB/s, 1.5 MB/s, 0.1875 MB/s) is the red line. In practice: the USB 2.0 spec's
///   largest bulk payload, 13 × 512 B per 125 µs microframe = 53.248 MB/s (table 5-10), and
///   19 × 64 B per 1 ms frame = 1.216 MB/s at full speed (table 5-9); low speed has no bulk.
///   (Tom's Hardware, "USB 3.0 SuperSpeed", measured 30–35 MB/s net on USB 2.0 disks.)
/// - USB 3 Gen 1 (5 Gb/s): 8b/10b, so 5 Gb/s × 8/10 / 8 = 500 MB/s at all; "up to 450 MB/s"
///   in practice (USB 3.2 specification, §1.1). usb-storage (Bulk-Only) carries less than uas,
///   but no source gives a figure to judge by: both get 450.
/// - USB 3 Gen 2 (10 Gb/s): 128b/132b, 10 Gb/s × 128/132 / 8 = 1212.1 MB/s; "up to 1 GB/s"
///   (USB 3.2 specification, §1.1). Gen 2x2 (20 Gb/s, two lanes): twice, "up to 2 GB/s".
pub const USB_CEILINGS: [(f64, Ceiling); 6] = [
    (
        20000.0,
        usb(
            "USB 3.2 Gen 2x2 (20 Gb/s)",
            2424.24,
            Some(2000.0),
            SPEC_3_2,
            false,
        ),
    ),
    (
        10000.0,
        usb(
            "USB 3 Gen 2 (10 Gb/s)",
            1212.12,
            Some(1000.0),
            SPEC_3_2,
            false,
        ),
    ),
    (
        5000.0,
        usb("USB 3 Gen 1 (5 Gb/s)", 500.0, Some(450.0), SPEC_3_2, false),
    ),
    (
        480.0,
        usb(
            "USB 2.0 high speed (480 Mb/s)",
            60.0,
            Some(53.248),
            SPEC_2_HS,
            true,
        ),
    ),
    (
        12.0,
        usb(
            "USB full speed (12 Mb/s)",
            1.5,
            Some(1.216),
            SPEC_2_FS,
            true,
        ),
    ),
    (0.0, usb("USB low speed (1.5 Mb/s)", 0.1875, None, "", true)),
];

const SPEC_3_2: &str = "the USB 3.2 specification, §1.1";
const SPEC_2_HS: &str = "13 bulk packets of 512 B per microframe, USB 2.0 specification table 5-10";
const SPEC_2_FS: &str = "19 bulk packets of 64 B per frame, USB 2.0 specification table 5-9";

const fn usb(
    link: &'static str,
    red_mb_s: f64,
    amber_mb_s: Option<f64>,
    amber_source: &'static str,
    half_duplex: bool,
) -> Ceiling {
    Ceiling {
        link,
        red_mb_s,
        amber_mb_s,
        amber_source,
        half_duplex,
    }
}

/// The SD bus modes (SD Association, "Bus Speed (Default Speed/High Speed/UHS/SD Express)",
/// sdcard.org/developers/sd-standard-overview/bus-speed-default-speed-high-speed-uhs-sd-express):
/// default speed 12.5 MB/s (SD 1.01), high speed 25 MB/s (SD 1.10), UHS-I SDR50/DDR50
/// 50 MB/s and SDR104 104 MB/s (SD 3.01), UHS-I SDR12/SDR25 as default/high speed; eMMC
/// (JEDEC JESD84-B51, 8-bit bus, the widest, so an upper bound): high speed 52 MB/s, DDR52
/// 104 MB/s, HS200 200 MB/s, HS400 400 MB/s. The bus speed is the ceiling, so red. Keyed by
/// the kernel's timing names (`timing spec` of `/sys/kernel/debug/mmcN/ios`, which discovery
/// records as `Disk::sd_timing`).
pub const SD_CEILINGS: [(&str, &str, f64); 12] = [
    ("legacy", "SD default speed", 12.5),
    ("sd uhs SDR12", "SD UHS-I SDR12", 12.5),
    ("sd high-speed", "SD high speed", 25.0),
    ("sd uhs SDR25", "SD UHS-I SDR25", 25.0),
    ("mmc high-speed", "eMMC high speed", 52.0),
    ("mmc DDR52", "eMMC DDR52", 104.0),
    ("mmc HS200", "eMMC HS200", 200.0),
    ("mmc HS400", "eMMC HS400", 400.0),
    (
        "mmc HS400 enhanced strobe",
        "eMMC HS400 enhanced strobe",
        400.0,
    ),
    ("sd uhs SDR50", "SD UHS-I SDR50", 50.0),
    ("sd uhs DDR50", "SD UHS-I DDR50", 50.0),
    ("sd uhs SDR104", "SD UHS-I SDR104", 104.0),
];

/// The ceiling of an SD bus mode by the kernel's timing name.
pub fn sd_ceiling(timing: &str) -> Option<Ceiling> {
    let (_, link, mb) = SD_CEILINGS.iter().find(|(t, _, _)| *t == timing)?;
    Some(Ceiling {
        link,
        red_mb_s: *mb,
        amber_mb_s: None,
        amber_source: "",
        half_duplex: true,
    })
}

/// The ceiling of a negotiated USB link speed.
pub fn usb_ceiling(speed: LinkSpeed) -> Ceiling {
    USB_CEILINGS
        .iter()
        .find(|(min, _)| speed.0 >= *min)
        .map(|(_, c)| *c)
        .unwrap_or(USB_CEILINGS[USB_CEILINGS.len() - 1].1)
}

/// A fileio working set must be at least this many times the host's RAM, or be opened
/// O_DIRECT, for the page cache not to serve it: the kernel may give nearly all free RAM to
/// the cache, and a set twice the RAM leaves at most half of it cached (issue 38's rule).
pub const CACHE_FACTOR: u64 = 2;

/// The doubts that no rule above covers, and their colour. The covered ones: `InRam`
/// (`in_ram`), `PageCache` (`page_cache`, with the stricter 2× rule), `Power` (`power`),
/// `Unsteady` (`steady_state`).
pub const DOUBT_COLOURS: [(Kind, &str, Colour); 4] = [
    // Partial figures: measured, but not over the whole run.
    (Kind::Unfinished, "unfinished", Colour::Amber),
    // CPU-bound OLTP/TPC-C: a true figure, but of CPU and memory more than of the disk.
    (Kind::BufferPool, "buffer_pool", Colour::Amber),
    // Under 30 s: warm-up and the disk's cache weigh more than in a steady run.
    (Kind::ShortRun, "short_run", Colour::Amber),
    // A USB 2 link caps the figure: true for this set-up, not the disk's own.
    (Kind::SlowLink, "slow_link", Colour::Amber),
];

/// The verdict phase `p` carries, or (a document older than schema 5) the one its rules give
/// now. `None` for a phase without numbers.
pub fn of_phase(s: &SuiteResult, t: &TargetResult, p: &PhaseResult) -> Option<Validity> {
    p.validity.clone().or_else(|| of_result(s, t, p))
}

/// Writes each phase result's verdict into the document (the run's bundle carries it): judged
/// afresh each time, since a later phase's records (the kernel log, the sensors) change it.
pub fn judge(s: &mut SuiteResult) {
    for ti in 0..s.targets.len() {
        for pi in 0..s.targets[ti].phases.len() {
            let t = &s.targets[ti];
            let v = of_result(s, t, &t.phases[pi]);
            s.targets[ti].phases[pi].validity = v;
        }
    }
    let runs = s.together.iter().flat_map(|rec| &rec.runs);
    let verdicts: Vec<Vec<Option<Validity>>> = runs
        .map(|r| r.disks.iter().map(|d| together(s, r, d)).collect())
        .collect();
    for (r, v) in s
        .together
        .iter_mut()
        .flat_map(|rec| &mut rec.runs)
        .zip(verdicts)
    {
        for (d, v) in r.disks.iter_mut().zip(v) {
            d.validity = v;
        }
    }
}

/// How many figures of the run (phase results and each disk's share of an all-at-once run)
/// are judged red (the appliance's LEDs say so).
pub fn red_count(s: &SuiteResult) -> usize {
    let phases = s.targets.iter();
    let phases = phases.flat_map(|t| t.phases.iter().map(move |p| of_phase(s, t, p)));
    let runs = s.together.iter().flat_map(|rec| &rec.runs);
    let together = runs.flat_map(|r| r.disks.iter().map(move |d| of_together(s, r, d)));
    let verdicts = phases.chain(together).flatten();
    verdicts.filter(|v| v.verdict == Colour::Red).count()
}

/// The verdict disk `d`'s share of all-at-once run `r` carries, or (a bundle written before
/// it was recorded) the one the rules give now: those of a solo phase, on its target.
pub fn of_together(s: &SuiteResult, r: &TogetherRun, d: &TogetherDisk) -> Option<Validity> {
    d.validity.clone().or_else(|| together(s, r, d))
}

fn together(s: &SuiteResult, r: &TogetherRun, d: &TogetherDisk) -> Option<Validity> {
    let t = s.targets.iter().find(|t| t.name == d.target)?;
    let mut p = PhaseResult::new(&r.name, Some(r.phase), d.status);
    p.result = d.result.clone();
    p.device_io = d.device_io.clone();
    of_result(s, t, &p)
}

/// The validity of phase `p` of target `t` by the rules (`None` for a phase without numbers).
pub fn of_result(s: &SuiteResult, t: &TargetResult, p: &PhaseResult) -> Option<Validity> {
    let r = p.result.as_ref()?;
    let mut out = Vec::new();
    // In RAM, the figures crossed no link and no page cache stands before a disk: the link
    // and page-cache rules do not apply.
    let in_ram = t.filesystem.as_ref().filter(|f| f.in_ram);
    if let Some(fs) = in_ram {
        out.push(reason(
            "in_ram",
            Colour::Red,
            format!("on {}, a filesystem in RAM: not a disk figure.", fs.fs_type),
        ));
    } else {
        out.extend(link_ceiling(t, r));
        out.extend(page_cache(s, r));
        out.extend(device_bytes(p, r));
    }
    out.extend(power(t));
    out.extend(governor(s));
    out.extend(io_errors(t));
    out.extend(usb_trouble(t));
    out.extend(steady(r));
    for d in doubts::of_result(s, t, p) {
        if let Some((_, rule, colour)) = DOUBT_COLOURS.iter().find(|(k, _, _)| *k == d.kind) {
            out.push(reason(rule, *colour, d.text));
        }
    }
    Some(Validity::of(out))
}

fn mib(mb_s: f64) -> f64 {
    mb_s * 1e6 / 1_048_576.0
}

/// The fileio figures (direction, MiB/s) above zero.
fn fileio_figures(r: &BenchResult) -> Vec<(&'static str, f64)> {
    let Counters::Fileio(c) = &r.counters else {
        return vec![];
    };
    [("read", c.read_mib_per_s), ("written", c.written_mib_per_s)]
        .into_iter()
        .filter(|(_, v)| *v > 0.0)
        .collect()
}

/// Why no link ceiling is known for target `t`.
fn link_unknown(t: &TargetResult) -> String {
    let Some(d) = &t.disk else {
        return match t.kind {
            crate::model::TargetKind::Directory => "a directory target: no disk was discovered",
            crate::model::TargetKind::Disk => "the disk's discovery record is missing",
        }
        .into();
    };
    match (d.transport, d.usb.as_ref()) {
        (_, Some(_)) => "the USB link speed was not read".into(),
        (Some(Transport::Mmc), None) => {
            "the SD bus mode was not read (debugfs's mmcN/ios needs root)".into()
        }
        (Some(tr), None) => format!("no ceiling is known for a {} disk", tr.describe()),
        (None, None) => "the disk's bus is unknown".into(),
    }
}

fn link_ceiling(t: &TargetResult, r: &BenchResult) -> Vec<Reason> {
    let figures = fileio_figures(r);
    if figures.is_empty() {
        return vec![];
    }
    let speed = t.disk.as_ref().and_then(|d| d.usb.as_ref()?.link_speed);
    let timing = t.disk.as_ref().and_then(|d| d.sd_timing.as_deref());
    let c = match (speed, timing.map(|m| (m, sd_ceiling(m)))) {
        (Some(speed), _) => usb_ceiling(speed),
        (None, Some((_, Some(c)))) => c,
        (None, t_) => {
            let why = match t_ {
                Some((mode, None)) => format!("no ceiling is known for the SD bus mode '{mode}'"),
                _ => link_unknown(t),
            };
            return vec![reason(
                "link_ceiling",
                Colour::Amber,
                format!(
                    "not judged: link unknown ({why}): a figure served from a cache cannot be told by the link."
                ),
            )];
        }
    };
    let judged: Vec<(String, f64)> = if c.half_duplex && figures.len() > 1 {
        let sum = figures.iter().map(|(_, v)| v).sum();
        vec![("read + written".into(), sum)]
    } else {
        figures.iter().map(|(d, v)| (d.to_string(), *v)).collect()
    };
    judged
        .into_iter()
        .filter_map(|(what, v)| above_ceiling(&c, &what, v))
        .collect()
}

fn above_ceiling(c: &Ceiling, what: &str, v: f64) -> Option<Reason> {
    if v > mib(c.red_mb_s) {
        return Some(reason(
            "link_ceiling",
            Colour::Red,
            format!(
                "{what} {v:.1} MiB/s, above the {:.1} MiB/s a {} link can carry: faster than the link, served from a cache.",
                mib(c.red_mb_s),
                c.link
            ),
        ));
    }
    let amber = c.amber_mb_s.filter(|a| v > mib(*a))?;
    Some(reason(
        "link_ceiling",
        Colour::Amber,
        format!(
            "{what} {v:.1} MiB/s, above the {:.1} MiB/s a {} link carries in practice ({}): likely helped by a cache.",
            mib(amber),
            c.link,
            c.amber_source
        ),
    ))
}

/// Fileio through the page cache on a set under [`CACHE_FACTOR`] × RAM.
fn page_cache(s: &SuiteResult, r: &BenchResult) -> Option<Reason> {
    let TestOptions::Fileio(c) = &r.options else {
        return None;
    };
    let cached = c.io_mode == crate::fileio::IoMode::Mmap || !c.extra_flags.direct;
    if !cached {
        return None;
    }
    let ram = match s.host.ram_bytes {
        0 => r.host.ram_bytes,
        n => n,
    };
    if ram == 0 {
        return Some(reason(
            "page_cache",
            Colour::Amber,
            format!(
                "not judged: the host's RAM is not recorded, and the {} file set is not opened O_DIRECT.",
                human_size(c.total_size)
            ),
        ));
    }
    if c.total_size >= CACHE_FACTOR * ram {
        return None;
    }
    let reads = fileio_figures(r).iter().any(|(d, _)| *d == "read");
    let (colour, served) = if reads {
        (Colour::Red, "reads may be served from the page cache")
    } else {
        (
            Colour::Amber,
            "writes may end in the page cache before they reach the disk",
        )
    };
    Some(reason(
        "page_cache",
        colour,
        format!(
            "the {} file set is under {CACHE_FACTOR}× the host's {} of RAM and not opened O_DIRECT: {served}.",
            human_size(c.total_size),
            human_size(ram)
        ),
    ))
}

/// Throttling or under-voltage as `report::health` reads them.
fn power(t: &TargetResult) -> Option<Reason> {
    let h = super::health::of(t);
    let text = h.doubts().into_iter().next()?;
    let text = if h.undervoltage_unmeasured_on_a_pi() && h.throttled_bits == 0 {
        format!("not judged: {text}")
    } else {
        text
    };
    Some(reason("power", Colour::Amber, text))
}

/// USB trouble of the target's USB disk in the kernel log, with the lines recorded.
/// `ondemand before the run, performance while it measured (put back after)`.
pub fn governor_line(g: &GovernorRecord) -> String {
    let mut l = format!(
        "{} before the run, {} while it measured",
        g.before, g.during
    );
    if let Some(why) = &g.not_pinned {
        l.push_str(&format!(" (not pinned: {why})"));
    }
    if g.before != g.during {
        l.push_str(if g.restored {
            " (put back after)"
        } else {
            " (NOT put back after: set it again or reboot)"
        });
    }
    l
}

/// A run that measured under a governor other than `performance` (spindle pins it; it could
/// not): amber. No record (a machine without cpufreq, an older bundle): nothing to judge.
fn governor(s: &SuiteResult) -> Option<Reason> {
    let g = s.governor.as_ref().filter(|g| !g.performance())?;
    Some(reason(
        "governor",
        Colour::Amber,
        format!(
            "the CPU governor was {} while the run measured, not performance ({}): the clock followed the load; ondemand without io_is_busy is a known cause of slow USB writes on a Pi.",
            g.during,
            g.not_pinned.as_deref().unwrap_or("not pinned")
        ),
    ))
}

/// The lines, quoted: ` ("…"; "…")`, or nothing.
fn quoted<'a>(lines: impl Iterator<Item = &'a String>) -> String {
    let l: Vec<&str> = lines.map(|l| l.trim()).collect();
    if l.is_empty() {
        return String::new();
    }
    format!(" (\"{}\")", l.join("\"; \""))
}

fn is_io_error(line: &str) -> bool {
    parse_usb_event(line).is_some_and(|e| e.kind == UsbEventKind::IoError)
}

/// Requests the block layer failed on the target's disk while it ran: red, with the lines.
fn io_errors(t: &TargetResult) -> Option<Reason> {
    let d = t.disk.as_ref()?;
    let Some(UsbTroubleCount::Counted(c)) = &t.usb_trouble else {
        return None;
    };
    let u = c.of(&d.name);
    if u.io_errors == 0 {
        return None;
    }
    let lines = quoted(u.examples.iter().filter(|l| is_io_error(l)));
    Some(reason(
        "io_errors",
        Colour::Red,
        format!(
            "the kernel logged {} I/O error{} on {} while the target ran{lines}: the disk failed requests; its figures are not a working disk's.",
            u.io_errors,
            if u.io_errors == 1 { "" } else { "s" },
            d.name
        ),
    ))
}

fn usb_trouble(t: &TargetResult) -> Option<Reason> {
    let d = t.disk.as_ref().filter(|d| d.usb.is_some())?;
    let c = match &t.usb_trouble {
        Some(UsbTroubleCount::Counted(c)) => c,
        Some(UsbTroubleCount::Unavailable { reason: why }) => {
            return Some(reason(
                "usb_trouble",
                Colour::Amber,
                format!("not judged: {why}."),
            ))
        }
        None => {
            return Some(reason(
                "usb_trouble",
                Colour::Amber,
                "not judged: the kernel log was not read for this target.".into(),
            ))
        }
    };
    // I/O errors are their own rule (`io_errors`, any disk).
    let u = UsbTrouble {
        io_errors: 0,
        ..c.of(&d.name)
    };
    if u.is_empty() {
        return None;
    }
    let lines = quoted(u.examples.iter().filter(|l| !is_io_error(l)));
    Some(reason(
        "usb_trouble",
        Colour::Amber,
        format!(
            "the kernel logged {} for {} while the target ran{lines}: figures may include stalls.",
            u.describe(),
            d.name
        ),
    ))
}

/// No steady state, one left, or none judged.
/// Below this share of the test's bytes reaching the device a figure is red, below
/// [`DEVICE_AMBER`] amber.
pub const DEVICE_RED: f64 = 0.5;
pub const DEVICE_AMBER: f64 = 0.9;

/// A fileio result's bytes against what the block device under its files moved over the phase
/// (`device_io`: the device's own `stat` counters). Reads that never reached the device came
/// from a cache. The counters also count other programs' I/O on that device, so only a
/// shortfall is judged.
fn device_bytes(p: &PhaseResult, r: &BenchResult) -> Option<Reason> {
    let Counters::Fileio(c) = &r.counters else {
        return None;
    };
    let bytes = |mib_s: f64| mib_s * 1_048_576.0 * r.measurement.total_time_s;
    let (read, written) = (bytes(c.read_mib_per_s), bytes(c.written_mib_per_s));
    if read < 1_048_576.0 && written < 1_048_576.0 {
        return None;
    }
    let Some(d) = &p.device_io else {
        return Some(reason(
            "device_bytes",
            Colour::Amber,
            "not judged: the block device's counters were not recorded over the phase (no block device under the files, one shared with another disk of an all-at-once run, or an older spindle).".into(),
        ));
    };
    let size = |b: f64| human_size(b as u64);
    if read >= 1_048_576.0 {
        let share = d.read_bytes as f64 / read;
        if share < DEVICE_AMBER {
            let colour = if share < DEVICE_RED {
                Colour::Red
            } else {
                Colour::Amber
            };
            return Some(reason("device_bytes", colour, format!(
                "the test read {} but {} read {} over the phase ({:.0} %, its /sys/block stat counters): the rest came from a cache.",
                size(read), d.device, size(d.read_bytes as f64), share * 100.0
            )));
        }
    }
    let share = d.written_bytes as f64 / written;
    if read < 1_048_576.0 && share < DEVICE_RED {
        return Some(reason("device_bytes", Colour::Amber, format!(
            "the test wrote {} but only {} reached {} over the phase ({:.0} %, its /sys/block stat counters): the rest waited in the page cache.",
            size(written), size(d.written_bytes as f64), d.device, share * 100.0
        )));
    }
    None
}

fn steady(r: &BenchResult) -> Option<Reason> {
    let Some(st) = &r.steady_state else {
        return Some(reason(
            "steady_state",
            Colour::Amber,
            "not judged: the result records no steady state.".into(),
        ));
    };
    let how = format!(
        "{} (dur {} s, ramp {} s)",
        st.criterion, st.dur_s, st.ramp_s
    );
    let text = match (st.attained, st.left_at_s) {
        (true, None) => return None,
        (_, Some(left)) => {
            format!("left its steady state by {how} at {left:.1} s: the figure averages two rates.")
        }
        (false, None) => {
            let why = st.reason.as_deref().unwrap_or("not attained");
            if why.starts_with(crate::stats::steady::NO_SAMPLES) {
                format!("not judged: no interval samples to judge a steady state by {how}.")
            } else {
                format!("no steady state by {how} ({why}): the figure averages a rate that was still changing.")
            }
        }
    };
    Some(reason("steady_state", Colour::Amber, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::kernel_log::{TroubleCount, UsbTrouble};
    use crate::disk::{Disk, UsbInfo};
    use crate::model::suite::tests_support::two_disk_suite;
    use crate::model::{FilesystemRecord, TargetKind};
    use crate::stats::steady::{Criterion, SteadyState};

    /// A result every rule judges and passes: a USB 3 Gen 1 disk (uas), its kernel log read and
    /// clean, O_DIRECT fileio on a 2 GiB set, 60 s, steady from 15 s, read 300 MiB/s.
    fn clean() -> SuiteResult {
        let mut s = two_disk_suite();
        s.host.ram_bytes = 8 << 30;
        let t = &mut s.targets[0];
        t.disk = Some(Disk {
            name: "sda".into(),
            transport: Some(Transport::Usb),
            usb: Some(UsbInfo {
                link_speed: Some(LinkSpeed(5000.0)),
                driver: Some("uas".into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        t.usb_trouble = Some(UsbTroubleCount::Counted(TroubleCount::default()));
        let r = t.phases[0].result.as_mut().unwrap();
        r.measurement.total_time_s = 60.0;
        if let TestOptions::Fileio(c) = &mut r.options {
            c.extra_flags.direct = true;
            c.total_size = 2 << 30;
        }
        set_rates(&mut s, 300.0, 0.0);
        s.targets[0].phases[0].result.as_mut().unwrap().steady_state = Some(SteadyState {
            criterion: Criterion::parse("iops_slope:10%").unwrap(),
            dur_s: 10.0,
            ramp_s: 5.0,
            attained: true,
            at_s: Some(15.0),
            left_at_s: None,
            reason: None,
            series: "iops: reads + writes per second".into(),
        });
        s
    }

    /// Rates of `read` and `written` MiB/s, every byte of them counted by the device.
    fn set_rates(s: &mut SuiteResult, read: f64, written: f64) {
        let p = &mut s.targets[0].phases[0];
        let r = p.result.as_mut().unwrap();
        if let Counters::Fileio(c) = &mut r.counters {
            c.read_mib_per_s = read;
            c.written_mib_per_s = written;
        }
        let secs = r.measurement.total_time_s;
        p.device_io = Some(crate::sys::blockdev::Counters {
            device: "sda1".into(),
            read_bytes: (read * secs) as u64 * (1 << 20),
            written_bytes: (written * secs) as u64 * (1 << 20),
        });
    }

    #[test]
    fn reads_the_device_did_not_see_came_from_a_cache() {
        // 300 MiB/s for 60 s = 17.6 GiB read by the test.
        let mut s = clean();
        let io = s.targets[0].phases[0].device_io.as_mut().unwrap();
        io.read_bytes = 3 << 30;
        let v = verdict(&s);
        assert_eq!(rules(&v), [("device_bytes", Colour::Red)]);
        assert_eq!(
            v.reasons[0].text,
            "the test read 17.6 GiB but sda1 read 3.0 GiB over the phase (17 %, its /sys/block stat counters): the rest came from a cache."
        );
        let io = s.targets[0].phases[0].device_io.as_mut().unwrap();
        io.read_bytes = 14 << 30; // 80 %
        assert_eq!(rules(&verdict(&s)), [("device_bytes", Colour::Amber)]);
        // Other programs' reads on the same device only add: more than the test read is fine.
        let io = s.targets[0].phases[0].device_io.as_mut().unwrap();
        io.read_bytes = 40 << 30;
        assert!(verdict(&s).reasons.is_empty());
        // Writes: amber only when under half reached the device during the phase.
        set_rates(&mut s, 0.0, 100.0);
        let io = s.targets[0].phases[0].device_io.as_mut().unwrap();
        io.written_bytes /= 4;
        let v = verdict(&s);
        assert_eq!(rules(&v), [("device_bytes", Colour::Amber)]);
        assert!(
            v.reasons[0].text.contains("waited in the page cache"),
            "{v:?}"
        );
        // Not recorded: said, amber.
        s.targets[0].phases[0].device_io = None;
        let v = verdict(&s);
        assert_eq!(rules(&v), [("device_bytes", Colour::Amber)]);
        assert!(v.reasons[0].text.starts_with("not judged"), "{v:?}");
    }

    fn set_link(s: &mut SuiteResult, mb: f64) {
        let d = s.targets[0].disk.as_mut().unwrap();
        d.usb.as_mut().unwrap().link_speed = Some(LinkSpeed(mb));
    }

    fn verdict(s: &SuiteResult) -> Validity {
        of_result(s, &s.targets[0], &s.targets[0].phases[0]).unwrap()
    }

    fn rules(v: &Validity) -> Vec<(&str, Colour)> {
        v.reasons
            .iter()
            .map(|r| (r.rule.as_str(), r.colour))
            .collect()
    }

    #[test]
    fn a_result_every_rule_passes_is_green_with_no_reason() {
        let v = verdict(&clean());
        assert_eq!(v, Validity::of(vec![]));
        assert_eq!(v.verdict, Colour::Green);
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            serde_json::json!({"verdict": "green", "reasons": []})
        );
        assert_eq!(v.line(), "validity: green (every rule judged and passed)");
    }

    #[test]
    fn a_figure_above_a_gen_1_link_is_red_and_the_same_on_gen_2_is_not() {
        let mut s = clean();
        set_rates(&mut s, 812.0, 0.0);
        let v = verdict(&s);
        assert_eq!(v.verdict, Colour::Red);
        assert_eq!(rules(&v), [("link_ceiling", Colour::Red)]);
        assert_eq!(
            v.reasons[0].text,
            "read 812.0 MiB/s, above the 476.8 MiB/s a USB 3 Gen 1 (5 Gb/s) link can carry: faster than the link, served from a cache."
        );
        set_link(&mut s, 10000.0);
        assert_eq!(verdict(&s).verdict, Colour::Green);
        // Between the practical and the raw ceiling: amber, with the source.
        set_link(&mut s, 5000.0);
        set_rates(&mut s, 440.0, 0.0);
        let v = verdict(&s);
        assert_eq!(rules(&v), [("link_ceiling", Colour::Amber)]);
        assert!(
            v.reasons[0].text.contains("429.2 MiB/s") && v.reasons[0].text.contains("§1.1"),
            "{}",
            v.reasons[0].text
        );
        // USB 3 is dual simplex: 400 read and 400 written at once are possible.
        set_rates(&mut s, 400.0, 400.0);
        assert_eq!(verdict(&s).verdict, Colour::Green);
    }

    #[test]
    fn usb_2_shares_one_wire_so_reads_and_writes_are_summed() {
        let mut s = clean();
        set_link(&mut s, 480.0);
        set_rates(&mut s, 30.0, 30.0);
        let v = verdict(&s);
        // the slow link doubt maps to amber; 60 MiB/s > 57.2 MiB/s is red
        assert_eq!(
            rules(&v),
            [("link_ceiling", Colour::Red), ("slow_link", Colour::Amber)]
        );
        assert!(v.reasons[0].text.starts_with("read + written 60.0 MiB/s, above the 57.2 MiB/s a USB 2.0 high speed (480 Mb/s) link"), "{}", v.reasons[0].text);
        assert_eq!(v.verdict, Colour::Red);
    }

    #[test]
    fn the_tables_hold_the_sourced_figures() {
        assert_eq!(usb_ceiling(LinkSpeed(5000.0)).red_mb_s, 500.0);
        assert_eq!(usb_ceiling(LinkSpeed(20000.0)).amber_mb_s, Some(2000.0));
        assert_eq!(usb_ceiling(LinkSpeed(1.5)).link, "USB low speed (1.5 Mb/s)");
        // 10 Gb/s × 128/132 / 8
        let gen2 = 10_000.0 * 128.0 / 132.0 / 8.0;
        assert!((usb_ceiling(LinkSpeed(10000.0)).red_mb_s - gen2).abs() < 0.01);
        assert_eq!(sd_ceiling("sd uhs SDR104").unwrap().red_mb_s, 104.0);
        assert_eq!(sd_ceiling("legacy").unwrap().red_mb_s, 12.5);
        assert_eq!(sd_ceiling("mmc HS400").unwrap().red_mb_s, 400.0);
        assert_eq!(sd_ceiling("sd uhs SDR105"), None);
    }

    #[test]
    fn an_sd_card_is_judged_by_its_bus_mode() {
        // A card on a UHS-I SDR50 bus (50 MB/s = 47.7 MiB/s, reads and writes summed) that
        // "read" 80 MiB/s.
        let mut s = clean();
        let d = s.targets[0].disk.as_mut().unwrap();
        d.usb = None;
        d.transport = Some(Transport::Mmc);
        d.name = "mmcblk0".into();
        d.sd_timing = Some("sd uhs SDR50".into());
        s.targets[0].usb_trouble = None;
        set_rates(&mut s, 80.0, 0.0);
        let v = verdict(&s);
        assert_eq!(rules(&v), [("link_ceiling", Colour::Red)]);
        assert!(v.reasons[0].text.contains("SD UHS-I SDR50"), "{}", v.line());
        set_rates(&mut s, 40.0, 0.0);
        assert!(verdict(&s).reasons.is_empty(), "{}", verdict(&s).line());
        // A mode the table lacks, or none read: not judged, saying which.
        let d = s.targets[0].disk.as_mut().unwrap();
        d.sd_timing = Some("sd uhs SDR999".into());
        assert!(verdict(&s)
            .line()
            .contains("no ceiling is known for the SD bus mode 'sd uhs SDR999'"));
        s.targets[0].disk.as_mut().unwrap().sd_timing = None;
        assert!(verdict(&s).line().contains("the SD bus mode was not read"));
    }

    #[test]
    fn an_unknown_link_is_said_so_not_green_by_silence() {
        let mut s = clean();
        s.targets[0].disk = None;
        s.targets[0].kind = TargetKind::Directory;
        let v = verdict(&s);
        assert_eq!(rules(&v), [("link_ceiling", Colour::Amber)]);
        assert_eq!(v.reasons[0].text, "not judged: link unknown (a directory target: no disk was discovered): a figure served from a cache cannot be told by the link.");
        // An SD card: the bus mode is not recorded.
        s.targets[0].disk = Some(Disk {
            name: "mmcblk0".into(),
            transport: Some(Transport::Mmc),
            ..Default::default()
        });
        let v = verdict(&s);
        assert!(v.reasons[0].text.contains("the SD bus mode was not read"));
        // An OLTP result has no byte figure: the rule does not apply.
        let r = s.targets[0].phases[0].result.as_mut().unwrap();
        r.options = TestOptions::Oltp(Box::default());
        r.counters = Counters::Oltp(Default::default());
        assert_eq!(verdict(&s).verdict, Colour::Green);
    }

    #[test]
    fn a_target_in_ram_is_red() {
        let mut s = clean();
        s.targets[0].filesystem = Some(FilesystemRecord {
            fs_type: "tmpfs".into(),
            source: Some("tmpfs".into()),
            in_ram: true,
        });
        let v = verdict(&s);
        assert_eq!(v.verdict, Colour::Red);
        assert_eq!(rules(&v), [("in_ram", Colour::Red)]);
        assert_eq!(
            v.reasons[0].text,
            "on tmpfs, a filesystem in RAM: not a disk figure."
        );
        // memory speeds cross no link: the one reason is the RAM, not the ceiling
        set_rates(&mut s, 5000.0, 0.0);
        assert_eq!(rules(&verdict(&s)), [("in_ram", Colour::Red)]);
    }

    #[test]
    fn a_cache_sized_set_without_o_direct_is_red_for_reads_amber_for_writes() {
        let mut s = clean();
        let r = s.targets[0].phases[0].result.as_mut().unwrap();
        if let TestOptions::Fileio(c) = &mut r.options {
            c.extra_flags.direct = false;
            c.total_size = 1 << 30;
        }
        let v = verdict(&s);
        assert_eq!(rules(&v), [("page_cache", Colour::Red)]);
        assert_eq!(v.reasons[0].text, "the 1.0 GiB file set is under 2× the host's 8.0 GiB of RAM and not opened O_DIRECT: reads may be served from the page cache.");
        assert!(v
            .line()
            .starts_with("validity: red — page_cache (red): the 1.0 GiB"));
        // writes only: amber
        set_rates(&mut s, 0.0, 100.0);
        assert_eq!(rules(&verdict(&s)), [("page_cache", Colour::Amber)]);
        // 16 GiB is 2× 8 GiB: passes
        let r = s.targets[0].phases[0].result.as_mut().unwrap();
        if let TestOptions::Fileio(c) = &mut r.options {
            c.total_size = 16 << 30;
        }
        assert_eq!(verdict(&s).verdict, Colour::Green);
        // direct I/O on the small set: passes
        let r = s.targets[0].phases[0].result.as_mut().unwrap();
        if let TestOptions::Fileio(c) = &mut r.options {
            c.total_size = 1 << 30;
            c.extra_flags.direct = true;
        }
        assert_eq!(verdict(&s).verdict, Colour::Green);
    }

    #[test]
    fn a_run_not_under_the_performance_governor_is_amber() {
        let mut s = clean();
        s.governor = Some(GovernorRecord {
            before: "ondemand".into(),
            during: "performance".into(),
            not_pinned: None,
            restored: true,
        });
        assert!(verdict(&s).reasons.is_empty());
        assert_eq!(
            governor_line(s.governor.as_ref().unwrap()),
            "ondemand before the run, performance while it measured (put back after)"
        );
        let g = s.governor.as_mut().unwrap();
        g.during = "ondemand".into();
        g.not_pinned = Some(
            "could not write /sys/…/scaling_governor: Permission denied (pinning needs root)"
                .into(),
        );
        let v = verdict(&s);
        assert_eq!(rules(&v), [("governor", Colour::Amber)]);
        assert!(v.reasons[0].text.starts_with("the CPU governor was ondemand while the run measured, not performance (could not write"), "{}", v.reasons[0].text);
    }

    #[test]
    fn io_errors_of_the_targets_disk_are_red_with_the_lines() {
        let mut s = clean();
        let mut c = TroubleCount::default();
        let line = "critical medium error, dev sda, sector 77 op 0x1:(WRITE) flags 0x0";
        c.disks.insert(
            "sda".into(),
            UsbTrouble {
                io_errors: 2,
                usb_resets: 1,
                examples: vec![
                    line.into(),
                    "usb 2-1: reset SuperSpeed USB device number 2 using xhci_hcd".into(),
                ],
                ..Default::default()
            },
        );
        s.targets[0].usb_trouble = Some(UsbTroubleCount::Counted(c));
        let v = verdict(&s);
        assert_eq!(v.verdict, Colour::Red);
        assert_eq!(
            rules(&v),
            [("io_errors", Colour::Red), ("usb_trouble", Colour::Amber)]
        );
        assert_eq!(
            v.reasons[0].text,
            format!("the kernel logged 2 I/O errors on sda while the target ran (\"{line}\"): the disk failed requests; its figures are not a working disk's.")
        );
        assert!(
            v.reasons[1].text.starts_with(
                "the kernel logged 1 USB reset for sda while the target ran (\"usb 2-1: reset"
            ),
            "{}",
            v.reasons[1].text
        );
    }

    #[test]
    fn throttling_usb_trouble_and_a_left_steady_state_are_amber() {
        let mut s = clean();
        s.targets[0].samples = vec![crate::sys::state::StateSample {
            t_s: 30.0,
            temp_c: None,
            throttled: Some(0x4),
            undervoltage: None,
        }];
        let mut c = TroubleCount::default();
        c.disks.insert(
            "sda".into(),
            UsbTrouble {
                uas_aborts: 1,
                examples: vec!["sd 0:0:0:0: [sda] tag#3 uas_eh_abort_handler 0 uas-tag 4".into()],
                ..Default::default()
            },
        );
        s.targets[0].usb_trouble = Some(UsbTroubleCount::Counted(c));
        let r = s.targets[0].phases[0].result.as_mut().unwrap();
        let st = r.steady_state.as_mut().unwrap();
        st.left_at_s = Some(41.0);
        let v = verdict(&s);
        assert_eq!(
            rules(&v),
            [
                ("power", Colour::Amber),
                ("usb_trouble", Colour::Amber),
                ("steady_state", Colour::Amber)
            ]
        );
        assert_eq!(v.verdict, Colour::Amber);
        assert!(
            v.reasons[0].text.contains("throttled"),
            "{}",
            v.reasons[0].text
        );
        assert_eq!(v.reasons[1].text, "the kernel logged 1 UAS abort for sda while the target ran (\"sd 0:0:0:0: [sda] tag#3 uas_eh_abort_handler 0 uas-tag 4\"): figures may include stalls.");
        assert!(
            v.reasons[2].text.contains("at 41.0 s"),
            "{}",
            v.reasons[2].text
        );
        // The kernel log not read for a USB disk: not judged.
        s.targets[0].usb_trouble = None;
        let v = verdict(&s);
        assert!(v.reasons[1].text.starts_with("not judged: the kernel log"));
    }

    #[test]
    fn the_doubts_no_rule_covers_are_amber() {
        let mut s = clean();
        s.targets[0].phases[0].status = crate::model::PhaseStatus::Failed;
        s.targets[0].phases[0]
            .result
            .as_mut()
            .unwrap()
            .measurement
            .total_time_s = 5.0;
        let v = verdict(&s);
        assert_eq!(
            rules(&v),
            [("unfinished", Colour::Amber), ("short_run", Colour::Amber)]
        );
    }

    #[test]
    fn an_older_document_without_validity_gets_a_verdict_when_read() {
        let mut s = clean();
        s.targets[0].phases[0].result.as_mut().unwrap().steady_state = None;
        let text = s.to_json_pretty();
        assert!(!text.contains("validity"));
        let back = SuiteResult::from_json(&text, "results.json").unwrap();
        let v = of_result(&back, &back.targets[0], &back.targets[0].phases[0]).unwrap();
        // the steady state is computed on load (no samples: not judged), so amber, not green
        assert_eq!(rules(&v), [("steady_state", Colour::Amber)]);
        assert!(
            v.reasons[0].text.starts_with("not judged"),
            "{}",
            v.reasons[0].text
        );
        // a phase without numbers has none
        let mut p = back.targets[0].phases[0].clone();
        p.result = None;
        assert_eq!(of_result(&back, &back.targets[0], &p), None);
    }
}
