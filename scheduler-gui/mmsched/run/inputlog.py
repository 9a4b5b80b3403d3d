"""The run's record of its inputs (mmanalysis.inputrecord, docs/data-format.md), written beside its CSV.

`NAME.inputs` (a paced bench): the bytes each link wrote (mmproto.Link.written) joined to the endpoint's reads of
them with the virtual cycle each entered its line (Verdict.inputs), the images' hashes and the bench's options.
With it the bench computes the run again exactly with no PC in the loop (`mmrig replay`).

`NAME.pc.inputs` (every run on a wall clock: boards and the paced bench): each write at the PC's own moment,
placed on the profiler's time base by the run's tick fit over all its TIMECODEs (the lower envelope of their
arrivals, tickfit.py), as a board run can know it: the simulator then runs the board's schedule with the board's
PC moments, and its latencies stand beside the board's (`mmrig replay --pc-moments`). A lockstep bench's clock is
virtual: it writes neither (a lockstep run is made again by running it again)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmanalysis.inputrecord import InputRead, InputRecord, join, write

from ..verdict.export import record_paths
from ..verdict.tickestimate import tick_grid
from ..link.endpoint import Verdict
from .runrecord import RunRecord


def run_header(r: RunRecord, sidecar: dict[str, Any]) -> dict[str, Any]:
    """What both records say of the run: its name, mode and rate, the images' hashes and the target's options."""
    firmware = (sidecar.get("environment") or {}).get("firmware") or {}
    target = sidecar.get("target") or {}
    return {"run": sidecar.get("name"), "mode": r.cfg.mode, "baud": r.cfg.baud,
            "images": {k: (firmware.get(k) or {}).get("sha256") for k in ("profiler", "executor", "bench")},
            "target": {k: target.get(k) for k in ("kind", "profiler_kind", "ppm", "arduino", "paced", "line_model")}}


@dataclass(frozen=True)
class Made:
    """One record of the run's inputs, made and not yet written: what it holds, and what its sidecar section says
    of it besides the file (`facts`)."""
    record: InputRecord
    facts: dict[str, Any]


def inputs_record(r: RunRecord, verdict: Verdict, header: dict[str, Any]) -> Made | None:
    """OUT.inputs (None: the endpoint keeps no record). A record that lost reads (the bench's ring, 65,536 reads,
    or bytes no link wrote) says so: `complete` false, and a replay of it refuses."""
    if verdict.inputs is None:
        return None
    written = {name: link.written for name, link in r.links.items()}
    reads, missing = join(verdict.inputs, written)
    header = {**header, "dropped": verdict.inputs_dropped, "missing": missing,
              # the commands that changed the simulation (faults, resets, cuts, injections: the calibration's
              # probes too) with the cycle each took effect at: a replay issues them again there
              "commands": [[c, t] for c, t in verdict.commands], "commands_dropped": verdict.commands_dropped}
    return Made(InputRecord(header, reads),
                {"reads": len(reads), "dropped": verdict.inputs_dropped, "missing": missing,
                 "commands": len(verdict.commands),
                 "complete": verdict.inputs_dropped == 0 and missing == 0 and verdict.commands_dropped == 0})


def pc_moments_record(r: RunRecord, header: dict[str, Any]) -> Made | None:
    """OUT.pc.inputs: every write at the PC's moment on the profiler's time base (profiler counts since its tick 0
    began); None: no wall clock, or too few TIMECODEs to fit."""
    st = r.state
    if st is None or not r.wall_clock or len(st.tc_arrivals) < 2:
        return None
    grid = tick_grid(st.tc_arrivals, st.tracker.wire_s, st.timebase.tick_s)
    assert grid is not None                                   # two frames at least
    start0, tick_s = grid                                     # tick 0's start on the PC's clock: under every frame
    tick_counts = st.timebase.tick_counts
    reads = []
    for node, link in r.links.items():
        for gen, offset, size, baud, began in link.written.writes():
            data = link.written.get(gen)[offset:offset + size]
            counts = round((began - start0) / tick_s * tick_counts)
            if len(data) == size and counts >= 0:
                reads.append(InputRead(counts, node, int(baud), data))
    reads.sort(key=lambda x: x.cycle)
    # the links keep their last writes (mmproto.writelog.KEEP): a longer run's record lacks its first ones
    dropped = sum(link.written.dropped for link in r.links.values())
    header = {**header, "time": "profiler", "tick_counts": tick_counts, "fit": {"tick_s": tick_s, "ticks": len(st.tc_arrivals)},
              "dropped": dropped}
    return Made(InputRecord(header, reads),
                {"writes": len(reads), "tick_fit_ppm": round((st.timebase.tick_s / tick_s - 1.0) * 1e6, 1),
                 "dropped": dropped, "complete": dropped == 0})


def write_record(path: Path, made: Made) -> dict[str, Any]:
    """Writes one record; its sidecar section: its file name, the PC's bytes it holds (`bytes`), what vouches for
    the file itself (`size`, `sha256`: a replay refuses a record that does not match) and its facts, or
    {"file": None, "error"}."""
    try:
        written = write(path, made.record)
    except OSError as exc:
        return {"file": None, "error": exc.strerror or str(exc)}
    return {"file": path.name, "bytes": sum(len(x.data) for x in made.record.reads), "size": written.size,
            "sha256": written.sha256, **made.facts}


def record_run_inputs(r: RunRecord, verdict: Verdict, sidecar: dict[str, Any], out: Path) -> None:
    """Both records the run can write, made from its record, then written beside its files (export.record_paths),
    each with its sidecar section: `inputs`, and `pc_inputs` (at the PC's own moments, as a board run knows them)."""
    header = run_header(r, sidecar)
    made = {"inputs": inputs_record(r, verdict, header), "pc_inputs": pc_moments_record(r, header)}
    for (section, record), path in zip(made.items(), record_paths(out)):
        if record is not None:
            sidecar[section] = write_record(path, record)


__all__ = ["Made", "inputs_record", "pc_moments_record", "record_run_inputs"]
