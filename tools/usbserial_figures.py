#!/usr/bin/env python3
"""What a USB-serial desk adds: the table of docs/usb-serial.md, from lockstep runs of the real images behind each
of the bench's line models (`mmrig run --line`, hil/bench/uart_usb.c).

For each baud (9600, 500000) and line model (ideal, ftdi at 16 ms and at 1 ms, the Mega's cdc-16u2), two lockstep
runs in mixed mode, one tick ahead (where the slack is thinnest, the paper's 1-tick case):
- aligned: an event each tick, made as its TIMECODE arrives: how long the adapter held each TIMECODE (its
  arrival against the same frame's on the ideal line: the runs are the same but for the line), the tick
  estimate's error (sidecar tick_estimate: against the grid the least-held frames define, so it misses the hold
  every frame met), the slack left (CSV slack_ticks, in ms), the latency;
- free-running, an event every 97 ms: the share on time (the rest refused past_due: made too late in their tick).
Normal mode cannot run in lockstep (the PC's own timing is what it measures); what the adapter alone costs a PC
that fires at the paper's estimate is computed from the model: the TIMECODE's hold plus the FIRE's wait for the
next 1 ms USB frame on its way out (0.5 ms on average; none on the ideal line).

Lockstep: the figures are the firmware's, the protocol's and the model's, not this host's; the same command gives
the same table. About a minute on 2 CPUs.

    python tools/usbserial_figures.py                          # prints the Markdown table
    python tools/usbserial_figures.py --write docs/usb-serial.md   # replaces the table between its markers
    python tools/usbserial_figures.py --json                   # tools/perf.py's figures (make perf ONLY=usbserial)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mmanalysis.safefiles import atomic_write
from mmhil import LockstepEndpoint
from mmhil.bench import ensure_built
from mmhil.linemodel import LineModel
from mmsched.model.config import RunConfig
from mmsched.model.result import RunResult
from mmsched.run.runner import run

MODELS = ("ideal", "ftdi:latency=16", "ftdi:latency=1", "cdc-16u2")
BAUDS = (9600, 500000)
COUNT = 200
FREE_RATE_MS = 97.0
TICK_MS = 1_137_778 / 16_000.0
FRAME_WAIT_MS = 0.5            # a FIRE written at a uniformly random moment waits half a 1 ms USB frame
BEGIN, END = "<!-- usb-serial table: tools/usbserial_figures.py -->", "<!-- end of table -->"


@dataclass(frozen=True)
class Row:
    model: str
    baud: int
    hold_mean_ms: float             # the adapter's hold on a TIMECODE frame, against the ideal line
    hold_max_ms: float
    est_mean_ms: float
    est_p99_ms: float
    est_max_ms: float
    slack_p1_ms: float
    slack_p50_ms: float
    latency_p50_us: float
    on_time_free: float             # share of the free-running events on time
    naive_fire_late_ms: float       # by the model: a PC firing at the paper's estimate

    def cells(self) -> list[str]:
        return [f"`{self.model}`", str(self.baud), f"{self.hold_mean_ms:.2f}", f"{self.hold_max_ms:.2f}",
                f"{self.est_mean_ms:.2f}", f"{self.est_p99_ms:.2f}",
                f"{self.est_max_ms:.2f}", f"{self.slack_p1_ms:.1f}", f"{self.slack_p50_ms:.1f}",
                f"{self.latency_p50_us:.3f}", f"{100 * self.on_time_free:.1f} %", f"{self.naive_fire_late_ms:.2f}"]


HEADER = ["line", "baud", "TIMECODE held, mean ms", "max ms", "tick estimate error, mean ms", "p99 ms", "max ms", "slack p1 ms", "slack p50 ms",
          "latency p50 us", "on time, 1 tick ahead every 97 ms", "naive FIRE late, mean ms (model)"]


def one_run(folder: Path, name: str, spec: str, baud: int, **kw: object) -> tuple[RunResult, pd.DataFrame]:
    cfg = RunConfig(name=name, out=folder / name, mode="mixed", distance=1, count=COUNT, baud=baud, **kw)
    result = run(cfg, LockstepEndpoint(line_model=LineModel.parse(spec)))
    if not result.valid:
        raise RuntimeError(f"{spec} at {baud} baud ({name}): invalid run: {result.sidecar['invalid_reason']}")
    return result, pd.read_csv(folder / f"{name}.csv")


def holds_ms(timecodes: dict[int, float], ideal: dict[int, float], last_tc: int) -> np.ndarray:
    """Each TIMECODE's arrival behind the adapter less the same frame's on the ideal line, up to the last event's
    tick (after it the run's closing QUERY, which the adapter hands on at a USB frame, moves the frames on the wire)."""
    return np.array([(at - ideal[tc]) * 1000 for tc, at in timecodes.items() if tc in ideal and tc <= last_tc])


def measure(folder: Path, spec: str, baud: int, ideal: dict[int, float]) -> tuple[Row, dict[int, float]]:
    """The row of `spec` at `baud`, and its aligned run's TIMECODE arrivals (the ideal line's are `ideal`, or
    empty when `spec` is the ideal line itself)."""
    result, df = one_run(folder, "aligned", spec, baud)
    timecodes = dict(result.timecodes)
    hold = holds_ms(timecodes, ideal or timecodes, int(df["scheduled_tc"].max()))
    te = result.sidecar["tick_estimate"]
    slack_ms = df.loc[df["outcome"] == "ok", "slack_ticks"].to_numpy() * TICK_MS
    _, free = one_run(folder, "free", spec, baud, generation="free", rate_ms=FREE_RATE_MS)
    lat = df.loc[df["outcome"] == "ok", "latency_us"].to_numpy()
    frame_wait = 0.0 if spec == "ideal" else FRAME_WAIT_MS
    return Row(spec, baud, float(hold.mean()), float(hold.max()), te["mean_us"] / 1000, te["p99_us"] / 1000,
               te["max_us"] / 1000, float(np.percentile(slack_ms, 1)), float(np.percentile(slack_ms, 50)),
               float(np.median(lat)), float((free["outcome"] == "ok").mean()), float(hold.mean()) + frame_wait), \
        timecodes


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write_into(page: Path, text: str) -> None:
    """The table replaces what is between the page's markers (the rest of the page is prose, kept)."""
    doc = page.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{page}: no markers {BEGIN} ... {END}")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    atomic_write(page, (head + BEGIN + "\n" + text + END + tail).encode())


def perf_figures(rows: list[Row]) -> list[dict]:
    return [{"name": f"TIMECODE held behind {r.model}, {r.baud} baud (lockstep, mixed)", "unit": "ms",
             "median": round(r.hold_mean_ms, 3), "max": round(r.hold_max_ms, 3), "runs": 1,
             "note": f"slack p1 {r.slack_p1_ms:.1f} ms; {100 * r.on_time_free:.1f} % on time one tick ahead every "
                     f"{FREE_RATE_MS:g} ms (docs/usb-serial.md)"} for r in rows]


def figures(progress: bool = False) -> list[Row]:
    """Every row of the table: each baud, each model, the ideal line first (the others' holds are against it)."""
    ensure_built()
    rows = []
    with tempfile.TemporaryDirectory(prefix="usbserial-figures-") as tmp:
        for baud in BAUDS:
            ideal: dict[int, float] = {}
            for spec in MODELS:
                folder = Path(tmp) / f"{spec.replace(':', '_').replace('=', '_')}-{baud}"
                folder.mkdir()
                row, timecodes = measure(folder, spec, baud, ideal)
                ideal = ideal or timecodes
                rows.append(row)
                if progress:
                    print(f"{spec} at {baud} baud: done", file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", type=Path, default=None, metavar="PAGE", help="put the table into PAGE")
    parser.add_argument("--json", action="store_true", help="print tools/perf.py's figures instead")
    args = parser.parse_args()
    rows = figures(progress=not args.json)
    if args.json:
        print(json.dumps(perf_figures(rows)))
    elif args.write is not None:
        write_into(args.write, table(rows))
    else:
        print(table(rows), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
