"""`mmrig demo` (`make demo`): the paper's five experiments (mmrig.experiments) on the paced virtual bench, each
written to results/NAME.csv + NAME.json, then one table of ours beside the paper's section 7 numbers and, under it, what
each experiment shows against the paper. The paper's figures and the verdict words come from mmanalysis.paper,
as `mmrig report`'s do.

Experiment 3 (mixed, 1 tick ahead) runs twice: tick-aligned generation (ours: the scheduler writes the
SCHEDULE right after a new TIMECODE, which leaves the frame a whole tick: not the paper's method) and
free-running generation at a rate that is not a multiple of the tick (the paper's scheduling timer), which
reproduces the paper's "about half on time"; its missed events are drawn by the tick phase they were created at.

The rows compared with the paper run the paper's executor design (mmrig.experiments, mmanalysis.paper.design):
task dispatch beside the executor's own work; experiments 1 and 4 run again with our ISR dispatch and the same
executor load, as rows of ours ("1i", "4i"), and the notes say what each design shows (`designs`). On the bench
a mixed or verification latency is the executor's dispatch on an exact simulated clock, its spread the
executor's own load's: the PC's load cannot move it there; the notes show what it can move instead: the
SCHEDULE frames' propagation delay, the slack left, missed events (mmanalysis.propagation).

A host stall of the bench costs only the events whose own bytes it displaced past the bound (validity by
cause, mmsched.verdict.validity, docs/bench.md); a run in which more than 5 % of the events are so is invalid (on a
shared VM the hypervisor stalls the bench for milliseconds several times a second). Such a run is
set aside as NAME.attemptK.csv/.json (kept, marked invalid, listed apart by `mmrig report`) and the
experiment runs again, up to `attempts` times (4 by default; 2 for a loaded experiment, see LOADED_ATTEMPTS);
the table says which attempt it shows. Runs invalid for any other reason are not retried. An experiment left
without a valid run makes `mmrig demo` exit with status 3 (NO_VALID_RUN).

`mmrig demo --profiler-kind 8051` runs the same experiments with the paper's own profiler, the 87C51
image on the bench's 8051 core (docs/bench.md "The 8051 profiler"), into results/8051/; the AVR demo's runs stay
in results/. Its table then sets each experiment's 8051 figures beside the AVR profiler's for the same
experiment (read from results/NAME.json, the AVR demo's shown run) and the paper's, and says what the 8051's
polling adds: the 8051 mean minus the AVR mean, against the paper's mean. The 8051 polls its event input from
its foreground loop (docs/hardware.md "8051 timestamp error bound": -2.2..+684 us stated; measured on the bench
over 2000 events -0.02 / 30.2 / 84.3 us min/median/max), where the AVR's input capture stamps in hardware: the
difference is what the paper's profiler put into the paper's figures, on this bench.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mmanalysis import read_run, variance_text
from mmanalysis.reader import profiler_kind as kind_of_run
from mmanalysis.paper import BENCH_CONSTANT, Observed, verdict
from mmanalysis.phasebars import phase_bars
from mmanalysis.propagation import link_stats

from mmsched.verdict.budget import format_budget
from mmsched.model.config import RunConfig
from mmsched.run.runner import Runner, RunResult

from mmrig import attempts
from mmrig.endpoints import Target, bench_images, choose_endpoint
from mmrig.experiments import EXPERIMENTS, Experiment

RESULTS = Path("results")     # relative to where the demo runs (make demo: the checkout)
NO_VALID_RUN = 3              # mmrig demo's exit status when an experiment has no valid run (cyclictest-like: 3 invalid)

# A loaded experiment is tried at most twice. Its runs are the ones a host stall is most likely to hit (the
# load itself takes the host's CPUs), so a retry is the least likely to come back valid, and each one runs a
# whole stress-ng load for the length of the run on a machine others share: one retry is worth its cost, more
# are not.
LOADED_ATTEMPTS = 2


def tries(ex: Experiment, attempts: int) -> int:
    """How many times the demo may run EX while it comes back invalid by host stalls alone."""
    return min(attempts, LOADED_ATTEMPTS) if ex.loaded else attempts


@dataclass
class DemoRow:
    """One experiment's shown run, and how many tries it took (earlier invalid ones set aside)."""
    ex: Experiment
    result: RunResult
    attempt: int = 1
    set_aside: list[Path] = field(default_factory=list)


