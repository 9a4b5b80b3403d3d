"""A run's sidecar (docs/data-format.md): what the run was, on what, how it went, and why a reader can trust
its figures or why not, assembled once the events have their outcomes (its `cpu`, the run's use of the host, is
measured by usage.py)."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from mmanalysis.histogram import default_bin_us, latency_histogram
from mmanalysis.maxima import IntervalMaxima, maxima_of_rows
from mmanalysis.schema import FORMAT, FORMAT_VERSION

from .. import __version__
from ..verdict.budget import budget_summary
from ..link.endpoint import Verdict
from ..verdict.environment import collect as collect_environment
from ..model.load import Load
from ..model.phasedload import PhasedLoad
from .runrecord import RunRecord
from .runstate import RunState
from ..verdict.phasefigures import phase_reasons, phases_section
from ..verdict.stats import slack_distribution
from ..verdict.tracefiles import executor_profile
from ..model.event import Event
from ..verdict.tickestimate import Grid, in_window, tick_estimate_section, tick_grid


def maxima_section(events: list[Event], every_s: float, st: RunState | None, grid: Grid | None) -> dict[str, Any]:
    """The sidecar's `maxima` (mmanalysis.maxima): the worst case of each interval of `every_s` seconds, each event
    at its moment on the run's clock, placed by the tick grid the run's TIMECODE frames allow (`grid`:
    tickestimate.tick_grid over the frames of the run's window, tickestimate.in_window: the tick its first event
    was scheduled for began at the grid's time)."""
    if st is None:        # the run ended before the handshake: no time base, no events
        return {"clock": None, "first_tc": None, "t0_run_s": None, "run_tick_s": None,
                **IntervalMaxima(every_s).section()}
    first_tc = min((e.scheduled_tc for e in events), default=None)
    grid = grid if first_tc is not None else None
    t0 = None if grid is None or first_tc is None else grid[0] + grid[1] * first_tc - st.t0
    return maxima_of_rows(events, every_s, st.timebase.tick_s, st.timebase.timer_hz, t0,
                          None if grid is None else grid[1])


def assemble(r: RunRecord, verdict: Verdict, cpu: dict[str, Any], load: Load | PhasedLoad | None,
             validity: dict[str, Any], summary: dict[str, Any], invariant: dict[str, Any]) -> dict[str, Any]:
    """The sidecar of the finished run `r`: its configuration and target, the nodes' HELLOs and counters, the
    bench's figures and validity by cause, faults, the summary, the environment and the latency histogram;
    by mode the slack (mixed), the budget and the servo (normal); the executor's profile of a traced run; a run
    in phases each phase's boundaries and figures (phasefigures.py)."""
    cfg, st = r.cfg, r.state
    phased = load if isinstance(load, PhasedLoad) else None
    invalid = [*r.invalid, *(phase_reasons(phased.spans) if phased is not None else ())]
    sched_counters: dict[str, Any] = dict(r.counters)
    if st is not None:
        m = st.matcher
        sched_counters.update(edge_order_breaks=m.edge_order_breaks, edges_missing=m.edges_missing,
                              joined_without_fired=m.joined_without_fired,
                              unmatched_results=m.unmatched_results + len(m.pending_results))
        sched_counters["generator_skipped"] = st.generator.skipped
    sched_counters.update(r.link_counters)
    sched_counters["tc_offset"] = st.tc_offset if st is not None else 0
    if st is not None:
        sched_counters["timecode_jumps"] = st.tracker.jumps
        sched_counters["timecode_disagreements"] = st.tracker.disagreements
    hellos = r.hellos
    identity = r.identity
    sidecar: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "mmrig_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "name": cfg.name,
        "config": cfg.sidecar(st.baud if st else r.baud, st.timebase.tick_s if st else 0.0),
        "target": identity,
        "nodes": {"profiler": hellos.get("profiler"), "executor": hellos.get("executor")},
        "timebase": {"timer_hz": st.timebase.timer_hz, "tick_counts": st.timebase.tick_counts,
                     "profiler_clock_ppm": None if st.tracker.fit_ppm is None else round(st.tracker.fit_ppm, 1)}
        if st is not None else None,
        # the run's clock at sent_s 0: time.monotonic() (CLOCK_MONOTONIC) but in lockstep (virtual seconds)
        "run_clock": {"clock": "virtual" if identity.get("lockstep") else "CLOCK_MONOTONIC", "t0_s": round(st.t0, 6)}
        if st is not None else None,
        "bench": verdict.section,
        "measurability": validity,
        "valid": not invalid,
        "invalid_reason": "; ".join(x.text for x in invalid) if invalid else None,
        "invalid_reasons": [{"code": x.code, "text": x.text} for x in invalid],
        "counters": {"scheduler": sched_counters, "profiler": r.node_counters.get("profiler"),
                     "executor": r.node_counters.get("executor")},
        "cpu": cpu,
        "load": {"condition": "phases" if phased is not None else cfg.load,
                 "command": load.command if load else None, "bench_priority": identity.get("priority"),
                 "scheduler_nice": os.getpriority(os.PRIO_PROCESS, 0)},
        "link_faults": r.link_faults,
        "faults": r.faults.section(),
        "invariant": invariant,
        "summary": summary,
    }
    # what a reader needs to trust the figure, and the latency histogram (docs/data-format.md)
    sidecar["environment"] = collect_environment(hellos, identity, r.images)
    sidecar["histogram"] = latency_histogram(r.events, r.histogram_us or default_bin_us(cfg.mode))
    slices = st.hist_slices if st is not None and st.profiler_hist is not None else None
    if phased is not None and st is not None:    # each phase's boundaries as they happened, and its figures
        sidecar["phases"] = (slices.phases_section(phased.plan, st.profiler_hist) if slices is not None else
                             phases_section(phased.plan, phased.spans, r.events, st.t0,
                                            r.histogram_us or default_bin_us(cfg.mode)))
    if cfg.mode == "mixed":
        sidecar["slack"] = slack_distribution(r.events)
    # the TIMECODE frames of the run's window, once: the tick estimate's and the worst case over time's clock
    # and the tick grid they allow, once for both
    grid = None
    if st is not None:       # how far the TIMECODEs' arrivals put each tick's start (a USB adapter's part of it)
        window = in_window(st.tc_arrivals, st.t0, max((e.scheduled_tc for e in r.events), default=None))
        grid = tick_grid(window, st.tracker.wire_s, st.timebase.tick_s)
        sidecar["tick_estimate"] = tick_estimate_section(window, st.tracker.wire_s, st.timebase.tick_s, grid)
        del window
    sidecar["maxima"] = (slices.maxima_section(st.profiler_hist) if slices is not None and st is not None
                         else maxima_section(r.events, cfg.maxima_every_s, st, grid))    # the worst case over time
    if cfg.mode == "normal" and st is not None:
        sidecar["budget"] = budget_summary(r.events, st.floor, cfg.discipline)
        sidecar["servo"] = {"samples": st.servo.samples, "probes": len(st.probe_tags),
                            "locked": st.servo.ready, "drift_ppm": round(st.servo.drift * 1e6, 3)}
    if st is not None and st.grid is not None:     # events due inside ticks (grid.py)
        sidecar["grid"] = st.grid.sidecar()
    if st is not None and st.series is not None:    # mixed mode: the PERIODIC frames that carried it (series.py)
        sidecar["grid"]["periodic"] = st.series.sidecar()
    if st is not None and st.profiler_hist is not None:   # the profiler's own histogram of the series (profhist.py)
        sidecar["profiler_histogram"] = st.profiler_hist.section(r.events)
    if cfg.trace and cfg.out is not None:          # the executor seen from outside
        sidecar["executor_profile"] = executor_profile(r.trace_files or {}, r.events, cfg.out)
    return sidecar
