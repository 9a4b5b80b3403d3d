"""Nothing of a run is lost to a write that fails at its end: every event is written to the run's journal
(OUT.partial.csv, with OUT.partial.json saying what the run was) as it ends; at the end OUT.csv and OUT.json are
written and the journal removed. When they cannot be, the run says in one line which file holds what, exit 2,
and the journal reads as a run, incomplete and invalid (docs/data-format.md, "The journal")."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest

from mmanalysis import read_run, read_runs
from mmhil import LockstepEndpoint
from mmhil.bench import ensure_built
from mmsched.verdict import export
from mmsched.model.config import RunConfig
from mmsched.model.phaseplan import PhasePlan, PhaseSpan
from mmsched.verdict.journal import Journal
from mmsched.run.runner import Runner

MMRIG = [sys.executable, "-m", "mmrig"]
COUNT = 40


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def failing_write(suffix: str) -> Any:
    """atomic_write as on a full disk, for files ending in SUFFIX only."""
    real = export.atomic_write

    def write(path: Path, data: bytes, fsync: bool = True) -> None:
        if str(path).endswith(suffix):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data, fsync=fsync)
    return write


def failing_stream(suffix: str) -> Any:
    """replacing (the CSV's streamed write) as on a full disk, for files ending in SUFFIX only."""
    real = export.replacing

    @contextlib.contextmanager
    def opened(path: Path, fsync: bool = True) -> Iterator[Any]:
        if str(path).endswith(suffix):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        with real(path, fsync=fsync) as f:
            yield f
    return opened


def journal_rows(out: Path) -> pd.DataFrame:
    return pd.read_csv(out.with_name(out.name + ".partial.csv"))


def test_a_final_csv_write_that_fails_keeps_every_ended_event_in_the_journal(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "r"
    monkeypatch.setattr(export, "replacing", failing_stream(".csv"))
    runner = Runner(RunConfig(name="r", out=out, count=COUNT), LockstepEndpoint())
    with pytest.raises(OSError) as exc:
        runner.run()
    text = str(exc.value)
    assert "\n" not in text and "No space left on device" in text and "r.partial.csv" in text, text
    assert f"{COUNT} events" in text, text
    ended = [e for e in runner.events if e.terminal]
    assert len(ended) == COUNT
    rows = journal_rows(out).sort_values("event").reset_index(drop=True)
    assert list(rows["event"]) == [e.event for e in ended]
    assert list(rows["outcome"]) == [e.outcome for e in ended]
    assert list(rows["latency_us"]) == pytest.approx([e.latency_us for e in ended], nan_ok=True)
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    rs = read_run(tmp_path / "r.partial.csv")          # the journal reads as a run: incomplete, invalid
    meta = next(iter(rs.meta.values()))
    assert meta["valid"] is False and [r["code"] for r in meta["invalid_reasons"]] == ["incomplete"]
    assert meta["incomplete"] is True and len(rs.df) == COUNT
    assert meta["config"]["count"] == COUNT and meta["timebase"]["tick_counts"] > 0


def test_a_sidecar_write_that_fails_leaves_no_csv_without_its_sidecar(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "r"
    monkeypatch.setattr(export, "atomic_write", failing_write("r.json"))
    runner = Runner(RunConfig(name="r", out=out, count=COUNT), LockstepEndpoint())
    with pytest.raises(OSError, match="r.partial.csv"):
        runner.run()
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.json").exists()
    assert len(journal_rows(out)) == COUNT


def test_the_journal_holds_each_event_as_it_ends_and_is_removed_once_the_run_is_written(tmp_path: Path) -> None:
    out = tmp_path / "r"
    runner = Runner(RunConfig(name="r", out=out, count=COUNT), LockstepEndpoint())
    seen: list[tuple[int, int]] = []                  # (events ended so far, rows in the journal then)

    def observe(kind: str, obj: Any) -> None:
        if kind == "event" and obj.terminal:
            journal = tmp_path / "r.partial.csv"
            seen.append((sum(e.terminal for e in runner.events),
                         len(journal.read_text().splitlines()) - 1 if journal.exists() else -1))
    runner.observer = observe
    result = runner.run()
    assert result.valid and len(seen) == COUNT
    assert all(rows == ended for ended, rows in seen), seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]


def test_a_journal_cut_mid_row_reads_without_the_cut_row(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "r"
    monkeypatch.setattr(export, "replacing", failing_stream(".csv"))
    with pytest.raises(OSError):
        Runner(RunConfig(name="r", out=out, count=COUNT), LockstepEndpoint()).run()
    journal = tmp_path / "r.partial.csv"
    data = journal.read_bytes()
    journal.write_bytes(data[:-7])                     # a power cut in the middle of the last row
    df = read_runs(journal).df
    assert len(df) == COUNT - 1


def mount_tmpfs(folder: Path, size: str) -> None:
    if os.getuid() != 0:
        pytest.skip("mounting a small tmpfs (a full disk) needs root")
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path: Path):
    folder = tmp_path / "disk"
    yield folder
    subprocess.run(["umount", str(folder)], capture_output=True)


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MMRIG, "run", "--unpaced", "-q", *argv], capture_output=True, text=True, timeout=600)


