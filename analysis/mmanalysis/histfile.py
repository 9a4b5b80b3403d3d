"""A run's histogram as a text file (`mmrig run --hist`) in cyclictest's format (rt-tests, `cyclictest -h`): after
mmrig's '#' header lines, which record the environment a reader needs to trust the figure (tools that read
cyclictest's files skip '#' lines, as cyclictest's own output to a terminal starts with some), the line
`# Histogram`, one `%06d %06d` line per bin of the sidecar's `histogram` (mmanalysis.histogram: the bin's start in
whole us, its count), then cyclictest's trailer for its one thread: `# Total:` (the counts in the bins),
`# Min Latencies:`, `# Avg Latencies:`, `# Max Latencies:` (whole us, cut as cyclictest's integer division cuts
them; the exact figures are in the header), `# Histogram Overflows:`, `# Histogram Overflow at cycle number:` and
`# Thread 0:` with the event numbers (the CSV's `event`) of the overflows, at most as many as there are bins, the
rest counted (`# 00012 others`), as cyclictest does.

A bin width that is not a whole number of us (`--histogram-us 0.5`) cannot start every bin at a whole us: its
bins' starts are written with three decimals (`000001.500`), still one number a line.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .schema import OUTCOMES


def _hz(v: Any) -> str:
    return "?" if v is None else f"{int(v)} Hz"


def _node_line(name: str, hello: Mapping[str, Any] | None, fw: Mapping[str, Any] | None) -> str:
    if not hello:
        return f"# {name}: none"
    ver = hello.get("fw_version")
    ver_s = f"{int(ver) >> 8}.{int(ver) & 0xFF}" if ver is not None else "?"
    tick_us = (hello["tick_counts"] * 1e6 / hello["timer_hz"]) if hello.get("timer_hz") else None
    line = (f"# {name}: firmware {ver_s}, cpu {_hz(hello.get('cpu_hz'))}, timer {_hz(hello.get('timer_hz'))}, "
            f"tick {hello.get('tick_counts')} counts" + (f" ({tick_us:.3f} us)" if tick_us else "")
            + f", {hello.get('baud')} baud")
    if fw and fw.get("sha256"):
        line += f", image {fw.get('image')} sha256 {fw['sha256']}"
    elif fw and fw.get("why"):
        line += f", image: {fw['why']}"
    return line


def _firing_words(cfg: Mapping[str, Any], cpu: Mapping[str, Any]) -> str:
    """Normal mode's firing thread as it ran (mmrig run -p/-m, cyclictest's): its policy and priority, whether the
    memory was locked, and why not where it was asked for."""
    policy, _, prio = str(cpu["firer_sched"]).partition(" ")
    words = f"SCHED_{policy.upper()}" + (f" {prio}" if prio else "")
    if cpu.get("firer_sched_why"):
        words += f" (asked SCHED_FIFO {cfg.get('priority')}: {cpu['firer_sched_why']})"
    words += ", memory locked (mlockall)" if cpu.get("memory_locked") else ", memory not locked"
    if cpu.get("memory_locked_why"):
        words += f" (asked: {cpu['memory_locked_why']})"
    return words


def hist_header(sidecar: Mapping[str, Any], command: str | None = None) -> list[str]:
    """The '#' lines of the histogram file: the run (and the command line that made it, when given), the
    environment, the figures."""
    cfg = sidecar.get("config") or {}
    env = sidecar.get("environment") or {}
    host = env.get("host") or {}
    sw = env.get("software") or {}
    fw = env.get("firmware") or {}
    target = sidecar.get("target") or {}
    hist = sidecar["histogram"]
    s = sidecar.get("summary") or {}
    length = " ".join(([f"count {cfg['count']}"] if cfg.get("count") is not None else [])
                      + ([f"duration {cfg['duration_s']} s"] if cfg.get("duration_s") is not None else []))
    # normal mode has no executor dispatch: its own knobs are the firing thread's accuracy and the discipline
    how = (f"accuracy {cfg.get('accuracy')}, discipline {'on' if cfg.get('discipline') else 'off'}"
           if cfg.get("mode") == "normal" else f"dispatch {cfg.get('dispatch')}")
    out = [f"# mmrig latency histogram: {sidecar.get('name')} ({sidecar.get('format')} "
           f"v{sidecar.get('format_version')}, created {sidecar.get('created')})"]
    if command:
        out.append(f"# command: {command}")
    out.append(f"# run: mode {cfg.get('mode')}, distance {cfg.get('distance')}, rate {cfg.get('rate_ms')} ms, "
               f"{length}, generation {cfg.get('generation')}, {how}, random ids {cfg.get('random_ids')}, "
               f"late bound {cfg.get('late_bound_us')} us")
    kind = target.get("kind")
    how = ("lockstep" if target.get("lockstep") else "paced" if target.get("paced") else "unpaced") \
        if kind == "bench" else "serial ports"
    out.append(f"# target: {kind} ({how}), profiler {target.get('profiler')}, executor {target.get('executor')}")
    if fw.get("bench", {}).get("sha256"):
        out.append(f"# bench program: {fw['bench'].get('image')} sha256 {fw['bench']['sha256']}")
    nodes = sidecar.get("nodes") or {}
    for name in ("profiler", "executor"):
        out.append(_node_line(name, nodes.get(name), fw.get(name)))
    tb = sidecar.get("timebase") or {}
    if tb:
        out.append(f"# time base: profiler timer {_hz(tb.get('timer_hz'))}, tick {tb.get('tick_counts')} counts")
    la = host.get("loadavg")
    out.append(f"# host: {host.get('system')} {host.get('kernel')} ({host.get('kernel_version')}) "
               f"{host.get('machine')}, {host.get('cpu_model')}, {host.get('cpu_count')} CPUs"
               + (f", governor {host['cpu_governor']}" if host.get("cpu_governor") else "")
               + (f", load {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}" if la else ""))
    out.append(f"# software: mmrig {sw.get('mmrig')}, git {sw.get('git')}, python {sw.get('python')}")
    load = sidecar.get("load") or {}
    out.append(f"# load: {'stress-ng (' + ' '.join(load['command']) + ')' if load.get('command') else 'none added'}"
               f", scheduler nice {load.get('scheduler_nice')}"
               + (f", bench priority {load['bench_priority']}" if load.get("bench_priority") is not None else ""))
    cpu = sidecar.get("cpu") or {}
    if cfg.get("mode") == "normal" and cpu.get("firer_sched"):
        out.append(f"# firing thread: {_firing_words(cfg, cpu)}")
    valid = sidecar.get("valid")
    out.append(f"# valid: {'yes' if valid else 'NO: ' + str(sidecar.get('invalid_reason'))}")
    o = s.get("outcomes") or {}

    def f(key: str) -> str:
        v = s.get(key)
        return "-" if v is None else f"{v:.3f}"
    out.append(f"# events: {s.get('events')}, ok/late/early/missed/lost "
               + "/".join(str(o.get(k, 0)) for k in OUTCOMES)
               + f", measured {s.get('n')}, not measurable {s.get('unmeasurable')}")
    out.append(f"# latency us: min {f('min_us')}, mean {f('mean_us')}, p50 {f('p50_us')}, p99 {f('p99_us')}, "
               f"p99.9 {f('p999_us')}, max {f('max_us')}")
    out.append(f"# bins: {hist['bins']} of {hist['bin_us']:g} us from 0; overflow (>= {hist['range_us']:g} us) "
               f"{hist['overflow']}, underflow (< 0) {hist['underflow']}")
    w = hist.get("worst")
    out.append("# worst: none measured" if not w else
               f"# worst: {w['latency_us']:.3f} us ({w['outcome']}), event {w['event']}, tick {w['scheduled_tc']}"
               + (f", sent at {w['sent_s']} s" if w.get("sent_s") is not None else ""))
    ph = sidecar.get("profiler_histogram")
    if ph:          # the profiler's own histogram of a periodic series (protocol 6; docs/data-format.md)
        a = ph.get("agreement") or {}
        agree = "yes" if a.get("agrees") else "NO" if a.get("checked") else f"not checked ({a.get('why')})"
        out.append(f"# profiler histogram: {ph['cells']} cells of {ph['cell_us']:g} us, overflow {ph['overflow']}, "
                   f"final {'yes' if ph.get('final') else 'NO'}, ok/late/early/missed "
                   f"{ph.get('ok')}/{ph.get('late')}/{ph.get('early')}/{ph.get('missed')}, stray edges "
                   f"{ph.get('stray')}; the same cells as the PC's: {agree}")
    out.append("# format: cyclictest's -h: '%06d %06d' per bin (its start in us, its count), then its trailer; "
               "a cycle number is the event's number in the CSV")
    return out


def bin_start(i: int, width: float) -> str:
    """Bin `i`'s start as cyclictest writes its bins (`%06d`, us), with three decimals where it is not whole."""
    start = i * width
    return f"{round(start):06d}" if float(width).is_integer() else f"{start:010.3f}"


