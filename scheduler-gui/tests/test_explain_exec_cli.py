"""Where a mixed event's explanation comes from on the command line: `mmrig explain` on a paced run replays it
around the event (lockstep, byte-identical) and reads the trace that replay left the next time; `mmrig replay
--around` ends with the explanation; a mixed run's `--break-us` prints it as normal mode's does; a lockstep run
with neither a trace nor a record is one line. The paced run is the one recorded in hil/tests/data (its record
replays on the images built now: hil/tests/data/record.py makes it again when an image changes what it does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MMRIG = [sys.executable, "-m", "mmrig"]
RECORDED = Path(__file__).resolve().parents[2] / "hil" / "tests" / "data"
RERECORD = "the recorded run no longer replays identically: .venv/bin/python hil/tests/data/record.py loaded"


def recorded(folder: Path, name: str = "loaded") -> Path:
    for suffix in (".csv", ".json", ".inputs", ".pc.inputs"):
        (folder / f"{name}{suffix}").write_bytes((RECORDED / f"{name}{suffix}").read_bytes())
    return folder / f"{name}.csv"


def mmrig(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MMRIG, *args], capture_output=True, text=True, timeout=120)


def test_explain_replays_a_paced_run_around_the_event_then_reads_what_it_left(tmp_path: Path) -> None:
    csv = recorded(tmp_path)
    done = mmrig("explain", str(csv), "worst", "--json", "--keep", str(tmp_path / "k"))
    assert done.returncode == 0, done.stdout + done.stderr
    [ex] = json.loads(done.stdout)
    big = max(ex["parts"], key=lambda p: p["us"])
    assert big["key"] == "exec.task" and big["detail"]["task"] == "load_periodic", ex["parts"]
    assert abs(sum(p["us"] for p in ex["parts"]) - ex["latency_us"]) < 0.001
    assert any("a replay of the run around it" in n and "identical to the run" in n for n in ex["notes"]), \
        (RERECORD, ex["notes"])
    assert any(n.startswith("its SCHEDULE: made in tick") for n in ex["notes"])
    assert (tmp_path / "k" / "loaded.around.exectrace").is_file()
    again = mmrig("explain", str(csv), str(ex["event"]), "--keep", str(tmp_path / "k"))
    assert again.returncode == 0 and "that a replay left" in " ".join(again.stdout.split()), again.stdout


def test_several_events_are_explained_from_one_replay_traced_through_the_run(tmp_path: Path) -> None:
    csv = recorded(tmp_path)
    done = mmrig("explain", str(csv), "late", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    explained = json.loads(done.stdout)
    assert [ex["event"] for ex in explained] == [6, 15, 24], (RERECORD, [ex["event"] for ex in explained])
    for ex in explained:
        big = max(ex["parts"], key=lambda p: p["us"])
        assert big["key"] == "exec.task" and big["detail"]["task"] == "load_periodic", ex["parts"]
        assert ex["notes"][-1].startswith("from a replay of the whole run, traced") and "identical" in ex["notes"][-1]
    assert (tmp_path / "loaded.replay" / "loaded.replay.exectrace").is_file()


def test_replay_around_ends_with_the_explanation(tmp_path: Path) -> None:
    csv = recorded(tmp_path)
    done = mmrig("replay", str(csv), "--around", "worst", "--keep", str(tmp_path))
    assert done.returncode == 0, (RERECORD, done.stdout, done.stderr)
    tail = " ".join(done.stdout.split()[-200:])
    assert "largest: task load_periodic ran first" in tail, done.stdout
    doc = json.loads(mmrig("replay", str(csv), "--around", "worst", "--keep", str(tmp_path), "--json").stdout)
    assert doc["explanation"]["event"] == doc["around"]["event"]


def test_a_mixed_break_prints_its_explanation(tmp_path: Path) -> None:
    out = tmp_path / "brk"
    done = mmrig("run", "--unpaced", "--mode", "mixed", "--dispatch", "task", "--executor-load",
                 "periodic=10ms/2ms", "--break-us", "40", "-l", "40", "--trace", "-o", str(out))
    assert done.returncode == 102, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    b = json.loads(out.with_suffix(".json").read_text())["break"]
    assert f"event {b['event']} of brk (late" in text and "largest: task load_periodic ran first" in text, text
    assert "From the run's own executor trace (brk.exectrace)" in text


def test_a_lockstep_run_without_a_trace_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    ran = mmrig("run", "--unpaced", "--mode", "mixed", "-l", "3", "-q", "-o", str(out))
    assert ran.returncode == 0, ran.stderr
    done = mmrig("explain", str(out.with_suffix(".csv")), "worst")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "run it again with --trace" in done.stderr
