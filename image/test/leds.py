#!/usr/bin/env python3
"""The emulated boots' eyes and finger: reads the guest's GPIO pins through QEMU's monitor,
presses the button, and checks what the LEDs did against what the daemon said they show.

  leds.py sample --monitor SOCK --addr ADDR --console LOG --out DIR [--interval S]
      Connects to a QEMU HMP monitor (retrying until QEMU has created it) and reads the 32-bit
      register at physical address ADDR with `xp` every S seconds (default 0.025) until QEMU
      exits. The same loop follows the guest's console log: every `spindle: status: …` line,
      the daemon's button events and its stop are stamped with the same host clock.
      Writes DIR/samples.tsv (t, register) and DIR/events.tsv (t, line).
  leds.py selftest
      The classifier on synthetic samples of every signal in the table (jittered as QEMU's are).
  leds.py send --monitor SOCK COMMAND
      One HMP command on a second monitor (e.g. `system_powerdown`: QEMU virt's gpio-key holds
      PL061 line 3 high for 100 ms; `device_del ID`: unplugs a device).
  leds.py check --dir DIR --pins green=B,yellow=B,red=B [--expect PATTERN ...] [--final PATTERN]
                [--report FILE]
      Splits the samples at each status line and, for every stretch long enough to judge (its
      window at least min_window of the signal said),
      classifies each LED (off, on, slow blink, fast blink, N flashes) and compares it with
      what that line says it shows (`green slow blink, yellow 2 flash(es), pause, red off`,
      status::indicator::pattern_line) and with the README's pattern table below. Every
      --expect pattern (a prefix of the status text) must have at least one stretch that was
      judged and matched; --final names the pattern that must still show (and match) when the
      stop signal reaches the daemon, through its shutdown; after the daemon's stop every LED
      must be dark. Exit status 1 on any mismatch or missing stage.
"""
import argparse
import os
import re
import socket
import statistics
import sys
import time

# The README's table "What the LEDs say" (src/status/pattern.rs): the independent oracle for the
# stages the e2e test names. Status text prefix -> (green, yellow, red).
TABLE = [
    ("booting", ("on", "on", "on")),
    ("ready (0 disk(s))", ("off", "off", "slow blink")),
    ("ready (1 disk(s))", ("1 flash(es), pause", "off", "off")),
    ("ready (2 disk(s))", ("2 flash(es), pause", "off", "off")),
    ("running (Prepare)", ("slow blink", "1 flash(es), pause", "off")),
    ("running (Fileio)", ("slow blink", "2 flash(es), pause", "off")),
    ("running (Oltp)", ("slow blink", "3 flash(es), pause", "off")),
    ("running (Tpcc)", ("slow blink", "4 flash(es), pause", "off")),
    ("copying results to the stick", ("fast blink", "fast blink", "off")),
    ("done, some tests failed", ("on", "off", "fast blink")),
    ("done, some figures judged red", ("on", "off", "2 flash(es), pause")),
    ("done (results wait", ("on", "off", "slow blink")),
    ("safe to remove the stick; some tests failed", ("on", "off", "1 flash(es), pause")),
    ("safe to remove the stick; some figures judged red", ("on", "off", "3 flash(es), pause")),
    ("safe to remove the stick", ("on", "off", "off")),
    ("no disks", ("off", "off", "slow blink")),
    ("error", ("off", "off", "on")),
]
ROLES = ("green", "yellow", "red")
STATUS_RE = re.compile(r"spindle: status: (.*) \(green (.*?), yellow (.*?), red (.*?)\)\s*$")
EVENT_RE = re.compile(r"spindle: (status: .*\(green .*|Button\w+: .*|daemon stopped|signal received.*)$")


def connect(path, deadline):
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(10)
            read_prompt(s)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise SystemExit(f"leds.py: no QEMU monitor at {path}")
            time.sleep(0.2)


def read_prompt(s):
    buf = b""
    while not buf.endswith(b"(qemu) "):
        chunk = s.recv(4096)
        if not chunk:
            raise EOFError("monitor closed")
        buf += chunk
    return buf.decode(errors="replace")


def command(s, cmd):
    s.sendall(cmd.encode() + b"\n")
    return read_prompt(s)