def stalled_only(r: RunResult) -> bool:
    """Invalid only because host stalls displaced bytes that too many of its events depend on, so running it
    again is a fair retry."""
    return not r.valid and set(r.reasons) == {"bench_lag"}


def set_aside(r: RunResult, attempt: int) -> Path | None:
    """Renames the run's files to NAME.attemptK.* and its sidecar name with them: kept, not overwritten."""
    if r.csv_path is None or r.json_path is None:
        return None
    return attempts.set_aside(r.csv_path, r.json_path, attempt)


def fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def no_valid_run(rows: list[DemoRow]) -> list[str]:
    """The experiments whose shown run is invalid (every attempt was)."""
    return [row.ex.name for row in rows if not row.result.valid]


TABLE_WORDS = ("n, mean, var, max: over the measured events only (ok or late, and measurable: no byte of theirs "
               "displaced by a host stall; mmanalysis.latstats.measured), the same rows as `mmrig report` and the lab "
               "notebook; stall: events a host stall displaced a byte of past the bound, left out of n (the sidecar's "
               "measurability.events names the byte); on time: ok / all events; try: the attempt shown; var in us² "
               "(the paper's ms² x 1,000,000).")


def table(rows: list[DemoRow]) -> str:
    head = (f"| {'experiment':<32} | {'n':>4} | {'stall':>5} | {'mean us':>9} | {'var us²':>14} | {'max us':>9} "
            f"| {'on time':>7} | {'ok/late/early/missed/lost':>25} | {'valid':>5} | {'try':>3} | paper |")
    sep = "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"
    out = [head, sep]
    for row in rows:
        ex, r, s = row.ex, row.result, row.result.summary
        o = s["outcomes"]
        share = s["on_time_share"]
        out.append(f"| {ex.title:<32} | {s['n']:>4} | {s.get('unmeasurable', 0):>5} | {fmt(s['mean_us'], '.3f'):>9} | "
                   f"{variance_text(s['variance_us2']):>14} | "
                   f"{fmt(s['max_us'], '.3f'):>9} | {fmt(share * 100 if share is not None else None, '.1f') + '%':>7} | "
                   f"{'/'.join(str(o[k]) for k in ('ok', 'late', 'early', 'missed', 'lost')):>25} | "
                   f"{'yes' if r.valid else 'NO':>5} | {row.attempt:>3} | {ex.paper_text} |")
    return "\n".join(out + [TABLE_WORDS])


def verdicts(rows: list[DemoRow]) -> str:
    """What each experiment shows against the paper (mmanalysis.paper.verdict), one line each."""
    lines = ["Against the paper (section 7):"]
    footnote = False
    for row in rows:
        ex, r = row.ex, row.result
        if not r.valid:
            words = "no valid run: not compared"
        elif ex.paper is None:
            words = f"{ex.ours.strip('()')}, no figure of the paper's to compare with"
        else:
            words = verdict(ex.paper, Observed.from_summary(r.summary, r.sidecar))
        if BENCH_CONSTANT in words:            # the same words for several rows: said once, under the list
            words, footnote = words.replace(BENCH_CONSTANT, "bench: constant by construction, see (*)"), True
        lines.append(f"  {ex.title}: {words}")
    if footnote:
        lines.append(f"  (*) {BENCH_CONSTANT}")
    return "\n".join(lines)


def _link(r: RunResult):
    """The run's SCHEDULE link figures (mmanalysis.propagation), read back from its CSV."""
    if r.csv_path is None or not r.csv_path.exists():
        return None
    data = read_run(r.csv_path)
    return link_stats(data.df, next(iter(data.meta.values())))


