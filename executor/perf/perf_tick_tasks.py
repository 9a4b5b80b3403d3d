#!/usr/bin/env python3
"""Benchmark: the FreeRTOS kernel tick against the number of tasks (Kohout, "Hardware Support for Real-Time Operating
Systems", 2002: how tick processing grows with the number of tasks). For each N, the executor image with N extra
tasks (make -C executor avr EXTRA_TASKS=N, executor/port/avr/main.c "extra tasks": N tasks that only vTaskDelay, so
that ticks wake 0, 1, ... N of them) runs a short lockstep mixed run on the bench with the executor trace on, and
each tick interrupt's own cycles (TIMER0_COMPA, every 8 ms) are grouped by the number of tasks that tick woke.

What is observable, and so what "woken" means here. A tick only makes tasks ready (their delay, or a
wait's timeout, ran out); the trace shows a task when the kernel switches to it. Every task of this
executor that a tick can wake within a run is above the idle priority, so when the tick interrupted the
idle task (the core asleep, or in the idle loop), each task it woke runs, highest first, before the idle
task does again, and the tick's own RETI comes only when the idle task is back (the port switches with
RET inside the tick: exectrace.h). So the tasks the tick woke are the distinct tasks switched to (S
records) between its entry and its own RETI. That holds only if nothing else made a task ready in
between: ticks with another interrupt's entry in that span are left out (counted as `other_irq`), and so
are ticks that interrupted a task other than idle (`not_idle`: a woken task that does not outrank it runs
later, when it is no longer the tick's doing). Woken tasks include the executor's own (the status task's
delay, a wait's CHECKIN_WAIT timeout), not only the extra ones: to the kernel they are the same work.

A tick's own cycles are its handler's (mmanalysis.exectrace.instances): from its entry to the store that
switches pxCurrentTCB (save, xTaskIncrementTick, vTaskSwitchContext up to the store), plus, when it
switched, its tail from the switch back to the idle task to its RETI (idle's restore, RET, RETI); the woken
tasks' own runs are theirs, not the tick's. Lockstep runs are deterministic: one run per N is the figure.

Prints the table on stderr and the figures as JSON for tools/perf.py on stdout
({"name","unit","median","max","runs","note"}). Usage: perf_tick_tasks.py [--n 0 2 4 8 12] [--count 20]
[--markdown] (the table as docs/executor-profile.md has it, on stdout instead of the JSON).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for _p in ("analysis", "hil", "scheduler-gui", "protocol/python"):   # this checkout's packages, not another's
    if str(ROOT / _p) not in sys.path:
        sys.path.insert(0, str(ROOT / _p))

from mmanalysis import exectrace  # noqa: E402

TICK_VECTOR = "TIMER0_COMPA"
NS = (0, 2, 4, 8, 12)
COUNT = 20            # mixed events 2 ticks ahead: ~2.2 s of virtual time, ~275 kernel ticks
OUT_DIR = ROOT / "build/perf/tick_tasks"


def image(n: int) -> Path:
    return ROOT / ("executor/build/avr/executor.elf" if n == 0 else f"executor/build/avr-extra-{n}/executor.elf")


def build(n: int) -> dict[str, Any]:
    """make -C executor avr [EXTRA_TASKS=n]: the image's path and its avr-size figures (bytes)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    cmd = ["make", "-C", str(ROOT / "executor"), "avr"] + ([f"EXTRA_TASKS={n}"] if n else [])
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    size = subprocess.run(["avr-size", "--format=avr", "--mcu=atmega2560", str(image(n))], capture_output=True,
                          text=True, check=True).stdout
    prog = int(re.search(r"Program:\s+(\d+)", size).group(1))
    data = int(re.search(r"Data:\s+(\d+)", size).group(1))
    return {"elf": image(n), "program": prog, "data": data}


def run_traced(elf: Path, trace: Path, count: int = COUNT) -> dict[str, Any]:
    """A lockstep mixed run (ISR dispatch, idle executor load) with this executor image and its trace."""
    from mmhil import LockstepEndpoint
    from mmsched.model.config import RunConfig
    from mmsched.run.runner import run

    trace.parent.mkdir(parents=True, exist_ok=True)
    trace.unlink(missing_ok=True)
    endpoint = LockstepEndpoint(executor_elf=Path(elf), exec_trace=trace)
    result = run(RunConfig(mode="mixed", distance=2, count=count), endpoint)
    if not result.valid or result.summary["outcomes"]["ok"] != count:
        raise RuntimeError(f"run with {elf}: valid={result.valid} {result.summary['outcomes']} "
                           f"{result.sidecar.get('invalid_reason')}")
    if endpoint.exec_trace_path is None:
        raise RuntimeError(f"run with {elf}: no executor trace written")
    return {"outcomes": result.summary["outcomes"], "virtual_s": result.sidecar["bench"]["virtual_s"]}


def tick_costs(tr: exectrace.ExecTrace) -> dict[str, Any]:
    """Each tick's own cycles by the number of tasks it woke (see the top of this file):
    {"by_woken": {k: [cycles, ...]}, "other_irq": n, "not_idle": n, "ticks": n}."""
    m = exectrace.model(tr)
    own = {start: cycles for start, _, cycles in exectrace.instances(tr).get(("isr", TICK_VECTOR), [])}
    recs = tr.records
    at = [c for c, _, _ in recs]
    by: dict[int, list[int]] = defaultdict(list)
    skipped = {"other_irq": 0, "not_idle": 0}
    ticks = 0
    for i in m.interrupts:
        if tr.vector(i.vector) != TICK_VECTOR or i.before or i.end is None:
            continue
        ticks += 1
        if i.task != "idle":
            skipped["not_idle"] += 1
            continue
        inside = recs[bisect.bisect_right(at, i.start):bisect.bisect_left(at, i.end)]
        if any(kind == "I" for _, kind, _ in inside):
            skipped["other_irq"] += 1
            continue
        woken = {tr.task(a) for _, kind, a in inside if kind == "S"} - {"idle"}
        by[len(woken)].append(own[i.start])
    return {"by_woken": dict(sorted(by.items())), "ticks": ticks, **skipped}


