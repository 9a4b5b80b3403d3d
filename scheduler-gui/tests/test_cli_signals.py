"""A run ended by SIGTERM or SIGHUP (a CI timeout, a closed terminal) is written with the events so far,
marked invalid with reason `interrupted`, exits 3, and leaves no bench behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest


def bench_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.paced
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_keeps_the_run_marked_invalid(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "sig"
    proc = subprocess.Popen([sys.executable, "-m", "mmrig", "run", "--count", "400", "-q", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    bench = None
    while time.monotonic() < deadline and bench is None:     # the bench is this run's child once it started
        kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        pids = [int(p) for p in kids.read_text().split()] if kids.exists() else []
        bench = next((p for p in pids if "mmbench" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")),
                     None)
        time.sleep(0.1)
    assert bench is not None, "no bench started"
    time.sleep(3.0)                                           # some events are measured
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stdout + stderr
    assert "Traceback" not in stderr
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["valid"] is False and [r["code"] for r in side["invalid_reasons"]] == ["interrupted"]
    df = pd.read_csv(out.with_suffix(".csv"))
    assert 0 < len(df) < 400 and (df["outcome"] == "ok").any()
    assert side["invariant"]["ok"]
    time.sleep(0.5)
    assert not bench_alive(bench)
