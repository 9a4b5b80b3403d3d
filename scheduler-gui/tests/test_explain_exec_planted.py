"""`mmrig explain` on mixed runs against planted causes on the executor, in lockstep (the executor's trace of the
run, --trace; a replay is lockstep too, so nothing here needs wall-clock pacing). Each planted cause must come back
as the largest part of the event it held up, with its time to the trace's resolution:

- the periodic load task (`--executor-load periodic=10ms/2ms`, above the timecode task): a late event's largest
  part names it, and its time with the rest of its job before the edge makes the job's 2 ms;
- a critical section of a known length: the test-only image whose periodic job masks interrupts (make avr
  MASKED_JOB=1; none of the load options masks them longer than the CPU load's 25 cycles): the worst event's
  largest part names it, in the function that masks them, its span the job's 500 us."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmanalysis import exectrace
from mmhil import LockstepEndpoint
from mmsched.model.config import RunConfig
from mmsched.model.exload import ExecutorLoad
from mmsched.run.runner import run

MMRIG = [sys.executable, "-m", "mmrig"]
CYCLE_US = 1 / 16          # the trace's resolution: one executor cycle
# the periodic job's own path around its EXEC (Timer3's release interrupt, the switch to the task, its
# notification's return, its wind-down and the switch away): 78 us on these images, the same for every job
JOB_PATH_US = 110.0
# Timer3 counts the job at F_CPU/8 (0.5 us) and the loop reads it every few cycles: the masked span is
# EXEC plus at most one count and one pass
TIMER3_US = 1.0


def traced_run(out: Path, load: str, count: int, endpoint: LockstepEndpoint) -> tuple[Path, exectrace.ExecTrace]:
    cfg = RunConfig(name=out.name, out=out, mode="mixed", distance=2, count=count, dispatch="task", trace=True,
                    executor_load=ExecutorLoad.parse(load))
    result = run(cfg, endpoint)
    assert result.valid, result.sidecar.get("invalid_reason")
    return out.with_suffix(".csv"), exectrace.read(out.with_suffix(".exectrace"))


def explain(csv: Path, which: str) -> list[dict]:
    done = subprocess.run([*MMRIG, "explain", str(csv), which, "--json"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def largest(ex: dict) -> dict:
    return max(ex["parts"], key=lambda p: p["us"])


def test_the_periodic_load_task_is_the_largest_part_of_each_late_event(tmp_path: Path) -> None:
    csv, tr = traced_run(tmp_path / "periodic", "periodic=10ms/2ms", 30, LockstepEndpoint())
    explained = explain(csv, "late")
    assert explained, "no late event in the run: the load's job never met a tick's edge"
    releases = [c for c, k, v in tr.records if k == "I" and tr.vector(v) == "TIMER3_COMPA"]
    ticks = dict((v, c) for c, v in exectrace.timecode_edges(tr))
    paths = []
    for ex in explained:
        assert abs(sum(p["us"] for p in ex["parts"]) - ex["latency_us"]) < 0.001, ex
        part = largest(ex)
        assert part["key"] == "exec.task" and part["detail"]["task"] == "load_periodic", ex["parts"]
        # the job began at its release before the edge: what it ran before the edge and what it held the timecode
        # task off after it (its part, the interrupts in between: the job is timed on Timer3, they do not lengthen
        # it) make its 2 ms and its own path, which is the same for every job
        edge = ticks[ex["scheduled_tc"] % 256]
        release = max(c for c in releases if c < edge)
        before = (edge - release) * CYCLE_US
        isr = sum(p["us"] for p in ex["parts"] if p["key"].startswith(("exec.isr", "exec.dispatch")))
        paths.append(before + part["us"] + isr - 2000.0)
        assert 0 <= paths[-1] <= JOB_PATH_US, (before, part["us"], isr)
        assert part["detail"]["cycles"] * CYCLE_US == pytest.approx(part["us"], abs=1e-4)
    # each job's path the same, to a count of Timer3 (0.5 us) and a pass of the job's loop
    assert max(paths) - min(paths) <= TIMER3_US, paths


def masked_job_image() -> Path:
    """The test-only executor image whose periodic job masks interrupts (make avr MASKED_JOB=1)."""
    from mmhil.bench import EXECUTOR_ELF, make

    root = Path(EXECUTOR_ELF).resolve().parents[2]
    done = make(root, "-s", "avr", "MASKED_JOB=1", timeout=600)   # under the build lock: it shares kernel objects
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root / "build/avr-masked-job/executor.elf"


def test_a_critical_section_is_the_largest_part_of_the_event_it_held_off(tmp_path: Path) -> None:
    exec_us = 500
    csv, tr = traced_run(tmp_path / "masked", f"periodic=10ms/{exec_us}us", 30,
                         LockstepEndpoint(executor_elf=masked_job_image()))
    [ex] = explain(csv, "worst")
    part = largest(ex)
    assert part["key"] == "exec.entry.masked", ex["parts"]
    d = part["detail"]
    assert d["task"] == "load_periodic" and d["function"] == "load_periodic_task", d   # (board_load_job, inlined)
    assert exec_us <= d["masked_us"] <= exec_us + TIMER3_US, d
    # the edge came inside the span: it held the interrupt off from the edge to the span's end, to the cycle
    edge = dict((v, c) for c, v in exectrace.timecode_edges(tr))[ex["scheduled_tc"] % 256]
    span = next(m for m in tr.masked if m.since < edge < m.end)
    assert tr.us(span.end - span.since) == pytest.approx(d["masked_us"], abs=1e-3)
    assert part["us"] == pytest.approx((span.end - edge) * CYCLE_US, abs=1e-4)
    assert part["us"] > ex["latency_us"] / 2