def test_a_full_disk_keeps_all_400_events_in_the_journal_and_says_so(tmp_path: Path, small_disk: Path) -> None:
    mount_tmpfs(small_disk, "64k")        # room for the journal (~40 KB), not for the CSV beside it
    out = small_disk / "r"
    r = run_cli("--count", "400", "-o", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("mmrig run: cannot write") and "r.partial.csv" in lines[0] and "400" in lines[0]
    assert len(journal_rows(out)) == 400
    assert not (small_disk / "r.csv").exists() and not (small_disk / "r.json").exists()

    rep = subprocess.run([*MMRIG, "report", str(small_disk / "r.partial.csv"), "--out", str(tmp_path / "rep"),
                          "--no-figures", "--all"], capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert "incomplete" in (tmp_path / "rep" / "report.md").read_text()

    again = run_cli("--count", "5", "-o", str(out))   # the journal is not overwritten without --force
    assert again.returncode == 2 and "r.partial.csv" in again.stderr and "--force" in again.stderr, again.stderr
    assert len(journal_rows(out)) == 400


def test_a_disk_that_fills_during_the_run_keeps_what_fit_and_says_how_much(small_disk: Path) -> None:
    mount_tmpfs(small_disk, "24k")
    out = small_disk / "r"
    r = run_cli("--count", "400", "-o", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    kept = len(journal_rows(out))
    assert 0 < kept < 400 and f"{kept} of the 400 events" in line, line
    assert len(read_runs(small_disk / "r.partial.csv").df) == kept


@pytest.mark.parametrize("option", ["--out", "--junit", "--hist"])
def test_an_output_in_a_folder_nothing_can_be_created_in_is_refused_up_front(tmp_path: Path, option: str) -> None:
    # /proc passes os.access(W_OK) for root, and a file cannot be made there: found out by making one
    argv = {"--out": ["-o", "/proc/mmrig-run"], "--junit": ["-o", str(tmp_path / "r"), "--junit", "/proc/j.xml"],
            "--hist": ["-o", str(tmp_path / "r"), "--hist", "/proc/h.hist"]}[option]
    r = run_cli(*argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"mmrig run: {option}: ") and "/proc" in line, line
    assert not list(tmp_path.iterdir())


def test_the_journal_is_created_as_every_run_file_is_under_the_umask(tmp_path: Path) -> None:
    """0666 less the umask (0644 under 022), as the run's own files: a classmate or a CI job reading the
    folder can read the events a killed run left behind."""
    old = os.umask(0o022)
    try:
        journal = Journal(tmp_path / "r")
        journal.open({"name": "r"})
        assert (journal.csv_path.stat().st_mode & 0o777) == 0o644
        journal.close()
    finally:
        os.umask(old)


def test_the_journal_keeps_a_runs_phases_as_they_happen(tmp_path: Path, monkeypatch) -> None:
    """NAME.partial.json is written again at each switch with the phases so far (the plan's phases not begun yet
    null), from the phases' own thread; a write that fails keeps the last file and says so; none after remove()."""
    plan = PhasePlan.parse("idle:2s,cpu:3s,io:1s")
    journal = Journal(tmp_path / "r")
    journal.open({"name": "r", "incomplete": True, "config": {"phases": plan.sidecar()}})
    read = lambda: json.loads(journal.json_path.read_text())   # noqa: E731
    assert "phases" not in read()
    idle = PhaseSpan("idle", "idle", None, 0.0001, None)
    assert journal.phases(plan, [idle]) is None
    assert [(p["name"], p["start_s"], p["end_s"]) for p in read()["phases"]] == \
        [("idle", 0.0001, None), ("cpu", None, None), ("io", None, None)]
    spans = [PhaseSpan("idle", "idle", None, 0.0001, 2.0003), PhaseSpan("cpu", "cpu", ["stress-ng", "--cpu", "2"], 2.004,
                                                                          None)]
    t = threading.Thread(target=journal.phases, args=(plan, spans))     # as PhasedLoad's thread calls it
    t.start()
    t.join()
    meta = read()
    assert meta["name"] == "r" and meta["incomplete"] is True and meta["config"]["phases"] == plan.sidecar()
    assert meta["phases"][:2] == [
        {"name": "idle", "condition": "idle", "command": None, "planned_start_s": 0.0, "planned_s": 2.0,
         "start_s": 0.0001, "end_s": 2.0003, "error": None},
        {"name": "cpu", "condition": "cpu", "command": ["stress-ng", "--cpu", "2"], "planned_start_s": 2.0,
         "planned_s": 3.0, "start_s": 2.004, "end_s": None, "error": None}]
    assert meta["phases"][2]["condition"] == "disk" and meta["phases"][2]["start_s"] is None

    monkeypatch.setattr(export, "atomic_write", failing_write(".json"))
    words = journal.phases(plan, [*spans[:1], PhaseSpan("cpu", "cpu", None, 2.004, 5.0)])
    assert words is not None and "No space left on device" in words and "r.partial.json" in words
    assert read() == meta                            # the last file whole (atomic)
    monkeypatch.undo()
    journal.remove()
    assert journal.phases(plan, spans) is None and not journal.json_path.exists()


def test_the_journal_takes_a_histogram_alone_runs_figures_so_far_in_place_of_the_last(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    """A run with no event rows writes its figures so far into NAME.partial.json (Journal.sections): each write
    replaces the sections the last one gave and keeps the rest (its phases too); a failed write keeps the last
    file and says so; none after remove()."""
    journal = Journal(tmp_path / "h")
    journal.open({"name": "h", "incomplete": True})
    read = lambda: json.loads(journal.json_path.read_text())   # noqa: E731
    assert journal.sections({"summary": {"n": 10}, "maxima": {"n": 10, "intervals": [1]}}) is None
    plan = PhasePlan.parse("idle:2s,cpu:3s")
    assert journal.phases(plan, [PhaseSpan("idle", "idle", None, 0.0, None)]) is None
    assert journal.sections({"summary": {"n": 25}, "maxima": {"n": 25, "intervals": [1, 2]}}) is None
    meta = read()
    assert meta["summary"] == {"n": 25} and meta["maxima"]["intervals"] == [1, 2] and meta["name"] == "h"
    assert [p["name"] for p in meta["phases"]] == ["idle", "cpu"] and meta["incomplete"] is True
    monkeypatch.setattr(export, "atomic_write", failing_write(".json"))
    words = journal.sections({"summary": {"n": 40}})
    assert words is not None and "h.partial.json" in words and read() == meta
    monkeypatch.undo()
    journal.remove()
    assert journal.sections({"summary": {"n": 50}}) is None and not journal.json_path.exists()