def whole_us(v: float | None) -> int:
    """A latency as cyclictest's trailer has it: whole us, cut (its integer division); 0 for none measured."""
    return 0 if v is None else math.floor(float(v))


def cyclictest_trailer(hist: Mapping[str, Any], summary: Mapping[str, Any]) -> list[str]:
    """cyclictest's lines after the bins, for its one thread, from the sidecar's `histogram` and `summary`."""
    listed = list(hist.get("overflow_events") or [])
    others = int(hist["overflow"]) - len(listed)
    return [f"# Total: {sum(hist['counts']):09d}",
            f"# Min Latencies: {whole_us(summary.get('min_us')):05d}",
            f"# Avg Latencies: {whole_us(summary.get('mean_us')):05d}",
            f"# Max Latencies: {whole_us(summary.get('max_us')):05d}",
            f"# Histogram Overflows: {int(hist['overflow']):05d}",
            "# Histogram Overflow at cycle number:",
            "# Thread 0:" + "".join(f" {e:05d}" for e in listed) + (f" # {others:05d} others" if others > 0 else "")]


def hist_text(sidecar: Mapping[str, Any], command: str | None = None) -> str:
    """The whole histogram file of a run's sidecar (it must hold a `histogram` section); `command`: the command
    line that made the run, recorded in the header."""
    hist = sidecar["histogram"]
    lines = hist_header(sidecar, command) + ["# Histogram"]
    lines += [f"{bin_start(i, hist['bin_us'])} {c:06d}" for i, c in enumerate(hist["counts"])]
    lines += cyclictest_trailer(hist, sidecar.get("summary") or {})
    return "\n".join(lines) + "\n"


__all__ = ["bin_start", "cyclictest_trailer", "hist_header", "hist_text"]