def extra_runs(tr: exectrace.ExecTrace) -> list[int]:
    """The extra tasks' own runs (cycles): each from the switch to it to the switch away, the restore of its
    context, vTaskDelay (its sorted insertion into the delayed list among them) and the switch away."""
    return [c for (kind, name), v in exectrace.instances(tr).items()
            if kind == "task" and re.fullmatch(r"x\d+", name) for _, _, c in v]


def summary(by_woken: dict[int, list[int]]) -> dict[str, Any]:
    """Per k: min/median/max; the fit cost(k) = base + first + per_task * (k - 1) for k >= 1 (least squares
    over the medians) and its largest residual."""
    rows = {k: {"n": len(v), "min": min(v), "median": statistics.median(v), "max": max(v)}
            for k, v in by_woken.items()}
    pts = [(k, r["median"]) for k, r in rows.items() if k >= 1]
    fit: dict[str, Any] = {"per_task": None, "first": None, "residual_max": None}
    if len(pts) >= 2:
        slope, icpt = statistics.linear_regression([k for k, _ in pts], [c for _, c in pts])
        fit["per_task"] = round(slope, 2)
        fit["at_1"] = round(icpt + slope, 2)
        fit["residual_max"] = round(max(abs(c - (icpt + slope * k)) for k, c in pts), 2)
    if 0 in rows and 1 in rows:
        fit["first"] = rows[1]["median"] - rows[0]["median"]
    return {"rows": rows, **fit}


def measure(ns: tuple[int, ...] = NS, count: int = COUNT, out_dir: Path = OUT_DIR) -> list[dict[str, Any]]:
    out = []
    for n in ns:
        b = build(n)
        trace = Path(out_dir) / f"extra-{n}.exectrace"
        r = run_traced(b["elf"], trace, count)
        tr = exectrace.read(trace)
        costs = tick_costs(tr)
        out.append({"n": n, **b, **r, "trace": trace, **costs, **summary(costs["by_woken"]),
                    "extra_runs": extra_runs(tr)})
    return out


def table(results: list[dict[str, Any]], cpu_hz: int = 16_000_000) -> list[str]:
    us = 1e6 / cpu_hz
    lines = ["| N extra tasks | RAM (data + bss) | tasks woken by the tick | ticks | tick cycles min / median / max | "
             "median (us) |", "|---|---|---|---|---|---|"]
    for r in results:
        for k, row in r["rows"].items():
            lines.append(f"| {r['n']} | {r['data']} B | {k} | {row['n']} | {row['min']} / {row['median']:g} / "
                         f"{row['max']} | {row['median'] * us:.2f} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=list(NS), help="numbers of extra tasks (0..16)")
    ap.add_argument("--count", type=int, default=COUNT, help="mixed events per run (2 ticks ahead)")
    ap.add_argument("--markdown", action="store_true", help="print the table on stdout instead of the JSON")
    args = ap.parse_args()
    results = measure(tuple(args.n), args.count)
    lines = table(results)
    for r in results:
        lines.append(f"N={r['n']}: {r['ticks']} ticks in {r['virtual_s']:.2f} s, left out: {r['other_irq']} with "
                     f"another interrupt inside, {r['not_idle']} that interrupted a task; fit k>=1: "
                     f"{r['per_task']} cycles a task woken (largest residual {r['residual_max']}); "
                     f"first woken task (with the switch): +{r['first']} over none"
                     + (f"; an extra task's own run (restore, vTaskDelay, switch): median "
                        f"{statistics.median(r['extra_runs']):g}, max {max(r['extra_runs'])} cycles"
                        if r["extra_runs"] else ""))
    if args.markdown:
        print("\n".join(lines))
        return 0
    print("\n".join(lines), file=sys.stderr)
    zero = [r["rows"][0]["median"] for r in results if 0 in r["rows"]]
    slopes = [r["per_task"] for r in results if r["per_task"] is not None]
    firsts = [r["first"] for r in results if r["first"] is not None]
    top = results[-1]
    kmax = max(top["rows"])
    ns = ", ".join(str(r["n"]) for r in results)
    figures = [
        {"name": "kernel tick, no task woken", "unit": "cycles", "median": statistics.median(zero), "max": max(zero),
         "runs": len(zero), "note": f"median per image, N extra tasks = {ns}: "
                                    + "/".join(f"{z:g}" for z in zero) + " (lockstep: one run each)"},
        {"name": "kernel tick, each further task woken", "unit": "cycles", "median": statistics.median(slopes),
         "max": max(slopes), "runs": len(slopes), "note": "slope of the median over k >= 1 tasks woken, per image"},
        {"name": "kernel tick, first task woken (wake + switch)", "unit": "cycles",
         "median": statistics.median(firsts), "max": max(firsts), "runs": len(firsts),
         "note": "median(1 woken) - median(0 woken), per image"},
        {"name": f"kernel tick, {kmax} tasks woken (N={top['n']})", "unit": "us",
         "median": top["rows"][kmax]["median"] / 16, "max": top["rows"][kmax]["max"] / 16, "runs": 1,   # 16 MHz
         "note": f"{top['rows'][kmax]['n']} ticks; RAM {top['data']} B with N={top['n']}"},
    ]
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