class ConsoleFollower:
    """New complete lines of the (growing) console log."""

    def __init__(self, path):
        self.path, self.pos, self.rest = path, 0, b""

    def lines(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return []
        self.pos += len(data)
        data = self.rest + data
        *done, self.rest = data.split(b"\n")
        clean = (re.sub(r"\x1b\[[0-9;]*[a-zA-Z]", "", d.decode(errors="replace")).replace("\r", "") for d in done)
        return [c for c in clean if c]


def sample(a):
    os.makedirs(a.out, exist_ok=True)
    mon = connect(a.monitor, time.monotonic() + 60)
    console = ConsoleFollower(a.console)
    cmd = f"xp /1wx {a.addr}"
    value_re = re.compile(r"[0-9a-f]+: (0x[0-9a-f]+)")
    with open(os.path.join(a.out, "samples.tsv"), "w") as out, open(os.path.join(a.out, "events.tsv"), "w") as ev:
        next_t = time.monotonic()
        while True:
            try:
                reply = command(mon, cmd)
            except (EOFError, OSError):
                break  # QEMU exited
            t = time.monotonic()
            m = value_re.search(reply)
            if m:
                out.write(f"{t:.4f}\t{m.group(1)}\n")
            for line in console.lines():
                e = EVENT_RE.search(line)
                if e:
                    ev.write(f"{t:.4f}\t{e.group(1)}\n")
                    ev.flush()
            next_t += a.interval
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_t = time.monotonic()
        for line in console.lines():
            e = EVENT_RE.search(line)
            if e:
                ev.write(f"{time.monotonic():.4f}\t{e.group(1)}\n")


def send(a):
    mon = connect(a.monitor, time.monotonic() + 10)
    reply = command(mon, a.command)
    # The echo and the prompt aside, HMP answers nothing when a command succeeds.
    body = [ln for ln in reply.replace("\r", "").split("\n") if ln and not ln.startswith("(qemu)") and a.command not in ln]
    if body:
        print("\n".join(body))
        if any("Error" in ln or "not found" in ln for ln in body):
            sys.exit(1)


def runs(levels):
    """(level, start, end) runs of equal levels over (t, level) samples."""
    out = []
    for t, lv in levels:
        if out and out[-1][0] == lv:
            out[-1][2] = t
        else:
            if out:
                out[-1][2] = t
            out.append([lv, t, t])
    return out


def classify(levels):
    """What one LED did over (t, level) samples: a signal name, or None when too short to say."""
    if not levels:
        return None
    # A steady level is only told from a blink over a window longer than the blinks' longest
    # run of that level: a slow blink's on (0.5 s), a flash group's pause (1.5 s). A stage that
    # lasts less (a copy to the stick on a quiet machine: 0.1 s) cannot be judged.
    span = levels[-1][0] - levels[0][0]
    if all(lv for _, lv in levels):
        return "on" if span >= 0.6 else None
    if not any(lv for _, lv in levels):
        return "off" if span >= 1.6 else None
    inner = runs(levels)[1:-1]  # the first and last runs are cut by the window
    on = [e - s for lv, s, e in inner if lv]
    off = [e - s for lv, s, e in inner if not lv]
    if len(on) < 2 or not off:
        return None
    m_on = statistics.median(on)
    if m_on < 0.16 and statistics.median(off) < 0.2:
        return "fast blink"
    if m_on >= 0.35:
        return "slow blink" if 0.3 <= statistics.median(off) <= 0.8 else f"irregular (on {m_on:.2f} s)"
    # Flash groups: flashes 0.3 s apart, groups separated by a 1.5 s pause. A window's edge
    # cuts its first and last runs: an edge off-run still counts as a pause when it is long
    # enough; a group touching an edge with a flash is incomplete and not counted.
    every = runs(levels)
    groups, n, after_pause, cut = [], 0, False, False
    for k, (lv, s, e) in enumerate(every):
        edge = k in (0, len(every) - 1)
        if lv:
            n += 1
            cut |= edge
        elif e - s > 0.9:
            if after_pause and n and not cut:
                groups.append(n)
            after_pause, n, cut = True, 0, False
    if not groups:
        return None
    return f"{statistics.mode(groups)} flash(es), pause"


def min_window(signal):
    """The shortest window (s) over which classify() must tell SIGNAL from every other signal;
    selftest() proves it does. A steady level needs the classifier's own spans; a blink needs two
    inner on-runs and an off-run (fast: 0.2 s period, slow: 1 s); a flash count needs a pause, a
    whole group and the next pause inside the window (two periods)."""
    if signal == "on":
        return 0.7
    if signal == "off":
        return 1.7
    if signal == "fast blink":
        return 1.0
    if signal == "slow blink":
        return 3.0
    m = re.match(r"(\d+) flash", signal)
    if not m:
        return 1.7  # not a signal of the table: judged as soon as a steady level could be
    return 2 * (int(m.group(1)) * 0.5 + 1.2) + 0.3


def table_says(pattern):
    for prefix, signals in TABLE:
        if pattern.startswith(prefix):
            return signals
    return None


def check(a):
    samples = []
    with open(os.path.join(a.dir, "samples.tsv")) as f:
        for line in f:
            t, v = line.split()
            samples.append((float(t), int(v, 16)))
    events = []
    with open(os.path.join(a.dir, "events.tsv")) as f:
        for line in f:
            t, text = line.rstrip("\n").split("\t", 1)
            events.append((float(t), text))
    if len(samples) < 2:
        raise SystemExit("leds.py: no samples")
    bits = dict(p.split("=") for p in a.pins.split(","))
    report, problems = judge(samples, events, bits, a.expect or [], a.final)
    text = "\n".join(report + [f"PROBLEM: {p}" for p in problems])
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")
    sys.exit(1 if problems else 0)


def judge(samples, events, bits, expect, final):
    """The check of one boot: (report lines, problems) over its (t, register) samples and
    (t, event text) events; BITS maps each role to its bit in the register."""
    gaps = [b[0] - a_[0] for a_, b in zip(samples, samples[1:])]
    report = [f"{len(samples)} samples, median interval {statistics.median(gaps) * 1000:.0f} ms, "
              f"longest gap {max(gaps) * 1000:.0f} ms; {len(events)} events"]
    problems, judged, readable_stretches, last = [], {}, {}, None
    stopped = [t for t, text in events if text == "daemon stopped"]
    signal = [t for t, text in events if text.startswith("signal received")]
    # Stretches run from one status line to the next (or to the daemon's stop): a button event
    # or the stop signal inside one does not end it, since the LEDs must keep their pattern.
    marks = [(t, text) for t, text in events if text.startswith("status: ") or text == "daemon stopped"]
    marks.append((samples[-1][0], "end of samples"))
    for (t0, text), (t1, _) in zip(marks, marks[1:]):
        m = STATUS_RE.search("spindle: " + text) if text.startswith("status: ") else None
        if not m:
            continue
        pattern, said = m.group(1), m.group(2, 3, 4)
        if not stopped or t0 < stopped[0]:
            last = (pattern, t0, t1)
        # Margins: the console line reaches the host a little after the pins change, and the
        # next change a little before its line.
        lo, hi = t0 + 0.4, t1 - 0.3
        window = [(t, v) for t, v in samples if lo <= t <= hi]
        # A LED is judged only over a window in which the classifier can tell what it said
        # from every other signal (min_window, proven by the self-test); a shorter stage (a copy
        # to the stick lasts 0.3-2 s) is noted, and what the daemon said still meets the table.
        readable = tuple(hi - lo >= min_window(said[i]) for i in range(3))
        seen = tuple(classify([(t, bool(v >> int(bits[r]) & 1)) for t, v in window]) if readable[i] else None
                     for i, r in enumerate(ROLES))
        table = table_says(pattern)
        if table is not None and table != said:
            problems.append(f"{pattern} at +{t0 - samples[0][0]:.1f} s: the daemon said {said}, the table says {table}")
        verdicts = []
        for i, role in enumerate(ROLES):
            if seen[i] is None:
                verdicts.append(f"{role} ? (said {said[i]}" + ("" if readable[i] else "; too short to read") + ")")
                continue
            ok = seen[i] == said[i]
            verdicts.append(f"{role} {seen[i]}" + ("" if ok else f" != said {said[i]!r}"))
            if not ok:
                problems.append(f"{pattern} at +{t0 - samples[0][0]:.1f} s: {role} {seen[i]}, said {said[i]!r}")
        readable_stretches.setdefault(pattern, []).append(all(readable))
        complete = all(s is not None for s in seen)
        if complete and all(seen[i] == said[i] for i in range(3)):
            judged.setdefault(pattern, []).append(hi - lo)
        report.append(f"+{t0 - samples[0][0]:7.1f} s {hi - lo:6.1f} s  {pattern:<45} " + "; ".join(verdicts))
    if final:
        if last is None or not last[0].startswith(final):
            problems.append(f"final pattern {last[0] if last else None!r}, expected {final!r}")
        elif last[0] not in judged:
            problems.append(f"final pattern {last[0]!r} was not seen on the pins")
        elif signal and not last[1] < signal[0] <= last[2]:  # stop and signal may share a read
            problems.append(f"final pattern {last[0]!r} did not last until the daemon was stopped")
        elif not signal:
            problems.append("the daemon was not stopped by a signal while the samples ran")
        # Nothing else may show between the stop signal and the daemon's end, however briefly.
        for t, text in events:
            if signal and stopped and signal[0] <= t <= stopped[0] and text.startswith("status: ") \
                    and not text.startswith("status: " + final):
                problems.append(f"while stopping, the daemon showed {text[8:]!r} instead of {final!r}")
    if stopped:
        after = [v for t, v in samples if t > stopped[0] + 0.3]
        mask = sum(1 << int(bits[r]) for r in ROLES)
        lit = [v & mask for v in after if v & mask]
        report.append(f"after the daemon stopped: {len(after)} samples, {len(lit)} with a LED lit")
        if lit:
            problems.append(f"LEDs lit after the daemon stopped ({len(lit)} of {len(after)} samples)")
    for want in expect:
        if any(p.startswith(want) for p in judged):
            continue
        shown = [r for p, rs in readable_stretches.items() if p.startswith(want) for r in rs]
        if shown and not any(shown):
            # said on the console, but every stretch of it was over before its signals could be
            # told apart (a copy to the stick takes 0.3-2 s): noted, not a failure; what was
            # said in it is still checked against the table above
            report.append(f"stage {want!r}: shown {len(shown)}x, each too short to read on the pins")
        else:
            problems.append(f"stage {want!r}: no stretch of it was seen and matched on the pins")
    report.append("matched stages: " + ", ".join(f"{p} ({len(d)}x)" for p, d in judged.items()))
    return report, problems


def level_at(signal, t_ms):
    """The daemon's schedule (status::pattern::Signal::level_at), for the self-test."""
    if signal in ("on", "off"):
        return signal == "on"
    if signal in ("slow blink", "fast blink"):
        half = 500 if signal == "slow blink" else 100
        return t_ms % (2 * half) < half
    n = int(signal.split()[0])
    period = n * 500 - 300 + 1500
    t = t_ms % period
    return t < n * 500 and t % 500 < 200


TRIALS = 100


def wake_step(rnd):
    """Seconds to the guest blink thread's next wake: every 25 ms, late by up to 15 ms, and one
    wake in 50 stalled up to 100 ms more (a busy emulated CPU)."""
    return 0.025 + rnd.uniform(0, 0.015) + (rnd.uniform(0, 0.1) if rnd.random() < 0.02 else 0)


def read_step(rnd):
    """Seconds to the host sampler's next read: every 25-45 ms."""
    return 0.025 + rnd.uniform(0, 0.02)


def selftest(a):
    """Every signal of the table and every flash count, sampled as the sampler does, must be
    classified as itself over its shortest readable window (min_window), with the guest's blink
    thread now and then stalled (a busy emulated CPU: one wake in 50 late by up to 100 ms)."""
    import random
    rnd = random.Random(7)
    signals = sorted({sig for _, sigs in TABLE for sig in sigs} | {f"{n} flash(es), pause" for n in range(1, 10)})
    bad = []
    for sig in signals:
        window = min_window(sig)
        for trial in range(TRIALS):
            # The guest's blink thread wakes every 25 ms (late by up to 15 ms) and sets the
            # level its schedule has then; the host samples every 25-45 ms.
            wakes, w = [], rnd.uniform(0, 3.0)
            while w < window + 3.5:
                wakes.append((w, level_at(sig, w * 1000)))
                w += wake_step(rnd)
            levels, t, k = [], 3.0 + rnd.uniform(0, 0.05), 0
            while t < window + 3.0:
                while k + 1 < len(wakes) and wakes[k + 1][0] <= t:
                    k += 1
                levels.append((t, wakes[k][1]))
                t += read_step(rnd)
            got = classify(levels)
            if got != sig:
                bad.append(f"{sig!r} classified as {got!r} (trial {trial})")
    print(f"leds.py selftest: {len(signals)} signals x {TRIALS} trials, {len(bad)} wrong")
    boots = boot_selftest(rnd)
    print(f"leds.py selftest: {len(BOOTS)} synthetic boots, {len(boots)} judged wrongly")
    for b in bad[:20] + boots:
        print("  " + b)
    sys.exit(1 if bad or boots else 0)


READY, SAFE = "ready (2 disk(s))", "safe to remove the stick"
COPY = "copying results to the stick"
# Synthetic boots: (name, [(status, the pins' signals or None for what the table says, seconds)],
# whether judge() must find a problem). The end of a run as the e2e test checks it, with the copy
# to the stick as short as it is on a quiet host (0.3 s), as long as a busy one made it (1.8 s:
# its red "off" cannot be read in 1.1 s of window) and long enough to be judged (3 s).
BOOTS = [
    ("copy 0.3 s", [(READY, None, 8), (COPY, None, 0.3), (SAFE, None, 10)], False),
    ("copy 1.8 s", [(READY, None, 8), (COPY, None, 1.8), (SAFE, None, 10)], False),
    ("copy 3 s", [(READY, None, 8), (COPY, None, 3.0), (SAFE, None, 10)], False),
    ("copy 3 s, yellow slow", [(READY, None, 8), (COPY, ("fast blink", "slow blink", "off"), 3.0), (SAFE, None, 10)], True),
    ("final pattern wrong", [(READY, None, 8), (COPY, None, 3.0), (SAFE, ("on", "off", "on"), 10)], True),
]


def boot_selftest(rnd):
    """judge() over each synthetic boot of BOOTS: a problem exactly where one is planted."""
    wrong = []
    bits = {"green": "0", "yellow": "1", "red": "2"}
    for name, stages, planted in BOOTS:
        samples, events, t0 = [], [], 100.0
        for status, pins, seconds in stages:
            said = table_says(status)
            shown = pins or said
            events.append((t0, f"status: {status} (green {said[0]}, yellow {said[1]}, red {said[2]})"))
            t, w, level = t0, t0, 0
            while t < t0 + seconds:
                # the blink thread's wakes (late, now and then stalled) and the host's reads
                while w <= t:
                    level = sum(level_at(sig, (w - t0) * 1000) << i for i, sig in enumerate(shown))
                    w += wake_step(rnd)
                samples.append((t, level))
                t += read_step(rnd)
            t0 += seconds
        events += [(t0 - 2, "signal received, stopping"), (t0, "daemon stopped")]
        samples += [(t0 + 0.1 * k, 0) for k in range(1, 20)]
        report, problems = judge(samples, events, bits, [READY, COPY], SAFE)
        if bool(problems) != planted:
            wrong.append(f"boot {name!r}: " + ("; ".join(problems) or "no problem found in: " + " | ".join(report)))
    return wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("sample")
    p.add_argument("--monitor", required=True)
    p.add_argument("--addr", required=True)
    p.add_argument("--console", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--interval", type=float, default=0.025)
    p.set_defaults(func=sample)
    p = sub.add_parser("send")
    p.add_argument("--monitor", required=True)
    p.add_argument("command")
    p.set_defaults(func=send)
    p = sub.add_parser("selftest")
    p.set_defaults(func=selftest)
    p = sub.add_parser("check")
    p.add_argument("--dir", required=True)
    p.add_argument("--pins", required=True)
    p.add_argument("--expect", action="append")
    p.add_argument("--final", help="the pattern that must still show when the daemon is stopped")
    p.add_argument("--report")
    p.set_defaults(func=check)
    a = ap.parse_args()
    a.func(a)


if __name__ == "__main__":
    main()