def load_effect(r4: RunResult, r5: RunResult) -> list[str]:
    """Experiment 5 against 4: the mixed mean, and what on the bench can show the load."""
    lines = []
    if not (r4.valid and r5.valid):
        return [f"load effect (5 against 4): not shown, {' and '.join(n for n, r in (('4', r4), ('5', r5)) if not r.valid)} "
                "has no valid run"]
    m4, m5 = r4.summary["mean_us"], r5.summary["mean_us"]
    if m4 is not None and m5 is not None:
        constant = r4.summary["variance_us2"] == 0 and r5.summary["variance_us2"] == 0
        bench = all((x.sidecar.get("target") or {}).get("kind") == "bench" for x in (r4, r5))
        lines.append(f"load effect on the mixed mean (5 - 4): {m5 - m4:+.3f} us" + (
            ": on the bench it can be nothing else (every mixed latency is the executor's same dispatch time on "
            "an exact simulated clock, variance 0); what the load can change is below" if constant and bench else ""))
    l4, l5 = _link(r4), _link(r5)
    if l4 is not None and l5 is not None:
        lines.append(f"  4 idle:   {l4.text()}")
        lines.append(f"  5 loaded: {l5.text()}")
        if l4.prop_mean_ms is not None and l5.prop_mean_ms is not None:
            lines.append(f"  the load added {l5.prop_mean_ms - l4.prop_mean_ms:+.2f} ms to the mean SCHEDULE propagation "
                         f"and {(l5.prop_max_ms or 0) - (l4.prop_max_ms or 0):+.2f} ms to its max; slack min "
                         f"{fmt(l4.slack_min_ticks, '.3f')} -> {fmt(l5.slack_min_ticks, '.3f')} ticks "
                         f"(0 or less: missed)")
    load = r5.sidecar.get("load") or {}
    lines.append(f"  bench priority {((r5.sidecar.get('bench') or {}).get('host') or {}).get('sched', '?')} "
                 f"(fallback {load.get('bench_priority')}); load: {' '.join(load.get('command') or [])}")
    return lines


# (ours, the paper's design) pairs of experiments that differ in the executor's dispatch alone
DESIGN_PAIRS = (("exp1i-verification-isr", "exp1-verification"), ("exp4i-mixed-2ahead-isr", "exp4-mixed-2ahead"))


def designs(by: dict[str, RunResult]) -> list[str]:
    """One sentence per pair of runs that differ in the dispatch alone: what each design shows."""
    lines = []
    for ours, papers in DESIGN_PAIRS:
        ri, rt = by.get(ours), by.get(papers)
        if ri is None or rt is None:
            continue
        if not (ri.valid and rt.valid) or ri.summary["mean_us"] is None or rt.summary["mean_us"] is None:
            lines.append(f"{papers} against {ours}: not compared, a run of the two is not valid")
            continue
        si, st = ri.summary, rt.summary
        lines.append(
            f"{papers} (task dispatch, the paper's design) mean {st['mean_us']:.3f} us, max {st['max_us']:.3f} us: the "
            f"kernel's wake-up and context switch before the port write, and the executor's own work in the way; "
            f"{ours} (ISR dispatch, ours) mean {si['mean_us']:.3f} us, max {si['max_us']:.3f} us: the interrupt's "
            f"own path; the difference, {st['mean_us'] - si['mean_us']:+.3f} us, is what executing events in a "
            f"task costs")
    return lines


