"""The recorded explanation fixture the explanation's tests share (a unique module name: tests import it through
sys.path, the GUI's too): `data/explain/report.txt` is `trace-cmd report -t` around one moment of a stand-in firing
thread (SCHED_FIFO 80 on CPU 1) that spinner.py (SCHED_FIFO 90, pinned to CPU 1, 5 ms) held off its CPU
(`data/explain/record.py` made it); `event.json` is that event's CSV row and the sidecar's keys it needs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from mmanalysis import synth
from mmanalysis.schedtrace import SchedTrace, parse_report
from mmanalysis.schema import BUDGET_COLUMNS, COLUMN_NAMES, FORMAT_VERSION, in_stats

DATA = Path(__file__).parent / "data" / "explain"
EVENT = 17                # the recorded event's number in write_normal_run's run


def recorded_event() -> dict[str, Any]:
    """{"row": the event's CSV row, "sidecar": the sidecar's run_clock and cpu}."""
    return json.loads((DATA / "event.json").read_text())


def recorded_trace() -> SchedTrace:
    return parse_report((DATA / "report.txt").read_text())


def write_normal_run(tmp_path: Path, fixture: dict, host_trace: dict | None, outcome: str = "late",
                     name: str = "fx") -> Path:
    """A synthetic normal run of 20 events in the current format, its event 17 the fixture's (ending `outcome`),
    the others on time or missed."""
    rows = synth.synthetic_events("normal", 2, False, 20, seed=1)
    rows.loc[rows["outcome"] == "late", ["outcome", "reason"]] = ["ok", ""]
    rows["due_counts"] = 0
    for c in BUDGET_COLUMNS:
        rows[c] = np.nan
    for k, v in dict(fixture["row"], outcome=outcome, reason=outcome if outcome == "late" else "").items():
        rows.loc[rows["event"] == EVENT, k] = v
    rows["in_stats"] = [in_stats(o, bool(m)) for o, m in zip(rows["outcome"], rows["measurable"])]
    meta = synth.sidecar(name, rows)
    meta.update(format_version=FORMAT_VERSION, run_clock=fixture["sidecar"]["run_clock"], cpu=fixture["sidecar"]["cpu"])
    if host_trace is not None:
        meta["host_trace"] = host_trace
    csv, _ = synth.write_run(tmp_path / name, rows[list(COLUMN_NAMES)], meta)
    return csv


def write_traced_normal_run(tmp_path: Path, fixture: dict, name: str = "fx") -> Path:
    """write_normal_run with a stand-in NAME.host.dat beside it that the sidecar names (its size and SHA-256): the
    tests hand the recorded trace to whoever reads that file (mmanalysis.explain.read_trace monkeypatched)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    dat = tmp_path / f"{name}.host.dat"
    dat.write_bytes(b"a stand-in for trace-cmd's file")
    return write_normal_run(tmp_path, fixture, {"file": dat.name, "size": dat.stat().st_size,
                                                "sha256": hashlib.sha256(dat.read_bytes()).hexdigest(),
                                                "steal_s": {"cpu1": 0.0}}, name=name)


def record_traced_normal_run(out: Path, events: int = 300) -> Path:
    """A real normal-mode run on the paced bench with the PC's scheduler trace (`mmrig run --trace-host`): EVENTS
    events a millisecond apart at 500000 Bd (about 7 s here, and a 3 MB trace); OUT's CSV. Skips the test where the
    trace cannot be recorded (not root, no trace-cmd: hosttrace.refusal's one line). The caller is `paced`."""
    import subprocess
    import sys

    import pytest

    from mmhil.bench import ensure_built
    from mmsched.run.hosttrace import refusal

    if (why := refusal()) is not None:
        pytest.skip(f"--trace-host cannot record here: {why}")
    ensure_built()
    out.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "normal", "-i", "1ms", "--baud", "500000",
                        "-l", str(events), "--trace-host", "-q", "-o", str(out)],
                       capture_output=True, text=True, timeout=180)
    # 1: a threshold; 3: a paced run the busy host made invalid: its events are still explained
    assert r.returncode in (0, 1, 3), f"mmrig run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    assert out.with_name(out.name + ".host.dat").is_file(), r.stderr
    return out.with_name(out.name + ".csv")


def last_event_with_a_wakeup(csv: Path) -> int:
    """The run's last event with a wake-up to split: the host trace keeps each CPU's last --trace-host-kb (seconds
    even on a busy host: docs/explain.md), so its moment is in the ring whatever the host did, where an earlier
    worst event's may not be."""
    from mmanalysis.explain import read_one_run

    df, _, _ = read_one_run(csv)
    return int(df.loc[df["wakeup_us"].notna() & df["latency_us"].notna(), "event"].iloc[-1])
