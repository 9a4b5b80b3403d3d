#!/usr/bin/env python3
"""Records the paced runs the replay tests read, again: `.venv/bin/python hil/tests/data/record.py [NAME...]`.

A replay computes a recorded run again on the images built now, so these runs must be recorded again whenever the
profiler's or the executor's image changes what it does (the replay tests then fail with differences at the ACKs'
phases, and point here). Each run is made on the paced bench, as a user's run is, and kept only when it is valid
and its records of inputs are complete (a host stall can spoil one: it is made again, up to 3 times)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from mmanalysis.safefiles import atomic_write
from mmhil import BenchEndpoint
from mmhil.bench import ensure_built
from mmsched.model.config import RunConfig
from mmsched.model.exload import ExecutorLoad
from mmsched.run.runner import run

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from helpers import RECORDED_FILES  # noqa: E402  (the files a replay reads, one list)
RUNS = {"mixed": dict(mode="mixed", distance=2, count=60, random_ids=True),   # each ACK's phase set by the host
        "paced": dict(mode="mixed", distance=2, count=20),
        # task dispatch beside the periodic load's 2 ms job: late events, for `mmrig explain` through a replay
        "loaded": dict(mode="mixed", distance=2, count=30, dispatch="task",
                       executor_load=ExecutorLoad.parse("periodic=10ms/2ms"))}


def record(name: str, settings: dict) -> None:
    for _ in range(3):
        with tempfile.TemporaryDirectory(prefix="mmrig-record-") as tmp:
            out = Path(tmp) / name
            result = run(RunConfig(out=out, **settings), BenchEndpoint())
            if result.sidecar["valid"] and result.sidecar["inputs"]["complete"]:
                for suffix in RECORDED_FILES:
                    atomic_write(HERE / f"{name}{suffix}", out.with_suffix(suffix).read_bytes())
                print(f"{name}: recorded in {HERE}")
                return
            print(f"{name}: invalid or incomplete ({result.sidecar.get('invalid_reason')}), made again")
    sys.exit(f"{name}: no valid run in 3 tries: record on a quieter machine")


def main() -> None:
    ensure_built()
    for name, settings in RUNS.items():
        if len(sys.argv) < 2 or name in sys.argv[1:]:      # `record.py NAME...`: those runs only
            record(name, settings)


if __name__ == "__main__":
    main()