def notes(rows: list[DemoRow]) -> str:
    by = {row.ex.name: row.result for row in rows}
    lines = designs(by)
    r2 = by.get("exp2-normal")
    if r2 is not None:
        c = r2.sidecar["cpu"]
        lines.append(f"normal mode CPU cost (accuracy {c['accuracy']}): firing thread {c['normal_mode_cpu_s']:.3f} s "
                     f"CPU over {c['wall_s']:.1f} s wall; whole scheduler process {c['process_cpu_s']:.2f} s CPU")
    for name in ("exp2-normal", "exp2b-normal-disciplined"):
        r = by.get(name)
        if r is not None and "budget" in r.sidecar:
            lines.append(f"{name}: " + format_budget(r.sidecar["budget"]).replace("\n", f"\n{name}: "))
    r3b = by.get("exp3b-mixed-1ahead-free")
    if r3b is not None and "slack" in r3b.sidecar:
        sl = r3b.sidecar["slack"]
        lines.append(f"3b, 1 ahead free-running: ok events created at tick phase "
                     f"{fmt(sl['ok']['created_phase_min'], '.2f')}..{fmt(sl['ok']['created_phase_max'], '.2f')}; "
                     f"the missed ones were created late in their tick (>= 1.0: after the next tick began, before its "
                     f"TIMECODE arrived):")
        lines.append(phase_bars(sl["missed"]["created_phase_histogram"], sl["ok"]["created_phase_histogram"]))
    r4, r5 = by.get("exp4-mixed-2ahead"), by.get("exp5-mixed-2ahead-load")
    if r4 is not None and r5 is not None:
        lines += load_effect(r4, r5)
    for row in rows:
        if row.set_aside:
            lines.append(f"{row.ex.name}: {len(row.set_aside)} earlier attempt(s) invalid by host stalls, kept as "
                         f"{', '.join(p.name for p in row.set_aside)}")
        if not row.result.valid:
            lines.append(f"INVALID {row.ex.name}: {row.result.sidecar['invalid_reason']} (kept on disk, not a result)")
    return "\n".join(lines)


def run(cfg: RunConfig, target: Target, log: Callable[[str], None] | None = None) -> RunResult:
    """One run of an experiment on `target` (the demo's: the paced bench with its profiler)."""
    return Runner(cfg, choose_endpoint(target), log, images=bench_images(target)).run()


def results_dir(profiler_kind: str = "avr", base: Path = RESULTS) -> Path:
    """Where a demo with PROFILER_KIND writes: the AVR's runs in BASE, the 8051's in BASE/8051 (never mixed)."""
    return base if profiler_kind == "avr" else base / profiler_kind


def run_demo(count: int = 200, out_dir: Path = RESULTS,
             log: Callable[[str], None] | None = print, only: tuple[str, ...] | None = None,
             attempts: int = 4, profiler_kind: str = "avr") -> list[DemoRow]:
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.attempt*.*"):
        old.unlink()  # set-aside attempts of an earlier demo: this demo's results replace them
    rows: list[DemoRow] = []
    for ex in EXPERIMENTS:
        if only and ex.name not in only:
            continue
        cfg = RunConfig(count=count, name=ex.name, out=out_dir / ex.name, **ex.config)
        if log:
            log(f"running {ex.name}: {count} events ...")
        row = None
        most = tries(ex, attempts)
        for attempt in range(1, most + 1):
            r = run(cfg, Target(profiler_kind=profiler_kind), log=log)   # the paced bench
            if log:
                s = r.summary
                log(f"  {ex.name}: n={s['n']} mean={fmt(s['mean_us'], '.3f')} us outcomes={s['outcomes']} -> {r.csv_path}")
            row = DemoRow(ex, r, attempt, row.set_aside if row else [])
            if r.valid or not stalled_only(r) or attempt == most:
                break
            kept = set_aside(r, attempt)
            if kept is not None:
                row.set_aside.append(kept)
            if log:
                log(f"  {ex.name}: invalid ({r.sidecar['invalid_reason']}); set aside as {kept.name if kept else '-'}, "
                    f"running it again ({attempt + 1}/{most})")
        assert row is not None
        rows.append(row)
    return rows


# ---- the 8051 demo beside the AVR's and the paper's ----

@dataclass(frozen=True)
class Figures:
    """One run's figures as its sidecar summary gives them (the numbers the demo's table printed for it)."""
    n: int
    mean_us: float | None
    var_us2: float | None
    max_us: float | None
    on_time_share: float | None
    valid: bool
    profiler_kind: str      # target.profiler_kind; a sidecar without it is from before the 8051 bench: "avr"
    created: str | None

    @classmethod
    def from_sidecar(cls, meta: dict) -> "Figures":
        s = meta.get("summary") or {}
        return cls(int(s.get("n") or 0), s.get("mean_us"), s.get("variance_us2"), s.get("max_us"),
                   s.get("on_time_share"), bool(meta.get("valid", True)),
                   kind_of_run(meta), meta.get("created"))

    def cells(self) -> list[str]:
        share = self.on_time_share
        return [fmt(self.mean_us, ".3f"), variance_text(self.var_us2) if self.var_us2 is not None else "-",
                fmt(self.max_us, ".3f"), fmt(share * 100 if share is not None else None, ".1f") + "%"]


NO_FIGURES = ["-", "-", "-", "-"]


def avr_figures(avr_dir: Path) -> dict[str, Figures]:
    """The AVR demo's shown run of each experiment (AVR_DIR/NAME.json), if it is there, valid and an AVR run:
    a missing, unreadable, invalid or 8051 sidecar gives no figures (the table says '-')."""
    out = {}
    for ex in EXPERIMENTS:
        path = avr_dir / f"{ex.name}.json"
        try:
            meta = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(meta, dict):
            continue
        f = Figures.from_sidecar(meta)
        if f.valid and f.profiler_kind == "avr":
            out[ex.name] = f
    return out


BESIDE_WORDS = ("8051: this demo's runs (the paper's 87C51 profiler image, its event input polled); AVR: the AVR "
                "profiler's run of the same experiment (input capture), from `mmrig demo`; mean, var, max over "
                "the measured events as above; on time: ok / all events.")


def beside_table(rows: list[DemoRow], avr: dict[str, Figures], avr_dir: Path) -> str:
    """Per experiment: the 8051 run's figures, the AVR profiler's for the same experiment, the paper's."""
    cols = ["8051 mean us", "8051 var us²", "8051 max us", "on time", "AVR mean us", "AVR var us²", "AVR max us",
            "on time"]
    widths = [12, 14, 11, 7, 11, 12, 10, 7]
    head = f"| {'experiment':<32} | " + " | ".join(f"{c:>{w}}" for c, w in zip(cols, widths)) + " | paper |"
    sep = "|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|"
    out = [head, sep]
    for row in rows:
        mine = Figures.from_sidecar(row.result.sidecar).cells() if row.result.valid else NO_FIGURES
        theirs = avr[row.ex.name].cells() if row.ex.name in avr else NO_FIGURES
        out.append(f"| {row.ex.title:<32} | " + " | ".join(f"{c:>{w}}" for c, w in zip(mine + theirs, widths))
                   + f" | {row.ex.paper_text} |")
    out.append(BESIDE_WORDS)
    missing = [row.ex.name for row in rows if row.ex.name not in avr]
    if missing:
        out.append(f"AVR figures '-': no valid AVR run in {avr_dir}/ for {', '.join(missing)}; "
                   f"make them with `mmrig demo` (the AVR profiler, the default)")
    return "\n".join(out)


def polling_added(rows: list[DemoRow], avr: dict[str, Figures]) -> str:
    """What the 8051's polling adds, per experiment: the 8051 mean minus the AVR mean, beside the paper's mean.
    On the bench the executor and the PC's side are the same for both profilers; what differs is how the
    profiler stamps the event (polled, or input capture), so the difference is the profiler's."""
    lines = ["What the 8051's polling adds (8051 mean - AVR mean, same experiment, same simulated executor), against "
             "the paper's mean:"]
    for row in rows:
        r = row.result
        a = avr.get(row.ex.name)
        m8 = r.summary.get("mean_us") if r.valid else None
        paper = row.ex.paper
        ref = (f"the paper {paper.short.split(', var')[0]}" if paper is not None and paper.mean_us is not None
               else f"the paper: {row.ex.paper_text}")
        if m8 is None or a is None or a.mean_us is None:
            why = ("no valid 8051 run" if m8 is None else "no AVR run (`mmrig demo`)")
            lines.append(f"  {row.ex.title}: - ({why}); {ref}")
            continue
        added = m8 - a.mean_us
        share = (f", {added / paper.mean_us:.0%} of the paper's mean"
                 if paper is not None and paper.mean_us and row.ex.config.get("mode") != "normal" else "")
        lines.append(f"  {row.ex.title}: {added:+.3f} us (8051 {m8:.3f}, AVR {a.mean_us:.3f}){share}; {ref}")
    lines.append("  (normal mode: the 8051 stamps the PC's FIRE by polling too, so its normal-mode latencies carry the "
                 "polling as well; the paper's normal-mode mean is the PC's, far larger than either)")
    return "\n".join(lines)
